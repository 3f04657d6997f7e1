/* summary.c: the per-level summary row and the --csv and --json texts built from it. It
 * knows the figures of a level, not how they were measured or where the results file is;
 * the only I/O is replacing a finished text file. */
#include "tokstorm/summary.h"
#include "tokstorm/textbuf.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIELD(name, kind)                                                                          \
    {                                                                                              \
#name, offsetof(struct ts_summary_row, name), TS_SUMMARY_##kind                            \
    }
const struct ts_summary_field ts_summary_fields[] = {
    FIELD(group, STR),         FIELD(concurrency, I64),
    FIELD(rate, F64),          FIELD(start_s, F64),
    FIELD(agg_tok_s, F64),     FIELD(steady_tok_s, F64),
    FIELD(per_req_tok_s, F64), FIELD(output_tokens, I64),
    FIELD(wall_s, F64),        FIELD(ok, I64),
    FIELD(err, I64),           FIELD(ttft_p50_ms, F64),
    FIELD(ttft_p99_ms, F64),   FIELD(itl_p50_ms, F64),
    FIELD(itl_p99_ms, F64),    FIELD(complete, I32),
};
#undef FIELD
const size_t ts_summary_n_fields = sizeof ts_summary_fields / sizeof *ts_summary_fields;

void summary_row_make(const struct ts_level_summary *s, const char *group, int complete,
                      struct ts_summary_row *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->group, sizeof out->group, "%s", group);
    out->concurrency = s->concurrency;
    out->rate = s->rate;
    out->start_s = s->start_s;
    out->agg_tok_s = s->agg_tok_s;
    /* No value is not a value of 0: a level without a steady window, or without a single
     * latency sample, says so instead of reporting a perfect 0 ms. */
    out->steady_tok_s = s->steady_s > 0 ? s->steady_tok_s : NAN;
    out->per_req_tok_s = s->per_req_tok_s;
    out->output_tokens = (int64_t)s->output_tokens;
    out->wall_s = s->wall_s;
    out->ok = (int64_t)s->ok;
    out->err = (int64_t)s->err;
    out->ttft_p50_ms = s->ttft.count ? s->ttft.p50 : NAN;
    out->ttft_p99_ms = s->ttft.count ? s->ttft.p99 : NAN;
    out->itl_p50_ms = s->itl.count ? s->itl.p50 : NAN;
    out->itl_p99_ms = s->itl.count ? s->itl.p99 : NAN;
    out->complete = complete ? 1 : 0;
}

/* ---- CSV ---- */

/* One field of a row as CSV text into buf ("" for NaN). */
static void field_text(const struct ts_summary_row *r, const struct ts_summary_field *f, char *buf,
                       size_t len)
{
    const char *at = (const char *)r + f->offset;
    double d;
    int64_t i64;
    int32_t i32;
    switch (f->kind) {
    case TS_SUMMARY_STR:
        snprintf(buf, len, "%s", at);
        break;
    case TS_SUMMARY_I64:
        memcpy(&i64, at, sizeof i64);
        snprintf(buf, len, "%lld", (long long)i64);
        break;
    case TS_SUMMARY_I32:
        memcpy(&i32, at, sizeof i32);
        snprintf(buf, len, "%d", (int)i32);
        break;
    case TS_SUMMARY_F64:
        memcpy(&d, at, sizeof d);
        if (isnan(d))
            buf[0] = '\0';
        else
            snprintf(buf, len, "%.10g", d);
        break;
    }
}

char *summary_csv(const struct ts_summary_row *rows, size_t n)
{
    struct ts_textbuf t = {0};
    char buf[64];
    for (size_t f = 0; f < ts_summary_n_fields; f++) {
        textbuf_puts(&t, f ? "," : "");
        textbuf_puts(&t, ts_summary_fields[f].name);
    }
    textbuf_puts(&t, "\n");
    for (size_t i = 0; i < n; i++) {
        for (size_t f = 0; f < ts_summary_n_fields; f++) {
            field_text(&rows[i], &ts_summary_fields[f], buf, sizeof buf);
            textbuf_puts(&t, f ? "," : "");
            textbuf_puts(&t, buf);
        }
        textbuf_puts(&t, "\n");
    }
    if (t.oom) {
        free(t.p);
        return NULL;
    }
    return t.p;
}

/* ---- JSON ---- */

static void add_number(cJSON *o, const char *key, double v)
{
    if (isnan(v) || isinf(v))
        cJSON_AddNullToObject(o, key);
    else
        cJSON_AddNumberToObject(o, key, v);
}

static void add_string(cJSON *o, const char *key, const char *v)
{
    if (v != NULL)
        cJSON_AddStringToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

static void add_row_fields(cJSON *o, const struct ts_summary_row *r)
{
    for (size_t f = 0; f < ts_summary_n_fields; f++) {
        const struct ts_summary_field *fd = &ts_summary_fields[f];
        const char *at = (const char *)r + fd->offset;
        double d;
        int64_t i64;
        int32_t i32;
        switch (fd->kind) {
        case TS_SUMMARY_STR:
            cJSON_AddStringToObject(o, fd->name, at);
            break;
        case TS_SUMMARY_I64:
            memcpy(&i64, at, sizeof i64);
            cJSON_AddNumberToObject(o, fd->name, (double)i64);
            break;
        case TS_SUMMARY_I32:
            memcpy(&i32, at, sizeof i32);
            cJSON_AddNumberToObject(o, fd->name, i32);
            break;
        case TS_SUMMARY_F64:
            memcpy(&d, at, sizeof d);
            add_number(o, fd->name, d);
            break;
        }
    }
}

static void add_dist(cJSON *o, const char *key, const struct ts_dist *d)
{
    cJSON *j = cJSON_AddObjectToObject(o, key);
    if (j == NULL)
        return;
    cJSON_AddNumberToObject(j, "count", (double)d->count);
    const struct {
        const char *name;
        double v;
    } f[] = {{"p50", d->p50},   {"p90", d->p90},   {"p95", d->p95}, {"p99", d->p99},
             {"p999", d->p999}, {"mean", d->mean}, {"min", d->min}, {"max", d->max}};
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        add_number(j, f[i].name, d->count ? f[i].v : NAN);
}

static cJSON *level_json(const struct ts_summary_row *r, const struct ts_level_summary *s)
{
    cJSON *o = cJSON_CreateObject();
    if (o == NULL)
        return NULL;
    add_row_fields(o, r);
    cJSON_AddNumberToObject(o, "prompt_tokens", (double)s->prompt_tokens);
    cJSON_AddNumberToObject(o, "req_s", s->req_s);
    cJSON_AddNumberToObject(o, "goodput_req_s", s->goodput_req_s);
    cJSON_AddNumberToObject(o, "late", (double)s->late);
    cJSON_AddNumberToObject(o, "steady_s", s->steady_s);
    cJSON_AddNumberToObject(o, "start_skew_s", s->start_skew_s);
    cJSON_AddNumberToObject(o, "tokens_per_event", s->tokens_per_event);
    cJSON *errors = cJSON_AddObjectToObject(o, "errors");
    for (int c = 1; errors && c < TS_ERR__COUNT; c++)
        cJSON_AddNumberToObject(errors, stats_err_class_name(c), (double)s->err_by_class[c]);
    cJSON *lat = cJSON_AddObjectToObject(o, "latency_ms");
    if (lat) {
        add_dist(lat, "ttft", &s->ttft);
        add_dist(lat, "itl", &s->itl);
        add_dist(lat, "tpot", &s->tpot);
        add_dist(lat, "e2e", &s->e2e);
        if (s->rate > 0) {
            add_dist(lat, "ttft_sched", &s->ttft_sched);
            add_dist(lat, "e2e_sched", &s->e2e_sched);
            add_dist(lat, "send_lag", &s->lag);
        }
    }
    return o;
}

static void add_run(cJSON *j, const struct ts_run_info *run, const char *end_utc)
{
    cJSON_AddNumberToObject(j, "schema_version", TS_SCHEMA_VERSION);
    add_string(j, "tokstorm_version", run->version);
    add_string(j, "git_revision", run->git_revision);
    add_string(j, "command_line", run->command_line);
    add_string(j, "url", run->url);
    add_string(j, "model", run->model);
    add_string(j, "api", run->api);
    add_string(j, "mode", run->mode);
    cJSON_AddNumberToObject(j, "ranks", run->ranks);
    cJSON *hosts = cJSON_AddArrayToObject(j, "hosts");
    for (size_t i = 0; hosts && i < run->n_hosts; i++)
        cJSON_AddItemToArray(hosts, cJSON_CreateString(run->hosts[i]));
    add_string(j, "mpi_library_version", run->mpi_library_version);
    add_string(j, "start_time_utc", run->start_utc);
    add_string(j, "end_time_utc", end_utc);
    add_string(j, "results_file", run->results_path);
    add_string(j, "dataset", run->dataset);
    add_string(j, "dataset_hash", run->dataset_hash);
    add_string(j, "slurm_job_id", run->slurm_job_id);
    add_string(j, "slurm_job_name", run->slurm_job_name);
    add_string(j, "slurm_nodelist", run->slurm_nodelist);
    add_string(j, "slurm_tasks_per_node", run->slurm_tasks_per_node);
    cJSON *options = run->options_json ? cJSON_Parse(run->options_json) : NULL;
    if (options != NULL)
        cJSON_AddItemToObject(j, "options", options);
    else
        cJSON_AddNullToObject(j, "options");
}

char *summary_json(const struct ts_summary_doc *d)
{
    cJSON *j = cJSON_CreateObject();
    if (j == NULL)
        return NULL;
    add_run(j, d->run, d->end_utc);
    cJSON *levels = cJSON_AddArrayToObject(j, "levels");
    for (size_t i = 0; levels && i < d->n; i++) {
        cJSON *l = level_json(&d->rows[i], &d->levels[i]);
        if (l != NULL)
            cJSON_AddItemToArray(levels, l);
    }
    if (d->point != NULL) {
        cJSON *s = cJSON_AddObjectToObject(j, "saturation");
        if (s != NULL) {
            cJSON_AddNumberToObject(s, "peak_tok_s", d->point->peak_tok_s);
            cJSON_AddNumberToObject(s, "peak_level", d->point->peak_level);
            cJSON_AddNumberToObject(s, "knee_level", d->point->knee_level);
            add_number(s, "slo_level", d->point->slo_level >= 0 ? d->point->slo_level : NAN);
            add_number(s, "slo_goodput_req_s",
                       d->point->slo_level >= 0 ? d->point->slo_goodput_req_s : NAN);
            add_string(s, "stop_reason", d->stop_reason);
        }
    }
    char *text = cJSON_Print(j);
    cJSON_Delete(j);
    return text;
}

/* ---- files ---- */

int summary_probe(const char *option, const char *path, int force, char *msg, size_t len)
{
    int existed = access(path, F_OK) == 0;
    if (existed && !force) {
        snprintf(msg, len, "%s: %s exists (use --force to overwrite it)", option, path);
        return -1;
    }
    /* Opening for append neither truncates an existing file nor needs it to exist. */
    FILE *f = fopen(path, "a");
    if (f == NULL) {
        snprintf(msg, len, "%s: cannot create %s: %s", option, path, strerror(errno));
        return -1;
    }
    fclose(f);
    if (!existed)
        unlink(path);
    return 0;
}

int summary_write_file(const char *path, const char *text, char *msg, size_t len)
{
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    if (tmp == NULL) {
        snprintf(msg, len, "%s: out of memory", path);
        return -1;
    }
    snprintf(tmp, n, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    int ok = f != NULL && fputs(text, f) >= 0;
    ok = (f != NULL && fclose(f) == 0) && ok;
    ok = ok && rename(tmp, path) == 0;
    if (!ok) {
        snprintf(msg, len, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return ok ? 0 : -1;
}
