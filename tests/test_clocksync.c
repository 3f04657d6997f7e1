/* test_clocksync.c: offsets from simulated ping-pongs with a known true offset and random
 * one-way delays: the estimate is within its stated uncertainty of the truth, and the
 * fastest round trip is the one chosen. */
#include "tokstorm/clocksync.h"

#include <stdlib.h>

#include "check.h"

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static int64_t rand_delay(int64_t max_ns)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (int64_t)(rng % (uint64_t)max_ns);
}

int main(void)
{
    const int64_t true_offsets[] = {0, 123456789, -987654321, 5, -3};
    int within = 1, chose_fastest = 1;
    for (size_t k = 0; k < sizeof true_offsets / sizeof *true_offsets; k++) {
        struct ts_clock_sample s[64];
        int64_t t = 1000000000, best_rtt = INT64_MAX;
        for (int i = 0; i < 64; i++) {
            int64_t out_ns = 2000 + rand_delay(50000), back_ns = 2000 + rand_delay(50000);
            s[i].t0_ns = t;
            s[i].remote_ns = t + out_ns + true_offsets[k];
            s[i].t1_ns = t + out_ns + back_ns;
            best_rtt = s[i].t1_ns - s[i].t0_ns < best_rtt ? s[i].t1_ns - s[i].t0_ns : best_rtt;
            t += 1000000;
        }
        struct ts_clock_offset o;
        clocksync_best(s, 64, &o);
        int64_t err = o.offset_ns - true_offsets[k];
        within &= (err < 0 ? -err : err) <= o.uncertainty_ns;
        chose_fastest &= o.uncertainty_ns == (best_rtt + 1) / 2;
        /* Round trip through both conversions is exact. */
        within &= clocksync_from_rank0(&o, clocksync_to_rank0(&o, 777)) == 777;
    }
    CHECK(within);
    CHECK(chose_fastest);

    /* Symmetric delays give the exact offset. */
    struct ts_clock_sample sym = {.t0_ns = 100, .remote_ns = 100 + 40 + 5000, .t1_ns = 180};
    struct ts_clock_offset o;
    clocksync_best(&sym, 1, &o);
    CHECK_EQ_INT(o.offset_ns, 5000);
    CHECK_EQ_INT(o.uncertainty_ns, 40);
    return check_report("clocksync");
}
