/* mock_dialects.h: the native streaming formats the mock speaks besides OpenAI's: SGLang's
 * POST /generate, TGI's POST /generate_stream and llama.cpp's POST /completion. Request bodies
 * in, one SSE event at a time out, each with the root member "tokstorm_send_ns". No sockets,
 * no HTTP framing, no clocks: send times are passed in. */
#ifndef TOKSTORM_MOCK_DIALECTS_H
#define TOKSTORM_MOCK_DIALECTS_H

#include <stddef.h>
#include <stdint.h>

#include "mock_buf.h"
#include "mock_openai.h"

/* Whether api is one of the native dialects here (not chat or completions). */
int mock_dialect_is_native(enum mock_api api);

/* Parses a request body of a native api into *out (free it with mock_openai_reply_free): the
 * prompt ("text", "inputs" or "prompt") and the token budget (sampling_params.max_new_tokens,
 * parameters.max_new_tokens or n_predict; MOCK_OPENAI_DEFAULT_MAX_TOKENS when absent, or
 * n_predict -1). Only streams are served: "stream" must be true for sglang and llamacpp
 * (/generate_stream always streams). Returns 0, -1 with a message in err (answer 400), or -2
 * when memory ran out (answer 500). */
int mock_dialect_parse_request(enum mock_api api, const char *body, size_t body_bytes,
                               const char *default_model, uint64_t id,
                               struct mock_openai_reply *out, char *err, size_t err_len);

/* Appends the event of token number token (1-based): SGLang the text so far with the running
 * count, TGI the token (with generated_text and details when it is the last), llama.cpp the
 * token's content. Returns 0 or -1 (out of memory). */
int mock_dialect_render_token(const struct mock_openai_reply *r, int64_t token, int64_t send_ns,
                              struct mock_buf *out);

/* Appends what ends the stream after its last token: SGLang an event with the finish reason
 * (the same text and count) and [DONE], llama.cpp the "stop": true event with timings, TGI
 * nothing (its last token event ends it). Returns 0 or -1. */
int mock_dialect_render_end(const struct mock_openai_reply *r, int64_t send_ns,
                            struct mock_buf *out);

#endif
