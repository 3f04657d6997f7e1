/* http.c: the rank's event loop, after curl's ephiperfifo.c: one multi handle, epoll for the
 * sockets libcurl names in on_socket, a deadline for the timer it sets in on_timer, and a
 * slot (easy handle + xfer) per stream. Response bytes are stamped and handed to xfer.c; the
 * driver decides what to send. It knows nothing of levels, MPI, JSON or results. */
#include "tokstorm/http.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <netdb.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "tokstorm/clock.h"
#include "tokstorm/log.h"
#include "tokstorm/redact.h"

struct slot {
    struct ts_http *http;
    CURL *easy;
    int64_t stream;
    int busy;
    struct ts_xfer xfer;
    char errbuf[CURL_ERROR_SIZE];
    char detail[CURL_ERROR_SIZE + 64]; /* errbuf plus the system's reason */
    const char *bind_addr;             /* the local address it binds to, or NULL */
    curl_socket_t fd;                  /* the socket libcurl last watched for its transfer */
    int probe_held;                    /* preconnect: paused at its answer, holding its link */
    int probe_counted;                 /* preconnect: whether it reused a link is known */
};

/* A transfer libcurl reported finished, and how it ended. */
struct finished {
    struct slot *sl;
    CURLcode rc;
};

/* Linux >= 4.2; older headers may lack the name. */
#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24
#endif

struct ts_http {
    CURLM *multi;
    int epfd;
    int64_t timer_deadline_ns; /* when libcurl wants CURL_SOCKET_TIMEOUT; -1 = none */
    struct slot **slots;       /* each allocated once: libcurl holds pointers to them */
    int64_t n_slots;
    struct ts_http_config cfg; /* for the slots made later (cfg.url points at url below) */
    int64_t in_flight;
    struct curl_slist *headers;
    const struct ts_http_driver *driver;    /* closed loop: what each stream sends next */
    const struct ts_http_open_driver *open; /* open loop: arrivals; both NULL: preconnect */
    char *url;                              /* the endpoint every request goes to */
    int64_t probes_answered;                /* preconnect probes that got an HTTP status */
    int64_t *free_slots;                    /* open loop: a stack of idle slots */
    int64_t n_free;
    int64_t blocked_until_ns;   /* open loop: arrivals due before this waited for a slot */
    int timer_fd;               /* open loop: wakes the loop for the next arrival */
    int64_t timer_armed_ns;     /* the arrival time timer_fd is armed for (-1: none) */
    int64_t blocked_ns, run_ns; /* time in epoll_wait, and in all, during the last run */
    int64_t probes_reused;      /* preconnect probes that found a kept-alive connection */
    int64_t probes_held;        /* preconnect probes paused on their answer */
    int probes_released;        /* preconnect: every probe is out, the held ones may end */
    int64_t port_exhaustion;    /* connects failed with EADDRNOTAVAIL since last taken */
    char **bind_addrs;          /* owned copies of cfg's; cfg.bind_addrs points here */
    char **bind_opts;           /* "host!ADDR" for CURLOPT_INTERFACE, one per address */
    char local_addr[64];        /* the system's source address, found on first need */
    char *cacert;               /* owned copy of cfg's; cfg.cacert points here */
    CURLSH **shares;            /* connection caches, one per SHARE_SLOTS slots */
    int64_t n_shares;           /* entries in shares (NULL until a slot needs it) */
    int64_t ready_ns;           /* when epoll reported ready_fd ready, or 0 */
    curl_socket_t ready_fd;     /* the socket libcurl is acting on for epoll */
    struct finished *done;      /* check_multi_info: the finished transfers of one pass */
    int64_t stall_check_ns;     /* --stall-timeout: no request is due before this */

    /* The running run's periodic hook (NULL: none), and when it is next due. */
    const struct ts_http_tick *tick;
    int64_t tick_due_ns;
    int stopping; /* http_stop was called: the running run starts nothing more */
};

/* CURLMOPT_SOCKETFUNCTION: keep epoll's interest set equal to what libcurl asks for. The
 * socket pointer is only a marker that the socket is already in the epoll set, so nothing
 * is allocated per socket and nothing needs freeing on CURL_POLL_REMOVE. */
static int on_socket(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
    struct ts_http *h = userp;
    struct slot *sl = NULL;
    if (easy != NULL && curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&sl) == CURLE_OK &&
        sl != NULL)
        sl->fd = what == CURL_POLL_REMOVE ? CURL_SOCKET_BAD : s;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(h->epfd, EPOLL_CTL_DEL, s, NULL);
        curl_multi_assign(h->multi, s, NULL);
        return 0;
    }
    struct epoll_event ev = {.events = 0, .data.fd = s};
    if (what & CURL_POLL_IN)
        ev.events |= EPOLLIN;
    if (what & CURL_POLL_OUT)
        ev.events |= EPOLLOUT;
    int rc;
    if (socketp == NULL) {
        rc = epoll_ctl(h->epfd, EPOLL_CTL_ADD, s, &ev);
        if (rc != 0 && errno == EEXIST)
            rc = epoll_ctl(h->epfd, EPOLL_CTL_MOD, s, &ev);
        if (rc == 0)
            curl_multi_assign(h->multi, s, h);
    } else {
        rc = epoll_ctl(h->epfd, EPOLL_CTL_MOD, s, &ev);
    }
    if (rc != 0) {
        /* An unwatched socket would sit until --timeout: fail the loop instead. */
        log_error("epoll_ctl on socket %d: %s", (int)s, strerror(errno));
        return -1;
    }
    return 0;
}

/* CURLMOPT_TIMERFUNCTION: remember the deadline. libcurl must not be re-entered from its own
 * callback, so the loop acts on it (even a 0 ms timeout) after this returns. */
static int on_timer(CURLM *multi, long timeout_ms, void *userp)
{
    (void)multi;
    struct ts_http *h = userp;
    h->timer_deadline_ns = timeout_ms < 0 ? -1 : clock_now_ns() + timeout_ms * 1000000;
    return 0;
}

/* When the bytes slot sl is handed arrived, as near as the loop knows: bytes read from the
 * socket that epoll reported ready were there when epoll_wait returned, however long the
 * loop then took to get to them (a thousand streams answered at once take it milliseconds).
 * libcurl also runs other transfers while acting on one socket; their bytes are timed now. */
static int64_t arrival_ns(const struct slot *sl)
{
    const struct ts_http *h = sl->http;
    return h->ready_ns != 0 && sl->fd == h->ready_fd ? h->ready_ns : clock_now_ns();
}

/* CURLOPT_HEADERFUNCTION: the status line stamps the first byte and gives the status; the
 * Content-Type says whether an event stream follows. */
static size_t on_header(char *buf, size_t size, size_t n, void *userp)
{
    struct slot *sl = userp;
    size_t len = size * n;
    xfer_on_header(&sl->xfer, buf, len, arrival_ns(sl));
    return len;
}

/* CURLOPT_PREREQFUNCTION: the connection is ready and the request is about to be written.
 * A kept-alive connection's request starts now; the new connections a transfer made are
 * counted by then (0 = reused). */
static int on_prereq(void *userp, char *primary_ip, char *local_ip, int primary_port,
                     int local_port)
{
    (void)primary_ip;
    (void)local_ip;
    (void)primary_port;
    (void)local_port;
    struct slot *sl = userp;
    long connects = 0;
    curl_easy_getinfo(sl->easy, CURLINFO_NUM_CONNECTS, &connects);
    xfer_on_sent(&sl->xfer, connects == 0, clock_now_ns());
    return CURL_PREREQFUNC_OK;
}

/* CURLOPT_WRITEFUNCTION: body bytes go straight to the request's parser. Returning less than
 * len makes libcurl abort the transfer with CURLE_WRITE_ERROR. */
static size_t on_body(char *buf, size_t size, size_t n, void *userp)
{
    struct slot *sl = userp;
    size_t len = size * n;
    return xfer_on_body(&sl->xfer, buf, len, arrival_ns(sl)) == 0 ? len : 0;
}

/* CURLOPT_SOCKOPTFUNCTION, bound connections only: libcurl binds before it connects, and a
 * bind to port 0 would pick the port then, from one pool per address whatever the server.
 * Deferring the choice to connect() lets a port be reused towards other servers, and makes
 * running out of them show as connect()'s EADDRNOTAVAIL. */
static int on_sockopt(void *clientp, curl_socket_t fd, curlsocktype purpose)
{
    (void)clientp;
    (void)purpose;
    int one = 1;
    setsockopt(fd, SOL_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
    return CURL_SOCKOPT_OK;
}

/* libcurl keeps one connection cache per multi handle and, with thousands of connections to
 * one server, handles it in ways that grow with its size: it looks for a reusable connection
 * by walking the server's connections from the start, past every one in use, and when a
 * handle is removed after its transfer it visits every cached connection (libcurl 7.88).
 * Both are quadratic in a rank's streams: 40 ms of CPU to start 1,024 requests, during which
 * no answer is read, and most of a 10,000-stream level's CPU. So slots keep their connections
 * in small caches of their own, in share objects of SHARE_SLOTS slots each (also sharing the
 * name cache, which libcurl likewise walks at the end of every transfer). */
enum { SHARE_SLOTS = 32 };

/* The share (connection and name cache) of slot number index, made on first need. */
static CURLSH *slot_share(struct ts_http *h, int64_t index)
{
    int64_t k = index / SHARE_SLOTS;
    if (h->shares[k] == NULL) {
        CURLSH *sh = curl_share_init();
        if (sh == NULL || curl_share_setopt(sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT) ||
            curl_share_setopt(sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS)) {
            curl_share_cleanup(sh);
            return NULL;
        }
        h->shares[k] = sh;
    }
    return h->shares[k];
}

/* CURLOPT_DEBUGFUNCTION, with -vv: libcurl's trace as CURLOPT_VERBOSE would print it, a line
 * each ("*" notes, ">" headers sent, "<" headers received), but through log.c and with the
 * value of every header named like a credential masked (redact.h): the API key's
 * Authorization header must not reach a log. Bodies and TLS records are left out. */
static int on_debug(CURL *easy, curl_infotype type, char *data, size_t size, void *userp)
{
    (void)easy;
    (void)userp;
    const char *mark = type == CURLINFO_TEXT         ? "*"
                       : type == CURLINFO_HEADER_OUT ? ">"
                       : type == CURLINFO_HEADER_IN  ? "<"
                                                     : NULL;
    for (size_t i = 0; mark != NULL && i < size;) {
        const char *line = data + i, *nl = memchr(line, '\n', size - i);
        size_t n = nl ? (size_t)(nl - line) : size - i;
        i += n + (nl != NULL);
        if (n > 0 && line[n - 1] == '\r')
            n--;
        /* A header's name has no space; a request line ("GET /x?a:b HTTP/1.1") has. */
        const char *colon = type == CURLINFO_TEXT ? NULL : memchr(line, ':', n);
        size_t name_len = colon ? (size_t)(colon - line) : 0;
        if (colon && !memchr(line, ' ', name_len) && redact_header_name_is_secret(line, name_len))
            log_debug("%s %.*s: %s", mark, (int)name_len, line, TS_REDACTED);
        else if (n > 0)
            log_debug("%s %.*s", mark, (int)n, line);
    }
    return 0;
}

/* Sets up slot number index's easy handle. */
static int setup_easy(struct ts_http *h, struct slot *sl, const struct ts_http_config *cfg,
                      int64_t index)
{
    CURL *e = curl_easy_init();
    if (e == NULL)
        return -1;
    sl->easy = e;
    sl->http = h;
    int bad = 0;
    bad |= curl_easy_setopt(e, CURLOPT_URL, cfg->url) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_HTTPHEADER, h->headers) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_POST, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
    /* Load goes straight to the server: an http_proxy set for a cluster's internet access
     * must not silently sit between tokstorm and the server it measures. */
    bad |= curl_easy_setopt(e, CURLOPT_PROXY, "") != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(cfg->timeout_ns / 1000000)) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                            (long)(cfg->connect_timeout_ns / 1000000)) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_HEADERDATA, sl) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_WRITEDATA, sl) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, on_prereq) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_PREREQDATA, sl) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_PRIVATE, sl) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_ERRORBUFFER, sl->errbuf) != CURLE_OK;
    if (cfg->n_bind_addrs > 0) {
        /* "host!" makes libcurl read it as an address, never as an interface name. libcurl
         * reuses a kept-alive connection only for a handle with the same local address. */
        size_t a = (size_t)(index % (int64_t)cfg->n_bind_addrs);
        sl->bind_addr = cfg->bind_addrs[a];
        bad |= curl_easy_setopt(e, CURLOPT_INTERFACE, h->bind_opts[a]) != CURLE_OK;
        bad |= curl_easy_setopt(e, CURLOPT_SOCKOPTFUNCTION, on_sockopt) != CURLE_OK;
    }
    CURLSH *share = slot_share(h, index);
    bad |= share == NULL || curl_easy_setopt(e, CURLOPT_SHARE, share) != CURLE_OK;
    /* libcurl verifies certificates by default; only --insecure turns that off. */
    if (cfg->insecure) {
        bad |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L) != CURLE_OK;
        bad |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L) != CURLE_OK;
    }
    if (cfg->cacert)
        bad |= curl_easy_setopt(e, CURLOPT_CAINFO, cfg->cacert) != CURLE_OK;
    if (cfg->debug) {
        curl_easy_setopt(e, CURLOPT_DEBUGFUNCTION, on_debug);
        curl_easy_setopt(e, CURLOPT_VERBOSE, 1L);
    }
    return bad ? -1 : 0;
}

/* Whether one of cfg's extra headers is called name. */
static int header_given(const struct ts_http_config *cfg, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < cfg->n_headers; i++)
        if (strncasecmp(cfg->headers[i], name, n) == 0 && cfg->headers[i][n] == ':')
            return 1;
    return 0;
}

/* The header list of every request and probe: tokstorm's own, unless cfg replaces one, then
 * cfg's. NULL when out of memory. */
static struct curl_slist *build_headers(const struct ts_http_config *cfg)
{
    /* "Expect:" stops libcurl from waiting for 100-continue before sending larger bodies. */
    static const char *const ours[][2] = {{"Content-Type", "Content-Type: application/json"},
                                          {"Accept", "Accept: text/event-stream"},
                                          {"Expect", "Expect:"}};
    struct curl_slist *list = NULL, *grown;
    for (size_t i = 0; i < sizeof ours / sizeof ours[0]; i++) {
        if (header_given(cfg, ours[i][0]))
            continue;
        if ((grown = curl_slist_append(list, ours[i][1])) == NULL)
            goto nomem;
        list = grown;
    }
    for (size_t i = 0; i < cfg->n_headers; i++) {
        if ((grown = curl_slist_append(list, cfg->headers[i])) == NULL)
            goto nomem;
        list = grown;
    }
    return list;
nomem:
    curl_slist_free_all(list);
    return NULL;
}

int http_new(struct ts_http **out, const struct ts_http_config *cfg, char *msg, size_t msg_len)
{
    struct ts_http *h = calloc(1, sizeof *h);
    *out = NULL;
    if (h == NULL) {
        snprintf(msg, msg_len, "out of memory");
        return TS_HTTP_ERR_INIT;
    }
    h->epfd = h->timer_fd = -1;
    h->timer_deadline_ns = -1;
    h->epfd = epoll_create1(EPOLL_CLOEXEC);
    h->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    h->multi = curl_multi_init();
    h->headers = build_headers(cfg);
    h->url = strdup(cfg->url);
    h->cfg = *cfg;
    h->cfg.url = h->url;
    h->cfg.bind_addrs = NULL;
    h->cfg.n_bind_addrs = 0;
    h->cfg.headers = NULL; /* in h->headers now */
    h->cfg.n_headers = 0;
    h->cacert = cfg->cacert ? strdup(cfg->cacert) : NULL;
    h->cfg.cacert = h->cacert;
    int no_memory = 0;
    if (cfg->n_bind_addrs > 0) {
        h->bind_addrs = calloc(cfg->n_bind_addrs, sizeof *h->bind_addrs);
        h->bind_opts = calloc(cfg->n_bind_addrs, sizeof *h->bind_opts);
        no_memory = h->bind_addrs == NULL || h->bind_opts == NULL;
        for (size_t i = 0; !no_memory && i < cfg->n_bind_addrs; i++) {
            size_t n = strlen(cfg->bind_addrs[i]) + sizeof "host!";
            h->bind_addrs[i] = strdup(cfg->bind_addrs[i]);
            h->bind_opts[i] = malloc(n);
            h->cfg.n_bind_addrs = i + 1; /* what http_free must release */
            no_memory = h->bind_addrs[i] == NULL || h->bind_opts[i] == NULL;
            if (!no_memory)
                snprintf(h->bind_opts[i], n, "host!%s", cfg->bind_addrs[i]);
        }
        h->cfg.bind_addrs = h->bind_addrs;
    }
    struct epoll_event tev = {.events = EPOLLIN, .data.fd = h->timer_fd};
    no_memory |= cfg->cacert != NULL && h->cacert == NULL;
    if (h->epfd < 0 || h->multi == NULL || h->headers == NULL || h->url == NULL || no_memory ||
        h->timer_fd < 0 || epoll_ctl(h->epfd, EPOLL_CTL_ADD, h->timer_fd, &tev) != 0) {
        snprintf(msg, msg_len, "cannot set up the event loop: %s", strerror(errno));
        http_free(h);
        return TS_HTTP_ERR_INIT;
    }
    curl_multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
    curl_multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
    curl_multi_setopt(h->multi, CURLMOPT_MAX_HOST_CONNECTIONS, 0L);
    if (http_reserve(h, cfg->max_streams > 0 ? cfg->max_streams : 1) != 0) {
        snprintf(msg, msg_len, "cannot set up %lld request slots", (long long)cfg->max_streams);
        http_free(h);
        return TS_HTTP_ERR_INIT;
    }
    *out = h;
    return 0;
}

int http_reserve(struct ts_http *h, int64_t n)
{
    if (n <= h->n_slots)
        return 0;
    struct slot **slots = realloc(h->slots, (size_t)n * sizeof *slots);
    if (slots == NULL)
        return -1;
    h->slots = slots;
    int64_t *free_slots = realloc(h->free_slots, (size_t)n * sizeof *free_slots);
    if (free_slots == NULL)
        return -1;
    h->free_slots = free_slots;
    struct finished *done = realloc(h->done, (size_t)n * sizeof *done);
    if (done == NULL)
        return -1;
    h->done = done;
    int64_t n_shares = (n + SHARE_SLOTS - 1) / SHARE_SLOTS;
    CURLSH **shares = realloc(h->shares, (size_t)n_shares * sizeof *shares);
    if (shares == NULL)
        return -1;
    h->shares = shares;
    for (; h->n_shares < n_shares; h->n_shares++)
        shares[h->n_shares] = NULL;
    for (; h->n_slots < n; h->n_slots++) {
        struct slot *sl = calloc(1, sizeof *sl);
        if (sl == NULL)
            return -1;
        sl->fd = CURL_SOCKET_BAD;
        if (xfer_init(&sl->xfer, h->cfg.api, h->cfg.max_event_bytes) != 0) {
            free(sl);
            return -1;
        }
        h->slots[h->n_slots] = sl; /* owned from here, freed by http_free */
        if (setup_easy(h, sl, &h->cfg, h->n_slots) != 0) {
            h->n_slots++;
            return -1;
        }
    }
    /* Keep one idle connection per slot between requests and levels (keep-alive). */
    curl_multi_setopt(h->multi, CURLMOPT_MAXCONNECTS, (long)h->n_slots + 16);
    return 0;
}

void http_free(struct ts_http *h)
{
    if (h == NULL)
        return;
    for (int64_t i = 0; i < h->n_slots && h->slots; i++) {
        struct slot *sl = h->slots[i];
        if (sl->easy) {
            if (sl->busy)
                curl_multi_remove_handle(h->multi, sl->easy);
            curl_easy_cleanup(sl->easy);
        }
        xfer_free(&sl->xfer);
        free(sl);
    }
    free(h->slots);
    /* Clean up the multi handle (and the connections it caches) before the epoll fd, so the
     * CURL_POLL_REMOVE calls it makes still find a valid epoll set. */
    if (h->multi)
        curl_multi_cleanup(h->multi);
    /* Last of libcurl's: a share closes its cached connections, and no handle may use it. */
    for (int64_t k = 0; k < h->n_shares; k++)
        curl_share_cleanup(h->shares[k]);
    free(h->shares);
    if (h->epfd >= 0)
        close(h->epfd);
    if (h->timer_fd >= 0)
        close(h->timer_fd);
    curl_slist_free_all(h->headers);
    free(h->url);
    free(h->cacert);
    free(h->free_slots);
    free(h->done);
    for (size_t i = 0; i < h->cfg.n_bind_addrs; i++) {
        free(h->bind_addrs[i]);
        free(h->bind_opts[i]);
    }
    free(h->bind_addrs);
    free(h->bind_opts);
    free(h);
}

/* Hands body to libcurl on slot sl, stamping the request's start just before. Returns 0, or
 * -1 when libcurl refused the handle (the caller reports it as a failed request). */
static int launch(struct ts_http *h, struct slot *sl, const char *body, size_t body_len)
{
    curl_easy_setopt(sl->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
    curl_easy_setopt(sl->easy, CURLOPT_POSTFIELDS, body);
    sl->errbuf[0] = '\0';
    xfer_begin(&sl->xfer, clock_now_ns());
    if (curl_multi_add_handle(h->multi, sl->easy) != CURLM_OK)
        return -1;
    sl->busy = 1;
    h->in_flight++;
    return 0;
}

#define ADD_FAILED "curl_multi_add_handle failed"

/* Requests handed to libcurl at once when many streams start together (see http_run). */
enum { LAUNCH_BATCH = 16 };

/* Asks the driver for stream s's next request and hands it to libcurl. Returns 1 when one
 * went out. */
static int start_next(struct ts_http *h, struct slot *sl, int64_t now_ns)
{
    const char *body;
    size_t body_len;
    if (h->stopping || !h->driver->next(h->driver->ctx, sl->stream, now_ns, &body, &body_len))
        return 0;
    if (launch(h, sl, body, body_len) != 0) {
        h->driver->done(h->driver->ctx, sl->stream, &sl->xfer, TS_TRANSPORT_CONNECT, ADD_FAILED,
                        clock_now_ns());
        return 0;
    }
    return 1;
}

static enum ts_transport transport_of(struct slot *sl, CURLcode rc, long os_errno)
{
    switch (rc) {
    case CURLE_OK:
        return TS_TRANSPORT_OK;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
        /* A reset reads as ECONNRESET, or as EPIPE when it came before the request's write. */
        return os_errno == ECONNRESET || os_errno == EPIPE ? TS_TRANSPORT_RESET
                                                           : TS_TRANSPORT_BROKEN;
    case CURLE_COULDNT_CONNECT:
        /* A server that resets the connection as soon as it accepts it can beat libcurl's own
         * check that the connect completed: the handshake was done, so it is a reset (a port
         * that refuses connections gives ECONNREFUSED). */
        return os_errno == ECONNRESET ? TS_TRANSPORT_RESET : TS_TRANSPORT_CONNECT;
    case CURLE_WRITE_ERROR:
        return TS_TRANSPORT_ABORTED;
    case CURLE_OPERATION_TIMEDOUT: {
        /* A connect timeout is a failure to connect, not a slow answer. The connect time
         * alone cannot tell: it is 0 on a reused keep-alive connection. The request was sent
         * (pretransfer time set) or answered (a first byte) on a live connection otherwise. */
        curl_off_t pretransfer_us = 0;
        curl_easy_getinfo(sl->easy, CURLINFO_PRETRANSFER_TIME_T, &pretransfer_us);
        return pretransfer_us > 0 || sl->xfer.first_byte_ns != 0 ? TS_TRANSPORT_TIMEOUT
                                                                 : TS_TRANSPORT_CONNECT;
    }
    case CURLE_INTERFACE_FAILED: /* the local address could not be bound */
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return TS_TRANSPORT_CONNECT;
    default:
        return TS_TRANSPORT_BROKEN;
    }
}

/* Hands slot sl's ended request to the driver, then gives the slot back (open loop) or lets
 * its stream start its next request (closed loop). */
static void report_done(struct ts_http *h, struct slot *sl, enum ts_transport how,
                        const char *detail, int64_t now)
{
    if (h->open != NULL) {
        h->open->done(h->open->ctx, sl->stream, &sl->xfer, how, detail, now);
        if (h->n_free == 0)
            h->blocked_until_ns = now; /* whatever was due by now had to wait */
        h->free_slots[h->n_free++] = sl->stream;
        return;
    }
    h->driver->done(h->driver->ctx, sl->stream, &sl->xfer, how, detail, now);
    start_next(h, sl, clock_now_ns());
}

/* Reaps finished transfers, reports them, and lets each stream start its next request.
 * libcurl's queue of finished transfers is emptied first: curl_multi_remove_handle searches
 * it for the handle removed, which would make reaping a burst of n ends quadratic. */
static void check_multi_info(struct ts_http *h)
{
    CURLMsg *m;
    int left;
    int64_t n_done = 0;
    while ((m = curl_multi_info_read(h->multi, &left)) != NULL) {
        if (m->msg != CURLMSG_DONE)
            continue;
        struct slot *sl = NULL;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&sl);
        h->done[n_done++] = (struct finished){sl, m->data.result}; /* one per busy slot */
    }
    for (int64_t i = 0; i < n_done; i++) {
        struct slot *sl = h->done[i].sl;
        CURLcode rc = h->done[i].rc;
        curl_multi_remove_handle(h->multi, sl->easy);
        sl->busy = 0;
        h->in_flight--;
        long os_errno = 0;
        if (rc != CURLE_OK)
            curl_easy_getinfo(sl->easy, CURLINFO_OS_ERRNO, &os_errno);
        /* connect() finds no free local port for this (source, server) pair. */
        int no_port = rc == CURLE_COULDNT_CONNECT && os_errno == EADDRNOTAVAIL;
        h->port_exhaustion += no_port;
        if (h->driver == NULL && h->open == NULL) { /* a preconnect probe: answered or not */
            long status = 0, connects = 0;
            curl_easy_getinfo(sl->easy, CURLINFO_RESPONSE_CODE, &status);
            curl_easy_getinfo(sl->easy, CURLINFO_NUM_CONNECTS, &connects);
            h->probes_answered += status > 0;
            if (sl->probe_held)
                h->probes_held--;
            else if (!sl->probe_counted) /* an answer without a body */
                h->probes_reused += status > 0 && connects == 0;
            sl->probe_held = 0;
            continue;
        }
        int64_t now = clock_now_ns();
        enum ts_transport how = transport_of(sl, rc, os_errno);
        const char *detail = NULL;
        if (no_port) {
            if (sl->bind_addr == NULL && h->local_addr[0] == '\0')
                http_local_address(h->url, h->local_addr, sizeof h->local_addr);
            snprintf(sl->detail, sizeof sl->detail,
                     "out of local ports (EADDRNOTAVAIL) on %s: spread connections with --bind "
                     "or more client hosts",
                     sl->bind_addr ? sl->bind_addr : h->local_addr);
            detail = sl->detail;
        } else if (rc != CURLE_OK) {
            /* curl's message says what failed; the errno says why ("Connection refused"). */
            snprintf(sl->detail, sizeof sl->detail, "%s%s%s%s",
                     sl->errbuf[0] ? sl->errbuf : curl_easy_strerror(rc), os_errno ? " (" : "",
                     os_errno ? strerror((int)os_errno) : "", os_errno ? ")" : "");
            detail = sl->detail;
        }
        report_done(h, sl, how, detail, now);
    }
}

/* --stall-timeout: ends, as stalled, every request that has been written and has received
 * no byte for that long. libcurl's low-speed limit cannot say this: CURLOPT_LOW_SPEED_TIME
 * counts whole seconds and compares an average rate over them, so a stream that sends a byte
 * now and then keeps passing it. So the loop checks: one walk over the slots ends the stalled
 * ones and finds the earliest deadline still to come. Bytes only move deadlines later, and a
 * request written after the walk is due a whole timeout after it, so nothing can be due before
 * that deadline, and the next walk waits for it: a level of steadily streaming requests costs
 * about one walk per timeout, however many events arrive. */
static void check_stalls(struct ts_http *h, int64_t now)
{
    int64_t stall_ns = h->cfg.stall_timeout_ns;
    int64_t next_ns = now + stall_ns;
    for (int64_t i = 0; i < h->n_slots; i++) {
        struct slot *sl = h->slots[i];
        int64_t last_ns = sl->xfer.last_byte_ns;
        if (!sl->busy || last_ns == 0)
            continue; /* idle, or not written yet: --connect-timeout's */
        if (now - last_ns < stall_ns) {
            if (last_ns + stall_ns < next_ns)
                next_ns = last_ns + stall_ns;
            continue;
        }
        /* Outside libcurl's callbacks, so the handle may go; an unfinished transfer's
         * connection is closed with it, never reused. */
        curl_multi_remove_handle(h->multi, sl->easy);
        sl->busy = 0;
        h->in_flight--;
        snprintf(sl->detail, sizeof sl->detail, "no byte for %.3f s (--stall-timeout)",
                 (double)(now - last_ns) / 1e9);
        /* May start the stream's next request on sl: not written yet, so skipped above. */
        report_done(h, sl, TS_TRANSPORT_STALLED, sl->detail, now);
    }
    h->stall_check_ns = next_ns;
}

static int socket_action(struct ts_http *h, curl_socket_t s, int flags, char *msg, size_t len)
{
    int running;
    CURLMcode mc = curl_multi_socket_action(h->multi, s, flags, &running);
    if (mc != CURLM_OK) {
        snprintf(msg, len, "curl_multi_socket_action: %s", curl_multi_strerror(mc));
        return TS_HTTP_ERR_LOOP;
    }
    return 0;
}

/* wait_ms, or less when deadline_ns comes sooner: whole milliseconds for epoll_wait, rounded
 * up so the loop does not wake just before the deadline and spin. */
static int wait_until(int64_t deadline_ns, int64_t now, int wait_ms)
{
    int64_t left = deadline_ns - now;
    if (left <= 0)
        return 0;
    int64_t ms = (left + 999999) / 1000000;
    return ms < wait_ms ? (int)ms : wait_ms;
}

/* Calls the run's tick when it is due, after the turn's sockets and timer are served. */
static void tick_if_due(struct ts_http *h)
{
    int64_t now = h->tick ? clock_now_ns() : 0;
    if (h->tick == NULL || now < h->tick_due_ns)
        return;
    h->tick_due_ns = now + h->tick->period_ns;
    h->tick->fn(h->tick->ctx, now);
}

static void tick_start(struct ts_http *h, const struct ts_http_tick *tick, int64_t now)
{
    h->tick = tick;
    h->tick_due_ns = tick ? now + tick->period_ns : 0;
}

/* One turn of the loop: waits for socket events, libcurl's timer or wake_ns (local clock,
 * -1 = none; the timerfd gives it sub-millisecond precision), and acts on them. */
static int loop_step(struct ts_http *h, int64_t wake_ns, char *msg, size_t msg_len)
{
    struct epoll_event events[256];
    int64_t now = clock_now_ns();
    int wait_ms = 1000; /* nothing pending: wake up now and then all the same */
    if (h->timer_deadline_ns >= 0)
        wait_ms = wait_until(h->timer_deadline_ns, now, wait_ms);
    /* Preconnect probes (no driver) hold their answers on purpose: never stalled. */
    int stall_checks = h->cfg.stall_timeout_ns > 0 && (h->driver != NULL || h->open != NULL);
    if (stall_checks)
        wait_ms = wait_until(h->stall_check_ns, now, wait_ms);
    if (wake_ns >= 0) {
        /* Armed relative to now: clock_now_ns may carry a test offset (clock.h) that the
         * kernel's own clock does not. */
        int64_t in_ns = wake_ns - now;
        struct itimerspec its = {
            .it_value = {.tv_sec = in_ns / 1000000000, .tv_nsec = in_ns % 1000000000}};
        if (in_ns <= 0) {
            wait_ms = 0;
        } else if (wake_ns != h->timer_armed_ns) {
            /* One system call per new arrival time, not per turn of the loop. */
            timerfd_settime(h->timer_fd, 0, &its, NULL);
            h->timer_armed_ns = wake_ns;
        }
    }
    if (h->tick != NULL)
        wait_ms = wait_until(h->tick_due_ns, now, wait_ms);
    int n = epoll_wait(h->epfd, events, (int)(sizeof events / sizeof events[0]), wait_ms);
    int64_t woke = clock_now_ns();
    h->blocked_ns += woke - now;
    if (n < 0 && errno != EINTR) {
        snprintf(msg, msg_len, "epoll_wait: %s", strerror(errno));
        return TS_HTTP_ERR_LOOP;
    }
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        if (events[i].data.fd == h->timer_fd) {
            uint64_t expirations;
            if (read(h->timer_fd, &expirations, sizeof expirations) < 0 && errno != EAGAIN)
                log_debug("timerfd read: %s", strerror(errno));
            continue;
        }
        int flags = 0;
        if (events[i].events & EPOLLIN)
            flags |= CURL_CSELECT_IN;
        if (events[i].events & EPOLLOUT)
            flags |= CURL_CSELECT_OUT;
        if (events[i].events & (EPOLLERR | EPOLLHUP))
            flags |= CURL_CSELECT_ERR;
        h->ready_ns = woke;
        h->ready_fd = events[i].data.fd;
        rc = socket_action(h, events[i].data.fd, flags, msg, msg_len);
        h->ready_ns = 0;
        /* Reap at once, as hiperfifo does: a finished transfer's end time and its stream's
         * next request must not wait for the rest of the batch. */
        check_multi_info(h);
    }
    if (rc == 0 && h->timer_deadline_ns >= 0 && clock_now_ns() >= h->timer_deadline_ns) {
        h->timer_deadline_ns = -1;
        rc = socket_action(h, CURL_SOCKET_TIMEOUT, 0, msg, msg_len);
        check_multi_info(h);
    }
    if (rc == 0 && stall_checks) {
        int64_t t = clock_now_ns();
        if (t >= h->stall_check_ns)
            check_stalls(h, t);
    }
    if (rc == 0)
        tick_if_due(h);
    return rc;
}

/* Runs the loop until no transfer is in flight. */
static int run_until_idle(struct ts_http *h, char *msg, size_t msg_len)
{
    int rc = 0;
    while (h->in_flight > 0 && rc == 0)
        rc = loop_step(h, -1, msg, msg_len);
    return rc;
}

static int check_streams(struct ts_http *h, int64_t n_streams, char *msg, size_t msg_len)
{
    if (http_reserve(h, n_streams) == 0)
        return 0;
    snprintf(msg, msg_len, "out of memory for %lld request slots", (long long)n_streams);
    return TS_HTTP_ERR_LOOP;
}

int http_run(struct ts_http *h, int64_t n_streams, const struct ts_http_driver *driver, char *msg,
             size_t msg_len)
{
    if (check_streams(h, n_streams, msg, msg_len) != 0)
        return TS_HTTP_ERR_LOOP;
    h->driver = driver;
    h->stopping = 0;
    int64_t now = clock_now_ns();
    h->blocked_ns = 0;
    /* Streams start a batch at a time, with a look at the sockets between batches: libcurl
     * writes every request handed to it in one go, some 30 us each, and a thousand at once
     * would leave the first answers unread (and their arrival times late) for 30 ms. */
    tick_start(h, driver->tick, now);
    int rc = 0;
    for (int64_t s = 0; s < n_streams && rc == 0;) {
        for (int64_t end = s + LAUNCH_BATCH; s < n_streams && s < end; s++) {
            h->slots[s]->stream = s;
            start_next(h, h->slots[s], now);
        }
        rc = loop_step(h, s < n_streams ? 0 : -1, msg, msg_len);
    }
    if (rc == 0)
        rc = run_until_idle(h, msg, msg_len);
    h->driver = NULL;
    h->tick = NULL;
    h->run_ns = clock_now_ns() - now;
    return rc;
}

/* Hands every arrival that is due by now to a free slot. */
static void start_due(struct ts_http *h)
{
    const struct ts_http_open_driver *d = h->open;
    while (!h->stopping) {
        int64_t now = clock_now_ns(), due = d->next_due(d->ctx);
        if (due > now || h->n_free == 0)
            return;
        struct slot *sl = h->slots[h->free_slots[--h->n_free]];
        const char *body;
        size_t len;
        d->take(d->ctx, sl->stream, now, due < h->blocked_until_ns, &body, &len);
        if (launch(h, sl, body, len) != 0) {
            d->done(d->ctx, sl->stream, &sl->xfer, TS_TRANSPORT_CONNECT, ADD_FAILED,
                    clock_now_ns());
            h->free_slots[h->n_free++] = sl->stream;
        }
    }
}

int http_run_open(struct ts_http *h, int64_t n_slots, const struct ts_http_open_driver *driver,
                  char *msg, size_t msg_len)
{
    if (check_streams(h, n_slots, msg, msg_len) != 0)
        return TS_HTTP_ERR_LOOP;
    h->open = driver;
    h->stopping = 0;
    h->timer_armed_ns = -1;
    h->n_free = 0;
    h->blocked_until_ns = 0;
    for (int64_t s = n_slots - 1; s >= 0; s--) {
        h->slots[s]->stream = s;
        h->free_slots[h->n_free++] = s;
    }
    int64_t began = clock_now_ns();
    h->blocked_ns = 0;
    tick_start(h, driver->tick, began);
    int rc = 0;
    for (;;) {
        start_due(h);
        int64_t due = h->stopping ? INT64_MAX : driver->next_due(driver->ctx);
        if ((due == INT64_MAX && h->in_flight == 0) || rc != 0)
            break;
        /* Sleep until the next arrival only if a slot is free for it. */
        rc = loop_step(h, due != INT64_MAX && h->n_free > 0 ? due : -1, msg, msg_len);
    }
    h->open = NULL;
    h->tick = NULL;
    h->run_ns = clock_now_ns() - began;
    return rc;
}

double http_busy_fraction(const struct ts_http *h)
{
    /* A run with nothing to do (a rank without streams) was not busy. */
    if (h->run_ns < 1000000)
        return 0;
    return (double)(h->run_ns - h->blocked_ns) / (double)h->run_ns;
}

/* CURLOPT_WRITEFUNCTION for preconnect probes: the answer itself does not matter, but a
 * probe that ended would put its connection back in the cache, where the next probe would
 * take it instead of opening one of its own. So each probe pauses at its first body bytes,
 * holding its connection, until every probe is out. */
static size_t probe_body(char *buf, size_t size, size_t n, void *userp)
{
    (void)buf;
    struct slot *sl = userp;
    if (sl->probe_held || sl->http->probes_released)
        return size * n;
    long connects = 0;
    curl_easy_getinfo(sl->easy, CURLINFO_NUM_CONNECTS, &connects);
    sl->probe_held = sl->probe_counted = 1;
    sl->http->probes_held++;
    sl->http->probes_reused += connects == 0;
    return CURL_WRITEFUNC_PAUSE;
}

int64_t http_preconnect(struct ts_http *h, int64_t n_streams, const char *probe_url,
                        const struct ts_http_tick *tick, char *msg, size_t msg_len)
{
    if (check_streams(h, n_streams, msg, msg_len) != 0)
        return TS_HTTP_ERR_LOOP;
    h->driver = NULL;
    h->stopping = 0;
    h->timer_armed_ns = -1;
    h->probes_answered = 0;
    h->probes_reused = 0;
    h->probes_held = 0;
    h->probes_released = 0;
    /* A token bucket without burst: the k-th probe (from 0) may go at k / rate seconds, and
     * each probe that found a kept-alive connection hands its token back. */
    double rate = h->cfg.connect_rate_per_s;
    int64_t began = clock_now_ns(), started = 0;
    /* A held probe must outlast the slowest pace: the first waits for the last. */
    int64_t pace_ms = rate > 0 ? (int64_t)((double)n_streams * 1000.0 / rate) : 0;
    long probe_timeout_ms = (long)(h->cfg.timeout_ns / 1000000 + pace_ms);
    int rc = 0;
    tick_start(h, tick, began);
    while (rc == 0 && !h->stopping && (started < n_streams || h->in_flight > 0)) {
        int64_t allowed = n_streams;
        if (rate > 0)
            allowed =
                1 + (int64_t)((double)(clock_now_ns() - began) * rate / 1e9) + h->probes_reused;
        for (; started < n_streams && started < allowed; started++) {
            struct slot *sl = h->slots[started];
            curl_easy_setopt(sl->easy, CURLOPT_URL, probe_url);
            curl_easy_setopt(sl->easy, CURLOPT_HTTPGET, 1L);
            curl_easy_setopt(sl->easy, CURLOPT_WRITEFUNCTION, probe_body);
            curl_easy_setopt(sl->easy, CURLOPT_HEADERFUNCTION, NULL);
            curl_easy_setopt(sl->easy, CURLOPT_TIMEOUT_MS, probe_timeout_ms);
            sl->probe_held = sl->probe_counted = 0;
            if (curl_multi_add_handle(h->multi, sl->easy) == CURLM_OK) {
                sl->busy = 1;
                h->in_flight++;
            }
        }
        if (started == n_streams && !h->probes_released && h->in_flight == h->probes_held) {
            /* Every probe is out and holds its connection or has ended: let them finish.
             * Unpausing arms libcurl's timer, on which the loop then acts. */
            h->probes_released = 1;
            for (int64_t s = 0; s < n_streams; s++)
                if (h->slots[s]->probe_held)
                    curl_easy_pause(h->slots[s]->easy, CURLPAUSE_CONT);
        }
        if (started == n_streams && h->in_flight == 0)
            break;
        int64_t wake_ns = -1;
        if (started < n_streams && rate > 0)
            wake_ns = began + (int64_t)((double)(started - h->probes_reused) * 1e9 / rate) + 1;
        rc = loop_step(h, wake_ns, msg, msg_len);
    }
    h->tick = NULL;
    for (int64_t s = 0; s < n_streams; s++) {
        struct slot *sl = h->slots[s];
        curl_easy_setopt(sl->easy, CURLOPT_URL, h->url);
        curl_easy_setopt(sl->easy, CURLOPT_POST, 1L);
        curl_easy_setopt(sl->easy, CURLOPT_TIMEOUT_MS, (long)(h->cfg.timeout_ns / 1000000));
        curl_easy_setopt(sl->easy, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(sl->easy, CURLOPT_HEADERFUNCTION, on_header);
    }
    return rc != 0 ? rc : h->probes_answered;
}

int64_t http_live_events(const struct ts_http *h)
{
    int64_t n = 0;
    for (int64_t i = 0; i < h->n_slots; i++)
        if (h->slots[i]->busy)
            n += h->slots[i]->xfer.content_events;
    return n;
}

void http_stop(struct ts_http *h, const char *why)
{
    h->stopping = 1;
    int64_t now = clock_now_ns();
    for (int64_t i = 0; i < h->n_slots; i++) {
        struct slot *sl = h->slots[i];
        if (!sl->busy)
            continue;
        /* From a tick, outside libcurl's callbacks, so the handle may go; the unfinished
         * transfer's connection is closed with it, never reused. */
        curl_multi_remove_handle(h->multi, sl->easy);
        sl->busy = 0;
        h->in_flight--;
        if (h->open != NULL) {
            h->open->done(h->open->ctx, sl->stream, &sl->xfer, TS_TRANSPORT_CANCELLED, why, now);
            h->free_slots[h->n_free++] = sl->stream;
        } else if (h->driver != NULL) {
            h->driver->done(h->driver->ctx, sl->stream, &sl->xfer, TS_TRANSPORT_CANCELLED, why,
                            now);
        } else {
            sl->probe_held = 0; /* a preconnect probe: nothing to report */
        }
    }
    h->probes_held = 0;
}

int64_t http_take_port_exhaustion(struct ts_http *h)
{
    int64_t n = h->port_exhaustion;
    h->port_exhaustion = 0;
    return n;
}

int http_check_bind_address(const char *addr, char *msg, size_t msg_len)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t len = 0;
    struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, addr, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        len = sizeof *v4;
    } else if (inet_pton(AF_INET6, addr, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        len = sizeof *v6;
    } else {
        snprintf(msg, msg_len, "'%s' is not a numeric address", addr);
        return -1;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    /* No port is taken: the bind only asks whether the address is ours. */
    if (fd >= 0)
        setsockopt(fd, SOL_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
    int rc = fd >= 0 && bind(fd, (struct sockaddr *)&ss, len) == 0 ? 0 : -1;
    if (rc != 0)
        snprintf(msg, msg_len, "cannot bind to %s: %s", addr, strerror(errno));
    if (fd >= 0)
        close(fd);
    return rc;
}

int http_local_address(const char *url, char *buf, size_t len)
{
    snprintf(buf, len, "?");
    CURLU *u = curl_url();
    char *host = NULL, *port = NULL;
    int rc = -1;
    if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK) {
        /* curl keeps the brackets of an IPv6 literal; getaddrinfo wants them off. */
        char *name = host;
        size_t n = strlen(name);
        if (n > 2 && name[0] == '[' && name[n - 1] == ']') {
            name[n - 1] = '\0';
            name++;
        }
        struct addrinfo hints = {.ai_socktype = SOCK_DGRAM}, *res = NULL;
        if (getaddrinfo(name, port, &hints, &res) == 0) {
            int fd = socket(res->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
            struct sockaddr_storage local;
            socklen_t local_len = sizeof local;
            if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0 &&
                getsockname(fd, (struct sockaddr *)&local, &local_len) == 0 &&
                getnameinfo((struct sockaddr *)&local, local_len, buf, (socklen_t)len, NULL, 0,
                            NI_NUMERICHOST) == 0)
                rc = 0;
            if (fd >= 0)
                close(fd);
            freeaddrinfo(res);
        }
    }
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    if (rc != 0)
        snprintf(buf, len, "?");
    return rc;
}

/* The answer of http_get, kept to a bound: a model list is small. */
struct get_buf {
    char *data;
    size_t len, cap;
};

enum { GET_MAX_BYTES = 1 << 20 };

static size_t on_get_body(char *buf, size_t size, size_t n, void *userp)
{
    struct get_buf *b = userp;
    size_t add = size * n;
    if (b->len + add + 1 > GET_MAX_BYTES)
        return 0; /* too large: libcurl ends the transfer with a write error */
    if (b->len + add + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + add + 1)
            cap *= 2;
        char *grown = realloc(b->data, cap);
        if (grown == NULL)
            return 0;
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, buf, add);
    b->len += add;
    b->data[b->len] = '\0';
    return add;
}

int http_get(const struct ts_http_config *cfg, const char *url, char **body, long *status,
             char *msg, size_t msg_len)
{
    *body = NULL;
    *status = 0;
    CURL *e = curl_easy_init();
    struct curl_slist *headers = build_headers(cfg);
    char errbuf[CURL_ERROR_SIZE] = "";
    char bind[INET6_ADDRSTRLEN + 8] = "";
    struct get_buf b = {0};
    if (e == NULL || headers == NULL) {
        snprintf(msg, msg_len, "cannot set up a GET of %s", url);
        curl_easy_cleanup(e);
        curl_slist_free_all(headers);
        return TS_HTTP_ERR_INIT;
    }
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROXY, ""); /* as for the load: straight to the server */
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(cfg->timeout_ns / 1000000));
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(cfg->connect_timeout_ns / 1000000));
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_get_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
    if (cfg->n_bind_addrs > 0) {
        snprintf(bind, sizeof bind, "host!%s", cfg->bind_addrs[0]);
        curl_easy_setopt(e, CURLOPT_INTERFACE, bind);
    }
    if (cfg->insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (cfg->cacert)
        curl_easy_setopt(e, CURLOPT_CAINFO, cfg->cacert);
    CURLcode rc = curl_easy_perform(e);
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, status);
    curl_easy_cleanup(e);
    curl_slist_free_all(headers);
    if (rc != CURLE_OK) {
        snprintf(msg, msg_len, "GET %s failed: %s", url, errbuf[0] ? errbuf : curl_easy_strerror(rc));
        free(b.data);
        return TS_HTTP_ERR_LOOP;
    }
    *body = b.data ? b.data : strdup("");
    return 0;
}

int http_global_init(void)
{
    return curl_global_init(CURL_GLOBAL_ALL) == CURLE_OK ? 0 : -1;
}

void http_global_cleanup(void)
{
    curl_global_cleanup();
}
