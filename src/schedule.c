/* schedule.c: seeded arrival times for open-loop load: exponential, gamma or constant gaps.
 * It knows nothing of clocks, sockets or what is sent at those times. */
#include "tokstorm/schedule.h"

#include <math.h>
#include <string.h>

int schedule_arrival_from_name(const char *name, enum ts_arrival *out)
{
    static const char *const names[] = {"poisson", "gamma", "constant"};
    for (int i = 0; i < 3; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = (enum ts_arrival)i;
            return 0;
        }
    return -1;
}

const char *schedule_arrival_name(enum ts_arrival a)
{
    return a == TS_ARRIVAL_GAMMA ? "gamma" : a == TS_ARRIVAL_CONSTANT ? "constant" : "poisson";
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void rng_seed(struct ts_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t rng_next(struct ts_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double rng_uniform(struct ts_rng *r)
{
    /* 53 random bits, shifted by half a step so that 0 cannot come out. */
    return ((double)(rng_next(r) >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(struct ts_rng *r)
{
    /* Box-Muller; one of the pair is enough here. */
    return sqrt(-2.0 * log(rng_uniform(r))) * cos(2.0 * M_PI * rng_uniform(r));
}

/* Gamma(shape k, scale 1) by Marsaglia and Tsang; for k < 1 through Gamma(k + 1) * U^(1/k). */
static double gamma_unit(struct ts_rng *r, double k)
{
    if (k < 1.0)
        return gamma_unit(r, k + 1.0) * pow(rng_uniform(r), 1.0 / k);
    double d = k - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x = normal(r), v = 1.0 + c * x;
        if (v <= 0)
            continue;
        v = v * v * v;
        double u = rng_uniform(r);
        if (log(u) < 0.5 * x * x + d - d * v + d * log(v))
            return d * v;
    }
}

/* The next gap in ns, clamped so that a tiny rate (or none) cannot overflow the conversion:
 * a gap of a century means "no arrival in this level". */
static int64_t gap_ns(struct ts_schedule *s)
{
    const double century_ns = 100.0 * 365 * 24 * 3600 * 1e9;
    if (!(s->rate_per_s > 0))
        return (int64_t)century_ns;
    double g = schedule_gap_s(s) * 1e9;
    return (int64_t)(g < century_ns ? g : century_ns);
}

void schedule_init(struct ts_schedule *s, enum ts_arrival arrival, double rate_per_s,
                   double burstiness, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    rng_seed(&s->rng, seed);
    s->arrival = arrival;
    s->rate_per_s = rate_per_s;
    s->burstiness = burstiness > 0 ? burstiness : 1.0;
    s->next_ns = arrival == TS_ARRIVAL_CONSTANT ? 0 : gap_ns(s);
}

double schedule_gap_s(struct ts_schedule *s)
{
    double mean = 1.0 / s->rate_per_s;
    switch (s->arrival) {
    case TS_ARRIVAL_CONSTANT:
        return mean;
    case TS_ARRIVAL_GAMMA:
        /* Shape k, scale mean/k: the mean stays 1/rate, the variance is mean^2/k. */
        return gamma_unit(&s->rng, s->burstiness) * mean / s->burstiness;
    default:
        return -log(rng_uniform(&s->rng)) * mean;
    }
}

int64_t schedule_take(struct ts_schedule *s)
{
    int64_t t = s->next_ns;
    s->next_ns = t + gap_ns(s);
    return t;
}
