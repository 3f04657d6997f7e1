/* mock_totals.h: the totals one server (the process, or one worker) reports at exit, their
 * merge across workers, and the --stats line. Plain counters: no I/O but printing the line. */
#ifndef TOKSTORM_MOCK_TOTALS_H
#define TOKSTORM_MOCK_TOTALS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mock_fault.h"

/* A zeroed struct is the empty total. */
struct mock_totals {
    int64_t requests;                  /* HTTP responses completed, any status */
    int64_t generations;               /* chat/completions requests that sent all their tokens */
    int64_t cancelled;                 /* streams removed from the engine before finishing */
    int64_t tokens;                    /* completion tokens written to clients */
    int64_t connections;               /* connections accepted */
    int64_t max_connections;           /* most connections open at once */
    int64_t max_concurrent_streams;    /* most streams in the engine at once (queued + admitted) */
    int64_t max_batch_occupancy;       /* most streams admitted at once (prefill + decode) */
    int64_t max_decode_batch;          /* most streams in one decode step */
    int64_t faults[MOCK_FAULT__COUNT]; /* faults injected, by kind ([0] unused) */
};

/* Adds every field of src to dst. The max_ fields are summed too: across workers that gives
 * an upper bound of the true maximum, since workers peak at different times. */
void mock_totals_merge(struct mock_totals *dst, const struct mock_totals *src);

/* Prints the one line "tokstorm-mock: stats: requests=... max_decode_batch=...\n", then, when
 * faults is set, "tokstorm-mock: faults: refuse=N reset=N 429=N ...\n" (every fault, in the
 * order of enum mock_fault). Tests parse them: keep the field names and order. */
void mock_totals_print(FILE *out, const struct mock_totals *t, bool faults);

#endif
