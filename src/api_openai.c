/* api_openai.c: the OpenAI chat and completions dialects: one request body out (cJSON), one SSE
 * event's data in (api_scan.c's tokenizer first, this file's cJSON reading as the reference and
 * fallback). It knows nothing of curl, sockets, clocks or MPI, nor of SSE framing: the caller
 * hands it one event's data at a time. */
#include "tokstorm/api.h"
#include "tokstorm/api_internal.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

/* How much of an unparseable event the error message quotes. */
enum { API_MALFORMED_QUOTE_BYTES = 40 };

int api_kind_from_name(const char *name, enum ts_api_kind *out)
{
    if (name == NULL || out == NULL)
        return -1;
    if (strcmp(name, "chat") == 0) {
        *out = TS_API_CHAT;
        return 0;
    }
    if (strcmp(name, "completions") == 0) {
        *out = TS_API_COMPLETIONS;
        return 0;
    }
    return -1;
}

const char *api_kind_name(enum ts_api_kind kind)
{
    switch (kind) {
    case TS_API_CHAT:
        return "chat";
    case TS_API_COMPLETIONS:
        return "completions";
    }
    return "unknown";
}

const char *api_path(enum ts_api_kind kind)
{
    switch (kind) {
    case TS_API_CHAT:
        return "/v1/chat/completions";
    case TS_API_COMPLETIONS:
        return "/v1/completions";
    }
    return NULL;
}

static cJSON *chat_messages_from_text(const char *text)
{
    cJSON *messages = cJSON_CreateArray();
    cJSON *message = cJSON_CreateObject();
    if (messages == NULL || message == NULL || !cJSON_AddItemToArray(messages, message)) {
        cJSON_Delete(messages);
        cJSON_Delete(message);
        return NULL;
    }
    if (cJSON_AddStringToObject(message, "role", "user") == NULL ||
        cJSON_AddStringToObject(message, "content", text) == NULL) {
        cJSON_Delete(messages);
        return NULL;
    }
    return messages;
}

/* Copies one piece of message text into out at *len (when out is not NULL), after a '\n' if
 * it is not the first, and advances *len either way. */
static void join_piece(char *out, size_t *len, int *pieces, const char *text)
{
    size_t n = strlen(text);
    if (*pieces > 0) {
        if (out != NULL)
            out[*len] = '\n';
        (*len)++;
    }
    if (out != NULL)
        memcpy(out + *len, text, n);
    *len += n;
    (*pieces)++;
}

/* Walks the text of every message in order: a string content is one piece, an array content
 * (OpenAI content parts) gives one piece per part with a string "text"; other contents (null
 * for an assistant tool call) give none. Measures when out is NULL, writes otherwise, so the
 * joined prompt costs one allocation. */
static size_t join_message_texts(const cJSON *messages, char *out)
{
    size_t len = 0;
    int pieces = 0;
    const cJSON *message;
    cJSON_ArrayForEach(message, messages)
    {
        const cJSON *content = cJSON_GetObjectItemCaseSensitive(message, "content");
        if (cJSON_IsString(content)) {
            join_piece(out, &len, &pieces, content->valuestring);
        } else if (cJSON_IsArray(content)) {
            const cJSON *part;
            cJSON_ArrayForEach(part, content)
            {
                const cJSON *text = cJSON_GetObjectItemCaseSensitive(part, "text");
                if (cJSON_IsString(text))
                    join_piece(out, &len, &pieces, text->valuestring);
            }
        }
    }
    if (out != NULL)
        out[len] = '\0';
    return len;
}

/* Adds "messages" (chat) or "prompt" (completions) to body. Returns 0 or -1. */
static int add_prompt(cJSON *body, enum ts_api_kind kind, const struct ts_prompt *prompt)
{
    cJSON *messages = NULL;
    if (prompt->text == NULL) {
        messages = cJSON_Parse(prompt->messages_json);
        if (!cJSON_IsArray(messages)) {
            cJSON_Delete(messages);
            return -1;
        }
    }

    if (kind == TS_API_CHAT) {
        if (messages == NULL)
            messages = chat_messages_from_text(prompt->text);
        if (messages == NULL)
            return -1;
        if (!cJSON_AddItemToObject(body, "messages", messages)) {
            cJSON_Delete(messages);
            return -1;
        }
        return 0;
    }

    if (messages == NULL)
        return cJSON_AddStringToObject(body, "prompt", prompt->text) != NULL ? 0 : -1;
    char *joined = malloc(join_message_texts(messages, NULL) + 1);
    if (joined != NULL)
        join_message_texts(messages, joined);
    cJSON_Delete(messages);
    int rc = joined != NULL && cJSON_AddStringToObject(body, "prompt", joined) != NULL ? 0 : -1;
    free(joined);
    return rc;
}

char *api_build_body(enum ts_api_kind kind, const struct ts_api_params *params,
                     const struct ts_prompt *prompt)
{
    if (params == NULL || prompt == NULL || api_path(kind) == NULL ||
        (prompt->text == NULL && prompt->messages_json == NULL))
        return NULL;
    cJSON *body = cJSON_CreateObject();
    if (body == NULL)
        return NULL;
    char *printed = NULL;
    /* A missing model is left out rather than sent as "": servers that serve one model fill it
     * in, and the others say so in their error. */
    if (params->model != NULL && cJSON_AddStringToObject(body, "model", params->model) == NULL)
        goto done;
    if (add_prompt(body, kind, prompt) != 0)
        goto done;
    /* cJSON prints a whole-valued double below 2^31 as an integer, which is what servers that
     * validate max_tokens as an int expect. A dataset may set a prompt's own (dataset.h). */
    int64_t max_tokens = prompt->max_tokens > 0 ? prompt->max_tokens : params->max_tokens;
    if (cJSON_AddNumberToObject(body, "max_tokens", (double)max_tokens) == NULL ||
        cJSON_AddNumberToObject(body, "temperature", params->temperature) == NULL)
        goto done;
    if (params->stream) {
        /* include_usage makes the server end the stream with a usage chunk, so token counts
         * come from the server's tokenizer rather than from counting chunks. */
        cJSON *options;
        if (cJSON_AddTrueToObject(body, "stream") == NULL ||
            (options = cJSON_AddObjectToObject(body, "stream_options")) == NULL ||
            cJSON_AddTrueToObject(options, "include_usage") == NULL)
            goto done;
    }
    if (params->ignore_eos && cJSON_AddTrueToObject(body, "ignore_eos") == NULL)
        goto done;
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

static int is_non_empty_string(const cJSON *item)
{
    return cJSON_IsString(item) && item->valuestring != NULL && item->valuestring[0] != '\0';
}

static const cJSON *member(const cJSON *object, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(object, name);
}

/* Token counts cannot be negative; NaN, negative and absurd values are clamped rather than
 * converted, which would be undefined behaviour. */
static int64_t token_count(const cJSON *number)
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
static void read_error(const cJSON *root, struct ts_api_chunk *out)
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

static void read_choices(enum ts_api_kind kind, const cJSON *root, struct ts_api_chunk *out)
{
    const cJSON *choices = member(root, "choices");
    if (!cJSON_IsArray(choices))
        return;
    const cJSON *choice;
    cJSON_ArrayForEach(choice, choices)
    {
        if (!cJSON_IsObject(choice))
            continue;
        if (kind == TS_API_CHAT) {
            /* "message" is where a non-streamed response puts what a chunk puts in "delta". */
            const cJSON *delta = member(choice, "delta");
            if (!cJSON_IsObject(delta))
                delta = member(choice, "message");
            if (is_non_empty_string(member(delta, "content")))
                out->content_pieces++;
            /* vLLM and SGLang name it reasoning_content; newer vLLM renamed it reasoning. */
            if (is_non_empty_string(member(delta, "reasoning_content")) ||
                is_non_empty_string(member(delta, "reasoning")))
                out->reasoning_pieces++;
        } else if (kind == TS_API_COMPLETIONS) {
            if (is_non_empty_string(member(choice, "text")))
                out->content_pieces++;
        }
        if (cJSON_IsString(member(choice, "finish_reason")))
            out->finished = 1;
    }
}

static void read_usage(const cJSON *root, struct ts_api_chunk *out)
{
    const cJSON *usage = member(root, "usage");
    const cJSON *completion = member(usage, "completion_tokens");
    if (!cJSON_IsObject(usage) || !cJSON_IsNumber(completion))
        return;
    out->has_usage = 1;
    out->completion_tokens = token_count(completion);
    const cJSON *prompt = member(usage, "prompt_tokens");
    if (cJSON_IsNumber(prompt))
        out->prompt_tokens = token_count(prompt);
}

/* The rule of api.h. The range check comes before the conversion, which would otherwise be
 * undefined behaviour; 2^63 itself is a double, INT64_MAX is not. */
static void read_send_stamp(const cJSON *root, struct ts_api_chunk *out)
{
    const cJSON *stamp = member(root, "tokstorm_send_ns");
    if (!cJSON_IsNumber(stamp))
        return;
    double d = stamp->valuedouble;
    if (!(d >= 0.0) || d >= 9223372036854775808.0 || (double)(int64_t)d != d)
        return;
    out->server_send_ns = (int64_t)d;
}

int api_parse_event(enum ts_api_kind kind, const char *data, size_t len, struct ts_api_chunk *out)
{
    /* Every streamed token is one event, and building a cJSON tree allocates a node per member:
     * about 2 us an event against a budget of 1 us per token for the whole rank. The scan reads
     * the usual chunks without allocating; what it is not sure of, cJSON decides, so the answer
     * is the reference one either way. */
    if (data != NULL && len > 0 && api_scan_event(kind, data, len, out) == 0)
        return 0;
    return api_parse_event_cjson(kind, data, len, out);
}

int api_parse_event_cjson(enum ts_api_kind kind, const char *data, size_t len,
                          struct ts_api_chunk *out)
{
    memset(out, 0, sizeof *out);
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

    read_error(root, out);
    read_choices(kind, root, out);
    read_usage(root, out);
    read_send_stamp(root, out);
    cJSON_Delete(root);
    return 0;
}
