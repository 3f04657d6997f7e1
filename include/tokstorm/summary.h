/* summary.h: the sweep in one table, one row per level with the columns rank 0 prints, as
 * the results file's /summary dataset, the --csv file and the --json file all hold it. One
 * field table gives the names, types and order for all three, so they cannot drift apart.
 * Formatting is pure; summary_probe and summary_write_file are the only file access. */
#ifndef TOKSTORM_SUMMARY_H
#define TOKSTORM_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "tokstorm/runinfo.h"
#include "tokstorm/saturation.h"
#include "tokstorm/stats.h"

/* One level. Where the table prints "-", the row holds NaN (null in JSON, empty in CSV). */
struct ts_summary_row {
    char group[32];        /* the level's group in the results file: level_<C> or rate_<R> */
    int64_t concurrency;   /* C; open loop: the cap on requests in flight over all ranks */
    double rate;           /* open loop: offered requests/s over all ranks; 0 in closed loop */
    double start_s;        /* the level's synchronised start, common timeline */
    double agg_tok_s;      /* Agg tok/s */
    double steady_tok_s;   /* Steady tok/s; NaN when no window had every stream busy */
    double per_req_tok_s;  /* Per-req tok/s */
    int64_t output_tokens; /* Tokens */
    double wall_s;         /* Wall(s) */
    int64_t ok, err;       /* Ok, Err */
    double ttft_p50_ms, ttft_p99_ms; /* TTFT p50/p99; NaN when no request succeeded */
    double itl_p50_ms, itl_p99_ms;   /* ITL p50/p99; NaN when no gap was measured */
    int32_t complete;                /* 1 when every rank ran the level to its end */
};

enum ts_summary_kind { TS_SUMMARY_STR, TS_SUMMARY_I64, TS_SUMMARY_F64, TS_SUMMARY_I32 };

struct ts_summary_field {
    const char *name; /* as in the dataset, the CSV header and the JSON keys */
    size_t offset;    /* in struct ts_summary_row */
    enum ts_summary_kind kind;
};

/* The fields of struct ts_summary_row, in order. */
extern const struct ts_summary_field ts_summary_fields[];
extern const size_t ts_summary_n_fields;

/* The row of a level whose group is named group; complete as for the level's attribute. */
void summary_row_make(const struct ts_level_summary *s, const char *group, int complete,
                      struct ts_summary_row *out);

/* The --csv text: a header line of field names, then one line per row. Numbers have 10
 * significant digits; NaN is an empty field. Returns a malloc'd string or NULL. */
char *summary_csv(const struct ts_summary_row *rows, size_t n);

/* What the --json file holds. */
struct ts_summary_doc {
    const struct ts_run_info *run;
    const struct ts_summary_row *rows;     /* n of them, in the order measured */
    const struct ts_level_summary *levels; /* the same levels' full figures */
    size_t n;
    const char *end_utc;                     /* NULL while the run goes on */
    const struct ts_saturation_point *point; /* after a saturation search, else NULL */
    const char *stop_reason;                 /* with point */
};

/* The --json text (layout in docs/results-format.md). Returns a malloc'd string or NULL. */
char *summary_json(const struct ts_summary_doc *d);

/* Checks, before any request is sent, that path can be created (or, with force, replaced)
 * without leaving anything behind. option names it in msg ("--json"). Returns 0, or -1 with
 * one line in msg. */
int summary_probe(const char *option, const char *path, int force, char *msg, size_t len);

/* Replaces path with text at once (written beside it, then renamed), so that a reader never
 * sees half a file and a failure keeps the previous version. Returns 0, or -1 with msg. */
int summary_write_file(const char *path, const char *text, char *msg, size_t len);

#endif
