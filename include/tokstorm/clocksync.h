/* clocksync.h: estimating one rank's clock offset to rank 0 from ping-pong samples, as
 * Cristian's algorithm and NTP do: of many round trips, the one with the smallest round-trip
 * time bounds the offset most tightly. Pure arithmetic; the MPI ping-pong is in collect.c. */
#ifndef TOKSTORM_CLOCKSYNC_H
#define TOKSTORM_CLOCKSYNC_H

#include <stddef.h>
#include <stdint.h>

/* One round trip: rank 0 sends at t0 (its clock), the remote rank reads its own clock at
 * remote, rank 0 receives the answer at t1 (its clock). */
struct ts_clock_sample {
    int64_t t0_ns;
    int64_t remote_ns;
    int64_t t1_ns;
};

struct ts_clock_offset {
    int64_t offset_ns;      /* remote clock - rank 0 clock */
    int64_t uncertainty_ns; /* half the best round trip: |error| is at most this */
};

/* The offset from the sample with the smallest round trip (the first such sample on a tie),
 * assuming the remote read happened at the midpoint. n must be at least 1. */
void clocksync_best(const struct ts_clock_sample *samples, size_t n, struct ts_clock_offset *out);

/* A local clock reading converted to rank 0's clock. */
static inline int64_t clocksync_to_rank0(const struct ts_clock_offset *o, int64_t local_ns)
{
    return local_ns - o->offset_ns;
}

/* A rank 0 clock reading converted to this rank's clock. */
static inline int64_t clocksync_from_rank0(const struct ts_clock_offset *o, int64_t rank0_ns)
{
    return rank0_ns + o->offset_ns;
}

#endif
