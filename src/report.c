/* report.c: the human table on stdout, formatted from level summaries. It knows nothing of
 * how the figures were measured or reduced. */
#include "tokstorm/report.h"

#include <math.h>
#include <stdarg.h>

#include "tokstorm/summary.h"

void report_header(FILE *f, int open_loop)
{
    fprintf(f, "%6s | %10s | %12s | %13s | %8s | %7s | %5s | %3s | %15s | %14s\n",
            open_loop ? "Rate" : "C", "Agg tok/s", "Steady tok/s", "Per-req tok/s", "Tokens",
            "Wall(s)", "Ok", "Err", "TTFT p50/p99 ms", "ITL p50/p99 ms");
    fprintf(f, "-------+------------+--------------+---------------+----------+---------+-------+"
               "-----+-----------------+---------------\n");
    fflush(f);
}

void report_level(FILE *f, const struct ts_level_summary *s, double skew_limit_s)
{
    /* The row as the summary dataset and files hold it, so that they equal what is printed;
     * where it has no value (NaN), a dash, not a misleading 0. */
    struct ts_summary_row r;
    summary_row_make(s, "", 1, &r);
    char ttft[32] = "-", itl[32] = "-", steady[32] = "-", level[32];
    if (!isnan(r.ttft_p50_ms))
        snprintf(ttft, sizeof ttft, "%.1f/%.1f", r.ttft_p50_ms, r.ttft_p99_ms);
    if (!isnan(r.itl_p50_ms))
        snprintf(itl, sizeof itl, "%.2f/%.2f", r.itl_p50_ms, r.itl_p99_ms);
    if (!isnan(r.steady_tok_s))
        snprintf(steady, sizeof steady, "%.1f", r.steady_tok_s);
    if (r.rate > 0)
        snprintf(level, sizeof level, "%g", r.rate);
    else
        snprintf(level, sizeof level, "%lld", (long long)r.concurrency);
    fprintf(f, "%6s | %10.1f | %12s | %13.1f | %8lld | %7.2f | %5lld | %3lld | %15s | %14s\n",
            level, r.agg_tok_s, steady, r.per_req_tok_s, (long long)r.output_tokens, r.wall_s,
            (long long)r.ok, (long long)r.err, ttft, itl);
    if (s->err > 0) {
        fprintf(f, "       | errors:");
        for (int c = 1; c < TS_ERR__COUNT; c++)
            if (s->err_by_class[c])
                fprintf(f, " %s=%llu", stats_err_class_name(c),
                        (unsigned long long)s->err_by_class[c]);
        fprintf(f, "\n");
    }
    if (s->tokens_per_event > 1.05)
        report_note(f, "the server sent %.2f tokens per event: ITL is per event, TPOT per token",
                    s->tokens_per_event);
    if (s->rate > 0)
        report_note(f,
                    "open loop: %.2f req/s done; from the scheduled send: TTFT p50/p99 %.1f/%.1f "
                    "ms; send lag p99 %.3f ms; %llu late (waited for a slot)",
                    s->req_s, s->ttft_sched.p50, s->ttft_sched.p99, s->lag.p99,
                    (unsigned long long)s->late);
    if (s->start_skew_s > skew_limit_s)
        fprintf(f, "       | start skew %.3f ms across ranks (over %.3f ms)\n",
                s->start_skew_s * 1e3, skew_limit_s * 1e3);
    fflush(f);
}

void report_summary(FILE *f, const struct ts_level_summary *levels, size_t n, const char *out_path)
{
    size_t best = 0;
    uint64_t ok = 0, err = 0;
    for (size_t i = 0; i < n; i++) {
        if (levels[i].agg_tok_s > levels[best].agg_tok_s)
            best = i;
        ok += levels[i].ok;
        err += levels[i].err;
    }
    if (n == 0) {
        fprintf(f, "no level finished; results in %s\n", out_path);
    } else {
        char at[48];
        if (levels[best].rate > 0)
            snprintf(at, sizeof at, "%g req/s", levels[best].rate);
        else
            snprintf(at, sizeof at, "C=%lld", (long long)levels[best].concurrency);
        fprintf(f,
                "peak %.1f tok/s at %s (%.1f tok/s per request); %llu ok, %llu failed; "
                "results in %s\n",
                levels[best].agg_tok_s, at, levels[best].per_req_tok_s, (unsigned long long)ok,
                (unsigned long long)err, out_path);
    }
    fflush(f);
}

void report_note(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(f, "       | ");
    vfprintf(f, fmt, ap);
    fprintf(f, "\n");
    va_end(ap);
    fflush(f);
}

void report_saturation(FILE *f, const struct ts_saturation_point *p, int open_loop,
                       const char *stop_reason)
{
    const char *unit = open_loop ? " req/s" : "";
    const char *what = open_loop ? "rate" : "C";
    fprintf(f, "saturation: peak %.1f tok/s at %s=%g%s; 95%% of it from %s=%g%s", p->peak_tok_s,
            what, p->peak_level, unit, what, p->knee_level, unit);
    if (p->slo_level >= 0)
        fprintf(f, "; within the SLOs up to %s=%g%s (goodput %.2f req/s)", what, p->slo_level, unit,
                p->slo_goodput_req_s);
    fprintf(f, "; stopped: %s\n", stop_reason);
    fflush(f);
}
