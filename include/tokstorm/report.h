/* report.h: what rank 0 prints on stdout: the table header, one row per level as soon as it
 * ends, its error mix, and the closing summary. Formatting only; no MPI, no files. */
#ifndef TOKSTORM_REPORT_H
#define TOKSTORM_REPORT_H

#include <stdio.h>

#include "tokstorm/saturation.h"
#include "tokstorm/stats.h"

/* open_loop: the first column is the offered rate instead of C. */
void report_header(FILE *f, int open_loop);

/* One note line under the current row ("       | ..."). */
void report_note(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The level's row; when it had errors, a line with the count per class; when the ranks'
 * first requests were spread by more than skew_limit_s, a line saying so. */
void report_level(FILE *f, const struct ts_level_summary *s, double skew_limit_s);

/* One closing line: the level with the highest aggregate throughput and where the results
 * went. */
void report_summary(FILE *f, const struct ts_level_summary *levels, size_t n, const char *out_path);

/* The saturation search's result, after the summary. */
void report_saturation(FILE *f, const struct ts_saturation_point *p, int open_loop,
                       const char *stop_reason);

#endif
