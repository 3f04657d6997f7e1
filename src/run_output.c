/* run_output.c: what rank 0 records about the run besides each level's measurements: the
 * results file's root (the run's description, /ranks, /summary, the end time) and the
 * --json and --csv files, rewritten whole after every level so that a run that fails later
 * keeps the levels it finished. */
#include <stdlib.h>
#include <string.h>

#include "tokstorm/api.h"
#include "tokstorm/clock.h"
#include "tokstorm/dataset.h"
#include "tokstorm/run.h"
#include "tokstorm/schedule.h"

#include "run_internal.h"

int run_output_probe(const struct run_ctx *r, char *msg)
{
    if (r->opt.json_path &&
        summary_probe("--json", r->opt.json_path, r->opt.force, msg, MSG_LEN) != 0)
        return TS_EXIT_USAGE;
    if (r->opt.csv_path && summary_probe("--csv", r->opt.csv_path, r->opt.force, msg, MSG_LEN) != 0)
        return TS_EXIT_USAGE;
    return 0;
}

/* The host names of r->ranks, each once, in rank order. */
static size_t distinct_hosts(struct run_ctx *r)
{
    size_t n = 0;
    for (int i = 0; i < r->comm.size; i++) {
        size_t j = 0;
        while (j < n && strcmp(r->hosts[j], r->ranks[i].host) != 0)
            j++;
        if (j == n)
            r->hosts[n++] = r->ranks[i].host;
    }
    return n;
}

static void fill_info(struct run_ctx *r, size_t n_hosts)
{
    r->info = (struct ts_run_info){
        .version = TOKSTORM_VERSION,
        .git_revision = TOKSTORM_GIT_REVISION,
        .url = r->url,
        .model = r->opt.model,
        .api = api_kind_name(r->opt.api),
        .levels = r->opt.levels,
        .n_levels = r->opt.n_levels,
        .ranks = r->comm.size,
        .hosts = r->hosts,
        .n_hosts = n_hosts,
        .mpi_library_version = r->mpi_version,
        .start_utc = r->start_utc,
        .command_line = r->opt.command_line,
        .options_json = r->options_json,
        .results_path = r->opt.out_path,
        .prompts_path = r->prompts_path ? r->prompts_path : "",
        .prompt_count = (int64_t)r->prompts.count,
        .dataset = dataset_kind_name(r->opt.dataset),
        .dataset_params = r->dataset_params,
        .dataset_hash = r->dataset_hash,
        .max_tokens = r->opt.max_tokens,
        .requests_per_stream = r->opt.requests_per_stream,
        .duration_s = (double)r->opt.duration_ns / 1e9,
        .warmup = r->opt.warmup,
        .timeout_s = (double)r->opt.timeout_ns / 1e9,
        .temperature = r->opt.temperature,
        .ignore_eos = r->opt.ignore_eos,
        .mode = r->opt.rates ? "open" : "closed",
        .rates = r->opt.rates,
        .n_rates = r->opt.n_rates,
        .arrival = schedule_arrival_name(r->opt.arrival),
        .burstiness = r->opt.burstiness,
        .seed = (int64_t)r->opt.seed,
        .max_concurrency = r->opt.max_concurrency,
        .requests = r->opt.requests,
        .until_saturated = r->opt.until_saturated,
        .slo_ttft_s = (double)r->opt.slo_ttft_ns / 1e9,
        .slo_tpot_s = (double)r->opt.slo_tpot_ns / 1e9,
        /* Under Slurm, which job and nodes produced the results. */
        .slurm_job_id = getenv("SLURM_JOB_ID"),
        .slurm_job_name = getenv("SLURM_JOB_NAME"),
        .slurm_nodelist = getenv("SLURM_JOB_NODELIST"),
        .slurm_tasks_per_node = getenv("SLURM_TASKS_PER_NODE"),
    };
}

/* Rewrites --json and --csv from the levels finished so far. */
static int write_text_files(struct run_ctx *r, char *msg)
{
    if (r->opt.json_path) {
        struct ts_summary_doc doc = {
            .run = &r->info,
            .rows = r->table,
            .levels = r->summaries,
            .n = r->n_summaries,
            .end_utc = r->end_utc[0] ? r->end_utc : NULL,
            .point = r->stop_reason ? &r->saturation : NULL,
            .stop_reason = r->stop_reason,
        };
        char *text = summary_json(&doc);
        int rc = text ? summary_write_file(r->opt.json_path, text, msg, MSG_LEN) : -1;
        if (text == NULL)
            snprintf(msg, MSG_LEN, "%s: out of memory", r->opt.json_path);
        free(text);
        if (rc != 0)
            return TS_EXIT_OUTPUT;
    }
    if (r->opt.csv_path) {
        char *text = summary_csv(r->table, r->n_summaries);
        int rc = text ? summary_write_file(r->opt.csv_path, text, msg, MSG_LEN) : -1;
        if (text == NULL)
            snprintf(msg, MSG_LEN, "%s: out of memory", r->opt.csv_path);
        free(text);
        if (rc != 0)
            return TS_EXIT_OUTPUT;
    }
    return 0;
}

int run_output_begin(struct run_ctx *r, char *msg)
{
    r->hosts = calloc((size_t)r->comm.size, sizeof *r->hosts);
    r->options_json = options_to_json(&r->opt, r->url, r->prompts_path);
    r->dataset_params = dataset_params_json(&r->dataset);
    if (r->hosts == NULL || r->options_json == NULL || r->dataset_params == NULL) {
        snprintf(msg, MSG_LEN, "out of memory");
        return TS_EXIT_RUNTIME;
    }
    collect_library_version(r->mpi_version, sizeof r->mpi_version);
    fill_info(r, distinct_hosts(r));
    if (h5out_write_run(r->h5, &r->info, msg, MSG_LEN) != 0 ||
        h5out_write_ranks(r->h5, r->ranks, (size_t)r->comm.size, msg, MSG_LEN) != 0)
        return TS_EXIT_OUTPUT;
    return write_text_files(r, msg);
}

int run_output_level(struct run_ctx *r, const char *group, int complete, char *msg)
{
    size_t i = r->n_summaries - 1;
    summary_row_make(&r->summaries[i], group, complete, &r->table[i]);
    /* --json and --csv are files of their own: they take the level even when the results
     * file could not. The first failure is the one said. */
    char text_msg[MSG_LEN];
    int rc = h5out_level_end(r->h5, &r->summaries[i], &r->table[i], msg, MSG_LEN) != 0;
    if (write_text_files(r, rc ? text_msg : msg) != 0)
        rc = 1;
    return rc ? TS_EXIT_OUTPUT : 0;
}

int run_output_end(struct run_ctx *r, char *msg)
{
    clock_utc_iso8601(r->end_utc, sizeof r->end_utc);
    /* After a failed write the file takes nothing more (that failure was said already). */
    if (!h5out_failed(r->h5) && h5out_write_end(r->h5, r->end_utc, msg, MSG_LEN) != 0)
        return TS_EXIT_OUTPUT;
    return write_text_files(r, msg);
}

void run_output_free(struct run_ctx *r)
{
    free(r->hosts);
    free(r->options_json);
    free(r->dataset_params);
    free(r->table);
    r->hosts = NULL;
    r->options_json = NULL;
    r->dataset_params = NULL;
    r->table = NULL;
}
