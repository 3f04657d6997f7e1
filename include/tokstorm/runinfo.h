/* runinfo.h: what a run records about itself, for the results file's root attributes and the
 * --json summary alike. Pointers only: rank 0 owns the strings for the whole run. Pure. */
#ifndef TOKSTORM_RUNINFO_H
#define TOKSTORM_RUNINFO_H

#include <stddef.h>
#include <stdint.h>

/* The version of the results file's layout and of the --json file's, documented in
 * docs/results-format.md: raised when a reader written for the old one would misread. */
#define TS_SCHEMA_VERSION 1

struct ts_run_info {
    const char *version;
    const char *git_revision; /* git describe --always --dirty at configure time, or unknown */
    const char *url;
    const char *model;
    const char *api;
    const int64_t *levels;
    size_t n_levels;
    int ranks;
    const char *const *hosts; /* distinct host names, in the order of the first rank on each */
    size_t n_hosts;
    const char *mpi_library_version; /* MPI_Get_library_version */
    const char *start_utc;
    const char *command_line; /* secrets masked (redact.h) */
    const char *options_json; /* every option's effective value (options_to_json) */
    const char *results_path; /* the HDF5 file (--out) */
    const char *prompts_path; /* "" for a generated dataset */
    int64_t prompt_count;
    const char *dataset;        /* dataset_kind_name */
    const char *dataset_params; /* dataset_params_json */
    const char *dataset_hash;   /* "fnv1a64:..." of the prompts as sent */
    int64_t max_tokens;
    int64_t requests_per_stream;
    double duration_s;
    int64_t warmup;
    double timeout_s;
    double temperature;
    int ignore_eos;
    const char *mode;    /* "closed" or "open" */
    const double *rates; /* open loop: the rates given */
    size_t n_rates;
    const char *arrival;
    double burstiness;
    int64_t seed;
    int64_t max_concurrency; /* open loop, over all ranks; 0 = 1024 per rank */
    int64_t requests;        /* open loop, per level */
    int until_saturated;
    double slo_ttft_s, slo_tpot_s;
    const char *slurm_job_id;         /* SLURM_JOB_ID, NULL when not under Slurm */
    const char *slurm_job_name;       /* SLURM_JOB_NAME */
    const char *slurm_nodelist;       /* SLURM_JOB_NODELIST */
    const char *slurm_tasks_per_node; /* SLURM_TASKS_PER_NODE */
};

#endif
