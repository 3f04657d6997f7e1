/* test_dataset.c: the datasets (dataset.h): each kind built twice from one seed is the same
 * list with the same hash, another seed gives another; ShareGPT's filters and sampling; the
 * generated lengths within their ranges; shared-prefix's groups; the one-line errors; and
 * --model auto's reading of a /v1/models answer (api_models.h). */
#include "tokstorm/api_models.h"
#include "tokstorm/dataset.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static char tmp_path[64];

static const char *write_tmp(const char *text)
{
    snprintf(tmp_path, sizeof tmp_path, "/tmp/tokstorm-test-dataset-%d.json", (int)getpid());
    FILE *f = fopen(tmp_path, "w");
    fputs(text, f);
    fclose(f);
    return tmp_path;
}

static int64_t count_words(const char *s)
{
    int64_t n = 0;
    for (const char *p = s; *p; p++)
        n += (p == s || p[-1] == ' ') && *p != ' ';
    return n;
}

static uint64_t load_hash(const struct ts_dataset_spec *s, size_t *count)
{
    struct ts_prompts p;
    char msg[256] = "";
    int rc = dataset_load(&p, s, msg, sizeof msg);
    if (rc != 0)
        fprintf(stderr, "load: %s\n", msg);
    uint64_t h = rc == 0 ? dataset_hash(&p) : 0;
    *count = p.count;
    prompts_free(&p);
    return h;
}

static void test_sharegpt_sample(void)
{
    struct ts_dataset_spec s = {.kind = TS_DATASET_SHAREGPT,
                                .path = TS_SOURCE_DIR "/prompts/sharegpt-sample.json",
                                .seed = 7};
    struct ts_prompts p;
    char msg[256] = "";
    CHECK_EQ_INT(dataset_load(&p, &s, msg, sizeof msg), 0);
    /* 30 conversations: 3 too short, 1 too long, 1 without an answer. */
    CHECK_EQ_INT(p.count, 25);
    for (size_t i = 0; i < p.count; i++) {
        CHECK(p.items[i].text != NULL && p.items[i].max_tokens == 0);
        int64_t t = dataset_estimate_tokens(p.items[i].text);
        CHECK(t >= TS_SHAREGPT_MIN_TOKENS && t <= TS_SHAREGPT_MAX_PROMPT_TOKENS);
    }
    uint64_t h = dataset_hash(&p);
    prompts_free(&p);

    size_t n;
    CHECK(load_hash(&s, &n) == h); /* same seed, same list */
    s.seed = 8;
    CHECK(load_hash(&s, &n) != h); /* another order */
    CHECK_EQ_INT(n, 25);
    s.num_prompts = 10;
    load_hash(&s, &n);
    CHECK_EQ_INT(n, 10);

    /* The reference answer's length as max_tokens. */
    s.num_prompts = 0;
    s.sharegpt_output_len = 1;
    CHECK_EQ_INT(dataset_load(&p, &s, msg, sizeof msg), 0);
    for (size_t i = 0; i < p.count; i++)
        CHECK(p.items[i].max_tokens >= TS_SHAREGPT_MIN_TOKENS);
    CHECK(dataset_hash(&p) != h);
    prompts_free(&p);
}

static void test_sharegpt_rules(void)
{
    /* One good pair; the prompt is the first human turn, whatever comes before it; a human
     * turn followed by another human turn waits for the answer. */
    const char *text =
        "[{\"id\": \"a\", \"conversations\": [{\"from\": \"gpt\", \"value\": \"Welcome to the "
        "show\"}, {\"from\": \"human\", \"value\": \"first question here\"}, {\"from\": "
        "\"gpt\", \"value\": \"an answer of some length\"}, {\"from\": \"human\", \"value\": "
        "\"second question\"}]},"
        " {\"id\": \"b\", \"conversations\": [{\"from\": \"human\", \"value\": \"only a "
        "question, no answer\"}]},"
        " {\"id\": \"c\"}]";
    struct ts_dataset_spec s = {.kind = TS_DATASET_SHAREGPT, .path = write_tmp(text),
                                .sharegpt_output_len = 1};
    struct ts_prompts p;
    char msg[256] = "";
    CHECK_EQ_INT(dataset_load(&p, &s, msg, sizeof msg), 0);
    CHECK_EQ_INT(p.count, 1);
    if (p.count == 1) {
        CHECK_EQ_STR(p.items[0].text, "first question here");
        CHECK_EQ_INT(p.items[0].max_tokens, (strlen("an answer of some length") + 3) / 4);
    }
    prompts_free(&p);

    /* The limits: exactly at them is kept, one over is dropped. */
    char *big = malloc(3 * 4096 + 256);
    char *prompt = malloc(4096 + 2), *answer = malloc(4 * 2048 + 2);
    memset(prompt, 'x', 4096);
    prompt[4096] = '\0'; /* 1024 tokens: kept */
    memset(answer, 'y', 4096);
    answer[4096] = '\0'; /* 1024 more: 2048 in all, kept */
    snprintf(big, 3 * 4096 + 256,
             "[{\"conversations\": [{\"from\": \"human\", \"value\": \"%s\"}, {\"from\": "
             "\"gpt\", \"value\": \"%s\"}]}]",
             prompt, answer);
    s.path = write_tmp(big);
    CHECK_EQ_INT(dataset_load(&p, &s, msg, sizeof msg), 0);
    CHECK_EQ_INT(p.count, 1);
    prompts_free(&p);
    answer[4096] = 'y';
    answer[4097] = '\0'; /* 2049 tokens in all */
    snprintf(big, 3 * 4096 + 256,
             "[{\"conversations\": [{\"from\": \"human\", \"value\": \"%s\"}, {\"from\": "
             "\"gpt\", \"value\": \"%s\"}]}]",
             prompt, answer);
    s.path = write_tmp(big);
    CHECK_EQ_INT(dataset_load(&p, &s, msg, sizeof msg), TS_PROMPTS_ERR_EMPTY);
    CHECK(strstr(msg, "no usable conversation in 1 entries") && strstr(msg, tmp_path));
    CHECK(strstr(msg, "1 over 1024 prompt or 2048 total tokens") != NULL);
    free(big);
    free(prompt);
    free(answer);

    /* Bad files: one line naming the file. */
    s.path = write_tmp("{\"conversations\": []}");
    CHECK_EQ_INT(dataset_load(&p, &s, msg, sizeof msg), TS_PROMPTS_ERR_FORMAT);
    CHECK(strstr(msg, "not a JSON array") && strstr(msg, tmp_path));
    s.path = write_tmp("[{\"conversations\": [");
    CHECK_EQ_INT(dataset_load(&p, &s, msg, sizeof msg), TS_PROMPTS_ERR_FORMAT);
    CHECK(strstr(msg, "not valid JSON") != NULL);
    s.path = write_tmp("[{\"conversations\": [{\"from\": \"human\", \"value\": \"Hi\"}, "
                       "{\"from\": \"gpt\", \"value\": \"Hello, how are you today?\"}]}]");
    CHECK_EQ_INT(dataset_load(&p, &s, msg, sizeof msg), TS_PROMPTS_ERR_EMPTY);
    CHECK(strstr(msg, "1 under 4 tokens") != NULL);
    s.path = "/nonexistent/sharegpt.json";
    CHECK_EQ_INT(dataset_load(&p, &s, msg, sizeof msg), TS_PROMPTS_ERR_IO);
    CHECK(strstr(msg, "/nonexistent/sharegpt.json") && strstr(msg, "No such file"));
    CHECK_EQ_INT(p.count, 0);
}

static void test_random(void)
{
    struct ts_dataset_spec s = {.kind = TS_DATASET_RANDOM, .seed = 42, .num_prompts = 200,
                                .input_len_tokens = 100, .input_len_range = 0.25,
                                .output_len_tokens = 40, .output_len_range = 0.5};
    struct ts_prompts p;
    char msg[256] = "";
    CHECK_EQ_INT(dataset_load(&p, &s, msg, sizeof msg), 0);
    CHECK_EQ_INT(p.count, 200);
    int64_t in_min = 1 << 30, in_max = 0, out_min = 1 << 30, out_max = 0;
    for (size_t i = 0; i < p.count; i++) {
        int64_t w = count_words(p.items[i].text), m = p.items[i].max_tokens;
        in_min = w < in_min ? w : in_min;
        in_max = w > in_max ? w : in_max;
        out_min = m < out_min ? m : out_min;
        out_max = m > out_max ? m : out_max;
    }
    /* Within the ranges, and spread over them. */
    CHECK(in_min >= 75 && in_max <= 125 && in_min < 85 && in_max > 115);
    CHECK(out_min >= 20 && out_max <= 60 && out_min < 25 && out_max > 55);
    CHECK(strcmp(p.items[0].text, p.items[1].text) != 0);
    uint64_t h = dataset_hash(&p);
    prompts_free(&p);
    size_t n;
    CHECK(load_hash(&s, &n) == h);
    s.seed = 43;
    CHECK(load_hash(&s, &n) != h);

    /* No range: every length exact; no --output-len: max_tokens 0 (the run's). */
    s.input_len_range = 0;
    s.output_len_tokens = 0;
    s.num_prompts = 20;
    CHECK_EQ_INT(dataset_load(&p, &s, msg, sizeof msg), 0);
    for (size_t i = 0; i < p.count; i++) {
        CHECK_EQ_INT(count_words(p.items[i].text), 100);
        CHECK_EQ_INT(p.items[i].max_tokens, 0);
    }
    prompts_free(&p);
}

static void test_shared_prefix(void)
{
    struct ts_dataset_spec s = {.kind = TS_DATASET_SHARED_PREFIX, .seed = 1,
                                .prefix_len_tokens = 300, .groups = 3,
                                .prompts_per_group = 4, .question_len_tokens = 20,
                                .output_len_tokens = 16};
    struct ts_prompts p;
    char msg[256] = "";
    CHECK_EQ_INT(dataset_load(&p, &s, msg, sizeof msg), 0);
    CHECK_EQ_INT(p.count, 12);
    char *prefix[3] = {NULL, NULL, NULL};
    for (size_t i = 0; i < p.count; i++) {
        cJSON *m = cJSON_Parse(p.items[i].messages_json);
        CHECK(cJSON_GetArraySize(m) == 2);
        const char *sys = cJSON_GetObjectItem(cJSON_GetArrayItem(m, 0), "content")->valuestring;
        const char *q = cJSON_GetObjectItem(cJSON_GetArrayItem(m, 1), "content")->valuestring;
        CHECK_EQ_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(m, 0), "role")->valuestring,
                     "system");
        CHECK_EQ_INT(count_words(sys), 300);
        CHECK_EQ_INT(count_words(q), 20);
        CHECK_EQ_INT(p.items[i].max_tokens, 16);
        size_t g = i / 4;
        if (i % 4 == 0)
            prefix[g] = strdup(sys);
        else
            CHECK_EQ_STR(sys, prefix[g]); /* the group's prompts share its system prompt */
        cJSON_Delete(m);
    }
    CHECK(strcmp(prefix[0], prefix[1]) != 0 && strcmp(prefix[1], prefix[2]) != 0);
    for (int g = 0; g < 3; g++)
        free(prefix[g]);
    uint64_t h = dataset_hash(&p);
    prompts_free(&p);
    size_t n;
    CHECK(load_hash(&s, &n) == h);
    s.seed = 2;
    CHECK(load_hash(&s, &n) != h);
}

static void test_hash_and_names(void)
{
    /* The hash is a fixed function of the prompts: a known value pins it across builds. */
    struct ts_prompt items[2] = {{.text = "a"}, {.messages_json = "[]", .max_tokens = 5}};
    struct ts_prompts p = {.items = items, .count = 2};
    uint64_t h = dataset_hash(&p);
    items[1].max_tokens = 6;
    CHECK(dataset_hash(&p) != h);
    items[1].max_tokens = 5;
    CHECK(dataset_hash(&p) == h);
    struct ts_prompts empty = {0};
    CHECK(dataset_hash(&empty) == UINT64_C(0xcbf29ce484222325));
    CHECK_EQ_INT(dataset_estimate_tokens(""), 0);
    CHECK_EQ_INT(dataset_estimate_tokens("abcd"), 1);
    CHECK_EQ_INT(dataset_estimate_tokens("abcde"), 2);

    enum ts_dataset_kind k;
    CHECK(dataset_kind_from_name("shared-prefix", &k) == 0 && k == TS_DATASET_SHARED_PREFIX);
    CHECK(dataset_kind_from_name("sharegpt", &k) == 0 && k == TS_DATASET_SHAREGPT);
    CHECK(dataset_kind_from_name("nope", &k) != 0);
    CHECK_EQ_STR(dataset_kind_name(TS_DATASET_RANDOM), "random");

    struct ts_dataset_spec s = {.kind = TS_DATASET_RANDOM, .num_prompts = 3,
                                .input_len_tokens = 9};
    char *j = dataset_params_json(&s);
    CHECK(j && strstr(j, "\"dataset\":\"random\"") && strstr(j, "\"input_len\":9"));
    free(j);
}

static void test_models(void)
{
    char *model = NULL, msg[256] = "";
    const char *one = "{\"object\":\"list\",\"data\":[{\"id\":\"qwen3-8b\",\"object\":\"model\"}]}";
    CHECK_EQ_INT(api_models_pick(one, strlen(one), &model, msg, sizeof msg), 0);
    CHECK_EQ_STR(model, "qwen3-8b");
    free(model);
    const char *two = "{\"data\":[{\"id\":\"a\"},{\"id\":\"b\"}]}";
    CHECK_EQ_INT(api_models_pick(two, strlen(two), &model, msg, sizeof msg),
                 TS_API_MODELS_SEVERAL);
    CHECK(model == NULL && strstr(msg, "2 models") && strstr(msg, " a b"));
    const char *none = "{\"data\":[]}";
    CHECK_EQ_INT(api_models_pick(none, strlen(none), &model, msg, sizeof msg),
                 TS_API_MODELS_NONE);
    CHECK_EQ_INT(api_models_pick("<html>", 6, &model, msg, sizeof msg),
                 TS_API_MODELS_MALFORMED);
    const char *noid = "{\"data\":[{\"name\":\"x\"}]}";
    CHECK_EQ_INT(api_models_pick(noid, strlen(noid), &model, msg, sizeof msg),
                 TS_API_MODELS_MALFORMED);
}

int main(void)
{
    test_sharegpt_sample();
    test_sharegpt_rules();
    test_random();
    test_shared_prefix();
    test_hash_and_names();
    test_models();
    unlink(tmp_path);
    return check_report("dataset");
}
