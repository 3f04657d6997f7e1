/* api.h: the HTTP API dialects (OpenAI chat and completions, SGLang's, TGI's and llama.cpp's
 * native streaming endpoints): build one request body, interpret one SSE event's data. This
 * and prompts.c are where JSON lives (cJSON); nothing here knows of curl, sockets, clocks or
 * MPI. One file per dialect (api_openai.c, api_sglang.c, api_tgi.c, api_llamacpp.c) behind the
 * functions below, which api.c dispatches. */
#ifndef TOKSTORM_API_H
#define TOKSTORM_API_H

#include <stddef.h>
#include <stdint.h>

#include "tokstorm/prompts.h"

enum ts_api_kind {
    TS_API_CHAT = 0,        /* POST /v1/chat/completions with "messages" */
    TS_API_COMPLETIONS = 1, /* POST /v1/completions with "prompt" */
    TS_API_SGLANG = 2,      /* SGLang's POST /generate with "text" and "sampling_params" */
    TS_API_TGI = 3,         /* TGI's POST /generate_stream with "inputs" and "parameters" */
    TS_API_LLAMACPP = 4,    /* llama.cpp server's POST /completion with "prompt", "n_predict" */
};

#define TS_API_ERR_MALFORMED (-1) /* event data is not a JSON object */
#define TS_API_ERR_NOMEM     (-2)

/* What every request asks for. Each dialect names the knobs its own way (api_build_body); a
 * knob a dialect has no name for is left out (TGI: min_tokens, ignore_eos; llama.cpp:
 * min_tokens). */
struct ts_api_params {
    const char *model;       /* "model" field (OpenAI dialects only) */
    int64_t max_tokens;      /* max_tokens / max_new_tokens / n_predict */
    double temperature;      /* "temperature" (TGI: left out when 0, which it rejects) */
    double top_p;            /* "top_p"; 0 = not sent */
    int64_t min_tokens;      /* min_tokens / min_new_tokens; 0 = not sent */
    const char *const *stop; /* stop strings, n_stop of them; sent as an array when n_stop > 0 */
    size_t n_stop;
    const char *extra_body; /* a JSON object merged into the body last (objects merge member by
                               member, anything else replaces); NULL = none */
    int ignore_eos;         /* adds "ignore_eos": true (vLLM, SGLang, llama.cpp) */
    int stream;             /* asks for a stream (OpenAI: with "stream_options" include_usage) */
};

/* "chat", "completions", "sglang", "tgi", "llamacpp" -> the kind. Returns 0 or -1. */
int api_kind_from_name(const char *name, enum ts_api_kind *out);
const char *api_kind_name(enum ts_api_kind kind);

/* The names above, comma-separated, for messages and help ("chat, completions, ..."). */
const char *api_kind_names(void);

/* The request path, e.g. "/v1/chat/completions"; NULL for an unknown kind. */
const char *api_path(enum ts_api_kind kind);

/* Builds the JSON request body for one prompt. A text prompt sent to chat becomes one user
 * message; a messages prompt sent to any other dialect becomes its contents joined with "\n"
 * (no chat template is applied). Returns a malloc'd NUL-terminated string owned by the
 * caller, or NULL (out of memory, or params->extra_body is not a JSON object: check it first
 * with api_check_extra_body). */
char *api_build_body(enum ts_api_kind kind, const struct ts_api_params *params,
                     const struct ts_prompt *prompt);

/* Returns 0 when json is a JSON object (what --extra-body takes), else -1 with a one-line
 * reason in msg. */
int api_check_extra_body(const char *json, char *msg, size_t msg_len);

/* What one SSE event's data says. */
struct ts_api_chunk {
    int done;                  /* the data was the "[DONE]" sentinel */
    int content_pieces;        /* choices whose delta/text carried non-empty content */
    int reasoning_pieces;      /* choices whose delta carried non-empty reasoning_content */
    int finished;              /* some choice had a non-null finish_reason */
    int has_usage;             /* the server's token count was present (OpenAI: a "usage"
                                  object with completion_tokens) */
    int usage_cumulative;      /* the count is the stream's running total and content_pieces
                                  only says output may have come: the event is a token event
                                  only when the count grew (SGLang's meta_info) */
    int64_t prompt_tokens;     /* usage.prompt_tokens (0 when absent) */
    int64_t completion_tokens; /* usage.completion_tokens (0 when absent) */
    int64_t server_send_ns;    /* the root's "tokstorm_send_ns" (see below), else 0 */
    int error;                 /* an "error" object (or string) was in the event */
    char error_message[160];   /* its message, truncated, NUL-terminated ("" if none) */
};

/* server_send_ns is when the server wrote the chunk, in its CLOCK_MONOTONIC nanoseconds:
 * tokstorm-mock stamps every chunk so, and a client on the same host can subtract it from its
 * own arrival time. The rule, the same for both readings (api_internal.h): the first root
 * member named "tokstorm_send_ns", when it is a JSON number whose value read as a double (as
 * cJSON reads it, so above 2^53 it is rounded to the nearest double) is whole and in
 * [0, 2^63); anything else (absent, a string, negative, fractional, 1e30) gives 0. 1000.0 and
 * 1e3 read as 1000: the rule is about the value, which is all cJSON keeps. */

/* Interprets one event's data (without the "data:" prefix) for the given dialect and fills
 * *out (zeroed first). Returns 0, TS_API_ERR_MALFORMED (not "[DONE]" and not a JSON object:
 * out->error is set with a message) or TS_API_ERR_NOMEM. */
int api_parse_event(enum ts_api_kind kind, const char *data, size_t len, struct ts_api_chunk *out);

/* How each native dialect maps onto the chunk:
 * - sglang: cumulative "text" and meta_info {prompt_tokens, completion_tokens, finish_reason}
 *   in every event: has_usage and usage_cumulative with meta_info's counts; content_pieces 1
 *   when completion_tokens > 0 (or, without it, when text is non-empty); finished when
 *   finish_reason is not null. The stream ends with [DONE].
 * - tgi: one token per event ({"token": {"id", "text", "logprob", "special"}}): content_pieces
 *   1 for every token, special ones included (an end-of-sequence token is generated and
 *   counted in details.generated_tokens); finished when generated_text is a string; usage
 *   from details.generated_tokens and details.input_length when details is an object.
 * - llamacpp: {"content", "stop"}: content_pieces 1 for non-empty content; finished when
 *   "stop" is true; usage from timings.predicted_n (else tokens_predicted), prompt tokens
 *   from tokens_evaluated (else timings.prompt_n).
 * All three: an "error" member reads as in OpenAI, and the root's tokstorm_send_ns too. */

/* One stream's last token event, kept to read its next one fast. A server sends a stream's
 * token events byte for byte alike but for the token's text (and tokstorm-mock's send stamp):
 * the same id, model, creation time, choice and finish_reason. An event that differs from
 * the memo only there is read by checking the text as a JSON string and comparing the rest,
 * some 30 ns instead of a parse; anything else is parsed, and may become the memo. */
enum { TS_API_MEMO_BYTES = 512 };
struct ts_api_memo {
    size_t len;                    /* bytes of data; 0 = empty */
    size_t value_start, value_end; /* the token's string, between its quotes */
    size_t stamp_start, stamp_end; /* the send stamp's digits after it, or both 0 */
    struct ts_api_chunk chunk;     /* what the event read as */
    char data[TS_API_MEMO_BYTES];  /* the event */
};

/* Empties the memo (a new request). */
void api_memo_reset(struct ts_api_memo *m);

/* api_parse_event with the stream's memo: the same result for the same data, whatever the
 * memo holds. Only the OpenAI dialects use the memo; the others are always parsed. */
int api_parse_event_memo(enum ts_api_kind kind, const char *data, size_t len,
                         struct ts_api_memo *memo, struct ts_api_chunk *out);

#endif
