/* progress.c: the schedule of progress samples and the line that shows one. It knows the
 * summed figures, not how they were sampled or summed, nor where the line goes. */
#include "tokstorm/progress.h"

#include <stdio.h>
#include <string.h>

int64_t progress_next_due(int64_t start_ns, int64_t period_ns, int64_t now_ns)
{
    if (now_ns < start_ns)
        return start_ns + period_ns;
    return start_ns + ((now_ns - start_ns) / period_ns + 1) * period_ns;
}

void progress_line_init(struct ts_progress_line *p, const char *what, int64_t planned,
                        double duration_s, int64_t start_ns)
{
    memset(p, 0, sizeof *p);
    snprintf(p->what, sizeof p->what, "%s", what);
    p->planned = planned;
    p->duration_s = duration_s;
    p->start_ns = p->last_ns = start_ns;
}

size_t progress_line_format(struct ts_progress_line *p, const struct ts_progress_sample *sum,
                            char *buf, size_t len)
{
    int64_t at = sum->running > 0 ? sum->sampled_ns / sum->running : p->last_ns;
    /* A request in flight that fails takes its events out of the count: no negative rate. */
    int64_t tokens = sum->tokens > p->last_tokens ? sum->tokens - p->last_tokens : 0;
    double rate = at > p->last_ns ? (double)tokens * 1e9 / (double)(at - p->last_ns) : 0;
    double elapsed_s = (double)(at - p->start_ns) / 1e9;
    p->last_ns = at > p->last_ns ? at : p->last_ns;
    p->last_tokens = sum->tokens;
    char done[48], when[48];
    if (p->planned > 0)
        snprintf(done, sizeof done, "%lld/%lld", (long long)sum->done, (long long)p->planned);
    else
        snprintf(done, sizeof done, "%lld", (long long)sum->done);
    if (p->duration_s > 0)
        snprintf(when, sizeof when, "%.1f/%.1f s", elapsed_s, p->duration_s);
    else
        snprintf(when, sizeof when, "%.1f s", elapsed_s);
    int n = snprintf(buf, len, "progress %s: %s requests, %.1f tok/s, %lld errors, %s", p->what,
                     done, rate, (long long)sum->errors, when);
    return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}
