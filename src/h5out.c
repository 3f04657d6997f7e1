/* h5out.c: creates the results file and writes one group per level: its summary
 * attributes, the per-request compound dataset (extended piece by piece as rows arrive from
 * the gather), the event times of --record-tokens, histograms, time series. The root group
 * is h5out_run.c's; where the file is made and how a failed write is kept, h5out_file.c's.
 * With them, the only user of hdf5.h; it knows nothing of MPI or the network.
 *
 * What is on disk stays readable whatever happens later. A level is written into an
 * anonymous group, flushed, and only then linked into the root (and its /summary row added,
 * and flushed again): a run killed while a level is being written, or a disk that fills up
 * then, leaves the root as the previous flush left it, and the half-written group unreachable.
 * Between levels nothing is written at all, so a process killed during a level leaves the file
 * exactly as the last flush made it. After a failed write nothing more is written: HDF5's
 * state after an I/O error is not to be trusted to describe the file. */
#include "tokstorm/h5out.h"

#include "h5out_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One definition of the row's fields, in file order. */
static hid_t make_row_type(void)
{
    hid_t err_enum = H5Tenum_create(H5T_NATIVE_INT32);
    for (int32_t c = 0; c < TS_ERR__COUNT; c++)
        H5Tenum_insert(err_enum, stats_err_class_name(c), &c);
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(struct ts_row));
#define FIELD(name, type) H5Tinsert(t, #name, offsetof(struct ts_row, name), type)
    FIELD(rank, H5T_NATIVE_INT32);
    FIELD(late, H5T_NATIVE_INT32);
    FIELD(recorded_events, H5T_NATIVE_INT32);
    FIELD(scheduled_s, H5T_NATIVE_DOUBLE);
    FIELD(stream, H5T_NATIVE_INT32);
    FIELD(request, H5T_NATIVE_INT64);
    FIELD(prompt_index, H5T_NATIVE_INT32);
    FIELD(start_s, H5T_NATIVE_DOUBLE);
    FIELD(first_byte_s, H5T_NATIVE_DOUBLE);
    FIELD(first_token_s, H5T_NATIVE_DOUBLE);
    FIELD(first_answer_s, H5T_NATIVE_DOUBLE);
    FIELD(end_s, H5T_NATIVE_DOUBLE);
    FIELD(output_tokens, H5T_NATIVE_INT64);
    FIELD(prompt_tokens, H5T_NATIVE_INT64);
    FIELD(content_events, H5T_NATIVE_INT64);
    FIELD(reasoning_events, H5T_NATIVE_INT64);
    FIELD(tokens_from_usage, H5T_NATIVE_INT32);
    FIELD(http_status, H5T_NATIVE_INT32);
    FIELD(error_class, err_enum);
#undef FIELD
    H5Tclose(err_enum);
    return t;
}

int h5out_create(struct ts_h5out **out, const char *path, int force, char *msg, size_t msg_len)
{
    *out = NULL;
    struct ts_h5out *h = calloc(1, sizeof *h);
    if (h == NULL) {
        snprintf(msg, msg_len, "--out: out of memory");
        return TS_H5_ERR_IO;
    }
    snprintf(h->path, sizeof h->path, "%s", path);
    h->file = h->group = h->requests = h->offsets = h->events = h->summary = -1;
    h->row_type = h->summary_type = -1;
    int rc = h5out_claim_path(h, path, force, msg, msg_len);
    if (rc != 0) {
        free(h);
        return rc;
    }
    /* Errors are reported once, by us, with the reason HDF5 gave. */
    H5Eset_auto2(H5E_DEFAULT, h5out_on_error, h->reason);
    h->file = H5Fcreate(h->made, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    h->row_type = make_row_type();
    h->summary_type = h5out_summary_type();
    /* Empty until the first level ends, so a file without one still has the table. */
    if (h->file >= 0 && h->summary_type >= 0)
        h->summary = h5_extendible(h->file, "summary", h->summary_type, 64);
    /* On disk now: a directory that takes the name but not the data shows here. */
    if (h->file < 0 || h->row_type < 0 || h->summary < 0 ||
        H5Fflush(h->file, H5F_SCOPE_GLOBAL) < 0) {
        snprintf(msg, msg_len, "--out: cannot create %s: %s", h->made,
                 h->reason[0] ? h->reason : "HDF5 cannot create it");
        h5out_discard(h);
        return TS_H5_ERR_IO;
    }
    *out = h;
    return 0;
}

int h5_attr_write(hid_t obj, const char *name, hid_t type, hid_t space, const void *value)
{
    /* Written again (end_time_utc), an attribute is replaced, not an error. */
    if (H5Aexists(obj, name) > 0 && H5Adelete(obj, name) < 0)
        return -1;
    hid_t a = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0)
        return -1;
    herr_t rc = H5Awrite(a, type, value);
    H5Aclose(a);
    return rc < 0 ? -1 : 0;
}

int h5_attr_i64(hid_t obj, const char *name, int64_t v)
{
    hid_t s = H5Screate(H5S_SCALAR);
    int rc = h5_attr_write(obj, name, H5T_NATIVE_INT64, s, &v);
    H5Sclose(s);
    return rc;
}

int h5_attr_f64(hid_t obj, const char *name, double v)
{
    hid_t s = H5Screate(H5S_SCALAR);
    int rc = h5_attr_write(obj, name, H5T_NATIVE_DOUBLE, s, &v);
    H5Sclose(s);
    return rc;
}

int h5_attr_str(hid_t obj, const char *name, const char *v)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    hid_t s = H5Screate(H5S_SCALAR);
    const char *value = v ? v : "";
    int rc = h5_attr_write(obj, name, t, s, &value);
    H5Sclose(s);
    H5Tclose(t);
    return rc;
}

hid_t h5_compressed(hsize_t chunk_rows)
{
    hsize_t chunk[1] = {chunk_rows > 0 ? chunk_rows : 1};
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, chunk);
    H5Pset_deflate(dcpl, 4);
    return dcpl;
}

/* Records per chunk of a dataset of n: all of a small one, 16 Ki of a large one. */
static hsize_t chunk_for(size_t n)
{
    return n == 0 ? 1 : n < 16384 ? (hsize_t)n : 16384;
}

int h5_write_table(hid_t where, const char *name, hid_t type, const void *data, size_t n)
{
    /* Extendible so that the chunk may be larger than an empty or short table. */
    hsize_t dims[1] = {n}, maxdims[1] = {H5S_UNLIMITED};
    hid_t space = H5Screate_simple(1, dims, maxdims);
    hid_t dcpl = h5_compressed(chunk_for(n));
    hid_t d = H5Dcreate2(where, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    herr_t rc = d < 0 ? -1 : (n ? H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) : 0);
    if (d >= 0)
        H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(space);
    return d < 0 || rc < 0 ? -1 : 0;
}

hid_t h5_extendible(hid_t where, const char *name, hid_t type, hsize_t chunk_rows)
{
    hsize_t dims[1] = {0}, maxdims[1] = {H5S_UNLIMITED};
    hid_t space = H5Screate_simple(1, dims, maxdims);
    hid_t dcpl = h5_compressed(chunk_rows);
    hid_t d = H5Dcreate2(where, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(space);
    return d;
}

/* Writes n records of type into d at [at, at + n); d must be that large. */
static int write_at(hid_t d, hid_t type, hsize_t at, const void *data, size_t n)
{
    hsize_t start[1] = {at}, count[1] = {n};
    hid_t file_space = H5Dget_space(d);
    hid_t mem_space = H5Screate_simple(1, count, NULL);
    H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, NULL, count, NULL);
    herr_t rc = H5Dwrite(d, type, mem_space, file_space, H5P_DEFAULT, data);
    H5Sclose(mem_space);
    H5Sclose(file_space);
    return rc < 0 ? -1 : 0;
}

int h5_append(hid_t d, hid_t type, hsize_t have, const void *data, size_t n)
{
    hsize_t new_size[1] = {have + n};
    if (n == 0)
        return 0;
    if (H5Dset_extent(d, new_size) < 0)
        return -1;
    return write_at(d, type, have, data, n);
}

hid_t h5_fixed_string(size_t len)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, len);
    H5Tset_strpad(t, H5T_STR_NULLTERM);
    return t;
}

int h5out_level_timeseries(struct ts_h5out *h, double bin_s, const uint64_t *tokens,
                           const uint64_t *ok, const uint64_t *err, size_t n, char *msg,
                           size_t msg_len)
{
    if (h->failed)
        return h5out_refuse(h, msg, msg_len);
    struct bin {
        double t_s;
        uint64_t tokens, ok, err;
    } *bins = malloc((n + 1) * sizeof *bins);
    if (bins == NULL)
        return h5out_fail(h, msg, msg_len, "out of memory writing the time series");
    for (size_t i = 0; i < n; i++)
        bins[i] = (struct bin){(double)i * bin_s, tokens[i], ok[i], err[i]};
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof *bins);
    H5Tinsert(t, "t_s", offsetof(struct bin, t_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "tokens", offsetof(struct bin, tokens), H5T_NATIVE_UINT64);
    H5Tinsert(t, "ok", offsetof(struct bin, ok), H5T_NATIVE_UINT64);
    H5Tinsert(t, "err", offsetof(struct bin, err), H5T_NATIVE_UINT64);
    int rc = h5_write_table(h->group, "timeseries", t, bins, n);
    if (rc == 0) {
        hid_t d = H5Dopen2(h->group, "timeseries", H5P_DEFAULT);
        rc = d < 0 ? -1 : h5_attr_f64(d, "bin_s", bin_s);
        if (d >= 0)
            H5Dclose(d);
    }
    H5Tclose(t);
    free(bins);
    return rc ? h5out_fail(h, msg, msg_len, "cannot write the time series") : 0;
}

int h5out_level_hist(struct ts_h5out *h, const char *name, const struct ts_hist *hist,
                     const struct ts_hist_extremes *x, char *msg, size_t msg_len)
{
    if (h->failed)
        return h5out_refuse(h, msg, msg_len);
    struct bucket {
        int64_t lo_ns, hi_ns;
        uint64_t count;
    } *b = malloc(TS_HIST_BUCKETS * sizeof *b);
    if (b == NULL)
        return h5out_fail(h, msg, msg_len, "out of memory writing a histogram");
    size_t n = 0;
    for (int i = 0; i < TS_HIST_BUCKETS; i++)
        if (hist->buckets[i]) {
            hist_bucket_bounds(i, &b[n].lo_ns, &b[n].hi_ns);
            b[n++].count = hist->buckets[i];
        }
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof *b);
    H5Tinsert(t, "lo_ns", offsetof(struct bucket, lo_ns), H5T_NATIVE_INT64);
    H5Tinsert(t, "hi_ns", offsetof(struct bucket, hi_ns), H5T_NATIVE_INT64);
    H5Tinsert(t, "count", offsetof(struct bucket, count), H5T_NATIVE_UINT64);
    char dname[64];
    snprintf(dname, sizeof dname, "hist_%s", name);
    int rc = h5_write_table(h->group, dname, t, b, n);
    if (rc == 0) {
        hid_t d = H5Dopen2(h->group, dname, H5P_DEFAULT);
        rc = d < 0 ? -1 : 0;
        if (d >= 0) {
            rc |= h5_attr_i64(d, "count", (int64_t)hist->count);
            rc |= h5_attr_i64(d, "sum_ns", (int64_t)hist->sum_ns);
            rc |= h5_attr_i64(d, "min_ns", hist->count ? x->min_ns : 0);
            rc |= h5_attr_i64(d, "max_ns", hist->count ? x->max_ns : 0);
            H5Dclose(d);
        }
    }
    H5Tclose(t);
    free(b);
    return rc ? h5out_fail(h, msg, msg_len, "cannot write a histogram") : 0;
}

int h5out_level_clock(struct ts_h5out *h, const struct ts_rank_info *ranks, size_t n, char *msg,
                      size_t msg_len)
{
    if (h->failed)
        return h5out_refuse(h, msg, msg_len);
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof *ranks);
    H5Tinsert(t, "rank", offsetof(struct ts_rank_info, rank), H5T_NATIVE_INT32);
    H5Tinsert(t, "offset_ns", offsetof(struct ts_rank_info, clock_offset_ns), H5T_NATIVE_INT64);
    H5Tinsert(t, "uncertainty_ns", offsetof(struct ts_rank_info, clock_uncertainty_ns),
              H5T_NATIVE_INT64);
    int rc = h5_write_table(h->group, "clock", t, ranks, n);
    H5Tclose(t);
    return rc ? h5out_fail(h, msg, msg_len, "cannot write the clock table") : 0;
}

int h5out_level_loads(struct ts_h5out *h, const struct ts_rank_load *loads, size_t n, char *msg,
                      size_t msg_len)
{
    if (h->failed)
        return h5out_refuse(h, msg, msg_len);
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof *loads);
    H5Tinsert(t, "rank", offsetof(struct ts_rank_load, rank), H5T_NATIVE_INT32);
    H5Tinsert(t, "busy_fraction", offsetof(struct ts_rank_load, busy_fraction), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "send_lag_p99_ms", offsetof(struct ts_rank_load, lag_p99_ms), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "cpu_s", offsetof(struct ts_rank_load, cpu_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "max_rss_mib", offsetof(struct ts_rank_load, max_rss_mib), H5T_NATIVE_DOUBLE);
    int rc = h5_write_table(h->group, "rank_load", t, loads, n);
    H5Tclose(t);
    return rc ? h5out_fail(h, msg, msg_len, "cannot write the rank load table") : 0;
}

int h5out_level_begin(struct ts_h5out *h, const char *name, int record_events, char *msg,
                      size_t msg_len)
{
    if (h->failed)
        return h5out_refuse(h, msg, msg_len);
    /* Anonymous until h5out_level_end links it in, whole and flushed. */
    snprintf(h->level_name, sizeof h->level_name, "%s", name);
    h->group = H5Gcreate_anon(h->file, H5P_DEFAULT, H5P_DEFAULT);
    if (h->group < 0)
        return h5out_fail(h, msg, msg_len, "cannot create a level group");
    h->requests = h5_extendible(h->group, "requests", h->row_type, 4096);
    h->rows = 0;
    if (h->requests < 0)
        return h5out_fail(h, msg, msg_len, "cannot create the requests dataset");
    h->events_before = 0;
    if (!record_events)
        return 0;
    /* CSR: one offset per request and one more, the first 0, each written as the rows are. */
    int64_t zero = 0;
    h->offsets = h5_extendible(h->group, "event_offsets", H5T_NATIVE_INT64, 16384);
    if (h->offsets < 0 || h5_append(h->offsets, H5T_NATIVE_INT64, 0, &zero, 1) != 0)
        return h5out_fail(h, msg, msg_len, "cannot create the event_offsets dataset");
    return 0;
}

int h5out_level_rows(struct ts_h5out *h, const struct ts_row *rows, size_t n, char *msg,
                     size_t msg_len)
{
    if (h->failed)
        return h5out_refuse(h, msg, msg_len);
    if (n == 0)
        return 0;
    if (h5_append(h->requests, h->row_type, h->rows, rows, n) != 0)
        return h5out_fail(h, msg, msg_len, "cannot write requests");
    if (h->offsets >= 0) {
        int64_t *ends = malloc(n * sizeof *ends);
        if (ends == NULL)
            return h5out_fail(h, msg, msg_len, "out of memory writing event offsets");
        for (size_t i = 0; i < n; i++)
            ends[i] = h->events_before += rows[i].recorded_events;
        int rc = h5_append(h->offsets, H5T_NATIVE_INT64, h->rows + 1, ends, n);
        free(ends);
        if (rc != 0)
            return h5out_fail(h, msg, msg_len, "cannot write event offsets");
    }
    h->rows += n;
    return 0;
}

int h5out_level_events_begin(struct ts_h5out *h, uint64_t total, char *msg, size_t msg_len)
{
    if (h->failed)
        return h5out_refuse(h, msg, msg_len);
    /* Its size is known before the first time arrives; the pieces then land in place. */
    hsize_t dims[1] = {total}, maxdims[1] = {H5S_UNLIMITED};
    hid_t space = H5Screate_simple(1, dims, maxdims);
    hid_t dcpl = h5_compressed(total < 65536 ? (total > 0 ? total : 1) : 65536);
    h->events = H5Dcreate2(h->group, "event_time_s", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl,
                           H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(space);
    if (h->events < 0)
        return h5out_fail(h, msg, msg_len, "cannot create the event_time_s dataset");
    return 0;
}

int h5out_level_events(struct ts_h5out *h, uint64_t pos, const double *t_s, size_t n, char *msg,
                       size_t msg_len)
{
    if (h->failed)
        return h5out_refuse(h, msg, msg_len);
    if (n > 0 && write_at(h->events, H5T_NATIVE_DOUBLE, pos, t_s, n) != 0)
        return h5out_fail(h, msg, msg_len, "cannot write event times");
    return 0;
}

/* Closes the open level's datasets (those that are open). Returns 0, or -1 when closing one
 * failed: closing a dataset writes the chunks still in its cache, and a chunk that could not
 * be written must not go unnoticed. */
static int close_datasets(struct ts_h5out *h)
{
    int rc = 0;
    hid_t *open[] = {&h->requests, &h->offsets, &h->events};
    for (size_t i = 0; i < sizeof open / sizeof *open; i++)
        if (*open[i] >= 0) {
            rc |= H5Dclose(*open[i]) < 0 ? -1 : 0;
            *open[i] = -1;
        }
    return rc;
}

/* And the group: returns 0 or -1 as close_datasets. */
static int close_level(struct ts_h5out *h)
{
    int rc = close_datasets(h);
    if (h->group >= 0)
        rc |= H5Gclose(h->group) < 0 ? -1 : 0;
    h->group = -1;
    return rc;
}

/* <m>_p50_ms, <m>_p90_ms, ... <m>_max_ms and <m>_count for one distribution. */
static int attr_dist(hid_t g, const char *m, const struct ts_dist *d)
{
    const struct {
        const char *suffix;
        double value;
    } f[] = {{"p50", d->p50},   {"p90", d->p90},   {"p95", d->p95}, {"p99", d->p99},
             {"p999", d->p999}, {"mean", d->mean}, {"min", d->min}, {"max", d->max}};
    char name[64];
    int bad = 0;
    for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
        snprintf(name, sizeof name, "%s_%s_ms", m, f[i].suffix);
        bad |= h5_attr_f64(g, name, f[i].value);
    }
    snprintf(name, sizeof name, "%s_count", m);
    return bad | h5_attr_i64(g, name, (int64_t)d->count);
}

int h5out_level_end(struct ts_h5out *h, const struct ts_level_summary *s,
                    const struct ts_summary_row *row, char *msg, size_t msg_len)
{
    if (h->failed)
        return h5out_refuse(h, msg, msg_len);
    hid_t g = h->group;
    int bad = 0, complete = row->complete;
    bad |= h5_attr_i64(g, "concurrency", s->concurrency);
    bad |= h5_attr_f64(g, "rate", s->rate);
    bad |= h5_attr_i64(g, "late", (int64_t)s->late);
    bad |= h5_attr_i64(g, "good", (int64_t)s->good);
    bad |= h5_attr_f64(g, "req_s", s->req_s);
    bad |= h5_attr_f64(g, "goodput_req_s", s->goodput_req_s);
    bad |= h5_attr_f64(g, "tokens_per_event", s->tokens_per_event);
    bad |= h5_attr_i64(g, "reasoning_events", (int64_t)s->reasoning_events);
    bad |= h5_attr_i64(g, "answer_events", (int64_t)s->answer_events);
    bad |= h5_attr_i64(g, "complete", complete);
    bad |= h5_attr_f64(g, "start_s", s->start_s);
    bad |= h5_attr_f64(g, "wall_s", s->wall_s);
    bad |= h5_attr_i64(g, "output_tokens", (int64_t)s->output_tokens);
    bad |= h5_attr_i64(g, "prompt_tokens", (int64_t)s->prompt_tokens);
    bad |= h5_attr_i64(g, "ok", (int64_t)s->ok);
    bad |= h5_attr_i64(g, "err", (int64_t)s->err);
    for (int c = 1; c < TS_ERR__COUNT; c++) {
        char name[64];
        snprintf(name, sizeof name, "err_%s", stats_err_class_name(c));
        bad |= h5_attr_i64(g, name, (int64_t)s->err_by_class[c]);
    }
    bad |= h5_attr_f64(g, "agg_tok_s", s->agg_tok_s);
    bad |= h5_attr_f64(g, "per_req_tok_s", s->per_req_tok_s);
    bad |= h5_attr_f64(g, "steady_s", s->steady_s);
    bad |= h5_attr_f64(g, "steady_tokens", s->steady_tokens);
    bad |= h5_attr_f64(g, "steady_tok_s", s->steady_tok_s);
    bad |= h5_attr_f64(g, "start_skew_s", s->start_skew_s);
    bad |= attr_dist(g, "ttft", &s->ttft);
    bad |= attr_dist(g, "itl", &s->itl);
    bad |= attr_dist(g, "tpot", &s->tpot);
    bad |= attr_dist(g, "e2e", &s->e2e);
    bad |= attr_dist(g, "send_lag", &s->lag);
    bad |= attr_dist(g, "ttft_sched", &s->ttft_sched);
    bad |= attr_dist(g, "e2e_sched", &s->e2e_sched);
    bad |= attr_dist(g, "stamp_delay", &s->stamp_delay);
    bad |= attr_dist(g, "ttft_error", &s->ttft_error);
    bad |= attr_dist(g, "itl_error", &s->itl_error);
    bad |= attr_dist(g, "ttft_answer", &s->ttft_answer);
    /* The level, whole, on disk before anything reachable points at it. */
    bad |= close_datasets(h);
    if (bad || H5Fflush(h->file, H5F_SCOPE_GLOBAL) < 0)
        return h5out_fail(h, msg, msg_len, "cannot write the level");
    /* Then the link and the summary row: a few hundred bytes, on disk at the same flush. */
    if (H5Olink(g, h->file, h->level_name, H5P_DEFAULT, H5P_DEFAULT) < 0 || close_level(h) != 0 ||
        h5out_summary_append(h, row) != 0 || H5Fflush(h->file, H5F_SCOPE_GLOBAL) < 0)
        return h5out_fail(h, msg, msg_len, "cannot add the level to the file");
    return 0;
}

int h5out_close(struct ts_h5out *h, char *msg, size_t msg_len)
{
    if (h == NULL)
        return 0;
    int failed_before = h->failed, bad = 0;
    bad |= close_level(h); /* a level that never reached h5out_level_end stays unreachable */
    if (h->summary >= 0)
        bad |= H5Dclose(h->summary) < 0;
    if (h->summary_type >= 0)
        H5Tclose(h->summary_type);
    if (h->row_type >= 0)
        H5Tclose(h->row_type);
    if (h->file >= 0)
        bad |= H5Fclose(h->file) < 0;
    int rc = 0;
    /* A failure reported before is not reported again. */
    if (bad && !failed_before && msg != NULL)
        rc = h5out_fail(h, msg, msg_len, "cannot close it");
    else if (bad && !failed_before)
        rc = TS_H5_ERR_IO;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* its reason buffer goes with h */
    free(h);
    return rc;
}
