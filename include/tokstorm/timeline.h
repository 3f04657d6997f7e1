/* timeline.h: when things happened during one level on one rank, binned from the level's
 * start on the common timeline: tokens delivered (content events) per 1 ms, requests
 * completed and failed per 100 ms. The fine bins give the steady-state token count over any
 * window; the 100 ms series is what the results file keeps. Grows by doubling; pure. */
#ifndef TOKSTORM_TIMELINE_H
#define TOKSTORM_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#define TS_TIMELINE_FINE_NS   INT64_C(1000000)   /* 1 ms token bins */
#define TS_TIMELINE_SERIES_NS INT64_C(100000000) /* 100 ms series bins */
#define TS_TIMELINE_RATIO     100                /* fine bins per series bin */

struct ts_timeline {
    uint32_t *tokens; /* per 1 ms bin */
    size_t n_fine, fine_cap;
    uint64_t *ok, *err; /* per 100 ms bin */
    size_t n_series, series_cap;
};

void timeline_init(struct ts_timeline *t);
void timeline_free(struct ts_timeline *t);
/* Empties t for a new level, keeping its memory. */
void timeline_reset(struct ts_timeline *t);

/* n tokens arrived at rel_ns after the level start (negative counts as 0). Returns 0 or -1
 * (out of memory: the tokens are not recorded). */
int timeline_add_tokens(struct ts_timeline *t, int64_t rel_ns, uint32_t n);

/* A request ended at rel_ns, successfully or not. Returns 0 or -1 (out of memory). */
int timeline_add_end(struct ts_timeline *t, int64_t rel_ns, int ok);

/* Tokens delivered in [from_ns, to_ns): whole 1 ms bins count fully, the two edge bins by
 * the fraction of them inside the window (tokens are taken as spread evenly in a bin). */
double timeline_tokens_between(const struct ts_timeline *t, int64_t from_ns, int64_t to_ns);

/* Number of 100 ms bins needed to hold everything recorded. */
size_t timeline_series_len(const struct ts_timeline *t);

/* Writes the 100 ms series into arrays of n bins (zero beyond what was recorded; n may exceed
 * timeline_series_len, as when every rank pads to the longest): tokens, ok and err. */
void timeline_series(const struct ts_timeline *t, size_t n, uint64_t *tokens, uint64_t *ok,
                     uint64_t *err);

#endif
