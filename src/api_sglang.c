/* api_sglang.c: SGLang's native dialect, POST /generate with "stream": true. Every event holds
 * the whole text so far and meta_info with the running token counts, so tokens are counted
 * from meta_info.completion_tokens, never from the text. It knows nothing of curl, sockets,
 * clocks or MPI, nor of SSE framing. */
#include "tokstorm/api.h"
#include "tokstorm/api_internal.h"

#include <cJSON.h>
#include <stdlib.h>

char *api_sglang_build_body(const struct ts_api_params *params, const struct ts_prompt *prompt)
{
    cJSON *body = cJSON_CreateObject();
    char *text = api_prompt_text(prompt);
    cJSON *sp;
    if (body == NULL || text == NULL || cJSON_AddStringToObject(body, "text", text) == NULL ||
        (sp = cJSON_AddObjectToObject(body, "sampling_params")) == NULL ||
        cJSON_AddNumberToObject(sp, "max_new_tokens", (double)api_max_tokens(params, prompt)) ==
            NULL ||
        cJSON_AddNumberToObject(sp, "temperature", params->temperature) == NULL ||
        (params->top_p > 0 && cJSON_AddNumberToObject(sp, "top_p", params->top_p) == NULL) ||
        (params->min_tokens > 0 &&
         cJSON_AddNumberToObject(sp, "min_new_tokens", (double)params->min_tokens) == NULL) ||
        (params->ignore_eos && cJSON_AddTrueToObject(sp, "ignore_eos") == NULL) ||
        api_add_stop(sp, "stop", params) != 0 ||
        (params->stream && cJSON_AddTrueToObject(body, "stream") == NULL)) {
        free(text);
        cJSON_Delete(body);
        return NULL;
    }
    free(text);
    return api_finish_body(body, params);
}

/* data: {"text":"<all so far>","meta_info":{"id":..,"finish_reason":null|{"type":..},
 * "prompt_tokens":N,"completion_tokens":K,...},"index":0} ... data: [DONE] */
int api_sglang_parse_event(const char *data, size_t len, struct ts_api_chunk *out)
{
    cJSON *root = NULL;
    int rc = api_json_root(data, len, out, &root);
    if (rc != 0 || root == NULL)
        return rc;
    api_json_read_error(root, out);
    api_json_read_send_stamp(root, out);
    const cJSON *meta = api_json_member(root, "meta_info");
    const cJSON *text = api_json_member(root, "text");
    const cJSON *completion = api_json_member(meta, "completion_tokens");
    if (cJSON_IsObject(meta) && cJSON_IsNumber(completion)) {
        out->has_usage = 1;
        out->usage_cumulative = 1;
        out->completion_tokens = api_json_token_count(completion);
        const cJSON *prompt = api_json_member(meta, "prompt_tokens");
        if (cJSON_IsNumber(prompt))
            out->prompt_tokens = api_json_token_count(prompt);
        out->content_pieces = out->completion_tokens > 0;
    } else if (cJSON_IsString(text) && text->valuestring[0] != '\0') {
        out->content_pieces = 1;
    }
    const cJSON *finish = api_json_member(meta, "finish_reason");
    if (cJSON_IsObject(meta) && finish != NULL && !cJSON_IsNull(finish))
        out->finished = 1;
    cJSON_Delete(root);
    return 0;
}
