/* options.h: the command line, parsed and validated once. Holds user input only, with
 * defaults; values derived at run time (a rank's share, deadlines) live elsewhere. Every
 * rank parses the same argv and reaches the same verdict, so a bad option ends every rank
 * the same way without a collective. No MPI, no network, no file access. */
#ifndef TOKSTORM_OPTIONS_H
#define TOKSTORM_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tokstorm/api.h"
#include "tokstorm/dataset.h"
#include "tokstorm/schedule.h"

#define TS_OPT_ERR     (-1) /* invalid command line: msg names the option */
#define TS_OPT_HELP    1    /* --help was given */
#define TS_OPT_VERSION 2    /* --version was given */

/* --progress: the live line during a level. */
enum ts_progress_mode {
    TS_PROGRESS_AUTO = 0, /* when rank 0's output reaches a terminal */
    TS_PROGRESS_ON = 1,
    TS_PROGRESS_OFF = 2,
};

struct ts_options {
    char *url;            /* server base URL without trailing '/' ("http://h:8000") */
    char *model;          /* "model" in each request; "auto" = ask GET /v1/models (run.c) */
    enum ts_api_kind api; /* dialect and endpoint */
    int64_t *levels;      /* global concurrencies, in the order given */
    size_t n_levels;
    int64_t max_tokens;          /* max_tokens per request */
    double temperature;          /* sampling temperature */
    int ignore_eos;              /* send "ignore_eos": true */
    double top_p;                /* nucleus sampling threshold; 0 = not sent */
    int64_t min_tokens;          /* fewest tokens to generate; 0 = not sent */
    char **stop;                 /* --stop strings, in the order given */
    size_t n_stop;
    char *extra_body;            /* JSON object merged into every body (checked); NULL = none */
    int64_t requests_per_stream; /* measured requests per stream; 0 with --duration */
    int64_t duration_ns;         /* start no measured request after this; 0 = off */
    int64_t warmup;              /* unmeasured requests per stream before the measured ones */
    int64_t timeout_ns;          /* per request, whole transfer */
    int64_t connect_timeout_ns;  /* per connection attempt */
    int64_t stall_timeout_ns;    /* no answer byte for this long ends a request; 0 = off */
    size_t max_event_bytes;      /* cap on one SSE event */
    char *prompts_path;          /* NULL = the bundled file of the dataset kind */
    /* The dataset (dataset.h): which prompts, sampled or generated from seed. */
    enum ts_dataset_kind dataset;  /* --dataset */
    int64_t num_prompts;           /* sharegpt: at most (0 = all); random: exactly */
    int sharegpt_output_len;       /* sharegpt: max_tokens = reference answer's tokens */
    int64_t input_len_tokens;      /* random: target prompt length */
    double input_len_range;        /* random: +- fraction */
    int64_t output_len_tokens;     /* random, shared-prefix: max_tokens; 0 = --max-tokens */
    double output_len_range;       /* ... +- fraction */
    int64_t prefix_len_tokens;     /* shared-prefix: system prompt length */
    int64_t groups;                /* shared-prefix: distinct system prompts */
    int64_t prompts_per_group;     /* shared-prefix: questions per system prompt */
    int64_t question_len_tokens;   /* shared-prefix: question length */
    char *out_path;              /* HDF5 results file */
    int force;                   /* overwrite existing out_path, json_path, csv_path */
    int demo;                    /* start tokstorm-mock and sweep against it */
    int no_preconnect;           /* do not open connections before each level starts */
    int64_t connect_rate;        /* preconnect: new connections/s per rank; 0 = no limit */
    char **bind_addrs;           /* numeric local addresses for connections; NULL = any */
    size_t n_bind_addrs;
    /* Secrets and transport. Where the API key is, never the key itself: run.c reads it. */
    char *api_key_env;  /* environment variable holding the API key; NULL = none */
    char *api_key_file; /* file holding the API key; NULL = none */
    char **headers;     /* -H "Name: value" lines for every request, as given (checked) */
    size_t n_headers;
    int insecure; /* https: do not verify the server's certificate */
    char *cacert; /* https: CA certificates (PEM) to verify it with; NULL = the system's */
    /* Outputs besides the results file, and what goes into it. */
    char *json_path;                /* per-level summary and run metadata as JSON; NULL = none */
    char *csv_path;                 /* the table as CSV; NULL = none */
    int record_tokens;              /* store every content event's arrival time in out_path */
    enum ts_progress_mode progress; /* live progress line during each level */
    /* Interruptions and the server check. */
    int64_t grace_ns; /* on SIGINT/SIGTERM, requests in flight may go on this long; 0 = none */
    int no_preflight; /* do not send the preflight request */
    /* Open loop: arrivals at given rates instead of C closed-loop streams. */
    double *rates; /* requests/s over all ranks, one level each; NULL = closed loop */
    size_t n_rates;
    enum ts_arrival arrival; /* gaps between arrivals */
    double burstiness;       /* gamma shape (1 = Poisson-like) */
    uint64_t seed;           /* seeds the arrival times and the dataset */
    int64_t max_concurrency; /* open loop: most requests in flight over all ranks; 0 = auto */
    int64_t requests;        /* open loop: requests per level over all ranks; 0 = duration */
    /* Saturation search. */
    int until_saturated;   /* double C (or the rate) from the first level until saturated */
    int64_t max_level;     /* the ladder's last step at most this C (or rate) */
    double max_error_rate; /* stop once more than this fraction of a level failed */
    int64_t slo_ttft_ns;   /* p99 TTFT objective; 0 = none */
    int64_t slo_tpot_ns;   /* p99 TPOT objective; 0 = none */
    int verbose;           /* 0 = warnings, 1 = info, 2 = debug */
    char *command_line;    /* argv as a shell line, secrets masked (redact.h): to record */
};

/* Parses argv into *o (defaults first). Returns 0, TS_OPT_HELP, TS_OPT_VERSION, or
 * TS_OPT_ERR with one line in msg naming the option and what is wrong with it. *o must be
 * released with options_free whatever the result. */
int options_parse(struct ts_options *o, int argc, char **argv, char *msg, size_t msg_len);

void options_free(struct ts_options *o);

/* Writes the --help text. */
void options_print_help(FILE *f);

/* Every option's effective value as one JSON object, keyed by the long option name without
 * its dashes ("max-tokens": 256); durations in seconds; null where an option does not apply
 * or is unset (e.g. "rates" in closed loop, "duration" without one). url and prompts_path,
 * when not NULL, stand for what run time resolved (the --demo mock's URL, the bundled
 * prompts file). Secrets never appear: the options that take them are recorded masked
 * (redact.h). Returns a malloc'd string, or NULL when out of memory. */
char *options_to_json(const struct ts_options *o, const char *url, const char *prompts_path);

/* "auto", "on" or "off". */
const char *options_progress_name(enum ts_progress_mode m);

#endif
