/* http.h: the rank's event loop: one libcurl multi handle driven by
 * curl_multi_socket_action over epoll, a pool of request slots (one per stream), and the
 * per-transfer callbacks that stamp times and feed struct ts_xfer. The only user of curl.h.
 * It knows nothing of levels, MPI or results: a driver tells it what to send next. */
#ifndef TOKSTORM_HTTP_H
#define TOKSTORM_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "tokstorm/api.h"
#include "tokstorm/xfer.h"

struct ts_http;

struct ts_http_config {
    const char *url;            /* full endpoint URL, e.g. http://h:8000/v1/chat/completions */
    enum ts_api_kind api;       /* dialect of the responses */
    int64_t timeout_ns;         /* whole transfer */
    int64_t connect_timeout_ns; /* one connection attempt */
    int64_t stall_timeout_ns;   /* no response byte for this long after the write; 0 = off */
    size_t max_event_bytes;     /* cap on one SSE event */
    int64_t max_streams;        /* slots to allocate up front (more are made when a run asks) */
    int debug;                  /* libcurl's trace on stderr, secret headers masked */
    double connect_rate_per_s;  /* http_preconnect: new connections per second; 0 = no limit */
    char *const *bind_addrs;    /* numeric local addresses, slot i binds to i mod n; copied */
    size_t n_bind_addrs;        /* 0 = the system picks the source address */
    /* Extra "Name: value" lines sent with every request and probe (-H, the API key's
     * Authorization), replacing tokstorm's own header of the same name; copied. */
    char *const *headers;
    size_t n_headers;
    int insecure;       /* https: do not verify the server's certificate or name */
    const char *cacert; /* https: CA file (PEM) to verify with; NULL = the system's; copied */
};

/* A periodic hook a run may carry (e.g. for a progress line): fn is called from the loop,
 * never from inside a libcurl callback, at least period_ns apart, the first time period_ns
 * after the run starts, for as long as the run lasts. It runs between the loop's turns, so it
 * must not block. */
struct ts_http_tick {
    void *ctx;
    void (*fn)(void *ctx, int64_t now_ns);
    int64_t period_ns;
};

/* What a run asks of its driver. Both are called from the loop, never from inside a libcurl
 * callback. */
struct ts_http_driver {
    void *ctx;
    /* Stream s may start a request at now_ns: return 1 with the body (which must stay valid
     * until done() for it), or 0 when the stream has nothing more to send. */
    int (*next)(void *ctx, int64_t s, int64_t now_ns, const char **body, size_t *body_len);
    /* Stream s's request ended; x holds what was seen, how says how the transport ended it,
     * detail is curl's message for a failure (NULL otherwise). */
    void (*done)(void *ctx, int64_t s, struct ts_xfer *x, enum ts_transport how, const char *detail,
                 int64_t now_ns);
    const struct ts_http_tick *tick; /* NULL = none */
};

/* What an open-loop run asks of its driver: arrivals at times of its own, on free slots.
 * All three are called from the loop, never from inside a libcurl callback. */
struct ts_http_open_driver {
    void *ctx;
    /* When the next arrival is due (local clock), or INT64_MAX when there is none left. */
    int64_t (*next_due)(void *ctx);
    /* The due arrival goes out now on slot; late when it had to wait for a free slot. The
     * body must stay valid until done() for that slot. */
    void (*take)(void *ctx, int64_t slot, int64_t now_ns, int late, const char **body,
                 size_t *body_len);
    /* As in struct ts_http_driver; s is the slot. */
    void (*done)(void *ctx, int64_t s, struct ts_xfer *x, enum ts_transport how, const char *detail,
                 int64_t now_ns);
    const struct ts_http_tick *tick; /* NULL = none */
};

#define TS_HTTP_ERR_INIT (-1) /* curl, epoll or memory could not be set up */
#define TS_HTTP_ERR_LOOP (-2) /* the event loop failed (epoll_wait, curl_multi error) */

/* Creates the loop and its slots. Returns 0 or TS_HTTP_ERR_INIT with msg filled. Call
 * curl_global_init once before (http_global_init). */
int http_new(struct ts_http **out, const struct ts_http_config *cfg, char *msg, size_t msg_len);
void http_free(struct ts_http *h);

/* Makes sure at least n request slots exist (each an easy handle and its parser state).
 * Returns 0 or -1 (out of memory). */
int http_reserve(struct ts_http *h, int64_t n);

/* Runs streams 0..n_streams-1 (slots are added if needed) until every stream's next() has
 * said no and every transfer has ended. Connections stay open for the next run.
 * Returns 0 or TS_HTTP_ERR_LOOP with msg filled. */
int http_run(struct ts_http *h, int64_t n_streams, const struct ts_http_driver *driver, char *msg,
             size_t msg_len);

/* Runs an open loop over slots 0..n_slots-1 (n_slots <= max_streams): each arrival goes out
 * when due if a slot is free, else as soon as one is (and counts late), until next_due says
 * there is none left and every transfer has ended. Returns 0 or TS_HTTP_ERR_LOOP. */
int http_run_open(struct ts_http *h, int64_t n_slots, const struct ts_http_open_driver *driver,
                  char *msg, size_t msg_len);

/* The fraction of the last run's time the loop spent working rather than waiting in
 * epoll_wait: near 1, the client itself may be what limits the figures. */
double http_busy_fraction(const struct ts_http *h);

/* Content events received so far by the transfers in flight (a progress figure: finished
 * transfers are their driver's to count). */
int64_t http_live_events(const struct ts_http *h);

/* Opens (or checks) one keep-alive connection per slot for slots 0..n_streams-1 by sending
 * each a GET of probe_url (e.g. the server's /v1/models) and discarding the answers, so that
 * a level does not begin with a burst of TCP handshakes. At most connect_rate_per_s probes
 * per second go out that need a new connection: one that finds a kept-alive connection gives
 * its turn back, so a level whose connections are already open is checked at once. The
 * connections stay in the loop's cache for the requests that follow. tick (NULL = none) is
 * called as in a run. Returns the number of probes that got an HTTP answer, or
 * TS_HTTP_ERR_LOOP with msg filled. */
int64_t http_preconnect(struct ts_http *h, int64_t n_streams, const char *probe_url,
                        const struct ts_http_tick *tick, char *msg, size_t msg_len);

/* Ends the running run (http_run, http_run_open, http_preconnect) from its tick: every
 * transfer in flight is cancelled at once and reported to the driver's done() as
 * TS_TRANSPORT_CANCELLED with detail why (preconnect probes are dropped), nothing more is
 * started, and the run returns. Only from a tick: never from inside a libcurl callback. */
void http_stop(struct ts_http *h, const char *why);

/* One blocking GET of url before any load (for --model auto's /v1/models), with cfg's
 * headers, TLS settings, timeouts and first bind address; the answer's body goes into *body
 * (malloc'd, NUL-terminated, at most 1 MiB; the caller frees) and its status into *status.
 * Returns 0 once an HTTP answer came, or TS_HTTP_ERR_INIT / TS_HTTP_ERR_LOOP with msg (the
 * transport's error: refused, timeout, certificate). */
int http_get(const struct ts_http_config *cfg, const char *url, char **body, long *status,
             char *msg, size_t msg_len);

/* How many connection attempts failed for lack of a local port (EADDRNOTAVAIL) since the
 * last call, preconnect probes included; the count starts again from 0. */
int64_t http_take_port_exhaustion(struct ts_http *h);

/* Whether addr (numeric) belongs to this host, so that connections can be bound to it: a
 * socket is bound to it and closed, nothing is sent. Returns 0, or -1 with msg filled. */
int http_check_bind_address(const char *addr, char *msg, size_t msg_len);

/* The local address this host uses to reach url's host (a UDP socket is connected to it and
 * asked its name; nothing is sent), e.g. "10.0.0.5". Returns 0 or -1 (buf then "?"). */
int http_local_address(const char *url, char *buf, size_t len);

/* Process-wide libcurl set-up and tear-down. http_global_init returns 0 or -1. */
int http_global_init(void);
void http_global_cleanup(void);

#endif
