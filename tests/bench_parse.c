/* bench_parse.c: what one rank spends per streamed token: a realistic vLLM or SGLang chat stream
 * fed in fixed-size reads through sse_parser_feed and api_parse_event_memo, as xfer.c does, timed
 * against the scan alone and cJSON. Knows nothing of curl or sockets; built, but not a ctest test. */
#include "tokstorm/api.h"
#include "tokstorm/api_internal.h"
#include "tokstorm/clock.h"
#include "tokstorm/sse.h"

#include <getopt.h>
#include <sys/resource.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum bench_path { PATH_SSE_ONLY, PATH_MEMO, PATH_FAST, PATH_CJSON };

static const char *const path_names[] = {"sse only", "sse + stream memo (xfer.c)",
                                         "sse + api_parse_event (scan)", "sse + cJSON reading"};

struct bench_options {
    long events;          /* events to parse per path */
    long tokens;          /* content chunks per request (max_tokens) */
    size_t read_bytes;    /* bytes per sse_parser_feed, as one recv() would hand them over */
    const char *server;   /* "vllm" or "sglang": whose chunk layout */
    int continuous_usage; /* usage on every chunk (vLLM continuous_usage_stats) */
    int repeat;           /* timed runs per path; the fastest is reported */
    int only;             /* -1, or the one reading to time (for a profiler): PATH_MEMO,
                             PATH_FAST or PATH_CJSON */
};

/* What the callback adds up, so that nothing is optimised away and the two readings can be
 * compared: they must count the same. */
struct bench_totals {
    long events;
    long content;
    long reasoning;
    long finished;
    long done;
    long errors;
    int64_t completion_tokens;
};

struct bench_ctx {
    enum bench_path path;
    enum ts_api_kind kind;
    struct bench_totals totals;
    struct ts_api_memo memo; /* the request's, as in struct ts_xfer */
};

static int on_event(void *user, const struct ts_sse_event *ev)
{
    struct bench_ctx *ctx = user;
    struct ts_api_chunk chunk;
    ctx->totals.events++;
    if (ctx->path == PATH_SSE_ONLY || ev->data_len == 0)
        return 0;
    int rc = ctx->path == PATH_MEMO
                 ? api_parse_event_memo(ctx->kind, ev->data, ev->data_len, &ctx->memo, &chunk)
             : ctx->path == PATH_FAST
                 ? api_parse_event(ctx->kind, ev->data, ev->data_len, &chunk)
                 : api_parse_event_cjson(ctx->kind, ev->data, ev->data_len, &chunk);
    ctx->totals.errors += rc != 0 || chunk.error;
    ctx->totals.done += chunk.done;
    ctx->totals.content += chunk.content_pieces;
    ctx->totals.reasoning += chunk.reasoning_pieces;
    ctx->totals.finished += chunk.finished;
    if (chunk.has_usage)
        ctx->totals.completion_tokens += chunk.completion_tokens;
    return 0;
}

struct scan_count {
    long events, scanned;
};

static int count_scanned(void *user, const struct ts_sse_event *ev)
{
    struct scan_count *count = user;
    struct ts_api_chunk chunk;
    count->events++;
    count->scanned += api_scan_event(TS_API_CHAT, ev->data, ev->data_len, &chunk) == 0;
    return 0;
}

struct text {
    char *bytes;
    size_t len, cap;
};

static void text_append(struct text *t, const char *s, size_t n)
{
    if (t->len + n > t->cap) {
        t->cap = (t->len + n) * 2;
        t->bytes = realloc(t->bytes, t->cap);
        if (t->bytes == NULL) {
            fprintf(stderr, "bench_parse: out of memory\n");
            exit(1);
        }
    }
    memcpy(t->bytes + t->len, s, n);
    t->len += n;
}

/* Token texts as servers escape them: mostly plain words, some newlines, quotes, non-ASCII
 * (raw UTF-8 from vLLM's pydantic, \u escapes from servers that use ensure_ascii). */
/* clang-format off */
static const char *const token_texts[] = {
    " the", " of", " and", " to", " a", " in", " is", " that", " for", " it", ",", ".", " model",
    " token", "\\n", "\\n\\n", " \\\"", " caf\xC3\xA9", " \\u00e9t\\u00e9", " \xE4\xB8\xAD",
    " with", " be", " server", " as", " on", " stream", " benchmark", " throughput"};
/* clang-format on */

static void append_event(struct text *stream, const char *json)
{
    text_append(stream, "data: ", 6);
    text_append(stream, json, strlen(json));
    text_append(stream, "\n\n", 2);
}

/* One request's whole response body: role chunk, content chunks, finish chunk, usage chunk,
 * [DONE]. */
static void build_stream(const struct bench_options *o, struct text *stream)
{
    int sglang = strcmp(o->server, "sglang") == 0;
    const char *prefix =
        sglang
            ? "{\"id\":\"0f5c2e8a1b7d4c3e9a6b5d4c3e2f1a0b\",\"object\":\"chat.completion.chunk\","
              "\"created\":1718000000,\"model\":\"default\","
            : "{\"id\":\"chatcmpl-8c6b0f2d9a3e4b1c8f7e6d5c4b3a2910\",\"object\":\"chat."
              "completion.chunk\",\"created\":1718000000,\"model\":\"meta-llama/"
              "Llama-3.1-8B-Instruct\",";
    char head[256], json[1024], usage[160];
    snprintf(head, sizeof head, "%s\"choices\":[{\"index\":0,", prefix);
    const char *tail = sglang ? "],\"usage\":null}" : "]}";

    snprintf(json, sizeof json,
             "%s\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,"
             "\"finish_reason\":null}%s",
             head, tail);
    append_event(stream, json);
    for (long i = 0; i < o->tokens; i++) {
        const char *tok =
            token_texts[(size_t)(i * 7 + i / 5) % (sizeof token_texts / sizeof token_texts[0])];
        const char *end = tail;
        if (o->continuous_usage) {
            snprintf(usage, sizeof usage,
                     "],\"usage\":{\"prompt_tokens\":128,\"total_tokens\":%ld,"
                     "\"completion_tokens\":%ld}}",
                     129 + i, i + 1);
            end = usage;
        }
        if (sglang)
            snprintf(json, sizeof json,
                     "%s\"delta\":{\"role\":null,\"content\":\"%s\",\"reasoning_content\":null,"
                     "\"tool_calls\":null},\"logprobs\":null,\"finish_reason\":null,"
                     "\"matched_stop\":null}%s",
                     head, tok, end);
        else
            snprintf(json, sizeof json,
                     "%s\"delta\":{\"content\":\"%s\"},\"logprobs\":null,\"finish_reason\":null}%s",
                     head, tok, end);
        append_event(stream, json);
    }
    snprintf(json, sizeof json,
             "%s\"delta\":{\"content\":\"\"},\"logprobs\":null,\"finish_reason\":\"length\","
             "\"stop_reason\":null}%s",
             head, tail);
    append_event(stream, json);
    snprintf(json, sizeof json,
             "%s\"choices\":[],\"usage\":{\"prompt_tokens\":128,\"total_tokens\":%ld,"
             "\"completion_tokens\":%ld}}",
             prefix, 128 + o->tokens, o->tokens);
    append_event(stream, json);
    append_event(stream, "[DONE]");
}

/* CPU time of this process (user + system), since a shared machine's wall clock also counts the
 * time other processes held the core; the target is stated in CPU time anyway. */
static int64_t cpu_now_ns(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
           ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

struct timing {
    int64_t wall_ns, cpu_ns;
    long events;
};

/* Feeds the stream as one request after another until at least o->events events were parsed. */
static struct timing run_path(const struct bench_options *o, const struct text *stream,
                              struct ts_sse_parser *sse, struct bench_ctx *ctx)
{
    long events0 = ctx->totals.events;
    int64_t wall0_ns = clock_now_ns(), cpu0_ns = cpu_now_ns();
    while (ctx->totals.events - events0 < o->events) {
        sse_parser_reset(sse);
        api_memo_reset(&ctx->memo);
        for (size_t off = 0; off < stream->len; off += o->read_bytes) {
            size_t n = stream->len - off < o->read_bytes ? stream->len - off : o->read_bytes;
            if (sse_parser_feed(sse, stream->bytes + off, n, on_event, ctx) != 0) {
                fprintf(stderr, "bench_parse: the SSE parser failed\n");
                exit(1);
            }
        }
    }
    return (struct timing){clock_now_ns() - wall0_ns, cpu_now_ns() - cpu0_ns,
                           ctx->totals.events - events0};
}

/* The best of o->repeat runs: on a shared machine the fastest run is the one least disturbed. */
static struct timing time_path(const struct bench_options *o, const struct text *stream,
                               struct ts_sse_parser *sse, enum bench_path path,
                               struct bench_totals *totals)
{
    static struct bench_ctx ctx; /* the memo is big for a stack frame */
    ctx = (struct bench_ctx){path, TS_API_CHAT, {0}, {0}};
    struct bench_options warm = *o;
    warm.events = o->tokens; /* one request untimed: caches and the parser's buffers */
    run_path(&warm, stream, sse, &ctx);
    struct timing best = {0, 0, 0};
    for (int r = 0; r < o->repeat; r++) {
        ctx.totals = (struct bench_totals){0};
        struct timing t = run_path(o, stream, sse, &ctx);
        if (best.events == 0 || t.wall_ns * best.events < best.wall_ns * t.events)
            best = t;
    }
    *totals = ctx.totals;
    return best;
}

static double per_event(int64_t ns, long events)
{
    return (double)ns / (double)events;
}

static void usage_exit(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [--events N] [--tokens N] [--read-bytes N] [--server vllm|sglang]\n"
            "          [--continuous-usage] [--repeat N] [--only memo|scan|cjson]\n",
            argv0);
    exit(2);
}

static void parse_options(int argc, char **argv, struct bench_options *o)
{
    static const struct option longopts[] = {
        {"events", required_argument, NULL, 'e'},     {"tokens", required_argument, NULL, 't'},
        {"read-bytes", required_argument, NULL, 'r'}, {"server", required_argument, NULL, 's'},
        {"continuous-usage", no_argument, NULL, 'u'}, {"only", required_argument, NULL, 'o'},
        {"repeat", required_argument, NULL, 'n'},     {NULL, 0, NULL, 0},
    };
    *o = (struct bench_options){1000000, 1000, 16384, "vllm", 0, 3, -1};
    int c;
    while ((c = getopt_long(argc, argv, "e:t:r:s:uo:n:", longopts, NULL)) != -1) {
        switch (c) {
        case 'e':
            o->events = strtol(optarg, NULL, 10);
            break;
        case 't':
            o->tokens = strtol(optarg, NULL, 10);
            break;
        case 'r':
            o->read_bytes = (size_t)strtoul(optarg, NULL, 10);
            break;
        case 's':
            o->server = optarg;
            break;
        case 'u':
            o->continuous_usage = 1;
            break;
        case 'n':
            o->repeat = (int)strtol(optarg, NULL, 10);
            break;
        case 'o':
            o->only = strcmp(optarg, "memo") == 0    ? PATH_MEMO
                      : strcmp(optarg, "scan") == 0  ? PATH_FAST
                      : strcmp(optarg, "cjson") == 0 ? PATH_CJSON
                                                     : -2;
            break;
        default:
            usage_exit(argv[0]);
        }
    }
    if (optind != argc || o->only == -2 || o->repeat < 1 || o->events < 1 || o->tokens < 1 ||
        o->read_bytes < 1 || (strcmp(o->server, "vllm") != 0 && strcmp(o->server, "sglang") != 0))
        usage_exit(argv[0]);
}

int main(int argc, char **argv)
{
    struct bench_options o;
    parse_options(argc, argv, &o);

    struct text stream = {NULL, 0, 0};
    build_stream(&o, &stream);
    long per_request = o.tokens + 4;

    struct ts_sse_parser sse;
    if (sse_parser_init(&sse, 1 << 20) != 0)
        return 1;
    /* How many of one request's events the scan reads without cJSON (all but [DONE], which the
     * sentinel check answers first). */
    struct scan_count count = {0, 0};
    if (sse_parser_feed(&sse, stream.bytes, stream.len, count_scanned, &count) != 0)
        return 1;

    printf("command:");
    for (int i = 0; i < argc; i++)
        printf(" %s", argv[i]);
    printf("\nstream: %s chat, %ld events per request (%ld content), %.0f bytes per event on "
           "average, %zu-byte reads%s; best of %d runs\n",
           o.server, per_request, o.tokens, (double)stream.len / (double)per_request, o.read_bytes,
           o.continuous_usage ? ", usage on every chunk" : "", o.repeat);
    printf("the scan reads %ld of the %ld events of a request itself\n", count.scanned,
           count.events);

    struct bench_totals totals[4] = {{0}};
    struct timing t[4] = {{0}};
    for (int path = PATH_SSE_ONLY; path <= PATH_CJSON; path++) {
        if (o.only >= 0 && path != o.only && path != PATH_SSE_ONLY)
            continue;
        t[path] = time_path(&o, &stream, &sse, (enum bench_path)path, &totals[path]);
        double wall = per_event(t[path].wall_ns, t[path].events);
        double cpu = per_event(t[path].cpu_ns, t[path].events);
        printf("%-30s %8ld events: %9.0f events/s, %6.1f ns/event wall, %6.1f ns/event CPU",
               path_names[path], t[path].events, 1e9 / wall, wall, cpu);
        if (path != PATH_SSE_ONLY)
            printf(" (%.1f ns interpreting)",
                   wall - per_event(t[PATH_SSE_ONLY].wall_ns, t[PATH_SSE_ONLY].events));
        printf("\n");
    }
    int same = 1;
    if (o.only < 0) {
        const struct bench_totals *f = &totals[PATH_FAST], *r = &totals[PATH_CJSON];
        for (int path = PATH_MEMO; path <= PATH_FAST; path++) {
            f = &totals[path];
            same &= f->events == r->events && f->content == r->content &&
                    f->reasoning == r->reasoning && f->finished == r->finished &&
                    f->done == r->done && f->errors == r->errors &&
                    f->completion_tokens == r->completion_tokens;
        }
        printf("totals %s: %ld content pieces, %ld finished, %ld [DONE], %ld errors, %lld usage "
               "tokens\n",
               same ? "agree" : "DIFFER", f->content, f->finished, f->done, f->errors,
               (long long)f->completion_tokens);
        double sse_only = per_event(t[PATH_SSE_ONLY].wall_ns, t[PATH_SSE_ONLY].events);
        double cjson = per_event(t[PATH_CJSON].wall_ns, t[PATH_CJSON].events) - sse_only;
        printf("interpretation: scan %.1fx, memo %.1fx faster than cJSON\n",
               cjson / (per_event(t[PATH_FAST].wall_ns, t[PATH_FAST].events) - sse_only),
               cjson / (per_event(t[PATH_MEMO].wall_ns, t[PATH_MEMO].events) - sse_only));
    }
    sse_parser_free(&sse);
    free(stream.bytes);
    return same ? 0 : 1;
}
