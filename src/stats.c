/* stats.c: per-level counters, histograms and rows: record, merge, summarise. It knows
 * nothing of MPI (which merges these by summing), of curl, or of how rows are stored. */
#include "tokstorm/stats.h"

#include <stdlib.h>
#include <string.h>

const char *stats_err_class_name(int c)
{
    static const char *const names[TS_ERR__COUNT] = {
        "ok",        "http_4xx",     "http_5xx",   "connect",      "timeout",
        "truncated", "stream_error", "http_other", "rate_limited", "reset",
        "stalled",   "malformed",    "oversized",  "cancelled",
    };
    return (c >= 0 && c < TS_ERR__COUNT) ? names[c] : "unknown";
}

void rows_init(struct ts_rows *r)
{
    memset(r, 0, sizeof *r);
}

int rows_append(struct ts_rows *r, const struct ts_row *row)
{
    if (r->count == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 1024;
        struct ts_row *grown = realloc(r->items, cap * sizeof *grown);
        if (grown == NULL)
            return -1;
        r->items = grown;
        r->cap = cap;
    }
    r->items[r->count++] = *row;
    return 0;
}

void rows_clear(struct ts_rows *r)
{
    r->count = 0;
}

void rows_free(struct ts_rows *r)
{
    free(r->items);
    rows_init(r);
}

void events_init(struct ts_event_times *e)
{
    memset(e, 0, sizeof *e);
}

int events_append(struct ts_event_times *e, const int64_t *t_ns, size_t n, int64_t zero_ns)
{
    if (e->count + n > e->cap) {
        size_t cap = e->cap ? e->cap : 4096;
        while (e->count + n > cap)
            cap *= 2;
        double *grown = realloc(e->t_s, cap * sizeof *grown);
        if (grown == NULL)
            return -1;
        e->t_s = grown;
        e->cap = cap;
    }
    for (size_t i = 0; i < n; i++)
        e->t_s[e->count++] = (double)(t_ns[i] - zero_ns) / 1e9;
    return 0;
}

void events_drop_last(struct ts_event_times *e, size_t n)
{
    e->count = n < e->count ? e->count - n : 0;
}

void events_clear(struct ts_event_times *e)
{
    e->count = 0;
}

void events_free(struct ts_event_times *e)
{
    free(e->t_s);
    events_init(e);
}

void stats_init(struct ts_level_stats *s, struct ts_level_extremes *x)
{
    memset(&s->c, 0, sizeof s->c);
    hist_init(&s->ttft, &x->ttft);
    hist_init(&s->itl, &x->itl);
    hist_init(&s->tpot, &x->tpot);
    hist_init(&s->e2e, &x->e2e);
    hist_init(&s->lag, &x->lag);
    hist_init(&s->ttft_sched, &x->ttft_sched);
    hist_init(&s->e2e_sched, &x->e2e_sched);
    hist_init(&s->stamp_delay, &x->stamp_delay);
    hist_init(&s->ttft_error, &x->ttft_error);
    hist_init(&s->itl_error, &x->itl_error);
    hist_init(&s->ttft_answer, &x->ttft_answer);
    x->first_start_ns = x->full_end_ns = x->rank_start_min_ns = INT64_MAX;
    x->last_end_ns = x->full_start_ns = x->rank_start_max_ns = INT64_MIN;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

static int64_t seconds_to_ns(double s)
{
    return (int64_t)(s * 1e9 + (s >= 0 ? 0.5 : -0.5));
}

void stats_record(struct ts_level_stats *s, struct ts_level_extremes *x, const struct ts_row *row,
                  const int64_t *token_ns, size_t n_tokens, int64_t slo_ttft_ns,
                  int64_t slo_tpot_ns)
{
    x->first_start_ns = min64(x->first_start_ns, seconds_to_ns(row->start_s));
    x->last_end_ns = max64(x->last_end_ns, seconds_to_ns(row->end_s));
    /* Open loop, failures included: how many waited for a slot, and how late the others
     * went out. A late request's wait is the cap's (or the server's), not the client's, so
     * it stays out of the send lag; it shows in the latencies from the schedule. */
    s->c.late += row->late ? 1 : 0;
    if (!row->late)
        hist_record(&s->lag, &x->lag, seconds_to_ns(row->start_s - row->scheduled_s));
    if (row->error_class != TS_ERR_NONE) {
        s->c.err++;
        if (row->error_class > 0 && row->error_class < TS_ERR__COUNT)
            s->c.err_by_class[row->error_class]++;
        return;
    }
    s->c.ok++;
    s->c.output_tokens += (uint64_t)row->output_tokens;
    s->c.prompt_tokens += (uint64_t)row->prompt_tokens;
    s->c.tokens_from_usage += row->tokens_from_usage ? 1 : 0;
    s->c.content_events += (uint64_t)row->content_events;
    s->c.reasoning_events += (uint64_t)row->reasoning_events;
    hist_record(&s->e2e_sched, &x->e2e_sched, seconds_to_ns(row->end_s - row->scheduled_s));
    int64_t ttft_ns = -1, tpot_ns = -1;

    int64_t e2e_ns = seconds_to_ns(row->end_s - row->start_s);
    hist_record(&s->e2e, &x->e2e, e2e_ns);
    if (e2e_ns > 0) {
        /* Clamped: a hostile usage count must not overflow the conversion (1e12 tok/s). */
        double rate_utok_s = (double)row->output_tokens * 1e15 / (double)e2e_ns;
        s->c.rate_sum_utok_s += (uint64_t)(rate_utok_s < 1e18 ? rate_utok_s : 1e18);
    }
    if (row->first_answer_s >= 0)
        hist_record(&s->ttft_answer, &x->ttft_answer,
                    seconds_to_ns(row->first_answer_s - row->start_s));
    if (row->first_token_s >= 0) {
        ttft_ns = seconds_to_ns(row->first_token_s - row->start_s);
        hist_record(&s->ttft, &x->ttft, ttft_ns);
        hist_record(&s->ttft_sched, &x->ttft_sched,
                    seconds_to_ns(row->first_token_s - row->scheduled_s));
        if (row->output_tokens >= 2) {
            int64_t decode_ns = seconds_to_ns(row->end_s - row->first_token_s);
            tpot_ns = decode_ns / (row->output_tokens - 1);
            hist_record(&s->tpot, &x->tpot, tpot_ns);
        }
    }
    /* Goodput as vLLM's benchmark defines it: TTFT (from the actual send) and TPOT within
     * their objectives; a request without a second token has no TPOT to miss. */
    if ((slo_ttft_ns == 0 || (ttft_ns >= 0 && ttft_ns <= slo_ttft_ns)) &&
        (slo_tpot_ns == 0 || tpot_ns <= slo_tpot_ns))
        s->c.good++;
    for (size_t i = 1; i < n_tokens; i++)
        hist_record(&s->itl, &x->itl, token_ns[i] - token_ns[i - 1]);
}

void stats_record_stamps(struct ts_level_stats *s, struct ts_level_extremes *x,
                         const int64_t *token_ns, const int64_t *stamp_ns, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (stamp_ns[i] <= 0)
            continue;
        int64_t delay_ns = token_ns[i] - stamp_ns[i];
        hist_record(&s->stamp_delay, &x->stamp_delay, delay_ns);
        if (i == 0)
            hist_record(&s->ttft_error, &x->ttft_error, delay_ns);
        else if (stamp_ns[i - 1] > 0) {
            int64_t error_ns = (token_ns[i] - token_ns[i - 1]) - (stamp_ns[i] - stamp_ns[i - 1]);
            hist_record(&s->itl_error, &x->itl_error, error_ns < 0 ? -error_ns : error_ns);
        }
    }
}

void stats_merge(struct ts_level_stats *dst, struct ts_level_extremes *dst_x,
                 const struct ts_level_stats *src, const struct ts_level_extremes *src_x)
{
    /* The counters are all uint64_t: sum them as the MPI reduction does. */
    uint64_t *d = (uint64_t *)&dst->c;
    const uint64_t *s = (const uint64_t *)&src->c;
    for (size_t i = 0; i < sizeof dst->c / sizeof *d; i++)
        d[i] += s[i];
    hist_merge(&dst->ttft, &dst_x->ttft, &src->ttft, &src_x->ttft);
    hist_merge(&dst->itl, &dst_x->itl, &src->itl, &src_x->itl);
    hist_merge(&dst->tpot, &dst_x->tpot, &src->tpot, &src_x->tpot);
    hist_merge(&dst->e2e, &dst_x->e2e, &src->e2e, &src_x->e2e);
    hist_merge(&dst->lag, &dst_x->lag, &src->lag, &src_x->lag);
    hist_merge(&dst->ttft_sched, &dst_x->ttft_sched, &src->ttft_sched, &src_x->ttft_sched);
    hist_merge(&dst->e2e_sched, &dst_x->e2e_sched, &src->e2e_sched, &src_x->e2e_sched);
    hist_merge(&dst->stamp_delay, &dst_x->stamp_delay, &src->stamp_delay, &src_x->stamp_delay);
    hist_merge(&dst->ttft_error, &dst_x->ttft_error, &src->ttft_error, &src_x->ttft_error);
    hist_merge(&dst->itl_error, &dst_x->itl_error, &src->itl_error, &src_x->itl_error);
    hist_merge(&dst->ttft_answer, &dst_x->ttft_answer, &src->ttft_answer, &src_x->ttft_answer);
    dst_x->first_start_ns = min64(dst_x->first_start_ns, src_x->first_start_ns);
    dst_x->last_end_ns = max64(dst_x->last_end_ns, src_x->last_end_ns);
    dst_x->full_start_ns = max64(dst_x->full_start_ns, src_x->full_start_ns);
    dst_x->full_end_ns = min64(dst_x->full_end_ns, src_x->full_end_ns);
    dst_x->rank_start_min_ns = min64(dst_x->rank_start_min_ns, src_x->rank_start_min_ns);
    dst_x->rank_start_max_ns = max64(dst_x->rank_start_max_ns, src_x->rank_start_max_ns);
}

/* Minima are negated so that one element-wise max merges everything. INT64_MAX, the empty
 * minimum, negates without overflow (INT64_MIN would not, and is never a minimum here). */
enum { N_HISTS = 11, N_TIMES = 6 };
_Static_assert(2 * N_HISTS + N_TIMES == TS_EXTREMES_PACKED, "every extreme is packed once");

void stats_extremes_pack(const struct ts_level_extremes *x, int64_t out[TS_EXTREMES_PACKED])
{
    const struct ts_hist_extremes *h[N_HISTS] = {&x->ttft,      &x->itl,         &x->tpot,
                                                 &x->e2e,       &x->lag,         &x->ttft_sched,
                                                 &x->e2e_sched, &x->stamp_delay, &x->ttft_error,
                                                 &x->itl_error, &x->ttft_answer};
    for (int i = 0; i < N_HISTS; i++) {
        out[2 * i] = -h[i]->min_ns;
        out[2 * i + 1] = h[i]->max_ns;
    }
    int64_t *t = out + 2 * N_HISTS;
    t[0] = -x->first_start_ns;
    t[1] = x->last_end_ns;
    t[2] = x->full_start_ns;
    t[3] = -x->full_end_ns;
    t[4] = -x->rank_start_min_ns;
    t[5] = x->rank_start_max_ns;
}

void stats_extremes_unpack(const int64_t in[TS_EXTREMES_PACKED], struct ts_level_extremes *x)
{
    struct ts_hist_extremes *h[N_HISTS] = {&x->ttft,      &x->itl,         &x->tpot,
                                           &x->e2e,       &x->lag,         &x->ttft_sched,
                                           &x->e2e_sched, &x->stamp_delay, &x->ttft_error,
                                           &x->itl_error, &x->ttft_answer};
    for (int i = 0; i < N_HISTS; i++) {
        h[i]->min_ns = -in[2 * i];
        h[i]->max_ns = in[2 * i + 1];
    }
    const int64_t *t = in + 2 * N_HISTS;
    x->first_start_ns = -t[0];
    x->last_end_ns = t[1];
    x->full_start_ns = t[2];
    x->full_end_ns = -t[3];
    x->rank_start_min_ns = -t[4];
    x->rank_start_max_ns = t[5];
}

static void dist(const struct ts_hist *h, const struct ts_hist_extremes *x, struct ts_dist *d)
{
    memset(d, 0, sizeof *d);
    d->count = h->count;
    if (h->count == 0)
        return;
    d->p50 = (double)hist_percentile_ns(h, x, 0.50) / 1e6;
    d->p90 = (double)hist_percentile_ns(h, x, 0.90) / 1e6;
    d->p95 = (double)hist_percentile_ns(h, x, 0.95) / 1e6;
    d->p99 = (double)hist_percentile_ns(h, x, 0.99) / 1e6;
    d->p999 = (double)hist_percentile_ns(h, x, 0.999) / 1e6;
    d->mean = hist_mean_ns(h) / 1e6;
    d->min = (double)x->min_ns / 1e6;
    d->max = (double)x->max_ns / 1e6;
}

int stats_steady_window(const struct ts_level_extremes *x, int64_t *start_ns, int64_t *end_ns)
{
    *start_ns = x->full_start_ns;
    *end_ns = x->full_end_ns;
    return x->full_start_ns != INT64_MIN && x->full_end_ns != INT64_MAX &&
           x->full_end_ns > x->full_start_ns;
}

void stats_set_steady(struct ts_level_summary *out, double steady_tokens)
{
    out->steady_tokens = steady_tokens;
    out->steady_tok_s = out->steady_s > 0 ? steady_tokens / out->steady_s : 0;
}

void stats_summarize(const struct ts_level_stats *s, const struct ts_level_extremes *x,
                     int64_t concurrency, struct ts_level_summary *out)
{
    memset(out, 0, sizeof *out);
    out->concurrency = concurrency;
    if (x->last_end_ns > x->first_start_ns && x->first_start_ns != INT64_MAX)
        out->wall_s = (double)(x->last_end_ns - x->first_start_ns) / 1e9;
    out->ok = s->c.ok;
    out->err = s->c.err;
    memcpy(out->err_by_class, s->c.err_by_class, sizeof out->err_by_class);
    out->output_tokens = s->c.output_tokens;
    out->prompt_tokens = s->c.prompt_tokens;
    out->agg_tok_s = out->wall_s > 0 ? (double)s->c.output_tokens / out->wall_s : 0;
    out->per_req_tok_s = s->c.ok ? (double)s->c.rate_sum_utok_s / 1e6 / (double)s->c.ok : 0;
    dist(&s->ttft, &x->ttft, &out->ttft);
    dist(&s->itl, &x->itl, &out->itl);
    dist(&s->tpot, &x->tpot, &out->tpot);
    dist(&s->e2e, &x->e2e, &out->e2e);
    dist(&s->lag, &x->lag, &out->lag);
    dist(&s->ttft_sched, &x->ttft_sched, &out->ttft_sched);
    dist(&s->e2e_sched, &x->e2e_sched, &out->e2e_sched);
    dist(&s->stamp_delay, &x->stamp_delay, &out->stamp_delay);
    dist(&s->ttft_error, &x->ttft_error, &out->ttft_error);
    dist(&s->itl_error, &x->itl_error, &out->itl_error);
    dist(&s->ttft_answer, &x->ttft_answer, &out->ttft_answer);
    out->reasoning_events = s->c.reasoning_events;
    out->answer_events = s->c.content_events - s->c.reasoning_events;
    out->late = s->c.late;
    if (s->c.content_events > 0)
        out->tokens_per_event = (double)s->c.output_tokens / (double)s->c.content_events;
    out->good = s->c.good;
    if (out->wall_s > 0) {
        out->req_s = (double)s->c.ok / out->wall_s;
        out->goodput_req_s = (double)s->c.good / out->wall_s;
    }
    int64_t from, to;
    if (stats_steady_window(x, &from, &to))
        out->steady_s = (double)(to - from) / 1e9;
    if (x->rank_start_max_ns >= x->rank_start_min_ns && x->rank_start_min_ns != INT64_MAX)
        out->start_skew_s = (double)(x->rank_start_max_ns - x->rank_start_min_ns) / 1e9;
}
