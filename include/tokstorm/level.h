/* level.h: one concurrency level on one rank: which streams this rank runs, which request
 * each stream sends next (closed loop), and what each finished request adds to the rows and
 * stats. Time is passed in; nothing here knows of curl, MPI or files. */
#ifndef TOKSTORM_LEVEL_H
#define TOKSTORM_LEVEL_H

#include <stddef.h>
#include <stdint.h>

#include "tokstorm/schedule.h"
#include "tokstorm/stats.h"
#include "tokstorm/timeline.h"
#include "tokstorm/xfer.h"

struct ts_level_plan {
    int64_t concurrency;         /* global C */
    int rank;                    /* this rank */
    int64_t first_stream;        /* global index of this rank's first stream */
    int64_t local_streams;       /* how many streams this rank runs (may be 0) */
    int64_t requests_per_stream; /* measured requests per stream; 0 = until duration_ns */
    int64_t duration_ns;         /* no measured request starts after start + this; 0 = off */
    int64_t warmup;              /* warm-up requests each stream sent before (in their own
                                    phase): measured request indices start here */
    size_t prompt_count;         /* prompts to choose from */
    int64_t slo_ttft_ns;         /* a request meets the objectives (counts in goodput) when */
    int64_t slo_tpot_ns;         /* its TTFT and TPOT are within these; 0 = no objective */
    int record_events;           /* keep each measured request's content event times */
    /* Open loop (open_loop = 1): local_streams is then the number of request slots. */
    int open_loop;
    double rate_per_s;     /* this rank's arrival rate */
    int64_t open_requests; /* this rank's requests; 0 = arrivals until duration_ns */
    enum ts_arrival arrival;
    double burstiness;
    uint64_t seed; /* this rank's and level's seed */
    int nranks;    /* for the global request index behind the prompt choice */
};

/* Rank r of n runs floor(C/n) streams, plus one if r < C mod n; its first global stream
 * index is the sum of the shares of ranks before it. */
void level_share(int64_t concurrency, int rank, int nranks, int64_t *first_stream,
                 int64_t *local_streams);

/* The request a stream is sending now. */
struct ts_level_request {
    int64_t index;        /* index in its stream, warm-up included (open loop: on this rank) */
    int64_t prompt_index; /* (global stream + index * C) mod prompt_count */
    int64_t scheduled_ns; /* open loop: when it was due (local clock); closed loop: 0 */
    int late;             /* open loop: it waited for a free slot */
};

/* The prompt that request `index` of local stream s takes: (global stream + index * C) mod
 * prompt_count, so that ranks and streams do not send the same sequence. */
int64_t level_prompt_index(const struct ts_level_plan *plan, int64_t s, int64_t index);

/* Times: origin_ns is the local clock reading of the common timeline's zero (the run's start
 * on rank 0's clock, converted to this rank's); rows and extremes are relative to it.
 * start_ns is the local clock reading at which this level began. */
struct ts_level {
    struct ts_level_plan plan;
    int64_t origin_ns;                /* local reading of common time zero */
    int64_t start_ns;                 /* local reading of the level's start */
    int64_t *issued;                  /* per local stream: requests started */
    struct ts_level_request *current; /* per local stream: the request in flight */
    size_t streams_cap;
    int64_t streams_measuring;    /* streams that have begun their measure phase */
    int64_t first_start_max_ns;   /* latest start of a stream's first measured request so far */
    struct ts_level_stats *stats; /* heap: the histograms are ~150 KiB */
    struct ts_level_extremes extremes;
    struct ts_rows rows;         /* measured requests only */
    struct ts_timeline timeline; /* tokens and ends of measured requests */
    struct ts_schedule schedule; /* open loop: the arrivals */
    int64_t taken;               /* open loop: arrivals handed out */
    uint64_t rows_lost;          /* rows or timeline entries dropped for lack of memory */
    int stopped;                 /* level_stop was called: nothing more is sent */
    /* plan.record_events: the rows' content event times, in row order (stats.h). */
    struct ts_event_times events;
};

/* Returns 0 or -1 (out of memory). */
int level_init(struct ts_level *l);
void level_free(struct ts_level *l);

/* Resets l for a new level beginning at local clock start_ns, with the common timeline's
 * zero at local clock origin_ns. Returns 0 or -1 (out of memory). */
int level_begin(struct ts_level *l, const struct ts_level_plan *plan, int64_t origin_ns,
                int64_t start_ns);

/* Decides local stream s's next request at now_ns. Returns 1 and fills *out (also kept as
 * the stream's current request), or 0 when the stream has finished (call it again and it
 * stays 0). */
int level_next(struct ts_level *l, int64_t s, int64_t now_ns, struct ts_level_request *out);

/* Records now_ns as this rank's start for the start skew (otherwise its first request's). */
void level_mark_start(struct ts_level *l, int64_t now_ns);

/* The level is being stopped (the run was interrupted): from now on level_next says every
 * stream has finished and level_next_due that no arrival is left. Streams (open loop: this
 * rank's arrivals) that still had requests to send count in stats->c.cut_off, so that whether
 * the level ran to its end can be told afterwards. */
void level_stop(struct ts_level *l);

/* Open loop: when the next arrival is due (local clock), or INT64_MAX when the level has no
 * more (its request count or duration is reached). */
int64_t level_next_due(const struct ts_level *l);

/* Open loop: hands the due arrival to slot; late when it had to wait for the slot. */
void level_take(struct ts_level *l, int64_t slot, int late, struct ts_level_request *out);

/* Local stream s's current request ended at now_ns: finishes x into a row and records it in
 * the rows, stats and timeline. */
void level_done(struct ts_level *l, int64_t s, struct ts_xfer *x, enum ts_transport how,
                const char *detail, int64_t now_ns);

/* Converts a local clock reading to common-timeline ns. */
static inline int64_t level_common_ns(const struct ts_level *l, int64_t local_ns)
{
    return local_ns - l->origin_ns;
}

#endif
