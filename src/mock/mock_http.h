/* mock_http.h: HTTP/1.1 request-head parsing and response framing for the mock server.
 * The parser takes bytes and fills a struct; the writers append to a mock_buf. No sockets,
 * no JSON, no clocks. */
#ifndef TOKSTORM_MOCK_HTTP_H
#define TOKSTORM_MOCK_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mock_buf.h"

#define MOCK_HTTP_MAX_HEAD_BYTES (64 * 1024)        /* request line + headers; else 431 */
#define MOCK_HTTP_MAX_BODY_BYTES (16 * 1024 * 1024) /* Content-Length; else 413 */
#define MOCK_HTTP_MAX_PATH_BYTES 256                /* longer paths match no route: 404 */

enum mock_http_method {
    MOCK_HTTP_GET,
    MOCK_HTTP_POST,
    MOCK_HTTP_OTHER, /* any other token: routes answer 405 */
};

struct mock_http_request {
    enum mock_http_method method;
    char path[MOCK_HTTP_MAX_PATH_BYTES]; /* target without query; "" when too long */
    int minor_version;                   /* HTTP/1.<minor_version>: 0 or 1 */
    bool keep_alive;                     /* the connection may serve another request */
    bool expect_continue;                /* "Expect: 100-continue" was sent */
    int64_t body_bytes;                  /* Content-Length, 0 when absent */
    size_t head_bytes;                   /* request line + headers + blank line */
    size_t authorization_at;             /* the Authorization value: offset in the head */
    size_t authorization_bytes;          /* and length; 0 when absent */
};

/* Parses the request head at the start of data[0, len). *scanned_bytes carries how far an
 * earlier call already looked for the blank line (start it at 0 for each request), so a head
 * that arrives a byte at a time is scanned once.
 * Returns 1 when the head is complete and *req is filled; 0 when more bytes are needed;
 * otherwise the negated HTTP status to answer before closing: -400 (malformed), -411
 * (Transfer-Encoding on a request: not supported), -413 (body over MOCK_HTTP_MAX_BODY_BYTES),
 * -431 (head over MOCK_HTTP_MAX_HEAD_BYTES), -505 (not HTTP/1.0 or HTTP/1.1). */
int mock_http_parse_head(const char *data, size_t len, size_t *scanned_bytes,
                         struct mock_http_request *req);

/* How the body of a response is delimited. */
enum mock_http_framing {
    MOCK_HTTP_LENGTH,      /* Content-Length: body_bytes */
    MOCK_HTTP_CHUNKED,     /* Transfer-Encoding: chunked (HTTP/1.1 clients) */
    MOCK_HTTP_UNTIL_CLOSE, /* no length; the body ends when the server closes (HTTP/1.0) */
};

/* Appends a status line and headers. extra_headers is NULL or complete "Name: v\r\n" lines.
 * Every writer returns 0 or -1 (out of memory). */
int mock_http_write_head(struct mock_buf *out, int status, const char *content_type,
                         enum mock_http_framing framing, int64_t body_bytes, bool keep_alive,
                         const char *extra_headers);

/* Appends one chunk of a chunked body (n > 0). */
int mock_http_write_chunk(struct mock_buf *out, const void *bytes, size_t n);

/* The same chunk in two halves, for n > 0 bytes the caller renders straight into out between
 * them: the size line, then (after the n bytes) the closing CRLF. */
int mock_http_write_chunk_start(struct mock_buf *out, size_t n);
int mock_http_write_chunk_end(struct mock_buf *out);

/* Appends the terminating zero-length chunk. */
int mock_http_write_last_chunk(struct mock_buf *out);

/* Appends the interim "100 Continue" response. */
int mock_http_write_continue(struct mock_buf *out);

const char *mock_http_reason(int status);

#endif
