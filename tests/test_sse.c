/* test_sse.c: the SSE parser against the framing rules in sse.h. The first property is that
 * how a stream is cut into feeds never changes the events it yields. */
#include "tokstorm/sse.h"

#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EVENTS        32
#define DEFAULT_MAX_BYTES 65536

struct events {
    int count;
    char type[MAX_EVENTS][64];
    char *data[MAX_EVENTS];
    size_t data_len[MAX_EVENTS];
    int stop_at; /* the callback returns 7 on this event (1-based); 0: never */
    int bad_termination;
};

static int on_event(void *user, const struct ts_sse_event *ev)
{
    struct events *e = user;
    if (ev->data[ev->data_len] != '\0')
        e->bad_termination++;
    if (e->count < MAX_EVENTS) {
        snprintf(e->type[e->count], sizeof e->type[0], "%s", ev->type);
        e->data[e->count] = malloc(ev->data_len + 1);
        memcpy(e->data[e->count], ev->data, ev->data_len + 1);
        e->data_len[e->count] = ev->data_len;
    }
    e->count++;
    return e->stop_at != 0 && e->count == e->stop_at ? 7 : 0;
}

static void events_clear(struct events *e)
{
    for (int i = 0; i < e->count && i < MAX_EVENTS; i++)
        free(e->data[i]);
    memset(e, 0, sizeof *e);
}

static int events_equal(const struct events *a, const struct events *b)
{
    if (a->count != b->count || a->count > MAX_EVENTS)
        return 0;
    for (int i = 0; i < a->count; i++)
        if (strcmp(a->type[i], b->type[i]) != 0 || a->data_len[i] != b->data_len[i] ||
            memcmp(a->data[i], b->data[i], a->data_len[i]) != 0)
            return 0;
    return 1;
}

/* Feeds text through a fresh parser in the pieces whose lengths are given (0-terminated; the
 * rest goes in one last feed). Returns the first non-zero feed result, else 0. */
static int feed_pieces(const char *text, size_t len, const size_t *pieces, struct events *out)
{
    struct ts_sse_parser p;
    int rc = sse_parser_init(&p, DEFAULT_MAX_BYTES);
    if (rc != 0)
        return rc;
    size_t off = 0;
    for (; rc == 0 && pieces != NULL && *pieces != 0 && off < len; pieces++) {
        size_t n = *pieces < len - off ? *pieces : len - off;
        rc = sse_parser_feed(&p, text + off, n, on_event, out);
        off += n;
    }
    if (rc == 0)
        rc = sse_parser_feed(&p, text + off, len - off, on_event, out);
    sse_parser_free(&p);
    return rc;
}

static int feed_whole(const char *text, struct events *out)
{
    return feed_pieces(text, strlen(text), NULL, out);
}

static int feed_split(const char *text, size_t at, struct events *out)
{
    struct ts_sse_parser p;
    size_t len = strlen(text);
    int rc = sse_parser_init(&p, DEFAULT_MAX_BYTES);
    if (rc == 0)
        rc = sse_parser_feed(&p, text, at, on_event, out);
    if (rc == 0)
        rc = sse_parser_feed(&p, text + at, len - at, on_event, out);
    sse_parser_free(&p);
    return rc;
}

static int feed_bytewise(const char *text, struct events *out)
{
    struct ts_sse_parser p;
    size_t len = strlen(text);
    int rc = sse_parser_init(&p, DEFAULT_MAX_BYTES);
    for (size_t i = 0; rc == 0 && i < len; i++)
        rc = sse_parser_feed(&p, text + i, 1, on_event, out);
    sse_parser_free(&p);
    return rc;
}

/* Whole, split in two at every offset, one byte at a time, and in pseudo-random pieces: all
 * must give the events of feeding the whole text. Counts disagreeing cuts into one check each
 * so that a failure names the kind of cut, not a thousand lines. */
static void check_split_invariance(const char *text, const struct events *expected)
{
    size_t len = strlen(text);
    struct events got = {0};

    CHECK_EQ_INT(feed_whole(text, &got), 0);
    CHECK(events_equal(&got, expected));
    CHECK_EQ_INT(got.bad_termination, 0);
    events_clear(&got);

    int split_mismatches = 0;
    for (size_t at = 0; at <= len; at++) {
        if (feed_split(text, at, &got) != 0 || !events_equal(&got, expected)) {
            if (split_mismatches == 0)
                fprintf(stderr, "first split mismatch at offset %zu\n", at);
            split_mismatches++;
        }
        events_clear(&got);
    }
    CHECK_EQ_INT(split_mismatches, 0);

    CHECK_EQ_INT(feed_bytewise(text, &got), 0);
    CHECK(events_equal(&got, expected));
    events_clear(&got);

    uint32_t seed = 12345;
    int random_mismatches = 0;
    for (int round = 0; round < 200; round++) {
        size_t pieces[64];
        for (int i = 0; i < 63; i++) {
            seed = seed * 1103515245u + 12345u;
            pieces[i] = 1 + (seed >> 16) % 23;
        }
        pieces[63] = 0;
        if (feed_pieces(text, len, pieces, &got) != 0 || !events_equal(&got, expected))
            random_mismatches++;
        events_clear(&got);
    }
    CHECK_EQ_INT(random_mismatches, 0);
}

static void expect_event(struct events *e, const char *type, const char *data)
{
    snprintf(e->type[e->count], sizeof e->type[0], "%s", type);
    e->data_len[e->count] = strlen(data);
    e->data[e->count] = malloc(e->data_len[e->count] + 1);
    memcpy(e->data[e->count], data, e->data_len[e->count] + 1);
    e->count++;
}

#define CHUNK_HEAD                                                                                 \
    "{\"id\":\"chatcmpl-7\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,"
#define ROLE_CHUNK                                                                                 \
    CHUNK_HEAD "\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","      \
               "\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}"
#define HELLO_CHUNK                                                                                \
    CHUNK_HEAD "\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"},"      \
               "\"logprobs\":null,\"finish_reason\":null}]}"
#define WORLD_CHUNK                                                                                \
    CHUNK_HEAD "\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" world: "       \
               "a\\nb\"},\"logprobs\":null,\"finish_reason\":null}]}"
#define FINISH_CHUNK                                                                               \
    CHUNK_HEAD "\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,"         \
               "\"finish_reason\":\"stop\",\"stop_reason\":null}]}"
#define USAGE_CHUNK                                                                                \
    CHUNK_HEAD "\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,"                   \
               "\"total_tokens\":14,\"completion_tokens\":2}}"

static void expect_openai_stream(struct events *e)
{
    expect_event(e, "message", ROLE_CHUNK);
    expect_event(e, "message", HELLO_CHUNK);
    expect_event(e, "message", WORLD_CHUNK);
    expect_event(e, "message", FINISH_CHUNK);
    expect_event(e, "message", USAGE_CHUNK);
    expect_event(e, "message", "[DONE]");
}

static void test_openai_stream(void)
{
    const char *stream = "data: " ROLE_CHUNK "\n\n"
                         "data: " HELLO_CHUNK "\n\n"
                         ": ping - 2024-01-01 00:00:00\n\n"
                         "data: " WORLD_CHUNK "\n\n"
                         "data: " FINISH_CHUNK "\n\n"
                         "data: " USAGE_CHUNK "\n\n"
                         "data: [DONE]\n\n";
    struct events expected = {0};
    expect_openai_stream(&expected);
    check_split_invariance(stream, &expected);
    events_clear(&expected);
}

static void test_line_ends(void)
{
    struct events expected = {0};
    expect_event(&expected, "message", "a");
    expect_event(&expected, "delta", "b\nc");
    expect_event(&expected, "message", "");
    expect_event(&expected, "message", "d");

    const char *lf = "data: a\n\nevent: delta\ndata: b\ndata: c\n\ndata\n\n: note\ndata:d\n\n";
    const char *crlf = "data: a\r\n\r\nevent: delta\r\ndata: b\r\ndata: c\r\n\r\ndata\r\n\r\n"
                       ": note\r\ndata:d\r\n\r\n";
    const char *cr = "data: a\r\revent: delta\rdata: b\rdata: c\r\rdata\r\r: note\rdata:d\r\r";
    const char *mixed = "data: a\r\n\nevent: delta\rdata: b\r\ndata: c\n\r\ndata\r\r\n"
                        ": note\n\rdata:d\r\n\r";
    check_split_invariance(lf, &expected);
    check_split_invariance(crlf, &expected);
    check_split_invariance(cr, &expected);
    check_split_invariance(mixed, &expected);
    events_clear(&expected);
}

/* The CR ending one feed and the LF opening the next are one line end, not two. */
static void test_crlf_across_feeds(void)
{
    struct ts_sse_parser p;
    struct events got = {0};
    CHECK_EQ_INT(sse_parser_init(&p, 1024), 0);
    CHECK_EQ_INT(sse_parser_feed(&p, "data: a\r", 8, on_event, &got), 0);
    CHECK_EQ_INT(sse_parser_feed(&p, "\ndata: b\n\n", 10, on_event, &got), 0);
    CHECK_EQ_INT(got.count, 1);
    CHECK_EQ_STR(got.data[0], "a\nb");
    events_clear(&got);

    /* An empty feed between the CR and the LF changes nothing. */
    CHECK_EQ_INT(sse_parser_feed(&p, "data: a\r", 8, on_event, &got), 0);
    CHECK_EQ_INT(sse_parser_feed(&p, NULL, 0, on_event, &got), 0);
    CHECK_EQ_INT(sse_parser_feed(&p, "\n", 1, on_event, &got), 0);
    CHECK_EQ_INT(sse_parser_feed(&p, "\n", 1, on_event, &got), 0);
    CHECK_EQ_INT(got.count, 1);
    CHECK_EQ_STR(got.data[0], "a");
    events_clear(&got);

    /* A lone CR at the end of a feed followed by another CR is an empty line. */
    CHECK_EQ_INT(sse_parser_feed(&p, "data: x\r", 8, on_event, &got), 0);
    CHECK_EQ_INT(got.count, 0);
    CHECK_EQ_INT(sse_parser_feed(&p, "\rdata: y\r\r", 10, on_event, &got), 0);
    CHECK_EQ_INT(got.count, 2);
    CHECK_EQ_STR(got.data[0], "x");
    CHECK_EQ_STR(got.data[1], "y");
    events_clear(&got);
    sse_parser_free(&p);
}

static void test_fields(void)
{
    struct events got = {0};

    CHECK_EQ_INT(feed_whole("data:x\n\ndata:  two\n\ndata: {\"a\":\"b:c\"}\n\n", &got), 0);
    CHECK_EQ_INT(got.count, 3);
    CHECK_EQ_STR(got.data[0], "x");
    CHECK_EQ_STR(got.data[1], " two");
    CHECK_EQ_STR(got.data[2], "{\"a\":\"b:c\"}");
    events_clear(&got);

    CHECK_EQ_INT(feed_whole("data: a\ndata: b\ndata:\ndata: c\n\n", &got), 0);
    CHECK_EQ_INT(got.count, 1);
    CHECK_EQ_STR(got.data[0], "a\nb\n\nc");
    CHECK_EQ_INT(got.data_len[0], 6);
    events_clear(&got);

    CHECK_EQ_INT(feed_whole(": ping\n\n:\n\n: ping\ndata: x\n\n", &got), 0);
    CHECK_EQ_INT(got.count, 1);
    CHECK_EQ_STR(got.data[0], "x");
    events_clear(&got);

    /* The type applies to one event only. */
    CHECK_EQ_INT(feed_whole("event: error\ndata: {\"error\":1}\n\ndata: next\n\n", &got), 0);
    CHECK_EQ_INT(got.count, 2);
    CHECK_EQ_STR(got.type[0], "error");
    CHECK_EQ_STR(got.data[0], "{\"error\":1}");
    CHECK_EQ_STR(got.type[1], "message");
    events_clear(&got);

    /* An event with no data line is not dispatched, and its type does not leak onward. */
    CHECK_EQ_INT(feed_whole("event: status\n\nevent: other\nid: 3\n\ndata: y\n\n", &got), 0);
    CHECK_EQ_INT(got.count, 1);
    CHECK_EQ_STR(got.type[0], "message");
    CHECK_EQ_STR(got.data[0], "y");
    events_clear(&got);

    CHECK_EQ_INT(feed_whole("id: 42\nretry: 1000\ndata: z\nid\nretry:x\n\n", &got), 0);
    CHECK_EQ_INT(got.count, 1);
    CHECK_EQ_STR(got.type[0], "message");
    CHECK_EQ_STR(got.data[0], "z");
    events_clear(&got);

    /* A line without a colon is a field with an empty value: "data" is an empty data line,
     * "event" an empty type (so "message"), anything else ignored. */
    CHECK_EQ_INT(feed_whole("data\n\nfoo\nevent\ndata\ndata\n\nDATA: no\nbar\n\n", &got), 0);
    CHECK_EQ_INT(got.count, 2);
    CHECK_EQ_STR(got.data[0], "");
    CHECK_EQ_INT(got.data_len[0], 0);
    CHECK_EQ_STR(got.type[1], "message");
    CHECK_EQ_STR(got.data[1], "\n");
    events_clear(&got);

    CHECK_EQ_INT(feed_whole("event:  spaced\ndata: q\n\n", &got), 0);
    CHECK_EQ_STR(got.type[0], " spaced");
    events_clear(&got);

    /* A type longer than the parser keeps is cut, not failed. */
    char long_type[200];
    snprintf(long_type, sizeof long_type, "event: %0100d\ndata: t\n\n", 7);
    CHECK_EQ_INT(feed_whole(long_type, &got), 0);
    CHECK_EQ_INT(got.count, 1);
    CHECK_EQ_INT(strlen(got.type[0]), 63);
    events_clear(&got);

    /* No line end yet: nothing is dispatched, even after an empty data line. */
    CHECK_EQ_INT(feed_whole("data: a\n\ndata: b\n", &got), 0);
    CHECK_EQ_INT(got.count, 1);
    events_clear(&got);
}

static void test_oversize(void)
{
    struct ts_sse_parser p;
    struct events got = {0};
    char line[256];

    /* One data line longer than the cap, in one feed and one byte at a time. */
    CHECK_EQ_INT(sse_parser_init(&p, 64), 0);
    int n = snprintf(line, sizeof line, "data: ok\n\ndata: %0100d\n\ndata: never\n\n", 0);
    CHECK_EQ_INT(sse_parser_feed(&p, line, (size_t)n, on_event, &got), TS_SSE_ERR_OVERSIZE);
    CHECK_EQ_INT(got.count, 1);
    events_clear(&got);
    sse_parser_reset(&p);
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++)
        rc = sse_parser_feed(&p, line + i, 1, on_event, &got);
    CHECK_EQ_INT(rc, TS_SSE_ERR_OVERSIZE);
    CHECK_EQ_INT(got.count, 1);
    CHECK(p.line_cap <= 64);
    events_clear(&got);

    /* Lines within the cap whose joined data is not: 30 + 1 + 30 + 1 + 30 = 92 > 64. */
    sse_parser_reset(&p);
    n = snprintf(line, sizeof line, "data: %030d\ndata: %030d\ndata: %030d\n\n", 1, 2, 3);
    CHECK_EQ_INT(sse_parser_feed(&p, line, (size_t)n, on_event, &got), TS_SSE_ERR_OVERSIZE);
    CHECK_EQ_INT(got.count, 0);
    CHECK(p.data_cap <= 65);

    /* Exactly at the cap is fine: 31 + 1 + 32 = 64 bytes of data. */
    sse_parser_reset(&p);
    n = snprintf(line, sizeof line, "data: %031d\ndata: %032d\n\n", 1, 2);
    CHECK_EQ_INT(sse_parser_feed(&p, line, (size_t)n, on_event, &got), 0);
    CHECK_EQ_INT(got.count, 1);
    CHECK_EQ_INT(got.data_len[0], 64);
    events_clear(&got);
    sse_parser_reset(&p);
    n = snprintf(line, sizeof line, "data: %031d\ndata: %033d\n\n", 1, 2);
    CHECK_EQ_INT(sse_parser_feed(&p, line, (size_t)n, on_event, &got), TS_SSE_ERR_OVERSIZE);
    CHECK_EQ_INT(got.count, 0);

    /* An over-long line fails the same however it is cut, even when it would cost no memory
     * (a comment, whole in one feed): the events before it arrive, none after. */
    n = snprintf(line, sizeof line, "data: ok\n\n: %0100d\n\ndata: never\n\n", 0);
    int split_mismatches = 0;
    for (int at = 0; at <= n; at++) {
        sse_parser_reset(&p);
        rc = sse_parser_feed(&p, line, (size_t)at, on_event, &got);
        if (rc == 0)
            rc = sse_parser_feed(&p, line + at, (size_t)(n - at), on_event, &got);
        if (rc != TS_SSE_ERR_OVERSIZE || got.count != 1)
            split_mismatches++;
        events_clear(&got);
    }
    CHECK_EQ_INT(split_mismatches, 0);

    /* A comment counts as a line too: a server that never ends a line cannot grow memory. */
    sse_parser_reset(&p);
    memset(line, 'x', sizeof line);
    line[0] = ':';
    rc = 0;
    int feeds = 0;
    for (; feeds < 1000 && rc == 0; feeds++)
        rc = sse_parser_feed(&p, line, 16, on_event, &got);
    CHECK_EQ_INT(rc, TS_SSE_ERR_OVERSIZE);
    CHECK_EQ_INT(feeds, 5);
    CHECK(p.line_cap <= 64);
    CHECK(p.data_cap <= 65);
    sse_parser_free(&p);

    /* Buffers grow by doubling and stop at the cap. */
    size_t big_len = 5000;
    char *big = malloc(big_len + 16);
    memcpy(big, "data: ", 6);
    memset(big + 6, 'y', big_len);
    memcpy(big + 6 + big_len, "\n\n", 3);
    CHECK_EQ_INT(sse_parser_init(&p, 6000), 0);
    rc = 0;
    for (size_t i = 0; i < big_len + 8 && rc == 0; i += 100)
        rc = sse_parser_feed(&p, big + i, big_len + 8 - i < 100 ? big_len + 8 - i : 100, on_event,
                             &got);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(got.count, 1);
    CHECK_EQ_INT(got.data_len[0], big_len);
    CHECK(p.line_cap >= big_len + 6 && p.line_cap <= 6000);
    CHECK(p.data_cap >= big_len + 1 && p.data_cap <= 6001);
    events_clear(&got);
    sse_parser_free(&p);
    free(big);
}

static void test_callback_stops(void)
{
    struct events got = {.stop_at = 2};
    const char *stream = "data: 1\n\ndata: 2\n\ndata: 3\n\n";
    CHECK_EQ_INT(feed_whole(stream, &got), 7);
    CHECK_EQ_INT(got.count, 2);
    CHECK_EQ_STR(got.data[1], "2");
    events_clear(&got);

    got.stop_at = 2;
    CHECK_EQ_INT(feed_bytewise(stream, &got), 7);
    CHECK_EQ_INT(got.count, 2);
    events_clear(&got);
}

static void test_pending_and_reset(void)
{
    struct ts_sse_parser p;
    struct events got = {0};
    CHECK_EQ_INT(sse_parser_init(&p, 1024), 0);
    CHECK(!sse_parser_pending(&p));

    CHECK_EQ_INT(sse_parser_feed(&p, "data: {\"par", 11, on_event, &got), 0);
    CHECK(sse_parser_pending(&p));
    CHECK_EQ_INT(sse_parser_feed(&p, "tial\":1}\n", 9, on_event, &got), 0);
    CHECK(sse_parser_pending(&p));
    CHECK_EQ_INT(sse_parser_feed(&p, "\n", 1, on_event, &got), 0);
    CHECK(!sse_parser_pending(&p));
    CHECK_EQ_INT(got.count, 1);
    CHECK_EQ_STR(got.data[0], "{\"partial\":1}");
    events_clear(&got);

    CHECK_EQ_INT(sse_parser_feed(&p, "data: a\n\n: ping\n\n", 17, on_event, &got), 0);
    CHECK(!sse_parser_pending(&p));
    CHECK_EQ_INT(sse_parser_feed(&p, "event: error\n", 13, on_event, &got), 0);
    CHECK(sse_parser_pending(&p));
    CHECK_EQ_INT(sse_parser_feed(&p, "\n", 1, on_event, &got), 0);
    CHECK(!sse_parser_pending(&p));
    events_clear(&got);

    /* Reset drops the partial event and line but keeps the buffers. */
    CHECK_EQ_INT(sse_parser_feed(&p, "event: old\ndata: abc\ndata: de", 29, on_event, &got), 0);
    CHECK(sse_parser_pending(&p));
    char *line_buf = p.line, *data_buf = p.data;
    size_t line_cap = p.line_cap, data_cap = p.data_cap;
    sse_parser_reset(&p);
    CHECK(!sse_parser_pending(&p));
    CHECK(p.line == line_buf && p.data == data_buf);
    CHECK(p.line_cap == line_cap && p.data_cap == data_cap);
    CHECK_EQ_INT(sse_parser_feed(&p, "data: z\n\n", 9, on_event, &got), 0);
    CHECK_EQ_INT(got.count, 1);
    CHECK_EQ_STR(got.type[0], "message");
    CHECK_EQ_STR(got.data[0], "z");
    events_clear(&got);

    /* Reset also clears a pending CR: an LF opening the new stream is an empty line there. */
    CHECK_EQ_INT(sse_parser_feed(&p, "data: q\r", 8, on_event, &got), 0);
    sse_parser_reset(&p);
    CHECK_EQ_INT(sse_parser_feed(&p, "\ndata: r\n\n", 10, on_event, &got), 0);
    CHECK_EQ_INT(got.count, 1);
    CHECK_EQ_STR(got.data[0], "r");
    events_clear(&got);

    /* And the parser is usable again after an error. */
    char big[2048];
    memset(big, 'k', sizeof big);
    CHECK_EQ_INT(sse_parser_feed(&p, big, sizeof big, on_event, &got), TS_SSE_ERR_OVERSIZE);
    sse_parser_reset(&p);
    CHECK_EQ_INT(sse_parser_feed(&p, "data: after\n\n", 13, on_event, &got), 0);
    CHECK_EQ_INT(got.count, 1);
    CHECK_EQ_STR(got.data[0], "after");
    events_clear(&got);

    sse_parser_free(&p);
    sse_parser_free(&p); /* harmless twice */
}

int main(void)
{
    test_openai_stream();
    test_line_ends();
    test_crlf_across_feeds();
    test_fields();
    test_oversize();
    test_callback_stops();
    test_pending_and_reset();
    return check_report("sse");
}
