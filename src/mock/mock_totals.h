/* mock_totals.h: the totals one server (the process, or one worker) reports at exit, their
 * merge across workers, and the --stats line. Plain counters: no I/O but printing the line. */
#ifndef TOKSTORM_MOCK_TOTALS_H
#define TOKSTORM_MOCK_TOTALS_H

#include <stdint.h>
#include <stdio.h>

/* A zeroed struct is the empty total. */
struct mock_totals {
    int64_t requests;               /* HTTP responses completed, any status */
    int64_t generations;            /* chat/completions requests that sent all their tokens */
    int64_t cancelled;              /* streams removed from the engine before finishing */
    int64_t tokens;                 /* completion tokens written to clients */
    int64_t connections;            /* connections accepted */
    int64_t max_connections;        /* most connections open at once */
    int64_t max_concurrent_streams; /* most streams in the engine at once (queued + admitted) */
    int64_t max_batch_occupancy;    /* most streams admitted at once (prefill + decode) */
    int64_t max_decode_batch;       /* most streams in one decode step */
};

/* Adds every field of src to dst. The max_ fields are summed too: across workers that gives
 * an upper bound of the true maximum, since workers peak at different times. */
void mock_totals_merge(struct mock_totals *dst, const struct mock_totals *src);

/* Prints the one line "tokstorm-mock: stats: requests=... max_decode_batch=...\n". Tests
 * parse it: keep the field names and order. */
void mock_totals_print(FILE *out, const struct mock_totals *t);

#endif
