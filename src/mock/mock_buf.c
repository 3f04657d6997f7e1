/* mock_buf.c: the growable byte buffer behind every connection and render. It knows nothing
 * of sockets, HTTP or JSON; it only moves bytes and formats integers. */
#include "mock_buf.h"

#include <stdlib.h>
#include <string.h>

#define MOCK_BUF_MIN_CAP 512

int mock_buf_reserve(struct mock_buf *b, size_t extra_bytes)
{
    if (b->cap - b->end >= extra_bytes)
        return 0;
    size_t len = mock_buf_len(b);
    /* Sliding the live bytes down is cheaper than growing when most of the buffer is a
     * consumed prefix, which is the usual state of an input buffer after a request. */
    if (b->start > 0 && b->cap - len >= extra_bytes) {
        memmove(b->data, b->data + b->start, len);
        b->start = 0;
        b->end = len;
        return 0;
    }
    if (extra_bytes > SIZE_MAX / 2 - len)
        return -1;
    size_t need = len + extra_bytes;
    size_t cap = b->cap ? b->cap : MOCK_BUF_MIN_CAP;
    while (cap < need)
        cap *= 2;
    char *data = malloc(cap);
    if (data == NULL)
        return -1;
    if (len > 0)
        memcpy(data, b->data + b->start, len);
    free(b->data);
    b->data = data;
    b->start = 0;
    b->end = len;
    b->cap = cap;
    return 0;
}

int mock_buf_append(struct mock_buf *b, const void *bytes, size_t n)
{
    if (n == 0)
        return 0;
    if (mock_buf_reserve(b, n) != 0)
        return -1;
    memcpy(b->data + b->end, bytes, n);
    b->end += n;
    return 0;
}

int mock_buf_append_str(struct mock_buf *b, const char *s)
{
    return mock_buf_append(b, s, strlen(s));
}

int mock_buf_append_i64(struct mock_buf *b, int64_t v)
{
    char digits[24];
    size_t i = sizeof digits;
    /* Work on the magnitude as unsigned so that INT64_MIN does not overflow. */
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        digits[--i] = (char)('0' + mag % 10);
        mag /= 10;
    } while (mag > 0);
    if (v < 0)
        digits[--i] = '-';
    return mock_buf_append(b, digits + i, sizeof digits - i);
}

int mock_buf_append_hex(struct mock_buf *b, uint64_t v)
{
    static const char hex[] = "0123456789abcdef";
    char digits[16];
    size_t i = sizeof digits;
    do {
        digits[--i] = hex[v & 0xf];
        v >>= 4;
    } while (v > 0);
    return mock_buf_append(b, digits + i, sizeof digits - i);
}

void mock_buf_consume(struct mock_buf *b, size_t n)
{
    b->start += n;
    if (b->start >= b->end)
        b->start = b->end = 0;
}

void mock_buf_reset(struct mock_buf *b, size_t keep_cap)
{
    b->start = b->end = 0;
    if (b->cap > keep_cap) {
        free(b->data);
        b->data = NULL;
        b->cap = 0;
    }
}

void mock_buf_free(struct mock_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->start = b->end = b->cap = 0;
}
