/* dataset.c: which prompts a run sends: dispatches on the dataset kind, reads ShareGPT files
 * (first human turn as the prompt, the answer after it as the reference, vLLM's length
 * filters), samples them from the seed, and hashes the result. The generated kinds are
 * dataset_synth.c's. It knows nothing of MPI, the network or the API dialects. */
#include "tokstorm/dataset.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {"jsonl", "sharegpt", "random", "shared-prefix"};

int dataset_kind_from_name(const char *name, enum ts_dataset_kind *out)
{
    for (int k = TS_DATASET_JSONL; k <= TS_DATASET_SHARED_PREFIX; k++)
        if (name != NULL && strcmp(name, kind_names[k]) == 0) {
            *out = (enum ts_dataset_kind)k;
            return 0;
        }
    return -1;
}

const char *dataset_kind_name(enum ts_dataset_kind kind)
{
    return kind >= TS_DATASET_JSONL && kind <= TS_DATASET_SHARED_PREFIX ? kind_names[kind]
                                                                        : "unknown";
}

int64_t dataset_estimate_tokens(const char *text)
{
    return (int64_t)((strlen(text) + 3) / 4);
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

uint64_t dataset_hash(const struct ts_prompts *p)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < p->count; i++) {
        const struct ts_prompt *q = &p->items[i];
        const char *body = q->text ? q->text : q->messages_json;
        unsigned char tag = q->text ? 't' : 'm', len[8];
        /* Little-endian whatever the host, so the hash is the same on every machine. */
        for (int b = 0; b < 8; b++)
            len[b] = (unsigned char)((uint64_t)q->max_tokens >> (8 * b));
        h = fnv1a(h, &tag, 1);
        h = fnv1a(h, body, strlen(body) + 1);
        h = fnv1a(h, len, sizeof len);
    }
    return h;
}

/* Reads path whole into a malloc'd NUL-terminated buffer. */
static char *read_file(const char *path, size_t *len, char *msg, size_t msg_len, int *rc)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(msg, msg_len, "cannot open dataset file %s: %s", path, strerror(errno));
        *rc = TS_PROMPTS_ERR_IO;
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        n += fread(buf + n, 1, cap - 1 - n, f);
        if (n < cap - 1)
            break;
        char *grown = realloc(buf, cap * 2);
        if (grown == NULL) {
            free(buf);
            buf = NULL;
        }
        buf = grown;
        cap *= 2;
    }
    int failed = ferror(f);
    fclose(f);
    if (buf == NULL) {
        snprintf(msg, msg_len, "%s: out of memory", path);
        *rc = TS_PROMPTS_ERR_NOMEM;
    } else if (failed) {
        snprintf(msg, msg_len, "cannot read dataset file %s: %s", path, strerror(errno));
        *rc = TS_PROMPTS_ERR_IO;
        free(buf);
        buf = NULL;
    } else {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

static int is_human(const char *from)
{
    return strcmp(from, "human") == 0 || strcmp(from, "user") == 0;
}

/* The first human turn's text and the answer right after it, or 0 when there is none. */
static int first_exchange(const cJSON *entry, const char **prompt, const char **answer)
{
    const cJSON *turns = cJSON_GetObjectItemCaseSensitive(entry, "conversations");
    const cJSON *t, *prev = NULL;
    if (!cJSON_IsArray(turns))
        return 0;
    cJSON_ArrayForEach(t, turns)
    {
        const cJSON *from = cJSON_GetObjectItemCaseSensitive(t, "from");
        const cJSON *value = cJSON_GetObjectItemCaseSensitive(t, "value");
        if (!cJSON_IsString(from) || !cJSON_IsString(value)) {
            prev = NULL;
            continue;
        }
        if (prev != NULL && !is_human(from->valuestring)) {
            *prompt = cJSON_GetObjectItemCaseSensitive(prev, "value")->valuestring;
            *answer = value->valuestring;
            return 1;
        }
        if (prev == NULL && is_human(from->valuestring))
            prev = t;
    }
    return 0;
}

/* Fisher-Yates over the first n items, from the seed: the order the list is sampled in. */
static void shuffle(struct ts_prompt *items, size_t n, uint64_t seed)
{
    struct ts_rng rng;
    rng_seed(&rng, seed ^ UINT64_C(0x5348415245475054)); /* "SHAREGPT": not the arrivals' */
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(rng_next(&rng) % i);
        struct ts_prompt tmp = items[i - 1];
        items[i - 1] = items[j];
        items[j] = tmp;
    }
}

static int sharegpt_load(struct ts_prompts *out, const struct ts_dataset_spec *s, char *msg,
                         size_t msg_len)
{
    size_t len = 0;
    int rc = 0;
    char *text = read_file(s->path, &len, msg, msg_len, &rc);
    if (text == NULL)
        return rc;
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    if (!cJSON_IsArray(root)) {
        snprintf(msg, msg_len, "%s: %s", s->path,
                 root ? "not a JSON array of conversations (ShareGPT format)"
                      : "not valid JSON (ShareGPT format: an array of conversations)");
        cJSON_Delete(root);
        return TS_PROMPTS_ERR_FORMAT;
    }
    size_t n = (size_t)cJSON_GetArraySize(root), no_pair = 0, too_short = 0, too_long = 0;
    out->items = calloc(n ? n : 1, sizeof *out->items);
    if (out->items == NULL)
        rc = TS_PROMPTS_ERR_NOMEM;
    const cJSON *entry, *all = rc == 0 ? root : NULL;
    cJSON_ArrayForEach(entry, all)
    {
        const char *prompt, *answer;
        if (!first_exchange(entry, &prompt, &answer)) {
            no_pair++;
            continue;
        }
        int64_t p = dataset_estimate_tokens(prompt), a = dataset_estimate_tokens(answer);
        if (p < TS_SHAREGPT_MIN_TOKENS || a < TS_SHAREGPT_MIN_TOKENS) {
            too_short++;
            continue;
        }
        if (p > TS_SHAREGPT_MAX_PROMPT_TOKENS || p + a > TS_SHAREGPT_MAX_TOTAL_TOKENS) {
            too_long++;
            continue;
        }
        struct ts_prompt *q = &out->items[out->count];
        if ((q->text = strdup(prompt)) == NULL) {
            rc = TS_PROMPTS_ERR_NOMEM;
            break;
        }
        q->max_tokens = s->sharegpt_output_len ? a : 0;
        out->count++;
    }
    cJSON_Delete(root);
    if (rc == TS_PROMPTS_ERR_NOMEM) {
        snprintf(msg, msg_len, "%s: out of memory", s->path);
        return rc;
    }
    if (out->count == 0) {
        snprintf(msg, msg_len,
                 "%s: no usable conversation in %zu entries (%zu without a human turn and an "
                 "answer, %zu under %d tokens, %zu over %d prompt or %d total tokens)",
                 s->path, n, no_pair, too_short, TS_SHAREGPT_MIN_TOKENS, too_long,
                 TS_SHAREGPT_MAX_PROMPT_TOKENS, TS_SHAREGPT_MAX_TOTAL_TOKENS);
        return TS_PROMPTS_ERR_EMPTY;
    }
    shuffle(out->items, out->count, s->seed);
    if (s->num_prompts > 0 && (size_t)s->num_prompts < out->count) {
        for (size_t i = (size_t)s->num_prompts; i < out->count; i++)
            free(out->items[i].text);
        out->count = (size_t)s->num_prompts;
    }
    return 0;
}

int dataset_load(struct ts_prompts *out, const struct ts_dataset_spec *spec, char *msg,
                 size_t msg_len)
{
    memset(out, 0, sizeof *out);
    int rc;
    switch (spec->kind) {
    case TS_DATASET_JSONL:
        return prompts_load(out, spec->path, msg, msg_len);
    case TS_DATASET_SHAREGPT:
        rc = sharegpt_load(out, spec, msg, msg_len);
        break;
    case TS_DATASET_RANDOM:
        rc = dataset_random(out, spec, msg, msg_len);
        break;
    case TS_DATASET_SHARED_PREFIX:
        rc = dataset_shared_prefix(out, spec, msg, msg_len);
        break;
    default:
        snprintf(msg, msg_len, "unknown dataset kind %d", (int)spec->kind);
        return TS_PROMPTS_ERR_FORMAT;
    }
    if (rc != 0)
        prompts_free(out);
    return rc;
}

char *dataset_params_json(const struct ts_dataset_spec *s)
{
    cJSON *j = cJSON_CreateObject();
    if (j == NULL)
        return NULL;
    cJSON_AddStringToObject(j, "dataset", dataset_kind_name(s->kind));
    cJSON_AddNumberToObject(j, "seed", (double)s->seed);
    if (s->kind == TS_DATASET_JSONL || s->kind == TS_DATASET_SHAREGPT)
        cJSON_AddStringToObject(j, "path", s->path);
    if (s->kind == TS_DATASET_SHAREGPT) {
        cJSON_AddNumberToObject(j, "num_prompts", (double)s->num_prompts);
        cJSON_AddBoolToObject(j, "sharegpt_output_len", s->sharegpt_output_len);
        cJSON_AddNumberToObject(j, "min_tokens", TS_SHAREGPT_MIN_TOKENS);
        cJSON_AddNumberToObject(j, "max_prompt_tokens", TS_SHAREGPT_MAX_PROMPT_TOKENS);
        cJSON_AddNumberToObject(j, "max_total_tokens", TS_SHAREGPT_MAX_TOTAL_TOKENS);
    }
    if (s->kind == TS_DATASET_RANDOM) {
        cJSON_AddNumberToObject(j, "num_prompts", (double)s->num_prompts);
        cJSON_AddNumberToObject(j, "input_len", (double)s->input_len_tokens);
        cJSON_AddNumberToObject(j, "input_len_range", s->input_len_range);
    }
    if (s->kind == TS_DATASET_SHARED_PREFIX) {
        cJSON_AddNumberToObject(j, "prefix_len", (double)s->prefix_len_tokens);
        cJSON_AddNumberToObject(j, "groups", (double)s->groups);
        cJSON_AddNumberToObject(j, "prompts_per_group", (double)s->prompts_per_group);
        cJSON_AddNumberToObject(j, "question_len", (double)s->question_len_tokens);
    }
    if (s->kind == TS_DATASET_RANDOM || s->kind == TS_DATASET_SHARED_PREFIX) {
        cJSON_AddNumberToObject(j, "output_len", (double)s->output_len_tokens);
        cJSON_AddNumberToObject(j, "output_len_range", s->output_len_range);
    }
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return text;
}
