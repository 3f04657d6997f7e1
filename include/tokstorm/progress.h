/* progress.h: the live progress line of a level (--progress): the totals every rank samples
 * about once a second, summed over ranks (with, beside them, whether a rank was asked to
 * stop), and the line rank 0 shows for them. Pure: no MPI (collect.c moves the samples), no
 * clock (times are passed in), no I/O. */
#ifndef TOKSTORM_PROGRESS_H
#define TOKSTORM_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

#define TS_PROGRESS_PERIOD_NS INT64_C(1000000000) /* a reduction starts this often */
#define TS_PROGRESS_TICK_NS   INT64_C(100000000)  /* the loop's hook runs this often */

/* One rank's totals at one instant in the level. Summed over ranks by one MPI_SUM, so every
 * field is an int64_t and sums mean something. */
struct ts_progress_sample {
    int64_t running;    /* 1 while the rank runs the level's loop, 0 once it is done */
    int64_t sampled_ns; /* when a running rank took it (common timeline), else 0: summed, it
                           divided by running is the sample's time */
    int64_t done;       /* requests finished, ok or not */
    int64_t errors;     /* requests failed */
    int64_t tokens;     /* output tokens of finished successful requests, plus the content
                           events of requests in flight (a token each, until they finish) */
    int64_t stop;       /* the exit status a signal to the rank asks for (interrupt.h), else 0:
                           summed, above 0 when some rank wants the run to stop */
};

#define TS_PROGRESS_FIELDS 6
_Static_assert(sizeof(struct ts_progress_sample) == TS_PROGRESS_FIELDS * sizeof(int64_t),
               "ts_progress_sample is reduced as an array of int64_t");

/* The first instant of the schedule start_ns + k * period_ns (k >= 1) after now_ns. */
int64_t progress_next_due(int64_t start_ns, int64_t period_ns, int64_t now_ns);

/* What rank 0 keeps between samples of one level. */
struct ts_progress_line {
    char what[32];     /* the level: "C=32" or "20 req/s" */
    int64_t planned;   /* requests over all ranks; 0 when the level runs for a duration */
    double duration_s; /* the level's duration; 0 = none */
    int64_t start_ns;  /* the level's start, common timeline */
    int64_t last_ns;   /* the previous sample's time and tokens, for the rate */
    int64_t last_tokens;
};

void progress_line_init(struct ts_progress_line *p, const char *what, int64_t planned,
                        double duration_s, int64_t start_ns);

/* The line for sum (a sample summed over ranks, sum->running > 0), without a line end:
 * "progress C=32: 40/64 requests, 1234.5 tok/s, 0 errors, 2.0 s" ("40 requests" and
 * "2.0/30.0 s" for a level with a duration). The rate is the tokens since the previous
 * sample (or the level's start) over the time between them. Returns the line's length. */
size_t progress_line_format(struct ts_progress_line *p, const struct ts_progress_sample *sum,
                            char *buf, size_t len);

#endif
