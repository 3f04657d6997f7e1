/* collect.c: the MPI calls that tie ranks together: agreeing on failure, broadcasting, the
 * level barrier, one reduction for a level's sums and one for its extremes, and the
 * piecewise gather of per-request rows. It knows the stats layout, not what it means. */
#include "tokstorm/collect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int collect_init(struct ts_comm *c, MPI_Comm comm)
{
    c->comm = comm;
    MPI_Comm_rank(comm, &c->rank);
    MPI_Comm_size(comm, &c->size);
    return 0;
}

int collect_agree(const struct ts_comm *c, int status, const char *msg)
{
    struct {
        int value;
        int rank;
    } in = {status, c->rank}, out;
    /* MAXLOC breaks ties by the lowest rank: that rank speaks for all. */
    MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MAXLOC, c->comm);
    if (out.value != 0 && out.rank == c->rank && msg != NULL && msg[0] != '\0') {
        if (c->rank == 0)
            fprintf(stderr, "tokstorm: %s\n", msg);
        else
            fprintf(stderr, "tokstorm[%d]: %s\n", c->rank, msg);
        fflush(stderr);
    }
    return out.value;
}

int collect_bcast_string(const struct ts_comm *c, char **s)
{
    int64_t len = (c->rank == 0 && *s) ? (int64_t)strlen(*s) : 0;
    collect_bcast_int64(c, &len);
    if (c->rank != 0) {
        free(*s);
        *s = malloc((size_t)len + 1);
        if (*s == NULL)
            MPI_Abort(c->comm, 1); /* cannot take part in the broadcast that follows */
    }
    MPI_Bcast(*s, (int)len + 1, MPI_CHAR, 0, c->comm);
    return 0;
}

void collect_bcast_int64(const struct ts_comm *c, int64_t *v)
{
    MPI_Bcast(v, 1, MPI_INT64_T, 0, c->comm);
}

void collect_barrier(const struct ts_comm *c)
{
    MPI_Barrier(c->comm);
}

void collect_level(const struct ts_comm *c, struct ts_level_stats *s,
                   struct ts_level_extremes *x)
{
    int n = (int)(sizeof *s / sizeof(uint64_t));
    if (c->rank == 0)
        MPI_Reduce(MPI_IN_PLACE, s, n, MPI_UINT64_T, MPI_SUM, 0, c->comm);
    else
        MPI_Reduce(s, NULL, n, MPI_UINT64_T, MPI_SUM, 0, c->comm);
    int64_t packed[TS_EXTREMES_PACKED], merged[TS_EXTREMES_PACKED];
    stats_extremes_pack(x, packed);
    MPI_Reduce(packed, merged, TS_EXTREMES_PACKED, MPI_INT64_T, MPI_MAX, 0, c->comm);
    if (c->rank == 0)
        stats_extremes_unpack(merged, x);
}

int collect_rows(const struct ts_comm *c, const struct ts_rows *local, ts_rows_sink sink,
                 void *ctx)
{
    /* Rows move as opaque fixed-size records: every rank runs the same binary on the same
     * architecture, as MPI jobs of one build do. */
    MPI_Datatype row_type;
    MPI_Type_contiguous((int)sizeof(struct ts_row), MPI_BYTE, &row_type);
    MPI_Type_commit(&row_type);

    uint64_t mine = local->count;
    uint64_t *counts = malloc((size_t)c->size * sizeof *counts);
    int *recv_counts = malloc((size_t)c->size * sizeof *recv_counts);
    int *displs = malloc((size_t)c->size * sizeof *displs);
    if (!counts || !recv_counts || !displs)
        MPI_Abort(c->comm, 1);
    MPI_Allgather(&mine, 1, MPI_UINT64_T, counts, 1, MPI_UINT64_T, c->comm);
    uint64_t most = 0;
    for (int r = 0; r < c->size; r++)
        most = counts[r] > most ? counts[r] : most;
    uint64_t rounds = (most + TS_GATHER_PIECE_ROWS - 1) / TS_GATHER_PIECE_ROWS;

    struct ts_row *buf = NULL;
    if (c->rank == 0 && rounds > 0) {
        uint64_t piece = most < TS_GATHER_PIECE_ROWS ? most : TS_GATHER_PIECE_ROWS;
        buf = malloc((size_t)c->size * (size_t)piece * sizeof *buf);
        if (buf == NULL)
            MPI_Abort(c->comm, 1);
    }
    int rc = 0;
    for (uint64_t k = 0; k < rounds; k++) {
        uint64_t from = k * TS_GATHER_PIECE_ROWS;
        int total = 0;
        for (int r = 0; r < c->size; r++) {
            uint64_t left = counts[r] > from ? counts[r] - from : 0;
            recv_counts[r] = (int)(left < TS_GATHER_PIECE_ROWS ? left : TS_GATHER_PIECE_ROWS);
            displs[r] = total;
            total += recv_counts[r];
        }
        const struct ts_row *send = local->items ? local->items + (from < mine ? from : mine)
                                                 : NULL;
        MPI_Gatherv(send, recv_counts[c->rank], row_type, buf, recv_counts, displs, row_type, 0,
                    c->comm);
        if (c->rank == 0 && rc == 0 && total > 0 && sink != NULL)
            rc = sink(ctx, buf, (size_t)total);
    }
    free(buf);
    free(counts);
    free(recv_counts);
    free(displs);
    MPI_Type_free(&row_type);
    return rc;
}
