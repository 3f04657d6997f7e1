/* run.c: a run from argv to exit status: parses and checks input on every rank, agrees on
 * failures (and signals) with one collective, creates the results file, sends the preflight
 * request, writes the run's description, hands the levels to sweep.c, and tears everything
 * down. With sweep.c, the only file that sees every module. */
#include "tokstorm/run.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tokstorm/api.h"
#include "tokstorm/api_models.h"
#include "tokstorm/clock.h"
#include "tokstorm/clocksync.h"
#include "tokstorm/collect.h"
#include "tokstorm/dataset.h"
#include "tokstorm/demo.h"
#include "tokstorm/h5out.h"
#include "tokstorm/http.h"
#include "tokstorm/interrupt.h"
#include "tokstorm/level.h"
#include "tokstorm/log.h"
#include "tokstorm/options.h"
#include "tokstorm/prompts.h"
#include "tokstorm/report.h"
#include "tokstorm/secret.h"
#include "tokstorm/units.h"

#include "run_internal.h"

#define SKEW_ONE_HOST_S   200e-6 /* start skew worth a warning, ranks on one host */
#define SKEW_MANY_HOSTS_S 1e-3   /* ... and across hosts */

/* The bundled prompts file (name, e.g. "coding.jsonl"): beside the build tree's parent
 * (build/../prompts), else where the source tree was when this binary was built. */
static char *default_prompts_path(const char *name)
{
    char self[PATH_MAX], path[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            snprintf(path, sizeof path, "%s/../prompts/%s", self, name);
            if (access(path, R_OK) == 0)
                return strdup(path);
        }
    }
    snprintf(path, sizeof path, "%s/prompts/%s", TOKSTORM_SOURCE_DIR, name);
    return strdup(path);
}

/* Every rank builds the same list itself (dataset.h): reading a file or generating from the
 * seed costs less than broadcasting it, and needs no rank to hold it twice. The generated
 * kinds have no file: their prompts_path stays NULL. */
static int load_prompts(struct run_ctx *r, char *msg)
{
    const struct ts_options *o = &r->opt;
    if (o->dataset == TS_DATASET_JSONL || o->dataset == TS_DATASET_SHAREGPT) {
        r->prompts_path = o->prompts_path ? strdup(o->prompts_path)
                                          : default_prompts_path(o->dataset == TS_DATASET_JSONL
                                                                     ? "coding.jsonl"
                                                                     : "sharegpt-sample.json");
        if (r->prompts_path == NULL) {
            snprintf(msg, MSG_LEN, "out of memory");
            return TS_EXIT_RUNTIME;
        }
    }
    r->dataset = (struct ts_dataset_spec){
        .kind = o->dataset,
        .path = r->prompts_path,
        .seed = o->seed,
        .num_prompts = o->num_prompts,
        .sharegpt_output_len = o->sharegpt_output_len,
        .input_len_tokens = o->input_len_tokens,
        .input_len_range = o->input_len_range,
        .output_len_tokens = o->output_len_tokens,
        .output_len_range = o->output_len_range,
        .prefix_len_tokens = o->prefix_len_tokens,
        .groups = o->groups,
        .prompts_per_group = o->prompts_per_group,
        .question_len_tokens = o->question_len_tokens,
    };
    int rc = dataset_load(&r->prompts, &r->dataset, msg, MSG_LEN);
    if (rc == TS_PROMPTS_ERR_NOMEM)
        return TS_EXIT_RUNTIME;
    if (rc != 0)
        return TS_EXIT_USAGE;
    snprintf(r->dataset_hash, sizeof r->dataset_hash, "fnv1a64:%016llx",
             (unsigned long long)dataset_hash(&r->prompts));
    return 0;
}

/* The transport of the run's one-off requests before the load (--model auto's GET, the
 * preflight): the load's headers, TLS and source addresses, with timeouts capped so that
 * every rank hears the verdict within 10 s, MPI start-up and tear-down included. */
static struct ts_http_config short_request_config(const struct run_ctx *r)
{
    const int64_t cap_ns = 5 * TS_NS_PER_S;
    return (struct ts_http_config){
        .timeout_ns = r->opt.timeout_ns < cap_ns ? r->opt.timeout_ns : cap_ns,
        .connect_timeout_ns =
            r->opt.connect_timeout_ns < cap_ns / 2 ? r->opt.connect_timeout_ns : cap_ns / 2,
        .bind_addrs = r->opt.bind_addrs,
        .n_bind_addrs = r->opt.n_bind_addrs,
        .headers = r->headers,
        .n_headers = r->n_headers,
        .insecure = r->opt.insecure,
        .cacert = r->opt.cacert,
    };
}

/* --model auto: rank 0 asks GET /v1/models and every rank takes the one model listed. A
 * server that cannot answer is a server problem (exit 3, as the preflight's); several models
 * are the user's choice to make (exit 2, naming them). Collective. */
static int resolve_model(struct run_ctx *r, char *msg)
{
    if (strcmp(r->opt.model, "auto") != 0)
        return 0;
    /* Within the preflight's bounds, so every rank hears the verdict in time. */
    struct ts_http_config cfg = short_request_config(r);
    int rc = 0;
    char *model = NULL;
    if (r->comm.rank == 0 && r->probe_url == NULL) {
        snprintf(msg, MSG_LEN, "out of memory");
        rc = TS_EXIT_RUNTIME;
    } else if (r->comm.rank == 0) {
        char *body = NULL, why[MSG_LEN - 100] = "";
        long status = 0;
        if (http_get(&cfg, r->probe_url, &body, &status, why, sizeof why) != 0) {
            snprintf(msg, MSG_LEN, "--model auto: %s", why);
            rc = TS_EXIT_PREFLIGHT;
        } else if (status != 200) {
            snprintf(msg, MSG_LEN, "--model auto: GET %s answered HTTP %ld", r->probe_url, status);
            rc = TS_EXIT_PREFLIGHT;
        } else {
            int pick = api_models_pick(body, strlen(body), &model, why, sizeof why);
            if (pick != 0)
                snprintf(msg, MSG_LEN, "--model auto: GET %s: %s", r->probe_url, why);
            rc = pick == 0                       ? 0
                 : pick == TS_API_MODELS_SEVERAL ? TS_EXIT_USAGE
                 : pick == TS_API_MODELS_NOMEM   ? TS_EXIT_RUNTIME
                                                 : TS_EXIT_PREFLIGHT;
        }
        free(body);
    }
    if ((rc = collect_agree(&r->comm, rc, msg)) != 0) {
        free(model);
        return rc;
    }
    if (collect_bcast_string(&r->comm, &model) != 0 || model == NULL) {
        snprintf(msg, MSG_LEN, "out of memory");
        rc = TS_EXIT_RUNTIME;
    } else {
        free(r->opt.model);
        r->opt.model = model;
    }
    return collect_agree(&r->comm, rc, msg);
}

static int build_bodies(struct run_ctx *r, char *msg)
{
    struct ts_api_params p = {
        .model = r->opt.model,
        .max_tokens = r->opt.max_tokens,
        .temperature = r->opt.temperature,
        .ignore_eos = r->opt.ignore_eos,
        .top_p = r->opt.top_p,
        .min_tokens = r->opt.min_tokens,
        .stop = (const char *const *)r->opt.stop,
        .n_stop = r->opt.n_stop,
        .extra_body = r->opt.extra_body,
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

/* Raises the soft limit on open files to the hard one and returns it (INT64_MAX: none). */
static int64_t raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return INT64_MAX;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    return rl.rlim_cur == RLIM_INFINITY ? INT64_MAX : (int64_t)rl.rlim_cur;
}

/* Each stream (or open-loop slot) holds one connection: the most this rank will run must fit
 * in its file descriptors, checked before any load is sent rather than failing half-way.
 * Sets *max_local to the most streams per rank; a saturation ladder is capped to fit. */
static int plan_capacity(struct run_ctx *r, int64_t *max_local, char *msg)
{
    const int64_t spare_fds = 64, n = r->comm.size;
    int64_t fds = raise_fd_limit(), fit = fds == INT64_MAX ? INT64_MAX : fds - spare_fds;
    const char *what = "--levels";
    if (r->opt.rates) {
        /* The cap is shared out exactly as streams are (level_share): every rank needs one. */
        what = r->opt.max_concurrency > 0 ? "--max-concurrency"
                                          : "open loop (1024 slots per rank unless "
                                            "--max-concurrency)";
        r->open_cap = r->opt.max_concurrency > 0 ? r->opt.max_concurrency : 1024 * n;
        if (r->open_cap < n) {
            snprintf(msg, MSG_LEN,
                     "--max-concurrency: %lld is less than the %lld ranks (each needs a slot)",
                     (long long)r->open_cap, (long long)n);
            return TS_EXIT_USAGE;
        }
        *max_local = (r->open_cap + n - 1) / n;
    } else if (r->opt.until_saturated) {
        if (fit != INT64_MAX && r->opt.max_level > fit * n)
            r->opt.max_level = fit * n; /* the ladder stops where descriptors run out */
        if (r->opt.levels[0] > r->opt.max_level) {
            snprintf(msg, MSG_LEN,
                     "--levels: the ladder's first level %lld is above --max-level %lld (or "
                     "what %lld ranks' file descriptors allow: raise ulimit -n or add ranks)",
                     (long long)r->opt.levels[0], (long long)r->opt.max_level, (long long)n);
            return TS_EXIT_USAGE;
        }
        *max_local = (r->opt.levels[0] + n - 1) / n;
        return 0;
    } else {
        int64_t max_c = 0;
        for (size_t i = 0; i < r->opt.n_levels; i++)
            max_c = r->opt.levels[i] > max_c ? r->opt.levels[i] : max_c;
        *max_local = (max_c + n - 1) / n;
    }
    if (*max_local > fit) {
        snprintf(msg, MSG_LEN,
                 "%s: %lld streams per rank need about %lld file descriptors, but the limit is "
                 "%lld: use more ranks or raise ulimit -n",
                 what, (long long)*max_local, (long long)(*max_local + spare_fds), (long long)fds);
        return TS_EXIT_USAGE;
    }
    return 0;
}

/* ---- secrets and TLS ---- */

/* Rank 0 reads the API key and every rank gets it by broadcast: an environment variable
 * reaches only the ranks on mpirun's host unless exported with -x, and a key file may exist
 * on one host only, so rank 0's host is the one place where both can be required. Returns 0
 * or TS_EXIT_USAGE with msg (rank 0's, printed once); collective. */
static int share_api_key(struct run_ctx *r, char *msg)
{
    if (r->opt.api_key_env == NULL && r->opt.api_key_file == NULL)
        return 0;
    char *key = NULL;
    int rc = 0;
    if (r->comm.rank == 0 &&
        secret_read_key(r->opt.api_key_env, r->opt.api_key_file, &key, msg, MSG_LEN) != 0)
        rc = TS_EXIT_USAGE;
    if ((rc = collect_agree(&r->comm, rc, msg)) != 0)
        return rc;
    collect_bcast_string(&r->comm, &key);
    r->auth_header = secret_bearer_header(key);
    secret_free(key);
    return 0;
}

/* --cacert on every rank's host, since every rank verifies the server itself: readable, and
 * holding a PEM certificate (libcurl would otherwise fail every request, later, with a vaguer
 * message). Returns 0 or TS_EXIT_USAGE with msg. */
static int check_cacert(const char *path, char *msg)
{
    char host[64] = "?";
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(msg, MSG_LEN, "--cacert: cannot open %s on %s: %s", path, host, strerror(errno));
        return TS_EXIT_USAGE;
    }
    char line[256];
    int pem = 0;
    while (!pem && fgets(line, sizeof line, f) != NULL)
        pem = strncmp(line, "-----BEGIN CERTIFICATE-----", 27) == 0;
    int failed = ferror(f);
    fclose(f);
    if (failed || !pem) {
        snprintf(msg, MSG_LEN, "--cacert: %s on %s %s", path, host,
                 failed ? "cannot be read"
                        : "holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
        return TS_EXIT_USAGE;
    }
    return 0;
}

/* The extra headers of every request: -H as given, then the API key's. */
static int collect_headers(struct run_ctx *r)
{
    if ((r->opt.api_key_env || r->opt.api_key_file) && r->auth_header == NULL)
        return -1; /* out of memory in share_api_key */
    size_t n = r->opt.n_headers + (r->auth_header != NULL);
    r->headers = calloc(n ? n : 1, sizeof *r->headers);
    if (r->headers == NULL)
        return -1;
    for (size_t i = 0; i < r->opt.n_headers; i++)
        r->headers[r->n_headers++] = r->opt.headers[i];
    if (r->auth_header)
        r->headers[r->n_headers++] = r->auth_header;
    return 0;
}

/* ---- preflight: one short request from rank 0 ---- */

struct preflight {
    const char *body;
    size_t body_len;
    int sent;
    struct ts_row row;
    char message[200];
    struct ts_http *http;
    int interrupted; /* a signal to rank 0 stopped it */
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

/* A signal to rank 0 need not wait for the preflight's answer. */
static void preflight_tick(void *ctx, int64_t now_ns)
{
    (void)now_ns;
    struct preflight *p = ctx;
    if (interrupt_status() != 0 && !p->interrupted) {
        p->interrupted = 1;
        http_stop(p->http, "interrupted");
    }
}

static int preflight(struct run_ctx *r, char *msg)
{
    /* --extra-body goes with it: a server may need one of its knobs to answer at all. */
    struct ts_api_params params = {
        .model = r->opt.model, .max_tokens = 1, .extra_body = r->opt.extra_body, .stream = 1};
    struct ts_prompt first = r->prompts.items[0];
    first.max_tokens = 0; /* one token, whatever the dataset asks of the first prompt */
    char *body = api_build_body(r->opt.api, &params, &first);
    struct ts_http_config cfg = short_request_config(r);
    cfg.url = r->endpoint;
    cfg.api = r->opt.api;
    cfg.stall_timeout_ns = r->opt.stall_timeout_ns;
    cfg.max_event_bytes = r->opt.max_event_bytes;
    cfg.max_streams = 1;
    cfg.debug = r->opt.verbose >= 2;
    struct preflight p = {.body = body, .body_len = body ? strlen(body) : 0};
    const struct ts_http_tick tick = {&p, preflight_tick, 100 * TS_NS_PER_MS};
    struct ts_http_driver drv = {&p, preflight_next, preflight_done, &tick};
    struct ts_http *h = NULL;
    int rc = body ? http_new(&h, &cfg, msg, MSG_LEN) : TS_HTTP_ERR_INIT;
    p.http = h;
    if (rc == 0)
        rc = http_run(h, 1, &drv, msg, MSG_LEN);
    http_free(h);
    free(body);
    if (rc != 0)
        return TS_EXIT_RUNTIME;
    if (p.interrupted)
        return interrupt_status();
    if (p.row.error_class == TS_ERR_NONE)
        return 0;
    /* A certificate libcurl could not verify: say what would. */
    const char *hint = "";
    if (p.row.http_status == 0 && strstr(p.message, "certificate") != NULL)
        hint = r->opt.cacert ? " (is --cacert the CA that signed the server's certificate?)"
                             : " (--cacert FILE names the CA to trust; --insecure skips the check)";
    if (p.row.http_status != 0)
        snprintf(msg, MSG_LEN, "preflight request to %s failed: HTTP %d (%s): %s", r->endpoint,
                 p.row.http_status, stats_err_class_name(p.row.error_class), p.message);
    else
        snprintf(msg, MSG_LEN, "preflight request to %s failed (%s): %s%s", r->endpoint,
                 stats_err_class_name(p.row.error_class), p.message, hint);
    return TS_EXIT_PREFLIGHT;
}

/* ---- set-up and the sweep ---- */

/* collect_agree with this rank's signal folded in: a signalled rank that has nothing worse to
 * report contributes its exit status (130 or 143), so every rank stops here together. */
static int agree(const struct run_ctx *r, int rc, const char *msg)
{
    return collect_agree(&r->comm, rc != 0 ? rc : interrupt_status(), rc != 0 ? msg : "");
}

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
                printf("tokstorm %s (%s)\n", TOKSTORM_VERSION, TOKSTORM_GIT_REVISION);
        }
        return -1; /* done, successfully */
    }
    if ((rc = agree(r, rc == 0 ? 0 : TS_EXIT_USAGE, msg)) != 0)
        return rc;
    log_setup(rank, r->opt.verbose >= 2 ? TS_LOG_DEBUG
                    : r->opt.verbose    ? TS_LOG_INFO
                                        : TS_LOG_WARN);

    /* Each rank's host must own every --bind address; the first it lacks is named. */
    msg[0] = '\0';
    rc = 0;
    for (size_t i = 0; i < r->opt.n_bind_addrs && rc == 0; i++) {
        char why[MSG_LEN - 64];
        if (http_check_bind_address(r->opt.bind_addrs[i], why, sizeof why) != 0) {
            snprintf(msg, sizeof msg, "--bind: %s (not an address of this host?)", why);
            rc = TS_EXIT_USAGE;
        }
    }
    if ((rc = agree(r, rc, msg)) != 0)
        return rc;

    msg[0] = '\0';
    if ((rc = share_api_key(r, msg)) != 0)
        return rc;
    rc = r->opt.cacert ? check_cacert(r->opt.cacert, msg) : 0;
    if (rc == 0 && collect_headers(r) != 0) {
        snprintf(msg, sizeof msg, "out of memory");
        rc = TS_EXIT_RUNTIME;
    }
    if ((rc = collect_agree(&r->comm, rc, msg)) != 0)
        return rc;

    msg[0] = '\0';
    rc = load_prompts(r, msg);
    if ((rc = agree(r, rc, msg)) != 0)
        return rc;

    int64_t max_local = 0;
    msg[0] = '\0';
    rc = plan_capacity(r, &max_local, msg);
    if ((rc = agree(r, rc, msg)) != 0)
        return rc;

    /* The results file is created (and flushed: it can be written) before any request, the
     * preflight included. Until the preflight has passed it is the run's only provisionally:
     * a run that ends before then removes it (teardown), and with --force a file it replaces
     * stays as it was until then (h5out_commit). */
    msg[0] = '\0';
    rc = 0;
    if (rank == 0 && h5out_create(&r->h5, r->opt.out_path, r->opt.force, msg, sizeof msg) != 0)
        rc = TS_EXIT_USAGE;
    if (rank == 0 && rc == 0)
        rc = run_output_probe(r, msg);
    if ((rc = agree(r, rc, msg)) != 0)
        return rc;
    /* Rank 0 prints the progress; every rank takes part in its reductions, or none does. */
    int64_t progress = rank == 0 ? run_progress_choose(r->opt.progress) : 0;
    collect_bcast_int64(&r->comm, &progress);
    r->progress.mode = (enum run_progress_mode)progress;
    if (r->opt.demo && !collect_single_node(&r->comm)) {
        snprintf(msg, sizeof msg,
                 "--demo: the mock listens on rank 0's loopback; run every "
                 "rank on one host (or start tokstorm-mock and give --url)");
        return agree(r, TS_EXIT_USAGE, rank == 0 ? msg : "");
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
    if ((rc = agree(r, rc, msg)) != 0)
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
    if ((rc = resolve_model(r, msg)) != 0)
        return rc;
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
            .stall_timeout_ns = r->opt.stall_timeout_ns,
            .max_event_bytes = r->opt.max_event_bytes,
            .max_streams = max_local,
            .debug = r->opt.verbose >= 2,
            .connect_rate_per_s = (double)r->opt.connect_rate,
            .bind_addrs = r->opt.bind_addrs,
            .n_bind_addrs = r->opt.n_bind_addrs,
            .headers = r->headers,
            .n_headers = r->n_headers,
            .insecure = r->opt.insecure,
            .cacert = r->opt.cacert,
        };
        if (http_new(&r->http, &cfg, msg, sizeof msg) != 0)
            rc = TS_EXIT_RUNTIME;
    }
    if (rc == 0 && rank == 0) {
        /* A saturation ladder doubles from its first level: 64 steps are more than enough. */
        size_t levels = (r->opt.rates ? r->opt.n_rates : r->opt.n_levels) + 64;
        r->summaries = calloc(levels, sizeof *r->summaries);
        r->table = calloc(levels, sizeof *r->table);
        r->ranks = calloc((size_t)r->comm.size, sizeof *r->ranks);
        r->loads = calloc((size_t)r->comm.size, sizeof *r->loads);
        if (r->summaries == NULL || r->table == NULL || r->ranks == NULL || r->loads == NULL)
            rc = TS_EXIT_RUNTIME;
    }
    if ((rc = agree(r, rc, msg)) != 0)
        return rc;

    if (rank == 0 && r->opt.insecure && strncmp(r->url, "https://", 8) == 0)
        log_warn("--insecure: the server's TLS certificate is not verified, so nothing proves "
                 "that %s is the server it claims to be",
                 r->url);
    msg[0] = '\0';
    rc = rank == 0 && !r->opt.no_preflight ? preflight(r, msg) : 0;
    if ((rc = agree(r, rc, msg)) != 0)
        return rc;
    /* From here the file is the run's. A signal from now on is the sweep's to honour, once
     * the file describes the run, so that it also gets its end time. */
    msg[0] = '\0';
    if (rank == 0 && h5out_commit(r->h5, msg, sizeof msg) != 0)
        rc = TS_EXIT_OUTPUT;
    r->file_committed = rank == 0 && rc == 0;
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
    sweep_align_clocks(r);
    if (r->comm.rank == 0) {
        int one_host = 1;
        for (int i = 1; i < r->comm.size; i++)
            one_host &= strcmp(r->ranks[i].host, r->ranks[0].host) == 0;
        r->skew_limit_s = one_host ? SKEW_ONE_HOST_S : SKEW_MANY_HOSTS_S;
        clock_utc_iso8601(r->start_utc, sizeof r->start_utc);
        rc = run_output_begin(r, msg);
        if (rc == 0) {
            printf("tokstorm %s: %s, model %s, %d ranks, ", TOKSTORM_VERSION, r->endpoint,
                   r->opt.model, r->comm.size);
            if (r->opt.rates) {
                printf("open loop (%s arrivals) at", schedule_arrival_name(r->opt.arrival));
                for (size_t i = 0; i < r->opt.n_rates; i++)
                    printf("%s%g", i ? "," : " ", r->opt.rates[i]);
                printf(" req/s");
            } else {
                printf("levels");
                for (size_t i = 0; i < r->opt.n_levels; i++)
                    printf("%s%lld", i ? "," : " ", (long long)r->opt.levels[i]);
            }
            printf("%s, max_tokens %lld\n", r->opt.until_saturated ? " and up until saturated" : "",
                   (long long)r->opt.max_tokens);
            report_header(stdout, r->opt.rates != NULL);
        }
    }
    return collect_agree(&r->comm, rc, msg);
}

static void teardown(struct run_ctx *r)
{
    char msg[MSG_LEN];
    /* A run that ended before its first request leaves no file of its own behind. */
    if (r->comm.rank == 0 && !r->file_committed)
        h5out_discard(r->h5);
    else if (r->comm.rank == 0 && h5out_close(r->h5, msg, sizeof msg) != 0)
        fprintf(stderr, "tokstorm: %s\n", msg);
    r->h5 = NULL;
    http_free(r->http);
    demo_stop(&r->demo);
    level_free(&r->level);
    for (size_t i = 0; r->bodies && i < r->prompts.count; i++)
        free(r->bodies[i]);
    free(r->bodies);
    free(r->body_lens);
    free(r->summaries);
    run_output_free(r);
    free(r->ranks);
    free(r->loads);
    free(r->probe_url);
    free(r->headers);
    secret_free(r->auth_header);
    free(r->endpoint);
    free(r->url);
    free(r->prompts_path);
    prompts_free(&r->prompts);
    options_free(&r->opt);
}

/* Rank 0: the one line that says what an interrupted run left. */
static void report_interruption(const struct run_ctx *r, int status)
{
    const char *sig = interrupt_name(status);
    if (r->comm.rank != 0)
        return;
    if (!r->file_committed) {
        fprintf(stderr, "tokstorm: interrupted by %s before the first request: nothing measured\n",
                sig);
    } else {
        size_t complete = 0;
        for (size_t i = 0; i < r->n_summaries; i++)
            complete += r->table[i].complete != 0;
        fprintf(stderr, "tokstorm: interrupted by %s: %zu finished level%s%s in %s\n", sig,
                complete, complete == 1 ? "" : "s",
                r->n_summaries > complete ? " and the one cut short (complete = 0)" : "",
                r->opt.out_path);
    }
    fflush(stderr);
}

int run(int argc, char **argv, MPI_Comm comm)
{
    struct run_ctx r;
    memset(&r, 0, sizeof r);
    r.demo.stdout_fd = -1;
    collect_init(&r.comm, comm);
    log_setup(r.comm.rank, TS_LOG_WARN);
    /* From here a signal is a request to stop that the ranks agree on (sweep.c). */
    if (interrupt_install() != 0)
        fprintf(stderr, "tokstorm[%d]: cannot handle SIGINT and SIGTERM\n", r.comm.rank);
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
        if (status == 0) {
            status = sweep_run(&r);
            /* The end time goes in whether the sweep ran to the end or not: a reader tells
             * a finished run from one cut short by its levels' complete flags. */
            char msg[MSG_LEN] = "";
            int rc = r.comm.rank == 0 ? run_output_end(&r, msg) : 0;
            if (rc != 0)
                fprintf(stderr, "tokstorm: %s\n", msg);
            /* Every rank exits with the same status: an error, else the signal one got. */
            int mine = status != 0 ? status : rc;
            status = collect_agree(&r.comm, mine != 0 ? mine : interrupt_status(), "");
        }
        if (r.comm.rank == 0 && r.summaries)
            report_summary(stdout, r.summaries, r.n_summaries, r.opt.out_path);
    }
    if (status == TS_EXIT_SIGINT || status == TS_EXIT_SIGTERM)
        report_interruption(&r, status);
    teardown(&r);
    http_global_cleanup();
    interrupt_restore();
    return status;
}
