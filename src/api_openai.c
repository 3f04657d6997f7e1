/* api_openai.c: the OpenAI chat and completions dialects: one request body out (cJSON), one SSE
 * event's data in (api.c runs api_scan.c's tokenizer first, this file's cJSON reading as the
 * reference and fallback). It knows nothing of curl, sockets, clocks or MPI, nor of SSE framing:
 * the caller hands it one event's data at a time. */
#include "tokstorm/api.h"
#include "tokstorm/api_internal.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

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

    cJSON_Delete(messages);
    char *text = api_prompt_text(prompt);
    int rc = text != NULL && cJSON_AddStringToObject(body, "prompt", text) != NULL ? 0 : -1;
    free(text);
    return rc;
}

char *api_prompt_text(const struct ts_prompt *prompt)
{
    if (prompt->text != NULL)
        return strdup(prompt->text);
    cJSON *messages = cJSON_Parse(prompt->messages_json);
    char *joined = NULL;
    if (cJSON_IsArray(messages)) {
        joined = malloc(join_message_texts(messages, NULL) + 1);
        if (joined != NULL)
            join_message_texts(messages, joined);
    }
    cJSON_Delete(messages);
    return joined;
}

char *api_openai_build_body(enum ts_api_kind kind, const struct ts_api_params *params,
                            const struct ts_prompt *prompt)
{
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
    if (cJSON_AddNumberToObject(body, "max_tokens", (double)api_max_tokens(params, prompt)) ==
            NULL ||
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
    if (params->top_p > 0 && cJSON_AddNumberToObject(body, "top_p", params->top_p) == NULL)
        goto done;
    /* min_tokens is vLLM's and SGLang's extension of the OpenAI body. */
    if (params->min_tokens > 0 &&
        cJSON_AddNumberToObject(body, "min_tokens", (double)params->min_tokens) == NULL)
        goto done;
    if (api_add_stop(body, "stop", params) != 0)
        goto done;
    return api_finish_body(body, params);
done:
    cJSON_Delete(body);
    return printed;
}

static int is_non_empty_string(const cJSON *item)
{
    return cJSON_IsString(item) && item->valuestring != NULL && item->valuestring[0] != '\0';
}

#define member api_json_member

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
    out->completion_tokens = api_json_token_count(completion);
    const cJSON *prompt = member(usage, "prompt_tokens");
    if (cJSON_IsNumber(prompt))
        out->prompt_tokens = api_json_token_count(prompt);
}

int api_parse_event_cjson(enum ts_api_kind kind, const char *data, size_t len,
                          struct ts_api_chunk *out)
{
    cJSON *root = NULL;
    int rc = api_json_root(data, len, out, &root);
    if (rc != 0 || root == NULL)
        return rc;
    api_json_read_error(root, out);
    read_choices(kind, root, out);
    read_usage(root, out);
    api_json_read_send_stamp(root, out);
    cJSON_Delete(root);
    return 0;
}
