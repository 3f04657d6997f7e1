/* hist.c: log-linear histograms: record, merge, percentile. Pure arithmetic on caller-owned
 * structs; it knows nothing of MPI (which merges them by summing) or of what is timed. */
#include "tokstorm/hist.h"

#include <string.h>

void hist_init(struct ts_hist *h, struct ts_hist_extremes *x)
{
    memset(h, 0, sizeof *h);
    x->min_ns = INT64_MAX;
    x->max_ns = INT64_MIN;
}

int hist_bucket_index(int64_t v)
{
    if (v < 0)
        v = 0;
    if (v > TS_HIST_MAX_NS)
        v = TS_HIST_MAX_NS;
    if (v < TS_HIST_LINEAR)
        return (int)v;
    int exp = 63 - __builtin_clzll((unsigned long long)v); /* >= SUB_BITS + 1 */
    int sub = (int)((v >> (exp - TS_HIST_SUB_BITS)) & (TS_HIST_SUB - 1));
    return TS_HIST_LINEAR + (exp - TS_HIST_SUB_BITS - 1) * TS_HIST_SUB + sub;
}

void hist_bucket_bounds(int index, int64_t *lo, int64_t *hi)
{
    if (index < TS_HIST_LINEAR) {
        *lo = *hi = index;
        return;
    }
    int octave = (index - TS_HIST_LINEAR) / TS_HIST_SUB;
    int sub = (index - TS_HIST_LINEAR) % TS_HIST_SUB;
    int exp = octave + TS_HIST_SUB_BITS + 1;
    int64_t width = INT64_C(1) << (exp - TS_HIST_SUB_BITS);
    *lo = (INT64_C(1) << exp) + sub * width;
    *hi = *lo + width - 1;
}

void hist_record(struct ts_hist *h, struct ts_hist_extremes *x, int64_t v)
{
    if (v < 0)
        v = 0;
    if (v > TS_HIST_MAX_NS)
        v = TS_HIST_MAX_NS;
    h->buckets[hist_bucket_index(v)]++;
    h->count++;
    h->sum_ns += (uint64_t)v;
    if (v < x->min_ns)
        x->min_ns = v;
    if (v > x->max_ns)
        x->max_ns = v;
}

void hist_merge(struct ts_hist *dst, struct ts_hist_extremes *dst_x, const struct ts_hist *src,
                const struct ts_hist_extremes *src_x)
{
    dst->count += src->count;
    dst->sum_ns += src->sum_ns;
    for (int i = 0; i < TS_HIST_BUCKETS; i++)
        dst->buckets[i] += src->buckets[i];
    if (src_x->min_ns < dst_x->min_ns)
        dst_x->min_ns = src_x->min_ns;
    if (src_x->max_ns > dst_x->max_ns)
        dst_x->max_ns = src_x->max_ns;
}

int64_t hist_percentile_ns(const struct ts_hist *h, const struct ts_hist_extremes *x, double q)
{
    if (h->count == 0)
        return 0;
    if (q < 0)
        q = 0;
    if (q > 1)
        q = 1;
    /* Rank of the wanted value, 1-based: the nearest-rank definition. */
    uint64_t rank = (uint64_t)(q * (double)h->count);
    if ((double)rank < q * (double)h->count)
        rank++;
    if (rank == 0)
        rank = 1;
    uint64_t seen = 0;
    for (int i = 0; i < TS_HIST_BUCKETS; i++) {
        seen += h->buckets[i];
        if (seen >= rank) {
            int64_t lo, hi;
            hist_bucket_bounds(i, &lo, &hi);
            int64_t mid = lo + (hi - lo) / 2;
            if (mid < x->min_ns)
                mid = x->min_ns;
            if (mid > x->max_ns)
                mid = x->max_ns;
            return mid;
        }
    }
    return x->max_ns;
}

double hist_mean_ns(const struct ts_hist *h)
{
    return h->count ? (double)h->sum_ns / (double)h->count : 0.0;
}
