/* collect.h: every MPI call after MPI_Init: agreement on failures, broadcasts, the level
 * barrier, and the reductions and gathers that bring a level's measurements to rank 0.
 * No other module includes mpi.h. */
#ifndef TOKSTORM_COLLECT_H
#define TOKSTORM_COLLECT_H

#include <mpi.h>
#include <stddef.h>

#include "tokstorm/stats.h"

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

/* Rank 0's int64 to every rank. */
void collect_bcast_int64(const struct ts_comm *c, int64_t *v);

void collect_barrier(const struct ts_comm *c);

/* Sums the stats and merges the extremes of all ranks into rank 0's (in place there; other
 * ranks' copies are left as they were). */
void collect_level(const struct ts_comm *c, struct ts_level_stats *s,
                   struct ts_level_extremes *x);

/* Called on rank 0 with consecutive pieces of the gathered rows. Returns 0, or non-zero to
 * record a failure (the gather still completes on every rank). */
typedef int (*ts_rows_sink)(void *ctx, const struct ts_row *rows, size_t n);

/* Gathers every rank's rows to rank 0 in bounded pieces (no int overflow however many rows:
 * each MPI_Gatherv moves at most TS_GATHER_PIECE_ROWS rows per rank) and hands them to sink.
 * sink may be NULL (the rows are then received and dropped). Returns 0, or on rank 0 the
 * first non-zero return of sink. */
int collect_rows(const struct ts_comm *c, const struct ts_rows *local, ts_rows_sink sink,
                 void *ctx);

#define TS_GATHER_PIECE_ROWS 65536

#endif
