/* h5out.h: the results file, written by rank 0 only (Debian's HDF5 is serial: gather, then
 * write). The only user of hdf5.h. Layout (schema_version 1), documented field by field in
 * docs/results-format.md:
 *   /                        run attributes (version, git revision, options, hosts, ...)
 *   /ranks                   one row per MPI rank: host, address, clock offset
 *   /summary                 one row per finished level: the printed table's columns
 *   /level_<C>/              one group per finished level, with the summary as attributes
 *   /level_<C>/requests      compound dataset, one struct ts_row per measured request
 *   /level_<C>/event_offsets, event_time_s: --record-tokens, every content event's time (CSR)
 *   /level_<C>/timeseries    tokens, completions and failures per 100 ms
 *   /level_<C>/hist_<m>      the merged histogram of ttft, itl, tpot, e2e (non-empty buckets)
 *   /level_<C>/clock         each rank's clock offset and its uncertainty for this level
 *   /level_<C>/rank_load     each rank's busy fraction, send lag, CPU time, memory
 * Every dataset is chunked and gzip-compressed. Each level, with its /summary row, is
 * flushed to disk before the next starts, and a level becomes reachable only once it is
 * whole on disk (h5out.c). */
#ifndef TOKSTORM_H5OUT_H
#define TOKSTORM_H5OUT_H

#include <stddef.h>
#include <stdint.h>

#include "tokstorm/collect.h"
#include "tokstorm/hist.h"
#include "tokstorm/runinfo.h"
#include "tokstorm/saturation.h"
#include "tokstorm/stats.h"
#include "tokstorm/summary.h"

#define TS_H5_SCHEMA_VERSION TS_SCHEMA_VERSION

#define TS_H5_ERR_EXISTS (-1) /* the file exists and force was not given */
#define TS_H5_ERR_IO     (-2) /* the file could not be created or written */

struct ts_h5out;

/* Creates the file, with an empty /summary, flushed: before any request, so that a path
 * that cannot be written ends the run before it measures anything. A file already at path is
 * an error (TS_H5_ERR_EXISTS) unless force is set; then it is left alone until h5out_commit,
 * the new file being made beside it (PATH.<pid>.tmp). A new file is created exclusively, so a
 * file that appears meanwhile is not taken over. Returns 0, TS_H5_ERR_EXISTS or TS_H5_ERR_IO,
 * with msg naming the path ("--out: ..."). */
int h5out_create(struct ts_h5out **out, const char *path, int force, char *msg, size_t msg_len);

/* The run is going ahead (its preflight passed): with force over an existing file, the new
 * file now replaces it. Returns 0 or TS_H5_ERR_IO with msg. */
int h5out_commit(struct ts_h5out *h, char *msg, size_t msg_len);

/* The run ended before its first level (a failed preflight, a signal): closes the file and
 * removes it, holding nothing measured; a file it was to replace is left as it was. */
void h5out_discard(struct ts_h5out *h);

/* Whether a write has failed. From then on every write returns TS_H5_ERR_IO at once with the
 * first failure's message ("results file PATH: WHAT: REASON", REASON the system's when there
 * is one, e.g. "No space left on device"), touching nothing: the levels finished before stay
 * as they were on disk. */
int h5out_failed(const struct ts_h5out *h);

/* Writes the root attributes (end_time_utc empty until h5out_write_end) and flushes.
 * Returns 0 or TS_H5_ERR_IO. */
int h5out_write_run(struct ts_h5out *h, const struct ts_run_info *info, char *msg, size_t msg_len);

/* Writes /ranks: one row per rank (n rows). */
int h5out_write_ranks(struct ts_h5out *h, const struct ts_rank_info *ranks, size_t n, char *msg,
                      size_t msg_len);

/* Sets the root's end_time_utc (ISO 8601) and flushes. Returns 0 or TS_H5_ERR_IO. */
int h5out_write_end(struct ts_h5out *h, const char *end_utc, char *msg, size_t msg_len);

/* Opens the level's group, `name` (level_<C>, or rate_<R> in open loop) once it ends (it is
 * anonymous until then), with an empty, extendible requests dataset; with record_events also
 * event_offsets, which h5out_level_rows then extends from each row's recorded_events. */
int h5out_level_begin(struct ts_h5out *h, const char *name, int record_events, char *msg,
                      size_t msg_len);

/* Writes the open level's rank_load dataset: each rank's busy fraction and send lag. */
int h5out_level_loads(struct ts_h5out *h, const struct ts_rank_load *loads, size_t n, char *msg,
                      size_t msg_len);

/* Appends rows to the open level's requests dataset. */
int h5out_level_rows(struct ts_h5out *h, const struct ts_row *rows, size_t n, char *msg,
                     size_t msg_len);

/* Writes the open level's time series: n bins of bin_s seconds from the level start. */
int h5out_level_timeseries(struct ts_h5out *h, double bin_s, const uint64_t *tokens,
                           const uint64_t *ok, const uint64_t *err, size_t n, char *msg,
                           size_t msg_len);

/* Writes the open level's histogram of one metric as hist_<name>: the non-empty buckets'
 * bounds and counts, with count, sum_ns, min_ns and max_ns attributes. */
int h5out_level_hist(struct ts_h5out *h, const char *name, const struct ts_hist *hist,
                     const struct ts_hist_extremes *x, char *msg, size_t msg_len);

/* Writes the open level's clock dataset: each rank's offset and uncertainty (n rows). */
int h5out_level_clock(struct ts_h5out *h, const struct ts_rank_info *ranks, size_t n, char *msg,
                      size_t msg_len);

/* --record-tokens: creates the open level's event_time_s dataset for total times. */
int h5out_level_events_begin(struct ts_h5out *h, uint64_t total, char *msg, size_t msg_len);

/* Writes n event times at position pos of event_time_s (pieces may come in any order). */
int h5out_level_events(struct ts_h5out *h, uint64_t pos, const double *t_s, size_t n, char *msg,
                       size_t msg_len);

/* Writes the level's summary attributes (complete from row) and flushes the level; only then
 * links its group into the root under its name, appends row to /summary and flushes again.
 * If anything fails, the group stays unreachable: the file holds the levels before it. */
int h5out_level_end(struct ts_h5out *h, const struct ts_level_summary *s,
                    const struct ts_summary_row *row, char *msg, size_t msg_len);

/* Writes the saturation search's result as root attributes (saturation_*). */
int h5out_write_saturation(struct ts_h5out *h, const struct ts_saturation_point *p,
                           const char *stop_reason, char *msg, size_t msg_len);

/* Closes the file (NULL is fine). Returns 0, or TS_H5_ERR_IO with msg (may be NULL) when
 * closing failed and no failure was reported before. */
int h5out_close(struct ts_h5out *h, char *msg, size_t msg_len);

#endif
