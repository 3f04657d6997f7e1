/* prompts.h: load a JSON Lines prompt file once per rank and hand out prompts by index.
 * Each line is {"prompt": "..."} or {"messages": [{"role": ..., "content": ...}, ...]};
 * blank lines are skipped. No MPI, no network. */
#ifndef TOKSTORM_PROMPTS_H
#define TOKSTORM_PROMPTS_H

#include <stddef.h>
#include <stdint.h>

#define TS_PROMPTS_ERR_IO     (-1) /* the file cannot be opened or read */
#define TS_PROMPTS_ERR_FORMAT (-2) /* a line is not a valid prompt object */
#define TS_PROMPTS_ERR_EMPTY  (-3) /* no prompt in the file */
#define TS_PROMPTS_ERR_NOMEM  (-4)

struct ts_prompt {
    char *text;          /* {"prompt": ...}: the text; NULL for a messages prompt */
    char *messages_json; /* {"messages": ...}: the array, re-serialised compactly; else NULL */
    int64_t max_tokens;  /* this prompt's max_tokens; 0 = the run's --max-tokens (dataset.h) */
};

struct ts_prompts {
    struct ts_prompt *items;
    size_t count;
};

/* Loads path into *out. On error fills msg with one line naming the file (and the line
 * number for a format error) and returns a negative code above; *out is then empty. */
int prompts_load(struct ts_prompts *out, const char *path, char *msg, size_t msg_len);

void prompts_free(struct ts_prompts *p);

#endif
