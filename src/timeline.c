/* timeline.c: binned counts of tokens and request ends over one level. It knows nothing of
 * clocks (times are passed in, relative to the level start), MPI or files. */
#include "tokstorm/timeline.h"

#include <stdlib.h>
#include <string.h>

void timeline_init(struct ts_timeline *t)
{
    memset(t, 0, sizeof *t);
}

void timeline_free(struct ts_timeline *t)
{
    free(t->tokens);
    free(t->ok);
    free(t->err);
    timeline_init(t);
}

void timeline_reset(struct ts_timeline *t)
{
    if (t->n_fine)
        memset(t->tokens, 0, t->n_fine * sizeof *t->tokens);
    if (t->n_series) {
        memset(t->ok, 0, t->n_series * sizeof *t->ok);
        memset(t->err, 0, t->n_series * sizeof *t->err);
    }
    t->n_fine = t->n_series = 0;
}

/* Makes bin i exist in an array of elem-sized bins, zero-filled; doubles the capacity. */
static int ensure(void **arr, size_t *cap, size_t *n, size_t i, size_t elem)
{
    if (i >= *cap) {
        size_t c = *cap ? *cap : 1024;
        while (c <= i)
            c *= 2;
        void *grown = realloc(*arr, c * elem);
        if (grown == NULL)
            return -1;
        memset((char *)grown + *cap * elem, 0, (c - *cap) * elem);
        *arr = grown;
        *cap = c;
    }
    if (i >= *n)
        *n = i + 1;
    return 0;
}

/* ok and err always have the same length and capacity. */
static int ensure_series(struct ts_timeline *t, size_t i)
{
    if (i >= t->series_cap) {
        size_t c = t->series_cap ? t->series_cap : 64;
        while (c <= i)
            c *= 2;
        uint64_t *ok = realloc(t->ok, c * sizeof *ok);
        if (ok == NULL)
            return -1;
        t->ok = ok;
        uint64_t *err = realloc(t->err, c * sizeof *err);
        if (err == NULL)
            return -1; /* ok is larger than series_cap says: harmless, realloc'd again later */
        t->err = err;
        memset(t->ok + t->series_cap, 0, (c - t->series_cap) * sizeof *ok);
        memset(t->err + t->series_cap, 0, (c - t->series_cap) * sizeof *err);
        t->series_cap = c;
    }
    if (i >= t->n_series)
        t->n_series = i + 1;
    return 0;
}

int timeline_add_tokens(struct ts_timeline *t, int64_t rel_ns, uint32_t n)
{
    size_t i = rel_ns > 0 ? (size_t)(rel_ns / TS_TIMELINE_FINE_NS) : 0;
    if (ensure((void **)&t->tokens, &t->fine_cap, &t->n_fine, i, sizeof *t->tokens) != 0)
        return -1;
    t->tokens[i] += n;
    return 0;
}

int timeline_add_end(struct ts_timeline *t, int64_t rel_ns, int ok)
{
    size_t i = rel_ns > 0 ? (size_t)(rel_ns / TS_TIMELINE_SERIES_NS) : 0;
    if (ensure_series(t, i) != 0)
        return -1;
    if (ok)
        t->ok[i]++;
    else
        t->err[i]++;
    return 0;
}

double timeline_tokens_between(const struct ts_timeline *t, int64_t from_ns, int64_t to_ns)
{
    if (from_ns < 0)
        from_ns = 0;
    if (to_ns <= from_ns || t->n_fine == 0)
        return 0;
    size_t first = (size_t)(from_ns / TS_TIMELINE_FINE_NS);
    size_t last = (size_t)((to_ns - 1) / TS_TIMELINE_FINE_NS);
    double sum = 0;
    for (size_t i = first; i <= last && i < t->n_fine; i++) {
        int64_t lo = (int64_t)i * TS_TIMELINE_FINE_NS, hi = lo + TS_TIMELINE_FINE_NS;
        int64_t a = from_ns > lo ? from_ns : lo, b = to_ns < hi ? to_ns : hi;
        sum += (double)t->tokens[i] * (double)(b - a) / (double)TS_TIMELINE_FINE_NS;
    }
    return sum;
}

size_t timeline_series_len(const struct ts_timeline *t)
{
    size_t from_fine = (t->n_fine + TS_TIMELINE_RATIO - 1) / TS_TIMELINE_RATIO;
    return from_fine > t->n_series ? from_fine : t->n_series;
}

void timeline_series(const struct ts_timeline *t, size_t n, uint64_t *tokens, uint64_t *ok,
                     uint64_t *err)
{
    memset(tokens, 0, n * sizeof *tokens);
    memset(ok, 0, n * sizeof *ok);
    memset(err, 0, n * sizeof *err);
    for (size_t i = 0; i < t->n_fine && i / TS_TIMELINE_RATIO < n; i++)
        tokens[i / TS_TIMELINE_RATIO] += t->tokens[i];
    for (size_t i = 0; i < t->n_series && i < n; i++) {
        ok[i] = t->ok[i];
        err[i] = t->err[i];
    }
}
