/* test_api.c: the OpenAI dialects: request bodies checked by parsing them back with cJSON, and
 * event interpretation over the chunks that vLLM, SGLang and OpenAI actually send. */
#include "tokstorm/api.h"

#include "check.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int parse(enum ts_api_kind kind, const char *data, struct ts_api_chunk *c)
{
    return api_parse_event(kind, data, strlen(data), c);
}

static void check_quiet_chunk(const struct ts_api_chunk *c)
{
    CHECK_EQ_INT(c->done, 0);
    CHECK_EQ_INT(c->content_pieces, 0);
    CHECK_EQ_INT(c->reasoning_pieces, 0);
    CHECK_EQ_INT(c->finished, 0);
    CHECK_EQ_INT(c->has_usage, 0);
    CHECK_EQ_INT(c->error, 0);
    CHECK_EQ_STR(c->error_message, "");
}

#define CHAT_HEAD                                                                                  \
    "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,"          \
    "\"model\":\"meta-llama/Llama-3.1-8B-Instruct\","

static void test_kind_names(void)
{
    enum ts_api_kind kind = TS_API_COMPLETIONS;
    CHECK_EQ_INT(api_kind_from_name("chat", &kind), 0);
    CHECK_EQ_INT(kind, TS_API_CHAT);
    CHECK_EQ_INT(api_kind_from_name("completions", &kind), 0);
    CHECK_EQ_INT(kind, TS_API_COMPLETIONS);
    CHECK_EQ_INT(api_kind_from_name("Chat", &kind), -1);
    CHECK_EQ_INT(api_kind_from_name("", &kind), -1);
    CHECK_EQ_INT(api_kind_from_name(NULL, &kind), -1);
    CHECK_EQ_INT(kind, TS_API_COMPLETIONS);
    CHECK_EQ_STR(api_kind_name(TS_API_CHAT), "chat");
    CHECK_EQ_STR(api_kind_name(TS_API_COMPLETIONS), "completions");
    CHECK_EQ_STR(api_path(TS_API_CHAT), "/v1/chat/completions");
    CHECK_EQ_STR(api_path(TS_API_COMPLETIONS), "/v1/completions");
}

static void test_chat_chunks(void)
{
    struct ts_api_chunk c;

    /* The role chunk vLLM sends first carries an empty content: not a token. */
    CHECK_EQ_INT(parse(TS_API_CHAT,
                       CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
                                 "\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}",
                       &c),
                 0);
    check_quiet_chunk(&c);
    CHECK_EQ_INT(parse(TS_API_CHAT,
                       CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"},"
                                 "\"finish_reason\":null}]}",
                       &c),
                 0);
    check_quiet_chunk(&c);

    CHECK_EQ_INT(parse(TS_API_CHAT,
                       CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"},"
                                 "\"logprobs\":null,\"finish_reason\":null}]}",
                       &c),
                 0);
    CHECK_EQ_INT(c.content_pieces, 1);
    CHECK_EQ_INT(c.reasoning_pieces, 0);
    CHECK_EQ_INT(c.finished, 0);
    CHECK_EQ_INT(c.has_usage, 0);
    CHECK_EQ_INT(c.error, 0);

    CHECK_EQ_INT(parse(TS_API_CHAT,
                       CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"},"
                                 "\"finish_reason\":null}]}",
                       &c),
                 0);
    check_quiet_chunk(&c);
    CHECK_EQ_INT(parse(TS_API_CHAT,
                       CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":null},"
                                 "\"finish_reason\":null}]}",
                       &c),
                 0);
    check_quiet_chunk(&c);

    CHECK_EQ_INT(parse(TS_API_CHAT,
                       CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":"
                                 "\"Let me think.\"},\"finish_reason\":null}]}",
                       &c),
                 0);
    CHECK_EQ_INT(c.reasoning_pieces, 1);
    CHECK_EQ_INT(c.content_pieces, 0);
    CHECK_EQ_INT(parse(TS_API_CHAT,
                       CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"Hmm\","
                                 "\"content\":null},\"finish_reason\":null}]}",
                       &c),
                 0);
    CHECK_EQ_INT(c.reasoning_pieces, 1);
    CHECK_EQ_INT(c.content_pieces, 0);
    CHECK_EQ_INT(parse(TS_API_CHAT,
                       CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":"
                                 "\"\",\"content\":\"x\"},\"finish_reason\":null}]}",
                       &c),
                 0);
    CHECK_EQ_INT(c.reasoning_pieces, 0);
    CHECK_EQ_INT(c.content_pieces, 1);

    CHECK_EQ_INT(parse(TS_API_CHAT,
                       CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,"
                                 "\"finish_reason\":\"stop\",\"stop_reason\":null}]}",
                       &c),
                 0);
    CHECK_EQ_INT(c.finished, 1);
    CHECK_EQ_INT(c.content_pieces, 0);
    CHECK_EQ_INT(c.has_usage, 0);
    /* SGLang may put the last piece of text in the finishing chunk. */
    CHECK_EQ_INT(parse(TS_API_CHAT,
                       CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\".\"},"
                                 "\"finish_reason\":\"length\",\"matched_stop\":null}]}",
                       &c),
                 0);
    CHECK_EQ_INT(c.finished, 1);
    CHECK_EQ_INT(c.content_pieces, 1);

    /* n > 1: one piece per choice. */
    CHECK_EQ_INT(parse(TS_API_CHAT,
                       CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}},"
                                 "{\"index\":1,\"delta\":{\"content\":\"b\"}},"
                                 "{\"index\":2,\"delta\":{\"content\":\"\"}}]}",
                       &c),
                 0);
    CHECK_EQ_INT(c.content_pieces, 2);
    CHECK_EQ_INT(c.finished, 0);
}

static void test_usage(void)
{
    struct ts_api_chunk c;

    CHECK_EQ_INT(parse(TS_API_CHAT,
                       CHAT_HEAD "\"choices\":[],\"usage\":{\"prompt_tokens\":12,"
                                 "\"total_tokens\":46,\"completion_tokens\":34}}",
                       &c),
                 0);
    CHECK_EQ_INT(c.has_usage, 1);
    CHECK_EQ_INT(c.prompt_tokens, 12);
    CHECK_EQ_INT(c.completion_tokens, 34);
    CHECK_EQ_INT(c.content_pieces, 0);
    CHECK_EQ_INT(c.finished, 0);

    /* No choices member at all. */
    CHECK_EQ_INT(parse(TS_API_CHAT, "{\"usage\":{\"completion_tokens\":5}}", &c), 0);
    CHECK_EQ_INT(c.has_usage, 1);
    CHECK_EQ_INT(c.prompt_tokens, 0);
    CHECK_EQ_INT(c.completion_tokens, 5);

    /* vLLM continuous_usage_stats: usage rides on every chunk. */
    CHECK_EQ_INT(parse(TS_API_CHAT,
                       CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\" the\"},"
                                 "\"finish_reason\":null}],\"usage\":{\"prompt_tokens\":12,"
                                 "\"total_tokens\":15,\"completion_tokens\":3}}",
                       &c),
                 0);
    CHECK_EQ_INT(c.content_pieces, 1);
    CHECK_EQ_INT(c.has_usage, 1);
    CHECK_EQ_INT(c.prompt_tokens, 12);
    CHECK_EQ_INT(c.completion_tokens, 3);

    /* Servers that send "usage": null on every chunk but the last. */
    CHECK_EQ_INT(parse(TS_API_CHAT,
                       CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}],"
                                 "\"usage\":null}",
                       &c),
                 0);
    CHECK_EQ_INT(c.has_usage, 0);
    CHECK_EQ_INT(parse(TS_API_CHAT, "{\"usage\":{\"prompt_tokens\":3}}", &c), 0);
    CHECK_EQ_INT(c.has_usage, 0);
    CHECK_EQ_INT(c.prompt_tokens, 0);
    CHECK_EQ_INT(parse(TS_API_CHAT, "{\"usage\":{\"completion_tokens\":\"7\"}}", &c), 0);
    CHECK_EQ_INT(c.has_usage, 0);
    CHECK_EQ_INT(parse(TS_API_CHAT, "{\"usage\":{\"completion_tokens\":-4}}", &c), 0);
    CHECK_EQ_INT(c.has_usage, 1);
    CHECK_EQ_INT(c.completion_tokens, 0);
    CHECK_EQ_INT(parse(TS_API_CHAT, "{\"usage\":{\"completion_tokens\":3000000000}}", &c), 0);
    CHECK_EQ_INT(c.completion_tokens, 3000000000LL);
}

static void test_done(void)
{
    struct ts_api_chunk c;
    CHECK_EQ_INT(parse(TS_API_CHAT, "[DONE]", &c), 0);
    CHECK_EQ_INT(c.done, 1);
    CHECK_EQ_INT(c.error, 0);
    CHECK_EQ_INT(c.content_pieces, 0);
    CHECK_EQ_INT(parse(TS_API_COMPLETIONS, " \t[DONE]\r\n", &c), 0);
    CHECK_EQ_INT(c.done, 1);
    /* Only the bytes given count, not what follows them. */
    CHECK_EQ_INT(api_parse_event(TS_API_CHAT, "[DONE]garbage", 6, &c), 0);
    CHECK_EQ_INT(c.done, 1);
    CHECK_EQ_INT(parse(TS_API_CHAT, "[DONE]x", &c), TS_API_ERR_MALFORMED);
    CHECK_EQ_INT(c.done, 0);
    CHECK_EQ_INT(parse(TS_API_CHAT, "[done]", &c), TS_API_ERR_MALFORMED);
    CHECK_EQ_INT(c.done, 0);
}

static void test_errors(void)
{
    struct ts_api_chunk c;

    CHECK_EQ_INT(parse(TS_API_CHAT,
                       "{\"error\":{\"message\":\"The model is overloaded\",\"type\":"
                       "\"ServiceUnavailableError\",\"param\":null,\"code\":503}}",
                       &c),
                 0);
    CHECK_EQ_INT(c.error, 1);
    CHECK_EQ_STR(c.error_message, "The model is overloaded");
    CHECK_EQ_INT(c.content_pieces, 0);

    CHECK_EQ_INT(parse(TS_API_COMPLETIONS, "{\"error\":\"upstream reset\"}", &c), 0);
    CHECK_EQ_INT(c.error, 1);
    CHECK_EQ_STR(c.error_message, "upstream reset");

    CHECK_EQ_INT(parse(TS_API_CHAT, "{\"error\":{\"type\":\"InternalServerError\"}}", &c), 0);
    CHECK_EQ_INT(c.error, 1);
    CHECK_EQ_STR(c.error_message, "InternalServerError");

    CHECK_EQ_INT(parse(TS_API_CHAT,
                       "{\"object\":\"error\",\"message\":\"This model's maximum context length "
                       "is 4096 tokens.\",\"type\":\"BadRequestError\",\"param\":null,"
                       "\"code\":400}",
                       &c),
                 0);
    CHECK_EQ_INT(c.error, 1);
    CHECK_EQ_STR(c.error_message, "This model's maximum context length is 4096 tokens.");

    /* A null error, or one that is neither object nor string, is not an error. */
    CHECK_EQ_INT(parse(TS_API_CHAT,
                       CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}],"
                                 "\"error\":null}",
                       &c),
                 0);
    CHECK_EQ_INT(c.error, 0);
    CHECK_EQ_INT(c.content_pieces, 1);
    CHECK_EQ_INT(parse(TS_API_CHAT, "{\"error\":false,\"object\":\"chat.completion.chunk\"}", &c),
                 0);
    CHECK_EQ_INT(c.error, 0);

    /* A long message is cut to fit, NUL-terminated; control bytes become spaces. */
    char long_error[600];
    int n = snprintf(long_error, sizeof long_error, "{\"error\":{\"message\":\"line1\\nline2 ");
    for (int i = 0; i < 300; i++)
        long_error[n++] = 'x';
    snprintf(long_error + n, sizeof long_error - (size_t)n, "\"}}");
    CHECK_EQ_INT(parse(TS_API_CHAT, long_error, &c), 0);
    CHECK_EQ_INT(c.error, 1);
    CHECK_EQ_INT(strlen(c.error_message), sizeof c.error_message - 1);
    CHECK(strncmp(c.error_message, "line1 line2 xxx", 15) == 0);

    /* Cut at a UTF-8 character boundary: 170 two-byte characters cannot end on a half. */
    char utf8_error[600];
    n = snprintf(utf8_error, sizeof utf8_error, "{\"error\":\"");
    for (int i = 0; i < 170; i++) {
        utf8_error[n++] = (char)0xC3;
        utf8_error[n++] = (char)0xA9;
    }
    snprintf(utf8_error + n, sizeof utf8_error - (size_t)n, "\"}");
    CHECK_EQ_INT(parse(TS_API_CHAT, utf8_error, &c), 0);
    CHECK_EQ_INT(strlen(c.error_message), 158);
}

static void test_malformed(void)
{
    struct ts_api_chunk c;
    CHECK_EQ_INT(parse(TS_API_CHAT, "{\"choices\":[{\"delta\":", &c), TS_API_ERR_MALFORMED);
    CHECK_EQ_INT(c.error, 1);
    CHECK_EQ_STR(c.error_message, "malformed event: {\"choices\":[{\"delta\":");
    CHECK_EQ_INT(c.content_pieces, 0);

    const char *long_bad = "<html><head><title>502 Bad Gateway</title></head><body></body>";
    CHECK_EQ_INT(parse(TS_API_CHAT, long_bad, &c), TS_API_ERR_MALFORMED);
    CHECK_EQ_STR(c.error_message, "malformed event: <html><head><title>502 Bad Gateway</titl");

    /* Valid JSON that is not an object, trailing bytes, and nothing at all. */
    CHECK_EQ_INT(parse(TS_API_CHAT, "[1,2]", &c), TS_API_ERR_MALFORMED);
    CHECK_EQ_INT(c.error, 1);
    CHECK_EQ_INT(parse(TS_API_CHAT, "\"text\"", &c), TS_API_ERR_MALFORMED);
    CHECK_EQ_INT(parse(TS_API_CHAT, "null", &c), TS_API_ERR_MALFORMED);
    CHECK_EQ_INT(parse(TS_API_CHAT, "{\"a\":1} {\"b\":2}", &c), TS_API_ERR_MALFORMED);
    CHECK_EQ_INT(parse(TS_API_CHAT, "", &c), TS_API_ERR_MALFORMED);
    CHECK_EQ_STR(c.error_message, "malformed event: ");
    CHECK_EQ_INT(parse(TS_API_CHAT, "   ", &c), TS_API_ERR_MALFORMED);
    CHECK_EQ_INT(api_parse_event(TS_API_CHAT, NULL, 0, &c), TS_API_ERR_MALFORMED);

    /* Whitespace around an object is fine. */
    CHECK_EQ_INT(parse(TS_API_CHAT, " {\"choices\":[]} \n", &c), 0);
    CHECK_EQ_INT(c.error, 0);

    /* The bytes need not be NUL-terminated: an exact-size heap copy lets ASan and valgrind
     * catch a read past the end. */
    const char *chunk = CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}";
    size_t len = strlen(chunk);
    char *exact = malloc(len);
    memcpy(exact, chunk, len);
    CHECK_EQ_INT(api_parse_event(TS_API_CHAT, exact, len, &c), 0);
    CHECK_EQ_INT(c.content_pieces, 1);
    CHECK_EQ_INT(api_parse_event(TS_API_CHAT, exact, len - 1, &c), TS_API_ERR_MALFORMED);
    free(exact);
}

static void test_completions_chunks(void)
{
    struct ts_api_chunk c;
    const char *head = "{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":1700000000,"
                       "\"model\":\"m\",";
    char buf[512];

    snprintf(buf, sizeof buf,
             "%s\"choices\":[{\"index\":0,\"text\":\" world\",\"logprobs\":null,"
             "\"finish_reason\":null,\"stop_reason\":null}],\"usage\":null}",
             head);
    CHECK_EQ_INT(parse(TS_API_COMPLETIONS, buf, &c), 0);
    CHECK_EQ_INT(c.content_pieces, 1);
    CHECK_EQ_INT(c.finished, 0);
    CHECK_EQ_INT(c.has_usage, 0);
    /* Dialects are strict: the chat reading finds no delta here. */
    CHECK_EQ_INT(parse(TS_API_CHAT, buf, &c), 0);
    CHECK_EQ_INT(c.content_pieces, 0);

    snprintf(buf, sizeof buf,
             "%s\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":"
             "\"length\"}]}",
             head);
    CHECK_EQ_INT(parse(TS_API_COMPLETIONS, buf, &c), 0);
    CHECK_EQ_INT(c.content_pieces, 0);
    CHECK_EQ_INT(c.finished, 1);

    snprintf(buf, sizeof buf,
             "%s\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"total_tokens\":135,"
             "\"completion_tokens\":128}}",
             head);
    CHECK_EQ_INT(parse(TS_API_COMPLETIONS, buf, &c), 0);
    CHECK_EQ_INT(c.has_usage, 1);
    CHECK_EQ_INT(c.prompt_tokens, 7);
    CHECK_EQ_INT(c.completion_tokens, 128);

    CHECK_EQ_INT(parse(TS_API_COMPLETIONS,
                       CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}", &c),
                 0);
    CHECK_EQ_INT(c.content_pieces, 0);
}

/* A non-streamed chat response is one object with "message" where chunks have "delta". */
static void test_unstreamed_response(void)
{
    struct ts_api_chunk c;
    CHECK_EQ_INT(parse(TS_API_CHAT,
                       "{\"id\":\"chatcmpl-2\",\"object\":\"chat.completion\",\"choices\":[{"
                       "\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Hi.\"},"
                       "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":9,"
                       "\"completion_tokens\":3,\"total_tokens\":12}}",
                       &c),
                 0);
    CHECK_EQ_INT(c.content_pieces, 1);
    CHECK_EQ_INT(c.finished, 1);
    CHECK_EQ_INT(c.has_usage, 1);
    CHECK_EQ_INT(c.completion_tokens, 3);
}

static cJSON *parse_body(char *body)
{
    cJSON *root = body != NULL ? cJSON_Parse(body) : NULL;
    CHECK(cJSON_IsObject(root));
    return root;
}

static const cJSON *get(const cJSON *object, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(object, name);
}

static void check_common_fields(const cJSON *root, const char *model, double max_tokens,
                                double temperature, int stream, int ignore_eos)
{
    CHECK(cJSON_IsString(get(root, "model")));
    CHECK_EQ_STR(cJSON_GetStringValue(get(root, "model")), model);
    CHECK(cJSON_IsNumber(get(root, "max_tokens")));
    CHECK(cJSON_GetNumberValue(get(root, "max_tokens")) == max_tokens);
    CHECK(cJSON_IsNumber(get(root, "temperature")));
    CHECK(fabs(cJSON_GetNumberValue(get(root, "temperature")) - temperature) < 1e-12);
    if (stream) {
        CHECK(cJSON_IsTrue(get(root, "stream")));
        CHECK(cJSON_IsTrue(get(get(root, "stream_options"), "include_usage")));
    } else {
        CHECK(get(root, "stream") == NULL);
        CHECK(get(root, "stream_options") == NULL);
    }
    if (ignore_eos)
        CHECK(cJSON_IsTrue(get(root, "ignore_eos")));
    else
        CHECK(get(root, "ignore_eos") == NULL);
}

static void test_build_chat(void)
{
    struct ts_api_params params = {
        .model = "meta-llama/Llama-3.1-8B-Instruct",
        .max_tokens = 128,
        .temperature = 0.7,
        .ignore_eos = 0,
        .stream = 1,
    };
    struct ts_prompt text = {.text = "Tell me about \"quotes\",\nnewlines and caf\xC3\xA9.",
                             .messages_json = NULL};

    char *body = api_build_body(TS_API_CHAT, &params, &text);
    CHECK(body != NULL);
    /* Compact, and max_tokens printed as an integer. */
    CHECK(body != NULL && strchr(body, '\n') == NULL);
    CHECK(body != NULL && strstr(body, "\"max_tokens\":128,") != NULL);
    cJSON *root = parse_body(body);
    check_common_fields(root, params.model, 128, 0.7, 1, 0);
    const cJSON *messages = get(root, "messages");
    CHECK(cJSON_IsArray(messages));
    CHECK_EQ_INT(cJSON_GetArraySize(messages), 1);
    const cJSON *first = cJSON_GetArrayItem(messages, 0);
    CHECK_EQ_STR(cJSON_GetStringValue(get(first, "role")), "user");
    CHECK_EQ_STR(cJSON_GetStringValue(get(first, "content")), text.text);
    CHECK(get(root, "prompt") == NULL);
    cJSON_Delete(root);
    free(body);

    params.ignore_eos = 1;
    params.temperature = 0;
    params.max_tokens = 1;
    body = api_build_body(TS_API_CHAT, &params, &text);
    root = parse_body(body);
    check_common_fields(root, params.model, 1, 0.0, 1, 1);
    cJSON_Delete(root);
    free(body);

    const char *messages_json = "[{\"role\":\"system\",\"content\":\"Be brief.\"},"
                                "{\"role\":\"user\",\"content\":\"Hi \\\"there\\\"\"},"
                                "{\"role\":\"assistant\",\"content\":\"Hello.\"},"
                                "{\"role\":\"user\",\"content\":\"Why?\"}]";
    struct ts_prompt conversation = {.text = NULL, .messages_json = (char *)messages_json};
    params.stream = 0;
    params.ignore_eos = 0;
    body = api_build_body(TS_API_CHAT, &params, &conversation);
    root = parse_body(body);
    check_common_fields(root, params.model, 1, 0.0, 0, 0);
    cJSON *expected = cJSON_Parse(messages_json);
    CHECK(cJSON_Compare(get(root, "messages"), expected, 1));
    CHECK_EQ_INT(cJSON_GetArraySize(get(root, "messages")), 4);
    CHECK_EQ_STR(cJSON_GetStringValue(get(cJSON_GetArrayItem(get(root, "messages"), 1), "content")),
                 "Hi \"there\"");
    cJSON_Delete(expected);
    cJSON_Delete(root);
    free(body);
}

static void test_build_completions(void)
{
    struct ts_api_params params = {
        .model = "m",
        .max_tokens = 4096,
        .temperature = 1.25,
        .ignore_eos = 1,
        .stream = 1,
    };
    struct ts_prompt text = {.text = "Once upon a time", .messages_json = NULL};
    char *body = api_build_body(TS_API_COMPLETIONS, &params, &text);
    cJSON *root = parse_body(body);
    check_common_fields(root, "m", 4096, 1.25, 1, 1);
    CHECK_EQ_STR(cJSON_GetStringValue(get(root, "prompt")), "Once upon a time");
    CHECK(get(root, "messages") == NULL);
    cJSON_Delete(root);
    free(body);

    struct ts_prompt conversation = {
        .text = NULL,
        .messages_json = "[{\"role\":\"system\",\"content\":\"Be brief.\"},"
                         "{\"role\":\"user\",\"content\":\"Hi \\\"there\\\"\"},"
                         "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[]},"
                         "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"A\"},"
                         "{\"type\":\"image_url\",\"image_url\":{\"url\":\"x\"}},"
                         "{\"type\":\"text\",\"text\":\"B\"}]},"
                         "{\"role\":\"user\",\"content\":\"\"}]",
    };
    params.ignore_eos = 0;
    body = api_build_body(TS_API_COMPLETIONS, &params, &conversation);
    root = parse_body(body);
    check_common_fields(root, "m", 4096, 1.25, 1, 0);
    CHECK_EQ_STR(cJSON_GetStringValue(get(root, "prompt")), "Be brief.\nHi \"there\"\nA\nB\n");
    CHECK(get(root, "messages") == NULL);
    cJSON_Delete(root);
    free(body);

    struct ts_prompt empty_list = {.text = NULL, .messages_json = "[]"};
    body = api_build_body(TS_API_COMPLETIONS, &params, &empty_list);
    root = parse_body(body);
    CHECK_EQ_STR(cJSON_GetStringValue(get(root, "prompt")), "");
    cJSON_Delete(root);
    free(body);
}

static void test_build_rejects(void)
{
    struct ts_api_params params = {.model = "m", .max_tokens = 8, .temperature = 0, .stream = 1};
    struct ts_prompt neither = {.text = NULL, .messages_json = NULL};
    struct ts_prompt bad_json = {.text = NULL, .messages_json = "[{\"role\":"};
    struct ts_prompt not_array = {.text = NULL, .messages_json = "{\"role\":\"user\"}"};
    struct ts_prompt text = {.text = "x", .messages_json = NULL};
    CHECK(api_build_body(TS_API_CHAT, &params, &neither) == NULL);
    CHECK(api_build_body(TS_API_CHAT, &params, &bad_json) == NULL);
    CHECK(api_build_body(TS_API_COMPLETIONS, &params, &bad_json) == NULL);
    CHECK(api_build_body(TS_API_CHAT, &params, &not_array) == NULL);
    CHECK(api_build_body(TS_API_CHAT, NULL, &text) == NULL);
    CHECK(api_build_body(TS_API_CHAT, &params, NULL) == NULL);
    CHECK(api_build_body((enum ts_api_kind)7, &params, &text) == NULL);

    /* Without a model the field is left out rather than sent empty. */
    params.model = NULL;
    char *body = api_build_body(TS_API_CHAT, &params, &text);
    cJSON *root = parse_body(body);
    CHECK(get(root, "model") == NULL);
    cJSON_Delete(root);
    free(body);
}

int main(void)
{
    test_kind_names();
    test_chat_chunks();
    test_usage();
    test_done();
    test_errors();
    test_malformed();
    test_completions_chunks();
    test_unstreamed_response();
    test_build_chat();
    test_build_completions();
    test_build_rejects();
    return check_report("api");
}
