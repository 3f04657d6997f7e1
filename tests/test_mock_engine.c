/* test_mock_engine.c: the mock server's continuous-batching timing model, driven in virtual time
 * so every token lands on a schedule computed from the configuration; and its HTTP request-head
 * parser, which must give the same answer however the head is cut into reads. */
#include "mock_engine.h"
#include "mock_http.h"

#include "check.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_MS       1000000LL
#define PROBE_MAX_CALLS 16 /* on_tokens calls logged per probe */

/* A stream plus what the hooks saw happen to it, stamped with the harness clock. The engine
 * only knows the embedded mock_stream; the hooks get back to the probe through it. */
struct probe {
    struct mock_stream s;
    int64_t first_token_ns; /* -1 until the first token */
    int64_t last_token_ns;  /* -1 until the first token */
    int64_t tokens;         /* tokens emitted (sum of on_tokens n) */
    int64_t calls;          /* on_tokens calls: one per write the server would make */
    /* The first PROBE_MAX_CALLS calls: when, how many tokens, and the stream's
     * emitted_tokens as the hook saw it (the number of the call's last token). */
    int64_t call_ns[PROBE_MAX_CALLS];
    int64_t call_tokens[PROBE_MAX_CALLS];
    int64_t call_last[PROBE_MAX_CALLS];
    int64_t finishes; /* on_finish calls */
};

/* An engine and the virtual clock that drives it. now_ns is the time last handed to the
 * engine; hooks fire inside that call, so it is when they are deemed to have happened. */
struct harness {
    struct mock_engine engine;
    int64_t now_ns;
};

static struct probe *probe_of(struct mock_stream *s)
{
    return (struct probe *)((char *)s - offsetof(struct probe, s));
}

static void probe_init(struct probe *p)
{
    memset(p, 0, sizeof *p);
    p->first_token_ns = -1;
    p->last_token_ns = -1;
}

static void on_tokens(void *ctx, struct mock_stream *s, int64_t n)
{
    const struct harness *h = ctx;
    struct probe *p = probe_of(s);
    if (p->first_token_ns < 0)
        p->first_token_ns = h->now_ns;
    p->last_token_ns = h->now_ns;
    if (p->calls < PROBE_MAX_CALLS) {
        p->call_ns[p->calls] = h->now_ns;
        p->call_tokens[p->calls] = n;
        p->call_last[p->calls] = s->emitted_tokens;
    }
    p->tokens += n;
    p->calls++;
}

static void on_finish(void *ctx, struct mock_stream *s)
{
    (void)ctx;
    probe_of(s)->finishes++;
}

static void harness_init(struct harness *h, const struct mock_engine_config *cfg)
{
    struct mock_engine_hooks hooks = {on_tokens, on_finish, h};
    h->now_ns = 0;
    CHECK_EQ_INT(mock_engine_init(&h->engine, cfg, &hooks, 0), 0);
}

static void harness_submit(struct harness *h, struct probe *p, int64_t max_tokens, int64_t at_ns)
{
    probe_init(p);
    h->now_ns = at_ns;
    mock_engine_submit(&h->engine, &p->s, max_tokens, at_ns);
}

static void harness_cancel(struct harness *h, struct probe *p, int64_t at_ns)
{
    h->now_ns = at_ns;
    mock_engine_cancel(&h->engine, &p->s, at_ns);
}

/* Services the engine at exactly at_ns, as a loop whose timer fired at that moment. */
static void harness_advance(struct harness *h, int64_t at_ns)
{
    h->now_ns = at_ns;
    mock_engine_advance(&h->engine, at_ns);
}

/* Drives the engine like the server loop with a perfect timer: jump to each due time exactly,
 * so nothing is ever serviced late, up to end_ns; then stop the clock at end_ns. */
static void harness_run_until(struct harness *h, int64_t end_ns)
{
    for (;;) {
        int64_t due_ns = mock_engine_next_due_ns(&h->engine);
        if (due_ns > end_ns)
            break;
        harness_advance(h, due_ns);
    }
    harness_advance(h, end_ns);
}

/* Like harness_run_until, until the engine has nothing left scheduled. */
static void harness_run_to_idle(struct harness *h)
{
    int64_t due_ns;
    while ((due_ns = mock_engine_next_due_ns(&h->engine)) != INT64_MAX)
        harness_advance(h, due_ns);
}

/* A lone stream sees no batching: its first token comes ttft after submission, then one token
 * per decode step of step_ns (per_seq is 0), so token k (1-based) lands at ttft + (k-1)*step.
 * After the last one it has left the engine and nothing is scheduled. */
static void test_single_stream(void)
{
    const struct mock_engine_config cfg = {.ttft_ns = 50 * NS_PER_MS,
                                           .step_ns = 10 * NS_PER_MS,
                                           .per_seq_ns = 0,
                                           .max_batch = 4,
                                           .tokens_per_step = 1};
    const int64_t n_tokens = 21;
    struct harness h;
    struct probe p;
    harness_init(&h, &cfg);
    harness_submit(&h, &p, n_tokens, 0);
    harness_run_to_idle(&h);

    CHECK_EQ_INT(p.first_token_ns, cfg.ttft_ns);
    CHECK_EQ_INT(p.last_token_ns, cfg.ttft_ns + (n_tokens - 1) * cfg.step_ns);
    CHECK_EQ_INT(p.tokens, n_tokens);
    CHECK_EQ_INT(p.calls, n_tokens); /* one token per step: one hook call per token */
    CHECK_EQ_INT(p.finishes, 1);
    CHECK_EQ_INT(p.s.state, MOCK_STREAM_IDLE);
    CHECK_EQ_INT(mock_engine_next_due_ns(&h.engine), INT64_MAX);
}

/* Twice max_batch streams submitted together run as two waves. The first wave is admitted at
 * once; its prefills all finish at ttft and start one decode step together (had they joined
 * one by one, the first would start the step alone and the rest lag a step). Its last token is
 * at ttft + (n-1)*step, which frees every slot at that instant: the second wave is admitted
 * then and repeats the same schedule offset by that time. */
static void test_two_waves(void)
{
    const struct mock_engine_config cfg = {.ttft_ns = 50 * NS_PER_MS,
                                           .step_ns = 10 * NS_PER_MS,
                                           .per_seq_ns = 0,
                                           .max_batch = 4,
                                           .tokens_per_step = 1};
    const int64_t n_tokens = 10;
    struct harness h;
    struct probe p[8];
    const int n_streams = (int)(sizeof p / sizeof p[0]);
    harness_init(&h, &cfg);
    for (int i = 0; i < n_streams; i++)
        harness_submit(&h, &p[i], n_tokens, 0);
    CHECK_EQ_INT(h.engine.queued.count, n_streams - cfg.max_batch);
    harness_run_to_idle(&h);

    const int64_t wave1_last_ns = cfg.ttft_ns + (n_tokens - 1) * cfg.step_ns;
    const int64_t wave2_first_ns = wave1_last_ns + cfg.ttft_ns;
    const int64_t wave2_last_ns = wave2_first_ns + (n_tokens - 1) * cfg.step_ns;
    for (int i = 0; i < cfg.max_batch; i++) {
        CHECK_EQ_INT(p[i].first_token_ns, cfg.ttft_ns);
        CHECK_EQ_INT(p[i].last_token_ns, wave1_last_ns);
    }
    for (int i = cfg.max_batch; i < n_streams; i++) {
        CHECK_EQ_INT(p[i].first_token_ns, wave2_first_ns);
        CHECK_EQ_INT(p[i].last_token_ns, wave2_last_ns);
    }
    CHECK_EQ_INT(h.engine.stats.max_running, cfg.max_batch);
    CHECK_EQ_INT(h.engine.stats.max_active, n_streams);
    CHECK_EQ_INT(h.engine.stats.max_step_streams, cfg.max_batch);
}

/* A decode step costs step + per_seq * (streams in it). Stream a alone takes steps of
 * step + per_seq, so its last token is at ttft + (n_a-1)*(step + per_seq). Stream b, submitted
 * after a's first token, gets its first token ttft after submission; a is gone by then, so the
 * idle decode loop starts a fresh step at that instant instead of keeping a's old step grid.
 * Two streams submitted together then show the cost growing with the batch: 2 * per_seq. */
static void test_per_seq_cost(void)
{
    const struct mock_engine_config cfg = {.ttft_ns = 50 * NS_PER_MS,
                                           .step_ns = 10 * NS_PER_MS,
                                           .per_seq_ns = 1 * NS_PER_MS,
                                           .max_batch = 64,
                                           .tokens_per_step = 1};
    const int64_t n_a = 5, n_b = 3;
    const int64_t b_submit_ns = 55 * NS_PER_MS;
    const int64_t one_stream_step_ns = cfg.step_ns + cfg.per_seq_ns;
    struct harness h;
    struct probe a, b;
    harness_init(&h, &cfg);
    harness_submit(&h, &a, n_a, 0);
    harness_run_until(&h, b_submit_ns);
    harness_submit(&h, &b, n_b, b_submit_ns);
    harness_run_to_idle(&h);

    const int64_t a_last_ns = cfg.ttft_ns + (n_a - 1) * one_stream_step_ns;
    const int64_t b_first_ns = b_submit_ns + cfg.ttft_ns;
    CHECK_EQ_INT(a.last_token_ns, a_last_ns);
    CHECK(a_last_ns < b_first_ns); /* the premise: b finds the decode loop idle */
    CHECK_EQ_INT(b.first_token_ns, b_first_ns);
    CHECK_EQ_INT(b.last_token_ns, b_first_ns + (n_b - 1) * one_stream_step_ns);

    const int64_t n_cd = 3;
    const int64_t two_stream_step_ns = cfg.step_ns + 2 * cfg.per_seq_ns;
    struct probe c, d;
    harness_init(&h, &cfg);
    harness_submit(&h, &c, n_cd, 0);
    harness_submit(&h, &d, n_cd, 0);
    harness_run_to_idle(&h);
    CHECK_EQ_INT(c.last_token_ns, cfg.ttft_ns + (n_cd - 1) * two_stream_step_ns);
    CHECK_EQ_INT(d.last_token_ns, cfg.ttft_ns + (n_cd - 1) * two_stream_step_ns);
    CHECK_EQ_INT(h.engine.stats.max_step_streams, 2);
}

/* A prefill that completes at the very instant a decode step ends joins the step that starts
 * then, not the one after. a decodes on the grid ttft + k*step; b is submitted one step after
 * a, so its first token falls on a's step end at ttft + step and its next ones follow one step
 * apart. If the step end were handled first, b would wait out a whole extra step. */
static void test_prefill_tie_joins_step(void)
{
    const struct mock_engine_config cfg = {.ttft_ns = 50 * NS_PER_MS,
                                           .step_ns = 10 * NS_PER_MS,
                                           .per_seq_ns = 0,
                                           .max_batch = 4,
                                           .tokens_per_step = 1};
    const int64_t n_a = 10, n_b = 3;
    const int64_t b_submit_ns = cfg.step_ns;
    struct harness h;
    struct probe a, b;
    harness_init(&h, &cfg);
    harness_submit(&h, &a, n_a, 0);
    harness_run_until(&h, b_submit_ns);
    harness_submit(&h, &b, n_b, b_submit_ns);
    harness_run_to_idle(&h);

    const int64_t b_first_ns = b_submit_ns + cfg.ttft_ns; /* == a's first step end */
    CHECK_EQ_INT(b.first_token_ns, b_first_ns);
    CHECK_EQ_INT(b.last_token_ns, b_first_ns + (n_b - 1) * cfg.step_ns);
}

/* With one slot, a runs and b waits in the queue. Cancelling a mid-decode gives its slot to b
 * at the cancel time, so b's first token is ttft after the cancel (not after a would have
 * ended), and its second one step later (the in-flight step a left is over before b's prefill
 * is). a gets no further tokens and no on_finish; cancelling an idle stream changes nothing. */
static void test_cancel_frees_slot(void)
{
    const struct mock_engine_config cfg = {.ttft_ns = 50 * NS_PER_MS,
                                           .step_ns = 10 * NS_PER_MS,
                                           .per_seq_ns = 0,
                                           .max_batch = 1,
                                           .tokens_per_step = 1};
    const int64_t n_b = 2;
    const int64_t cancel_ns = 75 * NS_PER_MS; /* a is decoding, mid-step */
    struct harness h;
    struct probe a, b;
    harness_init(&h, &cfg);
    harness_submit(&h, &a, 1000, 0);
    harness_submit(&h, &b, n_b, 0);
    harness_run_until(&h, cancel_ns);
    harness_cancel(&h, &a, cancel_ns);
    CHECK_EQ_INT(a.s.state, MOCK_STREAM_IDLE);
    const int64_t a_tokens_at_cancel = a.tokens;
    harness_run_to_idle(&h);

    CHECK_EQ_INT(b.first_token_ns, cancel_ns + cfg.ttft_ns);
    CHECK_EQ_INT(b.last_token_ns, cancel_ns + cfg.ttft_ns + (n_b - 1) * cfg.step_ns);
    CHECK_EQ_INT(h.engine.stats.cancelled, 1);
    CHECK_EQ_INT(a.tokens, a_tokens_at_cancel);
    CHECK_EQ_INT(a.finishes, 0);

    harness_cancel(&h, &a, h.now_ns + 1000 * NS_PER_MS);
    CHECK_EQ_INT(h.engine.stats.cancelled, 1);
}

/* The engine tolerates a late timer up to max_lag = step/2 (mock_engine_init): serviced within
 * that, an event takes effect at its scheduled time, so the step grid ttft + k*step does not
 * drift. Serviced later (a stalled loop), the event takes effect at now - step/2: the stalled
 * advance emits one token, not a burst of catch-up tokens (so three advances, three tokens),
 * and the next step ends at now - step/2 + step, still in the future. */
static void test_late_timer_and_stall(void)
{
    const struct mock_engine_config cfg = {.ttft_ns = 50 * NS_PER_MS,
                                           .step_ns = 10 * NS_PER_MS,
                                           .per_seq_ns = 0,
                                           .max_batch = 4,
                                           .tokens_per_step = 1};
    const int64_t max_lag_ns = cfg.step_ns / 2;
    struct harness h;
    struct probe a;
    harness_init(&h, &cfg);
    harness_submit(&h, &a, 100, 0);

    /* Token 1 (due at ttft) serviced 2 ms late, token 2 (due a step later) 3 ms late: both
     * within max_lag, so the next due times stay on the grid. */
    harness_advance(&h, cfg.ttft_ns + 2 * NS_PER_MS);
    CHECK_EQ_INT(mock_engine_next_due_ns(&h.engine), cfg.ttft_ns + cfg.step_ns);
    harness_advance(&h, cfg.ttft_ns + cfg.step_ns + 3 * NS_PER_MS);
    CHECK_EQ_INT(mock_engine_next_due_ns(&h.engine), cfg.ttft_ns + 2 * cfg.step_ns);

    /* Token 3 was due at ttft + 2*step; the loop comes back 13 steps later. */
    const int64_t stall_ns = cfg.ttft_ns + 15 * cfg.step_ns;
    harness_advance(&h, stall_ns);
    CHECK_EQ_INT(a.tokens, 3);
    CHECK_EQ_INT(mock_engine_next_due_ns(&h.engine), stall_ns - max_lag_ns + cfg.step_ns);
}

/* With ttft 0 and max_tokens 1, a stream's only token is its prefill token: it finishes at
 * the instant it is admitted, never enters a decode step, and frees its slot for the next.
 * More streams than slots all complete at time 0 and leave nothing scheduled. */
static void test_one_token_zero_ttft(void)
{
    const struct mock_engine_config cfg = {.ttft_ns = 0,
                                           .step_ns = 10 * NS_PER_MS,
                                           .per_seq_ns = 0,
                                           .max_batch = 2,
                                           .tokens_per_step = 1};
    struct harness h;
    struct probe p[3]; /* one more than max_batch */
    const int n_streams = (int)(sizeof p / sizeof p[0]);
    harness_init(&h, &cfg);
    for (int i = 0; i < n_streams; i++)
        harness_submit(&h, &p[i], 1, 0);
    harness_run_until(&h, 0);

    for (int i = 0; i < n_streams; i++) {
        CHECK_EQ_INT(p[i].tokens, 1);
        CHECK_EQ_INT(p[i].finishes, 1);
        CHECK_EQ_INT(p[i].s.state, MOCK_STREAM_IDLE);
    }
    CHECK_EQ_INT(h.engine.stats.max_step_streams, 0);
    CHECK_EQ_INT(mock_engine_next_due_ns(&h.engine), INT64_MAX);
}

/* With tokens_per_step K a lone stream still gets its first token alone at ttft (the prefill
 * token), then K tokens at the end of each decode step in one hook call, and the last step
 * only what is left: max_tokens 10 with K 4 is 1 at ttft, 4 at ttft + step, 4 at
 * ttft + 2*step and 1 at ttft + 3*step, so it finishes at ttft + ceil((10-1)/4) * step. The
 * hook sees emitted_tokens already advanced past the call's tokens. Exact multiples (1 + 2K
 * tokens) end on a full step; K above what is left gives what is left. */
static void test_tokens_per_step_single(void)
{
    const int64_t k = 4;
    const struct mock_engine_config cfg = {.ttft_ns = 50 * NS_PER_MS,
                                           .step_ns = 10 * NS_PER_MS,
                                           .per_seq_ns = 0,
                                           .max_batch = 4,
                                           .tokens_per_step = k};
    struct harness h;
    struct probe p;
    harness_init(&h, &cfg);
    harness_submit(&h, &p, 10, 0);
    harness_run_to_idle(&h);

    const int64_t want_n[] = {1, 4, 4, 1};
    const int64_t want_calls = (int64_t)(sizeof want_n / sizeof want_n[0]);
    CHECK_EQ_INT(p.calls, want_calls);
    int64_t last = 0;
    for (int64_t i = 0; i < want_calls && i < p.calls; i++) {
        last += want_n[i];
        CHECK_EQ_INT(p.call_ns[i], cfg.ttft_ns + i * cfg.step_ns);
        CHECK_EQ_INT(p.call_tokens[i], want_n[i]);
        CHECK_EQ_INT(p.call_last[i], last);
    }
    CHECK_EQ_INT(p.tokens, 10);
    CHECK_EQ_INT(p.last_token_ns, cfg.ttft_ns + ((10 - 1 + k - 1) / k) * cfg.step_ns);
    CHECK_EQ_INT(p.finishes, 1);
    CHECK_EQ_INT(h.engine.stats.tokens, 10);

    struct probe exact, short_one;
    harness_init(&h, &cfg);
    harness_submit(&h, &exact, 1 + 2 * k, 0);
    harness_run_to_idle(&h);
    CHECK_EQ_INT(exact.calls, 3);
    CHECK_EQ_INT(exact.call_tokens[2], k);
    CHECK_EQ_INT(exact.last_token_ns, cfg.ttft_ns + 2 * cfg.step_ns);
    CHECK_EQ_INT(exact.finishes, 1);

    harness_init(&h, &cfg);
    harness_submit(&h, &short_one, 3, 0);
    harness_run_to_idle(&h);
    CHECK_EQ_INT(short_one.calls, 2);
    CHECK_EQ_INT(short_one.call_tokens[1], 2);
    CHECK_EQ_INT(short_one.last_token_ns, cfg.ttft_ns + cfg.step_ns);
}

/* Batching with tokens_per_step: the step's length depends on how many streams are in it, not
 * on K, so K multiplies throughput. a (7 tokens) and b (2 tokens) share the first step, which
 * costs step + 2*per_seq: a gets 3 tokens, b only the 1 it has left and finishes. a's second
 * step is alone (step + per_seq) and gives its last 3. Tokens per call and their times follow
 * exactly; the engine counts 9 tokens and a decode batch of 2. */
static void test_tokens_per_step_batch(void)
{
    const int64_t k = 3;
    const struct mock_engine_config cfg = {.ttft_ns = 50 * NS_PER_MS,
                                           .step_ns = 10 * NS_PER_MS,
                                           .per_seq_ns = 1 * NS_PER_MS,
                                           .max_batch = 4,
                                           .tokens_per_step = k};
    struct harness h;
    struct probe a, b;
    harness_init(&h, &cfg);
    harness_submit(&h, &a, 7, 0);
    harness_submit(&h, &b, 2, 0);
    harness_run_to_idle(&h);

    const int64_t step1_end_ns = cfg.ttft_ns + cfg.step_ns + 2 * cfg.per_seq_ns;
    const int64_t step2_end_ns = step1_end_ns + cfg.step_ns + cfg.per_seq_ns;
    CHECK_EQ_INT(a.calls, 3);
    CHECK_EQ_INT(a.call_ns[0], cfg.ttft_ns);
    CHECK_EQ_INT(a.call_tokens[0], 1);
    CHECK_EQ_INT(a.call_ns[1], step1_end_ns);
    CHECK_EQ_INT(a.call_tokens[1], k);
    CHECK_EQ_INT(a.call_ns[2], step2_end_ns);
    CHECK_EQ_INT(a.call_tokens[2], k);
    CHECK_EQ_INT(a.tokens, 7);
    CHECK_EQ_INT(b.calls, 2);
    CHECK_EQ_INT(b.call_ns[1], step1_end_ns);
    CHECK_EQ_INT(b.call_tokens[1], 1);
    CHECK_EQ_INT(b.finishes, 1);
    CHECK_EQ_INT(h.engine.stats.tokens, 9);
    CHECK_EQ_INT(h.engine.stats.finished, 2);
    CHECK_EQ_INT(h.engine.stats.max_step_streams, 2);
}

/* tokens_per_step below 1 is out of range, like a non-positive step. */
static void test_tokens_per_step_invalid(void)
{
    const struct mock_engine_config cfg = {.ttft_ns = 0,
                                           .step_ns = 10 * NS_PER_MS,
                                           .per_seq_ns = 0,
                                           .max_batch = 1,
                                           .tokens_per_step = 0};
    struct mock_engine e;
    struct mock_engine_hooks hooks = {on_tokens, on_finish, NULL};
    CHECK_EQ_INT(mock_engine_init(&e, &cfg, &hooks, 0), -1);
}

static int request_equal(const struct mock_http_request *a, const struct mock_http_request *b)
{
    return a->method == b->method && strcmp(a->path, b->path) == 0 &&
           a->minor_version == b->minor_version && a->keep_alive == b->keep_alive &&
           a->expect_continue == b->expect_continue && a->body_bytes == b->body_bytes &&
           a->head_bytes == b->head_bytes && a->authorization_at == b->authorization_at &&
           a->authorization_bytes == b->authorization_bytes;
}

/* Parsers do no I/O, so how the head arrives must not matter: growing the buffer one byte at a
 * time first succeeds exactly when the blank line arrives, i.e. at strlen(head), and then gives
 * the request that parsing the whole buffer gives. The expected fields come from the head
 * text: query stripped from the path, Content-Length = the body's length, "keep-alive" found
 * in a token list, Expect: 100-continue, and where the Authorization value is, trimmed. */
static void test_http_head_bytewise(void)
{
    const char *head = "POST /v1/completions?x=1 HTTP/1.1\r\n"
                       "Host: a\r\n"
                       "Content-Length: 12\r\n"
                       "Connection: keep-alive, Upgrade\r\n"
                       "Expect: 100-continue\r\n"
                       "authorization:  Bearer k-1 \r\n"
                       "\r\n";
    const char *body = "{\"prompt\":1}";
    char request[512];
    snprintf(request, sizeof request, "%s%s", head, body);
    const size_t request_bytes = strlen(request);

    struct mock_http_request whole, bytewise;
    size_t scanned_bytes = 0;
    CHECK_EQ_INT(mock_http_parse_head(request, request_bytes, &scanned_bytes, &whole), 1);
    CHECK_EQ_INT(whole.head_bytes, strlen(head));

    scanned_bytes = 0;
    int rc = 0;
    size_t len;
    for (len = 1; len <= request_bytes; len++) {
        rc = mock_http_parse_head(request, len, &scanned_bytes, &bytewise);
        if (rc != 0)
            break;
    }
    CHECK_EQ_INT(rc, 1);
    CHECK_EQ_INT(len, whole.head_bytes);
    CHECK_EQ_INT(bytewise.head_bytes, whole.head_bytes);
    CHECK(request_equal(&bytewise, &whole));
    CHECK_EQ_INT(bytewise.method, MOCK_HTTP_POST);
    CHECK_EQ_STR(bytewise.path, "/v1/completions");
    CHECK_EQ_INT(bytewise.body_bytes, (int64_t)strlen(body));
    CHECK(bytewise.keep_alive);
    CHECK(bytewise.expect_continue);
    CHECK_EQ_INT(bytewise.authorization_bytes, 10);
    CHECK(memcmp(request + bytewise.authorization_at, "Bearer k-1", 10) == 0);
}

/* Each malformed or unsupported head maps to the status mock_http.h promises for it. The
 * Content-Length limit is probed on both sides of MOCK_HTTP_MAX_BODY_BYTES. */
static void test_http_head_errors(void)
{
    static const struct {
        const char *what; /* named in the failure message */
        const char *head;
        int want;
    } cases[] = {
        {"HTTP/2.0", "GET / HTTP/2.0\r\n\r\n", -505},
        {"not HTTP", "GET / XTTP/1.1\r\n\r\n", -400},
        {"no version", "GET /\r\n\r\n", -400},
        {"folded header", "GET / HTTP/1.1\r\n folded\r\n\r\n", -400},
        {"lengths disagree", "GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
         -400},
        {"chunked request", "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", -411},
        {"body over 16 MiB", "GET / HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n", -413},
        {"negative length", "GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", -400},
    };
    struct mock_http_request req;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t scanned_bytes = 0;
        int got = mock_http_parse_head(cases[i].head, strlen(cases[i].head), &scanned_bytes, &req);
        if (got != cases[i].want)
            fprintf(stderr, "http error case: %s\n", cases[i].what);
        CHECK_EQ_INT(got, cases[i].want);
    }

    char head[128];
    size_t scanned_bytes = 0;
    snprintf(head, sizeof head, "POST / HTTP/1.1\r\nContent-Length: %d\r\n\r\n",
             MOCK_HTTP_MAX_BODY_BYTES);
    CHECK_EQ_INT(mock_http_parse_head(head, strlen(head), &scanned_bytes, &req), 1);
    CHECK_EQ_INT(req.body_bytes, MOCK_HTTP_MAX_BODY_BYTES);
    scanned_bytes = 0;
    snprintf(head, sizeof head, "POST / HTTP/1.1\r\nContent-Length: %d\r\n\r\n",
             MOCK_HTTP_MAX_BODY_BYTES + 1);
    CHECK_EQ_INT(mock_http_parse_head(head, strlen(head), &scanned_bytes, &req), -413);
}

/* Persistence defaults: HTTP/1.0 closes unless asked to keep alive; HTTP/1.1 keeps alive
 * unless told to close, and the Connection token is matched case-insensitively. */
static void test_http_keep_alive(void)
{
    struct mock_http_request req;
    const char *http10 = "GET /v1/models HTTP/1.0\r\n\r\n";
    size_t scanned_bytes = 0;
    CHECK_EQ_INT(mock_http_parse_head(http10, strlen(http10), &scanned_bytes, &req), 1);
    CHECK(!req.keep_alive);
    CHECK_EQ_INT(req.authorization_bytes, 0);

    const char *http11_close = "GET /v1/models HTTP/1.1\r\nconnection: Close\r\n\r\n";
    scanned_bytes = 0;
    CHECK_EQ_INT(mock_http_parse_head(http11_close, strlen(http11_close), &scanned_bytes, &req), 1);
    CHECK(!req.keep_alive);
}

/* A head with no blank line within MOCK_HTTP_MAX_HEAD_BYTES is refused with 431 rather than
 * buffered without bound. */
static void test_http_head_too_large(void)
{
    const size_t len = MOCK_HTTP_MAX_HEAD_BYTES + 4096;
    const char *start = "GET / HTTP/1.1\r\nX: ";
    char *big = malloc(len);
    if (!big) {
        CHECK(big != NULL);
        return;
    }
    memset(big, 'a', len);
    memcpy(big, start, strlen(start));
    struct mock_http_request req;
    size_t scanned_bytes = 0;
    CHECK_EQ_INT(mock_http_parse_head(big, len, &scanned_bytes, &req), -431);
    free(big);
}

int main(void)
{
    test_single_stream();
    test_two_waves();
    test_per_seq_cost();
    test_prefill_tie_joins_step();
    test_cancel_frees_slot();
    test_late_timer_and_stall();
    test_one_token_zero_ttft();
    test_tokens_per_step_single();
    test_tokens_per_step_batch();
    test_tokens_per_step_invalid();
    test_http_head_bytewise();
    test_http_head_errors();
    test_http_keep_alive();
    test_http_head_too_large();
    return check_report("mock_engine");
}
