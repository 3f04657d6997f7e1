/* api.c: the one interface to the dialects: names, paths, and dispatch of body building and
 * event reading to each dialect's file; with what they share (the root parse, the error and
 * send-stamp rules, stop strings, --extra-body's merge). It knows nothing of curl, sockets,
 * clocks or MPI. */
#include "tokstorm/api.h"
#include "tokstorm/api_internal.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How much of an unparseable event the error message quotes. */
enum { API_MALFORMED_QUOTE_BYTES = 40 };

static const struct {
    const char *name, *path;
} dialects[] = {
    [TS_API_CHAT] = {"chat", "/v1/chat/completions"},
    [TS_API_COMPLETIONS] = {"completions", "/v1/completions"},
    [TS_API_SGLANG] = {"sglang", "/generate"},
    [TS_API_TGI] = {"tgi", "/generate_stream"},
    [TS_API_LLAMACPP] = {"llamacpp", "/completion"},
};

enum { N_DIALECTS = sizeof dialects / sizeof dialects[0] };

int api_kind_from_name(const char *name, enum ts_api_kind *out)
{
    if (name == NULL || out == NULL)
        return -1;
    for (int k = 0; k < N_DIALECTS; k++)
        if (strcmp(name, dialects[k].name) == 0) {
            *out = (enum ts_api_kind)k;
            return 0;
        }
    return -1;
}

const char *api_kind_name(enum ts_api_kind kind)
{
    return (unsigned)kind < N_DIALECTS ? dialects[kind].name : "unknown";
}

const char *api_kind_names(void)
{
    return "chat, completions, sglang, tgi, llamacpp";
}

const char *api_path(enum ts_api_kind kind)
{
    return (unsigned)kind < N_DIALECTS ? dialects[kind].path : NULL;
}

char *api_build_body(enum ts_api_kind kind, const struct ts_api_params *params,
                     const struct ts_prompt *prompt)
{
    if (params == NULL || prompt == NULL || api_path(kind) == NULL ||
        (prompt->text == NULL && prompt->messages_json == NULL))
        return NULL;
    switch (kind) {
    case TS_API_CHAT:
    case TS_API_COMPLETIONS:
        return api_openai_build_body(kind, params, prompt);
    case TS_API_SGLANG:
        return api_sglang_build_body(params, prompt);
    case TS_API_TGI:
        return api_tgi_build_body(params, prompt);
    case TS_API_LLAMACPP:
        return api_llamacpp_build_body(params, prompt);
    }
    return NULL;
}

int api_parse_event(enum ts_api_kind kind, const char *data, size_t len, struct ts_api_chunk *out)
{
    switch (kind) {
    case TS_API_SGLANG:
        return api_sglang_parse_event(data, len, out);
    case TS_API_TGI:
        return api_tgi_parse_event(data, len, out);
    case TS_API_LLAMACPP:
        return api_llamacpp_parse_event(data, len, out);
    default:
        break;
    }
    /* Every streamed token is one event, and building a cJSON tree allocates a node per member:
     * about 2 us an event against a budget of 1 us per token for the whole rank. The scan reads
     * the usual chunks without allocating; what it is not sure of, cJSON decides, so the answer
     * is the reference one either way. The native dialects are read with cJSON only: they are
     * rarer targets, and their events are small. */
    if (data != NULL && len > 0 && api_scan_event(kind, data, len, out) == 0)
        return 0;
    return api_parse_event_cjson(kind, data, len, out);
}

int64_t api_max_tokens(const struct ts_api_params *params, const struct ts_prompt *prompt)
{
    /* A dataset may give a prompt its own budget (dataset.h); 0 means the option's. */
    return prompt->max_tokens > 0 ? prompt->max_tokens : params->max_tokens;
}

int api_add_stop(cJSON *obj, const char *name, const struct ts_api_params *params)
{
    if (params->n_stop == 0)
        return 0;
    cJSON *stop = cJSON_AddArrayToObject(obj, name);
    if (stop == NULL)
        return -1;
    for (size_t i = 0; i < params->n_stop; i++) {
        cJSON *s = cJSON_CreateString(params->stop[i]);
        if (s == NULL || !cJSON_AddItemToArray(stop, s)) {
            cJSON_Delete(s);
            return -1;
        }
    }
    return 0;
}

/* Merges src's members into dst: an object into an object member by member (so
 * {"sampling_params": {"top_k": 20}} adds to SGLang's sampling_params), anything else replaces
 * the member of that name or is added. Consumes src. Returns 0 or -1. */
static int merge_object(cJSON *dst, cJSON *src)
{
    while (src->child != NULL) {
        cJSON *item = cJSON_DetachItemViaPointer(src, src->child);
        cJSON *have = cJSON_GetObjectItemCaseSensitive(dst, item->string);
        if (cJSON_IsObject(have) && cJSON_IsObject(item)) {
            int rc = merge_object(have, item);
            cJSON_Delete(item);
            if (rc != 0)
                return -1;
        } else if (have != NULL) {
            if (!cJSON_ReplaceItemViaPointer(dst, have, item)) {
                cJSON_Delete(item);
                return -1;
            }
        } else {
            /* item->string is already the member's name: add it under that name as is. */
            char *key = item->string;
            item->string = NULL;
            int ok = cJSON_AddItemToObject(dst, key, item);
            cJSON_free(key);
            if (!ok) {
                cJSON_Delete(item);
                return -1;
            }
        }
    }
    return 0;
}

int api_check_extra_body(const char *json, char *msg, size_t msg_len)
{
    cJSON *extra = cJSON_Parse(json);
    int ok = cJSON_IsObject(extra);
    if (!ok)
        snprintf(msg, msg_len, "%s",
                 extra == NULL ? "not valid JSON" : "not a JSON object ({...})");
    cJSON_Delete(extra);
    return ok ? 0 : -1;
}

char *api_finish_body(cJSON *body, const struct ts_api_params *params)
{
    char *printed = NULL;
    if (params->extra_body != NULL) {
        cJSON *extra = cJSON_Parse(params->extra_body);
        int ok = cJSON_IsObject(extra) && merge_object(body, extra) == 0;
        cJSON_Delete(extra);
        if (!ok)
            goto done;
    }
    printed = cJSON_PrintUnformatted(body);
done:
    cJSON_Delete(body);
    return printed;
}

/* Copies at most limit bytes of src into dst (cap bytes, NUL included), never ending inside a
 * UTF-8 sequence, with control bytes turned into spaces: the message ends up on one line of a
 * log or a table cell, whatever the server sent. */
void api_copy_message(char *dst, size_t cap, const char *src, size_t src_len, size_t limit)
{
    size_t n = src_len;
    if (n > limit)
        n = limit;
    if (n > cap - 1)
        n = cap - 1;
    if (n < src_len)
        while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
            n--;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)src[i];
        dst[i] = c < 0x20 || c == 0x7F ? ' ' : (char)c;
    }
    dst[n] = '\0';
}

static void set_error(struct ts_api_chunk *out, const char *message)
{
    out->error = 1;
    api_copy_message(out->error_message, sizeof out->error_message, message, strlen(message),
                     sizeof out->error_message);
}

static int is_json_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int is_done_sentinel(const char *data, size_t len)
{
    while (len > 0 && is_json_space(data[0])) {
        data++;
        len--;
    }
    while (len > 0 && is_json_space(data[len - 1]))
        len--;
    return len == 6 && memcmp(data, "[DONE]", 6) == 0;
}

const cJSON *api_json_member(const cJSON *object, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(object, name);
}

#define member api_json_member

/* Token counts cannot be negative; NaN, negative and absurd values are clamped rather than
 * converted, which would be undefined behaviour. */
int64_t api_json_token_count(const cJSON *number)
{
    double d = number->valuedouble;
    if (!(d >= 0.0))
        return 0;
    if (d >= 9.0e18)
        return INT64_MAX;
    return (int64_t)d;
}

/* OpenAI and newer vLLM send {"error": {"message": ...}} (some proxies a bare string); older
 * vLLM sends its ErrorResponse as the top-level object, {"object": "error", "message": ...}. */
void api_json_read_error(const cJSON *root, struct ts_api_chunk *out)
{
    const cJSON *error = member(root, "error");
    const cJSON *holder = NULL;
    if (cJSON_IsString(error)) {
        set_error(out, error->valuestring);
        return;
    }
    if (cJSON_IsObject(error)) {
        holder = error;
    } else {
        const cJSON *object = member(root, "object");
        if (cJSON_IsString(object) && strcmp(object->valuestring, "error") == 0)
            holder = root;
    }
    if (holder == NULL)
        return;
    const cJSON *message = member(holder, "message");
    const cJSON *type = member(holder, "type");
    if (cJSON_IsString(message))
        set_error(out, message->valuestring);
    else if (cJSON_IsString(type))
        set_error(out, type->valuestring);
    else
        set_error(out, "error without a message");
}

/* The rule of api.h. The range check comes before the conversion, which would otherwise be
 * undefined behaviour; 2^63 itself is a double, INT64_MAX is not. */
void api_json_read_send_stamp(const cJSON *root, struct ts_api_chunk *out)
{
    const cJSON *stamp = api_json_member(root, "tokstorm_send_ns");
    if (!cJSON_IsNumber(stamp))
        return;
    double d = stamp->valuedouble;
    if (!(d >= 0.0) || d >= 9223372036854775808.0 || (double)(int64_t)d != d)
        return;
    out->server_send_ns = (int64_t)d;
}

int api_json_root(const char *data, size_t len, struct ts_api_chunk *out, cJSON **root_out)
{
    memset(out, 0, sizeof *out);
    *root_out = NULL;
    if (data == NULL)
        len = 0;
    if (is_done_sentinel(data, len)) {
        out->done = 1;
        return 0;
    }

    /* Parsed by length: the data need not be NUL-terminated. cJSON stops after the first value,
     * so anything but whitespace after it is checked here. cJSON cannot tell a failed
     * allocation from bad input, so both read as malformed. */
    const char *parse_end = NULL;
    cJSON *root = len > 0 ? cJSON_ParseWithLengthOpts(data, len, &parse_end, 0) : NULL;
    int ok = cJSON_IsObject(root);
    if (ok)
        for (const char *c = parse_end; c < data + len; c++)
            if (!is_json_space(*c))
                ok = 0;
    if (!ok) {
        static const char prefix[] = "malformed event: ";
        cJSON_Delete(root);
        out->error = 1;
        memcpy(out->error_message, prefix, sizeof prefix - 1);
        api_copy_message(out->error_message + sizeof prefix - 1,
                         sizeof out->error_message - (sizeof prefix - 1), data, len,
                         API_MALFORMED_QUOTE_BYTES);
        return TS_API_ERR_MALFORMED;
    }
    *root_out = root;
    return 0;
}
