/* test_hist.c: the log-linear histogram against exact percentiles of the raw values: every
 * percentile of a histogram merged from 8 parts is within 1% of the sorted-array answer,
 * for values spread over six orders of magnitude; merging is associative and commutative. */
#include "tokstorm/hist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array: the value at rank ceil(q*n). */
static int64_t exact_percentile(const int64_t *sorted, size_t n, double q)
{
    size_t rank = (size_t)ceil(q * (double)n);
    if (rank == 0)
        rank = 1;
    return sorted[rank - 1];
}

static uint64_t rng_state = 88172645463325252ULL;
static uint64_t xorshift(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

int main(void)
{
    /* Bucket layout: contiguous, each value inside its own bucket's bounds, width <= 1/128. */
    int64_t prev_hi = -1;
    int layout_ok = 1;
    for (int i = 0; i < TS_HIST_BUCKETS; i++) {
        int64_t lo, hi;
        hist_bucket_bounds(i, &lo, &hi);
        if (lo != prev_hi + 1 || hist_bucket_index(lo) != i || hist_bucket_index(hi) != i)
            layout_ok = 0;
        if (lo >= TS_HIST_LINEAR && (double)(hi - lo + 1) / (double)lo > 1.0 / 128 + 1e-12)
            layout_ok = 0;
        prev_hi = hi;
    }
    CHECK(layout_ok);
    CHECK_EQ_INT(prev_hi, TS_HIST_MAX_NS);

    /* 200k values log-uniform from 1 us to 1 s (six orders), recorded into 8 parts. */
    enum { N = 200000, PARTS = 8 };
    int64_t *vals = malloc(N * sizeof *vals);
    struct ts_hist *parts = malloc(PARTS * sizeof *parts);
    struct ts_hist_extremes px[PARTS];
    struct ts_hist *all = malloc(sizeof *all);
    struct ts_hist_extremes ax;
    for (int p = 0; p < PARTS; p++)
        hist_init(&parts[p], &px[p]);
    for (int i = 0; i < N; i++) {
        double u = (double)(xorshift() >> 11) / 9007199254740992.0;
        vals[i] = (int64_t)(1000.0 * pow(10.0, 6.0 * u));
        hist_record(&parts[i % PARTS], &px[i % PARTS], vals[i]);
    }
    hist_init(all, &ax);
    for (int p = 0; p < PARTS; p++)
        hist_merge(all, &ax, &parts[p], &px[p]);
    qsort(vals, N, sizeof *vals, cmp_i64);
    CHECK_EQ_INT(all->count, N);
    CHECK_EQ_INT(ax.min_ns, vals[0]);
    CHECK_EQ_INT(ax.max_ns, vals[N - 1]);
    const double qs[] = {0.0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1.0};
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++) {
        double want = (double)exact_percentile(vals, N, qs[i]);
        double got = (double)hist_percentile_ns(all, &ax, qs[i]);
        if (fabs(got - want) > 0.01 * want)
            fprintf(stderr, "q=%g want %.0f got %.0f\n", qs[i], want, got);
        CHECK(fabs(got - want) <= 0.01 * want);
    }
    double mean = 0;
    for (int i = 0; i < N; i++)
        mean += (double)vals[i];
    mean /= N;
    CHECK(fabs(hist_mean_ns(all) - mean) < 1e-6 * mean);

    /* Merge order does not matter: (p0+p1)+p2 == p0+(p1+p2), bucket for bucket. */
    struct ts_hist *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    struct ts_hist_extremes axx, bxx;
    hist_init(a, &axx);
    hist_merge(a, &axx, &parts[0], &px[0]);
    hist_merge(a, &axx, &parts[1], &px[1]);
    hist_merge(a, &axx, &parts[2], &px[2]);
    hist_init(b, &bxx);
    hist_merge(b, &bxx, &parts[2], &px[2]);
    hist_merge(b, &bxx, &parts[1], &px[1]);
    hist_merge(b, &bxx, &parts[0], &px[0]);
    CHECK(memcmp(a, b, sizeof *a) == 0);
    CHECK(axx.min_ns == bxx.min_ns && axx.max_ns == bxx.max_ns);

    /* Edges: empty, negative, huge, one value. */
    hist_init(a, &axx);
    CHECK_EQ_INT(hist_percentile_ns(a, &axx, 0.5), 0);
    hist_record(a, &axx, -5);
    CHECK_EQ_INT(hist_percentile_ns(a, &axx, 0.5), 0);
    hist_record(a, &axx, INT64_MAX);
    CHECK_EQ_INT(axx.max_ns, TS_HIST_MAX_NS);
    hist_init(a, &axx);
    hist_record(a, &axx, 50000000);
    CHECK_EQ_INT(hist_percentile_ns(a, &axx, 0.99), 50000000);

    free(vals);
    free(parts);
    free(all);
    free(a);
    free(b);
    return check_report("hist");
}
