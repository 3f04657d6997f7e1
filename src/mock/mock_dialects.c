/* mock_dialects.c: SGLang's, TGI's and llama.cpp's native request bodies in and stream events
 * out. cJSON parses every body and escapes the model name; the generated text is the mock's
 * plain ASCII pieces, spliced by hand. It knows nothing of sockets, HTTP framing or clocks. */
#include "mock_dialects.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIT(s) s, sizeof(s) - 1

int mock_dialect_is_native(enum mock_api api)
{
    return api == MOCK_API_SGLANG || api == MOCK_API_TGI || api == MOCK_API_LLAMACPP;
}

/* The token budget at obj.name: absent or null (or n_predict's -1, "until the end") is the
 * default. Returns 0 or -1 with err set. */
static int parse_budget(const cJSON *obj, const char *name, int allow_minus_one, int64_t *out,
                        char *err, size_t err_len)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, name);
    *out = MOCK_OPENAI_DEFAULT_MAX_TOKENS;
    if (item == NULL || cJSON_IsNull(item))
        return 0;
    double v = cJSON_IsNumber(item) ? item->valuedouble : 0;
    if (allow_minus_one && v == -1)
        return 0;
    if (!(v >= 1 && v <= MOCK_OPENAI_MAX_MAX_TOKENS) || (double)(int64_t)v != v) {
        snprintf(err, err_len, "'%s' must be an integer from 1 to %d", name,
                 MOCK_OPENAI_MAX_MAX_TOKENS);
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

int mock_dialect_parse_request(enum mock_api api, const char *body, size_t body_bytes,
                               const char *default_model, uint64_t id,
                               struct mock_openai_reply *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    out->api = api;
    out->id = id;
    cJSON *root = cJSON_ParseWithLength(body, body_bytes);
    if (!cJSON_IsObject(root)) {
        snprintf(err, err_len, "%s",
                 root ? "request body must be a JSON object" : "request body is not valid JSON");
        cJSON_Delete(root);
        return -1;
    }
    const char *prompt_name = api == MOCK_API_SGLANG ? "text"
                              : api == MOCK_API_TGI  ? "inputs"
                                                     : "prompt";
    const cJSON *prompt = cJSON_GetObjectItemCaseSensitive(root, prompt_name);
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(
        root, api == MOCK_API_SGLANG ? "sampling_params" : "parameters");
    int rc = -1;
    if (!cJSON_IsString(prompt)) {
        snprintf(err, err_len, "'%s' must be a string", prompt_name);
        goto done;
    }
    out->prompt_tokens = ((int64_t)strlen(prompt->valuestring) + 3) / 4;
    if (api == MOCK_API_LLAMACPP) {
        if (parse_budget(root, "n_predict", 1, &out->max_tokens, err, err_len) != 0)
            goto done;
    } else if (parse_budget(params, "max_new_tokens", 0, &out->max_tokens, err, err_len) != 0) {
        goto done;
    }
    out->stream =
        api == MOCK_API_TGI || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "stream"));
    if (!out->stream) {
        snprintf(err, err_len, "tokstorm-mock serves this endpoint only with \"stream\": true");
        goto done;
    }
    rc = -2;
    snprintf(err, err_len, "out of memory");
    out->model = strdup(default_model);
    if (out->model != NULL)
        rc = 0;
done:
    cJSON_Delete(root);
    if (rc != 0)
        mock_openai_reply_free(out);
    return rc;
}

/* The text of tokens 1..n, for SGLang's cumulative text and TGI's generated_text. */
static int append_text(struct mock_buf *out, int64_t n)
{
    int rc = 0;
    for (int64_t t = 1; t <= n && rc == 0; t++)
        rc = mock_buf_append_str(out, mock_openai_piece(t));
    return rc;
}

static int append_stamp_end(struct mock_buf *out, int64_t send_ns)
{
    int rc = mock_buf_append(out, LIT(",\"tokstorm_send_ns\":"));
    rc |= mock_buf_append_i64(out, send_ns);
    rc |= mock_buf_append(out, LIT("}\n\n"));
    return rc;
}

/* data: {"text":"<1..n>","meta_info":{"id":"mock-<id>","finish_reason":<finish>,
 * "prompt_tokens":P,"completion_tokens":n,"cached_tokens":0},"index":0,"tokstorm_send_ns":S} */
static int sglang_event(const struct mock_openai_reply *r, int64_t n, int finished, int64_t send_ns,
                        struct mock_buf *out)
{
    int rc = mock_buf_append(out, LIT("data: {\"text\":\""));
    rc |= append_text(out, n);
    rc |= mock_buf_append(out, LIT("\",\"meta_info\":{\"id\":\"mock-"));
    rc |= mock_buf_append_i64(out, (int64_t)r->id);
    if (finished) {
        rc |= mock_buf_append(out, LIT("\",\"finish_reason\":{\"type\":\"length\",\"length\":"));
        rc |= mock_buf_append_i64(out, n);
        rc |= mock_buf_append(out, LIT("},\"prompt_tokens\":"));
    } else {
        rc |= mock_buf_append(out, LIT("\",\"finish_reason\":null,\"prompt_tokens\":"));
    }
    rc |= mock_buf_append_i64(out, r->prompt_tokens);
    rc |= mock_buf_append(out, LIT(",\"completion_tokens\":"));
    rc |= mock_buf_append_i64(out, n);
    rc |= mock_buf_append(out, LIT(",\"cached_tokens\":0},\"index\":0"));
    rc |= append_stamp_end(out, send_ns);
    return rc ? -1 : 0;
}

/* data:{"index":k,"token":{"id":k,"text":"<piece>","logprob":-0.25,"special":false},
 * "generated_text":null|"<all>","details":null|{...},"tokstorm_send_ns":S} */
static int tgi_event(const struct mock_openai_reply *r, int64_t token, int64_t send_ns,
                     struct mock_buf *out)
{
    int rc = mock_buf_append(out, LIT("data:{\"index\":"));
    rc |= mock_buf_append_i64(out, token);
    rc |= mock_buf_append(out, LIT(",\"token\":{\"id\":"));
    rc |= mock_buf_append_i64(out, 1000 + token);
    rc |= mock_buf_append(out, LIT(",\"text\":\""));
    rc |= mock_buf_append_str(out, mock_openai_piece(token));
    rc |= mock_buf_append(out, LIT("\",\"logprob\":-0.25,\"special\":false},\"top_tokens\":null,"));
    if (token < r->max_tokens) {
        rc |= mock_buf_append(out, LIT("\"generated_text\":null,\"details\":null"));
    } else {
        rc |= mock_buf_append(out, LIT("\"generated_text\":\""));
        rc |= append_text(out, token);
        rc |= mock_buf_append(out, LIT("\",\"details\":{\"finish_reason\":\"length\","
                                       "\"generated_tokens\":"));
        rc |= mock_buf_append_i64(out, token);
        rc |= mock_buf_append(out, LIT(",\"input_length\":"));
        rc |= mock_buf_append_i64(out, r->prompt_tokens);
        rc |= mock_buf_append(out, LIT(",\"seed\":null}"));
    }
    rc |= append_stamp_end(out, send_ns);
    return rc ? -1 : 0;
}

/* data: {"index":0,"content":"<piece>","tokens":[id],"stop":false,"id_slot":0,
 * "tokens_predicted":k,"tokens_evaluated":P,"tokstorm_send_ns":S} */
static int llamacpp_event(const struct mock_openai_reply *r, int64_t token, int64_t send_ns,
                          struct mock_buf *out)
{
    int rc = mock_buf_append(out, LIT("data: {\"index\":0,\"content\":\""));
    rc |= mock_buf_append_str(out, mock_openai_piece(token));
    rc |= mock_buf_append(out, LIT("\",\"tokens\":["));
    rc |= mock_buf_append_i64(out, 1000 + token);
    rc |= mock_buf_append(out, LIT("],\"stop\":false,\"id_slot\":0,\"tokens_predicted\":"));
    rc |= mock_buf_append_i64(out, token);
    rc |= mock_buf_append(out, LIT(",\"tokens_evaluated\":"));
    rc |= mock_buf_append_i64(out, r->prompt_tokens);
    rc |= append_stamp_end(out, send_ns);
    return rc ? -1 : 0;
}

/* The last llama.cpp event, built with cJSON for the model name's sake. */
static int llamacpp_end(const struct mock_openai_reply *r, int64_t send_ns, struct mock_buf *out)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *timings = cJSON_CreateObject();
    char *text = NULL;
    if (root != NULL && timings != NULL) {
        cJSON_AddNumberToObject(root, "index", 0);
        cJSON_AddStringToObject(root, "content", "");
        cJSON_AddArrayToObject(root, "tokens");
        cJSON_AddNumberToObject(root, "id_slot", 0);
        cJSON_AddTrueToObject(root, "stop");
        cJSON_AddStringToObject(root, "model", r->model);
        cJSON_AddNumberToObject(root, "tokens_predicted", (double)r->max_tokens);
        cJSON_AddNumberToObject(root, "tokens_evaluated", (double)r->prompt_tokens);
        cJSON_AddStringToObject(root, "stop_type", "limit");
        cJSON_AddStringToObject(root, "stopping_word", "");
        cJSON_AddNumberToObject(root, "tokens_cached", (double)(r->prompt_tokens + r->max_tokens));
        cJSON_AddNumberToObject(timings, "prompt_n", (double)r->prompt_tokens);
        cJSON_AddNumberToObject(timings, "predicted_n", (double)r->max_tokens);
        if (cJSON_AddItemToObject(root, "timings", timings))
            timings = NULL;
        cJSON_AddNumberToObject(root, "tokstorm_send_ns", (double)send_ns);
        text = cJSON_PrintUnformatted(root);
    }
    cJSON_Delete(timings);
    cJSON_Delete(root);
    if (text == NULL)
        return -1;
    int rc = mock_buf_append(out, LIT("data: "));
    rc |= mock_buf_append_str(out, text);
    rc |= mock_buf_append(out, LIT("\n\n"));
    cJSON_free(text);
    return rc ? -1 : 0;
}

int mock_dialect_render_token(const struct mock_openai_reply *r, int64_t token, int64_t send_ns,
                              struct mock_buf *out)
{
    switch (r->api) {
    case MOCK_API_SGLANG:
        return sglang_event(r, token, 0, send_ns, out);
    case MOCK_API_TGI:
        return tgi_event(r, token, send_ns, out);
    case MOCK_API_LLAMACPP:
        return llamacpp_event(r, token, send_ns, out);
    default:
        return -1;
    }
}

int mock_dialect_render_end(const struct mock_openai_reply *r, int64_t send_ns,
                            struct mock_buf *out)
{
    switch (r->api) {
    case MOCK_API_SGLANG:
        if (sglang_event(r, r->max_tokens, 1, send_ns, out) != 0)
            return -1;
        return mock_buf_append(out, LIT("data: [DONE]\n\n")) ? -1 : 0;
    case MOCK_API_TGI:
        return 0;
    case MOCK_API_LLAMACPP:
        return llamacpp_end(r, send_ns, out);
    default:
        return -1;
    }
}
