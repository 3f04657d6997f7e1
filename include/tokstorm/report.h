/* report.h: what rank 0 prints on stdout: the table header, one row per level as soon as it
 * ends, its error mix, and the closing summary. Formatting only; no MPI, no files. */
#ifndef TOKSTORM_REPORT_H
#define TOKSTORM_REPORT_H

#include <stdio.h>

#include "tokstorm/stats.h"

void report_header(FILE *f);

/* The level's row; when it had errors, a line with the count per class; when the ranks'
 * first requests were spread by more than skew_limit_s, a line saying so. */
void report_level(FILE *f, const struct ts_level_summary *s, double skew_limit_s);

/* One closing line: the level with the highest aggregate throughput and where the results
 * went. */
void report_summary(FILE *f, const struct ts_level_summary *levels, size_t n, const char *out_path);

#endif
