/* stats.h: what one rank measures in one level: counters, latency histograms and the
 * per-request rows, each with its merge. Plain structs; no MPI, no I/O, no clocks.
 *
 * Everything in struct ts_level_stats is uint64_t so that ranks merge it with one
 * MPI_Reduce(MPI_SUM) over the same layout; the extremes beside it are merged with
 * min/max (stats_extremes_pack turns them into one array for a single MPI_MAX). */
#ifndef TOKSTORM_STATS_H
#define TOKSTORM_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "tokstorm/hist.h"

/* Why a request failed. Order is the file format's: append, never renumber. */
enum ts_err_class {
    TS_ERR_NONE = 0,         /* success */
    TS_ERR_HTTP_4XX = 1,     /* the server answered 4xx */
    TS_ERR_HTTP_5XX = 2,     /* the server answered 5xx */
    TS_ERR_CONNECT = 3,      /* no connection, or it failed before any response byte */
    TS_ERR_TIMEOUT = 4,      /* --timeout expired */
    TS_ERR_TRUNCATED = 5,    /* the stream ended without [DONE] or a finish_reason */
    TS_ERR_STREAM = 6,       /* an error object inside the stream (or no memory to parse it) */
    TS_ERR_HTTP_OTHER = 7,   /* any other non-2xx status (1xx, 3xx) */
    TS_ERR_RATE_LIMITED = 8, /* the server answered 429 Too Many Requests */
    TS_ERR_RESET = 9,        /* the server reset the connection (TCP RST), at any point */
    TS_ERR_STALLED = 10,     /* no byte arrived for --stall-timeout */
    TS_ERR_MALFORMED = 11,   /* an event that is not JSON, or a 2xx answer that is not SSE */
    TS_ERR_OVERSIZED = 12,   /* an event (or line) longer than --max-event-bytes */
    TS_ERR_CANCELLED = 13,   /* in flight when an interrupted level's grace ran out */
    TS_ERR__COUNT
};

/* "http_4xx", "timeout", ... ("ok" for TS_ERR_NONE). */
const char *stats_err_class_name(int err_class);

/* One request: fixed size and pointer-free. The same layout is the MPI gather payload and
 * the HDF5 compound type. Times are seconds on the common timeline, from the run's start (a
 * double holds nanosecond resolution for a hundred days); -1 when the moment never came. */
struct ts_row {
    double scheduled_s;        /* open loop: when it was due; closed loop: handed to libcurl */
    double start_s;            /* just before the request was handed to curl */
    double first_byte_s;       /* first response byte (status line) */
    double first_token_s;      /* first event with non-empty content or reasoning */
    double first_answer_s;     /* first event with non-empty answer content (not reasoning) */
    double end_s;              /* transfer done, failed or cancelled */
    int64_t request;           /* index of the request in its stream, warm-up included */
    int64_t output_tokens;     /* usage.completion_tokens, else content events; 0 on error */
    int64_t prompt_tokens;     /* usage.prompt_tokens, else 0 */
    int64_t content_events;    /* events that carried content or reasoning */
    int64_t reasoning_events;  /* of those, the ones with reasoning and no answer content */
    int32_t rank;              /* MPI rank that sent it */
    int32_t stream;            /* global stream index, 0 .. C-1 */
    int32_t prompt_index;      /* line of the prompt in the prompts file, 0-based */
    int32_t http_status;       /* 0 when no response came */
    int32_t error_class;       /* enum ts_err_class */
    int32_t tokens_from_usage; /* 1 when output_tokens came from the server's usage */
    int32_t late;              /* open loop: it waited for a free slot (the concurrency cap) */
    int32_t recorded_events;   /* arrival times kept for it (--record-tokens), else 0 */
};

/* A growable array of rows; grows by doubling, so appends on the hot path rarely allocate. */
struct ts_rows {
    struct ts_row *items;
    size_t count, cap;
};

void rows_init(struct ts_rows *r);
/* Appends a copy of *row. Returns 0 or -1 (out of memory; the row is lost). */
int rows_append(struct ts_rows *r, const struct ts_row *row);
void rows_clear(struct ts_rows *r);
void rows_free(struct ts_rows *r);

/* With --record-tokens: the arrival times of every content event of the rows, flattened in
 * row order (row i's are the recorded_events after those of rows 0..i-1). Seconds on the
 * common timeline, like the rows' times. Grows by doubling, as the rows do. */
struct ts_event_times {
    double *t_s;
    size_t count, cap;
};

void events_init(struct ts_event_times *e);
/* Appends n arrival times given as local clock readings, as seconds from zero_ns (the local
 * reading of the timeline's zero). Returns 0, or -1 when out of memory (none appended). */
int events_append(struct ts_event_times *e, const int64_t *t_ns, size_t n, int64_t zero_ns);
/* Drops the last n times (the row they belonged to was lost). */
void events_drop_last(struct ts_event_times *e, size_t n);
void events_clear(struct ts_event_times *e);
void events_free(struct ts_event_times *e);

struct ts_counters {
    uint64_t ok;                          /* requests that succeeded */
    uint64_t err;                         /* requests that failed */
    uint64_t err_by_class[TS_ERR__COUNT]; /* failures by class ([0] unused) */
    uint64_t output_tokens;               /* of successful requests */
    uint64_t prompt_tokens;               /* of successful requests */
    uint64_t tokens_from_usage;           /* successful requests whose count came from usage */
    uint64_t rate_sum_utok_s;             /* sum over ok requests of tokens/s, in 1e-6 tok/s */
    uint64_t late;                        /* open loop: requests that waited for a slot */
    uint64_t good;                        /* ok requests within every latency objective */
    uint64_t content_events;              /* of successful requests */
    uint64_t reasoning_events;            /* of successful requests: reasoning-only events */
    uint64_t cut_off; /* streams (open loop: arrival schedules) a stop ended with requests left */
};

struct ts_level_stats {
    struct ts_counters c;
    struct ts_hist ttft;       /* first token - start */
    struct ts_hist itl;        /* gaps between content events, successful requests only */
    struct ts_hist tpot;       /* (end - first token) / (tokens - 1), requests with >= 2 tokens */
    struct ts_hist e2e;        /* end - start */
    struct ts_hist lag;        /* start - scheduled: the client's send lag */
    struct ts_hist ttft_sched; /* first token - scheduled */
    struct ts_hist e2e_sched;  /* end - scheduled */
    /* The client's own timing error, from the send stamps of a server that writes them in its
     * chunks (tokstorm-mock; see api.h); empty when no chunk had one. Successful requests
     * only. Only meaningful with the server on the same host: it is the same clock. */
    struct ts_hist stamp_delay; /* arrival - server send stamp, of every stamped content event */
    struct ts_hist ttft_error;  /* the same, of the first content event only (when stamped) */
    struct ts_hist itl_error;   /* |client gap - server gap| of consecutive stamped events */
    struct ts_hist ttft_answer; /* first answer token - start (after any reasoning) */
};

_Static_assert(sizeof(struct ts_level_stats) % sizeof(uint64_t) == 0,
               "ts_level_stats is reduced as an array of uint64_t");

/* Times here are nanoseconds on the common timeline (rank 0's clock, from the run's start).
 * Each field is merged with min or max as its comment says; a rank with no stream in the
 * level leaves the neutral value (INT64_MAX for a min, INT64_MIN for a max). */
struct ts_level_extremes {
    struct ts_hist_extremes ttft, itl, tpot, e2e, lag, ttft_sched, e2e_sched;
    struct ts_hist_extremes stamp_delay, ttft_error, itl_error, ttft_answer;
    int64_t first_start_ns;    /* min: earliest start of a measured request */
    int64_t last_end_ns;       /* max: latest end of a measured request */
    int64_t full_start_ns;     /* max: when every stream of the rank was in its measure phase */
    int64_t full_end_ns;       /* min: when the first stream of the rank ran out of requests */
    int64_t rank_start_min_ns; /* min: each rank's first request start (for the start skew) */
    int64_t rank_start_max_ns; /* max: the same, its latest */
};

#define TS_EXTREMES_PACKED 28 /* int64_t values in the packed form */

void stats_init(struct ts_level_stats *s, struct ts_level_extremes *x);

/* Adds one finished, measured request: its row and, for a success, the gaps between the
 * arrival times of its content events (token_ns[0..n_tokens-1], ascending). Failures count
 * only in err and err_by_class. A success counts as good when its TTFT and TPOT are within
 * slo_ttft_ns and slo_tpot_ns (0 = no objective). */
void stats_record(struct ts_level_stats *s, struct ts_level_extremes *x, const struct ts_row *row,
                  const int64_t *token_ns, size_t n_tokens, int64_t slo_ttft_ns,
                  int64_t slo_tpot_ns);

/* Adds the client's timing error for one finished, measured, successful request (the caller
 * passes n = 0 for any other): token_ns[i] is when content event i arrived, stamp_ns[i] when
 * the server says it sent it (0 = no stamp), both CLOCK_MONOTONIC ns of the same host. Each
 * stamped event adds its delay to stamp_delay, the first event (if stamped) to ttft_error too,
 * and each event whose predecessor is also stamped adds |arrival gap - stamp gap| to
 * itl_error. Events that share a stamp (one server write) and arrive together add 0 there. */
void stats_record_stamps(struct ts_level_stats *s, struct ts_level_extremes *x,
                         const int64_t *token_ns, const int64_t *stamp_ns, size_t n);

/* dst += src. */
void stats_merge(struct ts_level_stats *dst, struct ts_level_extremes *dst_x,
                 const struct ts_level_stats *src, const struct ts_level_extremes *src_x);

/* Extremes as TS_EXTREMES_PACKED values whose element-wise max is the merge (minima are
 * stored negated), and back. */
void stats_extremes_pack(const struct ts_level_extremes *x, int64_t out[TS_EXTREMES_PACKED]);
void stats_extremes_unpack(const int64_t in[TS_EXTREMES_PACKED], struct ts_level_extremes *x);

/* One latency distribution, in milliseconds (all 0 when nothing was recorded). */
struct ts_dist {
    uint64_t count;
    double p50, p90, p95, p99, p999, mean, min, max;
};

/* The figures of one level, as the table and the results file show them. */
struct ts_level_summary {
    int64_t concurrency; /* closed loop: C; open loop: the concurrency cap */
    double rate;         /* open loop: offered requests/s; 0 in closed loop */
    double start_s;      /* the level's synchronised start on the common timeline */
    double wall_s;       /* latest end - earliest start over all ranks, common timeline */
    uint64_t ok, err;
    uint64_t err_by_class[TS_ERR__COUNT];
    uint64_t output_tokens, prompt_tokens;
    double agg_tok_s;          /* output_tokens / wall_s */
    double per_req_tok_s;      /* mean over ok requests of output_tokens / (end - start) */
    double steady_s;           /* length of the window in which all C streams were busy */
    double steady_tokens;      /* tokens delivered in it (set by the caller: needs every rank) */
    double steady_tok_s;       /* steady_tokens / steady_s; 0 when the window is empty */
    double start_skew_s;       /* latest - earliest first request start over ranks */
    uint64_t late;             /* open loop: requests that waited for a free slot */
    uint64_t good;             /* ok requests within every objective */
    double req_s;              /* ok requests / wall_s */
    double goodput_req_s;      /* good requests / wall_s */
    double tokens_per_event;   /* output tokens / content events: > 1 when the server coalesces */
    uint64_t reasoning_events; /* content events that were reasoning only */
    uint64_t answer_events;    /* content events with answer content */
    struct ts_dist ttft, itl, tpot, e2e;
    struct ts_dist lag, ttft_sched, e2e_sched;         /* from the scheduled (due) send time */
    struct ts_dist stamp_delay, ttft_error, itl_error; /* the client's own error (count 0: no
                                                          stamps) */
    struct ts_dist ttft_answer; /* to the first answer token (count 0: no answer content) */
};

/* The steady window of merged extremes: [start, end) in common-timeline ns. Returns 0 when
 * it is empty (some stream finished before the last one began measuring). */
int stats_steady_window(const struct ts_level_extremes *x, int64_t *start_ns, int64_t *end_ns);

/* Fills everything in *out but the steady-state token figures, which need a second pass over
 * every rank's timeline (see stats_set_steady). */
void stats_summarize(const struct ts_level_stats *s, const struct ts_level_extremes *x,
                     int64_t concurrency, struct ts_level_summary *out);

/* Records the tokens delivered over all ranks in the steady window. */
void stats_set_steady(struct ts_level_summary *out, double steady_tokens);

#endif
