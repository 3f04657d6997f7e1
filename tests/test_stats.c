/* test_stats.c: recording rows into level stats, merging parts the way the MPI reduction
 * does, and the summary figures against values computed here by hand. */
#include "tokstorm/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static struct ts_row ok_row(double start, double first, double end, int64_t tokens)
{
    struct ts_row r;
    memset(&r, 0, sizeof r);
    r.scheduled_s = start;
    r.start_s = start;
    r.first_byte_s = first;
    r.first_token_s = first;
    r.end_s = end;
    r.output_tokens = tokens;
    r.prompt_tokens = 10;
    r.tokens_from_usage = 1;
    r.http_status = 200;
    return r;
}

/* A TTFT objective of 150 ms: r1 (50 ms) and r2 (100 ms) meet it, r3 (200 ms) does not. */
#define SLO_TTFT 150000000

int main(void)
{
    struct ts_level_stats *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    struct ts_level_extremes ax, bx;
    stats_init(a, &ax);
    stats_init(b, &bx);

    /* Part a: two successes. 100 tokens in 2 s (50 tok/s), 10 tokens in 0.5 s (20 tok/s). */
    struct ts_row r1 = ok_row(0.0, 0.05, 2.0, 100);
    struct ts_row r2 = ok_row(1.0, 1.10, 1.5, 10);
    int64_t t1[3] = {50000000, 60000000, 80000000}; /* gaps 10 ms and 20 ms */
    stats_record(a, &ax, &r1, t1, 3, SLO_TTFT, 0);
    stats_record(a, &ax, &r2, NULL, 0, SLO_TTFT, 0);
    /* Part b: one success (40 tokens in 1 s) and two failures. */
    struct ts_row r3 = ok_row(0.0, 0.2, 1.0, 40);
    stats_record(b, &bx, &r3, NULL, 0, SLO_TTFT, 0);
    struct ts_row bad = ok_row(0.0, -1, 0.3, 0);
    bad.error_class = TS_ERR_HTTP_5XX;
    bad.http_status = 503;
    stats_record(b, &bx, &bad, NULL, 0, SLO_TTFT, 0);
    bad.error_class = TS_ERR_TIMEOUT;
    stats_record(b, &bx, &bad, NULL, 0, SLO_TTFT, 0);
    /* The server's send stamps: in a, r1's three events, sent 0.2, 0.4 and 0.5 ms before they
     * arrived (gap errors 0.2 and 0.1 ms); in b, two events, the first unstamped, the second
     * 3 ms late. */
    int64_t st1[3] = {t1[0] - 200000, t1[1] - 400000, t1[2] - 500000};
    stats_record_stamps(a, &ax, t1, st1, 3);
    int64_t t3[2] = {300000000, 320000000}, st3[2] = {0, 317000000};
    stats_record_stamps(b, &bx, t3, st3, 2);
    bx.full_start_ns = 100;
    bx.full_end_ns = 900000100; /* 0.9 s of full load */
    ax.full_start_ns = 50;
    ax.full_end_ns = 950000000;
    ax.rank_start_min_ns = ax.rank_start_max_ns = 1000;
    bx.rank_start_min_ns = bx.rank_start_max_ns = 151000;

    /* Merge through the packed form, as collect.c reduces extremes. */
    int64_t pa[TS_EXTREMES_PACKED], pb[TS_EXTREMES_PACKED];
    stats_extremes_pack(&ax, pa);
    stats_extremes_pack(&bx, pb);
    for (int i = 0; i < TS_EXTREMES_PACKED; i++)
        pa[i] = pa[i] > pb[i] ? pa[i] : pb[i];
    struct ts_level_extremes via_pack;
    stats_extremes_unpack(pa, &via_pack);
    stats_merge(a, &ax, b, &bx);
    CHECK(memcmp(&via_pack, &ax, sizeof ax) == 0);

    struct ts_level_summary s;
    stats_summarize(a, &ax, 7, &s);
    CHECK_EQ_INT(s.concurrency, 7);
    CHECK_EQ_INT(s.ok, 3);
    CHECK_EQ_INT(s.err, 2);
    CHECK_EQ_INT(s.err_by_class[TS_ERR_HTTP_5XX], 1);
    CHECK_EQ_INT(s.err_by_class[TS_ERR_TIMEOUT], 1);
    CHECK_EQ_INT(s.output_tokens, 150);
    CHECK_EQ_INT(s.good, 2);
    /* ok_row leaves content_events at 0: no events, no ratio. */
    CHECK(s.tokens_per_event == 0);
    CHECK(fabs(s.goodput_req_s - 2 / 2.0) < 1e-12);
    CHECK(fabs(s.req_s - 3 / 2.0) < 1e-12);
    /* Closed loop: scheduled = start, so no lag and the same TTFT from either. */
    CHECK(s.lag.max == 0 && s.ttft_sched.p50 == s.ttft.p50);
    CHECK_EQ_INT(s.prompt_tokens, 30);
    /* Wall: earliest start (0.0) to latest end (2.0) over both parts. */
    CHECK(fabs(s.wall_s - 2.0) < 1e-12);
    CHECK(fabs(s.agg_tok_s - 150 / 2.0) < 1e-9);
    /* Steady window: latest full start (100 ns) to earliest full end (0.9 s + 100 ns). */
    CHECK(fabs(s.steady_s - 0.9) < 1e-12);
    stats_set_steady(&s, 450);
    CHECK(fabs(s.steady_tok_s - 500) < 1e-9);
    CHECK(fabs(s.start_skew_s - 150e-6) < 1e-15);
    CHECK(fabs(s.per_req_tok_s - (50.0 + 20.0 + 40.0) / 3) < 1e-4);
    /* TTFTs 50, 100, 200 ms: p50 is the 2nd smallest, p99 the largest (within 0.4%). */
    CHECK(fabs(s.ttft.p50 - 100) < 0.4);
    CHECK(fabs(s.ttft.p99 - 200) < 0.8);
    CHECK(s.ttft.min == 50 && s.ttft.max == 200);
    CHECK(fabs(s.ttft.mean - 350.0 / 3) < 1e-9);
    CHECK_EQ_INT(s.ttft.count, 3);
    CHECK(fabs(s.itl.p50 - 10) < 0.04);
    CHECK(fabs(s.itl.p99 - 20) < 0.08);
    /* e2e of the successes: 2.0, 0.5 and 1.0 s. */
    CHECK(fabs(s.e2e.p50 - 1000) < 4);
    CHECK(s.e2e.max == 2000);
    /* TPOT: r1 (2.0 - 0.05) / 99 s = 19.70 ms, r2 (1.5 - 1.1) / 9 = 44.44 ms, r3
     * (1.0 - 0.2) / 39 = 20.51 ms: the median is r3's, the largest r2's. */
    CHECK(a->tpot.count == 3);
    CHECK(fabs(s.tpot.p50 - 800.0 / 39) < 0.004 * 800.0 / 39);
    CHECK(fabs(s.tpot.max - 400.0 / 9) < 1e-3);
    CHECK(fabs(s.tpot.min - 1950.0 / 99) < 1e-3);
    /* The timing error, merged: delays 0.2, 0.4, 0.5 and 3 ms; TTFT error 0.2 ms (b's first
     * event had no stamp); gap errors 0.2 and 0.1 ms. */
    CHECK_EQ_INT(s.stamp_delay.count, 4);
    CHECK(s.stamp_delay.min == 0.2 && s.stamp_delay.max == 3.0);
    CHECK(fabs(s.stamp_delay.p50 - 0.4) < 0.002);
    CHECK(fabs(s.stamp_delay.mean - 4.1 / 4) < 1e-12);
    CHECK_EQ_INT(s.ttft_error.count, 1);
    CHECK(s.ttft_error.p50 == 0.2 && s.ttft_error.p99 == 0.2);
    CHECK_EQ_INT(s.itl_error.count, 2);
    CHECK(s.itl_error.min == 0.1 && s.itl_error.max == 0.2);
    CHECK_EQ_INT(ax.stamp_delay.max_ns, 3000000);
    CHECK_EQ_INT(ax.itl_error.min_ns, 100000);
    CHECK_EQ_INT(ax.ttft.min_ns, 50000000);
    CHECK_EQ_INT(ax.ttft.max_ns, 200000000);

    /* Rows: growth keeps contents. */
    struct ts_rows rows;
    rows_init(&rows);
    int all_ok = 1;
    for (int i = 0; i < 5000; i++) {
        struct ts_row r = ok_row(i, i, i + 1, i);
        all_ok &= rows_append(&rows, &r) == 0;
    }
    CHECK(all_ok);
    CHECK_EQ_INT(rows.count, 5000);
    CHECK_EQ_INT(rows.items[4321].output_tokens, 4321);
    rows_clear(&rows);
    CHECK_EQ_INT(rows.count, 0);
    rows_free(&rows);

    CHECK_EQ_STR(stats_err_class_name(TS_ERR_TRUNCATED), "truncated");
    CHECK_EQ_STR(stats_err_class_name(99), "unknown");
    free(a);
    free(b);
    return check_report("stats");
}
