/* sse.c: turns the bytes of a text/event-stream into events, by the WHATWG EventSource
 * parsing rules. It knows nothing of curl, sockets, JSON or clocks: bytes in, callbacks out,
 * and no allocation once the buffers have grown to the size of the largest event seen. */
#include "tokstorm/sse.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* First buffer sizes: an OpenAI chunk line is typically 150 to 400 bytes, so most streams never
 * grow past these; doubling reaches any cap in a few steps. */
enum { SSE_LINE_CAP0 = 512, SSE_DATA_CAP0 = 1024 };

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* Makes *buf hold at least need bytes by doubling, never past limit (the caller has checked
 * need <= limit), so a hostile stream costs at most the cap. */
static int buffer_reserve(char **buf, size_t *cap, size_t need, size_t limit)
{
    if (need <= *cap)
        return 0;
    size_t new_cap = *cap > 0 ? *cap : 1;
    while (new_cap < need)
        new_cap = new_cap > limit / 2 ? limit : new_cap * 2;
    char *grown = realloc(*buf, new_cap);
    if (grown == NULL)
        return TS_SSE_ERR_NOMEM;
    *buf = grown;
    *cap = new_cap;
    return 0;
}

int sse_parser_init(struct ts_sse_parser *p, size_t max_event_bytes)
{
    memset(p, 0, sizeof *p);
    /* Keeps max_event_bytes + 1 (the data buffer's NUL) and the sums below from overflowing. */
    if (max_event_bytes > SIZE_MAX / 4)
        max_event_bytes = SIZE_MAX / 4;
    p->max_event_bytes = max_event_bytes;
    /* At least one byte each, so that malloc(0) returning NULL is never mistaken for no memory. */
    p->line_cap = min_size(SSE_LINE_CAP0, max_event_bytes > 0 ? max_event_bytes : 1);
    p->data_cap = min_size(SSE_DATA_CAP0, max_event_bytes + 1);
    p->line = malloc(p->line_cap);
    p->data = malloc(p->data_cap);
    if (p->line == NULL || p->data == NULL) {
        sse_parser_free(p);
        return TS_SSE_ERR_NOMEM;
    }
    p->data[0] = '\0';
    return 0;
}

void sse_parser_reset(struct ts_sse_parser *p)
{
    p->line_len = 0;
    p->data_len = 0;
    p->type[0] = '\0';
    p->have_data = 0;
    p->after_cr = 0;
}

void sse_parser_free(struct ts_sse_parser *p)
{
    free(p->line);
    free(p->data);
    p->line = NULL;
    p->data = NULL;
    p->line_cap = 0;
    p->data_cap = 0;
    sse_parser_reset(p);
}

int sse_parser_pending(const struct ts_sse_parser *p)
{
    /* A named type without data yet still means the server was cut inside an event. */
    return p->line_len > 0 || p->have_data || p->type[0] != '\0';
}

/* An empty line: hand over the event if it has data, and start the next one either way. */
static int dispatch(struct ts_sse_parser *p, ts_sse_event_fn fn, void *user)
{
    int rc = 0;
    if (p->have_data) {
        p->data[p->data_len] = '\0';
        struct ts_sse_event ev = {
            .type = p->type[0] != '\0' ? p->type : "message",
            .data = p->data,
            .data_len = p->data_len,
        };
        if (fn != NULL)
            rc = fn(user, &ev);
    }
    p->data_len = 0;
    p->have_data = 0;
    p->type[0] = '\0';
    return rc;
}

static int append_data(struct ts_sse_parser *p, const char *value, size_t value_len)
{
    size_t sep = p->have_data ? 1 : 0;
    size_t need = p->data_len + sep + value_len;
    if (need > p->max_event_bytes)
        return TS_SSE_ERR_OVERSIZE;
    int rc = buffer_reserve(&p->data, &p->data_cap, need + 1, p->max_event_bytes + 1);
    if (rc != 0)
        return rc;
    if (sep)
        p->data[p->data_len++] = '\n';
    memcpy(p->data + p->data_len, value, value_len);
    p->data_len += value_len;
    p->have_data = 1;
    return 0;
}

/* One complete line, without its line end. */
static int process_line(struct ts_sse_parser *p, const char *line, size_t n, ts_sse_event_fn fn,
                        void *user)
{
    if (n == 0)
        return dispatch(p, fn, user);
    if (line[0] == ':')
        return 0;
    const char *colon = memchr(line, ':', n);
    size_t name_len = colon != NULL ? (size_t)(colon - line) : n;
    const char *value = colon != NULL ? colon + 1 : line + n;
    size_t value_len = n - (size_t)(value - line);
    if (value_len > 0 && value[0] == ' ') {
        value++;
        value_len--;
    }
    if (name_len == 4 && memcmp(line, "data", 4) == 0)
        return append_data(p, value, value_len);
    if (name_len == 5 && memcmp(line, "event", 5) == 0) {
        /* Types are short words ("message", "error"); a longer one is cut rather than failed,
         * since the type never decides whether an event's data arrives. */
        size_t keep = min_size(value_len, sizeof p->type - 1);
        memcpy(p->type, value, keep);
        p->type[keep] = '\0';
    }
    /* "id", "retry" and unknown fields are ignored, as the spec ignores unknown ones. */
    return 0;
}

/* Appends part of a line that has not ended yet (or the tail of one that just has). */
static int stash_line(struct ts_sse_parser *p, const char *bytes, size_t n)
{
    if (n > p->max_event_bytes - p->line_len)
        return TS_SSE_ERR_OVERSIZE;
    int rc = buffer_reserve(&p->line, &p->line_cap, p->line_len + n, p->max_event_bytes);
    if (rc != 0)
        return rc;
    memcpy(p->line + p->line_len, bytes, n);
    p->line_len += n;
    return 0;
}

int sse_parser_feed(struct ts_sse_parser *p, const char *buf, size_t len, ts_sse_event_fn fn,
                    void *user)
{
    if (len == 0)
        return 0;
    const char *cur = buf;
    const char *end = buf + len;
    if (p->after_cr) {
        p->after_cr = 0;
        if (*cur == '\n')
            cur++;
    }
    /* The next LF at or after cur (end when there is none), remembered across lines so that a
     * stream of lone CRs does not rescan the rest of the buffer for LF on every line. */
    const char *next_lf = NULL;
    while (cur < end) {
        if (next_lf == NULL || next_lf < cur) {
            next_lf = memchr(cur, '\n', (size_t)(end - cur));
            if (next_lf == NULL)
                next_lf = end;
        }
        const char *eol = memchr(cur, '\r', (size_t)(next_lf - cur));
        if (eol == NULL)
            eol = next_lf;
        if (eol == end)
            return stash_line(p, cur, (size_t)(end - cur));

        size_t n = (size_t)(eol - cur);
        int rc;
        if (p->line_len == 0) {
            /* The whole line is in this feed: parse it in place, without a copy. The same cap
             * applies as to a stashed line, so how the stream is split never changes the result. */
            rc = n > p->max_event_bytes ? TS_SSE_ERR_OVERSIZE : process_line(p, cur, n, fn, user);
        } else {
            rc = stash_line(p, cur, n);
            if (rc == 0)
                rc = process_line(p, p->line, p->line_len, fn, user);
            p->line_len = 0;
        }

        if (*eol == '\n') {
            cur = eol + 1;
        } else if (eol + 1 < end) {
            cur = eol + (eol[1] == '\n' ? 2 : 1);
        } else {
            p->after_cr = 1; /* the LF of this CRLF may open the next feed */
            cur = end;
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}
