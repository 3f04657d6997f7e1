/* test_options.c: defaults, accepted forms, and one clear message for each kind of bad
 * command line. */
#include "tokstorm/options.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define ARGV(...)                                                                                  \
    (char *[])                                                                                     \
    {                                                                                              \
        "tokstorm", __VA_ARGS__, NULL                                                              \
    }
#define ARGC(...)          ((int)(sizeof((char *[]){"tokstorm", __VA_ARGS__}) / sizeof(char *)))
#define PARSE(o, msg, ...) options_parse(o, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), msg, sizeof msg)

/* Parses and checks that it fails with a message containing want. */
static int rejects(int argc, char **argv, const char *want)
{
    struct ts_options o;
    char msg[256] = "";
    int rc = options_parse(&o, argc, argv, msg, sizeof msg);
    options_free(&o);
    int ok = rc == TS_OPT_ERR && strstr(msg, want) != NULL && strchr(msg, '\n') == NULL;
    if (!ok)
        fprintf(stderr, "rc %d, message '%s', wanted '%s'\n", rc, msg, want);
    return ok;
}
#define REJECTS(want, ...) CHECK(rejects(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), want))

/* Every long option --help lists (but --help, --version and --rate, the singular of --rates)
 * is a key of options_to_json's object: a new option cannot be left out of the record. */
static void check_json_covers_help(const struct ts_options *o)
{
    char *help = NULL;
    size_t help_len = 0;
    FILE *f = open_memstream(&help, &help_len);
    options_print_help(f);
    fclose(f);
    char *text = options_to_json(o, NULL, "/p/coding.jsonl");
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    CHECK(j != NULL && cJSON_IsObject(j));
    int options = 0, missing = 0;
    for (char *p = help; j && (p = strstr(p, "--")) != NULL;) {
        p += 2;
        size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyz-");
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)n, p);
        p += n;
        if (n < 2 || strcmp(name, "help") == 0 || strcmp(name, "version") == 0 ||
            strcmp(name, "rate") == 0)
            continue;
        options++;
        if (!cJSON_HasObjectItem(j, name)) {
            fprintf(stderr, "options_to_json has no \"%s\"\n", name);
            missing++;
        }
    }
    CHECK(options >= 30);
    CHECK_EQ_INT(missing, 0);
    cJSON_Delete(j);
    free(text);
    free(help);
}

int main(void)
{
    struct ts_options o;
    char msg[256];

    CHECK_EQ_INT(PARSE(&o, msg, "--url", "http://127.0.0.1:8000/"), 0);
    CHECK_EQ_STR(o.url, "http://127.0.0.1:8000");
    CHECK_EQ_STR(o.model, "default");
    CHECK_EQ_INT(o.api, TS_API_CHAT);
    CHECK_EQ_INT(o.n_levels, 4);
    CHECK_EQ_INT(o.levels[3], 32);
    CHECK_EQ_INT(o.max_tokens, 256);
    CHECK_EQ_INT(o.requests_per_stream, 2);
    CHECK_EQ_INT(o.timeout_ns, 600000000000LL);
    CHECK_EQ_STR(o.out_path, "tokstorm-results.h5");
    CHECK(o.prompts_path == NULL && !o.force && !o.demo && !o.ignore_eos);
    CHECK_EQ_STR(o.command_line, "tokstorm --url http://127.0.0.1:8000/");
    CHECK_EQ_INT(o.connect_rate, 1000);
    CHECK(o.bind_addrs == NULL && o.n_bind_addrs == 0 && !o.no_preconnect);
    options_free(&o);

    /* Connections: local addresses to spread them over, and the pace of opening them. */
    CHECK_EQ_INT(PARSE(&o, msg, "--url", "http://x", "--bind", "127.0.0.2,::1,10.1.2.3", "--bind",
                       "127.0.0.2,fd00::5", "--connect-rate", "0"),
                 0);
    CHECK_EQ_INT(o.n_bind_addrs, 2); /* the last --bind wins */
    CHECK_EQ_STR(o.bind_addrs[0], "127.0.0.2");
    CHECK_EQ_STR(o.bind_addrs[1], "fd00::5");
    CHECK_EQ_INT(o.connect_rate, 0);
    options_free(&o);
    CHECK_EQ_INT(PARSE(&o, msg, "--url", "http://x", "--connect-rate", "2k"), 0);
    CHECK_EQ_INT(o.connect_rate, 2000);
    options_free(&o);
    REJECTS("--bind: '127.0.0.300' is not a numeric IPv4 or IPv6 address", "--url", "http://x",
            "--bind", "127.0.0.2,127.0.0.300");
    REJECTS("--bind: 'eth0' is not a numeric", "--url", "http://x", "--bind", "eth0");
    REJECTS("--bind: 'localhost' is not a numeric", "--url", "http://x", "--bind", "localhost");
    REJECTS("--bind: '' is not a numeric", "--url", "http://x", "--bind", "127.0.0.2,,127.0.0.3");
    REJECTS("--bind: '' is not a numeric", "--url", "http://x", "--bind", "");
    REJECTS("--connect-rate: '-1' is not", "--url", "http://x", "--connect-rate", "-1");
    REJECTS("--connect-rate: 'fast' is not", "--url", "http://x", "--connect-rate", "fast");

    CHECK_EQ_INT(PARSE(&o, msg, "--url", "https://gpu01:30000/v1", "--model", "qwen", "--api",
                       "completions", "--levels", "1,4,2k", "--max-tokens", "1k", "--temperature",
                       "0.7", "--ignore-eos", "--duration", "90s", "--warmup", "1", "--timeout",
                       "2m", "-o", "x.h5", "--force", "--prompts", "p.jsonl", "-v", "-v"),
                 0);
    CHECK_EQ_STR(o.url, "https://gpu01:30000");
    CHECK_EQ_INT(o.api, TS_API_COMPLETIONS);
    CHECK_EQ_INT(o.levels[2], 2000);
    CHECK_EQ_INT(o.max_tokens, 1000);
    CHECK(o.temperature == 0.7 && o.ignore_eos && o.force && o.verbose == 2);
    CHECK_EQ_INT(o.duration_ns, 90000000000LL);
    CHECK_EQ_INT(o.requests_per_stream, 0);
    CHECK_EQ_INT(o.warmup, 1);
    CHECK_EQ_INT(o.timeout_ns, 120000000000LL);
    CHECK_EQ_STR(o.out_path, "x.h5");
    CHECK_EQ_STR(o.prompts_path, "p.jsonl");
    options_free(&o);

    CHECK_EQ_INT(PARSE(&o, msg, "--url=http://[::1]:8000"), 0);
    CHECK_EQ_STR(o.url, "http://[::1]:8000");
    options_free(&o);

    CHECK_EQ_INT(PARSE(&o, msg, "--demo"), 0);
    CHECK(o.demo && o.url == NULL);
    CHECK_EQ_INT(o.max_tokens, 64);
    CHECK_EQ_INT(o.n_levels, 6);
    options_free(&o);

    /* Open loop and saturation search. */
    CHECK_EQ_INT(PARSE(&o, msg, "--url", "http://x", "--rates", "0.5,2,8", "--arrival", "gamma",
                       "--burstiness", "0.25", "--seed", "42", "--requests", "500",
                       "--max-concurrency", "64", "--slo", "ttft=2s,tpot=50ms"),
                 0);
    CHECK(o.n_rates == 3 && o.rates[0] == 0.5 && o.rates[2] == 8);
    CHECK(o.arrival == TS_ARRIVAL_GAMMA && o.burstiness == 0.25 && o.seed == 42);
    CHECK(o.requests == 500 && o.max_concurrency == 64 && o.duration_ns == 0);
    CHECK(o.slo_ttft_ns == 2000000000 && o.slo_tpot_ns == 50000000);
    options_free(&o);
    CHECK_EQ_INT(PARSE(&o, msg, "--url", "http://x", "--rate", "3"), 0);
    CHECK(o.n_rates == 1 && o.duration_ns == 30000000000LL); /* open loop defaults to 30 s */
    options_free(&o);
    CHECK_EQ_INT(PARSE(&o, msg, "--url", "http://x", "--until-saturated", "--max-level", "512"), 0);
    CHECK(o.until_saturated && o.n_levels == 1 && o.levels[0] == 1 && o.max_level == 512);
    CHECK(o.max_error_rate == 0.01);
    options_free(&o);
    REJECTS("--rates: '1,,2' is not", "--url", "http://x", "--rates", "1,,2");
    REJECTS("--rates: '0' is not", "--url", "http://x", "--rates", "0");
    REJECTS("--rates: 1e-06 is outside", "--url", "http://x", "--rates", "0.000001");
    REJECTS("--rates: open loop takes no --levels", "--url", "http://x", "--rates", "1", "--levels",
            "4");
    REJECTS("--requests: only for open loop", "--url", "http://x", "--requests", "10");
    REJECTS("--duration and --requests", "--url", "http://x", "--rates", "1", "--requests", "9",
            "--duration", "5s");
    REJECTS("--arrival: 'bursty' is not", "--url", "http://x", "--arrival", "bursty");
    REJECTS("--burstiness: '0' is not", "--url", "http://x", "--burstiness", "0");
    REJECTS("--slo: 'latency=2s' is not", "--url", "http://x", "--slo", "latency=2s");
    REJECTS("--slo: 'ttft=soon' is not", "--url", "http://x", "--slo", "ttft=soon");
    REJECTS("--max-error-rate: '2' is not", "--url", "http://x", "--max-error-rate", "2");
    REJECTS("--until-saturated: give one starting level", "--url", "http://x", "--until-saturated",
            "--levels", "1,2");

    CHECK_EQ_INT(PARSE(&o, msg, "--help"), TS_OPT_HELP);
    options_free(&o);
    CHECK_EQ_INT(PARSE(&o, msg, "--url", "http://x", "-V"), TS_OPT_VERSION);
    options_free(&o);

    REJECTS("--bogus: unknown option", "--url", "http://x", "--bogus");
    REJECTS("-x: unknown option", "--url", "http://x", "-x");
    REJECTS("--levels: needs a value", "--url", "http://x", "--levels");
    REJECTS("'extra': unexpected argument", "--url", "http://x", "extra");
    REJECTS("--url: missing", "--levels", "1");
    REJECTS("--url: 'ftp://x' must start with http://", "--url", "ftp://x");
    REJECTS("has no host", "--url", "http://");
    REJECTS("has no host", "--url", "http://:80");
    REJECTS("invalid port", "--url", "http://h:0");
    REJECTS("invalid port", "--url", "http://h:99999");
    REJECTS("invalid port", "--url", "http://h:8o");
    REJECTS("space or control", "--url", "http://h /x");
    REJECTS("--levels: '0' is not", "--url", "http://x", "--levels", "0");
    REJECTS("--levels: '1,-4' is not", "--url", "http://x", "--levels", "1,-4");
    REJECTS("--levels: 'abc' is not", "--url", "http://x", "--levels", "abc");
    REJECTS("--levels: '4,,8' is not", "--url", "http://x", "--levels", "4,,8");
    REJECTS("--levels: 4 appears twice", "--url", "http://x", "--levels", "1,4,4");
    REJECTS("--max-tokens: '0' is not", "--url", "http://x", "--max-tokens", "0");
    REJECTS("--max-tokens: '-5' is not", "--url", "http://x", "--max-tokens", "-5");
    REJECTS("--max-tokens: 'many' is not", "--url", "http://x", "--max-tokens", "many");
    REJECTS("--requests-per-stream: '0'", "--url", "http://x", "--requests-per-stream", "0");
    REJECTS("--timeout: '0' is not", "--url", "http://x", "--timeout", "0");
    REJECTS("--timeout: '500us' is below 1ms", "--url", "http://x", "--timeout", "500us");
    REJECTS("--timeout: '5parsecs' is not", "--url", "http://x", "--timeout", "5parsecs");
    REJECTS("--duration and --requests-per-stream", "--url", "http://x", "--duration", "5",
            "--requests-per-stream", "3");
    REJECTS("--api: 'grpc' is not", "--url", "http://x", "--api", "grpc");
    REJECTS("--temperature: 'hot' is not", "--url", "http://x", "--temperature", "hot");
    REJECTS("--warmup: '-1' is not", "--url", "http://x", "--warmup", "-1");
    REJECTS("--out: the file name is empty", "--url", "http://x", "--out", "");
    REJECTS("--url and --demo", "--url", "http://x", "--demo");
    /* Outputs besides the results file, recording, progress. */
    CHECK_EQ_INT(PARSE(&o, msg, "--url", "http://x"), 0);
    CHECK(o.json_path == NULL && o.csv_path == NULL && !o.record_tokens);
    CHECK_EQ_INT(o.progress, TS_PROGRESS_AUTO);
    check_json_covers_help(&o);
    options_free(&o);
    CHECK_EQ_INT(PARSE(&o, msg, "--url", "http://x", "--json", "s.json", "--csv", "s.csv",
                       "--record-tokens", "--progress", "on", "--levels", "2,8", "--slo", "ttft=2s",
                       "--api-key", "sk-1"),
                 TS_OPT_ERR); /* no --api-key yet: unknown, but the record is masked */
    CHECK(strstr(o.command_line, "sk-1") == NULL);
    options_free(&o);
    CHECK_EQ_INT(PARSE(&o, msg, "--url", "http://x", "--json", "s.json", "--csv", "s.csv",
                       "--record-tokens", "--progress", "on", "--levels", "2,8", "--slo",
                       "ttft=2s"),
                 0);
    CHECK_EQ_STR(o.json_path, "s.json");
    CHECK_EQ_STR(o.csv_path, "s.csv");
    CHECK(o.record_tokens);
    CHECK_EQ_INT(o.progress, TS_PROGRESS_ON);
    check_json_covers_help(&o);
    {
        char *text = options_to_json(&o, "http://mock:1", NULL);
        cJSON *j = text ? cJSON_Parse(text) : NULL;
        cJSON *levels = cJSON_GetObjectItem(j, "levels"), *slo = cJSON_GetObjectItem(j, "slo");
        CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(j, "url")), "http://mock:1");
        CHECK(cJSON_GetArraySize(levels) == 2 && cJSON_GetArrayItem(levels, 1)->valuedouble == 8);
        CHECK(cJSON_IsNull(cJSON_GetObjectItem(j, "rates")));
        CHECK(cJSON_IsNull(cJSON_GetObjectItem(j, "prompts"))); /* the bundled file */
        CHECK(cJSON_GetObjectItem(j, "timeout")->valuedouble == 600);
        CHECK(cJSON_GetObjectItem(slo, "ttft")->valuedouble == 2);
        CHECK(cJSON_IsNull(cJSON_GetObjectItem(slo, "tpot")));
        CHECK(cJSON_IsTrue(cJSON_GetObjectItem(j, "record-tokens")));
        CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(j, "progress")), "on");
        CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(j, "csv")), "s.csv");
        cJSON_Delete(j);
        free(text);
    }
    options_free(&o);
    CHECK_EQ_INT(PARSE(&o, msg, "--url", "http://x", "--rates", "1,2", "--progress", "off"), 0);
    CHECK_EQ_INT(o.progress, TS_PROGRESS_OFF);
    {
        char *text = options_to_json(&o, NULL, NULL);
        cJSON *j = text ? cJSON_Parse(text) : NULL;
        CHECK(cJSON_IsNull(cJSON_GetObjectItem(j, "levels")));
        CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(j, "rates")) == 2);
        CHECK(cJSON_GetObjectItem(j, "duration")->valuedouble == 30);
        CHECK(cJSON_IsNull(cJSON_GetObjectItem(j, "requests-per-stream")));
        cJSON_Delete(j);
        free(text);
    }
    options_free(&o);
    REJECTS("--progress: 'sometimes' is not one of auto, on, off", "--url", "http://x",
            "--progress", "sometimes");
    REJECTS("--json: the file name is empty", "--url", "http://x", "--json", "");
    REJECTS("--csv: the file name is empty", "--url", "http://x", "--csv", "");
    REJECTS("--json: r.h5 is also the --out file", "--url", "http://x", "-o", "r.h5", "--json",
            "r.h5");
    REJECTS("--csv: tokstorm-results.h5 is also the --out file", "--url", "http://x", "--csv",
            "tokstorm-results.h5");
    REJECTS("--csv: s is also the --json file", "--url", "http://x", "--json", "s", "--csv", "s");

    /* Interruptions and the preflight. */
    CHECK_EQ_INT(PARSE(&o, msg, "--url", "http://x"), 0);
    CHECK_EQ_INT(o.grace_ns, 2000000000);
    CHECK_EQ_INT(o.no_preflight, 0);
    options_free(&o);
    CHECK_EQ_INT(PARSE(&o, msg, "--url", "http://x", "--grace", "0", "--no-preflight"), 0);
    CHECK_EQ_INT(o.grace_ns, 0);
    CHECK_EQ_INT(o.no_preflight, 1);
    options_free(&o);
    CHECK_EQ_INT(PARSE(&o, msg, "--url", "http://x", "--grace", "500ms"), 0);
    CHECK_EQ_INT(o.grace_ns, 500000000);
    options_free(&o);
    REJECTS("--grace: '-1s' is not a duration from 0 to 1h", "--url", "http://x", "--grace", "-1s");
    REJECTS("--grace: '2h' is not a duration from 0 to 1h", "--url", "http://x", "--grace", "2h");
    return check_report("options");
}
