/* xfer.h: one request's life between "handed to the transport" and "finished": response
 * bytes in (each with the time they arrived), one row out. It drives the SSE parser and the
 * API interpreter and classifies the outcome. It knows nothing of curl, sockets or MPI, so
 * the whole byte-to-row path is unit-tested without a network. */
#ifndef TOKSTORM_XFER_H
#define TOKSTORM_XFER_H

#include <stddef.h>
#include <stdint.h>

#include "tokstorm/api.h"
#include "tokstorm/sse.h"
#include "tokstorm/stats.h"

/* How the transport ended the transfer. */
enum ts_transport {
    TS_TRANSPORT_OK = 0,        /* the response ended normally */
    TS_TRANSPORT_CONNECT = 1,   /* no connection, or it broke before any response byte */
    TS_TRANSPORT_TIMEOUT = 2,   /* the per-request timeout expired */
    TS_TRANSPORT_BROKEN = 3,    /* the connection failed after the response began */
    TS_TRANSPORT_ABORTED = 4,   /* xfer_on_body asked to stop (error event, oversize) */
    TS_TRANSPORT_RESET = 5,     /* the peer reset the connection (ECONNRESET, EPIPE) */
    TS_TRANSPORT_STALLED = 6,   /* the loop ended it: no byte for the stall timeout */
    TS_TRANSPORT_CANCELLED = 7, /* the run stopped it (an interrupted level's grace ran out) */
};

struct ts_xfer {
    struct ts_sse_parser sse;
    enum ts_api_kind api;
    int64_t queued_ns; /* handed to the transport */
    /* The request's start, from which its latencies count: when it was written on a kept-alive
     * connection, or, on a new connection, when it was handed over (the set-up is its cost). */
    int64_t start_ns, first_byte_ns, first_token_ns, end_ns; /* 0 = not yet */
    int64_t first_answer_ns; /* the first event with answer content (not reasoning); 0 = none */
    int http_status;
    int64_t content_events;   /* events with content or reasoning (token events) */
    int64_t reasoning_events; /* those of them with reasoning and no answer content */
    int64_t usage_prompt_tokens, usage_completion_tokens;
    int has_usage, saw_done, saw_finish, saw_error;
    int malformed;              /* an event that is not JSON, or a 2xx body that is not SSE */
    int oversized;              /* an event or line over the parser's cap */
    int not_sse;                /* the response's Content-Type names something else than SSE */
    int64_t last_byte_ns;       /* the last response byte, or the request's write; 0 = not written */
    struct ts_api_memo memo;    /* this request's last token event (api.h) */
    int64_t *token_ns;          /* arrival time of each content event, for inter-token gaps */
    int64_t *stamp_ns;          /* beside it: the server's send stamp of that event (0 = none) */
    size_t n_tokens, token_cap; /* entries used and allocated, in both arrays */
    char message[160]; /* why it failed: error event, HTTP error body or transport detail */
};

/* Prepares x for requests in the given dialect. Returns 0 or -1 (out of memory). */
int xfer_init(struct ts_xfer *x, enum ts_api_kind api, size_t max_event_bytes);
void xfer_free(struct ts_xfer *x);

/* Starts a new request at now_ns (just before it is handed to the transport, which may take
 * a while to send it when many start at once: see xfer_on_sent). */
void xfer_begin(struct ts_xfer *x, int64_t now_ns);

/* The transport is about to write the request at now_ns, on a kept-alive connection
 * (reused) or a new one. */
void xfer_on_sent(struct ts_xfer *x, int reused, int64_t now_ns);

/* The response's status line arrived: the first byte. */
void xfer_on_status(struct ts_xfer *x, int http_status, int64_t now_ns);

/* One response header line (status line included, with or without its CRLF) arrived at
 * now_ns: the status line gives the status (xfer_on_status), Content-Type says whether the
 * body is an event stream (one that names another type is failed as malformed at its first
 * body byte, when the status is 2xx; no Content-Type at all is accepted). */
void xfer_on_header(struct ts_xfer *x, const char *line, size_t len, int64_t now_ns);

/* Response body bytes arrived at now_ns. Returns 0 to go on, or -1 when the request has
 * failed for good (error event, malformed or oversized event, a 2xx body that is not an event
 * stream) and the transfer should be cancelled; the reason is already recorded. */
int xfer_on_body(struct ts_xfer *x, const char *buf, size_t len, int64_t now_ns);

/* Ends the request at now_ns and fills the timing, token, status and error fields of *row
 * (times in seconds from zero_ns, the local clock reading of the timeline's zero; the caller
 * sets rank, stream, request, prompt_index).
 * detail: the transport's message for a failed transfer (may be NULL). */
void xfer_finish(struct ts_xfer *x, enum ts_transport how, const char *detail, int64_t now_ns,
                 int64_t zero_ns, struct ts_row *row);

#endif
