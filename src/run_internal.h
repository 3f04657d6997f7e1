/* run_internal.h: what run.c (set-up, preflight, tear-down) and sweep.c (the levels) share:
 * the state every rank holds for a run. Private to those two files. */
#ifndef TOKSTORM_RUN_INTERNAL_H
#define TOKSTORM_RUN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tokstorm/clocksync.h"
#include "tokstorm/collect.h"
#include "tokstorm/demo.h"
#include "tokstorm/h5out.h"
#include "tokstorm/http.h"
#include "tokstorm/level.h"
#include "tokstorm/options.h"
#include "tokstorm/prompts.h"
#include "tokstorm/stats.h"

#define MSG_LEN 512

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
    struct ts_rank_load *loads;   /* rank 0: everyone's, for the current level */
    int64_t open_cap;             /* open loop: requests in flight over all ranks, at most */
    double skew_limit_s;          /* rank 0: when the start skew deserves a line */
};

/* Aligns every rank's clock to rank 0's and gathers who is where into r->ranks (rank 0).
 * The first call also fixes the common timeline's zero: the run's start. Collective. */
void sweep_align_clocks(struct run_ctx *r);

/* Runs every level of the sweep (or the saturation ladder). Collective; returns the exit
 * status, the same on every rank. */
int sweep_run(struct run_ctx *r);

#endif
