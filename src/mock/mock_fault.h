/* mock_fault.h: the faults tokstorm-mock can inject (--fault NAME=P), and the seeded decision of
 * which one, if any, each connection and each generation request gets. Pure: no sockets, no
 * clocks, no I/O; the connection code carries the faults out. */
#ifndef TOKSTORM_MOCK_FAULT_H
#define TOKSTORM_MOCK_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum mock_fault {
    MOCK_FAULT_NONE = 0,
    /* Connection faults: decided once per accepted connection. */
    MOCK_FAULT_REFUSE, /* shut the connection at once (FIN), never answer */
    MOCK_FAULT_RESET,  /* reset it at once (RST, SO_LINGER 0) */
    /* Request faults: decided once per generation request (POST .../completions). */
    MOCK_FAULT_429,         /* 429 with Retry-After and a JSON error body */
    MOCK_FAULT_500,         /* 500 with a JSON error body */
    MOCK_FAULT_503,         /* 503 with a JSON error body */
    MOCK_FAULT_CLOSE,       /* stream: close the socket mid-stream */
    MOCK_FAULT_STALL,       /* stream: send nothing for the stall time mid-stream */
    MOCK_FAULT_MALFORMED,   /* stream: one event mid-stream whose JSON is cut short */
    MOCK_FAULT_ERROR_EVENT, /* stream: one {"error": ...} event mid-stream */
    MOCK_FAULT_SPLIT,       /* stream: the whole response written one byte per write */
    MOCK_FAULT_HUGE_EVENT,  /* stream: one content event of the huge size mid-stream */
    MOCK_FAULT_NO_FINISH,   /* stream: every token, then silence on an open connection */
    MOCK_FAULT_NOT_SSE,     /* stream: a whole application/json answer instead of SSE */
    MOCK_FAULT__COUNT
};

#define MOCK_FAULT_FIRST_REQUEST MOCK_FAULT_429

struct mock_fault_config {
    double prob[MOCK_FAULT__COUNT]; /* chance of each fault per decision, 0..1 ([0] unused) */
    uint64_t seed;                  /* --fault-seed */
    int64_t skip;                   /* the first skip connections and requests are spared */
    int64_t stall_ns;               /* how long the stall fault sends nothing */
    int64_t huge_event_bytes;       /* content bytes of the huge event */
};

/* The decisions of one server (one worker). Zeroed by mock_fault_init. */
struct mock_fault_state {
    struct mock_fault_config cfg;
    uint64_t rng;                        /* splitmix64 state */
    int64_t connections;                 /* connection decisions made */
    int64_t requests;                    /* request decisions made */
    int64_t injected[MOCK_FAULT__COUNT]; /* faults handed out, by kind */
};

/* Defaults: no fault, seed 1, skip 0, stall 2 s, huge event 4,000,000 bytes. */
void mock_fault_config_init(struct mock_fault_config *cfg);

/* "refuse", "429", "error-event", ...; NULL for MOCK_FAULT_NONE or out of range. */
const char *mock_fault_name(enum mock_fault f);

/* Whether f only makes sense in an SSE stream (a non-streaming request drawing one is answered
 * normally). */
bool mock_fault_stream_only(enum mock_fault f);

/* Parses "NAME=P[,NAME=P...]" into cfg->prob, P a probability ("0.25") or a percentage
 * ("25%"); a name given again takes the new value. Returns 0, or -1 with a message in err. */
int mock_fault_parse(const char *spec, struct mock_fault_config *cfg, char *err, size_t err_len);

/* Checks that the connection faults' chances sum to at most 1, and the request faults' too.
 * Returns 0, or -1 with a message in err. */
int mock_fault_check(const struct mock_fault_config *cfg, char *err, size_t err_len);

/* Whether any fault has a chance. */
bool mock_fault_any(const struct mock_fault_config *cfg);

/* Prepares st. worker (0-based) picks a separate random sequence per --workers process. */
void mock_fault_init(struct mock_fault_state *st, const struct mock_fault_config *cfg,
                     uint64_t worker);

/* One decision for a newly accepted connection: NONE, REFUSE or RESET. One draw each, in
 * order: the same seed gives the same sequence of decisions. */
enum mock_fault mock_fault_pick_connection(struct mock_fault_state *st);

/* One decision for a generation request: NONE or a request fault. A stream-only fault drawn
 * for a non-streaming request gives NONE (and is not counted). */
enum mock_fault mock_fault_pick_request(struct mock_fault_state *st, bool stream);

/* The token after which a mid-stream fault acts: half of max_tokens, rounded up (>= 1). */
int64_t mock_fault_trigger_token(int64_t max_tokens);

#endif
