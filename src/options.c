/* options.c: getopt_long, defaults and validation of the command line. It reads no file and
 * touches no network: checks that need the outside world (prompts file, output path, the
 * server itself) happen in run.c, where all ranks can agree on them. */
#include "tokstorm/options.h"

#include <arpa/inet.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tokstorm/redact.h"
#include "tokstorm/units.h"

enum {
    OPT_URL = 1000,
    OPT_MODEL,
    OPT_API,
    OPT_LEVELS,
    OPT_MAX_TOKENS,
    OPT_TEMPERATURE,
    OPT_IGNORE_EOS,
    OPT_REQUESTS,
    OPT_DURATION,
    OPT_WARMUP,
    OPT_TIMEOUT,
    OPT_CONNECT_TIMEOUT,
    OPT_MAX_EVENT_BYTES,
    OPT_PROMPTS,
    OPT_OUT,
    OPT_FORCE,
    OPT_DEMO,
    OPT_NO_PRECONNECT,
    OPT_CONNECT_RATE,
    OPT_BIND,
    OPT_RATES,
    OPT_ARRIVAL,
    OPT_BURSTINESS,
    OPT_SEED,
    OPT_MAX_CONCURRENCY,
    OPT_TOTAL_REQUESTS,
    OPT_UNTIL_SATURATED,
    OPT_MAX_LEVEL,
    OPT_MAX_ERROR_RATE,
    OPT_SLO,
    OPT_JSON,
    OPT_CSV,
    OPT_RECORD_TOKENS,
    OPT_PROGRESS,
    OPT_STALL_TIMEOUT,
    OPT_API_KEY,
    OPT_API_KEY_ENV,
    OPT_API_KEY_FILE,
    OPT_INSECURE,
    OPT_CACERT,
    OPT_DATASET,
    OPT_NUM_PROMPTS,
    OPT_SHAREGPT_OUTPUT_LEN,
    OPT_INPUT_LEN,
    OPT_INPUT_LEN_RANGE,
    OPT_OUTPUT_LEN,
    OPT_OUTPUT_LEN_RANGE,
    OPT_PREFIX_LEN,
    OPT_GROUPS,
    OPT_PROMPTS_PER_GROUP,
    OPT_QUESTION_LEN,
    OPT_TOP_P,
    OPT_MIN_TOKENS,
    OPT_STOP,
    OPT_EXTRA_BODY,
    OPT_GRACE,
    OPT_NO_PREFLIGHT,
};

static const struct option long_options[] = {
    {"url", required_argument, NULL, OPT_URL},
    {"model", required_argument, NULL, OPT_MODEL},
    {"served-model", required_argument, NULL, OPT_MODEL},
    {"api", required_argument, NULL, OPT_API},
    {"levels", required_argument, NULL, OPT_LEVELS},
    {"max-tokens", required_argument, NULL, OPT_MAX_TOKENS},
    {"temperature", required_argument, NULL, OPT_TEMPERATURE},
    {"ignore-eos", no_argument, NULL, OPT_IGNORE_EOS},
    {"top-p", required_argument, NULL, OPT_TOP_P},
    {"min-tokens", required_argument, NULL, OPT_MIN_TOKENS},
    {"stop", required_argument, NULL, OPT_STOP},
    {"extra-body", required_argument, NULL, OPT_EXTRA_BODY},
    {"requests-per-stream", required_argument, NULL, OPT_REQUESTS},
    {"duration", required_argument, NULL, OPT_DURATION},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT},
    {"max-event-bytes", required_argument, NULL, OPT_MAX_EVENT_BYTES},
    {"prompts", required_argument, NULL, OPT_PROMPTS},
    {"dataset", required_argument, NULL, OPT_DATASET},
    {"num-prompts", required_argument, NULL, OPT_NUM_PROMPTS},
    {"sharegpt-output-len", no_argument, NULL, OPT_SHAREGPT_OUTPUT_LEN},
    {"input-len", required_argument, NULL, OPT_INPUT_LEN},
    {"input-len-range", required_argument, NULL, OPT_INPUT_LEN_RANGE},
    {"output-len", required_argument, NULL, OPT_OUTPUT_LEN},
    {"output-len-range", required_argument, NULL, OPT_OUTPUT_LEN_RANGE},
    {"prefix-len", required_argument, NULL, OPT_PREFIX_LEN},
    {"groups", required_argument, NULL, OPT_GROUPS},
    {"prompts-per-group", required_argument, NULL, OPT_PROMPTS_PER_GROUP},
    {"question-len", required_argument, NULL, OPT_QUESTION_LEN},
    {"out", required_argument, NULL, 'o'},
    {"force", no_argument, NULL, OPT_FORCE},
    {"demo", no_argument, NULL, OPT_DEMO},
    {"no-preconnect", no_argument, NULL, OPT_NO_PRECONNECT},
    {"connect-rate", required_argument, NULL, OPT_CONNECT_RATE},
    {"bind", required_argument, NULL, OPT_BIND},
    {"rate", required_argument, NULL, OPT_RATES},
    {"rates", required_argument, NULL, OPT_RATES},
    {"arrival", required_argument, NULL, OPT_ARRIVAL},
    {"burstiness", required_argument, NULL, OPT_BURSTINESS},
    {"seed", required_argument, NULL, OPT_SEED},
    {"max-concurrency", required_argument, NULL, OPT_MAX_CONCURRENCY},
    {"requests", required_argument, NULL, OPT_TOTAL_REQUESTS},
    {"until-saturated", no_argument, NULL, OPT_UNTIL_SATURATED},
    {"max-level", required_argument, NULL, OPT_MAX_LEVEL},
    {"max-error-rate", required_argument, NULL, OPT_MAX_ERROR_RATE},
    {"slo", required_argument, NULL, OPT_SLO},
    {"json", required_argument, NULL, OPT_JSON},
    {"csv", required_argument, NULL, OPT_CSV},
    {"record-tokens", no_argument, NULL, OPT_RECORD_TOKENS},
    {"progress", required_argument, NULL, OPT_PROGRESS},
    {"stall-timeout", required_argument, NULL, OPT_STALL_TIMEOUT},
    /* Taken only to be refused with a reason (a key in argv is visible to ps), and so that
     * "--api-key" is not read as an ambiguous abbreviation of the two below. */
    {"api-key", required_argument, NULL, OPT_API_KEY},
    {"api-key-env", required_argument, NULL, OPT_API_KEY_ENV},
    {"api-key-file", required_argument, NULL, OPT_API_KEY_FILE},
    {"header", required_argument, NULL, 'H'},
    {"insecure", no_argument, NULL, OPT_INSECURE},
    {"cacert", required_argument, NULL, OPT_CACERT},
    {"grace", required_argument, NULL, OPT_GRACE},
    {"no-preflight", no_argument, NULL, OPT_NO_PREFLIGHT},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

void options_print_help(FILE *f)
{
    fputs(
        "Usage: mpirun -np N tokstorm --url URL [options]\n"
        "       tokstorm --demo [options]\n"
        "\n"
        "Sweeps concurrency levels against an OpenAI-compatible streaming server (SGLang,\n"
        "vLLM, TGI, llama.cpp, ...). For each level C, the C streams are spread over the MPI\n"
        "ranks; each stream sends its next request as soon as the previous one ends (closed\n"
        "loop). Rank 0 prints one table row per level and writes every request to --out.\n"
        "\n"
        "Target:\n"
        "  --url URL               server base URL, e.g. http://gpu01:30000 (a trailing /v1\n"
        "                          is accepted); required unless --demo\n"
        "  --model NAME            model name sent in each request (default: default);\n"
        "                          auto: the one model GET /v1/models lists (rank 0 asks\n"
        "                          before the preflight). --served-model is the same\n"
        "  --api KIND              the server's API: chat (default; POST /v1/chat/completions\n"
        "                          with messages), completions (POST /v1/completions),\n"
        "                          sglang (SGLang's POST /generate), tgi (TGI's POST\n"
        "                          /generate_stream) or llamacpp (llama.cpp's POST\n"
        "                          /completion); the native ones get the prompt as text\n"
        "  --demo                  start the bundled tokstorm-mock on a free loopback port\n"
        "                          (TTFT 50 ms, 10 ms decode step, batch 64) and sweep it;\n"
        "                          defaults become --levels 1,4,16,64,128,256 --max-tokens 64\n"
        "  --no-preflight          do not send the one short request that checks the server\n"
        "                          first: a server that fails every request then shows as a\n"
        "                          level of errors, not as exit status 3\n"
        "\n"
        "Secrets and transport:\n"
        "  --api-key-env VAR       send \"Authorization: Bearer KEY\" with every request, KEY\n"
        "                          read from environment variable VAR on rank 0 (which\n"
        "                          passes it to the other ranks)\n"
        "  --api-key-file FILE     the same, KEY read from FILE on rank 0's host (one line).\n"
        "                          No option takes the key itself: ps would show it\n"
        "  -H, --header 'N: V'     add header N: V to every request (repeatable); values of\n"
        "                          headers named like a secret are recorded masked\n"
        "  --cacert FILE           https: verify the server against the CA certificates in\n"
        "                          FILE (PEM) instead of the system's\n"
        "  --insecure              https: do not verify the server's certificate (said once\n"
        "                          on stderr); verification is on by default\n"
        "\n"
        "Load:\n"
        "  --levels LIST           global concurrencies, comma-separated (default 1,4,16,32)\n"
        "  --requests-per-stream N measured requests per stream (default 2)\n"
        "  --duration TIME         instead: start measured requests for TIME (e.g. 30s, 2m)\n"
        "  --warmup N              unmeasured requests per stream first (default 0)\n"
        "  --prompts FILE          the dataset's file (default: the bundled\n"
        "                          prompts/coding.jsonl, or prompts/sharegpt-sample.json)\n"
        "  --no-preconnect         do not open each stream's connection before the level\n"
        "                          starts (measures cold starts: TCP handshakes in TTFT;\n"
        "                          --connect-rate does not apply then)\n"
        "  --connect-rate N        new connections per second per rank while preconnecting\n"
        "                          (default 1000; 0 = no limit), so a large level does not\n"
        "                          flood the server with handshakes\n"
        "  --bind ADDR[,ADDR...]   spread each rank's connections over these local addresses\n"
        "                          (numeric IPv4/IPv6; a rank's slot i uses address i mod\n"
        "                          n): one source address has about 28k ephemeral ports\n"
        "                          per server address and port\n"
        "\n"
        "Dataset (prompts/README.md; every kind is sampled or generated from --seed):\n"
        "  --dataset KIND          jsonl (default): --prompts, {\"prompt\": ...} or\n"
        "                          {\"messages\": [...]} per line; sharegpt: --prompts is a\n"
        "                          ShareGPT JSON array, each first human turn a prompt,\n"
        "                          shuffled, conversations under 4 or over 1024 prompt /\n"
        "                          2048 total tokens dropped; random: generated words;\n"
        "                          shared-prefix: groups sharing a generated system prompt\n"
        "  --num-prompts N         sharegpt: at most N (default all); random: N (default\n"
        "                          1000)\n"
        "  --sharegpt-output-len   sharegpt: max_tokens = the reference answer's length\n"
        "  --input-len N           random: prompt length in tokens (default 1024)\n"
        "  --input-len-range F     random: lengths uniform in N*(1-F)..N*(1+F) (default 0)\n"
        "  --output-len N          random, shared-prefix: max_tokens per request (default:\n"
        "                          --max-tokens)\n"
        "  --output-len-range F    ... uniform in N*(1-F)..N*(1+F) (default 0)\n"
        "  --prefix-len N          shared-prefix: system prompt tokens (default 2048)\n"
        "  --groups G              shared-prefix: distinct system prompts (default 64)\n"
        "  --prompts-per-group K   shared-prefix: questions per group (default 16)\n"
        "  --question-len N        shared-prefix: question tokens (default 128)\n"
        "                          Tokens are estimates without the server's tokenizer: the\n"
        "                          server's prompt_tokens are recorded per request\n"
        "\n"
        "Open loop (instead of --levels: arrivals that do not wait for answers):\n"
        "  --rate R, --rates LIST  requests/s over all ranks, one level per rate (each rank\n"
        "                          sends R/n); latencies are also measured from each\n"
        "                          request's scheduled send time (coordinated omission shows)\n"
        "  --arrival KIND          poisson (default), gamma or constant gaps\n"
        "  --burstiness K          gamma shape: < 1 burstier, > 1 smoother (default 1)\n"
        "  --seed N                seeds the arrival times and the dataset (default 0):\n"
        "                          same seed, same times and the same requests\n"
        "  --requests N            requests per level over all ranks (default: --duration,\n"
        "                          30s unless given)\n"
        "  --max-concurrency N     most requests in flight over all ranks (default 1024 per\n"
        "                          rank); one that finds no free slot waits and counts late\n"
        "\n"
        "Saturation search:\n"
        "  --until-saturated       from the first level (or rate), double it until throughput\n"
        "                          grows < 5% twice in a row, the error rate passes\n"
        "                          --max-error-rate, an --slo is broken, or --max-level\n"
        "  --max-level N           last step of the ladder at most N (default 65536)\n"
        "  --max-error-rate F      fraction of failed requests that stops it (default 0.01)\n"
        "  --slo ttft=T,tpot=T     p99 objectives (e.g. ttft=2s,tpot=50ms), for the search\n"
        "                          and for goodput: requests/s meeting every objective\n"
        "\n"
        "Request:\n"
        "  --max-tokens N          max_tokens per request (default 256)\n"
        "  --temperature T         sampling temperature (default 0)\n"
        "  --ignore-eos            send \"ignore_eos\": true so each request runs to max_tokens\n"
        "  --top-p P               nucleus sampling threshold, in (0, 1] (default: not sent)\n"
        "  --min-tokens N          fewest tokens to generate: min_tokens (vLLM, SGLang\n"
        "                          extension), min_new_tokens with --api sglang; TGI and\n"
        "                          llama.cpp have none (default: not sent)\n"
        "  --stop STR              a stop string (repeatable), sent as the dialect's stop list\n"
        "  --extra-body JSON       a JSON object merged into every request body, for\n"
        "                          server-specific knobs: objects merge member by member,\n"
        "                          other values replace (e.g. '{\"top_k\": 20}')\n"
        "  --timeout TIME          per request, whole transfer (default 600s)\n"
        "  --connect-timeout TIME  per connection attempt (default 10s)\n"
        "  --stall-timeout TIME    end a request as stalled once no byte of its answer has\n"
        "                          come for TIME since it was written or since the last byte\n"
        "                          (the wait for the first byte counts; default 0 = off)\n"
        "  --max-event-bytes N     largest SSE event (or line) accepted; a longer one ends\n"
        "                          the request as oversized (default 1048576, 1 MiB)\n"
        "  --grace TIME            on SIGINT or SIGTERM, how long the level's requests in\n"
        "                          flight may go on before they are cancelled (default 2s;\n"
        "                          0 = at once)\n"
        "\n"
        "Output:\n"
        "  -o, --out FILE          HDF5 results file (default tokstorm-results.h5); its layout:\n"
        "                          docs/results-format.md\n"
        "  --json FILE             also each level's summary and the run's metadata as JSON,\n"
        "                          rewritten after every level\n"
        "  --csv FILE              also the table as CSV: a header line, one row per level\n"
        "  --force                 overwrite --out, --json and --csv files that exist\n"
        "  --record-tokens         store the arrival time of every content event in --out\n"
        "                          (to recompute ITL offline; 8 bytes per event)\n"
        "  --progress auto|on|off  a live line during each level: requests done, tok/s and\n"
        "                          errors over all ranks, about once a second (auto: only\n"
        "                          when the output reaches a terminal; on: also into a pipe,\n"
        "                          one line each time)\n"
        "  -v, --verbose           more diagnostics on stderr (twice for debug)\n"
        "  -h, --help, -V, --version\n"
        "\n"
        "TIME takes a unit: ns, us, ms, s, m, h (a bare number is seconds). Counts take k or M.\n"
        "Exit status: 0 sweep done; 1 run-time failure; 2 bad command line, input file or\n"
        "output path (or --model auto finds several models); 3 the server failed the\n"
        "preflight request (or --model auto's GET /v1/models); 4 the results file, --json\n"
        "or --csv could not be written (the levels before are intact); 130, 143 interrupted\n"
        "by SIGINT, SIGTERM (finished levels, and the one cut short, are in the file).\n",
        f);
}

static int set_str(char **field, const char *value)
{
    free(*field);
    *field = strdup(value);
    return *field ? 0 : -1;
}

/* Accepts http(s)://host[:port][/path]; strips trailing slashes and a trailing "/v1", since
 * --api supplies the /v1/... path. */
static int check_url(char **url, char *msg, size_t len)
{
    char *u = *url;
    const char *rest = NULL;
    if (strncmp(u, "http://", 7) == 0)
        rest = u + 7;
    else if (strncmp(u, "https://", 8) == 0)
        rest = u + 8;
    if (rest == NULL) {
        snprintf(msg, len, "--url: '%s' must start with http:// or https://", u);
        return -1;
    }
    size_t host_len = strcspn(rest, "/?#");
    if (host_len == 0 || rest[0] == ':') {
        snprintf(msg, len, "--url: '%s' has no host", u);
        return -1;
    }
    for (const char *c = u; *c; c++)
        if (*c <= ' ' || *c == 0x7f) {
            snprintf(msg, len, "--url: '%s' contains a space or control character", u);
            return -1;
        }
    const char *colon = memchr(rest, ':', host_len);
    if (rest[0] == '[') /* IPv6 literal: the port colon comes after ']' */
        colon = memchr(rest, ']', host_len) ? strchr(memchr(rest, ']', host_len), ':') : NULL;
    if (colon != NULL && colon < rest + host_len) {
        char *end = NULL;
        long port = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || end != rest + host_len || port < 1 || port > 65535) {
            snprintf(msg, len, "--url: '%s' has an invalid port", u);
            return -1;
        }
    }
    size_t n = strlen(u);
    while (n > 0 && u[n - 1] == '/')
        u[--n] = '\0';
    if (n >= 3 && strcmp(u + n - 3, "/v1") == 0 && u + n - 3 >= rest + host_len)
        u[n - 3] = '\0';
    return 0;
}

/* Longest generated prompt part, and most generated tokens per rank (some 6 bytes each, held
 * twice: as prompts and as request bodies). */
#define MAX_LEN_TOKENS     (1 << 20)
#define MAX_DATASET_TOKENS (64.0 * 1024 * 1024)

static int parse_positive(const char *name, const char *text, int64_t max, int64_t *out, char *msg,
                          size_t len)
{
    int64_t v;
    if (units_parse_count(text, &v) != 0 || v <= 0 || v > max) {
        snprintf(msg, len, "%s: '%s' is not a whole number from 1 to %lld", name, text,
                 (long long)max);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_time(const char *name, const char *text, int64_t *out, char *msg, size_t len)
{
    int64_t v;
    if (units_parse_duration_ns(text, TS_NS_PER_S, &v) != 0 || v <= 0) {
        snprintf(msg, len, "%s: '%s' is not a positive duration (e.g. 30s, 500ms, 2m)", name, text);
        return -1;
    }
    /* libcurl counts in milliseconds, and reads 0 as "no limit". */
    if (v < TS_NS_PER_MS) {
        snprintf(msg, len, "%s: '%s' is below 1ms, the resolution of timeouts", name, text);
        return -1;
    }
    *out = v;
    return 0;
}

/* Which options were given, for the checks that relate them. */
struct seen {
    int requests, levels, max_tokens, total_requests, max_concurrency, warmup;
    /* The dataset options, each only for some kinds (check_dataset). */
    int prompts, num_prompts, sharegpt_output_len, input_len, output_len, prefix;
};

/* "ttft=2s,tpot=50ms" (either or both). */
static int parse_slo(struct ts_options *o, const char *arg, char *msg, size_t len)
{
    char *copy = strdup(arg), *save = NULL;
    int rc = copy ? 0 : TS_OPT_ERR;
    for (char *item = copy ? strtok_r(copy, ",", &save) : NULL; item && rc == 0;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        int64_t *field = NULL;
        if (eq && (size_t)(eq - item) == 4 && strncmp(item, "ttft", 4) == 0)
            field = &o->slo_ttft_ns;
        else if (eq && (size_t)(eq - item) == 4 && strncmp(item, "tpot", 4) == 0)
            field = &o->slo_tpot_ns;
        if (field == NULL || units_parse_duration_ns(eq + 1, TS_NS_PER_S, field) != 0 ||
            *field <= 0) {
            snprintf(msg, len, "--slo: '%s' is not ttft=TIME and/or tpot=TIME (e.g. ttft=2s)", arg);
            rc = TS_OPT_ERR;
        }
    }
    free(copy);
    return rc;
}

static void free_bind(struct ts_options *o)
{
    for (size_t i = 0; i < o->n_bind_addrs; i++)
        free(o->bind_addrs[i]);
    free(o->bind_addrs);
    o->bind_addrs = NULL;
    o->n_bind_addrs = 0;
}

/* "10.0.0.5,10.0.0.6,fd00::5": numeric addresses only, so that libcurl never takes one for
 * an interface or host name, and nothing is looked up. Whether each belongs to this host is
 * run.c's to check. */
static int parse_bind(struct ts_options *o, const char *arg, char *msg, size_t len)
{
    free_bind(o);
    size_t n = 1;
    for (const char *c = arg; *c; c++)
        n += *c == ',';
    char *copy = strdup(arg);
    o->bind_addrs = calloc(n, sizeof *o->bind_addrs);
    if (copy == NULL || o->bind_addrs == NULL) {
        free(copy);
        return TS_OPT_ERR;
    }
    int rc = 0;
    char *item = copy;
    for (size_t i = 0; i < n && rc == 0; i++) {
        char *comma = strchr(item, ',');
        if (comma)
            *comma = '\0';
        unsigned char buf[sizeof(struct in6_addr)];
        if (inet_pton(AF_INET, item, buf) != 1 && inet_pton(AF_INET6, item, buf) != 1) {
            snprintf(msg, len, "--bind: '%s' is not a numeric IPv4 or IPv6 address", item);
            rc = TS_OPT_ERR;
        } else if ((o->bind_addrs[o->n_bind_addrs] = strdup(item)) == NULL) {
            rc = TS_OPT_ERR;
        } else {
            o->n_bind_addrs++;
        }
        item = comma ? comma + 1 : item;
    }
    free(copy);
    return rc;
}

static int parse_fraction(const char *name, const char *arg, double lo, double hi, double *out,
                          char *msg, size_t len)
{
    char *end = NULL;
    double v = strtod(arg, &end);
    if (end == arg || *end != '\0' || !(v >= lo && v <= hi)) {
        snprintf(msg, len, "%s: '%s' is not a number from %g to %g", name, arg, lo, hi);
        return TS_OPT_ERR;
    }
    *out = v;
    return 0;
}

const char *options_progress_name(enum ts_progress_mode m)
{
    return m == TS_PROGRESS_ON ? "on" : m == TS_PROGRESS_OFF ? "off" : "auto";
}

/* --out, --json and --csv name three different files: one would overwrite another. Names
 * are compared as given; that they are creatable is run.c's to check. */
static int check_output_paths(const struct ts_options *o, char *msg, size_t len)
{
    const char *json = o->json_path, *csv = o->csv_path;
    if (json && strcmp(json, o->out_path) == 0)
        snprintf(msg, len, "--json: %s is also the --out file", json);
    else if (csv && strcmp(csv, o->out_path) == 0)
        snprintf(msg, len, "--csv: %s is also the --out file", csv);
    else if (json && csv && strcmp(json, csv) == 0)
        snprintf(msg, len, "--csv: %s is also the --json file", csv);
    else
        return 0;
    return TS_OPT_ERR;
}

/* --api-key-env's name, when it is one: it goes into messages only then, since a value that
 * is not a name may be the key itself, given here by mistake. */
static int is_env_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 64 || (*s >= '0' && *s <= '9'))
        return 0;
    return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

/* "Name: value" as it will be sent: a name of RFC 9110 token characters, and nothing in the
 * value that ends a line (a CR or LF would let it start another header, or request). Values
 * are never quoted back: this one may carry a credential. */
static int check_header(const char *arg, char *msg, size_t len)
{
    static const char tchar[] = "!#$%&'*+-.^_`|~0123456789"
                                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    const char *colon = strchr(arg, ':');
    size_t name_len = colon ? (size_t)(colon - arg) : 0;
    if (colon == NULL || name_len == 0) {
        snprintf(msg, len, "-H: a header is 'Name: value'; this one has no %s",
                 colon ? "name before its ':'" : "':'");
        return TS_OPT_ERR;
    }
    if (strspn(arg, tchar) != name_len) {
        snprintf(msg, len, "-H: a header name is letters, digits and !#$%%&'*+-.^_`|~ only");
        return TS_OPT_ERR;
    }
    for (const char *c = colon + 1; *c; c++)
        if ((unsigned char)*c < ' ' && *c != '\t') {
            snprintf(msg, len, "-H: the value of %.*s holds a line break or control character",
                     (int)name_len, arg);
            return TS_OPT_ERR;
        }
    /* The body's framing is tokstorm's: another length would desynchronise the connection. */
    if ((name_len == 14 && strncasecmp(arg, "Content-Length", 14) == 0) ||
        (name_len == 17 && strncasecmp(arg, "Transfer-Encoding", 17) == 0)) {
        snprintf(msg, len, "-H: %.*s is set by tokstorm", (int)name_len, arg);
        return TS_OPT_ERR;
    }
    return 0;
}

static int add_header(struct ts_options *o, const char *arg, char *msg, size_t len)
{
    if (check_header(arg, msg, len) != 0)
        return TS_OPT_ERR;
    char **grown = realloc(o->headers, (o->n_headers + 1) * sizeof *grown);
    if (grown == NULL)
        return TS_OPT_ERR;
    o->headers = grown;
    if ((o->headers[o->n_headers] = strdup(arg)) == NULL)
        return TS_OPT_ERR;
    o->n_headers++;
    return 0;
}

static const char api_key_refused[] =
    "--api-key: a key on the command line is visible to every user of this host (ps) and "
    "kept in shell history; put it in a file or a variable and give --api-key-file FILE or "
    "--api-key-env VAR";

/* The secrets and transport options that exclude each other. */
static int check_transport(const struct ts_options *o, char *msg, size_t len)
{
    const char *key_option = o->api_key_env ? "--api-key-env" : "--api-key-file";
    int authorization = 0;
    for (size_t i = 0; i < o->n_headers; i++)
        authorization |= strncasecmp(o->headers[i], "Authorization:", 14) == 0;
    if (o->api_key_env && o->api_key_file)
        snprintf(msg, len, "--api-key-env and --api-key-file: give one, not both");
    else if ((o->api_key_env || o->api_key_file) && authorization)
        snprintf(msg, len, "-H Authorization and %s: both set Authorization; give one", key_option);
    else if (o->insecure && o->cacert)
        snprintf(msg, len, "--insecure and --cacert: give one, not both");
    else
        return 0;
    return TS_OPT_ERR;
}

/* Each dataset option belongs to some kinds: one given with another kind is a mistake worth
 * a line (it would silently do nothing). Also bounds what a generated dataset costs each
 * rank in memory. */
static int check_dataset(const struct ts_options *o, const struct seen *seen, char *msg,
                         size_t len)
{
    enum ts_dataset_kind k = o->dataset;
    const char *kind = dataset_kind_name(k), *wrong = NULL;
    if (seen->prompts && k != TS_DATASET_JSONL && k != TS_DATASET_SHAREGPT)
        wrong = "--prompts";
    else if (seen->num_prompts && k != TS_DATASET_SHAREGPT && k != TS_DATASET_RANDOM)
        wrong = "--num-prompts";
    else if (seen->sharegpt_output_len && k != TS_DATASET_SHAREGPT)
        wrong = "--sharegpt-output-len";
    else if (seen->input_len && k != TS_DATASET_RANDOM)
        wrong = "--input-len and --input-len-range";
    else if (seen->output_len && k != TS_DATASET_RANDOM && k != TS_DATASET_SHARED_PREFIX)
        wrong = "--output-len and --output-len-range";
    else if (seen->prefix && k != TS_DATASET_SHARED_PREFIX)
        wrong = "--prefix-len, --groups, --prompts-per-group and --question-len";
    if (wrong != NULL) {
        snprintf(msg, len, "%s: not for --dataset %s", wrong, kind);
        return TS_OPT_ERR;
    }
    if (seen->output_len && o->output_len_tokens == 0) {
        snprintf(msg, len, "--output-len-range: give --output-len too");
        return TS_OPT_ERR;
    }
    double words = 0;
    if (k == TS_DATASET_RANDOM)
        words = (double)o->num_prompts * (double)o->input_len_tokens * (1 + o->input_len_range);
    else if (k == TS_DATASET_SHARED_PREFIX)
        words = (double)o->groups * (double)o->prompts_per_group *
                (double)(o->prefix_len_tokens + o->question_len_tokens);
    if (words > MAX_DATASET_TOKENS) {
        snprintf(msg, len,
                 "--dataset %s: %.0f tokens to generate on every rank, over the %.0f allowed "
                 "(fewer or shorter prompts)",
                 kind, words, (double)MAX_DATASET_TOKENS);
        return TS_OPT_ERR;
    }
    return 0;
}

/* One option's value into *o. Returns 0, TS_OPT_ERR (msg set), or a TS_OPT_HELP/VERSION. */
static int apply_option(struct ts_options *o, int c, const char *arg, struct seen *seen, char *msg,
                        size_t len)
{
    int64_t v;
    switch (c) {
    case OPT_URL:
        return set_str(&o->url, arg) ? TS_OPT_ERR : check_url(&o->url, msg, len);
    case OPT_MODEL:
        if (arg[0] == '\0') {
            snprintf(msg, len, "--model: the name is empty");
            return TS_OPT_ERR;
        }
        return set_str(&o->model, arg);
    case OPT_API:
        if (api_kind_from_name(arg, &o->api) != 0) {
            snprintf(msg, len, "--api: '%s' is not one of %s", arg, api_kind_names());
            return TS_OPT_ERR;
        }
        return 0;
    case OPT_LEVELS: {
        int64_t *levels;
        size_t n;
        if (units_parse_count_list(arg, &levels, &n) != 0) {
            snprintf(msg, len, "--levels: '%s' is not a comma-separated list of positive counts",
                     arg);
            return TS_OPT_ERR;
        }
        for (size_t i = 0; i < n; i++) {
            int dup = 0;
            for (size_t j = 0; j < i; j++)
                dup |= levels[j] == levels[i];
            if (levels[i] > INT32_MAX || dup) {
                snprintf(msg, len, "--levels: %lld %s", (long long)levels[i],
                         dup ? "appears twice (each level is one group in the results file)"
                             : "is too large");
                free(levels);
                return TS_OPT_ERR;
            }
        }
        free(o->levels);
        o->levels = levels;
        o->n_levels = n;
        seen->levels = 1;
        return 0;
    }
    case OPT_MAX_TOKENS:
        seen->max_tokens = 1;
        return parse_positive("--max-tokens", arg, INT32_MAX, &o->max_tokens, msg, len);
    case OPT_TEMPERATURE: {
        char *end = NULL;
        double t = strtod(arg, &end);
        if (end == arg || *end != '\0' || !(t >= 0 && t <= 100)) {
            snprintf(msg, len, "--temperature: '%s' is not a number from 0 to 100", arg);
            return TS_OPT_ERR;
        }
        o->temperature = t;
        return 0;
    }
    case OPT_IGNORE_EOS:
        o->ignore_eos = 1;
        return 0;
    case OPT_TOP_P: {
        char *end = NULL;
        double p = strtod(arg, &end);
        if (end == arg || *end != '\0' || !(p > 0 && p <= 1)) {
            snprintf(msg, len, "--top-p: '%s' is not a number in (0, 1]", arg);
            return TS_OPT_ERR;
        }
        o->top_p = p;
        return 0;
    }
    case OPT_MIN_TOKENS:
        return parse_positive("--min-tokens", arg, INT32_MAX, &o->min_tokens, msg, len);
    case OPT_STOP: {
        if (arg[0] == '\0') {
            snprintf(msg, len, "--stop: the string is empty");
            return TS_OPT_ERR;
        }
        char **grown = realloc(o->stop, (o->n_stop + 1) * sizeof *grown);
        if (grown == NULL)
            return TS_OPT_ERR;
        o->stop = grown;
        o->stop[o->n_stop] = NULL;
        if (set_str(&o->stop[o->n_stop], arg) != 0)
            return TS_OPT_ERR;
        o->n_stop++;
        return 0;
    }
    case OPT_EXTRA_BODY: {
        char why[64];
        if (api_check_extra_body(arg, why, sizeof why) != 0) {
            snprintf(msg, len, "--extra-body: %s; give a JSON object such as '{\"top_k\": 20}'",
                     why);
            return TS_OPT_ERR;
        }
        return set_str(&o->extra_body, arg);
    }
    case OPT_REQUESTS:
        seen->requests = 1;
        return parse_positive("--requests-per-stream", arg, INT32_MAX, &o->requests_per_stream, msg,
                              len);
    case OPT_DURATION:
        return parse_time("--duration", arg, &o->duration_ns, msg, len);
    case OPT_WARMUP:
        if (units_parse_count(arg, &v) != 0 || v > INT32_MAX) {
            snprintf(msg, len, "--warmup: '%s' is not a whole number from 0", arg);
            return TS_OPT_ERR;
        }
        o->warmup = v;
        seen->warmup = 1;
        return 0;
    case OPT_TIMEOUT:
        return parse_time("--timeout", arg, &o->timeout_ns, msg, len);
    case OPT_CONNECT_TIMEOUT:
        return parse_time("--connect-timeout", arg, &o->connect_timeout_ns, msg, len);
    case OPT_MAX_EVENT_BYTES:
        if (parse_positive("--max-event-bytes", arg, INT32_MAX, &v, msg, len) != 0)
            return TS_OPT_ERR;
        o->max_event_bytes = (size_t)v;
        return 0;
    case OPT_PROMPTS:
        seen->prompts = 1;
        return set_str(&o->prompts_path, arg);
    case OPT_DATASET:
        if (dataset_kind_from_name(arg, &o->dataset) != 0) {
            snprintf(msg, len, "--dataset: '%s' is not one of jsonl, sharegpt, random, "
                     "shared-prefix", arg);
            return TS_OPT_ERR;
        }
        return 0;
    case OPT_NUM_PROMPTS:
        seen->num_prompts = 1;
        return parse_positive("--num-prompts", arg, INT32_MAX, &o->num_prompts, msg, len);
    case OPT_SHAREGPT_OUTPUT_LEN:
        seen->sharegpt_output_len = 1;
        o->sharegpt_output_len = 1;
        return 0;
    case OPT_INPUT_LEN:
        seen->input_len = 1;
        return parse_positive("--input-len", arg, MAX_LEN_TOKENS, &o->input_len_tokens, msg, len);
    case OPT_INPUT_LEN_RANGE:
        seen->input_len = 1;
        return parse_fraction("--input-len-range", arg, 0, 0.99, &o->input_len_range, msg, len);
    case OPT_OUTPUT_LEN:
        seen->output_len = 1;
        return parse_positive("--output-len", arg, INT32_MAX / 2, &o->output_len_tokens, msg,
                              len);
    case OPT_OUTPUT_LEN_RANGE:
        seen->output_len = 1;
        return parse_fraction("--output-len-range", arg, 0, 0.99, &o->output_len_range, msg, len);
    case OPT_PREFIX_LEN:
        seen->prefix = 1;
        return parse_positive("--prefix-len", arg, MAX_LEN_TOKENS, &o->prefix_len_tokens, msg,
                              len);
    case OPT_GROUPS:
        seen->prefix = 1;
        return parse_positive("--groups", arg, 1 << 20, &o->groups, msg, len);
    case OPT_PROMPTS_PER_GROUP:
        seen->prefix = 1;
        return parse_positive("--prompts-per-group", arg, 1 << 20, &o->prompts_per_group, msg,
                              len);
    case OPT_QUESTION_LEN:
        seen->prefix = 1;
        return parse_positive("--question-len", arg, MAX_LEN_TOKENS, &o->question_len_tokens, msg,
                              len);
    case 'o':
        if (arg[0] == '\0') {
            snprintf(msg, len, "--out: the file name is empty");
            return TS_OPT_ERR;
        }
        return set_str(&o->out_path, arg);
    case OPT_FORCE:
        o->force = 1;
        return 0;
    case OPT_DEMO:
        o->demo = 1;
        return 0;
    case OPT_NO_PRECONNECT:
        o->no_preconnect = 1;
        return 0;
    case OPT_CONNECT_RATE:
        if (units_parse_count(arg, &v) != 0 || v < 0 || v > 10000000) {
            snprintf(msg, len, "--connect-rate: '%s' is not a whole number from 0 to 10M", arg);
            return TS_OPT_ERR;
        }
        o->connect_rate = v;
        return 0;
    case OPT_BIND:
        return parse_bind(o, arg, msg, len);
    case OPT_RATES: {
        double *rates;
        size_t n;
        if (units_parse_rate_list(arg, &rates, &n) != 0) {
            snprintf(msg, len, "--rates: '%s' is not a comma-separated list of positive rates",
                     arg);
            return TS_OPT_ERR;
        }
        for (size_t i = 0; i < n; i++)
            if (rates[i] < 1e-3 || rates[i] > 1e7) {
                snprintf(msg, len, "--rates: %g is outside 0.001 to 10000000 requests/s", rates[i]);
                free(rates);
                return TS_OPT_ERR;
            }
        free(o->rates);
        o->rates = rates;
        o->n_rates = n;
        return 0;
    }
    case OPT_ARRIVAL:
        if (schedule_arrival_from_name(arg, &o->arrival) != 0) {
            snprintf(msg, len, "--arrival: '%s' is not one of poisson, gamma, constant", arg);
            return TS_OPT_ERR;
        }
        return 0;
    case OPT_BURSTINESS:
        if (parse_fraction("--burstiness", arg, 1e-3, 1e3, &o->burstiness, msg, len) != 0)
            return TS_OPT_ERR;
        return 0;
    case OPT_SEED:
        if (units_parse_count(arg, &v) != 0) {
            snprintf(msg, len, "--seed: '%s' is not a whole number from 0", arg);
            return TS_OPT_ERR;
        }
        o->seed = (uint64_t)v;
        return 0;
    case OPT_MAX_CONCURRENCY:
        seen->max_concurrency = 1;
        return parse_positive("--max-concurrency", arg, INT32_MAX, &o->max_concurrency, msg, len);
    case OPT_TOTAL_REQUESTS:
        seen->total_requests = 1;
        return parse_positive("--requests", arg, INT64_C(1) << 40, &o->requests, msg, len);
    case OPT_UNTIL_SATURATED:
        o->until_saturated = 1;
        return 0;
    case OPT_MAX_LEVEL:
        return parse_positive("--max-level", arg, INT32_MAX, &o->max_level, msg, len);
    case OPT_MAX_ERROR_RATE:
        return parse_fraction("--max-error-rate", arg, 0, 1, &o->max_error_rate, msg, len);
    case OPT_SLO:
        return parse_slo(o, arg, msg, len);
    case OPT_JSON:
    case OPT_CSV:
        if (arg[0] == '\0') {
            snprintf(msg, len, "%s: the file name is empty", c == OPT_JSON ? "--json" : "--csv");
            return TS_OPT_ERR;
        }
        return set_str(c == OPT_JSON ? &o->json_path : &o->csv_path, arg);
    case OPT_RECORD_TOKENS:
        o->record_tokens = 1;
        return 0;
    case OPT_GRACE:
        /* 0 is a grace too: cancel at once. */
        if (units_parse_duration_ns(arg, TS_NS_PER_S, &v) != 0 || v < 0 || v > 3600 * TS_NS_PER_S) {
            snprintf(msg, len, "--grace: '%s' is not a duration from 0 to 1h (e.g. 2s, 500ms)",
                     arg);
            return TS_OPT_ERR;
        }
        o->grace_ns = v;
        return 0;
    case OPT_NO_PREFLIGHT:
        o->no_preflight = 1;
        return 0;
    case OPT_PROGRESS:
        for (int m = TS_PROGRESS_AUTO; m <= TS_PROGRESS_OFF; m++)
            if (strcmp(arg, options_progress_name(m)) == 0) {
                o->progress = m;
                return 0;
            }
        snprintf(msg, len, "--progress: '%s' is not one of auto, on, off", arg);
        return TS_OPT_ERR;
    case OPT_STALL_TIMEOUT:
        if (strcmp(arg, "0") == 0) {
            o->stall_timeout_ns = 0;
            return 0;
        }
        return parse_time("--stall-timeout", arg, &o->stall_timeout_ns, msg, len);
    case OPT_API_KEY:
        snprintf(msg, len, "%s", api_key_refused);
        return TS_OPT_ERR;
    case OPT_API_KEY_ENV:
        if (!is_env_name(arg)) {
            snprintf(msg, len,
                     "--api-key-env: give the name of an environment variable (letters, digits "
                     "and _), not the key");
            return TS_OPT_ERR;
        }
        return set_str(&o->api_key_env, arg);
    case OPT_API_KEY_FILE:
    case OPT_CACERT:
        if (arg[0] == '\0') {
            snprintf(msg, len, "%s: the file name is empty",
                     c == OPT_CACERT ? "--cacert" : "--api-key-file");
            return TS_OPT_ERR;
        }
        return set_str(c == OPT_CACERT ? &o->cacert : &o->api_key_file, arg);
    case 'H':
        return add_header(o, arg, msg, len);
    case OPT_INSECURE:
        o->insecure = 1;
        return 0;
    case 'v':
        o->verbose++;
        return 0;
    case 'h':
        return TS_OPT_HELP;
    case 'V':
        return TS_OPT_VERSION;
    default:
        return TS_OPT_ERR;
    }
}

int options_parse(struct ts_options *o, int argc, char **argv, char *msg, size_t len)
{
    static const int64_t default_levels[] = {1, 4, 16, 32};
    static const int64_t demo_levels[] = {1, 4, 16, 64, 128, 256};
    memset(o, 0, sizeof *o);
    o->api = TS_API_CHAT;
    o->max_tokens = 256;
    o->requests_per_stream = 2;
    o->timeout_ns = 600 * TS_NS_PER_S;
    o->connect_timeout_ns = 10 * TS_NS_PER_S;
    o->max_event_bytes = 1 << 20;
    o->burstiness = 1.0;
    o->max_level = 65536;
    o->max_error_rate = 0.01;
    o->connect_rate = 1000;
    o->dataset = TS_DATASET_JSONL;
    o->input_len_tokens = 1024;
    o->prefix_len_tokens = 2048;
    o->groups = 64;
    o->prompts_per_group = 16;
    o->question_len_tokens = 128;
    o->grace_ns = 2 * TS_NS_PER_S;
    if (set_str(&o->model, "default") || set_str(&o->out_path, "tokstorm-results.h5") ||
        (o->command_line = redact_command_line(argc, argv)) == NULL) {
        snprintf(msg, len, "out of memory");
        return TS_OPT_ERR;
    }
    msg[0] = '\0';

    struct seen seen = {0};
    optind = 1;
    opterr = 0; /* we print our own one-line message, once, from rank 0 */
    int c;
    while ((c = getopt_long(argc, argv, ":o:vhVH:", long_options, NULL)) != -1) {
        if (c == '?' || c == ':') {
            const char *name = argv[optind - 1];
            /* Up to '=' only: "--api-keys=sk-..." must not be quoted back whole. */
            int name_len = (int)strcspn(name, "=");
            if (c == ':' && optopt == OPT_API_KEY)
                snprintf(msg, len, "%s", api_key_refused);
            else if (c == ':')
                snprintf(msg, len, "%s: needs a value", name);
            else if (optopt)
                snprintf(msg, len, "-%c: unknown option (see --help)", optopt);
            else
                snprintf(msg, len, "%.*s: unknown option (see --help)", name_len, name);
            return TS_OPT_ERR;
        }
        int rc = apply_option(o, c, optarg, &seen, msg, len);
        if (rc != 0) {
            if (rc == TS_OPT_ERR && msg[0] == '\0')
                snprintf(msg, len, "out of memory");
            return rc;
        }
    }
    if (optind < argc) {
        snprintf(msg, len, "'%s': unexpected argument (options start with --; see --help)",
                 argv[optind]);
        return TS_OPT_ERR;
    }
    if (o->url == NULL && !o->demo) {
        snprintf(msg, len, "--url: missing (give the server's base URL, or --demo)");
        return TS_OPT_ERR;
    }
    if (o->url != NULL && o->demo) {
        snprintf(msg, len, "--url and --demo: give one, not both");
        return TS_OPT_ERR;
    }
    if (o->rates != NULL) {
        if (seen.levels || seen.requests || seen.warmup) {
            snprintf(msg, len, "--rates: open loop takes no %s (closed-loop options)",
                     seen.levels     ? "--levels"
                     : seen.requests ? "--requests-per-stream"
                                     : "--warmup");
            return TS_OPT_ERR;
        }
        if (seen.total_requests && o->duration_ns > 0) {
            snprintf(msg, len, "--duration and --requests: give one, not both");
            return TS_OPT_ERR;
        }
        if (!seen.total_requests && o->duration_ns == 0)
            o->duration_ns = 30 * TS_NS_PER_S;
        o->requests_per_stream = 0;
    } else if (seen.total_requests || seen.max_concurrency) {
        snprintf(msg, len, "%s: only for open loop (give --rates)",
                 seen.total_requests ? "--requests" : "--max-concurrency");
        return TS_OPT_ERR;
    }
    if (o->until_saturated && (o->rates ? o->n_rates : o->n_levels) > 1 &&
        (o->rates || seen.levels)) {
        snprintf(msg, len, "--until-saturated: give one starting %s, not a list",
                 o->rates ? "rate" : "level");
        return TS_OPT_ERR;
    }
    if (o->rates == NULL && o->duration_ns > 0) {
        if (seen.requests) {
            snprintf(msg, len, "--duration and --requests-per-stream: give one, not both");
            return TS_OPT_ERR;
        }
        o->requests_per_stream = 0;
    }
    if (check_output_paths(o, msg, len) != 0 || check_transport(o, msg, len) != 0)
        return TS_OPT_ERR;
    if (o->dataset == TS_DATASET_RANDOM && !seen.num_prompts)
        o->num_prompts = 1000;
    if (check_dataset(o, &seen, msg, len) != 0)
        return TS_OPT_ERR;
    if (o->timeout_ns < o->connect_timeout_ns)
        o->connect_timeout_ns = o->timeout_ns;
    if (!seen.levels) {
        const int64_t *src = o->demo ? demo_levels : default_levels;
        size_t n = o->demo ? sizeof demo_levels / sizeof *src : sizeof default_levels / sizeof *src;
        o->levels = malloc(n * sizeof *o->levels);
        if (o->levels == NULL) {
            snprintf(msg, len, "out of memory");
            return TS_OPT_ERR;
        }
        memcpy(o->levels, src, n * sizeof *src);
        o->n_levels = n;
    }
    if (o->until_saturated && !seen.levels && o->rates == NULL)
        o->n_levels = 1; /* the ladder starts at C=1 */
    if (o->demo && !seen.max_tokens)
        o->max_tokens = 64;
    return 0;
}

void options_free(struct ts_options *o)
{
    free(o->url);
    free(o->model);
    free(o->levels);
    free(o->rates);
    free(o->prompts_path);
    free(o->out_path);
    free(o->json_path);
    free(o->csv_path);
    free(o->command_line);
    free(o->api_key_env);
    free(o->api_key_file);
    free(o->cacert);
    free(o->extra_body);
    for (size_t i = 0; i < o->n_stop; i++)
        free(o->stop[i]);
    free(o->stop);
    for (size_t i = 0; i < o->n_headers; i++)
        free(o->headers[i]);
    free(o->headers);
    free_bind(o);
    memset(o, 0, sizeof *o);
}
