/* clock.c: the one place that reads clocks (monotonic for durations, UTC for labels). */
#include "tokstorm/clock.h"

#include <errno.h>
#include <sched.h>
#include <time.h>

/* Zero but in clock-alignment tests; written once before any clock read (see clock.h). */
static int64_t test_offset_ns;

void clock_set_test_offset(int64_t offset_ns)
{
    test_offset_ns = offset_ns;
}

int64_t clock_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + test_offset_ns;
}

char *clock_utc_iso8601(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

void clock_sleep_ns(int64_t ns)
{
    if (ns <= 0)
        return;
    struct timespec req = {.tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000};
    while (nanosleep(&req, &req) != 0 && errno == EINTR)
        ;
}

void clock_wait_until(int64_t target_ns)
{
    /* The last 5 ms are spun, not slept: a sleeping CPU (a virtual one especially) can wake
     * milliseconds late, which would show as start skew. */
    const int64_t spin_ns = 5000000;
    int64_t now = clock_now_ns();
    if (target_ns - now > spin_ns)
        clock_sleep_ns(target_ns - now - spin_ns);
    /* Yield while far enough away, so that ranks sharing a core still get their turn. */
    for (int64_t t = clock_now_ns(); t < target_ns; t = clock_now_ns())
        if (target_ns - t > 200000)
            sched_yield();
}
