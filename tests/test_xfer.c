/* test_xfer.c: one request from response bytes to row, without a network: timing stamps,
 * token counts from usage or from events, every error class, and the same row whatever the
 * byte boundaries. */
#include "tokstorm/xfer.h"

#include <math.h>
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
    run(&x, 200, "data: {oops\n\n", 1000, TS_TRANSPORT_OK, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_STREAM);

    /* An event over the size cap (4096 here) ends the request. */
    char big[6000];
    memset(big, 'x', sizeof big);
    memcpy(big, "data: ", 6);
    big[sizeof big - 1] = '\0';
    run(&x, 200, big, 1000, TS_TRANSPORT_OK, &row);
    CHECK_EQ_INT(row.error_class, TS_ERR_STREAM);

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

    xfer_free(&x);
    return check_report("xfer");
}
