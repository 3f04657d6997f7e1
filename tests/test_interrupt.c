/* test_interrupt.c: a signal is recorded, not obeyed: the process goes on, the status says
 * which signal came (130 or 143), and the next one gets the default action; restore puts the
 * previous handlers back. */
#include "tokstorm/interrupt.h"

#include <signal.h>

#include "check.h"

static volatile sig_atomic_t seen_by_previous;

static void previous_handler(int signo)
{
    seen_by_previous = signo;
}

/* The disposition signo has now. */
static void (*disposition(int signo))(int)
{
    struct sigaction sa;
    sigaction(signo, NULL, &sa);
    return sa.sa_handler;
}

int main(void)
{
    struct sigaction prev = {.sa_handler = previous_handler};
    sigemptyset(&prev.sa_mask);
    sigaction(SIGINT, &prev, NULL);
    sigaction(SIGTERM, &prev, NULL);

    CHECK_EQ_INT(interrupt_install(), 0);
    CHECK_EQ_INT(interrupt_status(), 0);
    raise(SIGTERM);
    CHECK_EQ_INT(interrupt_status(), TS_EXIT_SIGTERM);
    CHECK_EQ_STR(interrupt_name(interrupt_status()), "SIGTERM");
    /* A second signal of either kind would end the process. */
    CHECK(disposition(SIGINT) == SIG_DFL && disposition(SIGTERM) == SIG_DFL);
    interrupt_restore();
    CHECK(disposition(SIGINT) == previous_handler && disposition(SIGTERM) == previous_handler);
    CHECK_EQ_INT(seen_by_previous, 0);

    /* Installed again: the earlier signal is forgotten; the first of two is the one kept. */
    CHECK_EQ_INT(interrupt_install(), 0);
    CHECK_EQ_INT(interrupt_status(), 0);
    raise(SIGINT);
    CHECK_EQ_INT(interrupt_status(), TS_EXIT_SIGINT);
    CHECK_EQ_STR(interrupt_name(TS_EXIT_SIGINT), "SIGINT");
    interrupt_restore();
    raise(SIGTERM); /* to the previous handler now */
    CHECK_EQ_INT(seen_by_previous, SIGTERM);
    CHECK_EQ_INT(interrupt_status(), TS_EXIT_SIGINT);
    CHECK_EQ_STR(interrupt_name(1), "a signal");
    return check_report("interrupt");
}
