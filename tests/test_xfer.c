/* test_xfer.c: one request from response bytes to row, without a network: timing stamps,
 * token counts from usage or from events, every error class, and the same row whatever the
 * byte boundaries. */
#include "tokstorm/xfer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static const char chat_stream[] =
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
    "\"finish_reason\":null}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"think\"}}]}\n\n"
    ": keep-alive\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"}}]}\r\n\r\n"
    "data:{\"choices\":[{\"index\":0,\"delta\":{\"content\":\" world\"}}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":7,"
    "\"total_tokens\":19}}\n\n"
    "data: [DONE]\n\n";

/* Runs one request whose body arrives in pieces of `piece` bytes, each 1 ms after the last,
 * starting at 10 ms; status at 5 ms; level start at 0. */
static void run(struct ts_xfer *x, int status, const char *body, size_t piece,
                enum ts_transport how, struct ts_row *row)
{
    xfer_begin(x, 1000000); /* 1 ms after level start */
    xfer_on_status(x, status, 5000000);
    size_t len = strlen(body);
    int64_t t = 10000000;
    for (size_t off = 0; off < len; off += piece, t += 1000000) {
        size_t n = len - off < piece ? len - off : piece;
        if (xfer_on_body(x, body + off, n, t) != 0) {
            how = TS_TRANSPORT_ABORTED;
            break;
        }
    }
    memset(row, 0, sizeof *row);
    xfer_finish(x, how, how == TS_TRANSPORT_OK ? NULL : "curl says no", t, 0, row);
}

/* A stream whose chunks carry tokstorm-mock's send stamps, each event arriving at a time chosen
 * here: the stamps kept beside the arrival times, and the delays and gap errors they give. */
static void test_stamps(struct ts_xfer *x)
{
    const int64_t day = 86400000000000; /* a day of uptime: stamps as the mock's look */
    const struct {
        const char *content; /* NULL: the role chunk, which is not a content event */
        int64_t stamp_ns;    /* 0: the chunk has none */
        int64_t arrive_ns;
    } ev[] = {
        {NULL, 9000000, 9100000},  {"a", 10000000, 10300000}, /* delay 0.3 ms: the TTFT error */
        {"b", 30000000, 30500000}, /* 0.5 ms; gaps 20.2 vs 20 ms: 0.2 ms */
        {"c", 50000000, 51000000}, /* 1 ms; 20.5 vs 20 ms: 0.5 ms */
        {"d", 50000000, 51000000}, /* the same write, the same read: 1 ms, and 0 */
        {"e", 0, 70000000},        /* no stamp: no delay, and no gap error after it */
        {"f", 90000000, 90100000}, /* 0.1 ms */
    };
    char buf[256];
    xfer_begin(x, day);
    xfer_on_status(x, 200, day + 1000000);
    for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++) {
        char stamp[48] = "";
        if (ev[i].stamp_ns)
            snprintf(stamp, sizeof stamp, ",\"tokstorm_send_ns\":%lld",
                     (long long)(day + ev[i].stamp_ns));
        snprintf(buf, sizeof buf, "data: {\"choices\":[{\"delta\":{\"content\":\"%s\"}}]%s}\n\n",
                 ev[i].content ? ev[i].content : "", stamp);
        CHECK_EQ_INT(xfer_on_body(x, buf, strlen(buf), day + ev[i].arrive_ns), 0);
    }
    const char *end = "data: {\"choices\":[],\"usage\":{\"completion_tokens\":6},"
                      "\"tokstorm_send_ns\":1}\n\ndata: [DONE]\n\n";
    xfer_on_body(x, end, strlen(end), day + 95000000);
    struct ts_row row;
    memset(&row, 0, sizeof row);
    xfer_finish(x, TS_TRANSPORT_OK, NULL, day + 96000000, day, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_NONE);
    CHECK_EQ_INT(x->n_tokens, 6);
    CHECK_EQ_INT(x->stamp_ns[0], day + 10000000);
    CHECK_EQ_INT(x->stamp_ns[4], 0);
    CHECK_EQ_INT(x->token_ns[4], day + 70000000);

    struct ts_level_stats *s = malloc(sizeof *s);
    struct ts_level_extremes e;
    stats_init(s, &e);
    stats_record_stamps(s, &e, x->token_ns, x->stamp_ns, x->n_tokens);
    CHECK_EQ_INT(s->stamp_delay.count, 5);
    CHECK_EQ_INT(s->stamp_delay.sum_ns, 300000 + 500000 + 1000000 + 1000000 + 100000);
    CHECK_EQ_INT(e.stamp_delay.min_ns, 100000);
    CHECK_EQ_INT(e.stamp_delay.max_ns, 1000000);
    CHECK_EQ_INT(s->ttft_error.count, 1);
    CHECK_EQ_INT(e.ttft_error.min_ns, 300000);
    CHECK_EQ_INT(s->itl_error.count, 3);
    CHECK_EQ_INT(s->itl_error.sum_ns, 200000 + 500000 + 0);
    CHECK_EQ_INT(e.itl_error.min_ns, 0);
    CHECK_EQ_INT(e.itl_error.max_ns, 500000);

    /* An unstamped first event leaves the TTFT error out; a stream with no stamps adds
     * nothing anywhere. */
    stats_init(s, &e);
    stats_record_stamps(s, &e, x->token_ns + 4, x->stamp_ns + 4, 2);
    CHECK_EQ_INT(s->stamp_delay.count, 1);
    CHECK_EQ_INT(s->ttft_error.count, 0);
    CHECK_EQ_INT(s->itl_error.count, 0);
    run(x, 200, chat_stream, sizeof chat_stream, TS_TRANSPORT_OK, &row);
    stats_init(s, &e);
    stats_record_stamps(s, &e, x->token_ns, x->stamp_ns, x->n_tokens);
    CHECK_EQ_INT(s->stamp_delay.count + s->ttft_error.count + s->itl_error.count, 0);
    free(s);
}

/* Feeds the header lines of one response, CRLF-terminated as libcurl hands them over. */
static void headers(struct ts_xfer *x, const char *const *lines, int64_t now_ns)
{
    for (; *lines; lines++)
        xfer_on_header(x, *lines, strlen(*lines), now_ns);
}

/* Header lines: the status, the Content-Type of the answer, and the stall clock. */
static void test_headers(struct ts_xfer *x)
{
    struct ts_row row;
    const char *sse[] = {"HTTP/1.1 200 OK\r\n",
                         "content-type: Text/Event-Stream; charset=utf-8\r\n", "\r\n", NULL};
    xfer_begin(x, 1000);
    CHECK_EQ_INT(x->last_byte_ns, 0); /* not written yet: no stall clock */
    xfer_on_sent(x, 1, 2000);
    CHECK_EQ_INT(x->last_byte_ns, 2000);
    headers(x, sse, 3000);
    CHECK_EQ_INT(x->http_status, 200);
    CHECK_EQ_INT(x->first_byte_ns, 3000);
    CHECK_EQ_INT(x->last_byte_ns, 3000);
    CHECK_EQ_INT(xfer_on_body(x, chat_stream, strlen(chat_stream), 4000), 0);
    CHECK_EQ_INT(x->last_byte_ns, 4000);
    xfer_finish(x, TS_TRANSPORT_OK, NULL, 5000, 0, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_NONE);
    CHECK_EQ_INT(row.output_tokens, 7);

    /* A 200 answer that is not an event stream fails at its first body byte. */
    const char *json[] = {"HTTP/1.1 200 OK\r\n", "Content-Type: application/json\r\n", "\r\n",
                          NULL};
    xfer_begin(x, 1000);
    headers(x, json, 3000);
    CHECK_EQ_INT(xfer_on_body(x, "{\"choices\":[]}", 14, 4000), -1);
    xfer_finish(x, TS_TRANSPORT_ABORTED, "Failure writing output", 5000, 0, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_MALFORMED);
    CHECK_EQ_INT(row.http_status, 200);
    CHECK(strstr(x->message, "'application/json', not text/event-stream") != NULL);

    /* An error's JSON body is its message, and no Content-Type at all is accepted. */
    const char *err[] = {"HTTP/1.1 503 Service Unavailable\r\n",
                         "Content-Type: application/json\r\n", "Retry-After: 1\r\n", NULL};
    xfer_begin(x, 1000);
    headers(x, err, 3000);
    CHECK_EQ_INT(xfer_on_body(x, "{\"error\":{\"message\":\"busy\"}}", 28, 4000), 0);
    xfer_finish(x, TS_TRANSPORT_OK, NULL, 5000, 0, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_HTTP_5XX);
    CHECK_EQ_INT(row.http_status, 503);
    CHECK_EQ_STR(x->message, "{\"error\":{\"message\":\"busy\"}}");
    const char *bare[] = {"HTTP/1.1 200 OK\r\n", "\r\n", NULL};
    xfer_begin(x, 1000);
    headers(x, bare, 3000);
    CHECK_EQ_INT(xfer_on_body(x, chat_stream, strlen(chat_stream), 4000), 0);
    xfer_finish(x, TS_TRANSPORT_OK, NULL, 5000, 0, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_NONE);

    /* A status line that is not one gives status 0; a second response's headers decide. */
    const char *odd[] = {"HTTP/1.1 2x0 OK\r\n", NULL};
    xfer_begin(x, 1000);
    headers(x, odd, 3000);
    CHECK_EQ_INT(x->http_status, 0);
    const char *twice[] = {"HTTP/1.1 200 OK\r\n", "Content-Type: text/html\r\n", "HTTP/2 200 \r\n",
                           "content-type:text/event-stream\r\n", NULL};
    xfer_begin(x, 1000);
    headers(x, twice, 3000);
    CHECK_EQ_INT(x->http_status, 200);
    CHECK_EQ_INT(x->not_sse, 0);
}

int main(void)
{
    struct ts_xfer x;
    CHECK(xfer_init(&x, TS_API_CHAT, 4096) == 0);
    struct ts_row row, whole;

    /* Whole body in one piece: usage decides the tokens; first token = reasoning event. */
    run(&x, 200, chat_stream, sizeof chat_stream, TS_TRANSPORT_OK, &whole);
    CHECK_EQ_INT(whole.error_class, TS_ERR_NONE);
    CHECK_EQ_INT(whole.output_tokens, 7);
    CHECK_EQ_INT(whole.prompt_tokens, 12);
    CHECK_EQ_INT(whole.tokens_from_usage, 1);
    CHECK_EQ_INT(whole.content_events, 3);
    CHECK_EQ_INT(whole.http_status, 200);
    CHECK(fabs(whole.start_s - 0.001) < 1e-12);
    CHECK(fabs(whole.first_byte_s - 0.005) < 1e-12);
    CHECK(fabs(whole.first_token_s - 0.010) < 1e-12);
    CHECK_EQ_INT(x.n_tokens, 3);

    /* Split into pieces of every size: same classification and counts; the first token's
     * time is the arrival of the piece that completed the reasoning event. */
    int same = 1;
    for (size_t piece = 1; piece < sizeof chat_stream; piece++) {
        run(&x, 200, chat_stream, piece, TS_TRANSPORT_OK, &row);
        same &= row.error_class == TS_ERR_NONE && row.output_tokens == 7 &&
                row.content_events == 3 && row.prompt_tokens == 12;
        const char *ev_end = strstr(chat_stream, "think\"}}]}\n\n") + strlen("think\"}}]}\n\n");
        size_t last_byte = (size_t)(ev_end - chat_stream) - 1;
        double want = 0.010 + (double)(last_byte / piece) * 0.001;
        same &= fabs(row.first_token_s - want) < 1e-9;
    }
    CHECK(same);

    /* No usage: tokens are the content events. */
    const char *no_usage = "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"
                           "data: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n\n"
                           "data: [DONE]\n\n";
    run(&x, 200, no_usage, 7, TS_TRANSPORT_OK, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_NONE);
    CHECK_EQ_INT(row.output_tokens, 2);
    CHECK_EQ_INT(row.tokens_from_usage, 0);

    /* A finish_reason without [DONE] is a complete stream too. */
    const char *no_done = "data: {\"choices\":[{\"delta\":{\"content\":\"a\"},"
                          "\"finish_reason\":\"length\"}]}\n\n";
    run(&x, 200, no_done, 100, TS_TRANSPORT_OK, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_NONE);

    /* Truncated: neither [DONE] nor finish_reason; or the connection broke mid-way. */
    const char *cut = "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n";
    run(&x, 200, cut, 1000, TS_TRANSPORT_OK, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_TRUNCATED);
    CHECK_EQ_INT(row.output_tokens, 0);
    run(&x, 200, chat_stream, 1000, TS_TRANSPORT_BROKEN, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_TRUNCATED);

    /* HTTP errors keep the body as the message, and are never parsed as SSE. */
    run(&x, 503, "{\"error\":{\"message\":\"overloaded\"}}", 5, TS_TRANSPORT_OK, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_HTTP_5XX);
    CHECK_EQ_INT(row.http_status, 503);
    CHECK(strstr(x.message, "overloaded") != NULL);
    run(&x, 404, "not found", 100, TS_TRANSPORT_OK, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_HTTP_4XX);
    run(&x, 302, "", 100, TS_TRANSPORT_OK, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_HTTP_OTHER);

    /* An error object inside a 200 stream stops the transfer. */
    const char *err_stream = "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"
                             "data: {\"error\":{\"message\":\"KV cache exhausted\"}}\n\n"
                             "data: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n\n";
    run(&x, 200, err_stream, 1000, TS_TRANSPORT_OK, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_STREAM);
    CHECK(strstr(x.message, "KV cache exhausted") != NULL);
    CHECK_EQ_INT(row.output_tokens, 0);
    /* An event that is not JSON is malformed, however it is cut, and its tokens so far are
     * not counted. */
    const char *bad_json = "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"
                           "data: {\"choices\":[{\"delta\":{\"content\":\" bro\n\n"
                           "data: [DONE]\n\n";
    same = 1;
    for (size_t piece = 1; piece <= strlen(bad_json); piece++) {
        run(&x, 200, bad_json, piece, TS_TRANSPORT_OK, &row);
        same &= row.error_class == TS_ERR_MALFORMED && row.output_tokens == 0 &&
                row.http_status == 200 && strstr(x.message, "malformed event") != NULL;
    }
    CHECK(same);
    run(&x, 200, "data: {oops\n\n", 1000, TS_TRANSPORT_OK, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_MALFORMED);

    /* An event over the size cap (4096 here) ends the request as oversized, on one line or
     * over several data lines, whether it arrives whole or a byte at a time. */
    char big[6000];
    memset(big, 'x', sizeof big);
    memcpy(big, "data: ", 6);
    big[sizeof big - 1] = '\0';
    run(&x, 200, big, 1000, TS_TRANSPORT_OK, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_OVERSIZED);
    CHECK(strstr(x.message, "4096 bytes") != NULL);
    run(&x, 200, big, 1, TS_TRANSPORT_OK, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_OVERSIZED);
    for (size_t i = 1000; i + 7 < sizeof big; i += 1000)
        memcpy(big + i, "\ndata: ", 7);
    run(&x, 200, big, 1000, TS_TRANSPORT_OK, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_OVERSIZED);
    CHECK_EQ_INT(row.output_tokens, 0);

    /* 429 is rate limiting, not just any 4xx. */
    run(&x, 429, "{\"error\":{\"message\":\"slow down\"}}", 100, TS_TRANSPORT_OK, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_RATE_LIMITED);
    CHECK_EQ_INT(row.http_status, 429);
    CHECK(strstr(x.message, "slow down") != NULL);

    /* Transport failures. */
    xfer_begin(&x, 1000);
    memset(&row, 0, sizeof row);
    xfer_finish(&x, TS_TRANSPORT_CONNECT, "Connection refused", 2000, 0, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_CONNECT);
    CHECK_EQ_INT(row.http_status, 0);
    CHECK(row.first_byte_s == -1 && row.first_token_s == -1);
    CHECK_EQ_STR(x.message, "Connection refused");
    run(&x, 200, cut, 1000, TS_TRANSPORT_TIMEOUT, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_TIMEOUT);
    xfer_begin(&x, 1000);
    xfer_finish(&x, TS_TRANSPORT_BROKEN, "Empty reply from server", 2000, 0, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_CONNECT);
    /* A reset is a reset before the answer or during it; the stall timeout wins over what
     * was seen, as the timeout does. */
    xfer_begin(&x, 1000);
    xfer_finish(&x, TS_TRANSPORT_RESET, "Connection reset by peer", 2000, 0, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_RESET);
    run(&x, 200, cut, 1000, TS_TRANSPORT_RESET, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_RESET);
    CHECK_EQ_INT(row.output_tokens, 0);
    run(&x, 200, cut, 1000, TS_TRANSPORT_STALLED, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_STALLED);
    CHECK_EQ_INT(row.output_tokens, 0);
    CHECK_EQ_STR(x.message, "curl says no");

    test_headers(&x);

    /* Cancelled by the run (an interrupted level's grace ran out): its own class whatever had
     * arrived, a whole answer included, and no tokens; what arrived stays in the row. */
    run(&x, 200, chat_stream, 1000, TS_TRANSPORT_CANCELLED, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_CANCELLED);
    CHECK_EQ_INT(row.output_tokens, 0);
    CHECK_EQ_INT(row.content_events, 3);
    CHECK(row.first_token_s > 0);
    xfer_begin(&x, 1000);
    xfer_finish(&x, TS_TRANSPORT_CANCELLED, "cancelled: interrupted", 2000, 0, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_CANCELLED);
    CHECK_EQ_STR(x.message, "cancelled: interrupted");
    CHECK_EQ_STR(stats_err_class_name(TS_ERR_CANCELLED), "cancelled");

    /* Many tokens: the arrival-time array grows past its first allocation. */
    xfer_begin(&x, 0);
    xfer_on_status(&x, 200, 1);
    const char *tok = "data: {\"choices\":[{\"delta\":{\"content\":\"t\"}}]}\n\n";
    for (int i = 0; i < 1000; i++)
        xfer_on_body(&x, tok, strlen(tok), 10 + i);
    xfer_on_body(&x, "data: [DONE]\n\n", 14, 2000);
    xfer_finish(&x, TS_TRANSPORT_OK, NULL, 2001, 0, &row);
    CHECK_EQ_INT(row.output_tokens, 1000);
    CHECK_EQ_INT(x.n_tokens, 1000);
    CHECK_EQ_INT(x.token_ns[999], 1009);
    CHECK_EQ_INT(x.stamp_ns[999], 0);

    /* And with stamps, past the first allocation too: each stays beside its arrival time. */
    xfer_begin(&x, 0);
    xfer_on_status(&x, 200, 1);
    for (int i = 0; i < 1000; i++) {
        char buf[128];
        snprintf(
            buf, sizeof buf,
            "data: {\"choices\":[{\"delta\":{\"content\":\"t\"}}],\"tokstorm_send_ns\":%d}\n\n",
            5 + i);
        xfer_on_body(&x, buf, strlen(buf), 10 + i);
    }
    CHECK_EQ_INT(x.n_tokens, 1000);
    CHECK_EQ_INT(x.stamp_ns[0], 5);
    CHECK_EQ_INT(x.stamp_ns[999], 1004);
    CHECK_EQ_INT(x.token_ns[999], 1009);

    test_stamps(&x);

    xfer_free(&x);
    return check_report("xfer");
}
