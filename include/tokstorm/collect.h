/* collect.h: every MPI call after MPI_Init: agreement on failures, broadcasts, the level
 * barrier, and the reductions and gathers that bring a level's measurements to rank 0.
 * No other module includes mpi.h. */
#ifndef TOKSTORM_COLLECT_H
#define TOKSTORM_COLLECT_H

#include <mpi.h>
#include <stddef.h>

#include "tokstorm/clocksync.h"
#include "tokstorm/progress.h"
#include "tokstorm/stats.h"
#include "tokstorm/timeline.h"

/* Who a rank is: pointer-free, gathered to rank 0 and written to the results file. */
struct ts_rank_info {
    int32_t rank;
    char host[64];                /* gethostname() */
    char address[64];             /* local address used to reach the server */
    int64_t clock_offset_ns;      /* this rank's clock - rank 0's */
    int64_t clock_uncertainty_ns; /* bound on the offset's error */
};

struct ts_comm {
    MPI_Comm comm;
    int rank;
    int size;
};

int collect_init(struct ts_comm *c, MPI_Comm comm);

/* Every rank passes its status (0 = fine, else an exit status) and, when it failed, a one-line
 * message. All ranks return the largest status; the lowest rank holding it prints its
 * message on stderr, so a failure common to all ranks is printed once. */
int collect_agree(const struct ts_comm *c, int status, const char *msg);

/* Rank 0's string (may be NULL on other ranks) into a malloc'd copy on every rank (*s). */
int collect_bcast_string(const struct ts_comm *c, char **s);

/* This process's MPI library, as MPI_Get_library_version names it, on one line. */
void collect_library_version(char *buf, size_t len);

/* Rank 0's int64 to every rank. */
void collect_bcast_int64(const struct ts_comm *c, int64_t *v);

/* Waits until every rank has arrived, sleeping (not polling) meanwhile; returns within about
 * 200 us of the last arrival. */
void collect_barrier(const struct ts_comm *c);

/* True on every rank when all ranks run on one node (share memory with each other). */
int collect_single_node(const struct ts_comm *c);

/* Sums the stats of all ranks into rank 0's (in place there; other ranks' copies are left as
 * they were) and merges the extremes on every rank (all need the steady window). */
void collect_level(const struct ts_comm *c, struct ts_level_stats *s, struct ts_level_extremes *x);

/* How hard one rank's own event loop worked in a level (gathered to rank 0). */
struct ts_rank_load {
    int32_t rank;
    int32_t pad_;         /* keeps the layout the same everywhere */
    double busy_fraction; /* of the level's run time spent working, not waiting */
    double lag_p99_ms;    /* open loop: p99 of (actual - scheduled) send time */
    double cpu_s;         /* CPU time (user + system) this rank used in the level */
    double max_rss_mib;   /* the rank's peak resident memory so far */
};

/* Gathers size bytes from every rank into all (size x ranks bytes) on rank 0 (all may be NULL
 * elsewhere). */
void collect_gather(const struct ts_comm *c, const void *mine, size_t size, void *all);

/* Estimates every rank's clock offset to rank 0 by MPI ping-pongs, keeping the fastest round
 * trip (clocksync.h): at least 16 per rank, more (up to 1000, or 200 ms) until one takes
 * under 20 us. *mine is this rank's (zero on rank 0). */
void collect_clock_sync(const struct ts_comm *c, struct ts_clock_offset *mine);

/* Sum of every rank's v, on rank 0 (0 elsewhere). */
double collect_sum_double(const struct ts_comm *c, double v);

/* Gathers one struct ts_rank_info per rank into all[0..size-1] on rank 0 (all may be NULL
 * elsewhere). */
void collect_rank_info(const struct ts_comm *c, const struct ts_rank_info *mine,
                       struct ts_rank_info *all);

/* Sums every rank's 100 ms series into *tokens, *ok, *err (malloc'd on rank 0, owned by the
 * caller, *n bins: the longest over ranks); other ranks get NULL and 0. Returns 0 or -1. */
int collect_timeseries(const struct ts_comm *c, const struct ts_timeline *t, uint64_t **tokens,
                       uint64_t **ok, uint64_t **err, size_t *n);

/* Called on rank 0 with consecutive pieces of the gathered rows. Returns 0, or non-zero to
 * record a failure (the gather still completes on every rank). */
typedef int (*ts_rows_sink)(void *ctx, const struct ts_row *rows, size_t n);

/* Gathers every rank's rows to rank 0 in bounded pieces and hands them to sink. Each round's
 * MPI_Gatherv moves at most collect_piece_rows(size) rows per rank, so one round is at most
 * TS_GATHER_ROUND_BYTES on rank 0 however many rows or ranks there are, and every count and
 * displacement (in rows) fits in an int.
 * sink may be NULL (the rows are then received and dropped). Returns 0, or on rank 0 the
 * first non-zero return of sink. */
int collect_rows(const struct ts_comm *c, const struct ts_rows *local, ts_rows_sink sink,
                 void *ctx);

/* With --record-tokens, what rank 0 does with the event times that go with the rows: begin
 * once with their total over all ranks, then put each piece, n times that belong at
 * position pos of the flattened times (pieces come in no particular order; together they
 * fill 0 .. total-1). Each returns 0, or non-zero to record a failure. */
struct ts_events_sink {
    void *ctx;
    int (*begin)(void *ctx, uint64_t total);
    int (*put)(void *ctx, uint64_t pos, const double *t_s, size_t n);
};

/* Gathers every rank's event times to rank 0 so that they line up with the rows as
 * collect_rows delivers them (call it after collect_rows, with the same rows): the times of
 * the k-th row delivered start at the sum of recorded_events of the rows delivered before
 * it. ev holds this rank's times in the order of its rows, rows->items[i].recorded_events
 * each. Each round moves at most piece_events times per rank (0: as many as keep a round
 * within TS_GATHER_ROUND_BYTES on rank 0), so memory stays bounded however long the level.
 * sink matters on rank 0 only and may be NULL (the times are dropped). Returns 0, -1 on every
 * rank when some rank's ev does not hold what its rows say (nothing is gathered), or on rank
 * 0 the first non-zero return of the sink. */
int collect_events(const struct ts_comm *c, const struct ts_rows *rows,
                   const struct ts_event_times *ev, const struct ts_events_sink *sink,
                   uint64_t piece_events);

/* Live progress: the non-blocking reductions behind rank 0's progress line, started from
 * the event loop while a level runs. collect.c explains why every rank ends up starting the
 * same number of them. */
#define TS_PROGRESS_OUTSTANDING 8 /* most reductions in flight on a rank */

struct ts_progress_sync {
    MPI_Request req[TS_PROGRESS_OUTSTANDING];
    struct ts_progress_sample in[TS_PROGRESS_OUTSTANDING], out[TS_PROGRESS_OUTSTANDING];
    unsigned head, count; /* the oldest in flight, and how many are */
};

/* Called with each finished reduction's sum, oldest first, on every rank. */
typedef void (*ts_progress_seen)(void *ctx, const struct ts_progress_sample *sum);

void collect_progress_init(struct ts_progress_sync *p);

/* From the event loop, never blocking: hands each reduction that has finished to seen, then,
 * when mine is not NULL (a sample with running = 1), starts the next one with it, unless
 * TS_PROGRESS_OUTSTANDING are still in flight (then mine is dropped). */
void collect_progress_poll(const struct ts_comm *c, struct ts_progress_sync *p,
                           const struct ts_progress_sample *mine, ts_progress_seen seen, void *ctx);

/* After the level's loop, on every rank whatever happened in it (a rank that never ran it
 * too): finishes this rank's reductions in flight, then takes part in more, with final
 * (running = 0), until one whose sum says no rank is running any more. *final is read again
 * for each, so seen may change it (a stop request that came meanwhile). Sleeps between
 * tests, so a rank done early leaves the CPU to those still measuring. Collective; it returns
 * only once every rank has left its loop, so it is also a barrier. */
void collect_progress_finish(const struct ts_comm *c, struct ts_progress_sync *p,
                             const struct ts_progress_sample *final, ts_progress_seen seen,
                             void *ctx);

#define TS_GATHER_PIECE_ROWS  65536               /* most rows per rank per round */
#define TS_GATHER_ROUND_BYTES (INT64_C(64) << 20) /* most bytes per round on rank 0 */

/* Rows per rank per round for nranks ranks: TS_GATHER_PIECE_ROWS, fewer when that many from
 * every rank would exceed TS_GATHER_ROUND_BYTES (at least 1). */
uint64_t collect_piece_rows(int nranks);

#endif
