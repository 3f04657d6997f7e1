/* test_saturation.c: the ladder's stopping rules and the saturation point, on summaries made
 * up to look like a server with a batch limit of 64. */
#include "tokstorm/saturation.h"

#include <string.h>

#include "check.h"

/* A level of C streams on a server that gives each stream 100 tok/s up to 64 of them, and
 * whose TTFT grows once streams queue. */
static struct ts_level_summary level(int64_t c)
{
    struct ts_level_summary s;
    memset(&s, 0, sizeof s);
    s.concurrency = c;
    s.ok = (uint64_t)c * 2;
    s.agg_tok_s = 100.0 * (double)(c < 64 ? c : 64);
    s.ttft.p99 = c <= 64 ? 50 : 50.0 * (double)c / 64;
    s.tpot.p99 = 10;
    s.goodput_req_s = (double)c;
    return s;
}

int main(void)
{
    struct ts_saturation_rules rules = {.max_error_rate = 0.01, .max_level = 65536};
    struct ts_level_summary l[16];
    size_t n = 0;
    enum ts_ladder_verdict v = TS_LADDER_CONTINUE;
    for (int64_t c = 1; v == TS_LADDER_CONTINUE; c *= 2) {
        l[n++] = level(c);
        v = saturation_next(l, n, &rules);
    }
    /* 64 -> 128 -> 256 are both flat: it stops after measuring C=256. */
    CHECK_EQ_INT(v, TS_LADDER_FLAT);
    CHECK_EQ_INT(l[n - 1].concurrency, 256);
    struct ts_saturation_point p;
    saturation_point(l, n, &rules, &p);
    CHECK(p.peak_tok_s == 6400);
    CHECK(p.peak_level == 64); /* the first of equal peaks */
    CHECK(p.knee_level == 64); /* 32 gives 3200, under 95% */
    CHECK(p.slo_level == -1);

    /* With a TTFT objective of 80 ms, the ladder stops at the first level beyond it (C=128,
     * 100 ms), and the largest level within it is 64. */
    rules.slo_ttft_ns = 80000000;
    n = 0;
    v = TS_LADDER_CONTINUE;
    for (int64_t c = 1; v == TS_LADDER_CONTINUE; c *= 2) {
        l[n++] = level(c);
        v = saturation_next(l, n, &rules);
    }
    CHECK_EQ_INT(v, TS_LADDER_SLO);
    CHECK_EQ_INT(l[n - 1].concurrency, 128);
    saturation_point(l, n, &rules, &p);
    CHECK(p.slo_level == 64 && p.slo_goodput_req_s == 64);

    /* Errors over the limit stop it; so does the level cap. */
    rules.slo_ttft_ns = 0;
    struct ts_level_summary bad = level(4);
    bad.err = 1;
    bad.ok = 50;
    CHECK_EQ_INT(saturation_next(&bad, 1, &rules), TS_LADDER_ERRORS);
    rules.max_level = 6;
    struct ts_level_summary four = level(4);
    CHECK_EQ_INT(saturation_next(&four, 1, &rules), TS_LADDER_MAX_LEVEL);

    /* Open loop: the level is the rate. */
    struct ts_level_summary open = level(0);
    open.rate = 2.5;
    CHECK(saturation_level_of(&open) == 2.5);
    CHECK(strstr(saturation_verdict_text(TS_LADDER_FLAT), "5%") != NULL);
    return check_report("saturation");
}
