/* run.c: the sweep. Parses and checks input on every rank, agrees on failures with one
 * collective, sends the preflight request, then for each level: barrier, the rank's event
 * loop, reduction and gather to rank 0, one table row and one flushed HDF5 group. The only
 * file that sees every module. */
#include "tokstorm/run.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tokstorm/api.h"
#include "tokstorm/clock.h"
#include "tokstorm/clocksync.h"
#include "tokstorm/collect.h"
#include "tokstorm/demo.h"
#include "tokstorm/h5out.h"
#include "tokstorm/http.h"
#include "tokstorm/level.h"
#include "tokstorm/log.h"
#include "tokstorm/options.h"
#include "tokstorm/prompts.h"
#include "tokstorm/report.h"
#include "tokstorm/units.h"

#define MSG_LEN           512
#define RESYNC_AFTER_NS   (60 * TS_NS_PER_S)  /* realign clocks before a level after this */
#define START_LEAD_NS     (50 * TS_NS_PER_MS) /* a level starts this long after rank 0 says so */
#define SKEW_ONE_HOST_S   200e-6              /* start skew worth a warning, ranks on one host */
#define SKEW_MANY_HOSTS_S 1e-3                /* ... and across hosts */

/* What every rank holds for the sweep. */
struct run_ctx {
    struct ts_comm comm;
    struct ts_options opt;
    struct ts_prompts prompts;
    char *prompts_path; /* resolved */
    char *url;          /* server base URL (the demo mock's under --demo) */
    char *endpoint;     /* url + the API path */
    char **bodies;      /* one request body per prompt */
    size_t *body_lens;
    struct ts_demo demo; /* rank 0 under --demo */
    struct ts_h5out *h5; /* rank 0 only */
    struct ts_http *http;
    struct ts_level level;
    struct ts_level_summary *summaries; /* rank 0: one per finished level */
    size_t n_summaries;
    char start_utc[32];
    char *probe_url;              /* GET for preconnecting: the server's /v1/models */
    struct ts_clock_offset clock; /* this rank's clock - rank 0's */
    int64_t run_start0_ns;        /* the common timeline's zero, on rank 0's clock */
    int64_t origin_ns;            /* the same instant on this rank's clock */
    int64_t synced_at_ns;         /* rank 0's clock at the last alignment */
    struct ts_rank_info me;       /* this rank's host, address and offset */
    struct ts_rank_info *ranks;   /* rank 0: everyone's */
    double skew_limit_s;          /* rank 0: when the start skew deserves a line */
};

/* The bundled prompts: beside the build tree's parent (build/../prompts), else where the
 * source tree was when this binary was built. */
static char *default_prompts_path(void)
{
    char self[PATH_MAX], path[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            snprintf(path, sizeof path, "%s/../prompts/coding.jsonl", self);
            if (access(path, R_OK) == 0)
                return strdup(path);
        }
    }
    return strdup(TOKSTORM_SOURCE_DIR "/prompts/coding.jsonl");
}

static int load_prompts(struct run_ctx *r, char *msg)
{
    r->prompts_path = r->opt.prompts_path ? strdup(r->opt.prompts_path) : default_prompts_path();
    if (r->prompts_path == NULL) {
        snprintf(msg, MSG_LEN, "out of memory");
        return TS_EXIT_RUNTIME;
    }
    if (prompts_load(&r->prompts, r->prompts_path, msg, MSG_LEN) != 0)
        return TS_EXIT_USAGE;
    return 0;
}

static int build_bodies(struct run_ctx *r, char *msg)
{
    struct ts_api_params p = {
        .model = r->opt.model,
        .max_tokens = r->opt.max_tokens,
        .temperature = r->opt.temperature,
        .ignore_eos = r->opt.ignore_eos,
        .stream = 1,
    };
    size_t n = r->prompts.count;
    r->bodies = calloc(n, sizeof *r->bodies);
    r->body_lens = calloc(n, sizeof *r->body_lens);
    if (!r->bodies || !r->body_lens)
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        r->bodies[i] = api_build_body(r->opt.api, &p, &r->prompts.items[i]);
        if (r->bodies[i] == NULL)
            goto nomem;
        r->body_lens[i] = strlen(r->bodies[i]);
    }
    return 0;
nomem:
    snprintf(msg, MSG_LEN, "out of memory building request bodies");
    return TS_EXIT_RUNTIME;
}

/* Each stream holds one connection: make sure the largest level fits in this rank's file
 * descriptors before any load is sent, rather than failing half-way through it. */
static int check_fd_budget(int64_t max_local, char *msg)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    int64_t need = max_local + 64;
    if (rl.rlim_cur != RLIM_INFINITY && (int64_t)rl.rlim_cur < need) {
        snprintf(msg, MSG_LEN,
                 "--levels: %lld streams per rank need about %lld file descriptors, but the "
                 "limit is %lld: use more ranks or raise ulimit -n",
                 (long long)max_local, (long long)need, (long long)rl.rlim_cur);
        return TS_EXIT_USAGE;
    }
    return 0;
}

/* ---- preflight: one short request from rank 0 ---- */

struct preflight {
    const char *body;
    size_t body_len;
    int sent;
    struct ts_row row;
    char message[200];
};

static int preflight_next(void *ctx, int64_t s, int64_t now_ns, const char **body, size_t *len)
{
    (void)s;
    (void)now_ns;
    struct preflight *p = ctx;
    if (p->sent)
        return 0;
    p->sent = 1;
    *body = p->body;
    *len = p->body_len;
    return 1;
}

static void preflight_done(void *ctx, int64_t s, struct ts_xfer *x, enum ts_transport how,
                           const char *detail, int64_t now_ns)
{
    (void)s;
    struct preflight *p = ctx;
    xfer_finish(x, how, detail, now_ns, x->start_ns, &p->row);
    snprintf(p->message, sizeof p->message, "%s", x->message);
}

static int preflight(struct run_ctx *r, char *msg)
{
    struct ts_api_params params = {.model = r->opt.model, .max_tokens = 1, .stream = 1};
    char *body = api_build_body(r->opt.api, &params, &r->prompts.items[0]);
    /* Every rank must hear the verdict within 10 s, MPI start-up and tear-down included. */
    const int64_t cap_ns = 5 * TS_NS_PER_S;
    struct ts_http_config cfg = {
        .url = r->endpoint,
        .api = r->opt.api,
        .timeout_ns = r->opt.timeout_ns < cap_ns ? r->opt.timeout_ns : cap_ns,
        .connect_timeout_ns =
            r->opt.connect_timeout_ns < cap_ns / 2 ? r->opt.connect_timeout_ns : cap_ns / 2,
        .max_event_bytes = r->opt.max_event_bytes,
        .max_streams = 1,
        .debug = r->opt.verbose >= 2,
    };
    struct preflight p = {.body = body, .body_len = body ? strlen(body) : 0};
    struct ts_http_driver drv = {&p, preflight_next, preflight_done};
    struct ts_http *h = NULL;
    int rc = body ? http_new(&h, &cfg, msg, MSG_LEN) : TS_HTTP_ERR_INIT;
    if (rc == 0)
        rc = http_run(h, 1, &drv, msg, MSG_LEN);
    http_free(h);
    free(body);
    if (rc != 0)
        return TS_EXIT_RUNTIME;
    if (p.row.error_class == TS_ERR_NONE)
        return 0;
    if (p.row.http_status != 0)
        snprintf(msg, MSG_LEN, "preflight request to %s failed: HTTP %d (%s): %s", r->endpoint,
                 p.row.http_status, stats_err_class_name(p.row.error_class), p.message);
    else
        snprintf(msg, MSG_LEN, "preflight request to %s failed (%s): %s", r->endpoint,
                 stats_err_class_name(p.row.error_class), p.message);
    return TS_EXIT_PREFLIGHT;
}

/* ---- one level ---- */

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

static int run_warmup(struct run_ctx *r, const struct ts_level_plan *plan, char *msg, size_t len)
{
    struct warmup w = {r, plan, calloc((size_t)plan->local_streams + 1, sizeof *w.sent)};
    if (w.sent == NULL) {
        snprintf(msg, len, "out of memory for the warm-up");
        return TS_EXIT_RUNTIME;
    }
    struct ts_http_driver drv = {&w, warmup_next, warmup_done};
    int rc = http_run(r->http, plan->local_streams, &drv, msg, len) != 0 ? TS_EXIT_RUNTIME : 0;
    free(w.sent);
    return rc;
}

static int rows_to_h5(void *ctx, const struct ts_row *rows, size_t n)
{
    struct run_ctx *r = ctx;
    char msg[MSG_LEN];
    if (h5out_level_rows(r->h5, rows, n, msg, sizeof msg) != 0) {
        log_error("%s", msg);
        return -1;
    }
    return 0;
}

/* Aligns every rank's clock to rank 0's and gathers who is where (rank 0 keeps the table).
 * The first call also fixes the common timeline's zero: the run's start. */
static void align_clocks(struct run_ctx *r)
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
    if (h5out_level_timeseries(r->h5, (double)TS_TIMELINE_SERIES_NS / 1e9, tokens, ok, err, n_bins,
                               msg, len) != 0 ||
        h5out_level_hist(r->h5, "ttft", &st->ttft, &x->ttft, msg, len) != 0 ||
        h5out_level_hist(r->h5, "itl", &st->itl, &x->itl, msg, len) != 0 ||
        h5out_level_hist(r->h5, "tpot", &st->tpot, &x->tpot, msg, len) != 0 ||
        h5out_level_hist(r->h5, "e2e", &st->e2e, &x->e2e, msg, len) != 0 ||
        h5out_level_clock(r->h5, r->ranks, (size_t)r->comm.size, msg, len) != 0)
        return TS_EXIT_RUNTIME;
    return 0;
}

static int run_level(struct run_ctx *r, int64_t concurrency)
{
    char msg[MSG_LEN] = "";
    struct ts_level_plan plan = {
        .concurrency = concurrency,
        .rank = r->comm.rank,
        .requests_per_stream = r->opt.requests_per_stream,
        .duration_ns = r->opt.duration_ns,
        .warmup = r->opt.warmup,
        .prompt_count = r->prompts.count,
    };
    level_share(concurrency, r->comm.rank, r->comm.size, &plan.first_stream, &plan.local_streams);

    int64_t resync = r->comm.rank == 0 && clock_now_ns() - r->synced_at_ns > RESYNC_AFTER_NS;
    collect_bcast_int64(&r->comm, &resync);
    if (resync)
        align_clocks(r);
    int status = 0;
    if (plan.warmup > 0 && plan.local_streams > 0)
        status = run_warmup(r, &plan, msg, sizeof msg);
    if (status == 0 && !r->opt.no_preconnect && plan.local_streams > 0) {
        int64_t answered =
            http_preconnect(r->http, plan.local_streams, r->probe_url, msg, sizeof msg);
        if (answered < 0)
            status = TS_EXIT_RUNTIME;
        else if (answered < plan.local_streams)
            log_info("level %lld: %lld of %lld preconnect probes answered", (long long)concurrency,
                     (long long)answered, (long long)plan.local_streams);
    }

    collect_barrier(&r->comm);
    int64_t start_ns = synchronised_start(r);
    if (status == 0 && level_begin(&r->level, &plan, r->origin_ns, start_ns) != 0) {
        snprintf(msg, sizeof msg, "out of memory for level %lld", (long long)concurrency);
        status = TS_EXIT_RUNTIME;
    } else if (status == 0) {
        struct ts_http_driver drv = {r, level_drv_next, level_drv_done};
        if (http_run(r->http, plan.local_streams, &drv, msg, sizeof msg) != 0)
            status = TS_EXIT_RUNTIME;
    }
    if (r->level.rows_lost)
        log_warn("level %lld: %llu request records lost (out of memory)", (long long)concurrency,
                 (unsigned long long)r->level.rows_lost);

    /* Every rank takes part in every collective below whatever happened above, so nobody
     * waits alone; the verdict is agreed on at the end. Ranks done early wait asleep. */
    collect_barrier(&r->comm);
    collect_level(&r->comm, r->level.stats, &r->level.extremes);
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
        snprintf(msg, sizeof msg, "out of memory for level %lld's time series",
                 (long long)concurrency);
        status = TS_EXIT_RUNTIME;
    }
    int h5_ok = 1;
    if (r->comm.rank == 0 && h5out_level_begin(r->h5, concurrency, msg, sizeof msg) != 0) {
        h5_ok = 0;
        status = TS_EXIT_RUNTIME;
    }
    if (collect_rows(&r->comm, &r->level.rows, h5_ok ? rows_to_h5 : NULL, r) != 0) {
        snprintf(msg, sizeof msg, "cannot write level %lld's requests to %s",
                 (long long)concurrency, r->opt.out_path);
        status = TS_EXIT_RUNTIME;
    }
    /* Whether the level ran to the end on every rank is agreed before it is written down. */
    int level_status = collect_agree(&r->comm, status, msg);
    status = 0;
    msg[0] = '\0';
    if (r->comm.rank == 0 && h5_ok) {
        struct ts_level_summary *s = &r->summaries[r->n_summaries];
        stats_summarize(r->level.stats, &r->level.extremes, concurrency, s);
        stats_set_steady(s, steady_tokens);
        s->start_s = (double)level_common_ns(&r->level, start_ns) / 1e9;
        report_level(stdout, s, r->skew_limit_s);
        if (tokens)
            status = write_level_extras(r, tokens, ok, err, n_bins, msg, sizeof msg);
        if (h5out_level_end(r->h5, s, level_status == 0, msg, sizeof msg) != 0)
            status = TS_EXIT_RUNTIME;
        r->n_summaries++;
    }
    free(tokens);
    free(ok);
    free(err);
    status = collect_agree(&r->comm, status, msg);
    return level_status ? level_status : status;
}

/* ---- set-up and the sweep ---- */

static int setup(struct run_ctx *r, int argc, char **argv)
{
    char msg[MSG_LEN] = "";
    int rank = r->comm.rank;

    int rc = options_parse(&r->opt, argc, argv, msg, sizeof msg);
    if (rc == TS_OPT_HELP || rc == TS_OPT_VERSION) {
        if (rank == 0) {
            if (rc == TS_OPT_HELP)
                options_print_help(stdout);
            else
                printf("tokstorm %s\n", TOKSTORM_VERSION);
        }
        return -1; /* done, successfully */
    }
    if (collect_agree(&r->comm, rc == 0 ? 0 : TS_EXIT_USAGE, msg) != 0)
        return TS_EXIT_USAGE;
    log_setup(rank, r->opt.verbose >= 2 ? TS_LOG_DEBUG
                    : r->opt.verbose    ? TS_LOG_INFO
                                        : TS_LOG_WARN);

    msg[0] = '\0';
    rc = load_prompts(r, msg);
    if ((rc = collect_agree(&r->comm, rc, msg)) != 0)
        return rc;

    int64_t max_c = 0;
    for (size_t i = 0; i < r->opt.n_levels; i++)
        max_c = r->opt.levels[i] > max_c ? r->opt.levels[i] : max_c;
    int64_t max_local = (max_c + r->comm.size - 1) / r->comm.size;
    msg[0] = '\0';
    rc = check_fd_budget(max_local, msg);
    if ((rc = collect_agree(&r->comm, rc, msg)) != 0)
        return rc;

    /* The results file can be written before the first request is sent; it is created only
     * once the server has passed the preflight, so a failed start leaves no empty file. */
    msg[0] = '\0';
    rc = 0;
    if (rank == 0 && h5out_probe(r->opt.out_path, r->opt.force, msg, sizeof msg) != 0)
        rc = TS_EXIT_USAGE;
    if ((rc = collect_agree(&r->comm, rc, msg)) != 0)
        return rc;
    if (r->opt.demo && !collect_single_node(&r->comm)) {
        snprintf(msg, sizeof msg,
                 "--demo: the mock listens on rank 0's loopback; run every "
                 "rank on one host (or start tokstorm-mock and give --url)");
        return collect_agree(&r->comm, TS_EXIT_USAGE, rank == 0 ? msg : "");
    }

    msg[0] = '\0';
    rc = 0;
    if (r->opt.demo && rank == 0) {
        if (demo_start(&r->demo, msg, sizeof msg) == 0)
            r->url = strdup(r->demo.url);
        else
            rc = TS_EXIT_RUNTIME;
    } else if (!r->opt.demo) {
        r->url = strdup(r->opt.url);
    }
    if ((rc = collect_agree(&r->comm, rc, msg)) != 0)
        return rc;
    if (r->opt.demo)
        collect_bcast_string(&r->comm, &r->url);
    size_t n = strlen(r->url) + strlen(api_path(r->opt.api)) + 1;
    r->endpoint = malloc(n);
    if (r->endpoint)
        snprintf(r->endpoint, n, "%s%s", r->url, api_path(r->opt.api));
    n = strlen(r->url) + sizeof "/v1/models";
    r->probe_url = malloc(n);
    if (r->probe_url)
        snprintf(r->probe_url, n, "%s/v1/models", r->url);

    msg[0] = '\0';
    rc = r->endpoint && r->probe_url ? build_bodies(r, msg) : TS_EXIT_RUNTIME;
    if (rc == 0 && level_init(&r->level) != 0) {
        snprintf(msg, sizeof msg, "out of memory");
        rc = TS_EXIT_RUNTIME;
    }
    if (rc == 0) {
        struct ts_http_config cfg = {
            .url = r->endpoint,
            .api = r->opt.api,
            .timeout_ns = r->opt.timeout_ns,
            .connect_timeout_ns = r->opt.connect_timeout_ns,
            .max_event_bytes = r->opt.max_event_bytes,
            .max_streams = max_local,
            .debug = r->opt.verbose >= 2,
        };
        if (http_new(&r->http, &cfg, msg, sizeof msg) != 0)
            rc = TS_EXIT_RUNTIME;
    }
    if (rc == 0 && rank == 0) {
        r->summaries = calloc(r->opt.n_levels, sizeof *r->summaries);
        r->ranks = calloc((size_t)r->comm.size, sizeof *r->ranks);
        if (r->summaries == NULL || r->ranks == NULL)
            rc = TS_EXIT_RUNTIME;
    }
    if ((rc = collect_agree(&r->comm, rc, msg)) != 0)
        return rc;

    msg[0] = '\0';
    rc = rank == 0 ? preflight(r, msg) : 0;
    if ((rc = collect_agree(&r->comm, rc, msg)) != 0)
        return rc;
    msg[0] = '\0';
    if (rank == 0 && h5out_create(&r->h5, r->opt.out_path, r->opt.force, msg, sizeof msg) != 0)
        rc = TS_EXIT_RUNTIME;
    return collect_agree(&r->comm, rc, msg);
}

static int write_run_info(struct run_ctx *r)
{
    char msg[MSG_LEN] = "";
    int rc = 0;
    r->me.rank = r->comm.rank;
    if (gethostname(r->me.host, sizeof r->me.host) != 0)
        snprintf(r->me.host, sizeof r->me.host, "?");
    r->me.host[sizeof r->me.host - 1] = '\0';
    http_local_address(r->url, r->me.address, sizeof r->me.address);
    align_clocks(r);
    if (r->comm.rank == 0) {
        int one_host = 1;
        for (int i = 1; i < r->comm.size; i++)
            one_host &= strcmp(r->ranks[i].host, r->ranks[0].host) == 0;
        r->skew_limit_s = one_host ? SKEW_ONE_HOST_S : SKEW_MANY_HOSTS_S;
        clock_utc_iso8601(r->start_utc, sizeof r->start_utc);
        struct ts_run_info info = {
            .version = TOKSTORM_VERSION,
            .url = r->url,
            .model = r->opt.model,
            .api = api_kind_name(r->opt.api),
            .levels = r->opt.levels,
            .n_levels = r->opt.n_levels,
            .ranks = r->comm.size,
            .start_utc = r->start_utc,
            .command_line = r->opt.command_line,
            .prompts_path = r->prompts_path,
            .prompt_count = (int64_t)r->prompts.count,
            .max_tokens = r->opt.max_tokens,
            .requests_per_stream = r->opt.requests_per_stream,
            .duration_s = (double)r->opt.duration_ns / 1e9,
            .warmup = r->opt.warmup,
            .timeout_s = (double)r->opt.timeout_ns / 1e9,
            .temperature = r->opt.temperature,
            .ignore_eos = r->opt.ignore_eos,
            /* Under Slurm, which job and nodes produced the results. */
            .slurm_job_id = getenv("SLURM_JOB_ID"),
            .slurm_job_name = getenv("SLURM_JOB_NAME"),
            .slurm_nodelist = getenv("SLURM_JOB_NODELIST"),
            .slurm_tasks_per_node = getenv("SLURM_TASKS_PER_NODE"),
        };
        if (h5out_write_run(r->h5, &info, msg, sizeof msg) != 0 ||
            h5out_write_ranks(r->h5, r->ranks, (size_t)r->comm.size, msg, sizeof msg) != 0)
            rc = TS_EXIT_RUNTIME;
        if (rc == 0) {
            printf("tokstorm %s: %s, model %s, %d ranks, levels", TOKSTORM_VERSION, r->endpoint,
                   r->opt.model, r->comm.size);
            for (size_t i = 0; i < r->opt.n_levels; i++)
                printf("%s%lld", i ? "," : " ", (long long)r->opt.levels[i]);
            printf(", max_tokens %lld\n", (long long)r->opt.max_tokens);
            report_header(stdout);
        }
    }
    return collect_agree(&r->comm, rc, msg);
}

static void teardown(struct run_ctx *r)
{
    if (r->comm.rank == 0 && h5out_close(r->h5) != 0)
        log_error("results file %s: error while closing it", r->opt.out_path);
    r->h5 = NULL;
    http_free(r->http);
    demo_stop(&r->demo);
    level_free(&r->level);
    for (size_t i = 0; r->bodies && i < r->prompts.count; i++)
        free(r->bodies[i]);
    free(r->bodies);
    free(r->body_lens);
    free(r->summaries);
    free(r->ranks);
    free(r->probe_url);
    free(r->endpoint);
    free(r->url);
    free(r->prompts_path);
    prompts_free(&r->prompts);
    options_free(&r->opt);
}

int run(int argc, char **argv, MPI_Comm comm)
{
    struct run_ctx r;
    memset(&r, 0, sizeof r);
    r.demo.stdout_fd = -1;
    collect_init(&r.comm, comm);
    log_setup(r.comm.rank, TS_LOG_WARN);
    /* Clock-alignment tests give each rank a clock of its own (see clock.h). */
    const char *test_offset = getenv("TOKSTORM_TEST_CLOCK_OFFSET_NS");
    if (test_offset != NULL)
        clock_set_test_offset(strtoll(test_offset, NULL, 10) * r.comm.rank);
    if (http_global_init() != 0) {
        fprintf(stderr, "tokstorm[%d]: libcurl initialisation failed\n", r.comm.rank);
        MPI_Abort(comm, TS_EXIT_RUNTIME); /* cannot take part in the agreement that follows */
    }

    int status = setup(&r, argc, argv);
    if (status == -1) {
        status = TS_EXIT_OK; /* --help or --version */
    } else if (status == 0) {
        status = write_run_info(&r);
        for (size_t i = 0; status == 0 && i < r.opt.n_levels; i++)
            status = run_level(&r, r.opt.levels[i]);
        if (r.comm.rank == 0 && r.summaries)
            report_summary(stdout, r.summaries, r.n_summaries, r.opt.out_path);
    }
    teardown(&r);
    http_global_cleanup();
    return status;
}
