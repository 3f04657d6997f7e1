/* api_models.h: reading a GET /v1/models answer, for --model auto. Pure: bytes in, a name
 * out; the request itself is http.c's. */
#ifndef TOKSTORM_API_MODELS_H
#define TOKSTORM_API_MODELS_H

#include <stddef.h>

#define TS_API_MODELS_MALFORMED (-1) /* not {"data": [{"id": "..."}, ...]} */
#define TS_API_MODELS_NONE      (-2) /* the list is empty */
#define TS_API_MODELS_SEVERAL   (-3) /* more than one model: msg lists them */
#define TS_API_MODELS_NOMEM     (-4)

/* Takes the only model's id from body (len bytes) into *model (malloc'd, the caller frees).
 * Returns 0 or a code above with one line in msg. */
int api_models_pick(const char *body, size_t len, char **model, char *msg, size_t msg_len);

#endif
