/* api_internal.h: what api_openai.c and api_scan.c share, and what tests and the parse benchmark
 * reach past api_parse_event for. Not part of the interface the rest of tokstorm uses: only api.h
 * is. Nothing here knows of curl, sockets, clocks or MPI. */
#ifndef TOKSTORM_API_INTERNAL_H
#define TOKSTORM_API_INTERNAL_H

#include <stddef.h>

#include "tokstorm/api.h"

struct cJSON;

/* api_scan_event returns this when it cannot be sure of the answer cJSON would give. */
#define TS_API_SCAN_DECLINED 1

/* The reference reading of one event's data: cJSON builds the whole tree and the members are
 * looked up in it. Same contract as api_parse_event, which falls back to it. */
int api_parse_event_cjson(enum ts_api_kind kind, const char *data, size_t len,
                          struct ts_api_chunk *out);

/* The fast reading (api_scan.c): tokenizes the data in place with jsmn, without allocating.
 * Returns 0 with *out exactly as api_parse_event_cjson would fill it, or TS_API_SCAN_DECLINED
 * (*out then zeroed) for anything it does not fully understand: not a JSON object (which
 * includes "[DONE]" and every malformed event), too many tokens or too deep, a number in a
 * usage field that is not a plain integer, a member name with an escape, an error message
 * with one. */
int api_scan_event(enum ts_api_kind kind, const char *data, size_t len, struct ts_api_chunk *out);

/* Where api_scan_event_at found what it read, as byte offsets into the data: the value of the
 * string it counted last (content, reasoning or text; between the quotes) and the root's
 * "tokstorm_send_ns" value; [0, 0) when there is none. */
struct ts_api_scan_where {
    size_t value_start, value_end;
    size_t stamp_start, stamp_end;
};

/* api_scan_event that also says where (when where is not NULL and it returns 0). */
int api_scan_event_at(enum ts_api_kind kind, const char *data, size_t len, struct ts_api_chunk *out,
                      struct ts_api_scan_where *where);

/* Shared by the dialects (api.c). */

/* Parses data as one JSON object into *root (the caller frees it with cJSON_Delete), after
 * zeroing *out. Returns 0 with *root NULL and out->done set for the "[DONE]" sentinel, 0 with
 * *root set for an object, or TS_API_ERR_MALFORMED with out->error and its message set. */
int api_json_root(const char *data, size_t len, struct ts_api_chunk *out, struct cJSON **root);

/* The root's error, as OpenAI, vLLM and the native servers send it: {"error": {"message"}},
 * {"error": "text"} or {"object": "error", "message"}; sets out->error and its message. */
void api_json_read_error(const struct cJSON *root, struct ts_api_chunk *out);

/* The root's "tokstorm_send_ns" by api.h's rule into out->server_send_ns. */
void api_json_read_send_stamp(const struct cJSON *root, struct ts_api_chunk *out);

/* A JSON number as a token count: negative and NaN read 0, absurd values INT64_MAX. */
int64_t api_json_token_count(const struct cJSON *number);

/* The member name of object, or NULL (case-sensitive, as the servers write them). */
const struct cJSON *api_json_member(const struct cJSON *object, const char *name);

/* The prompt as one text: a text prompt as it is, a messages prompt's texts joined with "\n".
 * Returns a malloc'd string, or NULL (out of memory or a messages prompt that is not an
 * array). */
char *api_prompt_text(const struct ts_prompt *prompt);

/* The token budget of one request, which every dialect's body sends under its own name: the
 * one place where a prompt's own budget would take over the run's. */
int64_t api_max_tokens(const struct ts_api_params *params, const struct ts_prompt *prompt);

/* Adds the stop strings of params, when there are any, to obj as an array named name.
 * Returns 0 or -1. */
int api_add_stop(struct cJSON *obj, const char *name, const struct ts_api_params *params);

/* Prints body with params->extra_body merged in (api.h), then frees body. Returns the
 * malloc'd text or NULL. */
char *api_finish_body(struct cJSON *body, const struct ts_api_params *params);

/* One body builder and one event reader per dialect; each file's pair. */
char *api_openai_build_body(enum ts_api_kind kind, const struct ts_api_params *params,
                            const struct ts_prompt *prompt);
char *api_sglang_build_body(const struct ts_api_params *params, const struct ts_prompt *prompt);
char *api_tgi_build_body(const struct ts_api_params *params, const struct ts_prompt *prompt);
char *api_llamacpp_build_body(const struct ts_api_params *params, const struct ts_prompt *prompt);
int api_sglang_parse_event(const char *data, size_t len, struct ts_api_chunk *out);
int api_tgi_parse_event(const char *data, size_t len, struct ts_api_chunk *out);
int api_llamacpp_parse_event(const char *data, size_t len, struct ts_api_chunk *out);

/* Copies at most limit bytes of src (src_len bytes, no NUL needed) into dst (cap bytes, NUL
 * included), never ending inside a UTF-8 sequence, with control bytes turned into spaces. */
void api_copy_message(char *dst, size_t cap, const char *src, size_t src_len, size_t limit);

#endif
