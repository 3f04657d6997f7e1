/* saturation.c: the stopping rules of the saturation ladder and the saturation point of a
 * sweep, from level summaries alone. It knows nothing of how levels are run. */
#include "tokstorm/saturation.h"

const char *saturation_verdict_text(enum ts_ladder_verdict v)
{
    switch (v) {
    case TS_LADDER_FLAT:
        return "throughput grew less than 5% over two steps";
    case TS_LADDER_ERRORS:
        return "the error rate passed --max-error-rate";
    case TS_LADDER_SLO:
        return "a latency objective (--slo) was broken";
    case TS_LADDER_MAX_LEVEL:
        return "the next step would pass --max-level";
    default:
        return "still climbing";
    }
}

double saturation_level_of(const struct ts_level_summary *s)
{
    return s->rate > 0 ? s->rate : (double)s->concurrency;
}

static int meets_slo(const struct ts_level_summary *s, const struct ts_saturation_rules *r)
{
    return (r->slo_ttft_ns == 0 || s->ttft.p99 * 1e6 <= (double)r->slo_ttft_ns) &&
           (r->slo_tpot_ns == 0 || s->tpot.p99 * 1e6 <= (double)r->slo_tpot_ns);
}

enum ts_ladder_verdict saturation_next(const struct ts_level_summary *levels, size_t n,
                                       const struct ts_saturation_rules *rules)
{
    const struct ts_level_summary *last = &levels[n - 1];
    uint64_t done = last->ok + last->err;
    if (done > 0 && (double)last->err / (double)done > rules->max_error_rate)
        return TS_LADDER_ERRORS;
    if (!meets_slo(last, rules))
        return TS_LADDER_SLO;
    /* <= so that levels that deliver nothing at all count as flat too. */
    if (n >= 3 && levels[n - 1].agg_tok_s <= 1.05 * levels[n - 2].agg_tok_s &&
        levels[n - 2].agg_tok_s <= 1.05 * levels[n - 3].agg_tok_s)
        return TS_LADDER_FLAT;
    if (2 * saturation_level_of(last) > rules->max_level)
        return TS_LADDER_MAX_LEVEL;
    return TS_LADDER_CONTINUE;
}

void saturation_point(const struct ts_level_summary *levels, size_t n,
                      const struct ts_saturation_rules *rules, struct ts_saturation_point *out)
{
    size_t peak = 0;
    for (size_t i = 1; i < n; i++)
        if (levels[i].agg_tok_s > levels[peak].agg_tok_s)
            peak = i;
    out->peak_tok_s = levels[peak].agg_tok_s;
    out->peak_level = saturation_level_of(&levels[peak]);
    out->knee_level = out->peak_level;
    for (size_t i = 0; i < n; i++)
        if (levels[i].agg_tok_s >= 0.95 * out->peak_tok_s &&
            saturation_level_of(&levels[i]) < out->knee_level)
            out->knee_level = saturation_level_of(&levels[i]);
    out->slo_level = -1;
    out->slo_goodput_req_s = 0;
    if (rules->slo_ttft_ns == 0 && rules->slo_tpot_ns == 0)
        return;
    for (size_t i = 0; i < n; i++)
        if (levels[i].ok > 0 && meets_slo(&levels[i], rules) &&
            saturation_level_of(&levels[i]) > out->slo_level) {
            out->slo_level = saturation_level_of(&levels[i]);
            out->slo_goodput_req_s = levels[i].goodput_req_s;
        }
}
