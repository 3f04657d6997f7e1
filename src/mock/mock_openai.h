/* mock_openai.h: the OpenAI JSON formats the mock speaks: request bodies in, stream chunks,
 * whole responses, the model list and error bodies out. No sockets, no HTTP framing, no
 * clocks: send times and creation times are passed in. */
#ifndef TOKSTORM_MOCK_OPENAI_H
#define TOKSTORM_MOCK_OPENAI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mock_buf.h"

#define MOCK_OPENAI_DEFAULT_MAX_TOKENS 128
#define MOCK_OPENAI_MAX_MAX_TOKENS     INT32_MAX /* larger values answer 400 */

enum mock_api {
    MOCK_API_CHAT,        /* POST /v1/chat/completions */
    MOCK_API_COMPLETIONS, /* POST /v1/completions */
    MOCK_API_SGLANG,      /* POST /generate (mock_dialects.h) */
    MOCK_API_TGI,         /* POST /generate_stream (mock_dialects.h) */
    MOCK_API_LLAMACPP,    /* POST /completion (mock_dialects.h) */
};

/* One accepted generation request, with the parts of every chunk that do not change per token
 * rendered once. Owned by the connection; release with mock_openai_reply_free. */
struct mock_openai_reply {
    enum mock_api api;
    bool stream;           /* "stream": true */
    bool include_usage;    /* "stream_options": {"include_usage": true} */
    int64_t max_tokens;    /* completion tokens to generate, >= 1 */
    int64_t prompt_tokens; /* ceil(prompt bytes / 4) */
    int64_t reasoning_tokens; /* chat: the first this many tokens are reasoning_content */
    uint64_t id;           /* the <n> of "chatcmpl-mock-<n>" / "cmpl-mock-<n>" */
    int64_t created_s;     /* Unix seconds, the "created" field */
    char *model;           /* echoed model id (malloc'd) */
    char *chunk_head;      /* `{"id":..,"object":..,"created":..,"model":..,` (malloc'd) */
    size_t chunk_head_len;
};

/* Parses a request body for api. On success returns 0 and fills *out (free it with
 * mock_openai_reply_free). Returns -1 with a message in err when the body is not a JSON object,
 * misses messages/prompt or has a bad max_tokens/stream field (answer 400), or -2 when memory
 * ran out (answer 500). *out owns nothing after a failure. */
int mock_openai_parse_request(enum mock_api api, const char *body, size_t body_bytes,
                              const char *default_model, uint64_t id, int64_t created_s,
                              struct mock_openai_reply *out, char *err, size_t err_len);

void mock_openai_reply_free(struct mock_openai_reply *r);

/* The text of token number token (1-based): plain ASCII with a leading space, safe to splice
 * into a JSON string. */
const char *mock_openai_piece(int64_t token);

/* Each renderer appends one complete SSE event ("data: ...\n\n") to out and returns 0, or
 * -1 when memory ran out. send_ns is the tokstorm_send_ns stamp. */

/* The chat role chunk (delta role "assistant", empty content). Appends nothing for
 * completions, which have no role chunk. */
int mock_openai_render_role(const struct mock_openai_reply *r, int64_t send_ns,
                            struct mock_buf *out);

/* A tokstorm_send_ns value formatted once, for the content events of one write, which share
 * it. */
struct mock_openai_stamp {
    char digits[24]; /* decimal, not terminated */
    size_t len;
};

void mock_openai_stamp_set(struct mock_openai_stamp *st, int64_t send_ns);

/* The exact size of the event mock_openai_render_token appends for token, so that a caller can
 * write the HTTP chunk size first and render straight into its output buffer. */
size_t mock_openai_token_bytes(const struct mock_openai_reply *r, int64_t token,
                               const struct mock_openai_stamp *st);

/* The content chunk for token number token (1-based); a reasoning_content chunk instead for
 * the first reasoning_tokens tokens of a chat stream. This is the per-token path: one
 * reservation and straight copies, no intermediate buffer. */
int mock_openai_render_token(const struct mock_openai_reply *r, int64_t token,
                             const struct mock_openai_stamp *st, struct mock_buf *out);

/* The chunk with finish_reason "length". */
int mock_openai_render_finish(const struct mock_openai_reply *r, int64_t send_ns,
                              struct mock_buf *out);

/* The usage chunk (empty choices). */
int mock_openai_render_usage(const struct mock_openai_reply *r, int64_t send_ns,
                             struct mock_buf *out);

/* "data: [DONE]\n\n". */
int mock_openai_render_done(struct mock_buf *out);

/* The whole non-streaming response body (chat.completion / text_completion with usage). */
int mock_openai_render_full(const struct mock_openai_reply *r, int64_t send_ns,
                            struct mock_buf *out);

/* The GET /v1/models body. */
int mock_openai_render_models(const char *model, int64_t created_s, struct mock_buf *out);

/* {"error":{"message":..,"type":..,"code":status}}: type "rate_limit_error" for 429,
 * "server_error" for 5xx, else "invalid_request_error". */
int mock_openai_render_error(int status, const char *message, struct mock_buf *out);

/* Fault injection (mock_fault.h). Each appends one SSE event, as the renderers above. */

/* An error object inside a stream: `data: {"error":{...,"code":500}}`. */
int mock_openai_render_error_event(const char *message, struct mock_buf *out);

/* A chunk whose JSON stops in the middle of its content string: not valid JSON. */
int mock_openai_render_malformed(const struct mock_openai_reply *r, struct mock_buf *out);

/* A valid content chunk whose content is content_bytes bytes of 'x', on one line. */
int mock_openai_render_huge(const struct mock_openai_reply *r, int64_t content_bytes,
                            int64_t send_ns, struct mock_buf *out);

#endif
