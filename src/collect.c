/* collect.c: the MPI calls that tie ranks together: agreeing on failure, broadcasting, the
 * level barrier, one reduction for a level's sums and one for its extremes, and the
 * piecewise gather of per-request rows. It knows the stats layout, not what it means. */
#include "tokstorm/collect.h"

#include "tokstorm/clock.h"

#include <limits.h>
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

void collect_library_version(char *buf, size_t len)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    MPI_Get_library_version(v, &n);
    v[n > 0 && n < (int)sizeof v ? n : 0] = '\0';
    /* Some libraries end it with a newline, or spread it over lines. */
    for (char *c = v; *c; c++)
        if (*c == '\n' || *c == '\r' || *c == '\t')
            *c = ' ';
    for (size_t end = strlen(v); end > 0 && v[end - 1] == ' '; end--)
        v[end - 1] = '\0';
    snprintf(buf, len, "%s", v);
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

/* Rank 0's map from each rank's local event times to their place in the gathered order:
 * rows arrive round by round (collect_rows), and in each round rank by rank, so rank r's
 * times of round k start at the sum of everything before it in that order. */
struct event_map {
    uint64_t rounds;
    uint64_t *count; /* [r * rounds + k]: rank r's times in row round k */
    uint64_t *pos;   /* [r * rounds + k]: where they start in the gathered order */
    uint64_t *total; /* [r]: rank r's times */
};

static uint64_t event_map_build(struct event_map *m, int nranks)
{
    uint64_t at = 0;
    for (int r = 0; r < nranks; r++)
        m->total[r] = 0;
    for (uint64_t k = 0; k < m->rounds; k++)
        for (int r = 0; r < nranks; r++) {
            m->pos[(uint64_t)r * m->rounds + k] = at;
            at += m->count[(uint64_t)r * m->rounds + k];
            m->total[r] += m->count[(uint64_t)r * m->rounds + k];
        }
    return at;
}

/* Hands rank r's local times [from, from + n), received at t, to the sink piece by piece:
 * one piece per row round they span. */
static int event_map_put(const struct event_map *m, int r, uint64_t from, const double *t,
                         uint64_t n, const struct ts_events_sink *sink)
{
    uint64_t local = 0; /* where round k's times start among rank r's own */
    for (uint64_t k = 0; k < m->rounds && n > 0; k++) {
        uint64_t len = m->count[(uint64_t)r * m->rounds + k];
        uint64_t lo = from > local ? from : local;
        uint64_t hi = from + n < local + len ? from + n : local + len;
        if (lo < hi) {
            int rc = sink->put(sink->ctx, m->pos[(uint64_t)r * m->rounds + k] + (lo - local),
                               t + (lo - from), (size_t)(hi - lo));
            if (rc != 0)
                return rc;
        }
        local += len;
    }
    return 0;
}

int collect_events(const struct ts_comm *c, const struct ts_rows *rows,
                   const struct ts_event_times *ev, const struct ts_events_sink *sink,
                   uint64_t piece_events)
{
    const int n = c->size;
    uint64_t mine = rows->count, most = 0;
    MPI_Allreduce(&mine, &most, 1, MPI_UINT64_T, MPI_MAX, c->comm);
    uint64_t piece = collect_piece_rows(n);
    struct event_map m = {.rounds = (most + piece - 1) / piece};
    uint64_t *per_round = calloc(m.rounds + 1, sizeof *per_round), my_total = 0;
    if (per_round == NULL)
        MPI_Abort(c->comm, 1); /* cannot take part in the gathers that follow */
    for (uint64_t i = 0; i < mine; i++) {
        uint64_t e = rows->items[i].recorded_events > 0 ? rows->items[i].recorded_events : 0;
        per_round[i / piece] += e;
        my_total += e;
    }
    /* The rows say where the times go: times that do not match them would land in the wrong
     * requests, so nothing is gathered unless every rank's match. */
    int consistent = my_total == ev->count, all_consistent = 0;
    MPI_Allreduce(&consistent, &all_consistent, 1, MPI_INT, MPI_MIN, c->comm);
    if (!all_consistent) {
        free(per_round);
        return -1;
    }
    if (c->rank == 0) {
        size_t cells = (size_t)n * (size_t)m.rounds + 1;
        m.count = malloc(cells * sizeof *m.count);
        m.pos = malloc(cells * sizeof *m.pos);
        m.total = malloc((size_t)n * sizeof *m.total);
        if (m.count == NULL || m.pos == NULL || m.total == NULL)
            MPI_Abort(c->comm, 1);
    }
    MPI_Gather(per_round, (int)m.rounds, MPI_UINT64_T, m.count, (int)m.rounds, MPI_UINT64_T, 0,
               c->comm);
    free(per_round);
    int rc = 0;
    if (c->rank == 0) {
        uint64_t total = event_map_build(&m, n);
        if (sink != NULL)
            rc = sink->begin(sink->ctx, total);
    }

    /* Then the times themselves, each rank's in its own order, a bounded piece per round. */
    uint64_t ep = piece_events;
    if (ep == 0)
        ep = (uint64_t)TS_GATHER_ROUND_BYTES / ((uint64_t)n * sizeof(double));
    if (ep > (uint64_t)INT_MAX / (uint64_t)n)
        ep = (uint64_t)INT_MAX / (uint64_t)n; /* counts and displacements are ints */
    if (ep < 1)
        ep = 1;
    uint64_t most_events = 0;
    MPI_Allreduce(&my_total, &most_events, 1, MPI_UINT64_T, MPI_MAX, c->comm);
    uint64_t event_rounds = (most_events + ep - 1) / ep;
    int *recv_counts = malloc((size_t)n * sizeof *recv_counts);
    int *displs = malloc((size_t)n * sizeof *displs);
    double *buf = c->rank == 0 && event_rounds > 0 ? malloc((size_t)n * ep * sizeof *buf) : NULL;
    if (!recv_counts || !displs || (c->rank == 0 && event_rounds > 0 && buf == NULL))
        MPI_Abort(c->comm, 1);
    for (uint64_t j = 0; j < event_rounds; j++) {
        uint64_t from = j * ep;
        int total = 0;
        for (int r = 0; c->rank == 0 && r < n; r++) {
            uint64_t left = m.total[r] > from ? m.total[r] - from : 0;
            recv_counts[r] = (int)(left < ep ? left : ep);
            displs[r] = total;
            total += recv_counts[r];
        }
        uint64_t left = my_total > from ? my_total - from : 0;
        int send = (int)(left < ep ? left : ep);
        MPI_Gatherv(send > 0 ? ev->t_s + from : ev->t_s, send, MPI_DOUBLE, buf, recv_counts, displs,
                    MPI_DOUBLE, 0, c->comm);
        for (int r = 0; c->rank == 0 && rc == 0 && sink != NULL && r < n; r++)
            if (recv_counts[r] > 0)
                rc = event_map_put(&m, r, from, buf + displs[r], (uint64_t)recv_counts[r], sink);
    }
    free(buf);
    free(recv_counts);
    free(displs);
    free(m.count);
    free(m.pos);
    free(m.total);
    return rc;
}

/* Live progress. Collectives on a communicator must be started in the same order and number
 * on every rank, but ranks run their loops for different lengths of time: a rank with fewer
 * streams, or faster answers, is done first. So the number of progress reductions cannot be
 * fixed in advance, nor decided by each rank's clock; it is decided by the reductions
 * themselves:
 *  - While its loop runs, a rank starts one reduction per due instant of a schedule fixed
 *    from the level's synchronised start (start + 1 s, + 2 s, ...), contributing running = 1.
 *    Ranks start each one at about the same moment, so none waits long inside it, and the
 *    loop only starts it and tests it (MPI_Test) on later ticks: it never blocks.
 *  - When its loop is over, a rank finishes the reductions it has in flight, then starts
 *    further ones at once with running = 0, waiting for each to finish before starting the
 *    next, and stops after the first whose sum of running is 0.
 * Every rank sees the same sums in the same order. The first sum of 0 (reduction m*) is one
 * every rank contributed 0 to, so every rank had left its loop before it; the ones a rank
 * started while running carry its 1 and so come before m*; after its loop it starts the next
 * one only once the previous sum was not 0. So every rank starts exactly reductions 0..m*,
 * whichever instants they fell on, and the level's next collectives match. Once the last
 * rank leaves its loop, at most one more reduction follows. */

void collect_progress_init(struct ts_progress_sync *p)
{
    memset(p, 0, sizeof *p);
}

static void progress_start(const struct ts_comm *c, struct ts_progress_sync *p,
                           const struct ts_progress_sample *mine)
{
    unsigned k = (p->head + p->count) % TS_PROGRESS_OUTSTANDING;
    p->in[k] = *mine;
    MPI_Iallreduce(&p->in[k], &p->out[k], TS_PROGRESS_FIELDS, MPI_INT64_T, MPI_SUM, c->comm,
                   &p->req[k]);
    p->count++;
}

/* Tests the oldest reduction in flight; when it has finished, hands its sum to seen and
 * returns 1 with *sum a copy. */
static int progress_test_oldest(struct ts_progress_sync *p, ts_progress_seen seen, void *ctx,
                                struct ts_progress_sample *sum)
{
    int done = 0;
    if (p->count == 0)
        return 0;
    MPI_Test(&p->req[p->head], &done, MPI_STATUS_IGNORE);
    if (!done)
        return 0;
    *sum = p->out[p->head];
    p->head = (p->head + 1) % TS_PROGRESS_OUTSTANDING;
    p->count--;
    seen(ctx, sum);
    return 1;
}

void collect_progress_poll(const struct ts_comm *c, struct ts_progress_sync *p,
                           const struct ts_progress_sample *mine, ts_progress_seen seen, void *ctx)
{
    struct ts_progress_sample sum;
    while (progress_test_oldest(p, seen, ctx, &sum))
        ;
    /* Dropping a sample when too many are out is safe: how many a rank starts while running
     * does not have to match (see above). */
    if (mine != NULL && p->count < TS_PROGRESS_OUTSTANDING)
        progress_start(c, p, mine);
}

/* Waits for the oldest reduction in flight, testing every 500 us (asleep in between). */
static void progress_wait_oldest(struct ts_progress_sync *p, ts_progress_seen seen, void *ctx,
                                 struct ts_progress_sample *sum)
{
    while (!progress_test_oldest(p, seen, ctx, sum))
        clock_sleep_ns(500000);
}

void collect_progress_finish(const struct ts_comm *c, struct ts_progress_sync *p,
                             const struct ts_progress_sample *final, ts_progress_seen seen,
                             void *ctx)
{
    struct ts_progress_sample sum;
    while (p->count > 0) /* started while running: their sums are not 0 */
        progress_wait_oldest(p, seen, ctx, &sum);
    do {
        progress_start(c, p, final);
        progress_wait_oldest(p, seen, ctx, &sum);
    } while (sum.running != 0);
}
