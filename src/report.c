/* report.c: the human table on stdout, formatted from level summaries. It knows nothing of
 * how the figures were measured or reduced. */
#include "tokstorm/report.h"

void report_header(FILE *f)
{
    fprintf(f, "%6s | %10s | %12s | %13s | %8s | %7s | %5s | %3s | %15s | %14s\n", "C", "Agg tok/s",
            "Steady tok/s", "Per-req tok/s", "Tokens", "Wall(s)", "Ok", "Err", "TTFT p50/p99 ms",
            "ITL p50/p99 ms");
    fprintf(f, "-------+------------+--------------+---------------+----------+---------+-------+"
               "-----+-----------------+---------------\n");
    fflush(f);
}

void report_level(FILE *f, const struct ts_level_summary *s, double skew_limit_s)
{
    /* No successful request, no latency: a dash, not a misleading 0. */
    char ttft[32] = "-", itl[32] = "-";
    if (s->ok > 0) {
        snprintf(ttft, sizeof ttft, "%.1f/%.1f", s->ttft.p50, s->ttft.p99);
        snprintf(itl, sizeof itl, "%.2f/%.2f", s->itl.p50, s->itl.p99);
    }
    char steady[32] = "-";
    if (s->steady_s > 0)
        snprintf(steady, sizeof steady, "%.1f", s->steady_tok_s);
    fprintf(f, "%6lld | %10.1f | %12s | %13.1f | %8llu | %7.2f | %5llu | %3llu | %15s | %14s\n",
            (long long)s->concurrency, s->agg_tok_s, steady, s->per_req_tok_s,
            (unsigned long long)s->output_tokens, s->wall_s, (unsigned long long)s->ok,
            (unsigned long long)s->err, ttft, itl);
    if (s->err > 0) {
        fprintf(f, "       | errors:");
        for (int c = 1; c < TS_ERR__COUNT; c++)
            if (s->err_by_class[c])
                fprintf(f, " %s=%llu", stats_err_class_name(c),
                        (unsigned long long)s->err_by_class[c]);
        fprintf(f, "\n");
    }
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
        fprintf(f,
                "peak %.1f tok/s at C=%lld (%.1f tok/s per request); %llu ok, %llu failed; "
                "results in %s\n",
                levels[best].agg_tok_s, (long long)levels[best].concurrency,
                levels[best].per_req_tok_s, (unsigned long long)ok, (unsigned long long)err,
                out_path);
    }
    fflush(f);
}
