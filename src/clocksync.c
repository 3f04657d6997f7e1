/* clocksync.c: picks the best ping-pong sample and turns it into an offset and its bound.
 * It knows nothing of MPI or of how the samples were taken. */
#include "tokstorm/clocksync.h"

void clocksync_best(const struct ts_clock_sample *s, size_t n, struct ts_clock_offset *out)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (s[i].t1_ns - s[i].t0_ns < s[best].t1_ns - s[best].t0_ns)
            best = i;
    int64_t rtt = s[best].t1_ns - s[best].t0_ns;
    /* The remote read lies somewhere in [t0, t1] of rank 0's clock; its midpoint is the
     * estimate, and half the round trip bounds the error. */
    out->offset_ns = s[best].remote_ns - (s[best].t0_ns + rtt / 2);
    out->uncertainty_ns = (rtt + 1) / 2;
}
