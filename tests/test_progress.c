/* test_progress.c: the progress schedule and line: reductions due on a fixed grid from the
 * level's start, the rate over the interval between samples, the level's plan shown. */
#include "tokstorm/progress.h"

#include <string.h>

#include "check.h"

#define S INT64_C(1000000000)

int main(void)
{
    /* Due instants: start + k s, the next one after now, whatever the tick's phase. */
    CHECK_EQ_INT(progress_next_due(10 * S, S, 10 * S), 11 * S);
    CHECK_EQ_INT(progress_next_due(10 * S, S, 11 * S - 1), 11 * S);
    CHECK_EQ_INT(progress_next_due(10 * S, S, 11 * S), 12 * S);
    CHECK_EQ_INT(progress_next_due(10 * S, S, 13 * S + S / 2), 14 * S); /* a late tick skips */
    CHECK_EQ_INT(progress_next_due(10 * S, S, 5 * S), 11 * S);

    struct ts_progress_line p;
    char buf[160];
    progress_line_init(&p, "C=32", 64, 0, 2 * S);
    /* Two running ranks sampled at 3.0 s and 3.2 s: the sample is at 3.1 s, 1.1 s in. */
    struct ts_progress_sample sum = {
        .running = 2, .sampled_ns = 6 * S + S / 5, .done = 40, .errors = 1, .tokens = 1100};
    size_t n = progress_line_format(&p, &sum, buf, sizeof buf);
    CHECK_EQ_STR(buf, "progress C=32: 40/64 requests, 1000.0 tok/s, 1 errors, 1.1 s");
    CHECK_EQ_INT(n, strlen(buf));
    /* The rate is over the last interval only. */
    sum = (struct ts_progress_sample){
        .running = 1, .sampled_ns = 4 * S + S / 10, .done = 50, .errors = 1, .tokens = 1600};
    progress_line_format(&p, &sum, buf, sizeof buf);
    CHECK_EQ_STR(buf, "progress C=32: 50/64 requests, 500.0 tok/s, 1 errors, 2.1 s");
    /* Events of a request that then failed leave the count: no negative rate. */
    sum.sampled_ns += S;
    sum.tokens = 1500;
    progress_line_format(&p, &sum, buf, sizeof buf);
    CHECK(strstr(buf, " 0.0 tok/s") != NULL);

    /* A level with a duration: requests counted, time out of the duration. */
    progress_line_init(&p, "20 req/s", 0, 30, 0);
    sum = (struct ts_progress_sample){.running = 2, .sampled_ns = 4 * S, .done = 38, .tokens = 200};
    progress_line_format(&p, &sum, buf, sizeof buf);
    CHECK_EQ_STR(buf, "progress 20 req/s: 38 requests, 100.0 tok/s, 0 errors, 2.0/30.0 s");
    /* Cut to the buffer, the length says what is there. */
    n = progress_line_format(&p, &sum, buf, 10);
    CHECK_EQ_INT(n, 9);
    CHECK_EQ_INT(strlen(buf), 9);
    return check_report("progress");
}
