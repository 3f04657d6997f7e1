/* redact.c: the command line as it may be recorded: quoted for a shell, with credentials
 * replaced. It reads argv the way getopt_long does (values attached with '=' or following the
 * option, short options bundled) without knowing the full option table: when unsure it masks
 * more, never less. No I/O. */
#include "tokstorm/redact.h"
#include "tokstorm/textbuf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Short options that take a value, as in options.c's getopt string: in "-ofile" or "-vo file"
 * what follows the letter is the value, not more options. */
#define SHORT_WITH_VALUE "o"

/* Characters a POSIX shell reads literally outside quotes. */
static int shell_safe(const char *s)
{
    if (*s == '\0')
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && strchr("_@%+=:,./-", *s) == NULL)
            return 0;
    return 1;
}

/* s as one shell word: as it is when nothing in it is special, else in single quotes (a
 * quote inside becoming '\''). */
static void put_word(struct ts_textbuf *t, const char *s)
{
    if (shell_safe(s)) {
        textbuf_puts(t, s);
        return;
    }
    textbuf_put(t, "'", 1);
    for (const char *q; (q = strchr(s, '\'')) != NULL; s = q + 1) {
        textbuf_put(t, s, (size_t)(q - s));
        textbuf_puts(t, "'\\''");
    }
    textbuf_puts(t, s);
    textbuf_put(t, "'", 1);
}

static int contains_ci(const char *s, size_t len, const char *word)
{
    size_t w = strlen(word);
    for (size_t i = 0; i + w <= len; i++)
        if (strncasecmp(s + i, word, w) == 0)
            return 1;
    return 0;
}

int redact_header_name_is_secret(const char *name, size_t len)
{
    static const char *const words[] = {"auth", "key", "token", "secret", "password", "cookie"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (contains_ci(name, len, words[i]))
            return 1;
    return 0;
}

char *redact_header(const char *line)
{
    const char *colon = strchr(line, ':');
    if (colon == NULL || !redact_header_name_is_secret(line, (size_t)(colon - line)))
        return strdup(line);
    size_t name_len = (size_t)(colon - line);
    char *out = malloc(name_len + sizeof ": " TS_REDACTED);
    if (out != NULL) {
        memcpy(out, line, name_len);
        memcpy(out + name_len, ": " TS_REDACTED, sizeof ": " TS_REDACTED);
    }
    return out;
}

/* What the argument after the current one is. */
enum next_is { NEXT_PLAIN, NEXT_VALUE, NEXT_SECRET, NEXT_HEADER };

/* --api-key, --api-key-file, ... and their abbreviations down to "--api-" ("--api" itself
 * is the dialect option). */
static int is_key_option(const char *name, size_t len)
{
    static const char key[] = "api-key";
    if (len >= sizeof key - 1)
        return strncmp(name, key, sizeof key - 1) == 0;
    return len >= 4 && strncmp(name, key, len) == 0;
}

/* --header and any abbreviation of it: taken as a header whatever it may mean, since only a
 * value that names a secret header is masked. */
static int is_header_option(const char *name, size_t len)
{
    return len >= 1 && len <= 6 && strncmp(name, "header", len) == 0;
}

static void put_header_word(struct ts_textbuf *t, const char *prefix, size_t prefix_len,
                            const char *value)
{
    char *masked = redact_header(value);
    char *word = malloc(prefix_len + strlen(masked ? masked : "") + 1);
    if (masked == NULL || word == NULL) {
        t->oom = 1;
    } else {
        memcpy(word, prefix, prefix_len);
        strcpy(word + prefix_len, masked);
        put_word(t, word);
    }
    free(masked);
    free(word);
}

/* One "--name[=value]" argument; returns what the next argument is. */
static enum next_is put_long(struct ts_textbuf *t, const char *arg)
{
    const char *name = arg + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    int key = is_key_option(name, len), header = is_header_option(name, len);
    if (eq == NULL) {
        put_word(t, arg);
        return key ? NEXT_SECRET : header ? NEXT_HEADER : NEXT_PLAIN;
    }
    size_t prefix_len = (size_t)(eq - arg) + 1;
    if (key) {
        textbuf_put(t, arg, prefix_len);
        textbuf_puts(t, TS_REDACTED);
    } else if (header) {
        put_header_word(t, arg, prefix_len, eq + 1);
    } else {
        put_word(t, arg);
    }
    return NEXT_PLAIN;
}

/* One bundle of short options ("-v", "-vH", "-HAuthorization: x", "-ofile"). */
static enum next_is put_short(struct ts_textbuf *t, const char *arg)
{
    for (const char *c = arg + 1; *c; c++) {
        if (*c == 'H') {
            if (c[1] == '\0')
                break;
            put_header_word(t, arg, (size_t)(c + 1 - arg), c + 1);
            return NEXT_PLAIN;
        }
        if (strchr(SHORT_WITH_VALUE, *c)) {
            put_word(t, arg);
            return c[1] ? NEXT_PLAIN : NEXT_VALUE; /* its value, attached or next */
        }
    }
    put_word(t, arg);
    size_t n = strlen(arg);
    return arg[n - 1] == 'H' ? NEXT_HEADER : NEXT_PLAIN;
}

char *redact_command_line(int argc, char *const *argv)
{
    struct ts_textbuf t = {0};
    enum next_is next = NEXT_PLAIN;
    textbuf_puts(&t, "");
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (i > 0)
            textbuf_put(&t, " ", 1);
        if (next == NEXT_SECRET) {
            textbuf_puts(&t, TS_REDACTED);
            next = NEXT_PLAIN;
        } else if (next == NEXT_HEADER) {
            put_header_word(&t, "", 0, arg);
            next = NEXT_PLAIN;
        } else if (next == NEXT_VALUE) {
            put_word(&t, arg);
            next = NEXT_PLAIN;
        } else if (i > 0 && arg[0] == '-' && arg[1] == '-' && arg[2] != '\0') {
            next = put_long(&t, arg);
        } else if (i > 0 && arg[0] == '-' && arg[1] != '\0' && arg[1] != '-') {
            next = put_short(&t, arg);
        } else {
            put_word(&t, arg);
        }
    }
    if (t.oom) {
        free(t.p);
        return NULL;
    }
    return t.p;
}
