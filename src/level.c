/* level.c: one level's closed-loop plan and its measurements on this rank. It decides which
 * prompt each stream sends next and turns finished transfers into rows and stats; it knows
 * nothing of curl, MPI, clocks (time is passed in) or how results are written. */
#include "tokstorm/level.h"

#include <stdlib.h>
#include <string.h>

void level_share(int64_t concurrency, int rank, int nranks, int64_t *first_stream,
                 int64_t *local_streams)
{
    int64_t base = concurrency / nranks, extra = concurrency % nranks;
    *local_streams = base + (rank < extra ? 1 : 0);
    *first_stream = base * rank + (rank < extra ? rank : extra);
}

int level_init(struct ts_level *l)
{
    memset(l, 0, sizeof *l);
    rows_init(&l->rows);
    l->stats = malloc(sizeof *l->stats);
    return l->stats ? 0 : -1;
}

void level_free(struct ts_level *l)
{
    free(l->issued);
    free(l->current);
    free(l->stats);
    rows_free(&l->rows);
    memset(l, 0, sizeof *l);
}

int level_begin(struct ts_level *l, const struct ts_level_plan *plan, int64_t start_ns)
{
    size_t n = (size_t)plan->local_streams;
    if (n > l->streams_cap) {
        int64_t *issued = realloc(l->issued, n * sizeof *issued);
        if (issued)
            l->issued = issued;
        struct ts_level_request *cur = realloc(l->current, n * sizeof *cur);
        if (cur)
            l->current = cur;
        if (!issued || !cur)
            return -1;
        l->streams_cap = n;
    }
    if (n)
        memset(l->issued, 0, n * sizeof *l->issued);
    l->plan = *plan;
    l->start_ns = start_ns;
    /* Without warm-up the measure phase is the level; with it, it begins at the first
     * measured request's start (set in level_next). */
    l->measure_start_ns = plan->warmup > 0 ? 0 : start_ns;
    l->last_end_ns = start_ns;
    stats_init(l->stats, &l->extremes);
    rows_clear(&l->rows);
    l->rows_lost = 0;
    return 0;
}

int level_next(struct ts_level *l, int64_t s, int64_t now_ns, struct ts_level_request *out)
{
    const struct ts_level_plan *p = &l->plan;
    int64_t i = l->issued[s];
    int measured = i >= p->warmup;
    if (measured) {
        if (p->requests_per_stream > 0 && i - p->warmup >= p->requests_per_stream)
            return 0;
        if (p->duration_ns > 0 && now_ns - l->start_ns >= p->duration_ns)
            return 0;
        if (l->measure_start_ns == 0) /* calls come in time order: the first is the earliest */
            l->measure_start_ns = now_ns;
    }
    int64_t stream = p->first_stream + s;
    out->index = i;
    out->measured = measured;
    out->prompt_index = (int64_t)(((uint64_t)stream + (uint64_t)i * (uint64_t)p->concurrency) %
                                  (uint64_t)p->prompt_count);
    l->current[s] = *out;
    l->issued[s] = i + 1;
    return 1;
}

void level_done(struct ts_level *l, int64_t s, struct ts_xfer *x, enum ts_transport how,
                const char *detail, int64_t now_ns)
{
    const struct ts_level_request *req = &l->current[s];
    struct ts_row row;
    memset(&row, 0, sizeof row);
    xfer_finish(x, how, detail, now_ns, l->start_ns, &row);
    if (!req->measured)
        return;
    row.rank = l->plan.rank;
    row.stream = (int32_t)(l->plan.first_stream + s);
    row.request = req->index;
    row.prompt_index = (int32_t)req->prompt_index;
    stats_record(l->stats, &l->extremes, &row, x->token_ns,
                 row.error_class == TS_ERR_NONE ? x->n_tokens : 0);
    if (rows_append(&l->rows, &row) != 0)
        l->rows_lost++;
    if (now_ns > l->last_end_ns)
        l->last_end_ns = now_ns;
}

void level_end(struct ts_level *l)
{
    int64_t from = l->measure_start_ns ? l->measure_start_ns : l->start_ns;
    l->extremes.span_ns = l->last_end_ns > from ? l->last_end_ns - from : 0;
}
