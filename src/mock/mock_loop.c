/* mock_loop.c: the event loop of one tokstorm-mock server: accept on the listening socket it
 * is handed, one timerfd for the engine and --exit-after, epoll_pwait, start-up and shutdown.
 * It knows nothing of HTTP, JSON or the timing model's rules (it hands readiness to
 * connections and time to the engine), nor of how the socket was bound or of other workers. */
#include "mock_server.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "mock_conn.h"
#include "tokstorm/clock.h"
#include "tokstorm/units.h"

#define MOCK_LOOP_EVENTS 256

static int loop_watch(struct mock_server *srv, int fd, struct mock_watch *w, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = w};
    return epoll_ctl(srv->epoll_fd, EPOLL_CTL_ADD, fd, &ev);
}

static void loop_set_accepting(struct mock_server *srv, bool on)
{
    struct epoll_event ev = {.events = on ? EPOLLIN : 0, .data.ptr = &srv->listener_watch};
    if (epoll_ctl(srv->epoll_fd, EPOLL_CTL_MOD, srv->listen_fd, &ev) == 0) {
        srv->accept_paused = !on;
        srv->paused_at_connections = srv->open_connections;
    }
}

static void loop_accept(struct mock_server *srv)
{
    for (;;) {
        int fd = accept4(srv->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            /* Chunks are small and latency is what is measured: never wait to coalesce. */
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            mock_conn_open(srv, fd);
            continue;
        }
        if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return;
        /* Out of descriptors or memory: the listener would stay readable and spin the loop,
         * so stop watching it until a connection closes. */
        if (!srv->opt->quiet)
            fprintf(stderr, "tokstorm-mock: accept: %s; pausing until a connection closes\n",
                    strerror(errno));
        loop_set_accepting(srv, false);
        return;
    }
}

/* One timer for everything: the engine's next event, the end of a stall fault or the exit
 * deadline, whichever is first. TFD_TIMER_ABSTIME keeps it from drifting; a due time already
 * past fires at once. */
static int loop_arm_timer(struct mock_server *srv)
{
    int64_t due_ns = mock_engine_next_due_ns(&srv->engine);
    int64_t hold_ns = mock_conn_next_hold_ns(srv);
    if (hold_ns < due_ns)
        due_ns = hold_ns;
    if (srv->exit_at_ns < due_ns)
        due_ns = srv->exit_at_ns;
    if (due_ns == srv->timer_armed_ns)
        return 0;
    struct itimerspec its;
    memset(&its, 0, sizeof its);
    if (due_ns != INT64_MAX) {
        its.it_value.tv_sec = (time_t)(due_ns / TS_NS_PER_S);
        its.it_value.tv_nsec = (long)(due_ns % TS_NS_PER_S);
        if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
            its.it_value.tv_nsec = 1; /* all zero would disarm it */
    }
    if (timerfd_settime(srv->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) != 0) {
        perror("tokstorm-mock: timerfd_settime");
        return -1;
    }
    srv->timer_armed_ns = due_ns;
    return 0;
}

static void loop_dispatch(struct mock_server *srv, struct epoll_event *ev)
{
    struct mock_watch *w = ev->data.ptr;
    switch (w->kind) {
    case MOCK_WATCH_LISTENER:
        loop_accept(srv);
        break;
    case MOCK_WATCH_TIMER: {
        uint64_t expirations;
        if (read(srv->timer_fd, &expirations, sizeof expirations) < 0 && errno != EAGAIN)
            perror("tokstorm-mock: timerfd read");
        srv->timer_armed_ns = INT64_MIN; /* expired: re-arm even for the same due time */
        break;
    }
    case MOCK_WATCH_CONN:
        mock_conn_on_events((struct mock_conn *)((char *)w - offsetof(struct mock_conn, watch)),
                            ev->events);
        break;
    }
}

static int loop_serve(struct mock_server *srv, volatile sig_atomic_t *stop,
                      const sigset_t *wait_mask)
{
    struct epoll_event events[MOCK_LOOP_EVENTS];
    while (!*stop) {
        if (loop_arm_timer(srv) != 0)
            return -1;
        int n = epoll_pwait(srv->epoll_fd, events, MOCK_LOOP_EVENTS, -1, wait_mask);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            perror("tokstorm-mock: epoll_wait");
            return -1;
        }
        /* A full batch means more may be ready: take them all (about one per connection)
         * before the engine runs. With thousands of connections and decode steps that are
         * each a write per stream, taking only one batch per step would leave new requests
         * waiting behind step after step. Connections are freed only in run_pending, so every
         * pointer epoll hands back stays valid across these calls. */
        int64_t handled = 0;
        for (;;) {
            for (int i = 0; i < n; i++)
                loop_dispatch(srv, &events[i]);
            handled += n;
            if (n < MOCK_LOOP_EVENTS || handled > srv->open_connections + 2)
                break;
            n = epoll_wait(srv->epoll_fd, events, MOCK_LOOP_EVENTS, 0);
            if (n <= 0)
                break;
        }
        int64_t now_ns = clock_now_ns();
        if (now_ns >= srv->exit_at_ns)
            break;
        mock_engine_advance(&srv->engine, now_ns);
        mock_conn_release_holds(srv, now_ns);
        mock_conn_run_pending(srv);
        if (srv->accept_paused && srv->open_connections < srv->paused_at_connections)
            loop_set_accepting(srv, true);
    }
    return 0;
}

static void loop_totals(const struct mock_server *srv, struct mock_totals *out)
{
    const struct mock_server_stats *s = &srv->stats;
    const struct mock_engine_stats *e = &srv->engine.stats;
    *out = (struct mock_totals){
        .requests = s->requests,
        .generations = s->generations,
        .cancelled = e->cancelled,
        .tokens = s->tokens_sent,
        .connections = s->connections,
        .max_connections = s->max_connections,
        .max_concurrent_streams = e->max_active,
        .max_batch_occupancy = e->max_running,
        .max_decode_batch = e->max_step_streams,
    };
    memcpy(out->faults, srv->faults.injected, sizeof out->faults);
    out->faults[MOCK_FAULT_NONE] = 0; /* draws that gave no fault are not faults */
}

int mock_server_run(const struct mock_options *opt, const struct mock_server_setup *setup,
                    volatile sig_atomic_t *stop, const sigset_t *wait_mask,
                    struct mock_totals *totals)
{
    struct mock_server srv;
    memset(&srv, 0, sizeof srv);
    srv.opt = opt;
    srv.epoll_fd = srv.timer_fd = -1;
    srv.listen_fd = setup->listen_fd;
    srv.listener_watch.kind = MOCK_WATCH_LISTENER;
    srv.timer_watch.kind = MOCK_WATCH_TIMER;
    srv.timer_armed_ns = INT64_MIN;
    srv.exit_at_ns = setup->exit_at_ns;
    srv.started_unix_s = setup->started_unix_s;
    srv.next_request_id = setup->first_request_id;
    srv.request_id_stride = setup->request_id_stride;
    mock_fault_init(&srv.faults, &opt->faults, setup->first_request_id - 1);

    struct mock_engine_config cfg = {
        .ttft_ns = opt->ttft_ns,
        .step_ns = opt->step_ns,
        .per_seq_ns = opt->per_seq_ns,
        .max_batch = opt->max_batch,
        .tokens_per_step = opt->events_per_write,
    };
    struct mock_engine_hooks hooks = {
        .on_tokens = mock_conn_on_tokens,
        .on_finish = mock_conn_on_finish,
        .ctx = &srv,
    };
    int rc = -1;
    if (mock_engine_init(&srv.engine, &cfg, &hooks, clock_now_ns()) != 0) {
        fprintf(stderr, "tokstorm-mock: invalid timing model\n");
        goto out;
    }
    srv.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    srv.timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (srv.epoll_fd < 0 || srv.timer_fd < 0 ||
        loop_watch(&srv, srv.listen_fd, &srv.listener_watch, EPOLLIN) != 0 ||
        loop_watch(&srv, srv.timer_fd, &srv.timer_watch, EPOLLIN) != 0) {
        perror("tokstorm-mock: epoll/timerfd");
        goto out;
    }
    if (setup->on_ready && setup->on_ready(setup->ctx) != 0)
        goto out;

    rc = loop_serve(&srv, stop, wait_mask);

out:
    if (srv.listen_fd >= 0)
        close(srv.listen_fd);
    mock_conn_close_all(&srv);
    loop_totals(&srv, totals);
    if (srv.timer_fd >= 0)
        close(srv.timer_fd);
    if (srv.epoll_fd >= 0)
        close(srv.epoll_fd);
    mock_buf_free(&srv.scratch);
    return rc;
}
