/* mock_buf.h: a growable byte buffer with a consumed prefix, used for each connection's input
 * and output and for rendering scratch. It knows nothing of sockets, HTTP or JSON. */
#ifndef TOKSTORM_MOCK_BUF_H
#define TOKSTORM_MOCK_BUF_H

#include <stddef.h>
#include <stdint.h>

/* Bytes [start, end) of data are live; [0, start) were consumed and are reclaimed lazily.
 * A zeroed struct is a valid empty buffer that owns no memory. */
struct mock_buf {
    char *data;
    size_t start; /* first unconsumed byte */
    size_t end;   /* one past the last byte */
    size_t cap;   /* bytes allocated */
};

static inline size_t mock_buf_len(const struct mock_buf *b)
{
    return b->end - b->start;
}

static inline char *mock_buf_head(const struct mock_buf *b)
{
    return b->data + b->start;
}

/* Makes room for at least extra_bytes after end, growing by doubling. Returns 0, or -1 when
 * memory runs out (the buffer is then unchanged). */
int mock_buf_reserve(struct mock_buf *b, size_t extra_bytes);

/* Appends; each returns 0 or -1 (out of memory, buffer unchanged). */
int mock_buf_append(struct mock_buf *b, const void *bytes, size_t n);
int mock_buf_append_str(struct mock_buf *b, const char *s);
int mock_buf_append_i64(struct mock_buf *b, int64_t v);
int mock_buf_append_hex(struct mock_buf *b, uint64_t v);

/* Marks the first n live bytes consumed (n <= mock_buf_len). */
void mock_buf_consume(struct mock_buf *b, size_t n);

/* Drops all live bytes; keeps the allocation unless it exceeds keep_cap bytes, so that one
 * huge response does not pin memory for the life of a keep-alive connection. */
void mock_buf_reset(struct mock_buf *b, size_t keep_cap);

void mock_buf_free(struct mock_buf *b);

#endif
