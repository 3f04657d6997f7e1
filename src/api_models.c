/* api_models.c: picks the one model a server lists in its GET /v1/models answer (OpenAI's
 * {"object": "list", "data": [{"id": ...}]}, which vLLM, SGLang, TGI and llama.cpp serve). It
 * knows nothing of curl or MPI: the answer's bytes come in, a name goes out. */
#include "tokstorm/api_models.h"

#include <cJSON.h>
#include <stdio.h>
#include <string.h>

int api_models_pick(const char *body, size_t len, char **model, char *msg, size_t msg_len)
{
    *model = NULL;
    cJSON *root = cJSON_ParseWithLength(body, len);
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(root, "data");
    int rc = 0, n = 0;
    const cJSON *m, *only = NULL;
    if (!cJSON_IsArray(data)) {
        snprintf(msg, msg_len, "the answer is not a model list ({\"data\": [{\"id\": ...}]})");
        rc = TS_API_MODELS_MALFORMED;
    }
    const cJSON *list = rc == 0 ? data : NULL;
    cJSON_ArrayForEach(m, list)
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
        if (!cJSON_IsString(id) || id->valuestring[0] == '\0') {
            snprintf(msg, msg_len, "model %d of the list has no \"id\" string", n + 1);
            rc = TS_API_MODELS_MALFORMED;
            break;
        }
        only = id;
        n++;
    }
    if (rc == 0 && n == 0) {
        snprintf(msg, msg_len, "the server lists no model");
        rc = TS_API_MODELS_NONE;
    } else if (rc == 0 && n > 1) {
        /* The user must choose: name them all, as far as the line goes. */
        size_t used = (size_t)snprintf(msg, msg_len, "the server lists %d models, give one "
                                                     "with --model:", n);
        cJSON_ArrayForEach(m, data)
        {
            if (used >= msg_len)
                break;
            used += (size_t)snprintf(msg + used, msg_len - used, " %s",
                                     cJSON_GetObjectItemCaseSensitive(m, "id")->valuestring);
        }
        rc = TS_API_MODELS_SEVERAL;
    } else if (rc == 0 && (*model = strdup(only->valuestring)) == NULL) {
        snprintf(msg, msg_len, "out of memory");
        rc = TS_API_MODELS_NOMEM;
    }
    cJSON_Delete(root);
    return rc;
}
