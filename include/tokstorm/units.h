/* units.h: parse and format durations, counts and lists given on the command line.
 * Pure: no I/O, no clocks. Every parser returns 0 on success or -1 when the text is not
 * a valid value; it never writes *out on failure. */
#ifndef TOKSTORM_UNITS_H
#define TOKSTORM_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* A duration: a non-negative decimal number with an optional unit ns, us, ms, s, m, h.
 * A bare number is read in default_unit_ns (e.g. 1000000000 for seconds).
 * "1.5s" -> 1500000000, "250ms" -> 250000000, "30" with seconds -> 30000000000. */
int units_parse_duration_ns(const char *text, int64_t default_unit_ns, int64_t *out_ns);

/* A count: a non-negative integer with an optional suffix k (1e3) or M (1e6). "2k" -> 2000. */
int units_parse_count(const char *text, int64_t *out);

/* A comma-separated list of positive counts ("1,4,16,2k"). On success *out is malloc'd and
 * owned by the caller; *n is its length (at least 1). */
int units_parse_count_list(const char *text, int64_t **out, size_t *n);

/* A comma-separated list of positive decimal numbers ("0.5,1,2,4"), like
 * units_parse_count_list. */
int units_parse_rate_list(const char *text, double **out, size_t *n);

/* Formats ns as a short human string ("1.50 s", "250 ms", "12 us") into buf. Returns buf. */
char *units_format_duration(int64_t ns, char *buf, size_t len);

#define TS_NS_PER_US INT64_C(1000)
#define TS_NS_PER_MS INT64_C(1000000)
#define TS_NS_PER_S  INT64_C(1000000000)

#endif
