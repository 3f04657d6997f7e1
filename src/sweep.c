/* sweep.c: the levels of a run: warm-up, preconnect, synchronised start, the rank's event
 * loop in closed or open loop, then reduction, gather and one flushed HDF5 group per level;
 * the saturation ladder; and stopping on a signal: the level's sending stops on every rank,
 * in-flight requests get a grace period and are then cancelled, and the level is reduced and
 * written as usual, marked incomplete. Set-up and tear-down are run.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "tokstorm/clock.h"
#include "tokstorm/interrupt.h"
#include "tokstorm/log.h"
#include "tokstorm/report.h"
#include "tokstorm/run.h"
#include "tokstorm/saturation.h"
#include "tokstorm/timeline.h"
#include "tokstorm/units.h"

#include "run_internal.h"

#define RESYNC_AFTER_NS (60 * TS_NS_PER_S)  /* realign clocks before a level after this */
#define START_LEAD_NS   (50 * TS_NS_PER_MS) /* a level starts this long after rank 0 says so */

static int level_drv_next(void *ctx, int64_t s, int64_t now_ns, const char **body, size_t *len)
{
    struct run_ctx *r = ctx;
    struct ts_level_request req;
    if (!level_next(&r->level, s, now_ns, &req))
        return 0;
    *body = r->bodies[req.prompt_index];
    *len = r->body_lens[req.prompt_index];
    return 1;
}

static void level_drv_done(void *ctx, int64_t s, struct ts_xfer *x, enum ts_transport how,
                           const char *detail, int64_t now_ns)
{
    struct run_ctx *r = ctx;
    level_done(&r->level, s, x, how, detail, now_ns);
}

/* Open loop: arrivals from the level's schedule on free slots. */
static int64_t open_drv_next_due(void *ctx)
{
    struct run_ctx *r = ctx;
    return level_next_due(&r->level);
}

static void open_drv_take(void *ctx, int64_t slot, int64_t now_ns, int late, const char **body,
                          size_t *len)
{
    struct run_ctx *r = ctx;
    struct ts_level_request req;
    (void)now_ns;
    level_take(&r->level, slot, late, &req);
    *body = r->bodies[req.prompt_index];
    *len = r->body_lens[req.prompt_index];
}

/* The warm-up phase: each stream sends plan->warmup requests, in the same prompt sequence the
 * measured ones continue; nothing about them is recorded. */
struct warmup {
    struct run_ctx *r;
    const struct ts_level_plan *plan;
    int64_t *sent; /* per local stream */
};

static int warmup_next(void *ctx, int64_t s, int64_t now_ns, const char **body, size_t *len)
{
    (void)now_ns;
    struct warmup *w = ctx;
    if (w->sent[s] >= w->plan->warmup)
        return 0;
    int64_t p = level_prompt_index(w->plan, s, w->sent[s]++);
    *body = w->r->bodies[p];
    *len = w->r->body_lens[p];
    return 1;
}

static void warmup_done(void *ctx, int64_t s, struct ts_xfer *x, enum ts_transport how,
                        const char *detail, int64_t now_ns)
{
    (void)ctx, (void)s, (void)x, (void)how, (void)detail, (void)now_ns;
}

static int run_warmup(struct run_ctx *r, const struct ts_level_plan *plan,
                      const struct ts_http_tick *tick, char *msg, size_t len)
{
    struct warmup w = {r, plan, calloc((size_t)plan->local_streams + 1, sizeof *w.sent)};
    if (w.sent == NULL) {
        snprintf(msg, len, "out of memory for the warm-up");
        return TS_EXIT_RUNTIME;
    }
    struct ts_http_driver drv = {&w, warmup_next, warmup_done, tick};
    int rc = http_run(r->http, plan->local_streams, &drv, msg, len) != 0 ? TS_EXIT_RUNTIME : 0;
    free(w.sent);
    return rc;
}

/* The gathers' sinks on rank 0. A failed write is kept by h5out (h5out_failed) and said once,
 * after the level; the gathers go on, receiving and dropping, so that no rank waits. */
static int rows_to_h5(void *ctx, const struct ts_row *rows, size_t n)
{
    struct run_ctx *r = ctx;
    char msg[MSG_LEN];
    return h5out_level_rows(r->h5, rows, n, msg, sizeof msg) != 0 ? -1 : 0;
}

/* --record-tokens: the level's event times, as collect_events hands them to rank 0. */
static int events_begin_h5(void *ctx, uint64_t total)
{
    struct run_ctx *r = ctx;
    char msg[MSG_LEN];
    return h5out_level_events_begin(r->h5, total, msg, sizeof msg) != 0 ? -1 : 0;
}

static int events_put_h5(void *ctx, uint64_t pos, const double *t_s, size_t n)
{
    struct run_ctx *r = ctx;
    char msg[MSG_LEN];
    return h5out_level_events(r->h5, pos, t_s, n, msg, sizeof msg) != 0 ? -1 : 0;
}

/* Aligns every rank's clock to rank 0's and gathers who is where (rank 0 keeps the table).
 * The first call also fixes the common timeline's zero: the run's start. */
void sweep_align_clocks(struct run_ctx *r)
{
    collect_clock_sync(&r->comm, &r->clock);
    if (r->run_start0_ns == 0) {
        r->run_start0_ns = r->comm.rank == 0 ? clock_now_ns() : 0;
        collect_bcast_int64(&r->comm, &r->run_start0_ns);
    }
    r->origin_ns = clocksync_from_rank0(&r->clock, r->run_start0_ns);
    r->synced_at_ns = clock_now_ns();
    r->me.clock_offset_ns = r->clock.offset_ns;
    r->me.clock_uncertainty_ns = r->clock.uncertainty_ns;
    collect_rank_info(&r->comm, &r->me, r->ranks);
}

/* Rank 0 picks an instant a little ahead, every rank waits for it on its own aligned clock;
 * returns that instant on this rank's clock. */
static int64_t synchronised_start(struct run_ctx *r)
{
    int64_t start0 = r->comm.rank == 0 ? clock_now_ns() + START_LEAD_NS : 0;
    collect_bcast_int64(&r->comm, &start0);
    int64_t start = clocksync_from_rank0(&r->clock, start0);
    clock_wait_until(start);
    return start;
}

/* Rank 0 writes everything the level produced besides its rows. */
static int write_level_extras(struct run_ctx *r, const uint64_t *tokens, const uint64_t *ok,
                              const uint64_t *err, size_t n_bins, char *msg, size_t len)
{
    const struct ts_level_stats *st = r->level.stats;
    const struct ts_level_extremes *x = &r->level.extremes;
    /* The four latencies always; the others (send lag, latencies from the schedule, the
     * client's own timing error against a stamping server) when they have values. */
    const struct {
        const char *name;
        const struct ts_hist *h;
        const struct ts_hist_extremes *x;
        int always;
    } hists[] = {
        {"ttft", &st->ttft, &x->ttft, 1},
        {"itl", &st->itl, &x->itl, 1},
        {"tpot", &st->tpot, &x->tpot, 1},
        {"e2e", &st->e2e, &x->e2e, 1},
        {"send_lag", &st->lag, &x->lag, 0},
        {"ttft_sched", &st->ttft_sched, &x->ttft_sched, 0},
        {"e2e_sched", &st->e2e_sched, &x->e2e_sched, 0},
        {"stamp_delay", &st->stamp_delay, &x->stamp_delay, 0},
        {"ttft_error", &st->ttft_error, &x->ttft_error, 0},
        {"itl_error", &st->itl_error, &x->itl_error, 0},
    };
    if (h5out_level_timeseries(r->h5, (double)TS_TIMELINE_SERIES_NS / 1e9, tokens, ok, err, n_bins,
                               msg, len) != 0)
        return TS_EXIT_RUNTIME;
    for (size_t i = 0; i < sizeof hists / sizeof hists[0]; i++)
        if ((hists[i].always || hists[i].h->count > 0) &&
            h5out_level_hist(r->h5, hists[i].name, hists[i].h, hists[i].x, msg, len) != 0)
            return TS_EXIT_RUNTIME;
    if (h5out_level_clock(r->h5, r->ranks, (size_t)r->comm.size, msg, len) != 0)
        return TS_EXIT_RUNTIME;
    return 0;
}

/* What a level is: C closed-loop streams, or an open-loop rate (requests/s over all ranks). */
struct level_key {
    int64_t concurrency; /* closed loop: C; open loop: the concurrency cap over all ranks */
    double rate;         /* open loop; 0 for closed loop */
    size_t index;        /* position in the sweep, for the arrival seed */
};

static void level_name(const struct level_key *k, char *buf, size_t len)
{
    if (k->rate > 0)
        snprintf(buf, len, "rate_%g", k->rate);
    else
        snprintf(buf, len, "level_%lld", (long long)k->concurrency);
}

/* Mixes the user's seed with the rank and the level so that every rank and level draws its
 * own arrivals, and the same command draws the same ones again. */
static uint64_t arrival_seed(uint64_t seed, int rank, size_t level_index)
{
    uint64_t x = seed ^ ((uint64_t)rank * 0x9E3779B97F4A7C15ULL) ^
                 ((uint64_t)level_index * 0xC2B2AE3D27D4EB4FULL);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    return x ^ (x >> 31);
}

static void make_plan(const struct run_ctx *r, const struct level_key *k,
                      struct ts_level_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    plan->concurrency = k->concurrency;
    plan->rank = r->comm.rank;
    plan->nranks = r->comm.size;
    plan->prompt_count = r->prompts.count;
    plan->duration_ns = r->opt.duration_ns;
    plan->slo_ttft_ns = r->opt.slo_ttft_ns;
    plan->slo_tpot_ns = r->opt.slo_tpot_ns;
    plan->record_events = r->opt.record_tokens;
    /* Closed loop: this rank's streams. Open loop: its slots, its share of the rate and of
     * the request count. */
    level_share(k->concurrency, r->comm.rank, r->comm.size, &plan->first_stream,
                &plan->local_streams);
    if (k->rate <= 0) {
        plan->requests_per_stream = r->opt.requests_per_stream;
        plan->warmup = r->opt.warmup;
        return;
    }
    plan->open_loop = 1;
    plan->rate_per_s = k->rate / r->comm.size;
    int64_t first;
    if (r->opt.requests > 0)
        level_share(r->opt.requests, r->comm.rank, r->comm.size, &first, &plan->open_requests);
    if (r->opt.requests > 0 && plan->open_requests == 0)
        plan->rate_per_s = 0; /* fewer requests than ranks: this rank sends none */
    plan->arrival = r->opt.arrival;
    plan->burstiness = r->opt.burstiness;
    plan->seed = arrival_seed(r->opt.seed, r->comm.rank, k->index);
}

/* Whether this rank should stop preparing a level: its own signal, or one the reductions
 * brought from another rank. */
static int stop_wanted(const struct run_ctx *r)
{
    return r->stop.agreed || interrupt_status() != 0;
}

/* The tick while a level prepares (warm-up, preconnect): the reductions, and a stop at once
 * when one is wanted, since nothing is measured yet. Which ranks stopped does not matter:
 * whether the level begins is decided by run_progress_finish, the same on every rank. */
static void prepare_tick(void *ctx, int64_t now_ns)
{
    struct run_ctx *r = ctx;
    run_progress_tick(r, now_ns);
    if (stop_wanted(r))
        http_stop(r->http, "interrupted");
}

/* The tick while a level runs: the reductions, and once a sum has said that some rank was
 * signalled, the stop. Nothing more is sent; what is in flight may finish within --grace,
 * and is then cancelled, so that the loop ends and the level's collectives follow. A rank's
 * own signal is not acted on here but only once the others know of it: every rank stops on
 * the same sum. */
static void level_tick(void *ctx, int64_t now_ns)
{
    struct run_ctx *r = ctx;
    run_progress_tick(r, now_ns);
    if (!r->stop.agreed || r->stop.cancelled)
        return;
    if (r->stop.since_ns == 0) {
        r->stop.since_ns = now_ns;
        level_stop(&r->level);
    }
    if (now_ns - r->stop.since_ns >= r->opt.grace_ns) {
        r->stop.cancelled = 1;
        http_stop(r->http, "cancelled: the run was interrupted and --grace ran out");
    }
}

/* Warm-up, preconnect, the synchronised start and the measured run of one level on this
 * rank. Returns 0 or an exit status (msg filled); *start_ns is the level's start. *skipped is
 * set, the same on every rank, when a signal came before the level began: then it does not. */
static int measure_level(struct run_ctx *r, const struct ts_level_plan *plan, int64_t *start_ns,
                         int *skipped, char *msg, size_t len)
{
    int status = 0;
    struct ts_http_tick tick = {r, prepare_tick, TS_PROGRESS_TICK_NS};
    run_progress_begin(r, RUN_PHASE_PREPARE, clock_now_ns());
    if (plan->warmup > 0 && plan->local_streams > 0 && !stop_wanted(r))
        status = run_warmup(r, plan, &tick, msg, len);
    /* Open loop: connections for about one second of arrivals, the slots the rate needs. */
    int64_t connections = plan->local_streams;
    if (plan->open_loop && connections > (int64_t)plan->rate_per_s + 1)
        connections = (int64_t)plan->rate_per_s + 1;
    if (status == 0 && !r->opt.no_preconnect && connections > 0 && !stop_wanted(r)) {
        int64_t began = clock_now_ns();
        int64_t answered = http_preconnect(r->http, connections, r->probe_url, &tick, msg, len);
        if (answered < 0)
            status = TS_EXIT_RUNTIME;
        else
            log_info("preconnect: %lld of %lld probes answered in %.3f s (--connect-rate %lld/s)",
                     (long long)answered, (long long)connections,
                     (double)(clock_now_ns() - began) / 1e9, (long long)r->opt.connect_rate);
    }
    /* Returns once every rank has prepared (the barrier before the start), with the same
     * r->stop.agreed everywhere. */
    run_progress_finish(r);
    *skipped = r->stop.agreed;
    if (*skipped)
        return status;
    *start_ns = synchronised_start(r);
    if (status == 0 && level_begin(&r->level, plan, r->origin_ns, *start_ns) != 0) {
        snprintf(msg, len, "out of memory for a level of %lld streams",
                 (long long)plan->local_streams);
        return TS_EXIT_RUNTIME;
    }
    /* Open-loop arrivals are random, so the first of them says nothing of how well the ranks
     * started together: the skew is taken from the moment each rank began the level. */
    if (status == 0 && plan->open_loop)
        level_mark_start(&r->level, clock_now_ns());
    if (status != 0)
        return status;
    run_progress_begin(r, RUN_PHASE_MEASURE, *start_ns);
    tick.fn = level_tick;
    int rc;
    if (plan->open_loop) {
        struct ts_http_open_driver drv = {r, open_drv_next_due, open_drv_take, level_drv_done,
                                          &tick};
        rc = http_run_open(r->http, plan->local_streams, &drv, msg, len);
    } else {
        struct ts_http_driver drv = {r, level_drv_next, level_drv_done, &tick};
        rc = http_run(r->http, plan->local_streams, &drv, msg, len);
    }
    return rc != 0 ? TS_EXIT_RUNTIME : 0;
}

static double cpu_seconds(const struct rusage *u)
{
    return (double)(u->ru_utime.tv_sec + u->ru_stime.tv_sec) +
           (double)(u->ru_utime.tv_usec + u->ru_stime.tv_usec) / 1e6;
}

/* A level shorter than this (every request failed at once, say) says nothing of the client's
 * capacity, however busy its loop was for those milliseconds. */
#define CLIENT_LOAD_MIN_WALL_S 0.1

/* Rank 0: notes under the level's row when a rank's own loop may have been the limit. */
static void report_client_load(struct run_ctx *r, const struct ts_rank_load *loads,
                               double wall_s)
{
    if (wall_s < CLIENT_LOAD_MIN_WALL_S)
        return;
    int busiest = 0, laggiest = 0;
    for (int i = 1; i < r->comm.size; i++) {
        busiest = loads[i].busy_fraction > loads[busiest].busy_fraction ? i : busiest;
        laggiest = loads[i].lag_p99_ms > loads[laggiest].lag_p99_ms ? i : laggiest;
    }
    if (loads[busiest].busy_fraction > 0.5)
        report_note(stdout,
                    "rank %d's event loop was busy %.0f%% of the level: the figures may "
                    "describe the client; add ranks",
                    busiest, 100 * loads[busiest].busy_fraction);
    if (loads[laggiest].lag_p99_ms > 1.0)
        report_note(stdout, "rank %d sent late: p99 send lag %.2f ms; add ranks", laggiest,
                    loads[laggiest].lag_p99_ms);
}

/* Rank 0: the line under an interrupted level's row. cut_off counts streams in closed loop,
 * ranks whose arrivals were not all sent in open loop. */
static void report_interrupted(struct run_ctx *r, const struct ts_counters *c, int open_loop)
{
    uint64_t cancelled = c->err_by_class[TS_ERR_CANCELLED];
    report_note(stdout,
                "interrupted: %llu %s%s stopped with %s left, %llu request%s still in flight "
                "after the %.1f s grace cancelled (counted in Err as cancelled); the level is "
                "marked incomplete",
                (unsigned long long)c->cut_off, open_loop ? "rank" : "stream",
                c->cut_off == 1 ? "" : "s", open_loop ? "arrivals" : "requests",
                (unsigned long long)cancelled, cancelled == 1 ? "" : "s",
                (double)r->opt.grace_ns / 1e9);
}

/* Rank 0: writes the level's row everywhere it goes (stdout, the results file, --json,
 * --csv). Returns 0, or TS_EXIT_OUTPUT once a write has failed: its one line is printed here,
 * naming the file. */
static int write_level(struct run_ctx *r, const struct level_key *key, const char *name,
                       int complete, double steady_tokens, int64_t start_ns, uint64_t *tokens,
                       uint64_t *ok, uint64_t *err, size_t n_bins)
{
    char msg[MSG_LEN] = "";
    struct ts_level_summary *s = &r->summaries[r->n_summaries++];
    stats_summarize(r->level.stats, &r->level.extremes, key->concurrency, s);
    stats_set_steady(s, steady_tokens);
    s->rate = key->rate;
    s->start_s = (double)level_common_ns(&r->level, start_ns) / 1e9;
    report_level(stdout, s, r->skew_limit_s);
    report_client_load(r, r->loads, s->wall_s);
    const struct ts_counters *c = &r->level.stats->c;
    if (c->cut_off > 0 || c->err_by_class[TS_ERR_CANCELLED] > 0)
        report_interrupted(r, c, key->rate > 0);
    /* Each step is skipped once one has failed (h5out refuses): the first failure is said. */
    if (tokens)
        write_level_extras(r, tokens, ok, err, n_bins, msg, sizeof msg);
    h5out_level_loads(r->h5, r->loads, (size_t)r->comm.size, msg, sizeof msg);
    if (run_output_level(r, name, complete, msg) == 0)
        return 0;
    fprintf(stderr, "tokstorm: %s; the run stops after this level (%s)\n", msg,
            h5out_failed(r->h5) ? "the levels before it are intact in the file"
                                : "the results file is complete up to here");
    fflush(stderr);
    return TS_EXIT_OUTPUT;
}

static int run_level(struct run_ctx *r, const struct level_key *key)
{
    char msg[MSG_LEN] = "", name[64];
    level_name(key, name, sizeof name);
    struct ts_level_plan plan;
    make_plan(r, key, &plan);

    int64_t resync = r->comm.rank == 0 && clock_now_ns() - r->synced_at_ns > RESYNC_AFTER_NS;
    collect_bcast_int64(&r->comm, &resync);
    if (resync)
        sweep_align_clocks(r);
    int64_t start_ns = 0;
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    run_progress_level(r, &plan, key->rate);
    r->stop.since_ns = 0;
    r->stop.cancelled = 0;
    int skipped = 0;
    int status = measure_level(r, &plan, &start_ns, &skipped, msg, sizeof msg);
    /* A signal came before the level began (every rank knows): nothing to reduce or write. */
    if (skipped)
        return collect_agree(&r->comm, status, msg);
    getrusage(RUSAGE_SELF, &after);
    /* Whatever happened in the loop: every rank finishes the progress reductions before the
     * collectives below. */
    run_progress_finish(r);
    int64_t no_port = http_take_port_exhaustion(r->http);
    if (no_port > 0)
        log_warn("%s: %lld connections failed for lack of local ports (EADDRNOTAVAIL): use "
                 "--bind with more addresses or more client hosts",
                 name, (long long)no_port);
    if (r->level.rows_lost)
        log_warn("%s: %llu request records lost (out of memory)", name,
                 (unsigned long long)r->level.rows_lost);

    /* How hard this rank's own loop worked: read before the reduction sums the histograms. */
    struct ts_rank_load load = {
        .rank = r->comm.rank,
        .busy_fraction = http_busy_fraction(r->http),
        .lag_p99_ms =
            (double)hist_percentile_ns(&r->level.stats->lag, &r->level.extremes.lag, 0.99) / 1e6,
        .cpu_s = cpu_seconds(&after) - cpu_seconds(&before),
        .max_rss_mib = (double)after.ru_maxrss / 1024.0};

    /* Every rank takes part in every collective below whatever happened above, so nobody
     * waits alone; the verdict is agreed on at the end. Ranks done early wait asleep. */
    collect_barrier(&r->comm);
    collect_level(&r->comm, r->level.stats, &r->level.extremes);
    collect_gather(&r->comm, &load, sizeof load, r->loads);
    int64_t from, to;
    double steady_tokens = 0;
    if (stats_steady_window(&r->level.extremes, &from, &to)) {
        int64_t level_zero = level_common_ns(&r->level, start_ns);
        steady_tokens =
            timeline_tokens_between(&r->level.timeline, from - level_zero, to - level_zero);
    }
    steady_tokens = collect_sum_double(&r->comm, steady_tokens);
    uint64_t *tokens = NULL, *ok = NULL, *err = NULL;
    size_t n_bins = 0;
    if (collect_timeseries(&r->comm, &r->level.timeline, &tokens, &ok, &err, &n_bins) != 0) {
        snprintf(msg, sizeof msg, "%s: out of memory for the time series", name);
        status = TS_EXIT_RUNTIME;
    }
    /* Rank 0 writes the rows as they arrive. A write that fails is kept by h5out and said
     * once, below; the gathers go on regardless, so that no rank waits alone. */
    char h5msg[MSG_LEN];
    if (r->comm.rank == 0)
        h5out_level_begin(r->h5, name, r->opt.record_tokens, h5msg, sizeof h5msg);
    int writing = r->comm.rank == 0 && !h5out_failed(r->h5);
    collect_rows(&r->comm, &r->level.rows, writing ? rows_to_h5 : NULL, r);
    struct ts_events_sink events = {r, events_begin_h5, events_put_h5};
    if (r->opt.record_tokens &&
        collect_events(&r->comm, &r->level.rows, &r->level.events,
                       writing && !h5out_failed(r->h5) ? &events : NULL, 0) != 0 &&
        !h5out_failed(r->h5)) {
        snprintf(msg, sizeof msg, "%s: the event times do not match the rows", name);
        status = TS_EXIT_RUNTIME;
    }
    /* Whether the level ran to the end on every rank is agreed before it is written down. */
    int level_status = collect_agree(&r->comm, status, msg);
    status = 0;
    if (r->comm.rank == 0) {
        /* Complete: no rank failed, and no stop cut a stream short or cancelled a request. */
        const struct ts_counters *c = &r->level.stats->c;
        int complete =
            level_status == 0 && c->cut_off == 0 && c->err_by_class[TS_ERR_CANCELLED] == 0;
        status =
            write_level(r, key, name, complete, steady_tokens, start_ns, tokens, ok, err, n_bins);
    }
    free(tokens);
    free(ok);
    free(err);
    /* A signal that came while the level was being reduced or written stops the sweep here,
     * before the next level prepares anything. */
    status = collect_agree(&r->comm, status != 0 ? status : interrupt_status(), "");
    return level_status ? level_status : status;
}

/* The levels given, or with --until-saturated the ladder from the first one, doubling until
 * rank 0 sees the stopping rule met (and tells everyone). Stops after the level during which
 * (or before which) every rank learnt of a signal. */
int sweep_run(struct run_ctx *r)
{
    size_t given = r->opt.rates ? r->opt.n_rates : r->opt.n_levels;
    struct ts_saturation_rules rules = {
        .max_error_rate = r->opt.max_error_rate,
        .slo_ttft_ns = r->opt.slo_ttft_ns,
        .slo_tpot_ns = r->opt.slo_tpot_ns,
        .max_level = (double)r->opt.max_level,
    };
    int status = 0;
    enum ts_ladder_verdict verdict = TS_LADDER_CONTINUE;
    struct level_key key = {0};
    for (size_t i = 0; status == 0 && !r->stop.agreed; i++) {
        if (!r->opt.until_saturated && i == given)
            break;
        key.index = i;
        if (r->opt.rates) {
            key.rate = r->opt.until_saturated && i > 0 ? 2 * key.rate : r->opt.rates[i];
            key.concurrency = r->open_cap;
        } else {
            key.concurrency =
                r->opt.until_saturated && i > 0 ? 2 * key.concurrency : r->opt.levels[i];
        }
        status = run_level(r, &key);
        if (status != 0 || r->stop.agreed || !r->opt.until_saturated)
            continue;
        int64_t v = 0;
        if (r->comm.rank == 0)
            v = saturation_next(r->summaries, r->n_summaries, &rules);
        collect_bcast_int64(&r->comm, &v);
        verdict = (enum ts_ladder_verdict)v;
        if (verdict != TS_LADDER_CONTINUE)
            break;
    }
    int interrupted = r->stop.agreed || status == TS_EXIT_SIGINT || status == TS_EXIT_SIGTERM;
    const char *why = interrupted ? "the run was interrupted" : saturation_verdict_text(verdict);
    if (r->comm.rank == 0 && r->opt.until_saturated && r->n_summaries > 0) {
        struct ts_saturation_point p;
        saturation_point(r->summaries, r->n_summaries, &rules, &p);
        report_saturation(stdout, &p, r->opt.rates != NULL, why);
        r->saturation = p; /* for --json */
        r->stop_reason = why;
        char msg[MSG_LEN];
        /* After a failed write nothing more goes in; that failure was said already. */
        if (!h5out_failed(r->h5) && h5out_write_saturation(r->h5, &p, why, msg, sizeof msg) != 0) {
            fprintf(stderr, "tokstorm: %s\n", msg);
            if (status == 0)
                status = TS_EXIT_OUTPUT;
        }
    }
    return status;
}
