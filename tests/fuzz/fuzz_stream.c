/* fuzz_stream.c: a libFuzzer target over what a server's bytes go through: the SSE parser
 * (sse.c), the chunk interpreter (api_openai.c and its fast scan, api_scan.c) and the request
 * they feed (xfer.c). It checks more than "no crash": the same events whatever the split, the
 * fast scan the same as cJSON whenever it answers, and a row that makes sense.
 *
 * Input: a 4-byte header, then the response body.
 *   byte 0, bits 0-1: event size cap, one of cap_bytes[] (small caps reach the oversize paths
 *                     with small inputs)
 *           bit 2:    dialect for the request: chat (0) or completions (1)
 *           bits 3-4: HTTP status of the response, one of status_codes[]
 *   byte 1:           largest piece the body is split into, minus one (1 to 256 bytes)
 *   bytes 2-3:        seed of the piece lengths
 * The seeds in tests/fuzz/corpus/ start "@Pab": 1 MiB cap, chat, 200, pieces of 1 to 81 bytes.
 *
 * Built by -DTOKSTORM_FUZZ=ON with clang (tests/fuzz/run.sh), and, with replay.c for a main,
 * in every build as the ctest unit_fuzz_corpus, which runs the seeds through the same checks. */
#include "tokstorm/api.h"
#include "tokstorm/api_internal.h"
#include "tokstorm/sse.h"
#include "tokstorm/stats.h"
#include "tokstorm/xfer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { HEADER_BYTES = 4 };

static const size_t cap_bytes[4] = {1 << 20, 4096, 256, 48};
static const int status_codes[4] = {200, 200, 429, 503};

/* The dialects, and one that is neither: api_parse_event must read the dialect-free members
 * (error, usage, the send stamp) the same way for a kind it does not know. */
static const enum ts_api_kind api_kinds[] = {TS_API_CHAT, TS_API_COMPLETIONS, (enum ts_api_kind)7};

/* A failed check: say what and where, then abort so that libFuzzer keeps the input. */
#define FUZZ_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__, #cond);          \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* The events one feed produced, flattened as (type length, type, data length, data) records so
 * that two feeds compare with one memcmp. */
struct event_log {
    unsigned char *bytes;
    size_t len, cap;
    size_t events;
};

static void log_append(struct event_log *log, const void *src, size_t n)
{
    if (log->len + n > log->cap) {
        size_t cap = log->cap ? log->cap : 256;
        while (cap < log->len + n)
            cap *= 2;
        log->bytes = realloc(log->bytes, cap);
        FUZZ_ASSERT(log->bytes != NULL);
        log->cap = cap;
    }
    memcpy(log->bytes + log->len, src, n);
    log->len += n;
}

static void log_event(struct event_log *log, const struct ts_sse_event *ev)
{
    size_t type_len = strlen(ev->type);
    log_append(log, &type_len, sizeof type_len);
    log_append(log, ev->type, type_len);
    log_append(log, &ev->data_len, sizeof ev->data_len);
    log_append(log, ev->data, ev->data_len);
    log->events++;
}

static int chunks_equal(const struct ts_api_chunk *a, const struct ts_api_chunk *b)
{
    return a->done == b->done && a->content_pieces == b->content_pieces &&
           a->reasoning_pieces == b->reasoning_pieces && a->finished == b->finished &&
           a->has_usage == b->has_usage && a->prompt_tokens == b->prompt_tokens &&
           a->completion_tokens == b->completion_tokens && a->server_send_ns == b->server_send_ns &&
           a->error == b->error && strcmp(a->error_message, b->error_message) == 0;
}

static void print_chunk(const char *label, int rc, const struct ts_api_chunk *c)
{
    fprintf(stderr,
            "  %s: rc=%d done=%d content=%d reasoning=%d finished=%d usage=%d prompt=%lld "
            "completion=%lld stamp=%lld error=%d message=\"%s\"\n",
            label, rc, c->done, c->content_pieces, c->reasoning_pieces, c->finished, c->has_usage,
            (long long)c->prompt_tokens, (long long)c->completion_tokens,
            (long long)c->server_send_ns, c->error, c->error_message);
}

/* What any reading must give: a message that fits on one line of a table. */
static void check_chunk_sane(const struct ts_api_chunk *c)
{
    size_t n = strnlen(c->error_message, sizeof c->error_message);
    FUZZ_ASSERT(n < sizeof c->error_message);
    for (size_t i = 0; i < n; i++) {
        unsigned char b = (unsigned char)c->error_message[i];
        FUZZ_ASSERT(b >= 0x20 && b != 0x7F);
    }
    FUZZ_ASSERT(c->content_pieces >= 0 && c->reasoning_pieces >= 0);
    FUZZ_ASSERT(c->prompt_tokens >= 0 && c->completion_tokens >= 0 && c->server_send_ns >= 0);
    FUZZ_ASSERT(c->error || c->error_message[0] == '\0');
}

/* Each kind's stream memo (api_memo.c) over one input's events, as one request's would be. */
static struct ts_api_memo memos[sizeof api_kinds / sizeof api_kinds[0]];

/* One event's data through the three readings, and the memo's, for every kind. The data is copied to a block of
 * exactly its size (no NUL after it, unlike the parser's buffer), so that a read past len is
 * an out-of-bounds read for ASan rather than a look at the parser's spare bytes. */
static void check_readings(const char *data, size_t len)
{
    char *copy = malloc(len > 0 ? len : 1);
    FUZZ_ASSERT(copy != NULL);
    memcpy(copy, data, len);
    for (size_t k = 0; k < sizeof api_kinds / sizeof api_kinds[0]; k++) {
        struct ts_api_chunk ref, got, scanned;
        /* Different garbage in each, so a field one reading forgets to set cannot match. */
        memset(&ref, 0xA5, sizeof ref);
        memset(&got, 0x5A, sizeof got);
        memset(&scanned, 0x3C, sizeof scanned);
        int ref_rc = api_parse_event_cjson(api_kinds[k], copy, len, &ref);
        int got_rc = api_parse_event(api_kinds[k], copy, len, &got);
        int scan_rc = api_scan_event(api_kinds[k], copy, len, &scanned);
        struct ts_api_chunk memo;
        memset(&memo, 0x77, sizeof memo);
        int memo_rc = api_parse_event_memo(api_kinds[k], copy, len, &memos[k], &memo);
        FUZZ_ASSERT(memo_rc == got_rc && chunks_equal(&memo, &got));
        static const struct ts_api_chunk zero;
        int same = got_rc == ref_rc && chunks_equal(&got, &ref);
        int scan_ok = scan_rc == TS_API_SCAN_DECLINED
                          ? chunks_equal(&scanned, &zero)
                          : scan_rc == 0 && ref_rc == 0 && chunks_equal(&scanned, &ref);
        if (!same || !scan_ok) {
            fprintf(stderr, "readings differ (kind %d) on %zu bytes: %.*s\n", (int)api_kinds[k],
                    len, (int)(len < 300 ? len : 300), data);
            print_chunk("cjson", ref_rc, &ref);
            print_chunk("parse", got_rc, &got);
            print_chunk("scan ", scan_rc, &scanned);
        }
        FUZZ_ASSERT(same);
        FUZZ_ASSERT(scan_ok);
        FUZZ_ASSERT(ref_rc == 0 || ref_rc == TS_API_ERR_MALFORMED);
        FUZZ_ASSERT(ref_rc == 0 || ref.error);
        check_chunk_sane(&ref);
    }
    /* The native dialects have one (cJSON) reading each: it must stay in bounds, answer 0 or
     * malformed, give a sane chunk, and read alike through the memo (which passes them on). */
    static const enum ts_api_kind native[] = {TS_API_SGLANG, TS_API_TGI, TS_API_LLAMACPP};
    static struct ts_api_memo native_memo;
    for (size_t k = 0; k < sizeof native / sizeof native[0]; k++) {
        struct ts_api_chunk got, memo;
        memset(&got, 0x5A, sizeof got);
        memset(&memo, 0x77, sizeof memo);
        int got_rc = api_parse_event(native[k], copy, len, &got);
        int memo_rc = api_parse_event_memo(native[k], copy, len, &native_memo, &memo);
        FUZZ_ASSERT(got_rc == 0 || got_rc == TS_API_ERR_MALFORMED);
        FUZZ_ASSERT(got_rc == 0 || got.error);
        FUZZ_ASSERT(memo_rc == got_rc && chunks_equal(&memo, &got));
        check_chunk_sane(&got);
    }
    free(copy);
}

static int on_event_checked(void *user, const struct ts_sse_event *ev)
{
    FUZZ_ASSERT(ev->type != NULL && ev->type[0] != '\0' && ev->data != NULL);
    FUZZ_ASSERT(ev->data[ev->data_len] == '\0'); /* the header promises a NUL-terminated copy */
    log_event(user, ev);
    check_readings(ev->data, ev->data_len);
    return 0;
}

static int on_event_logged(void *user, const struct ts_sse_event *ev)
{
    log_event(user, ev);
    return 0;
}

/* Piece lengths in [1, max_piece] from a 32-bit xorshift: the fuzzer picks the seed and the
 * maximum, so it decides where the cuts fall. */
static size_t next_piece(uint32_t *state, size_t max_piece)
{
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return 1 + x % max_piece;
}

/* One request over the body, in pieces when max_piece > 0 (else in one call), each arriving
 * step_ns after the last (0: all at the same instant); fills *row. */
static void run_xfer(struct ts_xfer *x, int status, const uint8_t *body, size_t len,
                     size_t max_piece, uint32_t seed, int64_t step_ns, struct ts_row *row)
{
    int64_t now_ns = 1000000;
    xfer_begin(x, now_ns);
    xfer_on_sent(x, 1, now_ns);
    xfer_on_status(x, status, now_ns += step_ns);
    enum ts_transport how = TS_TRANSPORT_OK;
    size_t off = 0;
    while (off < len) {
        size_t n = max_piece > 0 ? next_piece(&seed, max_piece) : len;
        if (n > len - off)
            n = len - off;
        if (xfer_on_body(x, (const char *)body + off, n, now_ns += step_ns) != 0) {
            how = TS_TRANSPORT_ABORTED;
            break;
        }
        off += n;
    }
    memset(row, 0, sizeof *row);
    xfer_finish(x, how, how == TS_TRANSPORT_OK ? NULL : "aborted", now_ns += step_ns, 0, row);
}

/* The fields of a row that do not depend on when the bytes arrived. */
static int rows_alike(const struct ts_row *a, const struct ts_row *b)
{
    return a->output_tokens == b->output_tokens && a->prompt_tokens == b->prompt_tokens &&
           a->content_events == b->content_events && a->http_status == b->http_status &&
           a->error_class == b->error_class && a->tokens_from_usage == b->tokens_from_usage &&
           (a->first_token_s < 0) == (b->first_token_s < 0);
}

static void check_row_sane(const struct ts_xfer *x, const struct ts_row *row)
{
    FUZZ_ASSERT(row->error_class >= TS_ERR_NONE && row->error_class < TS_ERR__COUNT);
    FUZZ_ASSERT(row->output_tokens >= 0 && row->prompt_tokens >= 0 && row->content_events >= 0);
    FUZZ_ASSERT(row->error_class == TS_ERR_NONE || row->output_tokens == 0);
    FUZZ_ASSERT(row->start_s >= 0 && row->first_byte_s >= row->start_s);
    FUZZ_ASSERT(row->first_token_s < 0 || row->first_token_s >= row->first_byte_s);
    FUZZ_ASSERT(row->end_s >= row->first_byte_s && row->end_s >= row->first_token_s);
    FUZZ_ASSERT((size_t)row->content_events == x->n_tokens);
    FUZZ_ASSERT(strnlen(x->message, sizeof x->message) < sizeof x->message);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < HEADER_BYTES)
        return 0;
    for (size_t k = 0; k < sizeof memos / sizeof memos[0]; k++)
        api_memo_reset(&memos[k]);
    size_t cap = cap_bytes[data[0] & 3];
    enum ts_api_kind kind = (data[0] >> 2) & 1 ? TS_API_COMPLETIONS : TS_API_CHAT;
    int status = status_codes[(data[0] >> 3) & 3];
    size_t max_piece = (size_t)data[1] + 1;
    uint32_t seed = ((uint32_t)data[2] << 8 | data[3]) | 0x10000; /* never 0: xorshift's fixpoint */
    const uint8_t *body = data + HEADER_BYTES;
    size_t len = size - HEADER_BYTES;

    /* The body in one feed: every event's data through the readings. */
    struct ts_sse_parser p;
    FUZZ_ASSERT(sse_parser_init(&p, cap) == 0);
    struct event_log whole = {0}, split = {0};
    int whole_rc = sse_parser_feed(&p, (const char *)body, len, on_event_checked, &whole);
    FUZZ_ASSERT(whole_rc == 0 || whole_rc == TS_SSE_ERR_OVERSIZE);
    int whole_pending = whole_rc == 0 ? sse_parser_pending(&p) : 0;

    /* The same bytes in pieces, on the same parser once reset (its buffers may have grown):
     * the same events and the same outcome, as sse.h promises. */
    sse_parser_reset(&p);
    int split_rc = 0;
    uint32_t state = seed;
    for (size_t off = 0; off < len && split_rc == 0;) {
        size_t n = next_piece(&state, max_piece);
        if (n > len - off)
            n = len - off;
        split_rc = sse_parser_feed(&p, (const char *)body + off, n, on_event_logged, &split);
        off += n;
    }
    if (split_rc != whole_rc || split.len != whole.len ||
        (whole.len > 0 && memcmp(split.bytes, whole.bytes, whole.len) != 0))
        fprintf(stderr, "split feed differs: rc %d vs %d, %zu vs %zu events\n", split_rc, whole_rc,
                split.events, whole.events);
    FUZZ_ASSERT(split_rc == whole_rc);
    FUZZ_ASSERT(split.len == whole.len && split.events == whole.events);
    FUZZ_ASSERT(whole.len == 0 || memcmp(split.bytes, whole.bytes, whole.len) == 0);
    if (split_rc == 0)
        FUZZ_ASSERT(sse_parser_pending(&p) == whole_pending);
    sse_parser_free(&p);
    free(whole.bytes);
    free(split.bytes);

    /* The request those bytes answer: in one call at one instant, then in the fuzzer's pieces
     * with time passing. Only the timing may differ. */
    struct ts_xfer x;
    struct ts_row one, pieces;
    FUZZ_ASSERT(xfer_init(&x, kind, cap) == 0);
    run_xfer(&x, status, body, len, 0, seed, 0, &one);
    check_row_sane(&x, &one);
    run_xfer(&x, status, body, len, max_piece, seed, 1000, &pieces);
    check_row_sane(&x, &pieces);
    FUZZ_ASSERT(rows_alike(&one, &pieces));
    xfer_free(&x);
    return 0;
}
