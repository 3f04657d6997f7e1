/* mock_engine.h: the timing model of one GPU server with continuous batching. Streams wait in
 * a FIFO admission queue, spend a constant prefill time, then take tokens_per_step tokens per
 * decode step.
 * Time is passed in as CLOCK_MONOTONIC nanoseconds; nothing here reads a clock or does I/O. */
#ifndef TOKSTORM_MOCK_ENGINE_H
#define TOKSTORM_MOCK_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

enum mock_stream_state {
    MOCK_STREAM_IDLE = 0, /* not in the engine */
    MOCK_STREAM_QUEUED,   /* waiting for a batch slot */
    MOCK_STREAM_PREFILL,  /* admitted; first token due at due_ns */
    MOCK_STREAM_JOINING,  /* has its first token; waits for the next decode step */
    MOCK_STREAM_DECODING, /* in the current decode step */
};

/* One generation request as the engine sees it. The caller owns the memory (it is embedded
 * in the connection) and must keep it alive until it is finished or cancelled. */
struct mock_stream {
    struct mock_stream *prev, *next; /* links in the list of the current state */
    enum mock_stream_state state;
    int64_t max_tokens;     /* tokens to emit, >= 1 */
    int64_t emitted_tokens; /* tokens emitted so far */
    int64_t due_ns;         /* PREFILL only: when the first token is due */
};

struct mock_stream_list {
    struct mock_stream *head, *tail;
    int64_t count;
};

struct mock_engine_config {
    int64_t ttft_ns;         /* prefill time from admission to the first token, >= 0 */
    int64_t step_ns;         /* fixed cost of one decode step, > 0 */
    int64_t per_seq_ns;      /* extra cost of a decode step per stream in it, >= 0 */
    int64_t max_batch;       /* streams admitted (prefill + decode) at once, >= 1 */
    int64_t tokens_per_step; /* tokens each stream gets from one decode step, >= 1 (the last
                              * step of a stream may give fewer) */
};

/* Called from inside mock_engine_advance/submit/cancel. A hook must not call back into the
 * engine; it may only record what happened (the caller defers any follow-up work).
 * on_tokens: s has just emitted n >= 1 tokens at once, numbers s->emitted_tokens - n + 1 to
 *   s->emitted_tokens (1-based): n is 1 for the first token (end of prefill) and up to
 *   tokens_per_step for a decode step.
 * on_finish: s emitted its last token and has left the engine (state IDLE). */
struct mock_engine_hooks {
    void (*on_tokens)(void *ctx, struct mock_stream *s, int64_t n);
    void (*on_finish)(void *ctx, struct mock_stream *s);
    void *ctx;
};

struct mock_engine_stats {
    int64_t tokens;           /* tokens emitted */
    int64_t finished;         /* streams that emitted all their tokens */
    int64_t cancelled;        /* streams removed before finishing */
    int64_t max_active;       /* most streams in the engine at once (queued + admitted) */
    int64_t max_running;      /* most streams admitted at once (prefill + decode) */
    int64_t max_step_streams; /* most streams in one decode step */
};

struct mock_engine {
    struct mock_engine_config cfg;
    struct mock_engine_hooks hooks;
    struct mock_stream_list queued, prefill, joining, decoding;
    bool step_running;
    int64_t step_end_ns; /* when the current decode step ends (if step_running) */
    int64_t now_ns;      /* the latest time the engine has been told */
    int64_t max_lag_ns;  /* how late an event may be serviced before the clock slips */
    struct mock_engine_stats stats;
};

/* Returns 0, or -1 when cfg is out of range (the engine is then unusable). */
int mock_engine_init(struct mock_engine *e, const struct mock_engine_config *cfg,
                     const struct mock_engine_hooks *hooks, int64_t now_ns);

/* Runs every event due at or before now_ns, firing hooks. */
void mock_engine_advance(struct mock_engine *e, int64_t now_ns);

/* Advances to now_ns, then queues s (which must be IDLE) for max_tokens >= 1 tokens and admits
 * it at once if a batch slot is free. */
void mock_engine_submit(struct mock_engine *e, struct mock_stream *s, int64_t max_tokens,
                        int64_t now_ns);

/* Advances to now_ns, then removes s wherever it is (no hooks fire for s) and gives its slot
 * to the head of the queue. A no-op for an IDLE stream. */
void mock_engine_cancel(struct mock_engine *e, struct mock_stream *s, int64_t now_ns);

/* When the next event is due, or INT64_MAX when the engine has nothing scheduled. */
int64_t mock_engine_next_due_ns(const struct mock_engine *e);

/* Streams in the engine (queued + admitted). */
int64_t mock_engine_active(const struct mock_engine *e);

#endif
