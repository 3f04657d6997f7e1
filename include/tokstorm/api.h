/* api.h: the OpenAI HTTP API dialects: build one request body, interpret one SSE event's
 * data. This and prompts.c are where JSON lives (cJSON); nothing here knows of curl,
 * sockets, clocks or MPI. */
#ifndef TOKSTORM_API_H
#define TOKSTORM_API_H

#include <stddef.h>
#include <stdint.h>

#include "tokstorm/prompts.h"

enum ts_api_kind {
    TS_API_CHAT = 0,        /* POST /v1/chat/completions with "messages" */
    TS_API_COMPLETIONS = 1, /* POST /v1/completions with "prompt" */
};

#define TS_API_ERR_MALFORMED (-1) /* event data is not a JSON object */
#define TS_API_ERR_NOMEM     (-2)

struct ts_api_params {
    const char *model;  /* "model" field */
    int64_t max_tokens; /* "max_tokens" */
    double temperature; /* "temperature" */
    int ignore_eos;     /* adds "ignore_eos": true (vLLM, SGLang) */
    int stream;         /* adds "stream": true and "stream_options": {"include_usage": true} */
};

/* "chat" -> TS_API_CHAT, "completions" -> TS_API_COMPLETIONS. Returns 0 or -1. */
int api_kind_from_name(const char *name, enum ts_api_kind *out);
const char *api_kind_name(enum ts_api_kind kind);

/* The request path, e.g. "/v1/chat/completions". */
const char *api_path(enum ts_api_kind kind);

/* Builds the JSON request body for one prompt. A text prompt sent to chat becomes one user
 * message; a messages prompt sent to completions becomes its contents joined with "\n".
 * Returns a malloc'd NUL-terminated string owned by the caller, or NULL (out of memory). */
char *api_build_body(enum ts_api_kind kind, const struct ts_api_params *params,
                     const struct ts_prompt *prompt);

/* What one SSE event's data says. */
struct ts_api_chunk {
    int done;                  /* the data was the "[DONE]" sentinel */
    int content_pieces;        /* choices whose delta/text carried non-empty content */
    int reasoning_pieces;      /* choices whose delta carried non-empty reasoning_content */
    int finished;              /* some choice had a non-null finish_reason */
    int has_usage;             /* a "usage" object with completion_tokens was present */
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
 * memo holds. */
int api_parse_event_memo(enum ts_api_kind kind, const char *data, size_t len,
                         struct ts_api_memo *memo, struct ts_api_chunk *out);

#endif
