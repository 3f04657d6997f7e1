/* api_tgi.c: Hugging Face TGI's native dialect, POST /generate_stream: one token per event
 * ("data:" without a space, which the SSE parser takes as well), generated_text and details on
 * the last. It knows nothing of curl, sockets, clocks or MPI, nor of SSE framing. */
#include "tokstorm/api.h"
#include "tokstorm/api_internal.h"

#include <cJSON.h>
#include <stdlib.h>

/* TGI has no min_tokens and no ignore_eos: they are left out (--extra-body can add what a
 * given version takes). It rejects temperature 0, so greedy decoding is its default, asked
 * for by leaving temperature out. "details": true makes the last event carry
 * generated_tokens, the server's own count. */
char *api_tgi_build_body(const struct ts_api_params *params, const struct ts_prompt *prompt)
{
    cJSON *body = cJSON_CreateObject();
    char *text = api_prompt_text(prompt);
    cJSON *p;
    if (body == NULL || text == NULL || cJSON_AddStringToObject(body, "inputs", text) == NULL ||
        (p = cJSON_AddObjectToObject(body, "parameters")) == NULL ||
        cJSON_AddNumberToObject(p, "max_new_tokens", (double)api_max_tokens(params, prompt)) ==
            NULL ||
        (params->temperature > 0 &&
         cJSON_AddNumberToObject(p, "temperature", params->temperature) == NULL) ||
        (params->top_p > 0 && cJSON_AddNumberToObject(p, "top_p", params->top_p) == NULL) ||
        api_add_stop(p, "stop", params) != 0 || cJSON_AddTrueToObject(p, "details") == NULL ||
        (params->stream && cJSON_AddTrueToObject(body, "stream") == NULL)) {
        free(text);
        cJSON_Delete(body);
        return NULL;
    }
    free(text);
    return api_finish_body(body, params);
}

/* data:{"index":1,"token":{"id":..,"text":..,"logprob":..,"special":false},"top_tokens":null,
 * "generated_text":null,"details":null} ... the last with generated_text a string and details
 * {"finish_reason":..,"generated_tokens":N,"input_length":P,"seed":..}. A special token (the
 * end-of-sequence one) is a generated token, in generated_tokens too: it counts, so that the
 * event count and the server's count agree. Errors: {"error":"...","error_type":"..."}. */
int api_tgi_parse_event(const char *data, size_t len, struct ts_api_chunk *out)
{
    cJSON *root = NULL;
    int rc = api_json_root(data, len, out, &root);
    if (rc != 0 || root == NULL)
        return rc;
    api_json_read_error(root, out);
    api_json_read_send_stamp(root, out);
    if (cJSON_IsObject(api_json_member(root, "token")))
        out->content_pieces = 1;
    if (cJSON_IsString(api_json_member(root, "generated_text")))
        out->finished = 1;
    const cJSON *details = api_json_member(root, "details");
    const cJSON *generated = api_json_member(details, "generated_tokens");
    if (cJSON_IsObject(details) && cJSON_IsNumber(generated)) {
        out->finished = 1;
        out->has_usage = 1;
        out->completion_tokens = api_json_token_count(generated);
        const cJSON *input = api_json_member(details, "input_length");
        if (cJSON_IsNumber(input))
            out->prompt_tokens = api_json_token_count(input);
    }
    cJSON_Delete(root);
    return 0;
}
