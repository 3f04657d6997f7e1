/* sse.h: incremental Server-Sent Events framing, as the WHATWG EventSource spec reads a
 * text/event-stream. Bytes in, events out through a callback; it knows nothing of curl,
 * sockets, JSON or clocks.
 *
 * Framing rules: lines end in LF, CRLF or a lone CR (a CR at the end of one feed followed
 * by LF at the start of the next is one line end); a line starting with ':' is a comment;
 * "field:value" strips one space after the colon, a line without a colon is a field with an
 * empty value; "data" lines are joined with '\n'; "event" sets the type; "id" and "retry"
 * are ignored; an empty line dispatches the event if any data line was seen. An event may
 * be split anywhere across feeds: feeding one byte at a time yields exactly the events of
 * feeding the whole buffer. */
#ifndef TOKSTORM_SSE_H
#define TOKSTORM_SSE_H

#include <stddef.h>

#define TS_SSE_ERR_OVERSIZE (-1) /* an event's data (or one line) exceeded max_event_bytes */
#define TS_SSE_ERR_NOMEM    (-2) /* allocation failed */

struct ts_sse_event {
    const char *type; /* "message" unless an event: line named it; NUL-terminated */
    const char *data; /* joined data lines, NUL-terminated; valid only during the callback */
    size_t data_len;
};

/* Called once per dispatched event. A non-zero return stops the feed, which returns it. */
typedef int (*ts_sse_event_fn)(void *user, const struct ts_sse_event *ev);

struct ts_sse_parser {
    char *line; /* the current, incomplete line */
    size_t line_len, line_cap;
    char *data; /* data of the event being built */
    size_t data_len, data_cap;
    char type[64];          /* event type of the event being built ("" = message) */
    int have_data;          /* a data line was seen since the last dispatch */
    int after_cr;           /* last byte fed was CR: a following LF is not a new line */
    size_t max_event_bytes; /* cap on one line and on one event's data */
};

/* Prepares p; max_event_bytes caps memory per parser. Returns 0 or TS_SSE_ERR_NOMEM. */
int sse_parser_init(struct ts_sse_parser *p, size_t max_event_bytes);

/* Forgets any partial line or event so p can parse a new stream; keeps its buffers. */
void sse_parser_reset(struct ts_sse_parser *p);

/* Releases p's buffers. */
void sse_parser_free(struct ts_sse_parser *p);

/* Feeds len bytes. Returns 0, TS_SSE_ERR_OVERSIZE, TS_SSE_ERR_NOMEM, or the callback's
 * non-zero return value. After an error the parser must be reset before further use. */
int sse_parser_feed(struct ts_sse_parser *p, const char *buf, size_t len, ts_sse_event_fn fn,
                    void *user);

/* True when bytes of an undispatched event or line are pending (a stream cut mid-event). */
int sse_parser_pending(const struct ts_sse_parser *p);

#endif
