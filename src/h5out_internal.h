/* h5out_internal.h: what h5out.c (the file, its levels), h5out_run.c (the root group: the
 * run's attributes, /ranks, /summary) and h5out_file.c (where the file is made, and write
 * failures) share. Private to those three files. */
#ifndef TOKSTORM_H5OUT_INTERNAL_H
#define TOKSTORM_H5OUT_INTERNAL_H

#include <hdf5.h>

#include "tokstorm/h5out.h"
#include "tokstorm/summary.h"

struct ts_h5out {
    hid_t file;
    hid_t group;        /* the open level, or -1 */
    hid_t requests;     /* its dataset, or -1 */
    hid_t offsets;      /* --record-tokens: its event_offsets dataset, or -1 */
    hid_t events;       /* --record-tokens: its event_time_s dataset, or -1 */
    hid_t row_type;     /* memory (and file) compound type of struct ts_row */
    hid_t summary;      /* /summary, one row per finished level, or -1 */
    hid_t summary_type; /* compound type of struct ts_summary_row */
    hsize_t rows;       /* rows written to the open level */
    hsize_t summary_rows;
    int64_t events_before; /* event times of the open level's rows written so far */
    char path[4096];
    char made[4096];     /* the file this run created: path, or beside it until h5out_commit */
    int committed;       /* the file is at path for good */
    char level_name[64]; /* the open level's name, linked into the root at h5out_level_end */
    char reason[256];    /* why HDF5's last failed call failed (the system's message if any) */
    int failed;          /* a write failed: nothing more is written */
    char error[1024];    /* the first failure, naming the path */
};

/* A write failed: records "results file PATH: WHAT: REASON" (the first failure only), stops
 * every later write, copies the record into msg and returns TS_H5_ERR_IO. */
int h5out_fail(struct ts_h5out *h, char *msg, size_t len, const char *what);

/* For a write asked after a failure: copies the first failure into msg and returns
 * TS_H5_ERR_IO, touching nothing. */
int h5out_refuse(const struct ts_h5out *h, char *msg, size_t len);

/* The H5Eset_auto2 callback h5out_create installs (ctx: the struct's reason buffer): HDF5
 * calls it when one of its API calls fails, before any later call clears the error stack,
 * and it keeps the system's message of a failed read or write (else HDF5's innermost one) for
 * the message h5out_fail composes. */
herr_t h5out_on_error(hid_t stack, void *ctx);

/* Creates path exclusively (O_EXCL), so that a file that appears meanwhile is not taken over;
 * with force, a file already there is left alone and one beside it (PATH.<pid>.tmp) is made
 * instead. Returns 0 with h->made set (and h->committed when it is path itself), or
 * TS_H5_ERR_EXISTS or TS_H5_ERR_IO with msg ("--out: ..."). */
int h5out_claim_path(struct ts_h5out *h, const char *path, int force, char *msg, size_t len);

/* Attributes of obj (a group, a dataset or the file); each returns 0 or -1. h5_attr_str
 * replaces an attribute that exists. */
int h5_attr_i64(hid_t obj, const char *name, int64_t v);
int h5_attr_f64(hid_t obj, const char *name, double v);
int h5_attr_str(hid_t obj, const char *name, const char *v);
int h5_attr_write(hid_t obj, const char *name, hid_t type, hid_t space, const void *value);

/* Creation properties of a chunked, gzip-compressed dataset of records, chunk_rows per
 * chunk. */
hid_t h5_compressed(hsize_t chunk_rows);

/* A 1-D dataset of n records of type, chunked and compressed, in where. Returns 0 or -1. */
int h5_write_table(hid_t where, const char *name, hid_t type, const void *data, size_t n);

/* An extendible 1-D dataset (0 records) of type, chunk_rows per chunk. Returns it or -1. */
hid_t h5_extendible(hid_t where, const char *name, hid_t type, hsize_t chunk_rows);

/* Appends n records to an extendible dataset holding `have` of them. Returns 0 or -1. */
int h5_append(hid_t d, hid_t type, hsize_t have, const void *data, size_t n);

/* The compound type of struct ts_summary_row (from summary.h's field table). */
hid_t h5out_summary_type(void);

/* Appends one row to /summary. Returns 0 or -1. */
int h5out_summary_append(struct ts_h5out *h, const struct ts_summary_row *row);

/* A fixed-length, NUL-terminated string type of len bytes. */
hid_t h5_fixed_string(size_t len);

#endif
