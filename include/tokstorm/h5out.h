/* h5out.h: the results file, written by rank 0 only (Debian's HDF5 is serial: gather, then
 * write). The only user of hdf5.h. Layout (schema_version 1), documented in README.md:
 *   /                     run attributes (version, url, model, api, levels, ranks, ...)
 *   /level_<C>/           one group per finished level, with the summary as attributes
 *   /level_<C>/requests   compound dataset, one struct ts_row per measured request
 * Each level is flushed to disk before the next starts. */
#ifndef TOKSTORM_H5OUT_H
#define TOKSTORM_H5OUT_H

#include <stddef.h>
#include <stdint.h>

#include "tokstorm/stats.h"

#define TS_H5_SCHEMA_VERSION 1

#define TS_H5_ERR_EXISTS (-1) /* the file exists and force was not given */
#define TS_H5_ERR_IO     (-2) /* HDF5 could not create or write the file */

struct ts_h5out;

/* What the root group records about the run. */
struct ts_run_info {
    const char *version;
    const char *url;
    const char *model;
    const char *api;
    const int64_t *levels;
    size_t n_levels;
    int ranks;
    const char *start_utc;
    const char *command_line;
    const char *prompts_path;
    int64_t prompt_count;
    int64_t max_tokens;
    int64_t requests_per_stream;
    double duration_s;
    int64_t warmup;
    double timeout_s;
    double temperature;
    int ignore_eos;
};

/* Creates path (truncating it only when force is set). Returns 0, TS_H5_ERR_EXISTS or
 * TS_H5_ERR_IO, with msg naming the path. */
int h5out_create(struct ts_h5out **out, const char *path, int force, char *msg, size_t msg_len);

/* Writes the root attributes and flushes. Returns 0 or TS_H5_ERR_IO. */
int h5out_write_run(struct ts_h5out *h, const struct ts_run_info *info, char *msg,
                    size_t msg_len);

/* Opens group level_<C> with an empty, extendible requests dataset. */
int h5out_level_begin(struct ts_h5out *h, int64_t concurrency, char *msg, size_t msg_len);

/* Appends rows to the open level's requests dataset. */
int h5out_level_rows(struct ts_h5out *h, const struct ts_row *rows, size_t n, char *msg,
                     size_t msg_len);

/* Writes the level's summary attributes, closes the group and flushes the file. */
int h5out_level_end(struct ts_h5out *h, const struct ts_level_summary *s, int complete, char *msg,
                    size_t msg_len);

/* Closes the file (NULL is fine). Returns 0 or TS_H5_ERR_IO. */
int h5out_close(struct ts_h5out *h);

#endif
