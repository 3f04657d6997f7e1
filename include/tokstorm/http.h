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
    size_t max_event_bytes;     /* cap on one SSE event */
    int64_t max_streams;        /* slots to allocate: the most streams one run will ask for */
    int debug;                  /* libcurl verbose output on stderr */
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
};

#define TS_HTTP_ERR_INIT (-1) /* curl, epoll or memory could not be set up */
#define TS_HTTP_ERR_LOOP (-2) /* the event loop failed (epoll_wait, curl_multi error) */

/* Creates the loop and its slots. Returns 0 or TS_HTTP_ERR_INIT with msg filled. Call
 * curl_global_init once before (http_global_init). */
int http_new(struct ts_http **out, const struct ts_http_config *cfg, char *msg, size_t msg_len);
void http_free(struct ts_http *h);

/* Runs streams 0..n_streams-1 (n_streams <= max_streams) until every stream's next() has
 * said no and every transfer has ended. Connections stay open for the next run.
 * Returns 0 or TS_HTTP_ERR_LOOP with msg filled. */
int http_run(struct ts_http *h, int64_t n_streams, const struct ts_http_driver *driver, char *msg,
             size_t msg_len);

/* Opens (or checks) one keep-alive connection per slot for slots 0..n_streams-1 by sending
 * each a GET of probe_url (e.g. the server's /v1/models) at once and discarding the answers,
 * so that a level does not begin with a burst of TCP handshakes. The connections stay in
 * the loop's cache for the requests that follow. Returns the number of probes that got an
 * HTTP answer, or TS_HTTP_ERR_LOOP with msg filled. */
int64_t http_preconnect(struct ts_http *h, int64_t n_streams, const char *probe_url, char *msg,
                        size_t msg_len);

/* The local address this host uses to reach url's host (a UDP socket is connected to it and
 * asked its name; nothing is sent), e.g. "10.0.0.5". Returns 0 or -1 (buf then "?"). */
int http_local_address(const char *url, char *buf, size_t len);

/* Process-wide libcurl set-up and tear-down. http_global_init returns 0 or -1. */
int http_global_init(void);
void http_global_cleanup(void);

#endif
