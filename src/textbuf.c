/* textbuf.c: see textbuf.h. */
#include "tokstorm/textbuf.h"

#include <stdlib.h>
#include <string.h>

void textbuf_put(struct ts_textbuf *t, const char *s, size_t len)
{
    if (t->oom)
        return;
    if (t->n + len + 1 > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 256;
        while (t->n + len + 1 > cap)
            cap *= 2;
        char *grown = realloc(t->p, cap);
        if (grown == NULL) {
            t->oom = 1;
            return;
        }
        t->p = grown;
        t->cap = cap;
    }
    memcpy(t->p + t->n, s, len);
    t->n += len;
    t->p[t->n] = '\0';
}

void textbuf_puts(struct ts_textbuf *t, const char *s)
{
    textbuf_put(t, s, strlen(s));
}
