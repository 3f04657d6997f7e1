/* mock_http.c: parses HTTP/1.x request heads and frames responses (status line, headers,
 * chunks). Bytes in, struct out; bytes out into a mock_buf. It knows nothing of sockets,
 * routes, JSON or the timing model. */
#include "mock_http.h"

#include <string.h>
#include <strings.h>

/* A byte range inside the request head; never NUL-terminated. */
struct span {
    const char *p;
    size_t n;
};

static bool span_ieq(struct span s, const char *lit)
{
    size_t n = strlen(lit);
    return s.n == n && strncasecmp(s.p, lit, n) == 0;
}

static struct span span_trim(struct span s)
{
    while (s.n > 0 && (s.p[0] == ' ' || s.p[0] == '\t')) {
        s.p++;
        s.n--;
    }
    while (s.n > 0 && (s.p[s.n - 1] == ' ' || s.p[s.n - 1] == '\t'))
        s.n--;
    return s;
}

/* RFC 9110 token characters: what a method or header name may contain. */
static bool is_tchar(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return true;
    return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* Whether a comma-separated header value (Connection) lists the token lit. */
static bool list_has_token(struct span value, const char *lit)
{
    while (value.n > 0) {
        const char *comma = memchr(value.p, ',', value.n);
        size_t n = comma ? (size_t)(comma - value.p) : value.n;
        if (span_ieq(span_trim((struct span){value.p, n}), lit))
            return true;
        if (!comma)
            break;
        value.p += n + 1;
        value.n -= n + 1;
    }
    return false;
}

/* Parses a Content-Length value; repeated headers must agree (RFC 9112 section 6.3). */
static int parse_content_length(struct span v, int64_t *out, bool *seen)
{
    if (v.n == 0 || v.n > 18)
        return v.n == 0 ? -400 : -413;
    int64_t n = 0;
    for (size_t i = 0; i < v.n; i++) {
        if (v.p[i] < '0' || v.p[i] > '9')
            return -400;
        n = n * 10 + (v.p[i] - '0');
    }
    if (*seen && n != *out)
        return -400;
    *seen = true;
    *out = n;
    return 0;
}

static int parse_request_line(struct span line, struct mock_http_request *req)
{
    const char *sp1 = memchr(line.p, ' ', line.n);
    if (!sp1 || sp1 == line.p)
        return -400;
    struct span method = {line.p, (size_t)(sp1 - line.p)};
    for (size_t i = 0; i < method.n; i++)
        if (!is_tchar((unsigned char)method.p[i]))
            return -400;
    const char *rest = sp1 + 1;
    size_t rest_n = line.n - method.n - 1;
    const char *sp2 = memchr(rest, ' ', rest_n);
    if (!sp2 || sp2 == rest)
        return -400;
    struct span target = {rest, (size_t)(sp2 - rest)};
    struct span version = {sp2 + 1, rest_n - target.n - 1};

    if (version.n != 8 || memcmp(version.p, "HTTP/1.", 7) != 0) {
        if (version.n >= 5 && memcmp(version.p, "HTTP/", 5) == 0)
            return -505;
        return -400;
    }
    if (version.p[7] == '0')
        req->minor_version = 0;
    else if (version.p[7] == '1')
        req->minor_version = 1;
    else
        return -505;

    if (method.n == 3 && memcmp(method.p, "GET", 3) == 0)
        req->method = MOCK_HTTP_GET;
    else if (method.n == 4 && memcmp(method.p, "POST", 4) == 0)
        req->method = MOCK_HTTP_POST;
    else
        req->method = MOCK_HTTP_OTHER;

    for (size_t i = 0; i < target.n; i++)
        if ((unsigned char)target.p[i] <= ' ' || target.p[i] == 0x7f)
            return -400;
    const char *query = memchr(target.p, '?', target.n);
    size_t path_n = query ? (size_t)(query - target.p) : target.n;
    /* A path too long for any route is kept as "" so it answers 404, not an error. */
    if (path_n < sizeof req->path) {
        memcpy(req->path, target.p, path_n);
        req->path[path_n] = '\0';
    } else {
        req->path[0] = '\0';
    }
    return 0;
}

int mock_http_parse_head(const char *data, size_t len, size_t *scanned_bytes,
                         struct mock_http_request *req)
{
    /* Back up three bytes so a CRLFCRLF split across two reads is still found. */
    size_t from = *scanned_bytes > 3 ? *scanned_bytes - 3 : 0;
    size_t limit = len < MOCK_HTTP_MAX_HEAD_BYTES ? len : MOCK_HTTP_MAX_HEAD_BYTES;
    const char *end = NULL;
    if (limit > from)
        end = memmem(data + from, limit - from, "\r\n\r\n", 4);
    if (!end) {
        *scanned_bytes = limit;
        return len >= MOCK_HTTP_MAX_HEAD_BYTES ? -431 : 0;
    }
    size_t head_n = (size_t)(end - data) + 4;
    *scanned_bytes = head_n;

    memset(req, 0, sizeof *req);
    req->head_bytes = head_n;
    const char *p = data;
    const char *stop = data + head_n - 2; /* the final CRLF ends the header block */
    const char *eol = memmem(p, (size_t)(stop - p), "\r\n", 2);
    int rc = parse_request_line((struct span){p, (size_t)(eol - p)}, req);
    if (rc != 0)
        return rc;

    bool close_seen = false, keep_alive_seen = false, length_seen = false;
    for (p = eol + 2; p < stop; p = eol + 2) {
        eol = memmem(p, (size_t)(stop - p), "\r\n", 2);
        struct span line = {p, (size_t)(eol - p)};
        const char *colon = memchr(line.p, ':', line.n);
        /* Obsolete line folding starts with whitespace and is rejected (RFC 9112 5.2). */
        if (!colon || colon == line.p)
            return -400;
        struct span name = {line.p, (size_t)(colon - line.p)};
        for (size_t i = 0; i < name.n; i++)
            if (!is_tchar((unsigned char)name.p[i]))
                return -400;
        struct span value = span_trim((struct span){colon + 1, line.n - name.n - 1});

        if (span_ieq(name, "content-length")) {
            rc = parse_content_length(value, &req->body_bytes, &length_seen);
            if (rc != 0)
                return rc;
        } else if (span_ieq(name, "transfer-encoding")) {
            return -411;
        } else if (span_ieq(name, "connection")) {
            close_seen |= list_has_token(value, "close");
            keep_alive_seen |= list_has_token(value, "keep-alive");
        } else if (span_ieq(name, "expect")) {
            req->expect_continue = span_ieq(value, "100-continue");
        } else if (span_ieq(name, "authorization")) {
            req->authorization_at = (size_t)(value.p - data);
            req->authorization_bytes = value.n;
        }
    }
    if (req->body_bytes > MOCK_HTTP_MAX_BODY_BYTES)
        return -413;
    req->keep_alive = req->minor_version == 1 ? !close_seen : keep_alive_seen && !close_seen;
    return 1;
}

const char *mock_http_reason(int status)
{
    switch (status) {
    case 100:
        return "Continue";
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 411:
        return "Length Required";
    case 413:
        return "Content Too Large";
    case 429:
        return "Too Many Requests";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    case 505:
        return "HTTP Version Not Supported";
    default:
        return "Unknown";
    }
}

int mock_http_write_head(struct mock_buf *out, int status, const char *content_type,
                         enum mock_http_framing framing, int64_t body_bytes, bool keep_alive,
                         const char *extra_headers)
{
    int rc = 0;
    rc |= mock_buf_append_str(out, "HTTP/1.1 ");
    rc |= mock_buf_append_i64(out, status);
    rc |= mock_buf_append_str(out, " ");
    rc |= mock_buf_append_str(out, mock_http_reason(status));
    rc |= mock_buf_append_str(out, "\r\nServer: tokstorm-mock\r\n");
    if (content_type) {
        rc |= mock_buf_append_str(out, "Content-Type: ");
        rc |= mock_buf_append_str(out, content_type);
        rc |= mock_buf_append_str(out, "\r\n");
    }
    switch (framing) {
    case MOCK_HTTP_LENGTH:
        rc |= mock_buf_append_str(out, "Content-Length: ");
        rc |= mock_buf_append_i64(out, body_bytes);
        rc |= mock_buf_append_str(out, "\r\n");
        break;
    case MOCK_HTTP_CHUNKED:
        rc |= mock_buf_append_str(out, "Transfer-Encoding: chunked\r\n");
        break;
    case MOCK_HTTP_UNTIL_CLOSE:
        break;
    }
    /* Always explicit: HTTP/1.0 clients need "keep-alive" spelled out, and "close" tells any
     * client not to reuse the connection. */
    rc |= mock_buf_append_str(out,
                              keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n");
    if (extra_headers)
        rc |= mock_buf_append_str(out, extra_headers);
    rc |= mock_buf_append_str(out, "\r\n");
    return rc ? -1 : 0;
}

int mock_http_write_chunk_start(struct mock_buf *out, size_t n)
{
    int rc = 0;
    rc |= mock_buf_append_hex(out, n);
    rc |= mock_buf_append(out, "\r\n", 2);
    return rc ? -1 : 0;
}

int mock_http_write_chunk_end(struct mock_buf *out)
{
    return mock_buf_append(out, "\r\n", 2);
}

int mock_http_write_chunk(struct mock_buf *out, const void *bytes, size_t n)
{
    int rc = 0;
    rc |= mock_http_write_chunk_start(out, n);
    rc |= mock_buf_append(out, bytes, n);
    rc |= mock_http_write_chunk_end(out);
    return rc ? -1 : 0;
}

int mock_http_write_last_chunk(struct mock_buf *out)
{
    return mock_buf_append_str(out, "0\r\n\r\n");
}

int mock_http_write_continue(struct mock_buf *out)
{
    return mock_buf_append_str(out, "HTTP/1.1 100 Continue\r\n\r\n");
}
