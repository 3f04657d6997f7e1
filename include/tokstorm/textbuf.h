/* textbuf.h: a growable NUL-terminated string for building small texts (the recorded command
 * line, the CSV table). Running out of memory is remembered, not reported per call: check oom
 * once at the end. */
#ifndef TOKSTORM_TEXTBUF_H
#define TOKSTORM_TEXTBUF_H

#include <stddef.h>

struct ts_textbuf {
    char *p;  /* the text, NUL-terminated once anything was added; malloc'd, the caller frees */
    size_t n; /* its length */
    size_t cap;
    int oom; /* an append failed: the text is incomplete */
};

/* Appends len bytes of s. */
void textbuf_put(struct ts_textbuf *t, const char *s, size_t len);

/* Appends the NUL-terminated s. */
void textbuf_puts(struct ts_textbuf *t, const char *s);

#endif
