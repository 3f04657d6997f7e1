/* hist.h: a fixed-layout log-linear latency histogram of uint64_t counts.
 *
 * Values are nanoseconds. Below 256 ns every value has its own bucket; above, each power of
 * two is split into 128 equal buckets, so a bucket is at most 1/128 of its lower bound wide
 * and the midpoint reported for a percentile is within 0.4% of any value in it. Values are
 * clamped at TS_HIST_MAX_NS (about 73 minutes). The layout is all uint64_t so that merging
 * many histograms is an element-wise sum (one MPI_Reduce with MPI_SUM); min and max are
 * kept beside it in struct ts_hist_extremes, merged with min/max. No I/O, no clocks. */
#ifndef TOKSTORM_HIST_H
#define TOKSTORM_HIST_H

#include <stdint.h>

#define TS_HIST_SUB_BITS 7
#define TS_HIST_SUB      (1 << TS_HIST_SUB_BITS) /* buckets per power of two */
#define TS_HIST_LINEAR   (2 * TS_HIST_SUB)       /* exact buckets for 0..255 ns */
#define TS_HIST_MAX_EXP  42                      /* values < 2^42 ns (73 min) */
#define TS_HIST_BUCKETS  (TS_HIST_LINEAR + (TS_HIST_MAX_EXP - TS_HIST_SUB_BITS - 1) * TS_HIST_SUB)
#define TS_HIST_MAX_NS   ((INT64_C(1) << TS_HIST_MAX_EXP) - 1)

struct ts_hist {
    uint64_t count;                    /* values recorded */
    uint64_t sum_ns;                   /* their sum (for the mean) */
    uint64_t buckets[TS_HIST_BUCKETS]; /* counts per bucket */
};

/* Exact extremes; INT64_MAX / INT64_MIN while empty. Merged with min and max. */
struct ts_hist_extremes {
    int64_t min_ns;
    int64_t max_ns;
};

void hist_init(struct ts_hist *h, struct ts_hist_extremes *x);

/* Records one value (negative values count as 0, values above TS_HIST_MAX_NS as that). */
void hist_record(struct ts_hist *h, struct ts_hist_extremes *x, int64_t value_ns);

/* dst += src, for both parts. */
void hist_merge(struct ts_hist *dst, struct ts_hist_extremes *dst_x, const struct ts_hist *src,
                const struct ts_hist_extremes *src_x);

/* The q-quantile (0 <= q <= 1) as the midpoint of the bucket holding the ceil(q*count)-th
 * smallest value, clamped to [min, max]. Returns 0 for an empty histogram. */
int64_t hist_percentile_ns(const struct ts_hist *h, const struct ts_hist_extremes *x, double q);

/* Mean in ns (0 when empty). */
double hist_mean_ns(const struct ts_hist *h);

/* The bucket a value falls in, and a bucket's bounds [lo, hi] in ns (for storing the layout). */
int hist_bucket_index(int64_t value_ns);
void hist_bucket_bounds(int index, int64_t *lo_ns, int64_t *hi_ns);

#endif
