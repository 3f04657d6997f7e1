/* collect.c: the MPI calls that tie ranks together: agreeing on failure, broadcasting, the
 * level barrier, one reduction for a level's sums and one for its extremes, and the
 * piecewise gather of per-request rows. It knows the stats layout, not what it means. */
#include "tokstorm/collect.h"

#include "tokstorm/clock.h"

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
    if (c->rank != 0 || *s == NULL) { /* rank 0 without a string sends "" */
        free(*s);
        *s = malloc((size_t)len + 1);
        if (*s == NULL)
            MPI_Abort(c->comm, 1); /* cannot take part in the broadcast that follows */
        (*s)[0] = '\0';
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
    /* MPI_Barrier would poll flat out, taking a core from ranks still at work on the same
     * host (a rank that has finished its streams waits here for the others); a non-blocking
     * barrier tested every 200 us leaves it to them. */
    MPI_Request req;
    MPI_Ibarrier(c->comm, &req);
    for (int done = 0;;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done)
            break;
        clock_sleep_ns(200000);
    }
}

int collect_single_node(const struct ts_comm *c)
{
    MPI_Comm node;
    int node_size;
    MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    int mine = node_size == c->size, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, c->comm);
    return all;
}

void collect_level(const struct ts_comm *c, struct ts_level_stats *s, struct ts_level_extremes *x)
{
    int n = (int)(sizeof *s / sizeof(uint64_t));
    if (c->rank == 0)
        MPI_Reduce(MPI_IN_PLACE, s, n, MPI_UINT64_T, MPI_SUM, 0, c->comm);
    else
        MPI_Reduce(s, NULL, n, MPI_UINT64_T, MPI_SUM, 0, c->comm);
    int64_t packed[TS_EXTREMES_PACKED], merged[TS_EXTREMES_PACKED];
    stats_extremes_pack(x, packed);
    MPI_Allreduce(packed, merged, TS_EXTREMES_PACKED, MPI_INT64_T, MPI_MAX, c->comm);
    stats_extremes_unpack(merged, x);
}

/* Ping-pongs with rank r until a round trip is fast enough to bound the offset tightly, or
 * the budget is spent. The ping carries 1 while more rounds follow and 0 to release r. */
static void ping_rank(const struct ts_comm *c, int r, struct ts_clock_sample *samples,
                      struct ts_clock_offset *out)
{
    enum { TAG = 4711, MIN_ROUNDS = 16, MAX_ROUNDS = 1000 };
    const int64_t good_rtt_ns = 20000, budget_ns = 200000000;
    int64_t began = clock_now_ns(), best_rtt = INT64_MAX;
    int n = 0;
    while (n < MAX_ROUNDS &&
           (n < MIN_ROUNDS || (best_rtt > good_rtt_ns && clock_now_ns() - began < budget_ns))) {
        int64_t more = 1, remote;
        samples[n].t0_ns = clock_now_ns();
        MPI_Send(&more, 1, MPI_INT64_T, r, TAG, c->comm);
        MPI_Recv(&remote, 1, MPI_INT64_T, r, TAG, c->comm, MPI_STATUS_IGNORE);
        samples[n].t1_ns = clock_now_ns();
        samples[n].remote_ns = remote;
        int64_t rtt = samples[n].t1_ns - samples[n].t0_ns;
        best_rtt = rtt < best_rtt ? rtt : best_rtt;
        n++;
    }
    int64_t done = 0;
    MPI_Send(&done, 1, MPI_INT64_T, r, TAG, c->comm);
    clocksync_best(samples, (size_t)n, out);
}

void collect_clock_sync(const struct ts_comm *c, struct ts_clock_offset *mine)
{
    enum { TAG = 4711 };
    mine->offset_ns = mine->uncertainty_ns = 0;
    if (c->size == 1)
        return;
    struct ts_clock_offset *offsets = NULL;
    if (c->rank == 0) {
        struct ts_clock_sample *samples = malloc(1000 * sizeof *samples);
        offsets = calloc((size_t)c->size, sizeof *offsets);
        if (samples == NULL || offsets == NULL)
            MPI_Abort(c->comm, 1); /* every other rank waits for our pings */
        /* One rank at a time, so that no other traffic shares the round trips. */
        for (int r = 1; r < c->size; r++)
            ping_rank(c, r, samples, &offsets[r]);
        free(samples);
    } else {
        for (;;) {
            int64_t more, now;
            MPI_Recv(&more, 1, MPI_INT64_T, 0, TAG, c->comm, MPI_STATUS_IGNORE);
            if (!more)
                break;
            now = clock_now_ns();
            MPI_Send(&now, 1, MPI_INT64_T, 0, TAG, c->comm);
        }
    }
    int64_t pair[2];
    int64_t *all = NULL;
    if (c->rank == 0) {
        all = malloc(2 * (size_t)c->size * sizeof *all);
        if (all == NULL)
            MPI_Abort(c->comm, 1);
        for (int r = 0; r < c->size; r++) {
            all[2 * r] = offsets[r].offset_ns;
            all[2 * r + 1] = offsets[r].uncertainty_ns;
        }
    }
    MPI_Scatter(all, 2, MPI_INT64_T, pair, 2, MPI_INT64_T, 0, c->comm);
    mine->offset_ns = pair[0];
    mine->uncertainty_ns = pair[1];
    free(all);
    free(offsets);
}

double collect_sum_double(const struct ts_comm *c, double v)
{
    double sum = 0;
    MPI_Reduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, c->comm);
    return c->rank == 0 ? sum : 0;
}

void collect_rank_info(const struct ts_comm *c, const struct ts_rank_info *mine,
                       struct ts_rank_info *all)
{
    collect_gather(c, mine, sizeof *mine, all);
}

void collect_gather(const struct ts_comm *c, const void *mine, size_t size, void *all)
{
    MPI_Gather(mine, (int)size, MPI_BYTE, all, (int)size, MPI_BYTE, 0, c->comm);
}

int collect_timeseries(const struct ts_comm *c, const struct ts_timeline *t, uint64_t **tokens,
                       uint64_t **ok, uint64_t **err, size_t *n)
{
    uint64_t mine = timeline_series_len(t), longest = 0;
    MPI_Allreduce(&mine, &longest, 1, MPI_UINT64_T, MPI_MAX, c->comm);
    size_t len = (size_t)longest;
    /* One buffer of three series so that one reduction carries them all. */
    uint64_t *buf = malloc((3 * len + 1) * sizeof *buf);
    uint64_t *sum = c->rank == 0 ? malloc((3 * len + 1) * sizeof *sum) : NULL;
    if (buf == NULL || (c->rank == 0 && sum == NULL))
        MPI_Abort(c->comm, 1); /* cannot take part in the reduction */
    timeline_series(t, len, buf, buf + len, buf + 2 * len);
    MPI_Reduce(buf, sum, (int)(3 * len), MPI_UINT64_T, MPI_SUM, 0, c->comm);
    free(buf);
    *tokens = *ok = *err = NULL;
    *n = 0;
    if (c->rank != 0)
        return 0;
    *tokens = malloc((len + 1) * sizeof **tokens);
    *ok = malloc((len + 1) * sizeof **ok);
    *err = malloc((len + 1) * sizeof **err);
    if (!*tokens || !*ok || !*err) {
        free(*tokens);
        free(*ok);
        free(*err);
        free(sum);
        *tokens = *ok = *err = NULL;
        return -1;
    }
    memcpy(*tokens, sum, len * sizeof *sum);
    memcpy(*ok, sum + len, len * sizeof *sum);
    memcpy(*err, sum + 2 * len, len * sizeof *sum);
    free(sum);
    *n = len;
    return 0;
}

uint64_t collect_piece_rows(int nranks)
{
    uint64_t rows = TS_GATHER_ROUND_BYTES / ((uint64_t)nranks * sizeof(struct ts_row));
    if (rows < 1)
        rows = 1;
    return rows < TS_GATHER_PIECE_ROWS ? rows : TS_GATHER_PIECE_ROWS;
}

int collect_rows(const struct ts_comm *c, const struct ts_rows *local, ts_rows_sink sink, void *ctx)
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
    uint64_t piece = collect_piece_rows(c->size);
    uint64_t rounds = (most + piece - 1) / piece;

    struct ts_row *buf = NULL;
    if (c->rank == 0 && rounds > 0) {
        uint64_t rows = most < piece ? most : piece;
        buf = malloc((size_t)c->size * (size_t)rows * sizeof *buf);
        if (buf == NULL)
            MPI_Abort(c->comm, 1);
    }
    int rc = 0;
    for (uint64_t k = 0; k < rounds; k++) {
        uint64_t from = k * piece;
        int total = 0; /* at most TS_GATHER_ROUND_BYTES / sizeof(struct ts_row): fits an int */
        for (int r = 0; r < c->size; r++) {
            uint64_t left = counts[r] > from ? counts[r] - from : 0;
            recv_counts[r] = (int)(left < piece ? left : piece);
            displs[r] = total;
            total += recv_counts[r];
        }
        const struct ts_row *send =
            local->items ? local->items + (from < mine ? from : mine) : NULL;
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
