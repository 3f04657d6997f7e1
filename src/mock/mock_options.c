/* mock_options.c: getopt_long, defaults, validation and --help for tokstorm-mock. It knows
 * nothing of sockets or the event loop; it only turns argv into a checked mock_options. */
#include "mock_options.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "tokstorm/units.h"

#ifndef TOKSTORM_VERSION
#define TOKSTORM_VERSION "unknown"
#endif

/* Bounds that keep every later sum (a step of max_batch streams) far from int64 overflow. */
#define MOCK_MAX_DURATION_NS (INT64_C(86400) * TS_NS_PER_S)
#define MOCK_MAX_BATCH       INT64_C(1000000)
/* K events of ~250 bytes are rendered per stream per step: keep one write well under 1 MiB. */
#define MOCK_MAX_EVENTS_PER_WRITE INT64_C(1024)
/* One process per core is the useful range; this only catches typos like 10000. */
#define MOCK_MAX_WORKERS 256
/* The huge event must fit, with the rest of its stream, under the 64 MiB a connection may
 * buffer for a client that reads slowly (MOCK_CONN_MAX_OUT_BYTES). */
#define MOCK_MAX_FAULT_EVENT_BYTES (INT64_C(48) * 1000 * 1000)

enum {
    OPT_HOST = 256,
    OPT_PORT,
    OPT_PORT_FILE,
    OPT_MODEL,
    OPT_TTFT,
    OPT_STEP,
    OPT_PER_SEQ,
    OPT_MAX_BATCH,
    OPT_EVENTS_PER_WRITE,
    OPT_WORKERS,
    OPT_EXIT_AFTER,
    OPT_QUIET,
    OPT_STATS,
    OPT_API_KEY_ENV,
    OPT_VERSION,
    OPT_FAULT,
    OPT_FAULT_SEED,
    OPT_FAULT_SKIP,
    OPT_FAULT_STALL,
    OPT_FAULT_EVENT_BYTES,
    OPT_REASONING_TOKENS,
};

static const struct option long_options[] = {
    {"host", required_argument, NULL, OPT_HOST},
    {"port", required_argument, NULL, OPT_PORT},
    {"port-file", required_argument, NULL, OPT_PORT_FILE},
    {"model", required_argument, NULL, OPT_MODEL},
    {"ttft", required_argument, NULL, OPT_TTFT},
    {"step", required_argument, NULL, OPT_STEP},
    {"per-seq", required_argument, NULL, OPT_PER_SEQ},
    {"max-batch", required_argument, NULL, OPT_MAX_BATCH},
    {"events-per-write", required_argument, NULL, OPT_EVENTS_PER_WRITE},
    {"reasoning-tokens", required_argument, NULL, OPT_REASONING_TOKENS},
    {"workers", required_argument, NULL, OPT_WORKERS},
    {"exit-after", required_argument, NULL, OPT_EXIT_AFTER},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"stats", no_argument, NULL, OPT_STATS},
    {"api-key-env", required_argument, NULL, OPT_API_KEY_ENV},
    {"version", no_argument, NULL, OPT_VERSION},
    {"fault", required_argument, NULL, OPT_FAULT},
    {"fault-seed", required_argument, NULL, OPT_FAULT_SEED},
    {"fault-skip", required_argument, NULL, OPT_FAULT_SKIP},
    {"fault-stall", required_argument, NULL, OPT_FAULT_STALL},
    {"fault-event-bytes", required_argument, NULL, OPT_FAULT_EVENT_BYTES},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static const char help_text[] =
    "Usage: tokstorm-mock [options]\n"
    "\n"
    "A mock LLM inference server speaking the OpenAI HTTP API (streaming and not), with a\n"
    "known timing model, for rehearsing tokstorm runs and testing tokstorm itself.\n"
    "One single-threaded epoll loop per process (one process unless --workers); thousands of\n"
    "concurrent streams per process.\n"
    "\n"
    "Options:\n"
    "  --host ADDR          numeric IPv4 or IPv6 address to listen on (default 127.0.0.1;\n"
    "                       ::1 works too)\n"
    "  --port N             TCP port (default 8000; 0 = a free ephemeral port)\n"
    "  --port-file PATH     after listening, write the port number and a newline to PATH\n"
    "                       (written to PATH.tmp, then renamed, so readers never see a part)\n"
    "  --model NAME         model id listed by /v1/models (default tokstorm-mock); requests\n"
    "                       naming any model are accepted and that name is echoed back\n"
    "  --ttft DURATION      prefill time from admission to the first token (default 50ms)\n"
    "  --step DURATION      fixed time of one decode step, > 0 (default 10ms)\n"
    "  --per-seq DURATION   extra decode-step time per stream in the step (default 0)\n"
    "  --max-batch N        streams admitted at once, prefill + decode (default 64); with\n"
    "                       --workers, per worker\n"
    "  --events-per-write K  tokens per stream per decode step, each its own content event,\n"
    "                       the K events of one stream and step sent in one write()\n"
    "                       (default 1; 1 to 1024): a loaded server, or speculative decoding.\n"
    "                       A step then yields K tokens per stream, so throughput is\n"
    "                       K x batch / step; the first token (after ttft) stays one event\n"
    "  --reasoning-tokens N  chat: the first N tokens of each answer are reasoning_content\n"
    "                       deltas (a reasoning model behind a reasoning parser), the rest\n"
    "                       content; counted in max_tokens and usage (default 0)\n"
    "  --workers N          server processes sharing the port (default 1; 1 to 256): see\n"
    "                       Workers below\n"
    "  --exit-after DURATION  exit with status 0 after this long (default 0 = never;\n"
    "                       a bare number is seconds)\n"
    "  --quiet              print nothing but fatal errors on stderr\n"
    "  --stats              at exit, print one line of totals on stderr (with --workers,\n"
    "                       one line summing all workers: see Workers)\n"
    "  --api-key-env VAR    answer 401 to requests under /v1/ that lack the header\n"
    "                       Authorization: Bearer KEY, KEY being the value of environment\n"
    "                       variable VAR (not an argument, which ps would show); one line\n"
    "                       on stderr for each (unless --quiet)\n"
    "  --version            print the version and exit\n"
    "  -h, --help           print this help and exit\n"
    "\n"
    "Fault injection (see Faults below):\n"
    "  --fault NAME=P[,NAME=P...]  inject fault NAME with probability P (0.05 or 5%);\n"
    "                       repeatable, a name given again takes the new P\n"
    "  --fault-seed N       seed of the fault draws (default 1): same seed, same draws\n"
    "  --fault-skip N       spare the first N connections and the first N generation\n"
    "                       requests (default 0; 1 spares a client's preflight request)\n"
    "  --fault-stall DURATION  how long the stall fault sends nothing (default 2s; a bare\n"
    "                       number is seconds)\n"
    "  --fault-event-bytes N  content bytes of the huge-event fault's event (default 4M;\n"
    "                       at most 48M)\n"
    "\n"
    "DURATION is a number with an optional unit ns, us, ms, s, m or h; a bare number is\n"
    "milliseconds for --ttft, --step and --per-seq (\"50\" = 50ms, \"2500us\" = 2.5ms).\n"
    "N accepts k and M suffixes (\"2k\").\n"
    "\n"
    "When ready it prints exactly one line on stdout:\n"
    "  tokstorm-mock: listening on http://HOST:PORT      ([::1] bracketed for IPv6)\n"
    "SIGINT or SIGTERM closes the listening socket and exits 0.\n"
    "\n"
    "Workers (--workers N, N > 1): the parent binds the port (so --port 0 works; a port that\n"
    "anything else holds fails as for one process) and forks N workers, each with its own\n"
    "SO_REUSEPORT listening socket on that port, its own epoll loop and its own engine. The\n"
    "kernel hashes each connection's addresses to one worker, so many connections spread\n"
    "evenly; a connection stays with its worker. Each worker is one simulated GPU as\n"
    "described below with its own --max-batch: capacity is workers x max-batch streams, and\n"
    "the timing model holds per worker, not across them. The parent prints the ready line\n"
    "and writes --port-file once every worker listens, passes SIGINT and SIGTERM on to the\n"
    "workers and waits for them; it exits 0 when all stopped cleanly, or 1 (stopping the\n"
    "others) as soon as one fails. --exit-after applies to all. --stats prints one line with\n"
    "the sum of every worker's totals; its max_ fields are sums of per-worker maxima (an\n"
    "upper bound: workers peak at different times). Response ids stay unique: worker w (from\n"
    "0) numbers its requests w+1, w+1+N, ...\n"
    "\n"
    "Native dialects, served at once beside the OpenAI ones, streams only, same timing\n"
    "model, each event with a root \"tokstorm_send_ns\": POST /generate (SGLang: \"text\",\n"
    "sampling_params.max_new_tokens, \"stream\": true; cumulative text and meta_info counts,\n"
    "a finish event, [DONE]), POST /generate_stream (TGI: \"inputs\",\n"
    "parameters.max_new_tokens; one token per event, the last with generated_text and\n"
    "details), POST /completion (llama.cpp: \"prompt\", \"n_predict\", \"stream\": true;\n"
    "content per event, then \"stop\": true with timings).\n"
    "\n"
    "Endpoints: GET /v1/models, GET /health, POST /v1/chat/completions (needs \"messages\"),\n"
    "POST /v1/completions (needs \"prompt\"). Request fields used: max_tokens or\n"
    "max_completion_tokens (default 128; the latter wins if both are set), stream,\n"
    "stream_options.include_usage, model; everything else is ignored. Exactly max_tokens\n"
    "tokens are generated and finish_reason is always \"length\". Prompt tokens =\n"
    "ceil(prompt bytes / 4), where prompt bytes is the length of the prompt string (or of all\n"
    "its strings) or the sum of all message contents (string contents and text parts).\n"
    "Errors are 400 (bad JSON or fields), 404, 405, 411 (chunked request bodies are not\n"
    "supported), 413 (body over 16 MiB), 431 (head over 64 KiB), with an OpenAI error body.\n"
    "\n"
    "Timing model: one simulated GPU with continuous batching.\n"
    "  - A request enters a FIFO admission queue. At most --max-batch requests run (prefill\n"
    "    or decode) at once; the rest wait. Response headers (and for chat the role chunk)\n"
    "    are sent on arrival, even while queued, as real servers do.\n"
    "  - Admitted at time a, the first token is sent at a + ttft.\n"
    "  - It then joins the decode set at the start of the next decode step. Steps run back to\n"
    "    back while the set is non-empty: a step starting at s with k streams ends at\n"
    "    s + step + per-seq * k, and each of the k streams gets K = --events-per-write tokens\n"
    "    then (fewer if it needs fewer to reach max_tokens). Streams that get their first\n"
    "    token during a step wait for the next one.\n"
    "  - After its last token a stream finishes at once (finish chunk, usage chunk if asked,\n"
    "    [DONE]) and its slot goes to the head of the queue.\n"
    "  So one request alone takes ttft + ceil((max_tokens - 1) / K) * step, and throughput\n"
    "  saturates at K * max-batch / (step + per-seq * max-batch) tokens per second (per\n"
    "  worker).\n"
    "  A late timer keeps the schedule (steps are timed from their scheduled start, so timer\n"
    "  latency does not drift); if the server falls more than half a step behind, the clock\n"
    "  restarts from half a step before now instead of sending a burst of catch-up tokens.\n"
    "\n"
    "Faults: each accepted connection draws once among the connection faults, and each\n"
    "generation request (POST /v1/chat/completions or /v1/completions) draws once among\n"
    "the request faults, with the chances given by --fault (they must add up to at most 1\n"
    "in each group); GET /v1/models and /health never fail but by a connection fault.\n"
    "Mid-stream faults act right after token ceil(max_tokens / 2) was sent. Stream faults\n"
    "apply to streaming requests only: a non-streaming request that draws one is answered\n"
    "normally. With --workers, each worker draws its own sequence from the seed.\n"
    "  Connection faults:\n"
    "    refuse       shut the write side at once (FIN) and never answer: the client sees\n"
    "                 the connection close before any byte (\"empty reply\")\n"
    "    reset        close at once with SO_LINGER 0: the client sees a TCP reset\n"
    "  Request faults:\n"
    "    429          answer 429 with Retry-After: 1 and an OpenAI error body\n"
    "    500, 503     answer 500 or 503 with an OpenAI error body\n"
    "    close        (stream) close the socket mid-stream: the rest never comes\n"
    "    stall        (stream) send nothing for --fault-stall mid-stream; tokens keep being\n"
    "                 generated meanwhile and go out together after it\n"
    "    malformed    (stream) one event mid-stream whose JSON is cut short; the stream\n"
    "                 then goes on\n"
    "    error-event  (stream) one {\"error\": {...}} event mid-stream; the stream goes on\n"
    "    split        (stream) the whole response, head included, one byte per write()\n"
    "    huge-event   (stream) one extra content event mid-stream whose content is\n"
    "                 --fault-event-bytes bytes, on one line (it is not a token: usage still\n"
    "                 says max_tokens)\n"
    "    no-finish    (stream) every token, then neither finish_reason nor [DONE]: the\n"
    "                 connection stays open and silent until the client gives up\n"
    "    not-sse      (stream) the whole non-streaming answer (application/json), as a\n"
    "                 server that ignores \"stream\": true sends\n"
    "  --stats adds a line with the faults injected, by name.\n"
    "\n"
    "Every chunk carries \"tokstorm_send_ns\": CLOCK_MONOTONIC nanoseconds when it was written\n"
    "to the socket, for comparison with receive times taken on the same host (the K events\n"
    "of one write share one stamp). Chat streams start with a role chunk (no content: not a\n"
    "token); completions streams have none.\n";

static int bad(char *err, size_t err_len, const char *opt, const char *arg, const char *want)
{
    snprintf(err, err_len, "invalid value '%s' for --%s: %s", arg, opt, want);
    return -1;
}

static int parse_duration(const char *opt, const char *arg, int64_t unit_ns, bool positive,
                          int64_t *out, char *err, size_t err_len)
{
    int64_t ns;
    if (units_parse_duration_ns(arg, unit_ns, &ns) != 0 || ns > MOCK_MAX_DURATION_NS)
        return bad(err, err_len, opt, arg, "expected a duration such as 50ms, 2500us or 1s");
    if (positive && ns <= 0)
        return bad(err, err_len, opt, arg, "must be greater than zero");
    *out = ns;
    return 0;
}

static int parse_port(const char *arg, int *out, char *err, size_t err_len)
{
    char *end = NULL;
    long v = strtol(arg, &end, 10);
    if (arg[0] < '0' || arg[0] > '9' || *end != '\0' || v < 0 || v > 65535)
        return bad(err, err_len, "port", arg, "expected a port number from 0 to 65535");
    *out = (int)v;
    return 0;
}

static int parse_host(const char *arg, char *err, size_t err_len)
{
    unsigned char addr[sizeof(struct in6_addr)];
    if (inet_pton(AF_INET, arg, addr) == 1 || inet_pton(AF_INET6, arg, addr) == 1)
        return 0;
    return bad(err, err_len, "host", arg, "expected a numeric IPv4 or IPv6 address");
}

static int parse_one(int c, const char *arg, struct mock_options *opt, char *err, size_t err_len)
{
    switch (c) {
    case OPT_HOST:
        opt->host = arg;
        return parse_host(arg, err, err_len);
    case OPT_PORT:
        return parse_port(arg, &opt->port, err, err_len);
    case OPT_PORT_FILE:
        if (arg[0] == '\0')
            return bad(err, err_len, "port-file", arg, "expected a path");
        opt->port_file = arg;
        return 0;
    case OPT_MODEL:
        if (arg[0] == '\0')
            return bad(err, err_len, "model", arg, "expected a non-empty name");
        opt->model = arg;
        return 0;
    case OPT_TTFT:
        return parse_duration("ttft", arg, TS_NS_PER_MS, false, &opt->ttft_ns, err, err_len);
    case OPT_STEP:
        return parse_duration("step", arg, TS_NS_PER_MS, true, &opt->step_ns, err, err_len);
    case OPT_PER_SEQ:
        return parse_duration("per-seq", arg, TS_NS_PER_MS, false, &opt->per_seq_ns, err, err_len);
    case OPT_EXIT_AFTER:
        return parse_duration("exit-after", arg, TS_NS_PER_S, false, &opt->exit_after_ns, err,
                              err_len);
    case OPT_MAX_BATCH:
        if (units_parse_count(arg, &opt->max_batch) != 0 || opt->max_batch < 1 ||
            opt->max_batch > MOCK_MAX_BATCH)
            return bad(err, err_len, "max-batch", arg, "expected a count from 1 to 1M");
        return 0;
    case OPT_EVENTS_PER_WRITE:
        if (units_parse_count(arg, &opt->events_per_write) != 0 || opt->events_per_write < 1 ||
            opt->events_per_write > MOCK_MAX_EVENTS_PER_WRITE)
            return bad(err, err_len, "events-per-write", arg, "expected a count from 1 to 1024");
        return 0;
    case OPT_REASONING_TOKENS:
        if (units_parse_count(arg, &opt->reasoning_tokens) != 0 || opt->reasoning_tokens < 0 ||
            opt->reasoning_tokens > INT32_MAX)
            return bad(err, err_len, "reasoning-tokens", arg, "expected a count from 0");
        return 0;
    case OPT_WORKERS: {
        int64_t n;
        if (units_parse_count(arg, &n) != 0 || n < 1 || n > MOCK_MAX_WORKERS)
            return bad(err, err_len, "workers", arg, "expected a count from 1 to 256");
        opt->workers = (int)n;
        return 0;
    }
    case OPT_QUIET:
        opt->quiet = true;
        return 0;
    case OPT_STATS:
        opt->stats = true;
        return 0;
    case OPT_FAULT:
        return mock_fault_parse(arg, &opt->faults, err, err_len);
    case OPT_FAULT_SEED: {
        int64_t seed;
        if (units_parse_count(arg, &seed) != 0)
            return bad(err, err_len, "fault-seed", arg, "expected a whole number from 0");
        opt->faults.seed = (uint64_t)seed;
        return 0;
    }
    case OPT_FAULT_SKIP:
        if (units_parse_count(arg, &opt->faults.skip) != 0)
            return bad(err, err_len, "fault-skip", arg, "expected a whole number from 0");
        return 0;
    case OPT_FAULT_STALL:
        return parse_duration("fault-stall", arg, TS_NS_PER_S, true, &opt->faults.stall_ns, err,
                              err_len);
    case OPT_FAULT_EVENT_BYTES:
        if (units_parse_count(arg, &opt->faults.huge_event_bytes) != 0 ||
            opt->faults.huge_event_bytes < 1 ||
            opt->faults.huge_event_bytes > MOCK_MAX_FAULT_EVENT_BYTES)
            return bad(err, err_len, "fault-event-bytes", arg, "expected a count from 1 to 48M");
        return 0;
    case OPT_API_KEY_ENV:
        opt->api_key = getenv(arg);
        if (opt->api_key == NULL || opt->api_key[0] == '\0')
            return bad(err, err_len, "api-key-env", arg, "the variable is not set or empty");
        return 0;
    default:
        snprintf(err, err_len, "internal error: unhandled option %d", c);
        return -1;
    }
}

enum mock_options_result mock_options_parse(int argc, char **argv, struct mock_options *opt,
                                            FILE *out, char *err, size_t err_len)
{
    *opt = (struct mock_options){
        .host = "127.0.0.1",
        .port = 8000,
        .model = "tokstorm-mock",
        .ttft_ns = 50 * TS_NS_PER_MS,
        .step_ns = 10 * TS_NS_PER_MS,
        .per_seq_ns = 0,
        .max_batch = 64,
        .events_per_write = 1,
        .workers = 1,
    };
    mock_fault_config_init(&opt->faults);
    /* Our own messages instead of getopt's, so a bad option is always one line naming it. */
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
        const char *given = argv[optind - 1];
        if (c == 'h') {
            fputs(help_text, out);
            return MOCK_OPTIONS_EXIT;
        }
        if (c == OPT_VERSION) {
            fprintf(out, "tokstorm-mock %s\n", TOKSTORM_VERSION);
            return MOCK_OPTIONS_EXIT;
        }
        if (c == ':') {
            snprintf(err, err_len, "option '%s' requires a value (see --help)", given);
            return MOCK_OPTIONS_BAD;
        }
        if (c == '?') {
            if (optopt >= OPT_HOST)
                snprintf(err, err_len, "option '%s' takes no value (see --help)", given);
            else if (optopt > 0 && optopt < 128 && isgraph(optopt))
                snprintf(err, err_len, "unknown option '-%c' (see --help)", optopt);
            else
                snprintf(err, err_len, "unknown option '%s' (see --help)", given);
            return MOCK_OPTIONS_BAD;
        }
        if (parse_one(c, optarg, opt, err, err_len) != 0)
            return MOCK_OPTIONS_BAD;
    }
    if (optind < argc) {
        snprintf(err, err_len, "unexpected argument '%s' (see --help)", argv[optind]);
        return MOCK_OPTIONS_BAD;
    }
    if (mock_fault_check(&opt->faults, err, err_len) != 0)
        return MOCK_OPTIONS_BAD;
    return MOCK_OPTIONS_RUN;
}
