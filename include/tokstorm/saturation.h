/* saturation.h: the automatic saturation search (--until-saturated): when to stop climbing
 * the ladder of levels, and where the saturation point lies in the levels measured. Pure: it
 * reads level summaries and knows nothing of MPI, files or the network. */
#ifndef TOKSTORM_SATURATION_H
#define TOKSTORM_SATURATION_H

#include <stddef.h>
#include <stdint.h>

#include "tokstorm/stats.h"

struct ts_saturation_rules {
    double max_error_rate; /* stop when a level's failed fraction exceeds this */
    int64_t slo_ttft_ns;   /* stop when p99 TTFT exceeds this (0 = none) */
    int64_t slo_tpot_ns;   /* stop when p99 TPOT exceeds this (0 = none) */
    double max_level;      /* do not climb past this C (or rate) */
};

enum ts_ladder_verdict {
    TS_LADDER_CONTINUE = 0,
    TS_LADDER_FLAT = 1,      /* throughput grew < 5% over two consecutive steps */
    TS_LADDER_ERRORS = 2,    /* the error rate passed max_error_rate */
    TS_LADDER_SLO = 3,       /* a latency objective was broken */
    TS_LADDER_MAX_LEVEL = 4, /* the next step would pass max_level */
};

const char *saturation_verdict_text(enum ts_ladder_verdict v);

/* The level of summary s: its C in closed loop, its rate in open loop. */
double saturation_level_of(const struct ts_level_summary *s);

/* After levels[0..n-1] (n >= 1, each double the one before), whether to measure the next one
 * (2 x the last). */
enum ts_ladder_verdict saturation_next(const struct ts_level_summary *levels, size_t n,
                                       const struct ts_saturation_rules *rules);

struct ts_saturation_point {
    double peak_tok_s;        /* the highest aggregate throughput measured */
    double peak_level;        /* where it was measured */
    double knee_level;        /* the smallest level that reached 95% of the peak */
    double slo_level;         /* the largest level whose p99 TTFT and TPOT met the objectives
                                 (-1 when none did or no objective was given) */
    double slo_goodput_req_s; /* goodput at slo_level */
};

/* Where the measured levels saturate (n >= 1). */
void saturation_point(const struct ts_level_summary *levels, size_t n,
                      const struct ts_saturation_rules *rules, struct ts_saturation_point *out);

#endif
