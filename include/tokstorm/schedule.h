/* schedule.h: open-loop arrival times. Each rank draws its own send times in advance of the
 * sends, from a seeded generator, independent of how fast the server answers, so a slow
 * server cannot slow the arrivals down (no coordinated omission). Pure: time is a number of
 * nanoseconds from the level's start, passed around, never read. */
#ifndef TOKSTORM_SCHEDULE_H
#define TOKSTORM_SCHEDULE_H

#include <stdint.h>

enum ts_arrival {
    TS_ARRIVAL_POISSON = 0,  /* exponential gaps: a Poisson process */
    TS_ARRIVAL_GAMMA = 1,    /* gamma gaps of shape `burstiness` (< 1 burstier, > 1 smoother) */
    TS_ARRIVAL_CONSTANT = 2, /* equal gaps */
};

/* "poisson", "gamma", "constant" -> kind. Returns 0 or -1. */
int schedule_arrival_from_name(const char *name, enum ts_arrival *out);
const char *schedule_arrival_name(enum ts_arrival a);

/* A small, fast, seedable generator (xoshiro256**, seeded through splitmix64). */
struct ts_rng {
    uint64_t s[4];
};

void rng_seed(struct ts_rng *r, uint64_t seed);
uint64_t rng_next(struct ts_rng *r);
/* Uniform in (0, 1): never exactly 0, so log() of it is finite. */
double rng_uniform(struct ts_rng *r);

struct ts_schedule {
    struct ts_rng rng;
    enum ts_arrival arrival;
    double rate_per_s; /* this rank's arrival rate */
    double burstiness; /* gamma shape */
    int64_t next_ns;   /* the next arrival, from the level start */
};

/* Prepares a schedule for one rank and level: rate_per_s arrivals per second, first arrival
 * one gap after 0 (constant: at 0). seed should differ per rank and level. */
void schedule_init(struct ts_schedule *s, enum ts_arrival arrival, double rate_per_s,
                   double burstiness, uint64_t seed);

/* The next arrival time, and advances past it. */
int64_t schedule_take(struct ts_schedule *s);

/* One gap in seconds with mean 1/rate, as the arrival kind draws it (exposed for tests). */
double schedule_gap_s(struct ts_schedule *s);

#endif
