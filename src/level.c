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
    events_init(&l->events);
    timeline_init(&l->timeline);
    l->stats = malloc(sizeof *l->stats);
    return l->stats ? 0 : -1;
}

void level_free(struct ts_level *l)
{
    free(l->issued);
    free(l->current);
    free(l->stats);
    rows_free(&l->rows);
    events_free(&l->events);
    timeline_free(&l->timeline);
    memset(l, 0, sizeof *l);
}

int level_begin(struct ts_level *l, const struct ts_level_plan *plan, int64_t origin_ns,
                int64_t start_ns)
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
    for (size_t i = 0; i < n; i++)
        l->issued[i] = plan->warmup; /* measured requests continue the streams' sequences */
    l->plan = *plan;
    l->origin_ns = origin_ns;
    l->start_ns = start_ns;
    l->streams_measuring = 0;
    l->first_start_max_ns = INT64_MIN;
    l->taken = 0;
    if (plan->open_loop)
        schedule_init(&l->schedule, plan->arrival, plan->rate_per_s, plan->burstiness, plan->seed);
    stats_init(l->stats, &l->extremes);
    rows_clear(&l->rows);
    events_clear(&l->events);
    timeline_reset(&l->timeline);
    l->rows_lost = 0;
    l->stopped = 0;
    return 0;
}

/* Stream s has run out of requests at now_ns. The first stream to do so ends the window in
 * which all of this rank's streams were busy. */
static void stream_finished(struct ts_level *l, int64_t now_ns)
{
    if (l->extremes.full_end_ns == INT64_MAX)
        l->extremes.full_end_ns = level_common_ns(l, now_ns);
}

int64_t level_prompt_index(const struct ts_level_plan *p, int64_t s, int64_t index)
{
    uint64_t stream = (uint64_t)(p->first_stream + s);
    return (int64_t)((stream + (uint64_t)index * (uint64_t)p->concurrency) %
                     (uint64_t)p->prompt_count);
}

int level_next(struct ts_level *l, int64_t s, int64_t now_ns, struct ts_level_request *out)
{
    const struct ts_level_plan *p = &l->plan;
    int64_t i = l->issued[s];
    if (i < 0)
        return 0; /* finished before */
    int done = (p->requests_per_stream > 0 && i - p->warmup >= p->requests_per_stream) ||
               (p->duration_ns > 0 && now_ns - l->start_ns >= p->duration_ns);
    if (done || l->stopped) {
        l->issued[s] = -1;
        l->stats->c.cut_off += done ? 0 : 1;
        stream_finished(l, now_ns);
        return 0;
    }
    int64_t t = level_common_ns(l, now_ns);
    if (i == p->warmup)
        l->streams_measuring++; /* the window of full load: see level_done */
    if (l->extremes.rank_start_min_ns == INT64_MAX) {
        /* This rank's first request: one value per rank, whose spread over ranks (merged
         * with min and max) is the level's start skew. */
        l->extremes.rank_start_min_ns = l->extremes.rank_start_max_ns = t;
    }
    out->index = i;
    out->prompt_index = level_prompt_index(p, s, i);
    out->scheduled_ns = 0;
    out->late = 0;
    l->current[s] = *out;
    l->issued[s] = i + 1;
    return 1;
}

void level_mark_start(struct ts_level *l, int64_t now_ns)
{
    l->extremes.rank_start_min_ns = l->extremes.rank_start_max_ns = level_common_ns(l, now_ns);
}

void level_stop(struct ts_level *l)
{
    if (l->stopped)
        return;
    /* Closed loop: each stream is counted when it next asks (level_next). */
    if (l->plan.open_loop && level_next_due(l) != INT64_MAX)
        l->stats->c.cut_off++;
    l->stopped = 1;
}

int64_t level_next_due(const struct ts_level *l)
{
    const struct ts_level_plan *p = &l->plan;
    if (l->stopped || p->rate_per_s <= 0 ||
        (p->open_requests > 0 && l->taken >= p->open_requests) ||
        (p->duration_ns > 0 && l->schedule.next_ns >= p->duration_ns))
        return INT64_MAX;
    return l->start_ns + l->schedule.next_ns;
}

void level_take(struct ts_level *l, int64_t slot, int late, struct ts_level_request *out)
{
    const struct ts_level_plan *p = &l->plan;
    out->index = l->taken++;
    /* Requests are numbered across ranks as rank-interleaved, so ranks walk the prompts
     * apart from each other. */
    uint64_t global = (uint64_t)out->index * (uint64_t)p->nranks + (uint64_t)p->rank;
    out->prompt_index = (int64_t)(global % p->prompt_count);
    out->scheduled_ns = l->start_ns + schedule_take(&l->schedule);
    out->late = late;
    l->current[slot] = *out;
}

void level_done(struct ts_level *l, int64_t s, struct ts_xfer *x, enum ts_transport how,
                const char *detail, int64_t now_ns)
{
    const struct ts_level_request *req = &l->current[s];
    struct ts_row row;
    memset(&row, 0, sizeof row);
    xfer_finish(x, how, detail, now_ns, l->origin_ns, &row);
    row.rank = l->plan.rank;
    row.stream = (int32_t)(l->plan.first_stream + s);
    row.request = req->index;
    row.prompt_index = (int32_t)req->prompt_index;
    /* Closed loop: the request was due when the stream handed it over, so the send lag is
     * the time the client took to write it (many streams starting at once queue up). */
    int64_t due_ns = req->scheduled_ns ? req->scheduled_ns : x->queued_ns;
    row.scheduled_s = (double)(due_ns - l->origin_ns) / 1e9;
    row.late = req->late;
    /* The window of full load opens when the last stream's first measured request starts
     * (is written, as its latencies count): known once every stream has begun and the last of
     * those first requests has ended, which is always after the last began. */
    if (req->scheduled_ns == 0 && req->index == l->plan.warmup) {
        int64_t started = level_common_ns(l, x->start_ns);
        if (started > l->first_start_max_ns)
            l->first_start_max_ns = started;
        if (l->streams_measuring == l->plan.local_streams)
            l->extremes.full_start_ns = l->first_start_max_ns;
    }
    int ok = row.error_class == TS_ERR_NONE;
    stats_record(l->stats, &l->extremes, &row, x->token_ns, ok ? x->n_tokens : 0,
                 l->plan.slo_ttft_ns, l->plan.slo_tpot_ns);
    stats_record_stamps(l->stats, &l->extremes, x->token_ns, x->stamp_ns, ok ? x->n_tokens : 0);
    int lost = 0;
    /* The times go in before the row, which then says how many are its own; a row that
     * cannot be kept takes its times with it, so that rows and times stay in step. */
    if (l->plan.record_events && x->n_tokens > 0) {
        if (x->n_tokens <= INT32_MAX &&
            events_append(&l->events, x->token_ns, x->n_tokens, l->origin_ns) == 0)
            row.recorded_events = (int32_t)x->n_tokens;
        else
            lost = 1;
    }
    if (rows_append(&l->rows, &row) != 0) {
        events_drop_last(&l->events, (size_t)row.recorded_events);
        lost = 1;
    }
    /* As in the table, only a successful request's tokens count. Its output_tokens (the
     * server's usage when it sends one) are spread over its content events so that a server
     * that puts several tokens in one event is counted right and the series sums to the
     * level's token total exactly. */
    uint64_t n = ok ? x->n_tokens : 0, total = (uint64_t)row.output_tokens;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t share = (uint32_t)((i + 1) * total / n - i * total / n);
        lost |= timeline_add_tokens(&l->timeline, x->token_ns[i] - l->start_ns, share) != 0;
    }
    lost |= timeline_add_end(&l->timeline, now_ns - l->start_ns, ok) != 0;
    l->rows_lost += (uint64_t)lost;
}
