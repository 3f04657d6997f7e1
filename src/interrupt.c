/* interrupt.c: records SIGINT and SIGTERM for the run to act on. The handler does nothing but
 * store the signal and reset the dispositions (both async-signal-safe): the event loop notices
 * within its tick, and MPI, libcurl and HDF5 are never entered from a signal handler. */
#include "tokstorm/interrupt.h"

#include <signal.h>
#include <stddef.h>

static volatile sig_atomic_t caught; /* the first signal's number, 0 = none */
static struct sigaction saved_int, saved_term;
static int installed;

static void on_signal(int signo)
{
    if (caught == 0)
        caught = signo;
    /* A second Ctrl-C (or SIGTERM) is someone who will not wait: the default action. */
    struct sigaction dfl;
    dfl.sa_handler = SIG_DFL;
    dfl.sa_flags = 0;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGINT, &dfl, NULL);
    sigaction(SIGTERM, &dfl, NULL);
}

int interrupt_install(void)
{
    struct sigaction sa;
    sa.sa_handler = on_signal;
    /* Restarted system calls: file writes and MPI's own calls are not cut short; epoll_wait
     * returns EINTR whatever the flag, which the loop treats as a turn with no events. */
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    caught = 0;
    if (sigaction(SIGINT, &sa, &saved_int) != 0)
        return -1;
    if (sigaction(SIGTERM, &sa, &saved_term) != 0) {
        sigaction(SIGINT, &saved_int, NULL);
        return -1;
    }
    installed = 1;
    return 0;
}

void interrupt_restore(void)
{
    if (!installed)
        return;
    sigaction(SIGINT, &saved_int, NULL);
    sigaction(SIGTERM, &saved_term, NULL);
    installed = 0;
}

int interrupt_status(void)
{
    int s = caught;
    return s == 0 ? 0 : s == SIGINT ? TS_EXIT_SIGINT : TS_EXIT_SIGTERM;
}

const char *interrupt_name(int status)
{
    return status == TS_EXIT_SIGINT ? "SIGINT" : status == TS_EXIT_SIGTERM ? "SIGTERM" : "a signal";
}
