/* test_level.c: how a level's streams are shared among ranks, which prompt each request
 * takes, and the closed loop's counting with warm-up and duration. */
#include "tokstorm/level.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

int main(void)
{
    /* Shares: floor(C/n) plus one for r < C mod n; contiguous; sum to C. */
    int64_t cs[] = {1, 2, 3, 7, 8, 32, 100, 4097};
    int shares_ok = 1;
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++)
        for (int n = 1; n <= 5; n++) {
            int64_t next = 0, sum = 0;
            for (int r = 0; r < n; r++) {
                int64_t first, count;
                level_share(cs[i], r, n, &first, &count);
                int64_t want = cs[i] / n + (r < cs[i] % n ? 1 : 0);
                shares_ok &= count == want && first == next;
                next += count;
                sum += count;
            }
            shares_ok &= sum == cs[i];
        }
    CHECK(shares_ok);

    struct ts_level l;
    CHECK(level_init(&l) == 0);
    /* C = 8 over 3 ranks: rank 1 runs global streams 3..5. Two measured requests each, after
     * one warm-up request each (sent in its own phase, so this level begins at index 1), 5
     * prompts. */
    struct ts_level_plan plan = {
        .concurrency = 8, .rank = 1, .requests_per_stream = 2, .warmup = 1, .prompt_count = 5};
    level_share(8, 1, 3, &plan.first_stream, &plan.local_streams);
    CHECK_EQ_INT(plan.first_stream, 3);
    CHECK_EQ_INT(plan.local_streams, 3);
    CHECK(level_begin(&l, &plan, 0, 1000) == 0);

    struct ts_xfer x;
    CHECK(xfer_init(&x, TS_API_CHAT, 1 << 16) == 0);
    const char *ok_stream = "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"
                            "data: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n\n"
                            "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\n"
                            "data: [DONE]\n\n";
    int64_t now = 2000;
    int sent[3] = {1, 1, 1}, prompts_ok = 1;
    struct ts_level_request req;
    for (int round = 0; round < 5; round++)
        for (int64_t s = 0; s < 3; s++) {
            if (!level_next(&l, s, now, &req))
                continue;
            int64_t global = 3 + s;
            prompts_ok &= req.prompt_index == (global + req.index * 8) % 5;
            prompts_ok &= req.index == sent[s];
            sent[s]++;
            xfer_begin(&x, now);
            xfer_on_status(&x, 200, now + 10);
            xfer_on_body(&x, ok_stream, strlen(ok_stream), now + 20);
            level_done(&l, s, &x, TS_TRANSPORT_OK, NULL, now + 30);
            now += 100;
        }
    CHECK(prompts_ok);
    CHECK(sent[0] == 3 && sent[1] == 3 && sent[2] == 3); /* indices 1 and 2 sent here */
    CHECK_EQ_INT(l.rows.count, 6);
    CHECK_EQ_INT(l.stats->c.ok, 6);
    CHECK_EQ_INT(l.stats->c.output_tokens, 12);
    int rows_ok = 1;
    for (size_t i = 0; i < l.rows.count; i++) {
        const struct ts_row *r = &l.rows.items[i];
        rows_ok &= r->rank == 1 && r->stream >= 3 && r->stream <= 5 && r->request >= 1;
        rows_ok &= r->start_s >= 0 && r->end_s > r->start_s;
    }
    CHECK(rows_ok);
    /* Six requests, 100 ns apart from 2000, each ending 30 ns after it starts: the first
     * starts at 2000, the last (2500) ends at 2530. All three streams are busy from the third
     * stream's first request (2200) until the first stream runs out, when it asks for a third
     * request at 2600. The rank's first request started at 2000. */
    CHECK_EQ_INT(l.extremes.first_start_ns, 2000);
    CHECK_EQ_INT(l.extremes.last_end_ns, 2530);
    CHECK_EQ_INT(l.extremes.full_start_ns, 2200);
    CHECK_EQ_INT(l.extremes.full_end_ns, 2600);
    CHECK_EQ_INT(l.extremes.rank_start_min_ns, 2000);
    CHECK_EQ_INT(l.extremes.rank_start_max_ns, 2000);
    CHECK(level_next(&l, 0, 5000, &req) == 0); /* a finished stream stays finished */
    CHECK_EQ_INT(l.extremes.full_end_ns, 2600);
    /* Timeline: 6 measured requests x 2 tokens, 6 successful ends. */
    CHECK_EQ_INT(l.timeline.n_fine, 1);
    CHECK_EQ_INT(l.timeline.tokens[0], 12);
    CHECK_EQ_INT(l.timeline.ok[0], 6);

    /* The common timeline: rows are relative to the origin, not to the level start. */
    CHECK(level_begin(&l, &plan, -1000000000, 0) == 0);
    CHECK(level_next(&l, 0, 1000, &req) == 1);
    CHECK_EQ_INT(req.index, 1);
    xfer_begin(&x, 1000);
    level_done(&l, 0, &x, TS_TRANSPORT_CONNECT, "no", 10);
    CHECK_EQ_INT(l.rows.count, 1);
    /* 1 us on a clock whose zero is at -1 s */
    CHECK(fabs(l.rows.items[0].start_s - 1.000001) < 1e-12);
    CHECK_EQ_INT(l.rows.items[0].request, 1);
    CHECK_EQ_INT(l.stats->c.err_by_class[TS_ERR_CONNECT], 1);
    CHECK_EQ_INT(l.timeline.err[0], 1);

    /* Duration mode: no measured request starts once the duration has passed. */
    struct ts_level_plan dplan = {
        .concurrency = 1, .rank = 0, .local_streams = 1, .duration_ns = 1000, .prompt_count = 5};
    CHECK(level_begin(&l, &dplan, 0, 0) == 0);
    CHECK(level_next(&l, 0, 0, &req) == 1);
    CHECK(level_next(&l, 0, 999, &req) == 1);
    CHECK(level_next(&l, 0, 1000, &req) == 0);
    CHECK_EQ_INT(l.rows.count, 0); /* begin cleared the previous level */

    /* A rank with no stream in this level. */
    struct ts_level_plan empty = {
        .concurrency = 1, .rank = 2, .requests_per_stream = 1, .prompt_count = 5};
    level_share(1, 2, 3, &empty.first_stream, &empty.local_streams);
    CHECK_EQ_INT(empty.local_streams, 0);
    CHECK(level_begin(&l, &empty, 0, 0) == 0);
    CHECK(l.extremes.full_start_ns == INT64_MIN && l.extremes.full_end_ns == INT64_MAX);
    CHECK(l.extremes.first_start_ns == INT64_MAX && l.extremes.rank_start_max_ns == INT64_MIN);

    /* Recording content event times: each row says how many of the flattened times are its
     * own, failures' included; without recording there are none. */
    plan.record_events = 1;
    CHECK(level_begin(&l, &plan, 1000, 2000) == 0);
    CHECK(level_next(&l, 0, 2000, &req) == 1);
    xfer_begin(&x, 2000);
    xfer_on_status(&x, 200, 2010);
    xfer_on_body(&x, ok_stream, 47, 2020); /* the first event */
    xfer_on_body(&x, ok_stream + 47, strlen(ok_stream) - 47, 2030);
    level_done(&l, 0, &x, TS_TRANSPORT_OK, NULL, 2040);
    CHECK(level_next(&l, 1, 3000, &req) == 1);
    xfer_begin(&x, 3000);
    xfer_on_status(&x, 200, 3010);
    xfer_on_body(&x, ok_stream, 47, 3020);
    level_done(&l, 1, &x, TS_TRANSPORT_BROKEN, "reset", 3030); /* truncated after one event */
    CHECK_EQ_INT(l.rows.count, 2);
    CHECK_EQ_INT(l.rows.items[0].recorded_events, 2);
    CHECK_EQ_INT(l.rows.items[1].recorded_events, 1);
    CHECK_EQ_INT(l.events.count, 3);
    CHECK(l.events.t_s[0] == 1020e-9 && l.events.t_s[1] == 1030e-9 && l.events.t_s[2] == 2020e-9);
    CHECK(l.events.t_s[0] == l.rows.items[0].first_token_s);
    plan.record_events = 0;
    CHECK(level_begin(&l, &plan, 1000, 2000) == 0);
    CHECK_EQ_INT(l.events.count, 0); /* begin cleared them */
    CHECK(level_next(&l, 0, 2000, &req) == 1);
    xfer_begin(&x, 2000);
    xfer_on_status(&x, 200, 2010);
    xfer_on_body(&x, ok_stream, strlen(ok_stream), 2020);
    level_done(&l, 0, &x, TS_TRANSPORT_OK, NULL, 2040);
    CHECK(l.rows.items[0].recorded_events == 0 && l.events.count == 0);

    /* Stopped (an interrupt): every stream says it has finished from then on; those that had
     * requests left count as cut off, a stream that had sent all of them does not. Plan: 3
     * streams, 2 measured requests each. */
    CHECK(level_begin(&l, &plan, 0, 0) == 0);
    for (int k = 0; k < 2; k++) { /* stream 0 sends both of its requests */
        CHECK(level_next(&l, 0, 10 + k, &req) == 1);
        xfer_begin(&x, 10 + k);
        level_done(&l, 0, &x, TS_TRANSPORT_CANCELLED, "c", 20 + k);
    }
    CHECK(level_next(&l, 1, 10, &req) == 1); /* stream 1 has one in flight */
    CHECK_EQ_INT(l.stats->c.cut_off, 0);
    level_stop(&l);
    CHECK(level_next(&l, 0, 30, &req) == 0);
    CHECK_EQ_INT(l.stats->c.cut_off, 0); /* stream 0 was done anyway */
    CHECK(level_next(&l, 1, 30, &req) == 0);
    CHECK(level_next(&l, 2, 30, &req) == 0);
    CHECK_EQ_INT(l.stats->c.cut_off, 2);
    CHECK(level_next(&l, 2, 40, &req) == 0);
    CHECK_EQ_INT(l.stats->c.cut_off, 2); /* each stream once */
    CHECK_EQ_INT(l.stats->c.err_by_class[TS_ERR_CANCELLED], 2);
    CHECK_EQ_INT(l.stats->c.err, 2);
    CHECK_EQ_INT(l.extremes.full_end_ns, 30); /* the stop ends the window of full load */
    CHECK(level_begin(&l, &plan, 0, 0) == 0);
    CHECK(level_next(&l, 0, 10, &req) == 1); /* a new level is not stopped */
    CHECK_EQ_INT(l.stats->c.cut_off, 0);

    /* Open loop: no arrival is due after the stop; arrivals left count once for the rank. */
    struct ts_level_plan oplan = {.concurrency = 4,
                                  .local_streams = 4,
                                  .open_loop = 1,
                                  .rate_per_s = 100,
                                  .open_requests = 10,
                                  .prompt_count = 5,
                                  .nranks = 1,
                                  .arrival = TS_ARRIVAL_CONSTANT,
                                  .burstiness = 1};
    CHECK(level_begin(&l, &oplan, 0, 0) == 0);
    CHECK(level_next_due(&l) != INT64_MAX);
    level_stop(&l);
    level_stop(&l);
    CHECK(level_next_due(&l) == INT64_MAX);
    CHECK_EQ_INT(l.stats->c.cut_off, 1);

    xfer_free(&x);
    level_free(&l);
    return check_report("level");
}
