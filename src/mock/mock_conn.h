/* mock_conn.h: one client connection of the mock server: its HTTP state machine, buffers and
 * the generation request it is serving. The loop hands it readiness events; the engine calls
 * its hooks; work that may not run inside those calls is deferred to mock_conn_run_pending. */
#ifndef TOKSTORM_MOCK_CONN_H
#define TOKSTORM_MOCK_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mock_buf.h"
#include "mock_engine.h"
#include "mock_http.h"
#include "mock_openai.h"
#include "mock_server.h"

enum mock_conn_phase {
    MOCK_CONN_READ_HEAD,  /* waiting for a complete request head */
    MOCK_CONN_READ_BODY,  /* head parsed; waiting for Content-Length bytes */
    MOCK_CONN_GENERATING, /* the stream is in the engine; later requests wait in `in` */
    MOCK_CONN_CLOSING,    /* last response queued; close once it is sent */
    MOCK_CONN_LINGER,     /* response sent and write side shut; drain input until EOF */
};

struct mock_conn {
    struct mock_watch watch; /* first member: epoll's data.ptr */
    struct mock_server *srv;
    struct mock_conn *prev, *next;  /* srv->conns */
    struct mock_conn *pending_next; /* srv->pending, while pending */
    int fd;
    uint32_t epoll_events; /* interest currently registered */
    enum mock_conn_phase phase;
    bool pending;                /* on srv->pending */
    bool dead;                   /* to be closed and freed by the next mock_conn_run_pending */
    bool peer_eof;               /* the client shut its write side; nothing more will be read */
    bool keep_alive;             /* the current request allows another after it */
    bool chunked;                /* the current stream is framed as HTTP chunks */
    enum mock_fault fault;       /* the current request's injected fault, or NONE */
    int64_t fault_token;         /* a mid-stream fault acts once this token is out */
    bool fault_done;             /* ... and it has */
    int64_t hold_until_ns;       /* stall fault: nothing is sent before this; 0 = not held */
    struct mock_conn *held_next; /* srv->held, while held */
    struct mock_buf in;          /* received bytes not yet consumed */
    struct mock_buf out;         /* bytes not yet accepted by the socket */
    size_t head_scanned_bytes;
    struct mock_http_request req;
    struct mock_openai_reply reply;
    struct mock_stream stream;
};

/* Takes ownership of an accepted non-blocking socket and registers it, unless a connection
 * fault (refuse, reset) is drawn for it: then it is carried out at once. Returns 0, or -1 when
 * memory or epoll failed (fd is closed then). */
int mock_conn_open(struct mock_server *srv, int fd);

/* Handles epoll readiness for c. Never frees c: that waits for mock_conn_run_pending, so
 * pointers in the rest of the same epoll batch stay valid. */
void mock_conn_on_events(struct mock_conn *c, uint32_t events);

/* Does deferred work: resumes connections whose stream finished (serving pipelined requests)
 * and frees dead ones. Call it outside any engine call, after each epoll batch. */
void mock_conn_run_pending(struct mock_server *srv);

/* Closes every connection (cancelling their streams). */
void mock_conn_close_all(struct mock_server *srv);

/* Stall faults: when the first held connection is due to send again (INT64_MAX if none), and
 * lets those due by now_ns go (their output is sent by the next mock_conn_run_pending). */
int64_t mock_conn_next_hold_ns(const struct mock_server *srv);
void mock_conn_release_holds(struct mock_server *srv, int64_t now_ns);

/* Engine hooks (ctx is the server). They write chunks but defer everything else. */
void mock_conn_on_tokens(void *ctx, struct mock_stream *s, int64_t n);
void mock_conn_on_finish(void *ctx, struct mock_stream *s);

#endif
