/* api_llamacpp.c: llama.cpp server's native dialect, POST /completion with "stream": true:
 * {"content", "stop"} per event, and on the last ("stop": true) the counts and "timings". It
 * knows nothing of curl, sockets, clocks or MPI, nor of SSE framing. */
#include "tokstorm/api.h"
#include "tokstorm/api_internal.h"

#include <cJSON.h>
#include <stdlib.h>

/* llama.cpp has no min_tokens: it is left out. n_predict is its max_tokens. */
char *api_llamacpp_build_body(const struct ts_api_params *params, const struct ts_prompt *prompt)
{
    cJSON *body = cJSON_CreateObject();
    char *text = api_prompt_text(prompt);
    if (body == NULL || text == NULL || cJSON_AddStringToObject(body, "prompt", text) == NULL ||
        cJSON_AddNumberToObject(body, "n_predict", (double)api_max_tokens(params, prompt)) ==
            NULL ||
        cJSON_AddNumberToObject(body, "temperature", params->temperature) == NULL ||
        (params->top_p > 0 && cJSON_AddNumberToObject(body, "top_p", params->top_p) == NULL) ||
        (params->ignore_eos && cJSON_AddTrueToObject(body, "ignore_eos") == NULL) ||
        api_add_stop(body, "stop", params) != 0 ||
        (params->stream && cJSON_AddTrueToObject(body, "stream") == NULL)) {
        free(text);
        cJSON_Delete(body);
        return NULL;
    }
    free(text);
    return api_finish_body(body, params);
}

/* data: {"index":0,"content":" the","tokens":[..],"stop":false,"id_slot":0,..} ... the last
 * {"content":"","stop":true,"tokens_predicted":N,"tokens_evaluated":P,"stop_type":"limit",
 * "timings":{"prompt_n":..,"predicted_n":N,..},..}. timings.predicted_n is the server's token
 * count; tokens_evaluated is the whole prompt, where timings.prompt_n leaves out what came from
 * its cache. */
int api_llamacpp_parse_event(const char *data, size_t len, struct ts_api_chunk *out)
{
    cJSON *root = NULL;
    int rc = api_json_root(data, len, out, &root);
    if (rc != 0 || root == NULL)
        return rc;
    api_json_read_error(root, out);
    api_json_read_send_stamp(root, out);
    const cJSON *content = api_json_member(root, "content");
    if (cJSON_IsString(content) && content->valuestring[0] != '\0')
        out->content_pieces = 1;
    if (cJSON_IsTrue(api_json_member(root, "stop")))
        out->finished = 1;
    const cJSON *timings = api_json_member(root, "timings");
    const cJSON *predicted = api_json_member(timings, "predicted_n");
    if (!cJSON_IsObject(timings) || !cJSON_IsNumber(predicted))
        predicted = api_json_member(root, "tokens_predicted");
    if (cJSON_IsNumber(predicted)) {
        out->has_usage = 1;
        out->completion_tokens = api_json_token_count(predicted);
        const cJSON *prompt = api_json_member(root, "tokens_evaluated");
        if (!cJSON_IsNumber(prompt))
            prompt = api_json_member(timings, "prompt_n");
        if (cJSON_IsNumber(prompt))
            out->prompt_tokens = api_json_token_count(prompt);
    }
    cJSON_Delete(root);
    return 0;
}
