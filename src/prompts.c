/* prompts.c: reads a JSON Lines prompt file into memory, once per rank. It knows the two
 * line shapes ({"prompt"} and {"messages"}) and nothing of the API dialects or the network. */
#include "tokstorm/prompts.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\r' && *s != '\n')
            return 0;
    return 1;
}

/* Checks one {"messages": [...]} array: objects with string role and string content. */
static int messages_valid(const cJSON *arr, const char **why)
{
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) == 0) {
        *why = "\"messages\" must be a non-empty array";
        return 0;
    }
    const cJSON *m;
    cJSON_ArrayForEach(m, arr)
    {
        if (!cJSON_IsObject(m) || !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(m, "role")) ||
            !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(m, "content"))) {
            *why = "each message needs a string \"role\" and a string \"content\"";
            return 0;
        }
    }
    return 1;
}

/* Parses one non-blank line into *p. Returns 0, or TS_PROMPTS_ERR_FORMAT with *why set. */
static int parse_line(const char *line, struct ts_prompt *p, const char **why)
{
    int rc = TS_PROMPTS_ERR_FORMAT;
    cJSON *obj = cJSON_Parse(line);
    if (obj == NULL) {
        *why = "not valid JSON";
        return rc;
    }
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(obj, "prompt");
    const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(obj, "messages");
    memset(p, 0, sizeof *p);
    if (!cJSON_IsObject(obj)) {
        *why = "not a JSON object";
    } else if (text != NULL && msgs != NULL) {
        *why = "has both \"prompt\" and \"messages\"";
    } else if (text != NULL) {
        if (!cJSON_IsString(text) || text->valuestring[0] == '\0') {
            *why = "\"prompt\" must be a non-empty string";
        } else {
            p->text = strdup(text->valuestring);
            rc = p->text ? 0 : TS_PROMPTS_ERR_NOMEM;
        }
    } else if (msgs != NULL) {
        if (messages_valid(msgs, why)) {
            p->messages_json = cJSON_PrintUnformatted(msgs);
            rc = p->messages_json ? 0 : TS_PROMPTS_ERR_NOMEM;
        }
    } else {
        *why = "needs a \"prompt\" string or a \"messages\" array";
    }
    if (rc == TS_PROMPTS_ERR_NOMEM)
        *why = "out of memory";
    cJSON_Delete(obj);
    return rc;
}

int prompts_load(struct ts_prompts *out, const char *path, char *msg, size_t msg_len)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(msg, msg_len, "cannot open prompts file %s: %s", path, strerror(errno));
        return TS_PROMPTS_ERR_IO;
    }
    char *line = NULL;
    size_t line_cap = 0, cap = 0;
    long line_no = 0;
    int rc = 0;
    ssize_t n;
    while ((n = getline(&line, &line_cap, f)) >= 0) {
        line_no++;
        if ((size_t)n != strlen(line)) {
            snprintf(msg, msg_len, "%s:%ld: contains a NUL byte", path, line_no);
            rc = TS_PROMPTS_ERR_FORMAT;
            break;
        }
        if (is_blank(line))
            continue;
        if (out->count == cap) {
            cap = cap ? cap * 2 : 64;
            struct ts_prompt *grown = realloc(out->items, cap * sizeof *grown);
            if (grown == NULL) {
                rc = TS_PROMPTS_ERR_NOMEM;
                snprintf(msg, msg_len, "%s: out of memory", path);
                break;
            }
            out->items = grown;
        }
        const char *why = "";
        rc = parse_line(line, &out->items[out->count], &why);
        if (rc != 0) {
            snprintf(msg, msg_len, "%s:%ld: %s", path, line_no, why);
            break;
        }
        out->count++;
    }
    if (rc == 0 && ferror(f)) {
        snprintf(msg, msg_len, "cannot read prompts file %s: %s", path, strerror(errno));
        rc = TS_PROMPTS_ERR_IO;
    }
    if (rc == 0 && out->count == 0) {
        snprintf(msg, msg_len, "prompts file %s holds no prompt", path);
        rc = TS_PROMPTS_ERR_EMPTY;
    }
    free(line);
    fclose(f);
    if (rc != 0)
        prompts_free(out);
    return rc;
}

void prompts_free(struct ts_prompts *p)
{
    for (size_t i = 0; i < p->count; i++) {
        free(p->items[i].text);
        cJSON_free(p->items[i].messages_json);
    }
    free(p->items);
    p->items = NULL;
    p->count = 0;
}
