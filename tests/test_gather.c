/* test_gather.c: collect_rows and collect_events under mpirun. Every rank's rows reach rank 0
 * complete, in order per rank and exactly once, in pieces of bounded size, whatever the counts
 * (none, one, uneven, exact multiples of a piece, millions); the rows' event times (as
 * --record-tokens keeps them) land beside their rows, in bounded pieces too. Rank 0 streams
 * each piece into a results file with h5out and checks it as it arrives; the file is then
 * read back with the HDF5 C API and checked against the generator formula, never against the
 * gathered data. */
#include "tokstorm/collect.h"
#include "tokstorm/h5out.h"
#include "tokstorm/stats.h"
#include "tokstorm/summary.h"

#include <hdf5.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* gcc defines __SANITIZE_ADDRESS__ under -fsanitize=address; clang answers __has_feature. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

#define LEVEL_C        8     /* the level every case writes: /level_8/requests ("level_8") */
#define READ_ROWS      50000 /* rows per H5Dread when reading the file back */
#define REPORT_BAD_MAX 5     /* bad rows described on stderr per pass; the rest are counted */
/* Event times per rank per round: small, and prime, so that rounds of times end inside rows'
 * rounds and inside a row's times. */
#define EVENT_PIECE 30011

/* ---- the generator: row i of rank r, by field name ---- */

enum gather_case { CASE_EVEN, CASE_UNEVEN, CASE_EDGES, CASE_EMPTY, CASE_ONE, CASE__COUNT };

static const char *const case_names[CASE__COUNT] = {"even", "uneven", "edges", "empty", "one"};

/* Rows rank r of size fabricates in each case. */
static int64_t case_rows(int which, int rank, int size)
{
    const int64_t p = (int64_t)collect_piece_rows(size);
    switch (which) {
    case CASE_EVEN: /* 4 ranks: 2 million rows, ceil(500000 / 65536) = 8 pieces */
        return 500000;
    case CASE_UNEVEN: /* 300k, 400k, 500k, 600k */
        return 300000 + 100000 * (int64_t)rank;
    case CASE_EDGES: { /* the root sends nothing; others end on, just past, two pieces */
        const int64_t n[4] = {0, p, 2 * p, p + 1};
        return n[rank % 4];
    }
    case CASE_EMPTY:
        return 0;
    case CASE_ONE: /* one row, on the last rank only */
        return rank == size - 1 ? 1 : 0;
    }
    return 0;
}

/* Event times kept for row i of rank r: none for most (as for failed requests), 1 to 3 for
 * one row in 7. */
static int32_t row_events(int rank, int64_t i)
{
    return (i * 5 + rank) % 7 == 0 ? (int32_t)(1 + i % 3) : 0;
}

/* Fields are set by name after zeroing, so fields added to struct ts_row later are 0 and
 * nothing here depends on the layout. */
static void make_row(int rank, int64_t i, struct ts_row *row)
{
    memset(row, 0, sizeof *row);
    int64_t ec = (i * 7 + rank) % 23;
    row->rank = rank;
    row->stream = (int32_t)(rank * 64 + i % 64);
    row->request = i;
    row->prompt_index = (int32_t)((i * 31 + rank) % 1009);
    row->error_class = (int32_t)(ec < TS_ERR__COUNT ? ec : TS_ERR_NONE);
    row->http_status = row->error_class == TS_ERR_NONE ? 200 : (int32_t)(400 + ec);
    row->tokens_from_usage = (int32_t)((i + rank) & 1);
    /* Above 2^32, so a 64-bit field narrowed anywhere on the way shows. */
    row->output_tokens = ((int64_t)(rank + 1) << 33) + i * 3;
    row->prompt_tokens = i % 4096 + rank;
    row->content_events = (i * 13) ^ rank;
    row->reasoning_events = (i * 5) ^ rank;
    row->start_s = rank * 1e4 + (double)i * 1e-3;
    row->first_byte_s = row->start_s + 0.01 * (rank + 1);
    row->first_token_s = row->error_class ? -1.0 : row->start_s + 0.02 + (double)(i % 100) * 1e-4;
    row->first_answer_s = row->error_class ? -1.0 : row->first_token_s + (double)(i % 7) * 1e-3;
    row->end_s = row->start_s + 0.5 + (double)(i % 1000) * 1e-3;
    row->recorded_events = row_events(rank, i);
}

/* Event time j of row i of rank r: an integer, exact in a double, that names all three. */
static double event_value(int rank, int64_t i, int j)
{
    return (double)((int64_t)rank * 10000000 + i * 4 + j);
}

static int rows_same(const struct ts_row *a, const struct ts_row *b)
{
    return a->rank == b->rank && a->stream == b->stream && a->request == b->request &&
           a->prompt_index == b->prompt_index && a->error_class == b->error_class &&
           a->http_status == b->http_status && a->tokens_from_usage == b->tokens_from_usage &&
           a->output_tokens == b->output_tokens && a->prompt_tokens == b->prompt_tokens &&
           a->content_events == b->content_events && a->start_s == b->start_s &&
           a->first_byte_s == b->first_byte_s && a->first_token_s == b->first_token_s &&
           a->end_s == b->end_s && a->recorded_events == b->recorded_events &&
           a->reasoning_events == b->reasoning_events && a->first_answer_s == b->first_answer_s;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9u;
    return h ^ (h >> 29);
}

static uint64_t bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* A checksum of every field; per rank the sums of it are compared (order is checked apart). */
static uint64_t row_hash(const struct ts_row *w)
{
    uint64_t h = 0;
    h = mix(h, (uint64_t)(int64_t)w->rank);
    h = mix(h, (uint64_t)(int64_t)w->stream);
    h = mix(h, (uint64_t)w->request);
    h = mix(h, (uint64_t)(int64_t)w->prompt_index);
    h = mix(h, (uint64_t)(int64_t)w->error_class);
    h = mix(h, (uint64_t)(int64_t)w->http_status);
    h = mix(h, (uint64_t)(int64_t)w->tokens_from_usage);
    h = mix(h, (uint64_t)w->output_tokens);
    h = mix(h, (uint64_t)w->prompt_tokens);
    h = mix(h, (uint64_t)w->content_events);
    h = mix(h, bits(w->start_s));
    h = mix(h, bits(w->first_byte_s));
    h = mix(h, bits(w->first_token_s));
    h = mix(h, (uint64_t)(int64_t)w->recorded_events);
    h = mix(h, (uint64_t)w->reasoning_events);
    h = mix(h, bits(w->first_answer_s));
    return mix(h, bits(w->end_s));
}

/* ---- following rows as rank 0 sees them ---- */

/* Per rank the requests must come as 0, 1, 2, ... (so each exactly once, in order), each row
 * with every field as make_row made it. */
struct row_audit {
    int size;
    int64_t *seen; /* per rank: rows seen, which is also the request index expected next */
    uint64_t *sum; /* per rank: sum of row_hash */
    int64_t bad;   /* rows from no rank, out of order, or with a field not as generated */
    int64_t total; /* rows seen */
    const char *where;
};

static int audit_init(struct row_audit *a, int size, const char *where)
{
    a->size = size;
    a->seen = calloc((size_t)size, sizeof *a->seen);
    a->sum = calloc((size_t)size, sizeof *a->sum);
    a->bad = a->total = 0;
    a->where = where;
    return a->seen && a->sum ? 0 : -1;
}

static void audit_free(struct row_audit *a)
{
    free(a->seen);
    free(a->sum);
}

static void audit_rows(struct row_audit *a, const struct ts_row *rows, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        const struct ts_row *got = &rows[k];
        int r = got->rank;
        struct ts_row want;
        const char *why = NULL;
        if (r < 0 || r >= a->size) {
            why = "no such rank";
        } else {
            make_row(r, a->seen[r], &want);
            if (got->request != a->seen[r])
                why = "request out of order, missing or repeated";
            else if (!rows_same(got, &want))
                why = "a field differs from the generator's";
            a->sum[r] += row_hash(got);
            a->seen[r]++;
        }
        if (why != NULL) {
            if (a->bad < REPORT_BAD_MAX)
                fprintf(stderr, "%s: row %lld (rank %d, request %lld): %s\n", a->where,
                        (long long)(a->total), r, (long long)got->request, why);
            a->bad++;
        }
        a->total++;
    }
}

/* ---- rank 0's sink: check each piece, then append it to the file ---- */

struct sink_ctx {
    struct ts_h5out *h5;
    int which, size;
    struct row_audit audit;
    int64_t pieces;                 /* sink calls so far */
    int64_t bad_pieces;             /* pieces whose length is not the round's expected one */
    int64_t most_per_rank;          /* most rows of one rank in one piece */
    int64_t *in_piece;              /* per rank: rows in the current piece */
    const struct ts_row *first_buf; /* the buffer of the first piece */
    int64_t other_bufs;             /* pieces handed over in another buffer */
    char msg[512];
};

/* Rows of round k: each rank sends the next piece of its rows, or what's left. */
static int64_t round_rows(int which, int size, int64_t k)
{
    const int64_t piece = (int64_t)collect_piece_rows(size);
    int64_t n = 0, from = k * piece;
    for (int r = 0; r < size; r++) {
        int64_t left = case_rows(which, r, size) - from;
        n += left <= 0 ? 0 : left < piece ? left : piece;
    }
    return n;
}

static int check_piece(void *ctx, const struct ts_row *rows, size_t n)
{
    struct sink_ctx *s = ctx;
    if ((int64_t)n != round_rows(s->which, s->size, s->pieces)) {
        fprintf(stderr, "gather %s: piece %lld has %zu rows, expected %lld\n", case_names[s->which],
                (long long)s->pieces, n, (long long)round_rows(s->which, s->size, s->pieces));
        s->bad_pieces++;
    }
    if (s->pieces == 0)
        s->first_buf = rows;
    else if (rows != s->first_buf)
        s->other_bufs++;
    s->pieces++;
    memset(s->in_piece, 0, (size_t)s->size * sizeof *s->in_piece);
    for (size_t k = 0; k < n; k++)
        if (rows[k].rank >= 0 && rows[k].rank < s->size)
            s->in_piece[rows[k].rank]++;
    for (int r = 0; r < s->size; r++)
        if (s->in_piece[r] > s->most_per_rank)
            s->most_per_rank = s->in_piece[r];
    audit_rows(&s->audit, rows, n);
    if (s->h5 == NULL)
        return -1;
    return h5out_level_rows(s->h5, rows, n, s->msg, sizeof s->msg);
}

/* ---- rank 0's sink for the event times ---- */

struct event_sink {
    struct ts_h5out *h5;
    uint64_t total;  /* as begin was told */
    uint64_t got;    /* times put */
    uint64_t most;   /* most times in one put */
    int64_t outside; /* puts reaching past the total */
    int begins;
    char msg[512];
};

static int events_begin(void *ctx, uint64_t total)
{
    struct event_sink *e = ctx;
    e->total = total;
    e->begins++;
    return e->h5 ? h5out_level_events_begin(e->h5, total, e->msg, sizeof e->msg) : -1;
}

static int events_put(void *ctx, uint64_t pos, const double *t_s, size_t n)
{
    struct event_sink *e = ctx;
    e->got += n;
    e->most = n > e->most ? n : e->most;
    e->outside += pos + n > e->total;
    return e->h5 ? h5out_level_events(e->h5, pos, t_s, n, e->msg, sizeof e->msg) : -1;
}

/* ---- reading the file back with the HDF5 C API ---- */

static const char *const row_fields[] = {
    "rank",          "stream",        "request",         "prompt_index",
    "start_s",       "first_byte_s",  "first_token_s",   "end_s",
    "output_tokens", "prompt_tokens", "content_events",  "tokens_from_usage",
    "http_status",   "error_class",   "recorded_events", "reasoning_events",
    "first_answer_s",
};

/* The memory type to read struct ts_row by field name; error_class keeps the file's enum
 * (HDF5 converts enum to enum, not enum to integer). */
static hid_t read_type(hid_t file_type)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(struct ts_row));
#define FIELD(name, type) H5Tinsert(t, #name, offsetof(struct ts_row, name), type)
    FIELD(rank, H5T_NATIVE_INT32);
    FIELD(stream, H5T_NATIVE_INT32);
    FIELD(request, H5T_NATIVE_INT64);
    FIELD(prompt_index, H5T_NATIVE_INT32);
    FIELD(start_s, H5T_NATIVE_DOUBLE);
    FIELD(first_byte_s, H5T_NATIVE_DOUBLE);
    FIELD(first_token_s, H5T_NATIVE_DOUBLE);
    FIELD(end_s, H5T_NATIVE_DOUBLE);
    FIELD(output_tokens, H5T_NATIVE_INT64);
    FIELD(prompt_tokens, H5T_NATIVE_INT64);
    FIELD(content_events, H5T_NATIVE_INT64);
    FIELD(tokens_from_usage, H5T_NATIVE_INT32);
    FIELD(http_status, H5T_NATIVE_INT32);
    FIELD(recorded_events, H5T_NATIVE_INT32);
    FIELD(reasoning_events, H5T_NATIVE_INT64);
    FIELD(first_answer_s, H5T_NATIVE_DOUBLE);
    int ec = H5Tget_member_index(file_type, "error_class");
    hid_t ec_file = ec >= 0 ? H5Tget_member_type(file_type, (unsigned)ec) : -1;
    hid_t ec_mem = ec_file >= 0 ? H5Tget_native_type(ec_file, H5T_DIR_ASCEND) : -1;
    FIELD(error_class, ec_mem >= 0 ? ec_mem : H5T_NATIVE_INT32);
#undef FIELD
    if (ec_mem >= 0)
        H5Tclose(ec_mem);
    if (ec_file >= 0)
        H5Tclose(ec_file);
    return t;
}

/* Rows at..at+n-1 of the file (rows[]) against event_offsets and event_time_s: each row's
 * span is its recorded_events long and holds the generator's times. Returns the bad rows. */
static int64_t verify_events(hid_t offsets, hid_t times, hsize_t at, const struct ts_row *rows,
                             size_t n)
{
    int64_t bad = 0, *off = malloc((n + 1) * sizeof *off);
    hsize_t start[1] = {at}, count[1] = {n + 1};
    hid_t os = H5Dget_space(offsets), ms = H5Screate_simple(1, count, NULL);
    H5Sselect_hyperslab(os, H5S_SELECT_SET, start, NULL, count, NULL);
    if (off == NULL || H5Dread(offsets, H5T_NATIVE_INT64, ms, os, H5P_DEFAULT, off) < 0) {
        bad = (int64_t)n;
        n = 0;
    }
    H5Sclose(ms);
    H5Sclose(os);
    size_t n_t = n ? (size_t)(off[n] - off[0]) : 0;
    double *t = malloc((n_t + 1) * sizeof *t);
    if (n_t > 0) {
        hsize_t tstart[1] = {(hsize_t)off[0]}, tcount[1] = {n_t};
        hid_t tspace = H5Dget_space(times), tms = H5Screate_simple(1, tcount, NULL);
        H5Sselect_hyperslab(tspace, H5S_SELECT_SET, tstart, NULL, tcount, NULL);
        if (t == NULL || H5Dread(times, H5T_NATIVE_DOUBLE, tms, tspace, H5P_DEFAULT, t) < 0) {
            bad = (int64_t)n;
            n = 0;
        }
        H5Sclose(tms);
        H5Sclose(tspace);
    }
    for (size_t k = 0; k < n; k++) {
        int ok = off[k + 1] - off[k] == rows[k].recorded_events;
        for (int j = 0; ok && j < rows[k].recorded_events; j++)
            ok = t[off[k] - off[0] + j] == event_value(rows[k].rank, rows[k].request, j);
        if (!ok && bad < REPORT_BAD_MAX)
            fprintf(stderr, "gather: row %llu (rank %d, request %lld): event times misplaced\n",
                    (unsigned long long)(at + k), rows[k].rank, (long long)rows[k].request);
        bad += !ok;
    }
    free(off);
    free(t);
    return bad;
}

static void verify_file(const char *path, int which, int size)
{
    const char *name = case_names[which];
    int64_t want_total = 0;
    for (int r = 0; r < size; r++)
        want_total += case_rows(which, r, size);

    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0);
    if (f < 0)
        return;
    char dset_name[64];
    snprintf(dset_name, sizeof dset_name, "level_%d/requests", LEVEL_C);
    hid_t d = H5Dopen2(f, dset_name, H5P_DEFAULT);
    CHECK(d >= 0);
    if (d < 0) {
        H5Fclose(f);
        return;
    }
    hid_t space = H5Dget_space(d);
    hsize_t dims[1] = {0};
    CHECK_EQ_INT(H5Sget_simple_extent_ndims(space), 1);
    H5Sget_simple_extent_dims(space, dims, NULL);
    CHECK_EQ_INT(dims[0], want_total);

    hid_t file_type = H5Dget_type(d);
    int missing = 0;
    for (size_t k = 0; k < sizeof row_fields / sizeof *row_fields; k++)
        if (H5Tget_member_index(file_type, row_fields[k]) < 0) {
            fprintf(stderr, "gather %s: the file has no field %s\n", name, row_fields[k]);
            missing++;
        }
    CHECK_EQ_INT(missing, 0);
    hid_t mem_type = read_type(file_type);

    char where[64];
    snprintf(where, sizeof where, "gather %s, file", name);
    struct row_audit a;
    CHECK(audit_init(&a, size, where) == 0);
    struct ts_row *buf = malloc((size_t)READ_ROWS * sizeof *buf);
    CHECK(buf != NULL);
    int read_fail = 0;
    int64_t events_bad = 0;
    snprintf(dset_name, sizeof dset_name, "level_%d/event_offsets", LEVEL_C);
    hid_t offsets = H5Dopen2(f, dset_name, H5P_DEFAULT);
    snprintf(dset_name, sizeof dset_name, "level_%d/event_time_s", LEVEL_C);
    hid_t times = H5Dopen2(f, dset_name, H5P_DEFAULT);
    CHECK(offsets >= 0 && times >= 0);
    for (hsize_t at = 0; buf && at < dims[0]; at += READ_ROWS) {
        hsize_t start[1] = {at}, count[1] = {dims[0] - at < READ_ROWS ? dims[0] - at : READ_ROWS};
        hid_t mem_space = H5Screate_simple(1, count, NULL);
        H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
        if (H5Dread(d, mem_type, mem_space, space, H5P_DEFAULT, buf) < 0)
            read_fail++;
        else
            audit_rows(&a, buf, (size_t)count[0]);
        H5Sclose(mem_space);
        if (offsets >= 0 && times >= 0)
            events_bad += verify_events(offsets, times, at, buf, (size_t)count[0]);
    }
    CHECK_EQ_INT(read_fail, 0);
    CHECK_EQ_INT(events_bad, 0);
    if (offsets >= 0 && times >= 0) {
        /* One offset per row and one more; as many times as the last offset says. */
        hid_t os = H5Dget_space(offsets), ts = H5Dget_space(times);
        hsize_t n_off = 0, n_t = 0, last[1] = {dims[0]}, one[1] = {1};
        int64_t end = -1;
        H5Sget_simple_extent_dims(os, &n_off, NULL);
        H5Sget_simple_extent_dims(ts, &n_t, NULL);
        hid_t ms = H5Screate_simple(1, one, NULL);
        H5Sselect_hyperslab(os, H5S_SELECT_SET, last, NULL, one, NULL);
        H5Dread(offsets, H5T_NATIVE_INT64, ms, os, H5P_DEFAULT, &end);
        CHECK_EQ_INT(n_off, dims[0] + 1);
        CHECK_EQ_INT(end, (int64_t)n_t);
        H5Sclose(ms);
        H5Sclose(os);
        H5Sclose(ts);
    }
    if (offsets >= 0)
        H5Dclose(offsets);
    if (times >= 0)
        H5Dclose(times);
    CHECK_EQ_INT(a.total, want_total);
    CHECK_EQ_INT(a.bad, 0);

    /* Per-rank counts and checksums against the formula alone. */
    int counts_bad = 0, sums_bad = 0;
    for (int r = 0; r < size; r++) {
        int64_t n = case_rows(which, r, size);
        uint64_t sum = 0;
        struct ts_row w;
        for (int64_t i = 0; i < n; i++) {
            make_row(r, i, &w);
            sum += row_hash(&w);
        }
        counts_bad += a.seen[r] != n;
        sums_bad += a.sum[r] != sum;
    }
    CHECK_EQ_INT(counts_bad, 0);
    CHECK_EQ_INT(sums_bad, 0);

    free(buf);
    audit_free(&a);
    H5Tclose(mem_type);
    H5Tclose(file_type);
    H5Sclose(space);
    H5Dclose(d);
    H5Fclose(f);
}

/* ---- one case on every rank ---- */

static void run_case(const struct ts_comm *c, int which)
{
    const char *name = case_names[which];
    double t0 = MPI_Wtime();
    int64_t mine = case_rows(which, c->rank, c->size);
    struct ts_rows rows;
    rows_init(&rows);
    int made = 1;
    struct ts_row row;
    struct ts_event_times ev;
    events_init(&ev);
    ev.cap = (size_t)mine * 3 + 1;
    ev.t_s = malloc(ev.cap * sizeof *ev.t_s);
    made = ev.t_s != NULL;
    for (int64_t i = 0; i < mine && made; i++) {
        make_row(c->rank, i, &row);
        made = rows_append(&rows, &row) == 0;
        for (int j = 0; j < row.recorded_events; j++)
            ev.t_s[ev.count++] = event_value(c->rank, i, j);
    }
    CHECK(made); /* a rank short of memory still takes part in the gather below */

    struct sink_ctx s;
    memset(&s, 0, sizeof s);
    s.which = which;
    s.size = c->size;
    char path[] = "/tmp/tokstorm_test_gather_XXXXXX.h5";
    int have_file = 0;
    if (c->rank == 0) {
        char where[64];
        snprintf(where, sizeof where, "gather %s, sink", name);
        CHECK(audit_init(&s.audit, c->size, where) == 0);
        s.in_piece = calloc((size_t)c->size, sizeof *s.in_piece);
        CHECK(s.in_piece != NULL);
        int fd = mkstemps(path, 3);
        CHECK(fd >= 0);
        if (fd >= 0) {
            close(fd);
            have_file = 1;
            CHECK_EQ_INT(h5out_create(&s.h5, path, 1, s.msg, sizeof s.msg), 0);
            CHECK_EQ_INT(h5out_commit(s.h5, s.msg, sizeof s.msg), 0);
            int begun = s.h5 ? h5out_level_begin(s.h5, "level_8", 1, s.msg, sizeof s.msg) : -1;
            CHECK_EQ_INT(begun, 0);
            if (begun != 0) {
                h5out_close(s.h5, NULL, 0);
                s.h5 = NULL;
            }
        }
        if (s.msg[0])
            fprintf(stderr, "gather %s: %s\n", name, s.msg);
    }
    double t1 = MPI_Wtime();

    int rc = collect_rows(c, &rows, c->rank == 0 && s.in_piece ? check_piece : NULL, &s);
    CHECK_EQ_INT(rc, 0);
    struct event_sink es;
    memset(&es, 0, sizeof es);
    es.h5 = s.h5;
    struct ts_events_sink events = {&es, events_begin, events_put};
    CHECK_EQ_INT(collect_events(c, &rows, &ev, &events, EVENT_PIECE), 0);
    if (es.msg[0])
        fprintf(stderr, "gather %s: %s\n", name, es.msg);
    /* Times that do not match their rows are refused on every rank, before any is moved. */
    ev.count += c->rank == c->size - 1;
    CHECK_EQ_INT(collect_events(c, &rows, &ev, NULL, EVENT_PIECE), -1);
    events_free(&ev);
    rows_free(&rows);
    if (c->rank != 0)
        return;

    if (rc != 0 && s.msg[0])
        fprintf(stderr, "gather %s: %s\n", name, s.msg);
    int64_t want_total = 0, most = 0;
    for (int r = 0; r < c->size; r++) {
        int64_t n = case_rows(which, r, c->size);
        want_total += n;
        most = n > most ? n : most;
    }
    /* Why no count or displacement can overflow: collect_rows moves rows as one contiguous
     * MPI type of sizeof(struct ts_row) bytes, so its int recv_counts and displs count rows,
     * and a round holds at most collect_piece_rows(size) rows of each rank, which is scaled
     * down with the number of ranks so that a round never exceeds TS_GATHER_ROUND_BYTES
     * (64 MiB) on rank 0: every count, displacement and their total stay far below 2^31, for
     * any number of rows and any number of ranks, as checked here up to a million ranks. So
     * it is enough to check that every round moved at most one piece of any rank, in exactly
     * ceil(most / piece) rounds (8 for 500000 rows a rank on 4 ranks): 2 million rows never
     * make one large MPI call. */
    const int64_t piece = (int64_t)collect_piece_rows(c->size);
    int bounded = 1;
    for (int ranks = 1; ranks <= 1000000; ranks *= 10) {
        uint64_t per_rank = collect_piece_rows(ranks);
        bounded &= per_rank >= 1 && per_rank <= TS_GATHER_PIECE_ROWS;
        bounded &= per_rank == 1 || per_rank * (uint64_t)ranks * sizeof(struct ts_row) <=
                                        (uint64_t)TS_GATHER_ROUND_BYTES;
        bounded &= per_rank * (uint64_t)ranks <= INT_MAX;
    }
    CHECK(bounded);
    int64_t want_pieces = (most + piece - 1) / piece;
    if (which == CASE_EVEN && c->size == 4)
        CHECK_EQ_INT(want_pieces, 8);
    CHECK_EQ_INT(s.pieces, want_pieces);
    CHECK_EQ_INT(s.bad_pieces, 0);
    CHECK(s.most_per_rank <= piece);
    /* One receive buffer reused for every piece: rank 0 holds one piece at a time. */
    CHECK_EQ_INT(s.other_bufs, 0);
    CHECK_EQ_INT(s.audit.total, want_total);
    CHECK_EQ_INT(s.audit.bad, 0);
    int counts_bad = 0;
    for (int r = 0; r < c->size; r++)
        counts_bad += s.audit.seen[r] != case_rows(which, r, c->size);
    CHECK_EQ_INT(counts_bad, 0);
    uint64_t want_events = 0;
    for (int r = 0; r < c->size; r++)
        for (int64_t i = 0; i < case_rows(which, r, c->size); i++)
            want_events += (uint64_t)row_events(r, i);
    CHECK_EQ_INT(es.begins, 1);
    CHECK_EQ_INT(es.total, want_events);
    CHECK_EQ_INT(es.got, want_events);
    CHECK_EQ_INT(es.outside, 0);
    CHECK(es.most <= EVENT_PIECE);

    if (s.h5) {
        struct ts_level_summary sum;
        memset(&sum, 0, sizeof sum);
        sum.concurrency = LEVEL_C;
        struct ts_summary_row srow;
        summary_row_make(&sum, "level_8", 1, &srow);
        CHECK_EQ_INT(h5out_level_end(s.h5, &sum, &srow, s.msg, sizeof s.msg), 0);
    }
    CHECK_EQ_INT(h5out_close(s.h5, s.msg, sizeof s.msg), 0);
    double t3 = MPI_Wtime();
    if (have_file) {
        verify_file(path, which, c->size);
        CHECK_EQ_INT(unlink(path), 0);
    }
    double t4 = MPI_Wtime();
    printf("gather %-6s: %8lld rows in %lld pieces; generate %.2f s, gather+write %.2f s, "
           "read back %.2f s\n",
           name, (long long)want_total, (long long)s.pieces, t1 - t0, t3 - t1, t4 - t3);
    fflush(stdout);
    audit_free(&s.audit);
    free(s.in_piece);
}

/* Peak resident set of this process in KiB (0 when /proc is not there). */
static long peak_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return 0;
    char line[256];
    long kib = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    struct ts_comm c;
    collect_init(&c, MPI_COMM_WORLD);

    for (int which = 0; which < CASE__COUNT; which++)
        run_case(&c, which);

    /* Rank 0's extra memory: its own rows are no more than any other rank's biggest share,
     * so beyond what the other ranks peak at it may hold one round's receive buffer, one
     * read-back buffer and HDF5's caches, never a level's rows (the even case's 2 million). */
    long hwm = peak_rss_kib(), others = 0;
    long *all = c.rank == 0 ? calloc((size_t)c.size, sizeof *all) : NULL;
    MPI_Gather(&hwm, 1, MPI_LONG, all, 1, MPI_LONG, 0, c.comm);
    if (c.rank == 0 && all != NULL) {
        for (int r = 1; r < c.size; r++)
            others = all[r] > others ? all[r] : others;
        long piece_kib =
            (long)((uint64_t)c.size * collect_piece_rows(c.size) * sizeof(struct ts_row) / 1024);
        printf("gather: peak RSS (VmHWM) rank 0 %.1f MiB, other ranks at most %.1f MiB, "
               "one round %.1f MiB\n",
               hwm / 1024.0, others / 1024.0, piece_kib / 1024.0);
        if (c.size > 1 && hwm > 0 && !UNDER_ASAN)
            CHECK(hwm <= others + 2 * piece_kib + 64 * 1024);
        if (UNDER_ASAN)
            printf("gather: peak RSS not checked: under ASan it counts freed blocks held in its "
                   "quarantine and the shadow memory\n");
    }
    free(all);

    /* Every rank's checks count; every rank leaves with rank 0's verdict. */
    int counts[2] = {check_passed, check_failed};
    MPI_Reduce(c.rank == 0 ? MPI_IN_PLACE : counts, counts, 2, MPI_INT, MPI_SUM, 0, c.comm);
    int status = 0;
    if (c.rank == 0) {
        check_passed = counts[0];
        check_failed = counts[1];
        status = check_report("gather");
        fflush(stdout);
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, c.comm);
    MPI_Finalize();
    return status;
}
