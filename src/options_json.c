/* options_json.c: every option's effective value as one JSON object, for the results file's
 * options_json attribute and the --json summary. Keys are the long option names, so a reader
 * maps them to --help without a table. It reads the parsed options only: no I/O. */
#include <cJSON.h>
#include <stdlib.h>

#include "tokstorm/options.h"
#include "tokstorm/redact.h"
#include "tokstorm/schedule.h"

static void add_seconds_or_null(cJSON *obj, const char *key, int64_t ns)
{
    if (ns > 0)
        cJSON_AddNumberToObject(obj, key, (double)ns / 1e9);
    else
        cJSON_AddNullToObject(obj, key);
}

static void add_count_or_null(cJSON *obj, const char *key, int64_t v)
{
    if (v > 0)
        cJSON_AddNumberToObject(obj, key, (double)v);
    else
        cJSON_AddNullToObject(obj, key);
}

static void add_string_or_null(cJSON *obj, const char *key, const char *v)
{
    if (v != NULL)
        cJSON_AddStringToObject(obj, key, v);
    else
        cJSON_AddNullToObject(obj, key);
}

static void add_load(cJSON *j, const struct ts_options *o, const char *prompts_path)
{
    if (o->rates == NULL) {
        cJSON *levels = cJSON_AddArrayToObject(j, "levels");
        for (size_t i = 0; levels && i < o->n_levels; i++)
            cJSON_AddItemToArray(levels, cJSON_CreateNumber((double)o->levels[i]));
    } else {
        cJSON_AddNullToObject(j, "levels");
    }
    add_count_or_null(j, "requests-per-stream", o->requests_per_stream);
    add_seconds_or_null(j, "duration", o->duration_ns);
    cJSON_AddNumberToObject(j, "warmup", (double)o->warmup);
    add_string_or_null(j, "prompts", prompts_path ? prompts_path : o->prompts_path);
    cJSON_AddBoolToObject(j, "no-preconnect", o->no_preconnect);
    cJSON_AddNumberToObject(j, "connect-rate", (double)o->connect_rate);
    if (o->n_bind_addrs > 0) {
        cJSON *bind = cJSON_AddArrayToObject(j, "bind");
        for (size_t i = 0; bind && i < o->n_bind_addrs; i++)
            cJSON_AddItemToArray(bind, cJSON_CreateString(o->bind_addrs[i]));
    } else {
        cJSON_AddNullToObject(j, "bind");
    }
}

/* The dataset options: those that do not apply to the kind given are null. */
static void add_dataset(cJSON *j, const struct ts_options *o)
{
    enum ts_dataset_kind k = o->dataset;
    int random = k == TS_DATASET_RANDOM, prefix = k == TS_DATASET_SHARED_PREFIX;
    cJSON_AddStringToObject(j, "dataset", dataset_kind_name(k));
    add_count_or_null(j, "num-prompts", k == TS_DATASET_SHAREGPT || random ? o->num_prompts : 0);
    cJSON_AddBoolToObject(j, "sharegpt-output-len", o->sharegpt_output_len);
    add_count_or_null(j, "input-len", random ? o->input_len_tokens : 0);
    if (random)
        cJSON_AddNumberToObject(j, "input-len-range", o->input_len_range);
    else
        cJSON_AddNullToObject(j, "input-len-range");
    add_count_or_null(j, "output-len", random || prefix ? o->output_len_tokens : 0);
    if ((random || prefix) && o->output_len_tokens > 0)
        cJSON_AddNumberToObject(j, "output-len-range", o->output_len_range);
    else
        cJSON_AddNullToObject(j, "output-len-range");
    add_count_or_null(j, "prefix-len", prefix ? o->prefix_len_tokens : 0);
    add_count_or_null(j, "groups", prefix ? o->groups : 0);
    add_count_or_null(j, "prompts-per-group", prefix ? o->prompts_per_group : 0);
    add_count_or_null(j, "question-len", prefix ? o->question_len_tokens : 0);
}

static void add_open_loop_and_search(cJSON *j, const struct ts_options *o)
{
    if (o->rates != NULL) {
        cJSON *rates = cJSON_AddArrayToObject(j, "rates");
        for (size_t i = 0; rates && i < o->n_rates; i++)
            cJSON_AddItemToArray(rates, cJSON_CreateNumber(o->rates[i]));
    } else {
        cJSON_AddNullToObject(j, "rates");
    }
    cJSON_AddStringToObject(j, "arrival", schedule_arrival_name(o->arrival));
    cJSON_AddNumberToObject(j, "burstiness", o->burstiness);
    cJSON_AddNumberToObject(j, "seed", (double)o->seed);
    add_count_or_null(j, "requests", o->requests);
    add_count_or_null(j, "max-concurrency", o->max_concurrency);
    cJSON_AddBoolToObject(j, "until-saturated", o->until_saturated);
    cJSON_AddNumberToObject(j, "max-level", (double)o->max_level);
    cJSON_AddNumberToObject(j, "max-error-rate", o->max_error_rate);
    cJSON *slo = cJSON_AddObjectToObject(j, "slo");
    if (slo) {
        add_seconds_or_null(slo, "ttft", o->slo_ttft_ns);
        add_seconds_or_null(slo, "tpot", o->slo_tpot_ns);
    }
}

static void add_request_and_output(cJSON *j, const struct ts_options *o)
{
    cJSON_AddNumberToObject(j, "max-tokens", (double)o->max_tokens);
    cJSON_AddNumberToObject(j, "temperature", o->temperature);
    cJSON_AddBoolToObject(j, "ignore-eos", o->ignore_eos);
    if (o->top_p > 0)
        cJSON_AddNumberToObject(j, "top-p", o->top_p);
    else
        cJSON_AddNullToObject(j, "top-p");
    add_count_or_null(j, "min-tokens", o->min_tokens);
    if (o->n_stop > 0) {
        cJSON *stop = cJSON_AddArrayToObject(j, "stop");
        for (size_t i = 0; stop && i < o->n_stop; i++)
            cJSON_AddItemToArray(stop, cJSON_CreateString(o->stop[i]));
    } else {
        cJSON_AddNullToObject(j, "stop");
    }
    /* The object itself, not its text: checked when parsed, so it reads back as JSON. */
    cJSON *extra = o->extra_body ? cJSON_Parse(o->extra_body) : NULL;
    if (extra == NULL || !cJSON_AddItemToObject(j, "extra-body", extra)) {
        cJSON_Delete(extra);
        cJSON_AddNullToObject(j, "extra-body");
    }
    cJSON_AddNumberToObject(j, "timeout", (double)o->timeout_ns / 1e9);
    cJSON_AddNumberToObject(j, "connect-timeout", (double)o->connect_timeout_ns / 1e9);
    cJSON_AddNumberToObject(j, "max-event-bytes", (double)o->max_event_bytes);
    /* 0 (off) as null, like the other limits that do not apply. */
    if (o->stall_timeout_ns > 0)
        cJSON_AddNumberToObject(j, "stall-timeout", (double)o->stall_timeout_ns / 1e9);
    else
        cJSON_AddNullToObject(j, "stall-timeout");
    cJSON_AddStringToObject(j, "out", o->out_path);
    add_string_or_null(j, "json", o->json_path);
    add_string_or_null(j, "csv", o->csv_path);
    cJSON_AddBoolToObject(j, "force", o->force);
    cJSON_AddBoolToObject(j, "record-tokens", o->record_tokens);
    cJSON_AddStringToObject(j, "progress", options_progress_name(o->progress));
    cJSON_AddNumberToObject(j, "grace", (double)o->grace_ns / 1e9);
    cJSON_AddBoolToObject(j, "no-preflight", o->no_preflight);
    cJSON_AddNumberToObject(j, "verbose", o->verbose);
}

/* Where the API key comes from (never the key), the headers as redact.h records them, and how
 * the server's certificate is checked. */
static void add_transport(cJSON *j, const struct ts_options *o)
{
    add_string_or_null(j, "api-key-env", o->api_key_env);
    add_string_or_null(j, "api-key-file", o->api_key_file);
    if (o->n_headers > 0) {
        cJSON *headers = cJSON_AddArrayToObject(j, "header");
        for (size_t i = 0; headers && i < o->n_headers; i++) {
            char *masked = redact_header(o->headers[i]);
            if (masked)
                cJSON_AddItemToArray(headers, cJSON_CreateString(masked));
            free(masked);
        }
    } else {
        cJSON_AddNullToObject(j, "header");
    }
    cJSON_AddBoolToObject(j, "insecure", o->insecure);
    add_string_or_null(j, "cacert", o->cacert);
}

char *options_to_json(const struct ts_options *o, const char *url, const char *prompts_path)
{
    cJSON *j = cJSON_CreateObject();
    if (j == NULL)
        return NULL;
    add_string_or_null(j, "url", url ? url : o->url);
    cJSON_AddStringToObject(j, "model", o->model);
    cJSON_AddStringToObject(j, "api", api_kind_name(o->api));
    cJSON_AddBoolToObject(j, "demo", o->demo);
    add_transport(j, o);
    add_load(j, o, prompts_path);
    add_dataset(j, o);
    add_open_loop_and_search(j, o);
    add_request_and_output(j, o);
    /* Out of memory inside an Add call leaves that member out; printing then fails too. */
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return text;
}
