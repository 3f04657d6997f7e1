/* api_memo.c: reads a stream's token events fast by comparing each with the stream's last one
 * (api.h, struct ts_api_memo). The memo is made only from an event the scanner (api_scan.c)
 * read in full, and an event is read from it only when it is that event with another valid
 * JSON string in the token's place and, where the memo has a send stamp after the token,
 * another plain integer there: the same JSON text but for those two values, so the reading
 * is the memo's but for those two values. Whatever is not sure is parsed. */
#include "tokstorm/api.h"

#include <string.h>

#include "tokstorm/api_internal.h"

/* The longest stamp read here: 19 digits fit a uint64_t (as in api_scan.c's reading). */
enum { STAMP_MAX_DIGITS = 19 };

void api_memo_reset(struct ts_api_memo *m)
{
    m->len = 0;
}

static int is_hex(char c)
{
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

/* Length of the JSON string body at p (up to its closing quote, not included), or -1 when it
 * is not one the scanner would take as it is: a raw control byte, a bad escape, or a \u escape
 * of a surrogate (whose pairing rules the scanner checks) all send the event to the parser. */
static long string_body(const char *p, const char *end)
{
    const char *q = p;
    while (q < end) {
        unsigned char c = (unsigned char)*q;
        if (c == '"')
            return q - p;
        if (c < 0x20)
            return -1;
        if (c != '\\') {
            q++;
            continue;
        }
        if (end - q < 2)
            return -1;
        switch (q[1]) {
        case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
            q += 2;
            break;
        case 'u':
            if (end - q < 6 || !is_hex(q[2]) || !is_hex(q[3]) || !is_hex(q[4]) || !is_hex(q[5]))
                return -1;
            if ((q[2] | 0x20) == 'd' && q[3] >= '8') /* D800..DFFF */
                return -1;
            q += 6;
            break;
        default:
            return -1;
        }
    }
    return -1;
}

/* The stamp as api_scan.c reads a plain integer of at most 19 digits, or -1 when the digits
 * are not one (a leading zero, which cJSON reads and the scanner leaves to it). */
static int64_t stamp_value(const char *p, size_t n)
{
    if (n == 0 || n > STAMP_MAX_DIGITS || (p[0] == '0' && n > 1))
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v * 10 + (uint64_t)(p[i] - '0');
    double d = (double)v;
    return d < 9223372036854775808.0 ? (int64_t)d : 0;
}

/* Reads data from the memo; returns 0 with *out filled, or -1 when it cannot. */
static int read_from_memo(const struct ts_api_memo *m, const char *data, size_t len,
                          struct ts_api_chunk *out)
{
    const size_t prefix = m->value_start;
    if (len < prefix + 1 || memcmp(data, m->data, prefix) != 0)
        return -1;
    long n = string_body(data + prefix, data + len);
    if (n < 0)
        return -1;
    size_t at = prefix + (size_t)n, m_at = m->value_end; /* both at the closing quote */
    int64_t stamp = m->chunk.server_send_ns;
    if (m->stamp_end > 0) {
        size_t before = m->stamp_start - m_at; /* from the quote to the stamp's digits */
        if (len - at < before || memcmp(data + at, m->data + m_at, before) != 0)
            return -1;
        at += before;
        size_t digits = 0;
        while (at + digits < len && data[at + digits] >= '0' && data[at + digits] <= '9')
            digits++;
        stamp = stamp_value(data + at, digits);
        if (stamp < 0)
            return -1;
        at += digits;
        m_at = m->stamp_end;
    }
    if (len - at != m->len - m_at || memcmp(data + at, m->data + m_at, len - at) != 0)
        return -1;
    memcpy(out, &m->chunk, sizeof *out); /* padding too: the same bytes as a parse */
    out->server_send_ns = stamp;
    /* Empty, or "\u0000..." (which cJSON reads as ""), is no token: as api_scan.c counts. */
    int piece = n > 0 && !(n >= 6 && memcmp(data + prefix, "\\u0000", 6) == 0);
    if (m->chunk.content_pieces)
        out->content_pieces = piece;
    else
        out->reasoning_pieces = piece;
    return 0;
}

/* Keeps data as the memo when the scanner read it as one token and nothing else of note. */
static void remember(struct ts_api_memo *m, const char *data, size_t len,
                     const struct ts_api_chunk *c, const struct ts_api_scan_where *w)
{
    m->len = 0;
    if (len > sizeof m->data || c->error || c->content_pieces + c->reasoning_pieces != 1 ||
        w->value_end < w->value_start || w->value_start == 0)
        return;
    m->stamp_start = m->stamp_end = 0;
    if (w->stamp_end > 0) {
        /* A stamp before the token would differ in what is compared as it is. */
        if (w->stamp_start <= w->value_end)
            return;
        for (size_t i = w->stamp_start; i < w->stamp_end; i++)
            if (data[i] < '0' || data[i] > '9')
                return;
        if (stamp_value(data + w->stamp_start, w->stamp_end - w->stamp_start) != c->server_send_ns)
            return;
        m->stamp_start = w->stamp_start;
        m->stamp_end = w->stamp_end;
    }
    memcpy(m->data, data, len);
    m->len = len;
    m->value_start = w->value_start;
    m->value_end = w->value_end;
    memcpy(&m->chunk, c, sizeof m->chunk); /* padding too, as read_from_memo hands it out */
}

int api_parse_event_memo(enum ts_api_kind kind, const char *data, size_t len,
                         struct ts_api_memo *memo, struct ts_api_chunk *out)
{
    /* The memo and the scanner know only the OpenAI chunks. */
    if (data == NULL || len == 0 || (kind != TS_API_CHAT && kind != TS_API_COMPLETIONS))
        return api_parse_event(kind, data, len, out);
    if (memo->len > 0 && read_from_memo(memo, data, len, out) == 0)
        return 0;
    struct ts_api_scan_where where;
    if (api_scan_event_at(kind, data, len, out, &where) == 0) {
        remember(memo, data, len, out, &where);
        return 0;
    }
    /* The scan declined: cJSON decides, as api_parse_event would after the same scan. */
    memo->len = 0;
    return api_parse_event_cjson(kind, data, len, out);
}
