/* mock_server.h: the state of one tokstorm-mock server (the whole process, or one worker of
 * --workers), shared by the event loop (mock_loop.c, which owns the listening socket it is
 * handed, the timer and epoll_wait) and the connections (mock_conn.c, which own requests and
 * responses). */
#ifndef TOKSTORM_MOCK_SERVER_H
#define TOKSTORM_MOCK_SERVER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "mock_buf.h"
#include "mock_engine.h"
#include "mock_fault.h"
#include "mock_options.h"
#include "mock_totals.h"

/* epoll's data.ptr always points at one of these, so one event loop can tell the listening
 * socket, the timer and a connection apart. */
enum mock_watch_kind {
    MOCK_WATCH_LISTENER,
    MOCK_WATCH_TIMER,
    MOCK_WATCH_CONN,
};

struct mock_watch {
    enum mock_watch_kind kind;
};

struct mock_server_stats {
    int64_t connections;     /* accepted */
    int64_t max_connections; /* most open at once */
    int64_t requests;        /* HTTP responses completed, any status */
    int64_t generations;     /* chat/completions requests that sent all their tokens */
    int64_t tokens_sent;     /* completion tokens written to clients */
};

struct mock_conn;

struct mock_server {
    const struct mock_options *opt;
    int epoll_fd;
    int listen_fd;
    int timer_fd;
    struct mock_watch listener_watch;
    struct mock_watch timer_watch;
    bool accept_paused;            /* out of descriptors: listener removed from epoll */
    int64_t paused_at_connections; /* open connections when accepting paused */
    int64_t timer_armed_ns;        /* absolute CLOCK_MONOTONIC expiry; INT64_MAX = disarmed */
    int64_t exit_at_ns;            /* --exit-after deadline; INT64_MAX = never */
    int64_t started_unix_s;        /* "created" of the model */
    struct mock_engine engine;
    struct mock_conn *conns;        /* every open connection */
    int64_t open_connections;       /* length of conns */
    struct mock_conn *pending;      /* connections with deferred work (see mock_conn.h) */
    struct mock_conn *held;         /* connections whose output a stall fault holds back */
    struct mock_fault_state faults; /* --fault draws and counts */
    struct mock_buf scratch;        /* the SSE event or body being rendered */
    char read_buf[16 * 1024];       /* one recv's worth, then copied to the connection's buffer */
    uint64_t next_request_id;       /* the <n> of the next chatcmpl-mock-<n> */
    uint64_t request_id_stride;     /* added to next_request_id per request */
    struct mock_server_stats stats;
};

/* What the caller hands one server: a socket already listening, and what the server shares
 * with its sibling workers (the deadline, the model's creation time, the request numbering). */
struct mock_server_setup {
    int listen_fd;              /* bound, listening, non-blocking; the server closes it */
    int64_t exit_at_ns;         /* --exit-after deadline, CLOCK_MONOTONIC; INT64_MAX = never */
    int64_t started_unix_s;     /* "created" of the model */
    uint64_t first_request_id;  /* the <n> of the first chatcmpl-mock-<n>, >= 1 */
    uint64_t request_id_stride; /* ids go first, first + stride, ...: unique across workers */
    /* Called once, when the server watches its socket and is about to wait for the first
     * time; a non-zero return aborts the start (mock_server_run then returns -1). */
    int (*on_ready)(void *ctx);
    void *ctx;
};

/* Serves on setup->listen_fd until *stop is set (by a signal), the deadline passes or a fatal
 * error, then closes every connection and fills *totals. Signals are delivered only inside
 * epoll_pwait with wait_mask. Returns 0 on a clean stop, -1 after a fatal error (already
 * reported on stderr); *totals is filled either way. */
int mock_server_run(const struct mock_options *opt, const struct mock_server_setup *setup,
                    volatile sig_atomic_t *stop, const sigset_t *wait_mask,
                    struct mock_totals *totals);

#endif
