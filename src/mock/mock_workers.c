/* mock_workers.c: the process structure of tokstorm-mock. One worker: listen, serve, print the
 * totals, all in this process. N workers: bind N SO_REUSEPORT sockets to one port, fork a
 * server per socket, announce once all listen, relay stop signals, reap, sum the totals they
 * send through pipes. It knows nothing of HTTP, epoll or the timing model.
 *
 * Why SO_REUSEPORT and not one shared socket with EPOLLEXCLUSIVE: with a shared socket the
 * kernel wakes the waiters of the accept queue in LIFO order, so whichever worker went back to
 * epoll_wait last takes the next burst of connections, and under a start-up burst (tokstorm
 * opens all its connections at once) a few workers end up with most of them. Streams are long
 * and never move between workers, so that imbalance lasts the whole run. With SO_REUSEPORT each
 * worker has its own accept queue and the kernel picks the queue from a hash of the connection's
 * addresses and ports: many connections from one client split evenly (binomially), whatever the
 * workers are doing. The cost is that a busy worker's queue is not drained by idle siblings,
 * which does not matter here: every worker runs the same loop and never blocks. */
#include "mock_workers.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mock_listen.h"
#include "mock_server.h"
#include "mock_totals.h"
#include "tokstorm/clock.h"

enum worker_record_kind {
    WORKER_READY = 1,  /* the worker watches its socket: it may be announced */
    WORKER_TOTALS = 2, /* the worker has stopped; these are its totals */
};

/* What a worker writes to its pipe to the parent. */
struct worker_record {
    int64_t kind; /* enum worker_record_kind */
    struct mock_totals totals;
};

/* Writes of at most PIPE_BUF bytes to a pipe are atomic, so a read never sees half a record. */
_Static_assert(sizeof(struct worker_record) <= PIPE_BUF, "a record must fit one atomic write");

/* The parent's view of one worker. Descriptors are -1 when closed. */
struct worker {
    pid_t pid;     /* 0 until forked */
    int listen_fd; /* the worker's socket; the parent closes its copy after the fork */
    int report_fd; /* read end of the worker's pipe; closed at EOF (the worker exited) */
    int write_fd;  /* write end; the parent closes its copy after the fork */
    bool ready;    /* sent WORKER_READY */
    bool exited;   /* reaped */
};

struct workers {
    const struct mock_options *opt;
    int n;
    struct worker *w;           /* n entries */
    struct pollfd *pfd;         /* n entries, rebuilt before each ppoll */
    struct mock_listener first; /* host and port of the ready line (fd: w[0].listen_fd) */
    int64_t exit_at_ns;         /* shared --exit-after deadline */
    int64_t started_unix_s;     /* shared "created" of the model */
    struct mock_totals totals;  /* sum of the WORKER_TOTALS received */
};

static int64_t exit_deadline_ns(const struct mock_options *opt)
{
    return opt->exit_after_ns > 0 ? clock_now_ns() + opt->exit_after_ns : INT64_MAX;
}

struct alone_ctx {
    const struct mock_options *opt;
    const struct mock_listener *listener;
};

static int alone_announce(void *ctx)
{
    const struct alone_ctx *a = ctx;
    return mock_listen_announce(a->opt, a->listener);
}

/* --workers 1: no fork, no SO_REUSEPORT (a second server on the same port must fail to bind,
 * as it always did). */
static int run_alone(const struct mock_options *opt, volatile sig_atomic_t *stop,
                     const sigset_t *wait_mask)
{
    struct mock_totals totals;
    memset(&totals, 0, sizeof totals);
    int64_t exit_at_ns = exit_deadline_ns(opt);
    struct mock_listener listener;
    int rc = -1;
    if (mock_listen_open(opt->host, opt->port, false, &listener) == 0) {
        struct alone_ctx ctx = {opt, &listener};
        struct mock_server_setup setup = {
            .listen_fd = listener.fd,
            .exit_at_ns = exit_at_ns,
            .started_unix_s = (int64_t)time(NULL),
            .first_request_id = 1,
            .request_id_stride = 1,
            .on_ready = alone_announce,
            .ctx = &ctx,
        };
        rc = mock_server_run(opt, &setup, stop, wait_mask, &totals);
    }
    if (opt->stats)
        mock_totals_print(stderr, &totals, mock_fault_any(&opt->faults));
    return rc == 0 ? 0 : 1;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static int record_write(int fd, const struct worker_record *r)
{
    for (;;) {
        ssize_t n = write(fd, r, sizeof *r);
        if (n == (ssize_t)sizeof *r)
            return 0;
        if (n < 0 && errno == EINTR)
            continue;
        return -1; /* the parent is gone (EPIPE): nobody to tell */
    }
}

static int worker_announce(void *ctx)
{
    struct worker_record r;
    memset(&r, 0, sizeof r);
    r.kind = WORKER_READY;
    return record_write(*(const int *)ctx, &r);
}

/* Runs in the forked child: keeps only its own socket and pipe end, serves, reports. */
static int worker_main(struct workers *ws, int index, pid_t parent, volatile sig_atomic_t *stop,
                       const sigset_t *wait_mask)
{
    struct worker *me = &ws->w[index];
    int listen_fd = me->listen_fd, report_fd = me->write_fd;
    for (int i = 0; i < ws->n; i++) {
        close_fd(&ws->w[i].report_fd);
        if (i != index) {
            close_fd(&ws->w[i].listen_fd);
            close_fd(&ws->w[i].write_fd);
        }
    }
    /* A parent killed outright cannot relay the stop: have the kernel do it. Checking the
     * parent afterwards closes the window where it died before the request was made. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
        *stop = 1;
    struct mock_server_setup setup = {
        .listen_fd = listen_fd,
        .exit_at_ns = ws->exit_at_ns,
        .started_unix_s = ws->started_unix_s,
        .first_request_id = (uint64_t)index + 1,
        .request_id_stride = (uint64_t)ws->n,
        .on_ready = worker_announce,
        .ctx = &report_fd,
    };
    struct worker_record r;
    memset(&r, 0, sizeof r);
    int rc = mock_server_run(ws->opt, &setup, stop, wait_mask, &r.totals);
    r.kind = WORKER_TOTALS;
    record_write(report_fd, &r);
    close(report_fd);
    free(ws->w);
    free(ws->pfd);
    return rc == 0 ? 0 : 1;
}

/* Binds every worker's socket and makes every pipe before any fork, so that a bad address or a
 * port in use fails before anything runs. The probe picks the port when --port is 0 and fails
 * if another server holds it, even one whose sockets would let ours share it. */
static int workers_open(struct workers *ws)
{
    int port;
    if (mock_listen_probe(ws->opt->host, ws->opt->port, &port) != 0)
        return -1;
    for (int i = 0; i < ws->n; i++) {
        struct mock_listener l;
        if (mock_listen_open(ws->opt->host, port, true, &l) != 0)
            return -1;
        ws->w[i].listen_fd = l.fd;
        if (i == 0)
            ws->first = l;
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) != 0) {
            perror("tokstorm-mock: pipe");
            return -1;
        }
        ws->w[i].report_fd = fds[0];
        ws->w[i].write_fd = fds[1];
    }
    return 0;
}

/* Reaps worker i, whose pipe reached EOF. Returns false when it did not stop cleanly. */
static bool worker_reap(struct workers *ws, int i)
{
    struct worker *w = &ws->w[i];
    close_fd(&w->report_fd);
    int status = 0;
    pid_t got;
    do {
        got = waitpid(w->pid, &status, 0);
    } while (got < 0 && errno == EINTR);
    w->exited = true;
    if (got < 0) {
        perror("tokstorm-mock: waitpid");
        return false;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return true;
    if (WIFSIGNALED(status))
        fprintf(stderr, "tokstorm-mock: worker %d (pid %d) was killed by signal %d (%s)\n", i,
                (int)w->pid, WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        fprintf(stderr, "tokstorm-mock: worker %d (pid %d) exited with status %d\n", i, (int)w->pid,
                WEXITSTATUS(status));
    return false;
}

/* Handles what worker i's pipe has: a record, or EOF (the worker exited: reap it). Returns
 * false when the worker failed. */
static bool worker_on_readable(struct workers *ws, int i)
{
    struct worker *w = &ws->w[i];
    struct worker_record r;
    ssize_t n = read(w->report_fd, &r, sizeof r);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return true;
    if (n == (ssize_t)sizeof r) {
        if (r.kind == WORKER_READY)
            w->ready = true;
        else if (r.kind == WORKER_TOTALS)
            mock_totals_merge(&ws->totals, &r.totals);
        return true;
    }
    if (n != 0)
        fprintf(stderr, "tokstorm-mock: worker %d: bad report (%zd bytes)\n", i, n);
    return worker_reap(ws, i) && n == 0;
}

static int workers_alive(const struct workers *ws)
{
    int alive = 0;
    for (int i = 0; i < ws->n; i++)
        alive += ws->w[i].pid > 0 && !ws->w[i].exited;
    return alive;
}

static int workers_ready(const struct workers *ws)
{
    int ready = 0;
    for (int i = 0; i < ws->n; i++)
        ready += ws->w[i].ready;
    return ready;
}

/* Waits for the forked workers until all have exited: announces them once all are ready,
 * passes a stop on (a signal, or one worker failing stops the rest). Stop signals arrive only
 * inside ppoll. Returns 0 when every worker stopped cleanly and failed was false, else 1. */
static int workers_supervise(struct workers *ws, bool failed, volatile sig_atomic_t *stop,
                             const sigset_t *wait_mask)
{
    bool forwarded = false, announced = false;
    while (workers_alive(ws) > 0) {
        if ((*stop || failed) && !forwarded) {
            for (int i = 0; i < ws->n; i++)
                if (ws->w[i].pid > 0 && !ws->w[i].exited)
                    kill(ws->w[i].pid, SIGTERM);
            forwarded = true;
        }
        for (int i = 0; i < ws->n; i++) {
            /* Negative descriptors are skipped: exited workers, and any never forked. */
            ws->pfd[i].fd = ws->w[i].pid > 0 ? ws->w[i].report_fd : -1;
            ws->pfd[i].events = POLLIN;
            ws->pfd[i].revents = 0;
        }
        if (ppoll(ws->pfd, (nfds_t)ws->n, NULL, wait_mask) < 0) {
            if (errno == EINTR)
                continue;
            perror("tokstorm-mock: ppoll");
            failed = true;
            /* Cannot wait for reports any more: stop everyone and reap them blindly. */
            for (int i = 0; i < ws->n; i++)
                if (ws->w[i].pid > 0 && !ws->w[i].exited) {
                    kill(ws->w[i].pid, SIGTERM);
                    worker_reap(ws, i);
                }
            break;
        }
        for (int i = 0; i < ws->n; i++)
            if (ws->pfd[i].revents && !worker_on_readable(ws, i))
                failed = true;
        if (!announced && !failed && !*stop && workers_ready(ws) == ws->n) {
            announced = true;
            if (mock_listen_announce(ws->opt, &ws->first) != 0)
                failed = true;
        }
    }
    return failed ? 1 : 0;
}

static int run_workers(const struct mock_options *opt, volatile sig_atomic_t *stop,
                       const sigset_t *wait_mask)
{
    struct workers ws;
    memset(&ws, 0, sizeof ws);
    ws.opt = opt;
    ws.n = opt->workers;
    ws.exit_at_ns = exit_deadline_ns(opt);
    ws.started_unix_s = (int64_t)time(NULL);
    ws.w = calloc((size_t)ws.n, sizeof *ws.w);
    ws.pfd = calloc((size_t)ws.n, sizeof *ws.pfd);
    if (!ws.w || !ws.pfd) {
        fprintf(stderr, "tokstorm-mock: out of memory\n");
        free(ws.w);
        free(ws.pfd);
        return 1;
    }
    for (int i = 0; i < ws.n; i++)
        ws.w[i].listen_fd = ws.w[i].report_fd = ws.w[i].write_fd = -1;
    int rc = 1;
    if (workers_open(&ws) == 0) {
        bool failed = false;
        /* The children inherit unflushed stdio buffers: empty them so nothing prints twice. */
        fflush(stdout);
        fflush(stderr);
        pid_t parent = getpid();
        for (int i = 0; i < ws.n; i++) {
            pid_t pid = fork();
            if (pid == 0)
                return worker_main(&ws, i, parent, stop, wait_mask);
            if (pid < 0) {
                perror("tokstorm-mock: fork");
                failed = true;
                break;
            }
            ws.w[i].pid = pid;
            /* Only the worker may hold its socket (else connections hashed to it would wait
             * for nobody if it died) and its pipe's write end (else EOF never comes). */
            close_fd(&ws.w[i].listen_fd);
            close_fd(&ws.w[i].write_fd);
        }
        rc = workers_supervise(&ws, failed, stop, wait_mask);
    }
    for (int i = 0; i < ws.n; i++) {
        close_fd(&ws.w[i].listen_fd);
        close_fd(&ws.w[i].report_fd);
        close_fd(&ws.w[i].write_fd);
    }
    if (opt->stats)
        mock_totals_print(stderr, &ws.totals, mock_fault_any(&opt->faults));
    free(ws.w);
    free(ws.pfd);
    return rc;
}

int mock_workers_run(const struct mock_options *opt, volatile sig_atomic_t *stop,
                     const sigset_t *wait_mask)
{
    return opt->workers > 1 ? run_workers(opt, stop, wait_mask) : run_alone(opt, stop, wait_mask);
}
