/* mock_conn.c: one client connection: reads and parses requests, routes them, writes
 * responses and stream chunks, decides when the connection closes, and carries out the faults
 * mock_fault.c draws for it. It glues the HTTP parser, the OpenAI renderers and the engine
 * together; it knows nothing of epoll_wait, the timer or the listening socket. */
#include "mock_conn.h"
#include "mock_dialects.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tokstorm/clock.h"

/* Pipelined input beyond one maximal request stops reading until the current one is done. */
#define MOCK_CONN_MAX_IN_BYTES (MOCK_HTTP_MAX_HEAD_BYTES + MOCK_HTTP_MAX_BODY_BYTES)
/* A client that stops reading a long stream is dropped rather than buffered without bound. */
#define MOCK_CONN_MAX_OUT_BYTES (64 * 1024 * 1024)
/* Buffers grown past this by one big request are released when it is done. */
#define MOCK_CONN_KEEP_BYTES (64 * 1024)

static struct mock_conn *conn_of_stream(struct mock_stream *s)
{
    return (struct mock_conn *)((char *)s - offsetof(struct mock_conn, stream));
}

static void conn_defer(struct mock_conn *c)
{
    if (c->pending)
        return;
    c->pending = true;
    c->pending_next = c->srv->pending;
    c->srv->pending = c;
}

static void conn_kill(struct mock_conn *c)
{
    c->dead = true;
    conn_defer(c);
}

/* The server's render buffer, emptied: every render starts from a clean slate even if the
 * previous one failed halfway. */
static struct mock_buf *conn_scratch(struct mock_conn *c)
{
    mock_buf_reset(&c->srv->scratch, MOCK_CONN_KEEP_BYTES);
    return &c->srv->scratch;
}

static void conn_sync_interest(struct mock_conn *c)
{
    if (c->dead)
        return;
    uint32_t want = 0;
    switch (c->phase) {
    case MOCK_CONN_READ_HEAD:
    case MOCK_CONN_READ_BODY:
    case MOCK_CONN_GENERATING:
        /* Reading while generating is how a client that hangs up mid-stream is noticed. */
        if (!c->peer_eof && mock_buf_len(&c->in) < MOCK_CONN_MAX_IN_BYTES)
            want |= EPOLLIN;
        break;
    case MOCK_CONN_CLOSING:
        break;
    case MOCK_CONN_LINGER:
        want |= EPOLLIN;
        break;
    }
    /* Held output waits for the timer, not for room in the socket (which is always there). */
    if (mock_buf_len(&c->out) > 0 && c->hold_until_ns == 0)
        want |= EPOLLOUT;
    if (want == c->epoll_events)
        return;
    struct epoll_event ev = {.events = want, .data.ptr = &c->watch};
    if (epoll_ctl(c->srv->epoll_fd, EPOLL_CTL_MOD, c->fd, &ev) != 0) {
        conn_kill(c);
        return;
    }
    c->epoll_events = want;
}

/* Sends what the socket takes now; the rest waits for EPOLLOUT (or, held by a stall fault,
 * for the end of the stall). The split fault sends one byte per send(). */
static void conn_flush(struct mock_conn *c)
{
    size_t most = c->fault == MOCK_FAULT_SPLIT ? 1 : SIZE_MAX;
    while (!c->dead && c->hold_until_ns == 0 && mock_buf_len(&c->out) > 0) {
        size_t len = mock_buf_len(&c->out);
        ssize_t n = send(c->fd, mock_buf_head(&c->out), len < most ? len : most, MSG_NOSIGNAL);
        if (n > 0)
            mock_buf_consume(&c->out, (size_t)n);
        else if (n < 0 && errno == EINTR)
            continue;
        else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        else
            conn_kill(c);
    }
    if (mock_buf_len(&c->out) == 0)
        mock_buf_reset(&c->out, MOCK_CONN_KEEP_BYTES);
    if (mock_buf_len(&c->out) > MOCK_CONN_MAX_OUT_BYTES) {
        if (!c->srv->opt->quiet)
            fprintf(stderr, "tokstorm-mock: dropping a client that stopped reading\n");
        conn_kill(c);
    }
    conn_sync_interest(c);
}

/* Appends the event rendered in srv->scratch to c->out, framed for this response. */
static void conn_queue_event(struct mock_conn *c)
{
    struct mock_buf *ev = &c->srv->scratch;
    int rc = c->chunked ? mock_http_write_chunk(&c->out, mock_buf_head(ev), mock_buf_len(ev))
                        : mock_buf_append(&c->out, mock_buf_head(ev), mock_buf_len(ev));
    if (rc != 0)
        conn_kill(c);
}

/* Appends the content event of token to c->out, rendered in place (no scratch copy: this runs
 * once per token). Each event keeps its own HTTP chunk, so with several tokens per step the
 * bytes are those of as many single-token steps: only where the writes fall differs. */
static int conn_queue_token(struct mock_conn *c, int64_t token,
                            const struct mock_openai_stamp *stamp, int64_t send_ns)
{
    if (mock_dialect_is_native(c->reply.api)) {
        /* The native formats are not the benchmark's hot path: rendered, then framed. */
        if (mock_dialect_render_token(&c->reply, token, send_ns, conn_scratch(c)) != 0)
            return -1;
        conn_queue_event(c);
        return c->dead ? -1 : 0;
    }
    if (c->chunked &&
        mock_http_write_chunk_start(&c->out, mock_openai_token_bytes(&c->reply, token, stamp)) != 0)
        return -1;
    if (mock_openai_render_token(&c->reply, token, stamp, &c->out) != 0)
        return -1;
    return c->chunked ? mock_http_write_chunk_end(&c->out) : 0;
}

static void conn_reply(struct mock_conn *c, int status, const char *content_type, const char *body,
                       size_t body_bytes, const char *extra_headers)
{
    if (mock_http_write_head(&c->out, status, content_type, MOCK_HTTP_LENGTH, (int64_t)body_bytes,
                             c->keep_alive, extra_headers) != 0 ||
        mock_buf_append(&c->out, body, body_bytes) != 0)
        conn_kill(c);
}

static void conn_reply_error(struct mock_conn *c, int status, const char *message,
                             const char *extra_headers)
{
    struct mock_buf *body = conn_scratch(c);
    if (mock_openai_render_error(status, message, body) != 0) {
        conn_kill(c);
        return;
    }
    conn_reply(c, status, "application/json", mock_buf_head(body), mock_buf_len(body),
               extra_headers);
}

static void conn_start_generation(struct mock_conn *c, enum mock_api api)
{
    struct mock_server *srv = c->srv;
    char err[256];
    uint64_t id = srv->next_request_id;
    srv->next_request_id += srv->request_id_stride;
    const char *body = mock_buf_head(&c->in) + c->req.head_bytes;
    size_t body_bytes = (size_t)c->req.body_bytes;
    int rc = mock_dialect_is_native(api)
                 ? mock_dialect_parse_request(api, body, body_bytes, srv->opt->model, id, &c->reply,
                                              err, sizeof err)
                 : mock_openai_parse_request(api, body, body_bytes, srv->opt->model, id,
                                             (int64_t)time(NULL), &c->reply, err, sizeof err);
    if (rc != 0) {
        conn_reply_error(c, rc == -1 ? 400 : 500, err, NULL);
        return;
    }
    if (api == MOCK_API_CHAT)
        c->reply.reasoning_tokens = srv->opt->reasoning_tokens;
    c->fault = mock_fault_pick_request(&srv->faults, c->reply.stream);
    c->fault_token = mock_fault_trigger_token(c->reply.max_tokens);
    c->fault_done = false;
    switch (c->fault) {
    case MOCK_FAULT_429:
    case MOCK_FAULT_500:
    case MOCK_FAULT_503: {
        int status = c->fault == MOCK_FAULT_429 ? 429 : c->fault == MOCK_FAULT_500 ? 500 : 503;
        mock_openai_reply_free(&c->reply);
        conn_reply_error(c, status, "injected fault (tokstorm-mock --fault)",
                         status == 429 ? "Retry-After: 1\r\n" : NULL);
        return;
    }
    case MOCK_FAULT_NOT_SSE:
        c->reply.stream = false; /* the whole answer as JSON, when the tokens are done */
        break;
    default:
        break;
    }
    if (c->reply.stream) {
        /* HTTP/1.0 has no chunked encoding: the body then ends when the server closes. */
        c->chunked = c->req.minor_version >= 1;
        if (!c->chunked)
            c->keep_alive = false;
        if (mock_http_write_head(&c->out, 200, "text/event-stream",
                                 c->chunked ? MOCK_HTTP_CHUNKED : MOCK_HTTP_UNTIL_CLOSE, 0,
                                 c->keep_alive, "Cache-Control: no-cache\r\n") != 0 ||
            mock_openai_render_role(&c->reply, clock_now_ns(), conn_scratch(c)) != 0) {
            mock_openai_reply_free(&c->reply);
            conn_kill(c);
            return;
        }
        /* Headers and the role chunk go out on arrival, before any queueing or prefill. */
        if (mock_buf_len(&srv->scratch) > 0)
            conn_queue_event(c);
        conn_flush(c);
    }
    c->phase = MOCK_CONN_GENERATING;
    mock_engine_submit(&srv->engine, &c->stream, c->reply.max_tokens, clock_now_ns());
}

/* --api-key-env: whether the request carries "Authorization: Bearer <key>". */
static bool conn_authorized(struct mock_conn *c)
{
    const char *key = c->srv->opt->api_key;
    if (key == NULL)
        return true;
    const char *value = mock_buf_head(&c->in) + c->req.authorization_at;
    size_t n = c->req.authorization_bytes, key_n = strlen(key);
    return n == 7 + key_n && strncasecmp(value, "Bearer ", 7) == 0 &&
           memcmp(value + 7, key, key_n) == 0;
}

static void conn_route(struct mock_conn *c)
{
    c->fault = MOCK_FAULT_NONE; /* drawn afresh for each generation request */
    const char *path = c->req.path;
    enum mock_http_method method = c->req.method;
    if (strncmp(path, "/v1/", 4) == 0 && !conn_authorized(c)) {
        if (!c->srv->opt->quiet)
            fprintf(stderr, "tokstorm-mock: 401 for %s: no Authorization: Bearer with the key\n",
                    path);
        conn_reply_error(c, 401, "missing or wrong API key (Authorization: Bearer)",
                         "WWW-Authenticate: Bearer\r\n");
        return;
    }
    /* Every dialect is served on its own path at once: the client's --api picks one. */
    static const struct {
        const char *path;
        enum mock_api api;
    } generate[] = {
        {"/v1/chat/completions", MOCK_API_CHAT}, {"/v1/completions", MOCK_API_COMPLETIONS},
        {"/generate", MOCK_API_SGLANG},          {"/generate_stream", MOCK_API_TGI},
        {"/completion", MOCK_API_LLAMACPP},
    };
    for (size_t i = 0; i < sizeof generate / sizeof *generate; i++) {
        if (strcmp(path, generate[i].path) != 0)
            continue;
        if (method != MOCK_HTTP_POST)
            conn_reply_error(c, 405, "this endpoint takes POST", "Allow: POST\r\n");
        else
            conn_start_generation(c, generate[i].api);
        return;
    }
    bool models = strcmp(path, "/v1/models") == 0;
    if (models || strcmp(path, "/health") == 0) {
        if (method != MOCK_HTTP_GET) {
            conn_reply_error(c, 405, "this endpoint takes GET", "Allow: GET\r\n");
        } else if (!models) {
            conn_reply(c, 200, NULL, "", 0, NULL);
        } else {
            struct mock_buf *body = conn_scratch(c);
            if (mock_openai_render_models(c->srv->opt->model, c->srv->started_unix_s, body)) {
                conn_kill(c);
                return;
            }
            conn_reply(c, 200, "application/json", mock_buf_head(body), mock_buf_len(body), NULL);
        }
        return;
    }
    conn_reply_error(c, 404,
                     "unknown path; try /v1/chat/completions, /v1/completions, /v1/models, "
                     "/generate (SGLang), /generate_stream (TGI) or /completion (llama.cpp)",
                     NULL);
}

static const char *parse_error_message(int status)
{
    switch (status) {
    case 411:
        return "chunked request bodies are not supported; send Content-Length";
    case 413:
        return "request body larger than 16 MiB";
    case 431:
        return "request head larger than 64 KiB";
    case 505:
        return "only HTTP/1.0 and HTTP/1.1 are supported";
    default:
        return "malformed HTTP request";
    }
}

/* Serves as many buffered requests as it can, in order, until one starts generating or
 * more bytes are needed; then sends what it wrote. */
static void conn_advance(struct mock_conn *c)
{
    while (!c->dead) {
        if (c->phase == MOCK_CONN_READ_HEAD) {
            int rc = mock_http_parse_head(mock_buf_head(&c->in), mock_buf_len(&c->in),
                                          &c->head_scanned_bytes, &c->req);
            if (rc == 0) {
                if (!c->peer_eof)
                    break;
                c->phase = MOCK_CONN_CLOSING;
            } else if (rc < 0) {
                /* The byte stream cannot be resynchronised after a bad head: answer, close. */
                c->keep_alive = false;
                conn_reply_error(c, -rc, parse_error_message(-rc), NULL);
                c->srv->stats.requests++;
                c->phase = MOCK_CONN_CLOSING;
            } else {
                c->head_scanned_bytes = 0;
                c->phase = MOCK_CONN_READ_BODY;
                size_t have = mock_buf_len(&c->in) - c->req.head_bytes;
                if (c->req.expect_continue && c->req.minor_version == 1 &&
                    have < (size_t)c->req.body_bytes && mock_http_write_continue(&c->out) != 0)
                    conn_kill(c);
            }
        } else if (c->phase == MOCK_CONN_READ_BODY) {
            size_t need = c->req.head_bytes + (size_t)c->req.body_bytes;
            if (mock_buf_len(&c->in) < need) {
                if (!c->peer_eof)
                    break;
                c->phase = MOCK_CONN_CLOSING;
                continue;
            }
            c->keep_alive = c->req.keep_alive;
            conn_route(c);
            mock_buf_consume(&c->in, need);
            if (mock_buf_len(&c->in) == 0)
                mock_buf_reset(&c->in, MOCK_CONN_KEEP_BYTES);
            if (c->phase == MOCK_CONN_READ_BODY) {
                /* Answered at once (not a generation): the next request may follow. */
                c->srv->stats.requests++;
                c->phase = c->keep_alive ? MOCK_CONN_READ_HEAD : MOCK_CONN_CLOSING;
            }
        } else if (c->phase == MOCK_CONN_CLOSING) {
            conn_flush(c);
            if (c->dead || mock_buf_len(&c->out) > 0)
                break;
            if (c->peer_eof) {
                conn_kill(c);
                break;
            }
            /* Closing with unread input would send RST and could destroy the response in
             * the client's receive buffer, so shut the write side and drain until EOF. */
            shutdown(c->fd, SHUT_WR);
            c->phase = MOCK_CONN_LINGER;
            mock_buf_reset(&c->in, 0);
            break;
        } else {
            break; /* GENERATING and LINGER are driven by the engine and by reads */
        }
    }
    conn_flush(c);
}

static void conn_read(struct mock_conn *c)
{
    if (c->phase == MOCK_CONN_LINGER) {
        char sink[4096];
        /* Bounded, so a client that keeps sending cannot hold the loop here. */
        for (int i = 0; i < 16; i++) {
            ssize_t n = recv(c->fd, sink, sizeof sink, 0);
            if (n > 0 || (n < 0 && errno == EINTR))
                continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                return;
            conn_kill(c);
            return;
        }
        return;
    }
    while (mock_buf_len(&c->in) < MOCK_CONN_MAX_IN_BYTES) {
        size_t room = MOCK_CONN_MAX_IN_BYTES - mock_buf_len(&c->in);
        if (room > sizeof c->srv->read_buf)
            room = sizeof c->srv->read_buf;
        /* Into the server's buffer, then only what arrived into c->in: reserving a full read's
         * room in every connection's own buffer would cost each of them 16 KiB (4 KiB of it
         * resident) for a request of a few hundred bytes, 10k connections at a time. */
        ssize_t n = recv(c->fd, c->srv->read_buf, room, 0);
        if (n > 0) {
            if (mock_buf_append(&c->in, c->srv->read_buf, (size_t)n) != 0) {
                conn_kill(c);
                return;
            }
            if ((size_t)n < room)
                return; /* drained for now; level-triggered epoll reports any more */
        } else if (n == 0) {
            c->peer_eof = true;
            /* Gone mid-request: the stream would only be written into a closed socket. */
            if (c->phase == MOCK_CONN_GENERATING)
                conn_kill(c);
            return;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            return;
        } else if (errno != EINTR) {
            conn_kill(c);
            return;
        }
    }
}

int mock_conn_open(struct mock_server *srv, int fd)
{
    enum mock_fault fault = mock_fault_pick_connection(&srv->faults);
    if (fault == MOCK_FAULT_RESET) {
        /* Closing with a zero linger time aborts the connection: RST instead of FIN. */
        struct linger abort_now = {.l_onoff = 1, .l_linger = 0};
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort_now, sizeof abort_now);
        close(fd);
        srv->stats.connections++;
        return 0;
    }
    struct mock_conn *c = calloc(1, sizeof *c);
    if (!c) {
        close(fd);
        return -1;
    }
    c->watch.kind = MOCK_WATCH_CONN;
    c->srv = srv;
    c->fd = fd;
    c->epoll_events = EPOLLIN;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &c->watch};
    if (epoll_ctl(srv->epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        close(fd);
        free(c);
        return -1;
    }
    c->next = srv->conns;
    if (srv->conns)
        srv->conns->prev = c;
    srv->conns = c;
    srv->open_connections++;
    srv->stats.connections++;
    if (srv->open_connections > srv->stats.max_connections)
        srv->stats.max_connections = srv->open_connections;
    if (fault == MOCK_FAULT_REFUSE) {
        /* FIN at once, then read whatever the client sends until it closes: a plain close
         * would answer the request's bytes with RST, and the client would see a reset. */
        shutdown(fd, SHUT_WR);
        c->phase = MOCK_CONN_LINGER;
    }
    return 0;
}

static void conn_unhold(struct mock_conn *c)
{
    struct mock_conn **p = &c->srv->held;
    while (*p != NULL && *p != c)
        p = &(*p)->held_next;
    if (*p == c)
        *p = c->held_next;
    c->held_next = NULL;
    c->hold_until_ns = 0;
}

int64_t mock_conn_next_hold_ns(const struct mock_server *srv)
{
    int64_t due = INT64_MAX;
    for (const struct mock_conn *c = srv->held; c; c = c->held_next)
        if (c->hold_until_ns < due)
            due = c->hold_until_ns;
    return due;
}

void mock_conn_release_holds(struct mock_server *srv, int64_t now_ns)
{
    struct mock_conn *c = srv->held, *next;
    for (; c; c = next) {
        next = c->held_next;
        if (c->hold_until_ns <= now_ns) {
            conn_unhold(c);
            conn_defer(c); /* conn_advance sends the output and moves a finished response on */
        }
    }
}

static void conn_free(struct mock_conn *c)
{
    struct mock_server *srv = c->srv;
    if (c->hold_until_ns != 0)
        conn_unhold(c);
    /* May fire hooks for other connections; they only write or defer, never free. */
    mock_engine_cancel(&srv->engine, &c->stream, clock_now_ns());
    mock_openai_reply_free(&c->reply);
    close(c->fd);
    if (c->prev)
        c->prev->next = c->next;
    else
        srv->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    srv->open_connections--;
    mock_buf_free(&c->in);
    mock_buf_free(&c->out);
    free(c);
}

void mock_conn_on_events(struct mock_conn *c, uint32_t events)
{
    if (c->dead)
        return;
    if (events & EPOLLIN)
        conn_read(c);
    if (!c->dead && (events & EPOLLOUT))
        conn_flush(c);
    if (!c->dead && (events & (EPOLLERR | EPOLLHUP)))
        conn_kill(c);
    if (!c->dead)
        conn_advance(c);
}

void mock_conn_run_pending(struct mock_server *srv)
{
    while (srv->pending) {
        struct mock_conn *c = srv->pending;
        srv->pending = c->pending_next;
        c->pending = false;
        if (c->dead)
            conn_free(c);
        else
            conn_advance(c);
    }
}

void mock_conn_close_all(struct mock_server *srv)
{
    for (struct mock_conn *c = srv->conns; c; c = c->next)
        conn_kill(c);
    mock_conn_run_pending(srv);
}

/* The mid-stream faults, right after the tokens of the step that reached c->fault_token were
 * queued. */
static void conn_fault_mid_stream(struct mock_conn *c)
{
    struct mock_server *srv = c->srv;
    const struct mock_fault_config *cfg = &srv->faults.cfg;
    c->fault_done = true;
    int rc = 0;
    switch (c->fault) {
    case MOCK_FAULT_CLOSE:
        conn_flush(c); /* what the socket takes goes; then the connection is gone */
        conn_kill(c);
        return;
    case MOCK_FAULT_STALL:
        conn_flush(c);
        if (c->dead)
            return;
        c->hold_until_ns = clock_now_ns() + cfg->stall_ns;
        c->held_next = srv->held;
        srv->held = c;
        conn_sync_interest(c);
        return;
    case MOCK_FAULT_MALFORMED:
        rc = mock_openai_render_malformed(&c->reply, conn_scratch(c));
        break;
    case MOCK_FAULT_ERROR_EVENT:
        rc = mock_openai_render_error_event("injected fault (tokstorm-mock --fault error-event)",
                                            conn_scratch(c));
        break;
    case MOCK_FAULT_HUGE_EVENT:
        rc = mock_openai_render_huge(&c->reply, cfg->huge_event_bytes, clock_now_ns(),
                                     conn_scratch(c));
        break;
    default:
        return; /* split, no-finish, not-sse act elsewhere */
    }
    if (rc != 0)
        conn_kill(c);
    else
        conn_queue_event(c);
}

void mock_conn_on_tokens(void *ctx, struct mock_stream *s, int64_t n)
{
    struct mock_conn *c = conn_of_stream(s);
    (void)ctx;
    if (c->dead || !c->reply.stream)
        return;
    /* The stamp is taken as late as possible: right before the bytes go to the socket. The n
     * events of one step share it, as they share the write. */
    struct mock_openai_stamp stamp;
    int64_t send_ns = clock_now_ns();
    mock_openai_stamp_set(&stamp, send_ns);
    for (int64_t token = s->emitted_tokens - n + 1; token <= s->emitted_tokens; token++) {
        if (conn_queue_token(c, token, &stamp, send_ns) != 0) {
            conn_kill(c);
            return;
        }
    }
    c->srv->stats.tokens_sent += n;
    if (c->fault >= MOCK_FAULT_CLOSE && !c->fault_done && s->emitted_tokens >= c->fault_token) {
        conn_fault_mid_stream(c);
        if (c->dead)
            return;
    }
    /* With EPOLLOUT registered the socket is known full: the loop drains it when it can. */
    if (!(c->epoll_events & EPOLLOUT))
        conn_flush(c);
}

static void conn_end_stream(struct mock_conn *c)
{
    if (mock_dialect_is_native(c->reply.api)) {
        if (mock_dialect_render_end(&c->reply, clock_now_ns(), conn_scratch(c)) != 0)
            goto oom;
        if (mock_buf_len(&c->srv->scratch) > 0)
            conn_queue_event(c);
        if (c->chunked && mock_http_write_last_chunk(&c->out) != 0)
            goto oom;
        return;
    }
    if (mock_openai_render_finish(&c->reply, clock_now_ns(), conn_scratch(c)) != 0)
        goto oom;
    conn_queue_event(c);
    if (c->reply.include_usage) {
        if (mock_openai_render_usage(&c->reply, clock_now_ns(), conn_scratch(c)) != 0)
            goto oom;
        conn_queue_event(c);
    }
    if (mock_openai_render_done(conn_scratch(c)) != 0)
        goto oom;
    conn_queue_event(c);
    if (c->chunked && mock_http_write_last_chunk(&c->out) != 0)
        goto oom;
    return;
oom:
    conn_kill(c);
}

static void conn_send_full(struct mock_conn *c)
{
    struct mock_buf *body = conn_scratch(c);
    if (mock_openai_render_full(&c->reply, clock_now_ns(), body) != 0) {
        conn_kill(c);
        return;
    }
    conn_reply(c, 200, "application/json", mock_buf_head(body), mock_buf_len(body), NULL);
    c->srv->stats.tokens_sent += c->reply.max_tokens;
}

void mock_conn_on_finish(void *ctx, struct mock_stream *s)
{
    struct mock_server *srv = ctx;
    struct mock_conn *c = conn_of_stream(s);
    if (!c->dead && c->fault == MOCK_FAULT_NO_FINISH) {
        /* Every token is out; the end never comes. The connection stays open, read for the
         * client's hang-up (phase GENERATING), until the client gives up. */
        mock_openai_reply_free(&c->reply);
        return;
    }
    if (!c->dead) {
        if (c->reply.stream)
            conn_end_stream(c);
        else
            conn_send_full(c);
        srv->stats.generations++;
        srv->stats.requests++;
    }
    mock_openai_reply_free(&c->reply);
    if (c->dead)
        return;
    c->phase = c->keep_alive ? MOCK_CONN_READ_HEAD : MOCK_CONN_CLOSING;
    /* Sending and serving pipelined requests may submit to the engine: not from its hook. */
    conn_defer(c);
}
