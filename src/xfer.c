/* xfer.c: one request from bytes to row: times the first byte and each content event, feeds
 * the SSE parser and the dialect interpreter, and decides how the request ended. It knows
 * nothing of curl, sockets, MPI or where rows go. */
#include "tokstorm/xfer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int xfer_init(struct ts_xfer *x, enum ts_api_kind api, size_t max_event_bytes)
{
    memset(x, 0, sizeof *x);
    x->api = api;
    if (sse_parser_init(&x->sse, max_event_bytes) != 0)
        return -1;
    x->token_cap = 256;
    x->token_ns = malloc(x->token_cap * sizeof *x->token_ns);
    x->stamp_ns = malloc(x->token_cap * sizeof *x->stamp_ns);
    if (x->token_ns == NULL || x->stamp_ns == NULL) {
        xfer_free(x);
        return -1;
    }
    return 0;
}

void xfer_free(struct ts_xfer *x)
{
    sse_parser_free(&x->sse);
    free(x->token_ns);
    free(x->stamp_ns);
    x->token_ns = x->stamp_ns = NULL;
}

void xfer_begin(struct ts_xfer *x, int64_t now_ns)
{
    sse_parser_reset(&x->sse);
    api_memo_reset(&x->memo);
    x->queued_ns = x->start_ns = now_ns;
    x->first_byte_ns = x->first_token_ns = x->end_ns = x->first_answer_ns = 0;
    x->http_status = 0;
    x->content_events = x->reasoning_events = 0;
    x->usage_prompt_tokens = x->usage_completion_tokens = 0;
    x->has_usage = x->saw_done = x->saw_finish = x->saw_error = 0;
    x->malformed = x->oversized = x->not_sse = 0;
    x->last_byte_ns = 0;
    x->n_tokens = 0;
    x->message[0] = '\0';
}

void xfer_on_sent(struct ts_xfer *x, int reused, int64_t now_ns)
{
    if (reused)
        x->start_ns = now_ns;
    /* The stall clock starts with the write: connecting has its own timeout. */
    x->last_byte_ns = now_ns;
}

void xfer_on_status(struct ts_xfer *x, int http_status, int64_t now_ns)
{
    if (x->first_byte_ns == 0)
        x->first_byte_ns = now_ns;
    x->last_byte_ns = now_ns;
    x->http_status = http_status;
    x->not_sse = 0; /* a new response: its own headers decide */
}

static int is_success(int status)
{
    return status >= 200 && status < 300;
}

/* Whether value (a header's value, leading spaces skipped) names text/event-stream, with or
 * without parameters ("text/event-stream; charset=utf-8"). */
static int is_event_stream(const char *value, size_t len)
{
    static const char sse[] = "text/event-stream";
    size_t n = sizeof sse - 1;
    if (len < n || strncasecmp(value, sse, n) != 0)
        return 0;
    return len == n || value[n] == ';' || value[n] == ' ' || value[n] == '\t' || value[n] == '\r' ||
           value[n] == '\n';
}

void xfer_on_header(struct ts_xfer *x, const char *line, size_t len, int64_t now_ns)
{
    static const char ct[] = "content-type:";
    if (len > 9 && memcmp(line, "HTTP/", 5) == 0) {
        /* "HTTP/1.1 200 OK": the three digits after the first space (0 if they are not). */
        const char *sp = memchr(line, ' ', len);
        int status = 0;
        for (int i = 1; sp != NULL && sp + i < line + len && i <= 3; i++) {
            if (sp[i] < '0' || sp[i] > '9') {
                status = 0;
                break;
            }
            status = status * 10 + (sp[i] - '0');
        }
        xfer_on_status(x, status >= 100 ? status : 0, now_ns);
        return;
    }
    x->last_byte_ns = now_ns;
    if (len >= sizeof ct - 1 && strncasecmp(line, ct, sizeof ct - 1) == 0) {
        const char *v = line + sizeof ct - 1, *end = line + len;
        while (v < end && (*v == ' ' || *v == '\t'))
            v++;
        x->not_sse = !is_event_stream(v, (size_t)(end - v));
        /* Only a 2xx answer fails for it; an error's body is its message (keep_error_body). */
        if (x->not_sse && is_success(x->http_status)) {
            size_t n = (size_t)(end - v);
            while (n > 0 && (v[n - 1] == '\r' || v[n - 1] == '\n' || v[n - 1] == ' '))
                n--;
            snprintf(x->message, sizeof x->message,
                     "the answer's Content-Type is '%.*s', not text/event-stream",
                     (int)(n < 80 ? n : 80), v);
        }
    }
}

/* Keeps the start of a non-2xx body as the failure's message, printable characters only. */
static void keep_error_body(struct ts_xfer *x, const char *buf, size_t len)
{
    size_t have = strlen(x->message);
    for (size_t i = 0; i < len && have + 1 < sizeof x->message; i++) {
        unsigned char c = (unsigned char)buf[i];
        x->message[have++] = (c >= 0x20 && c < 0x7f) ? (char)c : ' ';
    }
    x->message[have] = '\0';
}

struct event_ctx {
    struct ts_xfer *x;
    int64_t now_ns;
};

static int on_event(void *user, const struct ts_sse_event *ev)
{
    struct event_ctx *ctx = user;
    struct ts_xfer *x = ctx->x;
    struct ts_api_chunk chunk;
    if (ev->data_len == 0) /* an empty "data:" line carries nothing: a keep-alive at most */
        return 0;
    int rc = api_parse_event_memo(x->api, ev->data, ev->data_len, &x->memo, &chunk);
    if (rc != 0 || chunk.error) {
        if (rc == TS_API_ERR_MALFORMED)
            x->malformed = 1;
        else
            x->saw_error = 1;
        snprintf(x->message, sizeof x->message, "%s",
                 chunk.error_message[0] ? chunk.error_message : "error event in stream");
        return 1;
    }
    if (chunk.done) {
        x->saw_done = 1;
        return 0;
    }
    /* A running count (SGLang) says whether this event brought tokens: one that did not grow
     * it (a repeat of the text with the finish reason) is no token event. */
    if (chunk.usage_cumulative && chunk.has_usage && x->has_usage &&
        chunk.completion_tokens <= x->usage_completion_tokens)
        chunk.content_pieces = chunk.reasoning_pieces = 0;
    if (chunk.content_pieces + chunk.reasoning_pieces > 0) {
        if (x->first_token_ns == 0)
            x->first_token_ns = ctx->now_ns;
        /* An event with both (a server that ends its reasoning and starts the answer in one
         * chunk) is an answer event. */
        if (chunk.content_pieces > 0) {
            if (x->first_answer_ns == 0)
                x->first_answer_ns = ctx->now_ns;
        } else {
            x->reasoning_events++;
        }
        if (x->n_tokens == x->token_cap) {
            /* token_cap grows only once both arrays have: one that grew alone is just big. */
            size_t cap = x->token_cap * 2;
            int64_t *grown = realloc(x->token_ns, cap * sizeof *grown);
            if (grown == NULL)
                return 0; /* the gap is lost, the request is not */
            x->token_ns = grown;
            grown = realloc(x->stamp_ns, cap * sizeof *grown);
            if (grown == NULL)
                return 0;
            x->stamp_ns = grown;
            x->token_cap = cap;
        }
        x->stamp_ns[x->n_tokens] = chunk.server_send_ns;
        x->token_ns[x->n_tokens++] = ctx->now_ns;
        x->content_events++;
    }
    if (chunk.finished)
        x->saw_finish = 1;
    if (chunk.has_usage) {
        x->has_usage = 1;
        x->usage_prompt_tokens = chunk.prompt_tokens;
        x->usage_completion_tokens = chunk.completion_tokens;
    }
    return 0;
}

int xfer_on_body(struct ts_xfer *x, const char *buf, size_t len, int64_t now_ns)
{
    if (x->first_byte_ns == 0)
        x->first_byte_ns = now_ns;
    x->last_byte_ns = now_ns;
    if (!is_success(x->http_status)) {
        keep_error_body(x, buf, len);
        return 0;
    }
    if (x->not_sse) {
        /* A whole JSON answer (a server that ignored "stream": true), an HTML page from a
         * proxy: no event will come, and reading it all would only cost memory. */
        x->malformed = 1;
        return -1;
    }
    struct event_ctx ctx = {x, now_ns};
    int rc = sse_parser_feed(&x->sse, buf, len, on_event, &ctx);
    if (rc == 0)
        return 0;
    if (rc == TS_SSE_ERR_OVERSIZE) {
        x->oversized = 1;
        snprintf(x->message, sizeof x->message,
                 "an event or line longer than the cap of %zu bytes (--max-event-bytes)",
                 x->sse.max_event_bytes);
    } else if (rc == TS_SSE_ERR_NOMEM) {
        x->saw_error = 1;
        snprintf(x->message, sizeof x->message, "out of memory parsing the stream");
    }
    return -1;
}

/* The first rule that matches decides: the client's own limits, then what the server said
 * (its status, then what was wrong with its stream), then how the connection ended. */
static int classify(const struct ts_xfer *x, enum ts_transport how)
{
    /* Whatever had arrived: the client, not the server, ended it. */
    if (how == TS_TRANSPORT_CANCELLED)
        return TS_ERR_CANCELLED;
    if (how == TS_TRANSPORT_TIMEOUT)
        return TS_ERR_TIMEOUT;
    if (how == TS_TRANSPORT_STALLED)
        return TS_ERR_STALLED;
    if (x->http_status == 429)
        return TS_ERR_RATE_LIMITED;
    if (x->http_status >= 500)
        return TS_ERR_HTTP_5XX;
    if (x->http_status >= 400)
        return TS_ERR_HTTP_4XX;
    if (x->oversized)
        return TS_ERR_OVERSIZED;
    if (x->malformed)
        return TS_ERR_MALFORMED;
    if (x->saw_error)
        return TS_ERR_STREAM;
    if (how == TS_TRANSPORT_RESET)
        return TS_ERR_RESET;
    if (how != TS_TRANSPORT_OK && x->first_byte_ns == 0)
        return TS_ERR_CONNECT;
    if (x->http_status != 0 && !is_success(x->http_status))
        return TS_ERR_HTTP_OTHER;
    if (how != TS_TRANSPORT_OK || !(x->saw_done || x->saw_finish))
        return TS_ERR_TRUNCATED;
    return TS_ERR_NONE;
}

static double rel_s(int64_t t_ns, int64_t zero_ns)
{
    return t_ns ? (double)(t_ns - zero_ns) / 1e9 : -1.0;
}

void xfer_finish(struct ts_xfer *x, enum ts_transport how, const char *detail, int64_t now_ns,
                 int64_t zero_ns, struct ts_row *row)
{
    x->end_ns = now_ns;
    int err = classify(x, how);
    if (err != TS_ERR_NONE && x->message[0] == '\0' && detail != NULL)
        snprintf(x->message, sizeof x->message, "%s", detail);
    if (err == TS_ERR_TRUNCATED && x->message[0] == '\0')
        snprintf(x->message, sizeof x->message, "stream ended without [DONE] or finish_reason");

    row->start_s = rel_s(x->start_ns, zero_ns);
    row->first_byte_s = rel_s(x->first_byte_ns, zero_ns);
    row->first_token_s = rel_s(x->first_token_ns, zero_ns);
    row->first_answer_s = rel_s(x->first_answer_ns, zero_ns);
    row->end_s = rel_s(x->end_ns, zero_ns);
    row->http_status = x->http_status;
    row->error_class = err;
    row->content_events = x->content_events;
    row->reasoning_events = x->reasoning_events;
    row->prompt_tokens = x->has_usage ? x->usage_prompt_tokens : 0;
    row->tokens_from_usage = x->has_usage;
    if (err != TS_ERR_NONE)
        row->output_tokens = 0;
    else
        row->output_tokens = x->has_usage ? x->usage_completion_tokens : x->content_events;
}
