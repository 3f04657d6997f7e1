/* api_scan.c: reads one streamed OpenAI chunk with no allocation: jsmn tokenizes it in place and
 * one walk checks the tokens spell JSON that cJSON accepts while noting the members that matter.
 * It knows nothing of SSE, curl or clocks; what it is unsure of, it declines and cJSON decides. */
#include "tokstorm/api_internal.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

/* Header-only: static keeps jsmn's functions out of the library's symbols; parent links make
 * each ',' and closing bracket O(1) where plain jsmn searches back through the tokens. */
#define JSMN_STATIC
#define JSMN_PARENT_LINKS
#include <jsmn.h>

/* A typical chunk is 20 to 40 tokens; usage with details or a few logprobs stays well below the
 * cap, and anything larger (long logprobs lists) goes to cJSON. Depth 32 is far beyond any
 * chunk and far below cJSON's own limit (1000), so a depth both accept reads the same. */
enum { SCAN_MAX_TOKENS = 256, SCAN_MAX_DEPTH = 32 };

/* A plain integer of at most 15 digits converts to a double exactly, so reading it directly
 * gives what cJSON's strtod would. Longer numbers are still valid JSON (cJSON reads up to 63
 * bytes of one), just not read here. */
enum { SCAN_EXACT_DIGITS = 15, SCAN_MAX_NUMBER_BYTES = 63 };

/* Where an object or array sits in the chunk decides which of its members are noted. */
enum scan_role {
    ROLE_NONE,    /* nothing in it matters (ids, logprobs, duplicates) */
    ROLE_ROOT,    /* the event's object */
    ROLE_CHOICES, /* the first root "choices" */
    ROLE_CHOICE,  /* an object in it */
    ROLE_DELTA,   /* a choice's first "delta" or first "message" */
    ROLE_USAGE,   /* the first root "usage" */
    ROLE_ERROR,   /* the first root "error" */
};

/* Members are noted as the token of their value, -1 when absent; only the first member of each
 * name counts, as cJSON_GetObjectItemCaseSensitive finds it. */
struct delta_notes {
    int content, reasoning_content, reasoning;
};

struct choice_notes {
    int delta, message, text, finish_reason;
    struct delta_notes in_delta, in_message;
};

struct scan {
    const char *js;
    int len;
    int ntok;
    enum ts_api_kind kind;
    int has_backslash; /* some string in the data has an escape */
    int backslash;     /* the next backslash at or after the last name checked (or len) */
    int choices, usage, error, object, message, type; /* the root's members */
    int send_ns;                                      /* the root's "tokstorm_send_ns" */
    int error_message, error_type;                    /* the root error object's */
    int completion_tokens, prompt_tokens;             /* the root usage object's */
    int content_pieces, reasoning_pieces, finished;   /* counted over the choices */
    int counted;                                      /* the string counted last, or -1 */
    jsmntok_t tok[SCAN_MAX_TOKENS];
};

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* True when js[from, to) is whitespace around exactly one punct, or only whitespace when punct is
 * 0. jsmn does not check what lies between tokens ({"a" "b"} and [1,,2] tokenize), so this is
 * what makes the tokens a JSON text. */
static int gap_is_spaced(const char *js, int from, int to, char punct)
{
    if (from > to)
        return 0;
    while (from < to && is_space(js[from]))
        from++;
    if (punct != 0) {
        if (from == to || js[from] != punct)
            return 0;
        from++;
        while (from < to && is_space(js[from]))
            from++;
    }
    return from == to;
}

/* Compact JSON, what servers send, has no whitespace: one byte or none between tokens. */
static inline int gap_is(const char *js, int from, int to, char punct)
{
    if (punct != 0 ? to - from == 1 && js[from] == punct : from == to)
        return 1;
    return gap_is_spaced(js, from, to, punct);
}

/* The JSON number grammar. cJSON also takes forms like "1." or "01"; those are left to it. */
static int is_json_number(const char *p, int n)
{
    int i = 0;
    if (n > SCAN_MAX_NUMBER_BYTES)
        return 0;
    if (i < n && p[i] == '-')
        i++;
    if (i < n && p[i] == '0') {
        i++;
    } else if (i < n && p[i] >= '1' && p[i] <= '9') {
        while (i < n && is_digit(p[i]))
            i++;
    } else {
        return 0;
    }
    if (i < n && p[i] == '.') {
        i++;
        if (i == n || !is_digit(p[i]))
            return 0;
        while (i < n && is_digit(p[i]))
            i++;
    }
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        i++;
        if (i < n && (p[i] == '+' || p[i] == '-'))
            i++;
        if (i == n || !is_digit(p[i]))
            return 0;
        while (i < n && is_digit(p[i]))
            i++;
    }
    return i == n;
}

/* jsmn takes any run of printable bytes as a primitive; JSON has three words and numbers. */
static int is_json_primitive(const char *p, int n)
{
    switch (p[0]) {
    case 'n':
        return n == 4 && memcmp(p, "null", 4) == 0;
    case 't':
        return n == 4 && memcmp(p, "true", 4) == 0;
    case 'f':
        return n == 5 && memcmp(p, "false", 5) == 0;
    }
    return is_json_number(p, n);
}

static int next_backslash(const struct scan *s, int from)
{
    const char *p = memchr(s->js + from, '\\', (size_t)(s->len - from));
    return p != NULL ? (int)(p - s->js) : s->len;
}

static int is_type(const struct scan *s, int t, jsmntype_t type)
{
    return t >= 0 && s->tok[t].type == type;
}

/* With a literal, the compiler compares in a few word loads rather than calling memcmp. */
#define STRING_IS(s, t, literal)                                                                   \
    ((s)->tok[t].end - (s)->tok[t].start == (int)sizeof(literal) - 1 &&                            \
     memcmp((s)->js + (s)->tok[t].start, literal, sizeof(literal) - 1) == 0)

/* Notes value in *member if it is the first of its name there; returns whether it was. */
static int keep_first(int *member, int value)
{
    if (*member >= 0)
        return 0;
    *member = value;
    return 1;
}

/* cJSON's string ends at the first NUL it decodes; the data holds no raw NUL (jsmn stops at
 * one), so only a leading \u0000 makes a non-empty JSON string read as "". */
static int is_non_empty_string(const struct scan *s, int t)
{
    if (!is_type(s, t, JSMN_STRING))
        return 0;
    const char *p = s->js + s->tok[t].start;
    int n = s->tok[t].end - s->tok[t].start;
    return n > 0 && !(n >= 6 && memcmp(p, "\\u0000", 6) == 0);
}

/* Notes member key (of an object playing role) where the reading will look for it, and returns
 * the role of its value. *child_delta is where a delta's members go. */
static enum scan_role note_member(struct scan *s, enum scan_role role, int key,
                                  struct choice_notes *choice, struct delta_notes *delta,
                                  struct delta_notes **child_delta)
{
    int value = key + 1;
    switch (role) {
    case ROLE_ROOT:
        if (STRING_IS(s, key, "choices"))
            return keep_first(&s->choices, value) ? ROLE_CHOICES : ROLE_NONE;
        if (STRING_IS(s, key, "usage"))
            return keep_first(&s->usage, value) ? ROLE_USAGE : ROLE_NONE;
        if (STRING_IS(s, key, "error"))
            return keep_first(&s->error, value) ? ROLE_ERROR : ROLE_NONE;
        /* An older vLLM error is the root itself: {"object": "error", "message": ...}. */
        if (STRING_IS(s, key, "object"))
            keep_first(&s->object, value);
        else if (STRING_IS(s, key, "message"))
            keep_first(&s->message, value);
        else if (STRING_IS(s, key, "type"))
            keep_first(&s->type, value);
        else if (STRING_IS(s, key, "tokstorm_send_ns"))
            keep_first(&s->send_ns, value);
        return ROLE_NONE;
    case ROLE_CHOICE:
        /* "message" is where a non-streamed response puts what a chunk puts in "delta"; which
         * one counts is known once the choice is read. */
        if (STRING_IS(s, key, "delta") && keep_first(&choice->delta, value)) {
            *child_delta = &choice->in_delta;
            return ROLE_DELTA;
        }
        if (STRING_IS(s, key, "message") && keep_first(&choice->message, value)) {
            *child_delta = &choice->in_message;
            return ROLE_DELTA;
        }
        if (STRING_IS(s, key, "finish_reason"))
            keep_first(&choice->finish_reason, value);
        else if (STRING_IS(s, key, "text"))
            keep_first(&choice->text, value);
        return ROLE_NONE;
    case ROLE_DELTA:
        if (STRING_IS(s, key, "content"))
            keep_first(&delta->content, value);
        else if (STRING_IS(s, key, "reasoning_content"))
            keep_first(&delta->reasoning_content, value);
        else if (STRING_IS(s, key, "reasoning"))
            keep_first(&delta->reasoning, value);
        return ROLE_NONE;
    case ROLE_USAGE:
        if (STRING_IS(s, key, "completion_tokens"))
            keep_first(&s->completion_tokens, value);
        else if (STRING_IS(s, key, "prompt_tokens"))
            keep_first(&s->prompt_tokens, value);
        return ROLE_NONE;
    case ROLE_ERROR:
        if (STRING_IS(s, key, "message"))
            keep_first(&s->error_message, value);
        else if (STRING_IS(s, key, "type"))
            keep_first(&s->error_type, value);
        return ROLE_NONE;
    case ROLE_NONE:
    case ROLE_CHOICES:
        break;
    }
    return ROLE_NONE;
}

/* One choice object, read once all of it is: what api_openai.c's read_choices makes of it. */
static void count_choice(struct scan *s, const struct choice_notes *c)
{
    if (s->kind == TS_API_CHAT) {
        const struct delta_notes *d = is_type(s, c->delta, JSMN_OBJECT)     ? &c->in_delta
                                      : is_type(s, c->message, JSMN_OBJECT) ? &c->in_message
                                                                            : NULL;
        if (d != NULL && is_non_empty_string(s, d->content)) {
            s->content_pieces++;
            s->counted = d->content;
        }
        /* vLLM and SGLang name it reasoning_content; newer vLLM renamed it reasoning. */
        if (d != NULL && is_non_empty_string(s, d->reasoning_content)) {
            s->reasoning_pieces++;
            s->counted = d->reasoning_content;
        } else if (d != NULL && is_non_empty_string(s, d->reasoning)) {
            s->reasoning_pieces++;
            s->counted = d->reasoning;
        }
    } else if (s->kind == TS_API_COMPLETIONS) {
        if (is_non_empty_string(s, c->text)) {
            s->content_pieces++;
            s->counted = c->text;
        }
    }
    if (is_type(s, c->finish_reason, JSMN_STRING))
        s->finished = 1;
}

/* Checks container t (an object or array token) and everything inside it, noting on the way the
 * members that role says matter. Returns the index after its subtree, or -1 when the bytes are
 * not JSON. Scalars are checked in the loop: they are most tokens, and a call each would cost
 * more than the check. jsmn's string tokens leave the quotes out, hence the -1 and +1 around
 * them. */
static int walk(struct scan *s, int t, int depth, enum scan_role role, struct delta_notes *delta)
{
    const char *js = s->js;
    const jsmntok_t *tok = s->tok;
    const int ntok = s->ntok;
    const int is_object = tok[t].type == JSMN_OBJECT;
    const int end = tok[t].end;
    if (depth >= SCAN_MAX_DEPTH || js[tok[t].start] != (is_object ? '{' : '[') ||
        js[end - 1] != (is_object ? '}' : ']'))
        return -1;
    /* Roles that name members mean nothing for an array, nor a choice list for an object. */
    if (is_object == (role == ROLE_CHOICES))
        role = ROLE_NONE;
    struct choice_notes choice = {-1, -1, -1, -1, {-1, -1, -1}, {-1, -1, -1}};
    int pos = tok[t].start + 1;
    char sep = 0;
    int i = t + 1;
    while (i < ntok && tok[i].start < end) {
        enum scan_role child = role == ROLE_CHOICES ? ROLE_CHOICE : ROLE_NONE;
        struct delta_notes *child_delta = NULL;
        if (is_object) {
            if (tok[i].type != JSMN_STRING || !gap_is(js, pos, tok[i].start - 1, sep))
                return -1;
            /* Member names are compared as raw bytes; an escaped one could still name
             * "content" once decoded, so it is cJSON's to read. Names come in document order,
             * so one pass of memchr over the data serves them all. */
            if (s->backslash < tok[i].end) {
                while (s->backslash < tok[i].start)
                    s->backslash = next_backslash(s, s->backslash + 1);
                if (s->backslash < tok[i].end)
                    return -1;
            }
            if (role != ROLE_NONE)
                child = note_member(s, role, i, &choice, delta, &child_delta);
            pos = tok[i].end + 1;
            sep = ':';
            if (++i >= ntok || tok[i].start >= end)
                return -1;
        }
        const jsmntype_t type = tok[i].type;
        if (type == JSMN_STRING) {
            if (!gap_is(js, pos, tok[i].start - 1, sep))
                return -1;
            pos = tok[i].end + 1;
            i++;
        } else if (type == JSMN_PRIMITIVE) {
            if (!gap_is(js, pos, tok[i].start, sep) ||
                !is_json_primitive(js + tok[i].start, tok[i].end - tok[i].start))
                return -1;
            pos = tok[i].end;
            i++;
        } else {
            if (!gap_is(js, pos, tok[i].start, sep))
                return -1;
            pos = tok[i].end;
            i = walk(s, i, depth + 1, child, child_delta);
            if (i < 0)
                return -1;
        }
        sep = ',';
    }
    if (!gap_is(js, pos, end - 1, 0))
        return -1;
    if (role == ROLE_CHOICE)
        count_choice(s, &choice);
    return i;
}

static unsigned hex4(const char *p)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v = v << 4 | (unsigned)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    return v;
}

/* jsmn checks that \u has four hex digits; cJSON also rejects the whole event for a low
 * surrogate first or a high one not followed by \u and a low one. Runs on data already known to
 * be JSON, where every backslash opens an escape inside a string. */
static int escapes_as_cjson(const char *js, size_t len)
{
    const char *end = js + len;
    const char *p = memchr(js, '\\', len);
    while (p != NULL) {
        if (end - p < 2)
            return 0;
        if (p[1] != 'u') {
            p += 2;
        } else {
            if (end - p < 6)
                return 0;
            unsigned code = hex4(p + 2);
            if (code >= 0xDC00 && code <= 0xDFFF)
                return 0;
            if (code >= 0xD800 && code <= 0xDBFF) {
                if (end - p < 12 || p[6] != '\\' || p[7] != 'u')
                    return 0;
                unsigned low = hex4(p + 8);
                if (low < 0xDC00 || low > 0xDFFF)
                    return 0;
                p += 12;
            } else {
                p += 6;
            }
        }
        p = p < end ? memchr(p, '\\', (size_t)(end - p)) : NULL;
    }
    return 1;
}

static int is_number(const struct scan *s, int t)
{
    if (!is_type(s, t, JSMN_PRIMITIVE))
        return 0;
    char c = s->js[s->tok[t].start];
    return c == '-' || is_digit(c);
}

/* True when string t's raw bytes are its value: no escape to decode. */
static int is_plain_string(const struct scan *s, int t)
{
    const jsmntok_t *k = &s->tok[t];
    return !s->has_backslash || memchr(s->js + k->start, '\\', (size_t)(k->end - k->start)) == NULL;
}

static int set_error_from(const struct scan *s, int t, struct ts_api_chunk *out)
{
    if (!is_plain_string(s, t))
        return TS_API_SCAN_DECLINED; /* error events are rare: cJSON decodes the message */
    out->error = 1;
    api_copy_message(out->error_message, sizeof out->error_message, s->js + s->tok[t].start,
                     (size_t)(s->tok[t].end - s->tok[t].start), sizeof out->error_message);
    return 0;
}

/* What api_openai.c's read_error makes of the noted members. */
static int read_error(const struct scan *s, struct ts_api_chunk *out)
{
    int message, type;
    if (is_type(s, s->error, JSMN_STRING))
        return set_error_from(s, s->error, out);
    if (is_type(s, s->error, JSMN_OBJECT)) {
        message = s->error_message;
        type = s->error_type;
    } else if (is_type(s, s->object, JSMN_STRING)) {
        if (!is_plain_string(s, s->object))
            return TS_API_SCAN_DECLINED;
        if (!STRING_IS(s, s->object, "error"))
            return 0;
        message = s->message;
        type = s->type;
    } else {
        return 0;
    }
    if (is_type(s, message, JSMN_STRING))
        return set_error_from(s, message, out);
    if (is_type(s, type, JSMN_STRING))
        return set_error_from(s, type, out);
    static const char no_message[] = "error without a message";
    out->error = 1;
    api_copy_message(out->error_message, sizeof out->error_message, no_message,
                     sizeof no_message - 1, sizeof out->error_message);
    return 0;
}

/* What api_openai.c's token_count makes of cJSON's double, for the integers read exactly here:
 * negative counts are 0. Returns -1 for any other number. */
static int64_t exact_token_count(const struct scan *s, int t)
{
    const char *p = s->js + s->tok[t].start;
    int n = s->tok[t].end - s->tok[t].start;
    int negative = p[0] == '-';
    if (n - negative < 1 || n - negative > SCAN_EXACT_DIGITS)
        return -1;
    int64_t v = 0;
    for (int i = negative; i < n; i++) {
        if (!is_digit(p[i]))
            return -1;
        v = v * 10 + (p[i] - '0');
    }
    return negative ? 0 : v;
}

/* What api_openai.c's read_usage makes of the noted members. */
static int read_usage(const struct scan *s, struct ts_api_chunk *out)
{
    if (!is_type(s, s->usage, JSMN_OBJECT) || !is_number(s, s->completion_tokens))
        return 0;
    out->has_usage = 1;
    out->completion_tokens = exact_token_count(s, s->completion_tokens);
    if (out->completion_tokens < 0)
        return TS_API_SCAN_DECLINED;
    if (is_number(s, s->prompt_tokens)) {
        out->prompt_tokens = exact_token_count(s, s->prompt_tokens);
        if (out->prompt_tokens < 0)
            return TS_API_SCAN_DECLINED;
    }
    return 0;
}

/* What api_openai.c's read_send_stamp makes of the noted member. A negative number is 0 there
 * whatever its form (-0 included), so it is not read. A plain integer of up to 19 digits fits a
 * uint64_t exactly, and converting that to double rounds to nearest as strtod does, so the
 * stamp is the very value cJSON keeps; 20 digits or more is at least 1e19, beyond 2^63. A
 * fraction or exponent (no server sends one) is left to cJSON. */
static int read_send_stamp(const struct scan *s, struct ts_api_chunk *out)
{
    if (!is_number(s, s->send_ns))
        return 0;
    const char *p = s->js + s->tok[s->send_ns].start;
    int n = s->tok[s->send_ns].end - s->tok[s->send_ns].start;
    if (p[0] == '-')
        return 0;
    uint64_t v = 0;
    for (int i = 0; i < n; i++) {
        if (!is_digit(p[i]))
            return TS_API_SCAN_DECLINED;
        v = v * 10 + (uint64_t)(p[i] - '0');
    }
    if (n > 19)
        return 0;
    double d = (double)v;
    if (d < 9223372036854775808.0)
        out->server_send_ns = (int64_t)d;
    return 0;
}

int api_scan_event(enum ts_api_kind kind, const char *data, size_t len, struct ts_api_chunk *out)
{
    return api_scan_event_at(kind, data, len, out, NULL);
}

int api_scan_event_at(enum ts_api_kind kind, const char *data, size_t len,
                      struct ts_api_chunk *out, struct ts_api_scan_where *where)
{
    struct scan s;
    jsmn_parser parser;
    memset(out, 0, sizeof *out);
    /* jsmn counts in int; no event comes near that, but a huge one is simply cJSON's. */
    if (data == NULL || len == 0 || len > INT_MAX / 2)
        return TS_API_SCAN_DECLINED;
    /* The one call: jsmn is inlined here, its parser kept in registers, which is most of its
     * speed. */
    jsmn_init(&parser);
    s.ntok = jsmn_parse(&parser, data, len, s.tok, SCAN_MAX_TOKENS);
    /* An error (too many tokens, a bad escape, cut short) or a stray NUL, where jsmn stops early
     * while cJSON reads on, shows as a negative count or as bytes left after the object. */
    if (s.ntok < 1 || s.tok[0].type != JSMN_OBJECT || !gap_is(data, 0, s.tok[0].start, 0) ||
        !gap_is(data, s.tok[0].end, (int)len, 0))
        return TS_API_SCAN_DECLINED;
    s.js = data;
    s.len = (int)len;
    s.kind = kind;
    s.backslash = next_backslash(&s, 0);
    s.has_backslash = s.backslash < s.len;
    s.choices = s.usage = s.error = s.object = s.message = s.type = s.send_ns = -1;
    s.error_message = s.error_type = s.completion_tokens = s.prompt_tokens = -1;
    s.content_pieces = s.reasoning_pieces = s.finished = 0;
    s.counted = -1;
    if (walk(&s, 0, 0, ROLE_ROOT, NULL) != s.ntok ||
        (s.has_backslash && !escapes_as_cjson(data, len)))
        return TS_API_SCAN_DECLINED;

    int rc = read_error(&s, out);
    if (rc == 0)
        rc = read_usage(&s, out);
    if (rc == 0)
        rc = read_send_stamp(&s, out);
    if (rc != 0) {
        memset(out, 0, sizeof *out);
        return rc;
    }
    out->content_pieces = s.content_pieces;
    out->reasoning_pieces = s.reasoning_pieces;
    out->finished = s.finished;
    if (where != NULL) {
        /* jsmn's string tokens hold the bytes between the quotes. */
        where->value_start = s.counted >= 0 ? (size_t)s.tok[s.counted].start : 0;
        where->value_end = s.counted >= 0 ? (size_t)s.tok[s.counted].end : 0;
        where->stamp_start = s.send_ns >= 0 ? (size_t)s.tok[s.send_ns].start : 0;
        where->stamp_end = s.send_ns >= 0 ? (size_t)s.tok[s.send_ns].end : 0;
    }
    return 0;
}
