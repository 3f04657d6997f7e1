/* mock_main.c: the tokstorm-mock process: options, resource limits, signals, then the
 * server(s). It knows nothing of sockets, workers, HTTP or the timing model; it maps the
 * outcome to an exit code (0 clean stop, 1 start-up or fatal error, 2 bad command line). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "mock_options.h"
#include "mock_workers.h"

/* The one global: set by SIGINT/SIGTERM, read by the loop after epoll_pwait returns. */
static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

/* Thousands of connections need thousands of descriptors; the soft limit is often 1024. */
static void raise_fd_limit(const struct mock_options *opt)
{
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == lim.rlim_max)
        return;
    lim.rlim_cur = lim.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0 && !opt->quiet)
        perror("tokstorm-mock: warning: cannot raise RLIMIT_NOFILE");
}

int main(int argc, char **argv)
{
    struct mock_options opt;
    char err[512];
    switch (mock_options_parse(argc, argv, &opt, stdout, err, sizeof err)) {
    case MOCK_OPTIONS_RUN:
        break;
    case MOCK_OPTIONS_EXIT:
        return 0;
    case MOCK_OPTIONS_BAD:
        fprintf(stderr, "tokstorm-mock: %s\n", err);
        return 2;
    }
    raise_fd_limit(&opt);
    /* The default 50 us timer slack would be added to every decode-step wake-up. */
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    /* send() uses MSG_NOSIGNAL; this covers stdout when tokstorm closed the pipe. */
    signal(SIGPIPE, SIG_IGN);

    /* Block the stop signals except inside epoll_pwait, so one cannot slip in between the
     * check of the flag and the wait and go unnoticed until the next event. */
    sigset_t stop_set, wait_mask;
    sigemptyset(&stop_set);
    sigaddset(&stop_set, SIGINT);
    sigaddset(&stop_set, SIGTERM);
    sigprocmask(SIG_BLOCK, &stop_set, &wait_mask);
    sigdelset(&wait_mask, SIGINT);
    sigdelset(&wait_mask, SIGTERM);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    /* Workers are forked after this point: they inherit the limits, the mask and the handler. */
    return mock_workers_run(&opt, &stop_requested, &wait_mask);
}
