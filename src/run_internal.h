/* run_internal.h: what run.c (set-up, preflight, tear-down), sweep.c (the levels),
 * run_output.c (what is recorded) and run_progress.c (the live line) share: the state every
 * rank holds for a run. Private to those files. */
#ifndef TOKSTORM_RUN_INTERNAL_H
#define TOKSTORM_RUN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tokstorm/clocksync.h"
#include "tokstorm/collect.h"
#include "tokstorm/dataset.h"
#include "tokstorm/demo.h"
#include "tokstorm/h5out.h"
#include "tokstorm/http.h"
#include "tokstorm/level.h"
#include "tokstorm/options.h"
#include "tokstorm/progress.h"
#include "tokstorm/prompts.h"
#include "tokstorm/runinfo.h"
#include "tokstorm/saturation.h"
#include "tokstorm/stats.h"
#include "tokstorm/summary.h"

#define MSG_LEN 512

/* How rank 0 shows progress during a level (the same on every rank: all take part). */
enum run_progress_mode {
    RUN_PROGRESS_OFF = 0,
    RUN_PROGRESS_TERMINAL = 1, /* one line, rewritten in place (\r) */
    RUN_PROGRESS_LINES = 2,    /* a line each time (--progress on into a pipe or file) */
};

/* What the periodic reductions of run_progress.c go with. */
enum run_phase {
    RUN_PHASE_PREPARE = 0, /* a level's warm-up and preconnect: only a stop request counts */
    RUN_PHASE_MEASURE = 1, /* its measured run: the progress line's figures too */
};

/* The periodic reductions of the current phase, and the live progress line they feed. They
 * run whatever --progress says: they also carry the ranks' stop requests. */
struct run_progress {
    enum run_progress_mode mode;
    enum run_phase phase;
    struct ts_progress_sync sync;    /* the reductions in flight */
    int begun;                       /* this rank's loop began the level's measured run */
    int64_t start_ns;                /* the phase's start (local clock) */
    int64_t due_ns;                  /* the next reduction (local clock) */
    struct ts_progress_sample final; /* this rank's share once its loop is over */
    struct ts_progress_line line;    /* rank 0 */
    size_t shown;                    /* rank 0, terminal: length of the line on screen */
};

/* Stopping on SIGINT or SIGTERM (interrupt.h). A rank's signal reaches the others through
 * the periodic reductions (run_progress.c) or an agreement (collect_agree); every rank acts
 * on what a reduction or agreement returned, never on its own flag alone, so all of them stop
 * at the same point of the sequence of collectives. */
struct run_stop {
    int agreed;       /* some rank was signalled, and all know it: no level begins after this */
    int64_t since_ns; /* this rank stopped sending in the current level at (local clock), or 0 */
    int cancelled;    /* this rank has cancelled what the grace left in flight */
};

/* What every rank holds for the sweep. */
struct run_ctx {
    struct ts_comm comm;
    struct ts_options opt;
    struct ts_prompts prompts;
    char *prompts_path;             /* resolved; NULL for a generated dataset */
    struct ts_dataset_spec dataset; /* what built prompts */
    char dataset_hash[32];          /* "fnv1a64:<16 hex digits>" of prompts (dataset_hash) */
    char *dataset_params;           /* rank 0: dataset_params_json, for the results file */
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
    struct ts_rank_load *loads;   /* rank 0: everyone's, for the current level */
    int64_t open_cap;             /* open loop: requests in flight over all ranks, at most */
    double skew_limit_s;          /* rank 0: when the start skew deserves a line */
    struct run_progress progress;
    /* What every request carries besides its body, -H headers and the API key's. */
    char *auth_header; /* "Authorization: Bearer KEY", from rank 0; NULL = no key */
    char **headers;    /* -H as given, then auth_header: for struct ts_http_config */
    size_t n_headers;
    struct run_stop stop;
    int file_committed; /* rank 0: the results file is the run's (h5out_commit) */
    /* Rank 0: what is recorded about the run (run_output.c). */
    struct ts_run_info info;
    char *options_json;
    const char **hosts; /* distinct host names, pointing into ranks[] */
    char mpi_version[512];
    char end_utc[32];
    struct ts_summary_row *table; /* one row per finished level, beside summaries */
    struct ts_saturation_point saturation;
    const char *stop_reason; /* set once a saturation search has ended */
};

/* Aligns every rank's clock to rank 0's and gathers who is where into r->ranks (rank 0).
 * The first call also fixes the common timeline's zero: the run's start. Collective. */
void sweep_align_clocks(struct run_ctx *r);

/* Runs every level of the sweep (or the saturation ladder). Collective; returns the exit
 * status, the same on every rank. */
int sweep_run(struct run_ctx *r);

/* ---- run_output.c: the results file's root, --json and --csv (rank 0 only) ---- */

/* Before any request: checks that --json and --csv can be written. Returns 0 or
 * TS_EXIT_USAGE with msg. */
int run_output_probe(const struct run_ctx *r, char *msg);

/* Fills r->info and writes the root attributes, /ranks, and --json/--csv without levels.
 * Returns 0 or TS_EXIT_OUTPUT with msg. */
int run_output_begin(struct run_ctx *r, char *msg);

/* A level ended, and its summary is the last of r->summaries: it goes into its group's
 * attributes (linking the group into the file) and /summary, and --json and --csv are
 * rewritten with it (even when the results file failed). Returns 0 or TS_EXIT_OUTPUT with
 * the first failure in msg. */
int run_output_level(struct run_ctx *r, const char *group, int complete, char *msg);

/* The run ended: its end time, and the saturation point if any, into the file (unless a
 * write to it failed before) and --json. Returns 0 or TS_EXIT_OUTPUT with msg. */
int run_output_end(struct run_ctx *r, char *msg);

void run_output_free(struct run_ctx *r);

/* ---- run_progress.c: the live line (--progress) ---- */

/* Rank 0: how progress is shown, from --progress and where stdout goes. */
enum run_progress_mode run_progress_choose(enum ts_progress_mode option);

/* Before a level (every rank): what rank 0's line names and counts. */
void run_progress_level(struct run_ctx *r, const struct ts_level_plan *plan, double rate);

/* A phase begins on this rank at start_ns (local clock; for the measured run, the level's
 * synchronised start): its reductions are due every TS_PROGRESS_PERIOD_NS from then. */
void run_progress_begin(struct run_ctx *r, enum run_phase phase, int64_t start_ns);

/* From the phase's loops' tick: starts the reduction that is due (this rank's figures and its
 * stop request), and takes in those that have finished: rank 0 shows the measured run's
 * figures; a sum with a stop request sets r->stop.agreed. Never blocks. */
void run_progress_tick(struct run_ctx *r, int64_t now_ns);

/* After the phase's loops, on every rank whatever happened in them (collective): the
 * reductions go on until every rank has left its loops, so this is also a barrier, and
 * r->stop.agreed is then the same on every rank. Rank 0 clears its line from the terminal. */
void run_progress_finish(struct run_ctx *r);

#endif
