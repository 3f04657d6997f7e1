/* mock_loop.c: the event loop of tokstorm-mock: the listening socket, accept, one timerfd for
 * the engine and --exit-after, epoll_pwait, and start-up and shutdown. It knows nothing of
 * HTTP, JSON or the timing model's rules: it hands readiness to connections and time to the
 * engine. */
#include "mock_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
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

#define MOCK_LOOP_BACKLOG 4096
#define MOCK_LOOP_EVENTS  256

/* Binds and listens on opt->host:opt->port; fills the printable host and the bound port. */
static int loop_listen(struct mock_server *srv, char *host_text, size_t host_len, int *port)
{
    struct sockaddr_storage addr;
    memset(&addr, 0, sizeof addr);
    struct sockaddr_in *v4 = (struct sockaddr_in *)&addr;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&addr;
    socklen_t addr_len;
    int family;
    if (inet_pton(AF_INET, srv->opt->host, &v4->sin_addr) == 1) {
        family = v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)srv->opt->port);
        addr_len = sizeof *v4;
    } else if (inet_pton(AF_INET6, srv->opt->host, &v6->sin6_addr) == 1) {
        family = v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)srv->opt->port);
        addr_len = sizeof *v6;
    } else {
        fprintf(stderr, "tokstorm-mock: --host %s is not a numeric address\n", srv->opt->host);
        return -1;
    }
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        perror("tokstorm-mock: socket");
        return -1;
    }
    srv->listen_fd = fd;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&addr, addr_len) != 0) {
        fprintf(stderr, "tokstorm-mock: cannot bind %s port %d: %s\n", srv->opt->host,
                srv->opt->port, strerror(errno));
        return -1;
    }
    if (listen(fd, MOCK_LOOP_BACKLOG) != 0 ||
        getsockname(fd, (struct sockaddr *)&addr, &addr_len) != 0) {
        perror("tokstorm-mock: listen");
        return -1;
    }
    const void *raw =
        family == AF_INET ? (const void *)&v4->sin_addr : (const void *)&v6->sin6_addr;
    char text[INET6_ADDRSTRLEN];
    inet_ntop(family, raw, text, sizeof text);
    snprintf(host_text, host_len, family == AF_INET6 ? "[%s]" : "%s", text);
    *port = ntohs(family == AF_INET ? v4->sin_port : v6->sin6_port);
    return 0;
}

/* PATH.tmp then rename, so a reader polling for PATH never sees a partial number. */
static int loop_write_port_file(const char *path, int port)
{
    char tmp[PATH_MAX];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp) {
        fprintf(stderr, "tokstorm-mock: --port-file path too long\n");
        return -1;
    }
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "tokstorm-mock: cannot write --port-file %s: %s\n", tmp, strerror(errno));
        return -1;
    }
    bool written = fprintf(f, "%d\n", port) > 0;
    written &= fclose(f) == 0;
    if (!written || rename(tmp, path) != 0) {
        fprintf(stderr, "tokstorm-mock: cannot write --port-file %s: %s\n", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

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

/* One timer for everything: the engine's next event or the exit deadline, whichever is first.
 * TFD_TIMER_ABSTIME keeps it from drifting; a due time already past fires at once. */
static int loop_arm_timer(struct mock_server *srv)
{
    int64_t due_ns = mock_engine_next_due_ns(&srv->engine);
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
        for (int i = 0; i < n; i++)
            loop_dispatch(srv, &events[i]);
        int64_t now_ns = clock_now_ns();
        if (now_ns >= srv->exit_at_ns)
            break;
        mock_engine_advance(&srv->engine, now_ns);
        mock_conn_run_pending(srv);
        if (srv->accept_paused && srv->open_connections < srv->paused_at_connections)
            loop_set_accepting(srv, true);
    }
    return 0;
}

static void loop_print_stats(const struct mock_server *srv)
{
    const struct mock_server_stats *s = &srv->stats;
    const struct mock_engine_stats *e = &srv->engine.stats;
    fprintf(stderr,
            "tokstorm-mock: stats: requests=%lld generations=%lld cancelled=%lld tokens=%lld "
            "connections=%lld max_connections=%lld max_concurrent_streams=%lld "
            "max_batch_occupancy=%lld max_decode_batch=%lld\n",
            (long long)s->requests, (long long)s->generations, (long long)e->cancelled,
            (long long)s->tokens_sent, (long long)s->connections, (long long)s->max_connections,
            (long long)e->max_active, (long long)e->max_running, (long long)e->max_step_streams);
}

int mock_server_run(const struct mock_options *opt, volatile sig_atomic_t *stop,
                    const sigset_t *wait_mask)
{
    struct mock_server srv;
    memset(&srv, 0, sizeof srv);
    srv.opt = opt;
    srv.epoll_fd = srv.listen_fd = srv.timer_fd = -1;
    srv.listener_watch.kind = MOCK_WATCH_LISTENER;
    srv.timer_watch.kind = MOCK_WATCH_TIMER;
    srv.timer_armed_ns = INT64_MIN;
    srv.started_unix_s = (int64_t)time(NULL);

    int64_t start_ns = clock_now_ns();
    srv.exit_at_ns = opt->exit_after_ns > 0 ? start_ns + opt->exit_after_ns : INT64_MAX;
    struct mock_engine_config cfg = {
        .ttft_ns = opt->ttft_ns,
        .step_ns = opt->step_ns,
        .per_seq_ns = opt->per_seq_ns,
        .max_batch = opt->max_batch,
    };
    struct mock_engine_hooks hooks = {
        .on_token = mock_conn_on_token,
        .on_finish = mock_conn_on_finish,
        .ctx = &srv,
    };
    int rc = -1;
    char host[INET6_ADDRSTRLEN + 2];
    int port = 0;
    if (mock_engine_init(&srv.engine, &cfg, &hooks, start_ns) != 0) {
        fprintf(stderr, "tokstorm-mock: invalid timing model\n");
        goto out;
    }
    if (loop_listen(&srv, host, sizeof host, &port) != 0)
        goto out;
    srv.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    srv.timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (srv.epoll_fd < 0 || srv.timer_fd < 0 ||
        loop_watch(&srv, srv.listen_fd, &srv.listener_watch, EPOLLIN) != 0 ||
        loop_watch(&srv, srv.timer_fd, &srv.timer_watch, EPOLLIN) != 0) {
        perror("tokstorm-mock: epoll/timerfd");
        goto out;
    }
    if (opt->port_file && loop_write_port_file(opt->port_file, port) != 0)
        goto out;
    /* tokstorm reads this exact line through a pipe to learn the port: keep the format. */
    printf("tokstorm-mock: listening on http://%s:%d\n", host, port);
    fflush(stdout);

    rc = loop_serve(&srv, stop, wait_mask);

out:
    if (srv.listen_fd >= 0)
        close(srv.listen_fd);
    mock_conn_close_all(&srv);
    if (opt->stats)
        loop_print_stats(&srv);
    if (srv.timer_fd >= 0)
        close(srv.timer_fd);
    if (srv.epoll_fd >= 0)
        close(srv.epoll_fd);
    mock_buf_free(&srv.scratch);
    return rc;
}
