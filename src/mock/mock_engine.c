/* mock_engine.c: the continuous-batching timing model: FIFO admission, constant prefill,
 * back-to-back decode steps whose length grows with the batch, each giving every stream in it
 * tokens_per_step tokens. Time is an argument; it knows
 * nothing of clocks, sockets, HTTP or JSON, and reports tokens only through its hooks. */
#include "mock_engine.h"

#include <stddef.h>
#include <string.h>

static void list_push(struct mock_stream_list *l, struct mock_stream *s)
{
    s->next = NULL;
    s->prev = l->tail;
    if (l->tail)
        l->tail->next = s;
    else
        l->head = s;
    l->tail = s;
    l->count++;
}

static void list_remove(struct mock_stream_list *l, struct mock_stream *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        l->head = s->next;
    if (s->next)
        s->next->prev = s->prev;
    else
        l->tail = s->prev;
    s->prev = s->next = NULL;
    l->count--;
}

static struct mock_stream *list_pop(struct mock_stream_list *l)
{
    struct mock_stream *s = l->head;
    if (s)
        list_remove(l, s);
    return s;
}

static void list_move_all(struct mock_stream_list *dst, struct mock_stream_list *src,
                          enum mock_stream_state state)
{
    struct mock_stream *s;
    while ((s = list_pop(src)) != NULL) {
        s->state = state;
        list_push(dst, s);
    }
}

static int64_t engine_running(const struct mock_engine *e)
{
    return e->prefill.count + e->joining.count + e->decoding.count;
}

int64_t mock_engine_active(const struct mock_engine *e)
{
    return e->queued.count + engine_running(e);
}

int mock_engine_init(struct mock_engine *e, const struct mock_engine_config *cfg,
                     const struct mock_engine_hooks *hooks, int64_t now_ns)
{
    memset(e, 0, sizeof *e);
    if (cfg->ttft_ns < 0 || cfg->step_ns <= 0 || cfg->per_seq_ns < 0 || cfg->max_batch < 1 ||
        cfg->tokens_per_step < 1)
        return -1;
    e->cfg = *cfg;
    e->hooks = *hooks;
    e->now_ns = now_ns;
    /* Half a step: a late timer keeps the schedule (no drift), while a stalled loop restarts
     * the clock close enough to now that the next step still lies in the future, so it never
     * emits a burst of catch-up tokens. */
    e->max_lag_ns = cfg->step_ns / 2;
    return 0;
}

/* The time at which an event due at due_ns (<= now) takes effect: its scheduled time, unless
 * the loop serviced it more than max_lag_ns late. Within one advance now is fixed, so this is
 * monotonic in due_ns, which keeps admissions (and so prefill completions) in FIFO order. */
static int64_t engine_effective_ns(const struct mock_engine *e, int64_t due_ns)
{
    int64_t floor_ns = e->now_ns - e->max_lag_ns;
    return due_ns > floor_ns ? due_ns : floor_ns;
}

static void engine_note_peaks(struct mock_engine *e)
{
    int64_t running = engine_running(e);
    if (running > e->stats.max_running)
        e->stats.max_running = running;
    int64_t active = running + e->queued.count;
    if (active > e->stats.max_active)
        e->stats.max_active = active;
}

static void engine_admit(struct mock_engine *e, int64_t at_ns)
{
    while (e->queued.head && engine_running(e) < e->cfg.max_batch) {
        struct mock_stream *s = list_pop(&e->queued);
        s->state = MOCK_STREAM_PREFILL;
        s->due_ns = at_ns + e->cfg.ttft_ns;
        list_push(&e->prefill, s);
    }
    engine_note_peaks(e);
}

/* Emits up to n tokens at once, never past max_tokens. */
static void engine_emit(struct mock_engine *e, struct mock_stream *s, int64_t n)
{
    int64_t left = s->max_tokens - s->emitted_tokens;
    if (n > left)
        n = left;
    s->emitted_tokens += n;
    e->stats.tokens += n;
    e->hooks.on_tokens(e->hooks.ctx, s, n);
}

/* s has left every list; its slot goes to the queue head at at_ns. */
static void engine_finish(struct mock_engine *e, struct mock_stream *s, int64_t at_ns)
{
    s->state = MOCK_STREAM_IDLE;
    e->stats.finished++;
    e->hooks.on_finish(e->hooks.ctx, s);
    engine_admit(e, at_ns);
}

/* Everyone who has a first token joins the decode set; a step starts if anyone is in it. */
static void engine_start_step(struct mock_engine *e, int64_t at_ns)
{
    list_move_all(&e->decoding, &e->joining, MOCK_STREAM_DECODING);
    int64_t k = e->decoding.count;
    if (k == 0) {
        e->step_running = false;
        return;
    }
    e->step_running = true;
    e->step_end_ns = at_ns + e->cfg.step_ns + e->cfg.per_seq_ns * k;
    if (k > e->stats.max_step_streams)
        e->stats.max_step_streams = k;
}

/* Completes every prefill due at the head's due time. They all finish at the same instant, so
 * when that instant also starts a step (the decode set was idle) they all belong in it;
 * completing them one by one would start the step with the first and leave the rest waiting. */
static void engine_complete_prefills(struct mock_engine *e)
{
    int64_t due_ns = e->prefill.head->due_ns;
    int64_t at_ns = engine_effective_ns(e, due_ns);
    while (e->prefill.head && e->prefill.head->due_ns == due_ns) {
        struct mock_stream *s = list_pop(&e->prefill);
        engine_emit(e, s, 1);
        if (s->emitted_tokens >= s->max_tokens) {
            /* Its slot may admit a queued stream, due at at_ns + ttft: never this instant
             * unless ttft is 0, in which case it is simply completed in this loop too. */
            engine_finish(e, s, at_ns);
            continue;
        }
        s->state = MOCK_STREAM_JOINING;
        list_push(&e->joining, s);
    }
    if (!e->step_running)
        engine_start_step(e, at_ns);
}

static void engine_end_step(struct mock_engine *e)
{
    int64_t at_ns = engine_effective_ns(e, e->step_end_ns);
    e->step_running = false;
    struct mock_stream *s = e->decoding.head;
    while (s) {
        struct mock_stream *next = s->next;
        engine_emit(e, s, e->cfg.tokens_per_step);
        if (s->emitted_tokens >= s->max_tokens) {
            list_remove(&e->decoding, s);
            engine_finish(e, s, at_ns);
        }
        s = next;
    }
    engine_start_step(e, at_ns);
}

void mock_engine_advance(struct mock_engine *e, int64_t now_ns)
{
    if (now_ns > e->now_ns)
        e->now_ns = now_ns;
    for (;;) {
        int64_t prefill_ns = e->prefill.head ? e->prefill.head->due_ns : INT64_MAX;
        int64_t step_ns = e->step_running ? e->step_end_ns : INT64_MAX;
        /* On a tie the prefill completes first, so that stream makes the step that starts at
         * the same instant instead of waiting a whole extra step. */
        if (prefill_ns <= step_ns && prefill_ns <= e->now_ns)
            engine_complete_prefills(e);
        else if (step_ns <= e->now_ns)
            engine_end_step(e);
        else
            break;
    }
}

void mock_engine_submit(struct mock_engine *e, struct mock_stream *s, int64_t max_tokens,
                        int64_t now_ns)
{
    /* Catching up first means every admission happens at or after every event already
     * processed, which is what keeps the prefill list sorted by due time. */
    mock_engine_advance(e, now_ns);
    s->max_tokens = max_tokens > 0 ? max_tokens : 1;
    s->emitted_tokens = 0;
    s->state = MOCK_STREAM_QUEUED;
    list_push(&e->queued, s);
    engine_admit(e, e->now_ns);
}

void mock_engine_cancel(struct mock_engine *e, struct mock_stream *s, int64_t now_ns)
{
    mock_engine_advance(e, now_ns);
    switch (s->state) {
    case MOCK_STREAM_IDLE:
        return;
    case MOCK_STREAM_QUEUED:
        list_remove(&e->queued, s);
        break;
    case MOCK_STREAM_PREFILL:
        list_remove(&e->prefill, s);
        break;
    case MOCK_STREAM_JOINING:
        list_remove(&e->joining, s);
        break;
    case MOCK_STREAM_DECODING:
        /* The step in flight keeps its length: the GPU was already running it. */
        list_remove(&e->decoding, s);
        break;
    }
    s->state = MOCK_STREAM_IDLE;
    e->stats.cancelled++;
    engine_admit(e, e->now_ns);
}

int64_t mock_engine_next_due_ns(const struct mock_engine *e)
{
    int64_t due = e->prefill.head ? e->prefill.head->due_ns : INT64_MAX;
    if (e->step_running && e->step_end_ns < due)
        due = e->step_end_ns;
    return due;
}
