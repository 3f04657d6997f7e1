/* test_api.c: the dialects: request bodies checked by parsing them back with cJSON, event
 * interpretation over the chunks that vLLM, SGLang, TGI, llama.cpp and OpenAI actually send
 * (whole sample streams through xfer.c, whole and byte by byte), and the fast scan checked
 * against the cJSON reading on a corpus and on thousands of mutations of it. */
#include "tokstorm/api.h"
#include "tokstorm/api_internal.h"
#include "tokstorm/xfer.h"

#include "check.h"

#include <cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
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
    const struct {
        const char *name, *path;
        enum ts_api_kind kind;
    } native[] = {{"sglang", "/generate", TS_API_SGLANG},
                  {"tgi", "/generate_stream", TS_API_TGI},
                  {"llamacpp", "/completion", TS_API_LLAMACPP}};
    for (size_t i = 0; i < sizeof native / sizeof *native; i++) {
        CHECK_EQ_INT(api_kind_from_name(native[i].name, &kind), 0);
        CHECK_EQ_INT(kind, native[i].kind);
        CHECK_EQ_STR(api_kind_name(kind), native[i].name);
        CHECK_EQ_STR(api_path(kind), native[i].path);
        CHECK(strstr(api_kind_names(), native[i].name) != NULL);
    }
    CHECK(api_path((enum ts_api_kind)99) == NULL);
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

/* tokstorm_send_ns: each reading by itself, against strtod's double (what cJSON keeps), and
 * whether the scan answers. */
static void test_send_stamp(void)
{
    static const struct {
        const char *value;  /* the member's JSON value */
        const char *expect; /* strtod's reading (whole, in [0, 2^63)) or NULL for 0 */
        int scan_reads;     /* the scan answers by itself */
    } cases[] = {
        {"0", NULL, 1},
        {"1", "1", 1},
        {"123456789012345", "123456789012345", 1},
        {"9007199254740993", "9007199254740993", 1}, /* 2^53 + 1: rounds to 2^53 */
        {"1718000000123456789", "1718000000123456789", 1},
        {"9223372036854774784", "9223372036854774784", 1}, /* the last double below 2^63 */
        {"9223372036854775807", NULL, 1},                  /* rounds to 2^63: out of range */
        {"9999999999999999999", NULL, 1},
        {"18446744073709551616", NULL, 1},
        {"123456789012345678901234567890", NULL, 1},
        {"-5", NULL, 1},
        {"-0", NULL, 1},
        {"-1.5e3", NULL, 1},
        {"1.5", NULL, 0},
        {"1000.0", "1000", 0},
        {"1e3", "1000", 0},
        {"1E+3", "1000", 0},
        {"1e30", NULL, 0},
        {"12345678901234567890.5", NULL, 0},
        {"\"1000\"", NULL, 1},
        {"null", NULL, 1},
        {"true", NULL, 1},
        {"[1000]", NULL, 1},
        {"{\"ns\":1000}", NULL, 1},
    };
    char data[256];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(data, sizeof data,
                 CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}],"
                           "\"tokstorm_send_ns\":%s}",
                 cases[i].value);
        int64_t expect = cases[i].expect ? (int64_t)strtod(cases[i].expect, NULL) : 0;
        struct ts_api_chunk ref, got, scanned;
        CHECK_EQ_INT(api_parse_event_cjson(TS_API_CHAT, data, strlen(data), &ref), 0);
        CHECK_EQ_INT(api_parse_event(TS_API_CHAT, data, strlen(data), &got), 0);
        int scan_rc = api_scan_event(TS_API_CHAT, data, strlen(data), &scanned);
        CHECK_EQ_INT(ref.server_send_ns, expect);
        CHECK_EQ_INT(got.server_send_ns, expect);
        CHECK_EQ_INT(got.content_pieces, 1);
        CHECK_EQ_INT(scan_rc == 0, cases[i].scan_reads);
        if (scan_rc == 0)
            CHECK_EQ_INT(scanned.server_send_ns, expect);
        if (ref.server_send_ns != expect)
            fprintf(stderr, "  stamp %s: got %lld\n", cases[i].value,
                    (long long)ref.server_send_ns);
    }
    /* 2^53 + 1 is read as cJSON reads it, not digit by digit. */
    struct ts_api_chunk c;
    CHECK_EQ_INT(parse(TS_API_CHAT, "{\"tokstorm_send_ns\":9007199254740993}", &c), 0);
    CHECK_EQ_INT(c.server_send_ns, 9007199254740992LL);
    /* Only the root's first member of the name counts. */
    CHECK_EQ_INT(parse(TS_API_CHAT, "{\"tokstorm_send_ns\":5,\"tokstorm_send_ns\":7}", &c), 0);
    CHECK_EQ_INT(c.server_send_ns, 5);
    CHECK_EQ_INT(parse(TS_API_CHAT, "{\"tokstorm_send_ns\":\"5\",\"tokstorm_send_ns\":7}", &c), 0);
    CHECK_EQ_INT(c.server_send_ns, 0);
    CHECK_EQ_INT(parse(TS_API_CHAT,
                       "{\"usage\":{\"tokstorm_send_ns\":5},"
                       "\"choices\":[{\"tokstorm_send_ns\":6}]}",
                       &c),
                 0);
    CHECK_EQ_INT(c.server_send_ns, 0);
    CHECK_EQ_INT(parse(TS_API_CHAT, "{\"choices\":[]}", &c), 0);
    CHECK_EQ_INT(c.server_send_ns, 0);
    /* The stamp is read on every kind of event, [DONE] aside (it is not JSON). */
    CHECK_EQ_INT(
        parse(TS_API_COMPLETIONS, "{\"choices\":[{\"text\":\"a\"}],\"tokstorm_send_ns\":42}", &c),
        0);
    CHECK_EQ_INT(c.server_send_ns, 42);
    CHECK_EQ_INT(parse(TS_API_CHAT, "{\"error\":\"x\",\"tokstorm_send_ns\":42}", &c), 0);
    CHECK_EQ_INT(c.server_send_ns, 42);
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

/* The fast reading (api_scan.c) against the reference (cJSON): the same struct, byte for byte,
 * and the same return code, for every input. FAST entries are shapes servers send on every
 * token, which the scan must read itself; SLOW ones it must leave to cJSON; ANY may go either
 * way as long as the answer is the same. */
enum scan_expect { ANY, FAST, SLOW };

struct corpus_entry {
    const char *data;
    size_t len;
    enum scan_expect expect;
};

/* clang-format off */
#define ENTRY(literal, expect) {literal, sizeof(literal) - 1, expect}
/* clang-format on */

#define VLLM_HEAD                                                                                  \
    "{\"id\":\"chatcmpl-8c6b0f2d9a3e4b1c8f7e6d5c4b3a2910\",\"object\":\"chat.completion.chunk\","  \
    "\"created\":1718000000,\"model\":\"meta-llama/Llama-3.1-8B-Instruct\","
#define SGLANG_HEAD                                                                                \
    "{\"id\":\"0f5c2e8a1b7d4c3e9a6b5d4c3e2f1a0b\",\"object\":\"chat.completion.chunk\","           \
    "\"created\":1718000000,\"model\":\"default\","
#define CMPL_HEAD                                                                                  \
    "{\"id\":\"cmpl-5e1d\",\"object\":\"text_completion\",\"created\":1718000000,\"model\":\"m\","

static const struct corpus_entry scan_corpus[] = {
    /* vLLM chat */
    ENTRY(VLLM_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
                    "\"logprobs\":null,\"finish_reason\":null}]}",
          FAST),
    ENTRY(VLLM_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\" the\"},\"logprobs\":null,"
                    "\"finish_reason\":null}]}",
          FAST),
    ENTRY(VLLM_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"},\"logprobs\":null,"
                    "\"finish_reason\":\"stop\",\"stop_reason\":null}]}",
          FAST),
    ENTRY(VLLM_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\".\"},\"logprobs\":null,"
                    "\"finish_reason\":\"length\",\"stop_reason\":128009}]}",
          FAST),
    ENTRY(VLLM_HEAD "\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"total_tokens\":140,"
                    "\"completion_tokens\":128}}",
          FAST),
    ENTRY(VLLM_HEAD "\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"total_tokens\":140,"
                    "\"completion_tokens\":128,\"prompt_tokens_details\":{\"cached_tokens\":0}}}",
          FAST),
    ENTRY(VLLM_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\" of\"},\"logprobs\":null,"
                    "\"finish_reason\":null}],\"usage\":{\"prompt_tokens\":12,\"total_tokens\":15,"
                    "\"completion_tokens\":3}}",
          FAST),
    ENTRY(VLLM_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"Let me think\"},"
                    "\"logprobs\":null,\"finish_reason\":null}]}",
          FAST),
    ENTRY(VLLM_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\" so\",\"content\":null},"
                    "\"logprobs\":null,\"finish_reason\":null}]}",
          FAST),
    ENTRY(VLLM_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"\",\"reasoning_content\":"
                    "\"\",\"content\":\"\"},\"finish_reason\":null}]}",
          FAST),
    ENTRY(VLLM_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}},{\"index\":1,"
                    "\"delta\":{\"content\":\"b\"}},{\"index\":2,\"delta\":{\"content\":\"\"},"
                    "\"finish_reason\":\"stop\"}]}",
          FAST),
    ENTRY(VLLM_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\\n\\n\"},"
                    "\"finish_reason\":null}]}",
          FAST),
    ENTRY(VLLM_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"say \\\"hi\\\" \\\\ \\/ "
                    "\\t\\r\\b\\f\"},\"finish_reason\":null}]}",
          FAST),
    ENTRY(VLLM_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"caf\\u00e9 \\u4e2d "
                    "\\ud83d\\ude00\"},\"finish_reason\":null}]}",
          FAST),
    ENTRY(VLLM_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"caf\xC3\xA9 \xE4\xB8\xAD "
                    "\xF0\x9F\x98\x80\"},\"finish_reason\":null}]}",
          FAST),
    /* A string that decodes to a leading NUL reads as empty in cJSON. */
    ENTRY(VLLM_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\\u0000abc\"}}]}", FAST),
    ENTRY(VLLM_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\\u0000\"}}]}", FAST),
    ENTRY(VLLM_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\\\\u0000\"}}]}", FAST),
    ENTRY(VLLM_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\x01\"}}]}", FAST),
    /* Surrogates cJSON rejects, making the whole event malformed. */
    ENTRY(VLLM_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\\ud800\"}}]}", SLOW),
    ENTRY(VLLM_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\\udc00x\"}}]}", SLOW),
    ENTRY(VLLM_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\\ud800\\u0041\"}}]}",
          SLOW),
    ENTRY(VLLM_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\\uD83D\\\\uDE00\"}}]}",
          SLOW),
    ENTRY("{\"id\":\"\\ud83d\",\"choices\":[]}", SLOW),
    ENTRY("{\"id\":\"\\uDBFF\\uDFFF\",\"choices\":[]}", FAST),

    /* SGLang chat: every field present, nulls included. */
    ENTRY(SGLANG_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":"
                      "\"\",\"reasoning_content\":null,\"tool_calls\":null},\"logprobs\":null,"
                      "\"finish_reason\":null,\"matched_stop\":null}],\"usage\":null}",
          FAST),
    ENTRY(SGLANG_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"role\":null,\"content\":\" world\","
                      "\"reasoning_content\":null,\"tool_calls\":null},\"logprobs\":null,"
                      "\"finish_reason\":null,\"matched_stop\":null}],\"usage\":null}",
          FAST),
    ENTRY(SGLANG_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"role\":null,\"content\":null,"
                      "\"reasoning_content\":\"Hmm\",\"tool_calls\":null},\"logprobs\":null,"
                      "\"finish_reason\":null,\"matched_stop\":null}],\"usage\":null}",
          FAST),
    ENTRY(SGLANG_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"role\":null,\"content\":\"!\","
                      "\"reasoning_content\":null,\"tool_calls\":null},\"logprobs\":null,"
                      "\"finish_reason\":\"stop\",\"matched_stop\":128009}],\"usage\":null}",
          FAST),
    ENTRY(SGLANG_HEAD "\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"total_tokens\":1031,"
                      "\"completion_tokens\":1024,\"prompt_tokens_details\":null}}",
          FAST),

    /* OpenAI: system_fingerprint, usage null until the last chunk. */
    ENTRY("{\"id\":\"chatcmpl-9\",\"object\":\"chat.completion.chunk\",\"created\":1718000000,"
          "\"model\":\"gpt-4o-mini\",\"system_fingerprint\":\"fp_0ba0d124f1\",\"choices\":[{"
          "\"index\":0,\"delta\":{\"content\":\"Hi\"},\"logprobs\":null,\"finish_reason\":null}],"
          "\"usage\":null}",
          FAST),
    ENTRY("{\"id\":\"chatcmpl-9\",\"object\":\"chat.completion.chunk\",\"created\":1718000000,"
          "\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,"
          "\"finish_reason\":\"stop\"}],\"usage\":null}",
          FAST),
    ENTRY("{\"id\":\"chatcmpl-2\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,"
          "\"message\":{\"role\":\"assistant\",\"content\":\"Hi.\"},\"finish_reason\":\"stop\"}],"
          "\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":3,\"total_tokens\":12}}",
          FAST),

    /* Completions */
    ENTRY(CMPL_HEAD "\"choices\":[{\"index\":0,\"text\":\" world\",\"logprobs\":null,"
                    "\"finish_reason\":null,\"stop_reason\":null}],\"usage\":null}",
          FAST),
    ENTRY(CMPL_HEAD "\"choices\":[{\"index\":0,\"text\":\"\",\"logprobs\":null,"
                    "\"finish_reason\":\"length\",\"stop_reason\":null}]}",
          FAST),
    ENTRY(CMPL_HEAD "\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"total_tokens\":135,"
                    "\"completion_tokens\":128}}",
          FAST),
    ENTRY(CMPL_HEAD "\"choices\":[{\"index\":0,\"text\":\"\\u00e9\\n\"}]}", FAST),

    /* Errors */
    ENTRY(
        "{\"error\":{\"message\":\"The model is overloaded\",\"type\":\"ServiceUnavailableError\","
        "\"param\":null,\"code\":503}}",
        FAST),
    ENTRY("{\"error\":\"upstream reset\"}", FAST),
    ENTRY("{\"error\":{\"type\":\"InternalServerError\"}}", FAST),
    ENTRY("{\"error\":{\"code\":500}}", FAST),
    ENTRY("{\"error\":{\"message\":null,\"type\":\"X\"}}", FAST),
    ENTRY("{\"error\":{\"message\":\"\"}}", FAST),
    ENTRY("{\"error\":{\"message\":\"line1\\nline2 \\\"q\\\" caf\\u00e9\"}}", SLOW),
    ENTRY("{\"error\":\"\\u0000hidden\"}", SLOW),
    ENTRY("{\"error\":\"tab\there\x7f and \xC3\xA9\"}", FAST),
    ENTRY("{\"object\":\"error\",\"message\":\"This model's maximum context length is 4096 "
          "tokens.\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}",
          FAST),
    ENTRY("{\"object\":\"error\",\"type\":\"BadRequestError\"}", FAST),
    ENTRY("{\"object\":\"error\"}", FAST),
    ENTRY("{\"object\":\"errors\",\"message\":\"x\"}", FAST),
    ENTRY("{\"object\":\"err\\u006fr\",\"message\":\"x\"}", SLOW),
    ENTRY("{\"object\":\"error\\u0000x\",\"message\":\"x\"}", SLOW),
    ENTRY("{\"error\":null,\"object\":\"error\",\"message\":\"null error\"}", FAST),
    ENTRY("{\"error\":false,\"object\":\"chat.completion.chunk\"}", FAST),
    ENTRY("{\"error\":[\"a\"],\"object\":\"error\"}", FAST),
    ENTRY(VLLM_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}],\"error\":null}",
          FAST),

    /* Null and odd types where chunks have objects or strings. */
    ENTRY(VLLM_HEAD "\"choices\":null}", FAST),
    ENTRY(VLLM_HEAD "\"choices\":{\"index\":0}}", FAST),
    ENTRY("{\"choices\":{\"0\":{\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}}}", FAST),
    ENTRY("{\"choices\":[[{\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}]]}", FAST),
    ENTRY("{\"choices\":[{\"delta\":[{\"content\":\"x\"}],\"message\":{\"content\":\"y\"}}]}",
          FAST),
    ENTRY("{\"choices\":[{\"delta\":{\"content\":\"\"},\"message\":{\"content\":\"y\"}}]}", FAST),
    ENTRY(VLLM_HEAD
          "\"choices\":[null,1,\"x\",[],{\"delta\":null,\"message\":{\"content\":\"m\"}}]}",
          FAST),
    ENTRY(VLLM_HEAD "\"choices\":[{\"delta\":\"content\",\"message\":[\"content\"]}]}", FAST),
    ENTRY(VLLM_HEAD "\"choices\":[{\"delta\":{\"content\":5,\"reasoning\":true},"
                    "\"finish_reason\":false}]}",
          FAST),
    ENTRY(VLLM_HEAD "\"choices\":[{\"delta\":{\"content\":[\"a\"]},\"finish_reason\":\"\"}]}",
          FAST),
    ENTRY("{\"usage\":null}", FAST),
    ENTRY("{\"usage\":{\"prompt_tokens\":3}}", FAST),
    ENTRY("{\"usage\":{\"completion_tokens\":\"7\"}}", FAST),
    ENTRY("{\"usage\":{\"completion_tokens\":null,\"prompt_tokens\":4}}", FAST),
    ENTRY("{\"usage\":{\"completion_tokens\":5,\"prompt_tokens\":\"4\"}}", FAST),
    ENTRY("{\"usage\":[{\"completion_tokens\":5}]}", FAST),

    /* Numbers */
    ENTRY("{\"usage\":{\"completion_tokens\":5.0,\"prompt_tokens\":12.0}}", SLOW),
    ENTRY("{\"usage\":{\"completion_tokens\":5,\"prompt_tokens\":1.2e1}}", SLOW),
    ENTRY("{\"usage\":{\"completion_tokens\":1E2}}", SLOW),
    ENTRY("{\"usage\":{\"completion_tokens\":-4,\"prompt_tokens\":-0}}", FAST),
    ENTRY("{\"usage\":{\"completion_tokens\":-0.0}}", SLOW),
    ENTRY("{\"usage\":{\"completion_tokens\":0}}", FAST),
    ENTRY("{\"usage\":{\"completion_tokens\":3000000000}}", FAST),
    ENTRY("{\"usage\":{\"completion_tokens\":999999999999999}}", FAST),
    ENTRY("{\"usage\":{\"completion_tokens\":9007199254740993}}", SLOW),
    ENTRY("{\"usage\":{\"completion_tokens\":12345678901234567890123}}", SLOW),
    ENTRY("{\"usage\":{\"completion_tokens\":1e300,\"prompt_tokens\":-1e300}}", SLOW),
    ENTRY("{\"usage\":{\"completion_tokens\":1e999}}", SLOW),
    ENTRY("{\"usage\":{\"completion_tokens\":01}}", SLOW),
    ENTRY("{\"usage\":{\"completion_tokens\":1.}}", SLOW),
    ENTRY("{\"usage\":{\"completion_tokens\":.5}}", SLOW),
    ENTRY("{\"usage\":{\"completion_tokens\":+5}}", SLOW),
    ENTRY("{\"usage\":{\"completion_tokens\":-}}", SLOW),
    ENTRY("{\"usage\":{\"completion_tokens\":1e}}", SLOW),
    ENTRY("{\"usage\":{\"completion_tokens\":0x10}}", SLOW),
    ENTRY("{\"created\":1.5e-3,\"x\":-0.25E+2,\"choices\":[]}", FAST),
    ENTRY("{\"created\":12345678901234567890123456789012345678901234567890123456789012345678901,"
          "\"choices\":[]}",
          SLOW),

    /* Whitespace */
    ENTRY(
        "{\n  \"choices\": [\n    {\n      \"index\": 0,\n      \"delta\": {\"content\": \"x\"},\n"
        "      \"finish_reason\": null\n    }\n  ],\n  \"usage\" : { \"completion_tokens\" : 2 "
        "}\n}",
        FAST),
    ENTRY(" \t\r\n{\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\r\n \t", FAST),
    ENTRY("{ } ", FAST),
    ENTRY("{\"choices\":[ ]}", FAST),
    ENTRY("{\"choices\":\v[]}", SLOW),
    ENTRY("{\"choices\":[]\f}", SLOW),
    ENTRY("\xEF\xBB\xBF{\"choices\":[{\"delta\":{\"content\":\"x\"}}]}", SLOW),
    ENTRY("{\"choices\":[]}\v", SLOW),

    /* tokstorm-mock's send stamp (api.h): integers are the scan's whatever their size; a
     * fraction or an exponent is cJSON's. */
    ENTRY(VLLM_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\" the\"},"
                    "\"finish_reason\":null}],\"tokstorm_send_ns\":1718000000123456789}",
          FAST),
    ENTRY(CMPL_HEAD "\"choices\":[{\"index\":0,\"text\":\" the\",\"finish_reason\":null}],"
                    "\"tokstorm_send_ns\":86400000000000}",
          FAST),
    ENTRY("{\"tokstorm_send_ns\":0}", FAST),
    ENTRY("{\"tokstorm_send_ns\":9007199254740993}", FAST),
    ENTRY("{\"tokstorm_send_ns\":9223372036854774784}", FAST),
    ENTRY("{\"tokstorm_send_ns\":9223372036854775807}", FAST),
    ENTRY("{\"tokstorm_send_ns\":9999999999999999999}", FAST),
    ENTRY("{\"tokstorm_send_ns\":18446744073709551617}", FAST),
    ENTRY("{\"tokstorm_send_ns\":123456789012345678901234567890123456789012345678901234567890}",
          FAST),
    ENTRY("{\"tokstorm_send_ns\":-1718000000123456789}", FAST),
    ENTRY("{\"tokstorm_send_ns\":-0}", FAST),
    ENTRY("{\"tokstorm_send_ns\":-0.0}", FAST),
    ENTRY("{\"tokstorm_send_ns\":-1e999}", FAST),
    ENTRY("{\"tokstorm_send_ns\":1718000000.5}", SLOW),
    ENTRY("{\"tokstorm_send_ns\":1718000000.0}", SLOW),
    ENTRY("{\"tokstorm_send_ns\":1.718e18}", SLOW),
    ENTRY("{\"tokstorm_send_ns\":1e19}", SLOW),
    ENTRY("{\"tokstorm_send_ns\":1e999}", SLOW),
    ENTRY("{\"tokstorm_send_ns\":0.0}", SLOW),
    ENTRY("{\"tokstorm_send_ns\":\"1718000000123456789\"}", FAST),
    ENTRY("{\"tokstorm_send_ns\":null,\"tokstorm_send_ns\":5}", FAST),
    ENTRY("{\"tokstorm_send_ns\":5,\"tokstorm_send_ns\":6}", FAST),
    ENTRY("{\"tokstorm_send_n\\u0073\":5}", SLOW),
    ENTRY("{\"usage\":{\"completion_tokens\":5,\"tokstorm_send_ns\":5},\"tokstorm_send_ns\":6}",
          FAST),

    /* Duplicate members: cJSON reads the first. */
    ENTRY("{\"choices\":[{\"delta\":{\"content\":\"x\"}}],\"choices\":null}", FAST),
    ENTRY("{\"choices\":null,\"choices\":[{\"delta\":{\"content\":\"x\"}}]}", FAST),
    ENTRY("{\"choices\":[{\"delta\":{\"content\":\"\",\"content\":\"x\"},\"delta\":{}}]}", FAST),
    ENTRY("{\"usage\":{\"completion_tokens\":1,\"completion_tokens\":2},\"usage\":null}", FAST),
    ENTRY("{\"error\":\"first\",\"error\":{\"message\":\"second\"}}", FAST),
    /* Names with escapes are cJSON's to decode. */
    ENTRY("{\"choices\":[{\"delta\":{\"cont\\u0065nt\":\"x\"}}]}", SLOW),
    ENTRY("{\"choices\":[{\"delta\":{\"content\\u0000x\":\"x\"}}]}", SLOW),
    ENTRY("{\"ch\\\"oices\":[]}", SLOW),

    /* Malformed: cJSON says so, the scan never answers. */
    ENTRY("", SLOW),
    ENTRY("   ", SLOW),
    ENTRY("{", SLOW),
    ENTRY("}", SLOW),
    ENTRY("{\"choices\":[{\"delta\":", SLOW),
    ENTRY(VLLM_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\" the\"}", SLOW),
    ENTRY("<html><head><title>502 Bad Gateway</title></head><body></body>", SLOW),
    ENTRY("[1,2]", SLOW),
    ENTRY("\"text\"", SLOW),
    ENTRY("null", SLOW),
    ENTRY("42", SLOW),
    ENTRY("{\"a\":1} {\"b\":2}", SLOW),
    ENTRY("{\"a\":1}}", SLOW),
    ENTRY("{\"a\":1}]", SLOW),
    ENTRY("{\"a\" \"b\"}", SLOW),
    ENTRY("{\"a\":1,}", SLOW),
    ENTRY("{\"a\":[1,,2]}", SLOW),
    ENTRY("{\"a\":[1 2]}", SLOW),
    ENTRY("{\"a\":[1,]}", SLOW),
    ENTRY("{,}", SLOW),
    ENTRY("{\"a\"}", SLOW),
    ENTRY("{\"a\":}", SLOW),
    ENTRY("{\"a\"::1}", SLOW),
    ENTRY("{\"a\":1:2}", SLOW),
    ENTRY("{\"a\":1,\"b\"}", SLOW),
    ENTRY("{1:2}", SLOW),
    ENTRY("{null:2}", SLOW),
    ENTRY("{{}:2}", SLOW),
    ENTRY("{\"a\":tru}", SLOW),
    ENTRY("{\"a\":nul}", SLOW),
    ENTRY("{\"a\":nullx}", SLOW),
    ENTRY("{\"a\":True}", SLOW),
    ENTRY("{\"a\":undefined}", SLOW),
    ENTRY("{\"a\":NaN}", SLOW),
    ENTRY("{\"a\":\"unterminated}", SLOW),
    ENTRY("{\"a\":\"bad \\x escape\"}", SLOW),
    ENTRY("{\"a\":\"short \\u12\"}", SLOW),
    ENTRY("{\"a\":\"ends in backslash\\", SLOW),
    ENTRY("{\"a\":[}", SLOW),
    ENTRY("{\"a\":{]}", SLOW),
    ENTRY("{\"a\":1]", SLOW),
    ENTRY("{'a':1}", SLOW),
    ENTRY("{\"a\":1\x01}", SLOW),
    ENTRY("{\"a\":\"nul \0 inside\",\"choices\":[{\"delta\":{\"content\":\"x\"}}]}", SLOW),
    ENTRY("{\"a\":1\0}", SLOW),
    ENTRY("{\"a\":1}\0", SLOW),
    ENTRY("{\"choices\":[{\"delta\":{\"content\":\"\0x\"}}]}", SLOW),

    /* [DONE] and its near misses */
    ENTRY("[DONE]", SLOW),
    ENTRY(" \t[DONE]\r\n", SLOW),
    ENTRY("[DONE]x", SLOW),
    ENTRY("[done]", SLOW),
    ENTRY("[ DONE ]", SLOW),
    ENTRY("[\"DONE\"]", SLOW),
    ENTRY("DONE", SLOW),
};

/* Prints bytes as a C string, for a failure message that can be pasted into the corpus. */
static void print_escaped(FILE *f, const char *data, size_t len)
{
    fputc('"', f);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)data[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c >= 0x20 && c < 0x7f)
            fputc(c, f);
        else
            fprintf(f, "\\x%02x\"\"", c);
    }
    fputc('"', f);
}

static void print_chunk(FILE *f, const char *label, int rc, const struct ts_api_chunk *c)
{
    fprintf(f,
            "  %s: rc=%d done=%d content=%d reasoning=%d finished=%d usage=%d prompt=%lld "
            "completion=%lld stamp=%lld error=%d message=\"%s\"\n",
            label, rc, c->done, c->content_pieces, c->reasoning_pieces, c->finished, c->has_usage,
            (long long)c->prompt_tokens, (long long)c->completion_tokens,
            (long long)c->server_send_ns, c->error, c->error_message);
}

/* Reads data (copied to an exact-size heap block, so that ASan and valgrind see any read past
 * len) through api_parse_event, api_scan_event and cJSON alone, and checks that all three agree.
 * Returns 1 when the scan answered by itself, 0 when it declined. */
static int check_same_as_cjson(enum ts_api_kind kind, const char *data, size_t len)
{
    char *copy = malloc(len > 0 ? len : 1);
    if (len > 0)
        memcpy(copy, data, len);
    struct ts_api_chunk ref, got, scanned;
    /* Different garbage in each, so that a field one path forgets to set cannot match by luck. */
    memset(&ref, 0xA5, sizeof ref);
    memset(&got, 0x5A, sizeof got);
    memset(&scanned, 0x3C, sizeof scanned);
    int ref_rc = api_parse_event_cjson(kind, copy, len, &ref);
    int got_rc = api_parse_event(kind, copy, len, &got);
    int scan_rc = api_scan_event(kind, copy, len, &scanned);
    free(copy);

    int same = got_rc == ref_rc && memcmp(&got, &ref, sizeof ref) == 0;
    int scan_ok = scan_rc == TS_API_SCAN_DECLINED
                      ? memcmp(&scanned, &(struct ts_api_chunk){0}, sizeof scanned) == 0
                      : scan_rc == 0 && ref_rc == 0 && memcmp(&scanned, &ref, sizeof ref) == 0;
    CHECK(same);
    CHECK(scan_ok);
    if (!same || !scan_ok) {
        fprintf(stderr, "differs from cJSON (kind %d, scan rc %d): ", (int)kind, scan_rc);
        print_escaped(stderr, data, len);
        fputc('\n', stderr);
        print_chunk(stderr, "cjson", ref_rc, &ref);
        print_chunk(stderr, "parse", got_rc, &got);
        print_chunk(stderr, "scan ", scan_rc, &scanned);
    }
    return scan_rc == 0;
}

static const enum ts_api_kind scan_kinds[] = {TS_API_CHAT, TS_API_COMPLETIONS, (enum ts_api_kind)7};

static void test_scan_corpus(void)
{
    size_t n = sizeof scan_corpus / sizeof scan_corpus[0];
    int fast = 0;
    for (size_t i = 0; i < n; i++) {
        const struct corpus_entry *e = &scan_corpus[i];
        for (size_t k = 0; k < sizeof scan_kinds / sizeof scan_kinds[0]; k++) {
            int handled = check_same_as_cjson(scan_kinds[k], e->data, e->len);
            fast += handled;
            if (e->expect != ANY && handled != (e->expect == FAST)) {
                CHECK(handled == (e->expect == FAST));
                fprintf(stderr, "corpus entry %zu (kind %d): expected the scan to %s it\n", i,
                        (int)scan_kinds[k], e->expect == FAST ? "read" : "decline");
            }
        }
    }
    printf("scan corpus: %zu entries x %zu kinds, %d read by the scan\n", n,
           sizeof scan_kinds / sizeof scan_kinds[0], fast);
}

/* Nesting deeper than the scan goes, and more tokens than it holds: cJSON reads both. */
static void test_scan_limits(void)
{
    char deep[512];
    size_t n = 0;
    n += (size_t)snprintf(deep + n, sizeof deep - n,
                          "{\"choices\":[{\"delta\":{\"content\":\"x\"},"
                          "\"extra\":");
    for (int i = 0; i < 40; i++)
        deep[n++] = '[';
    for (int i = 0; i < 40; i++)
        deep[n++] = ']';
    n += (size_t)snprintf(deep + n, sizeof deep - n, "}]}");
    CHECK_EQ_INT(check_same_as_cjson(TS_API_CHAT, deep, n), 0);

    /* A chunk with a long logprobs list: about 700 tokens. */
    static char wide[16384];
    n = (size_t)snprintf(wide, sizeof wide,
                         VLLM_HEAD "\"choices\":[{\"index\":0,\"delta\":{"
                                   "\"content\":\"x\"},\"logprobs\":{"
                                   "\"content\":[");
    for (int i = 0; i < 60; i++)
        n += (size_t)snprintf(wide + n, sizeof wide - n,
                              "%s{\"token\":\"t%d\",\"logprob\":-0.%d,\"bytes\":[116,%d],"
                              "\"top_logprobs\":[]}",
                              i > 0 ? "," : "", i, i + 1, 48 + i % 10);
    n += (size_t)snprintf(wide + n, sizeof wide - n, "]},\"finish_reason\":null}]}");
    CHECK(n < sizeof wide);
    CHECK_EQ_INT(check_same_as_cjson(TS_API_CHAT, wide, n), 0);
    struct ts_api_chunk c;
    CHECK_EQ_INT(api_parse_event(TS_API_CHAT, wide, n, &c), 0);
    CHECK_EQ_INT(c.content_pieces, 1);

    /* Just inside both limits, the scan still reads it. */
    n = (size_t)snprintf(deep, sizeof deep,
                         "{\"choices\":[{\"delta\":{\"content\":\"x\"},"
                         "\"extra\":");
    for (int i = 0; i < 28; i++)
        deep[n++] = '[';
    for (int i = 0; i < 28; i++)
        deep[n++] = ']';
    n += (size_t)snprintf(deep + n, sizeof deep - n, "}]}");
    CHECK_EQ_INT(check_same_as_cjson(TS_API_CHAT, deep, n), 1);
}

/* xorshift64*: a fixed seed, so a failing mutation is the same one on every run. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* Bytes that matter to JSON and to the scan's special cases, more likely than random ones. */
static const char mutation_bytes[] = "{}[]\":,\\u0123456789-+.eEnulltruefalse \t\r\n\v\0\x01\x7f"
                                     "\xC3\xA9\xff"
                                     "Ddx/";

static size_t mutate(uint64_t *rng, char *buf, size_t len, size_t cap)
{
    int edits = 1 + (int)(next_random(rng) % 3);
    for (int e = 0; e < edits; e++) {
        uint64_t r = next_random(rng);
        size_t at = len > 0 ? (size_t)(r >> 16) % len : 0;
        char byte =
            (r & 0x100) ? mutation_bytes[(r >> 40) % (sizeof mutation_bytes - 1)] : (char)(r >> 48);
        switch (r % 7) {
        case 0: /* flip a byte */
        case 1:
            if (len > 0)
                buf[at] = byte;
            break;
        case 6: /* a letter for a letter: names and values change, the JSON mostly stays valid */
            if (len > 0)
                buf[at] = "abcdefnrtuxyz0159"[(r >> 40) % 17];
            break;
        case 2: /* insert one */
            if (len + 1 <= cap) {
                memmove(buf + at + 1, buf + at, len - at);
                buf[at] = byte;
                len++;
            }
            break;
        case 3: /* delete one */
            if (len > 0) {
                memmove(buf + at, buf + at + 1, len - at - 1);
                len--;
            }
            break;
        case 4: /* truncate */
            len = at;
            break;
        case 5: { /* repeat a short run, as a stream spliced twice would */
            size_t run = 1 + (size_t)(r >> 8) % 12;
            if (at + run <= len && len + run <= cap) {
                memmove(buf + at + run, buf + at, len - at);
                len += run;
            }
            break;
        }
        }
    }
    return len;
}

/* Random chunks that are valid JSON, shaped like chunks: the members the interpretation reads,
 * where it reads them most of the time and with random types, order, spacing and repetition
 * otherwise. The mutations above mostly break the JSON; these are what the scan reads itself. */
struct gen {
    uint64_t *rng;
    char *buf;
    size_t len, cap;
};

static void gen_put(struct gen *g, const char *text)
{
    size_t n = strlen(text);
    if (g->len + n < g->cap) {
        memcpy(g->buf + g->len, text, n);
        g->len += n;
    }
}

static unsigned gen_pick(struct gen *g, unsigned n)
{
    return (unsigned)(next_random(g->rng) % n);
}

static void gen_space(struct gen *g)
{
    static const char *const spaces[] = {"", "", "", "", " ", "\n", "\t  ", "\r\n"};
    gen_put(g, spaces[gen_pick(g, 8)]);
}

/* Where a member sits decides which names it likely has and what its value likely is. */
enum gen_level { GEN_ROOT, GEN_CHOICE, GEN_DELTA, GEN_USAGE, GEN_ERROR, GEN_ANY };

struct gen_member {
    const char *name;
    enum gen_level holds; /* GEN_ANY: a scalar; GEN_CHOICE: an array of choices; else an object */
};

static const struct gen_member gen_members[][6] = {
    [GEN_ROOT] = {{"choices", GEN_CHOICE},
                  {"usage", GEN_USAGE},
                  {"error", GEN_ERROR},
                  {"object", GEN_ANY},
                  {"message", GEN_ANY},
                  {"tokstorm_send_ns", GEN_ANY}},
    [GEN_CHOICE] = {{"delta", GEN_DELTA},
                    {"message", GEN_DELTA},
                    {"text", GEN_ANY},
                    {"finish_reason", GEN_ANY},
                    {"index", GEN_ANY},
                    {"logprobs", GEN_ANY}},
    [GEN_DELTA] = {{"content", GEN_ANY},
                   {"reasoning_content", GEN_ANY},
                   {"reasoning", GEN_ANY},
                   {"content", GEN_ANY},
                   {"role", GEN_ANY},
                   {"tool_calls", GEN_ANY}},
    [GEN_USAGE] = {{"completion_tokens", GEN_ANY},
                   {"prompt_tokens", GEN_ANY},
                   {"completion_tokens", GEN_ANY},
                   {"prompt_tokens", GEN_ANY},
                   {"total_tokens", GEN_ANY},
                   {"details", GEN_USAGE}},
    [GEN_ERROR] = {{"message", GEN_ANY},
                   {"type", GEN_ANY},
                   {"code", GEN_ANY},
                   {"message", GEN_ANY},
                   {"param", GEN_ANY},
                   {"error", GEN_ERROR}},
};

static void gen_value(struct gen *g, enum gen_level holds, int depth);

static void gen_object(struct gen *g, enum gen_level level, int depth)
{
    gen_put(g, "{");
    unsigned members = 1 + gen_pick(g, 4);
    /* Most chunks carry choices: lead with them half the time. */
    int lead = level == GEN_ROOT && gen_pick(g, 2) == 0;
    for (unsigned i = 0; i < members; i++) {
        gen_space(g);
        if (i > 0) {
            gen_put(g, ",");
            gen_space(g);
        }
        const struct gen_member *m = &gen_members[level][lead && i == 0 ? 0 : gen_pick(g, 6)];
        gen_put(g, "\"");
        gen_put(g, m->name);
        gen_put(g, "\"");
        gen_space(g);
        gen_put(g, ":");
        gen_space(g);
        /* One value in six is of a random kind, whatever the name promises. */
        gen_value(g, gen_pick(g, 6) == 0 ? GEN_ANY : m->holds, depth + 1);
    }
    gen_space(g);
    gen_put(g, "}");
}

static void gen_value(struct gen *g, enum gen_level holds, int depth)
{
    static const char *const scalars[] = {"null",
                                          "true",
                                          "false",
                                          "0",
                                          "7",
                                          "-3",
                                          "5.0",
                                          "1e2",
                                          "123456789012",
                                          "1718000000123456789",
                                          "9223372036854775807",
                                          "-0",
                                          "1.0",
                                          "\"\"",
                                          "\"x\"",
                                          "\" the\"",
                                          "\"stop\"",
                                          "\"error\"",
                                          "\"\\n\"",
                                          "\"\\u0000\"",
                                          "\"\\u00e9\"",
                                          "\"\\ud83d\\ude00\"",
                                          "\"a\\\"b\"",
                                          "\"overloaded\"",
                                          "[]",
                                          "{}",
                                          "\"y\"",
                                          "\" a\"",
                                          "\"length\"",
                                          "\"\\\\\"",
                                          "\"\\u0000x\"",
                                          "\"x\\u0000\""};
    if (holds == GEN_ANY && depth < 5 && gen_pick(g, 4) == 0)
        holds = (enum gen_level)gen_pick(g, GEN_ANY);
    if (depth >= 6 || holds == GEN_ANY) {
        gen_put(g, scalars[gen_pick(g, sizeof scalars / sizeof scalars[0])]);
    } else if (holds == GEN_CHOICE) {
        gen_put(g, "[");
        unsigned items = gen_pick(g, 4);
        for (unsigned i = 0; i < items; i++) {
            if (i > 0)
                gen_put(g, ",");
            gen_space(g);
            if (gen_pick(g, 8) == 0)
                gen_value(g, GEN_ANY, depth + 1);
            else
                gen_object(g, GEN_CHOICE, depth + 1);
        }
        gen_space(g);
        gen_put(g, "]");
    } else {
        gen_object(g, holds, depth);
    }
}

static void test_scan_generated(void)
{
    enum { CHUNKS = 4000 };
    uint64_t rng = 0xD1B54A32D192ED03ULL;
    char buf[4096];
    int fast = 0, content = 0, finished = 0, usage = 0, errors = 0, before = check_failed;
    for (int i = 0; i < CHUNKS && check_failed - before < 10; i++) {
        struct gen g = {&rng, buf, 0, sizeof buf};
        gen_object(&g, GEN_ROOT, 0);
        enum ts_api_kind kind = scan_kinds[next_random(&rng) % 2];
        fast += check_same_as_cjson(kind, buf, g.len);
        struct ts_api_chunk c;
        api_parse_event(kind, buf, g.len, &c);
        content += c.content_pieces + c.reasoning_pieces > 0;
        finished += c.finished;
        usage += c.has_usage;
        errors += c.error;
    }
    printf("scan generated chunks: %d, %d read by the scan; %d with content, %d finished, "
           "%d with usage, %d errors\n",
           CHUNKS, fast, content, finished, usage, errors);
}

static void test_scan_mutations(void)
{
    enum { MUTATIONS = 6000 };
    uint64_t rng = 0x9E3779B97F4A7C15ULL;
    size_t n = sizeof scan_corpus / sizeof scan_corpus[0];
    char buf[1024];
    int fast = 0, before = check_failed;
    for (int i = 0; i < MUTATIONS && check_failed - before < 10; i++) {
        const struct corpus_entry *e = &scan_corpus[next_random(&rng) % n];
        size_t len = e->len < sizeof buf ? e->len : sizeof buf;
        memcpy(buf, e->data, len);
        len = mutate(&rng, buf, len, sizeof buf);
        enum ts_api_kind kind = scan_kinds[next_random(&rng) % 2];
        fast += check_same_as_cjson(kind, buf, len);
    }
    printf("scan mutations: %d, %d read by the scan\n", MUTATIONS, fast);
}

/* ---- the stream memo (api_memo.c): the same reading as api_parse_event, event by event ---- */

/* Reads data with the memo and without, on exact-size copies, and checks both agree byte for
 * byte. Returns 1 when the memo answered (it was not replaced), else 0. */
static int check_memo_same(enum ts_api_kind kind, struct ts_api_memo *memo, const char *data,
                           size_t len)
{
    char *copy = malloc(len > 0 ? len : 1);
    if (len > 0)
        memcpy(copy, data, len);
    struct ts_api_memo before = *memo;
    struct ts_api_chunk ref, got;
    memset(&ref, 0xA5, sizeof ref);
    memset(&got, 0x5A, sizeof got);
    int ref_rc = api_parse_event(kind, copy, len, &ref);
    int got_rc = api_parse_event_memo(kind, copy, len, memo, &got);
    free(copy);
    int same = got_rc == ref_rc && memcmp(&got, &ref, sizeof ref) == 0;
    CHECK(same);
    if (!same) {
        fprintf(stderr, "memo reading differs (kind %d): ", (int)kind);
        print_escaped(stderr, data, len);
        fputc('\n', stderr);
        print_chunk(stderr, "parse", ref_rc, &ref);
        print_chunk(stderr, "memo ", got_rc, &got);
    }
    return before.len > 0 && memo->len == before.len &&
           memcmp(memo->data, before.data, before.len) == 0 &&
           !(len == before.len && memcmp(data, before.data, len) == 0);
}

struct memo_template {
    enum ts_api_kind kind;
    const char *format; /* one %s for the token's text, one for the stamp */
    int stamp_first;    /* the stamp's %s comes first */
};

static const struct memo_template memo_templates[] = {
    /* tokstorm-mock's chunks, stamp last */
    {TS_API_CHAT,
     CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%s\"},\"logprobs\":null,"
               "\"finish_reason\":null}],\"tokstorm_send_ns\":%s}",
     0},
    /* vLLM's, no stamp (the stamp text lands after the object: only "" keeps it JSON) */
    {TS_API_CHAT,
     CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%s\"},\"logprobs\":null,"
               "\"finish_reason\":null}]}%s",
     0},
    /* reasoning models */
    {TS_API_CHAT,
     CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"role\":null,\"content\":null,"
               "\"reasoning_content\":\"%s\"}}],\"tokstorm_send_ns\":%s}",
     0},
    {TS_API_CHAT, CHAT_HEAD "\"choices\":[{\"delta\":{\"reasoning\":\"%s\",\"content\":\"\"}}],"
                            "\"tokstorm_send_ns\":%s, \"usage\":null}",
     0},
    /* completions */
    {TS_API_COMPLETIONS, "{\"choices\":[{\"text\":\"%s\",\"index\":0}],\"tokstorm_send_ns\":%s}", 0},
    /* the stamp before the token: never read from a memo */
    {TS_API_CHAT, "{\"tokstorm_send_ns\":%s,\"choices\":[{\"delta\":{\"content\":\"%s\"}}]}", 1},
    /* continuous usage after the token, and a finish_reason */
    {TS_API_CHAT,
     "{\"choices\":[{\"delta\":{\"content\":\"%s\"},\"finish_reason\":\"length\"}],"
     "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":%s}}",
     0},
};

static const char *const memo_texts[] = {
    "hello", "", " ", "a\\nb", "\\\"q\\\"", "\\u00e9t\\u00e9", "\\ud83d\\ude00", "\\ud83d",
    "\\u0000x", "\\u0000", "x\\u0000", "bad\\x", "ctl\x01", "tab\t", "\\/\\b\\f\\r\\t\\\\",
    "\\u12", "\\uZZZZ", "end\\", "\"},{", "\xc3\xa9", "\\u00"};

static const char *const memo_stamps[] = {
    "1", "0", "42", "123456789012345678", "1234567890123456789", "12345678901234567890",
    "9223372036854775807", "9223372036854775808", "18446744073709551615", "007", "00", "-5",
    "-0", "1e3", "1.5", "1.", "\"7\"", "null", "", " 12", "12 ", "1 2"};

static size_t memo_event(const struct memo_template *t, const char *text, const char *stamp,
                         char *buf, size_t cap)
{
    int n = t->stamp_first ? snprintf(buf, cap, t->format, stamp, text)
                           : snprintf(buf, cap, t->format, text, stamp);
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

static void test_memo_templates(void)
{
    char base[1024], buf[1024];
    int hits = 0, events = 0, mock_hits = 0;
    size_t nt = sizeof memo_texts / sizeof memo_texts[0];
    size_t ns = sizeof memo_stamps / sizeof memo_stamps[0];
    for (size_t t = 0; t < sizeof memo_templates / sizeof memo_templates[0]; t++) {
        const struct memo_template *tp = &memo_templates[t];
        struct ts_api_memo memo;
        api_memo_reset(&memo);
        /* Every text with every stamp, after a plain event, and one after another. */
        for (size_t i = 0; i < nt; i++) {
            for (size_t j = 0; j < ns; j++) {
                size_t blen = memo_event(tp, "tok", "1700", base, sizeof base);
                struct ts_api_memo primed;
                api_memo_reset(&primed);
                check_memo_same(tp->kind, &primed, base, blen);
                size_t len = memo_event(tp, memo_texts[i], memo_stamps[j], buf, sizeof buf);
                int hit = check_memo_same(tp->kind, &primed, buf, len);
                hits += hit;
                mock_hits += hit && t == 0;
                check_memo_same(tp->kind, &memo, buf, len);
                events += 2;
            }
        }
        /* The same event twice reads the same. */
        size_t len = memo_event(tp, "again", "17", buf, sizeof buf);
        check_memo_same(tp->kind, &memo, buf, len);
        check_memo_same(tp->kind, &memo, buf, len);
        /* A template that never reads from the memo is a test that proves nothing. */
        if (t != 5)
            CHECK(hits > 0);
    }
    /* The mock's chunk: every valid text (11 of them) with every stamp the scan reads (7). */
    CHECK(mock_hits >= 40);
    printf("memo templates: %d events, %d read from the memo (%d of tokstorm-mock's)\n", events,
           hits, mock_hits);
}

static void test_memo_mutations(void)
{
    enum { MUTATIONS = 20000 };
    uint64_t rng = 0x2545F4914F6CDD1DULL;
    char base[1024], buf[1024];
    int hits = 0, before = check_failed;
    size_t nt = sizeof memo_templates / sizeof memo_templates[0];
    for (int i = 0; i < MUTATIONS && check_failed - before < 10; i++) {
        const struct memo_template *tp = &memo_templates[next_random(&rng) % nt];
        size_t blen = memo_event(tp, "tok en", "1700000000123", base, sizeof base);
        struct ts_api_memo memo;
        api_memo_reset(&memo);
        check_memo_same(tp->kind, &memo, base, blen);
        memcpy(buf, base, blen);
        size_t len = mutate(&rng, buf, blen, sizeof buf);
        hits += check_memo_same(tp->kind, &memo, buf, len);
        /* and the memo after a mutation still reads the next plain event right */
        size_t next = memo_event(tp, "next", "1700000000124", buf, sizeof buf);
        check_memo_same(tp->kind, &memo, buf, next);
    }
    printf("memo mutations: %d, %d read from the memo\n", MUTATIONS, hits);
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

/* ---- whole streams, bytes to row (xfer.c), fed whole and one byte at a time ---- */

struct stream_result {
    struct ts_row row;
    int64_t first_token_ns, first_answer_ns;
};

/* Feeds body to a fresh transfer in pieces of `piece` bytes, byte i arriving at 10 + i ns. */
static void run_stream(enum ts_api_kind kind, const char *body, size_t piece,
                       struct stream_result *out)
{
    struct ts_xfer x;
    memset(out, 0, sizeof *out);
    if (xfer_init(&x, kind, 1 << 20) != 0) {
        CHECK(0);
        return;
    }
    xfer_begin(&x, 1);
    xfer_on_status(&x, 200, 5);
    size_t len = strlen(body);
    for (size_t off = 0; off < len; off += piece) {
        size_t n = len - off < piece ? len - off : piece;
        if (xfer_on_body(&x, body + off, n, 10 + (int64_t)off) != 0)
            break;
    }
    out->first_token_ns = x.first_token_ns;
    out->first_answer_ns = x.first_answer_ns;
    xfer_finish(&x, TS_TRANSPORT_OK, NULL, 100000, 0, &out->row);
    xfer_free(&x);
}

/* The same row whole and byte by byte; returns the byte-by-byte one (whose events arrive at
 * distinct times). */
static struct stream_result stream_row(enum ts_api_kind kind, const char *body)
{
    struct stream_result whole, bytes;
    run_stream(kind, body, strlen(body), &whole);
    run_stream(kind, body, 1, &bytes);
    CHECK_EQ_INT(bytes.row.error_class, whole.row.error_class);
    CHECK_EQ_INT(bytes.row.output_tokens, whole.row.output_tokens);
    CHECK_EQ_INT(bytes.row.prompt_tokens, whole.row.prompt_tokens);
    CHECK_EQ_INT(bytes.row.content_events, whole.row.content_events);
    CHECK_EQ_INT(bytes.row.reasoning_events, whole.row.reasoning_events);
    CHECK_EQ_INT(bytes.row.tokens_from_usage, whole.row.tokens_from_usage);
    return bytes;
}

/* vLLM and SGLang with a reasoning parser: the role chunk, reasoning deltas, an empty content,
 * the answer, the finish, usage in a last chunk with empty choices, [DONE]. */
static const char chat_reasoning_stream[] =
    "data: " CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":"
    "\"\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n"
    "data: " CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"Okay\"},"
    "\"logprobs\":null,\"finish_reason\":null}]}\n\n"
    "data: " CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\", so\"},"
    "\"logprobs\":null,\"finish_reason\":null}]}\n\n"
    "data: " CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"},\"logprobs\":null,"
    "\"finish_reason\":null}]}\n\n"
    "data: " CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Paris\"},"
    "\"logprobs\":null,\"finish_reason\":null}]}\n\n"
    "data: " CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\".\"},"
    "\"logprobs\":null,\"finish_reason\":null}]}\n\n"
    "data: " CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,"
    "\"finish_reason\":\"stop\",\"stop_reason\":null}]}\n\n"
    "data: " CHAT_HEAD "\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"total_tokens\":16,"
    "\"completion_tokens\":7}}\n\n"
    "data: [DONE]\n\n";

/* A server that sends no usage at all: the tokens are the content events. */
static const char chat_no_usage_stream[] =
    "data: " CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"},"
    "\"finish_reason\":null}]}\n\n"
    "data: " CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},"
    "\"finish_reason\":null}]}\n\n"
    "data: " CHAT_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"!\"},"
    "\"finish_reason\":\"stop\"}]}\n\n"
    "data: [DONE]\n\n";

static void test_chat_streams(void)
{
    struct stream_result r = stream_row(TS_API_CHAT, chat_reasoning_stream);
    CHECK_EQ_INT(r.row.error_class, TS_ERR_NONE);
    CHECK_EQ_INT(r.row.output_tokens, 7); /* usage: reasoning tokens are billed too */
    CHECK_EQ_INT(r.row.prompt_tokens, 9);
    CHECK_EQ_INT(r.row.tokens_from_usage, 1);
    CHECK_EQ_INT(r.row.content_events, 4);
    CHECK_EQ_INT(r.row.reasoning_events, 2);
    CHECK(r.first_token_ns > 0 && r.first_answer_ns > r.first_token_ns);
    CHECK(r.row.first_answer_s > r.row.first_token_s);

    r = stream_row(TS_API_CHAT, chat_no_usage_stream);
    CHECK_EQ_INT(r.row.error_class, TS_ERR_NONE);
    CHECK_EQ_INT(r.row.output_tokens, 2);
    CHECK_EQ_INT(r.row.tokens_from_usage, 0);
    CHECK_EQ_INT(r.row.reasoning_events, 0);
    CHECK(r.row.first_answer_s == r.row.first_token_s);
}

/* SGLang's POST /generate, "stream": true: cumulative text and running counts in meta_info; a
 * step that carried two tokens, and a last event that repeats the count with the finish
 * reason. */
static const char sglang_stream[] =
    "data: {\"text\":\" Paris\",\"meta_info\":{\"id\":\"8f3c2a\",\"finish_reason\":null,"
    "\"prompt_tokens\":7,\"weight_version\":\"default\",\"completion_tokens\":1,"
    "\"cached_tokens\":0,\"e2e_latency\":0.0213},\"index\":0}\n\n"
    "data: {\"text\":\" Paris. It\",\"meta_info\":{\"id\":\"8f3c2a\",\"finish_reason\":null,"
    "\"prompt_tokens\":7,\"weight_version\":\"default\",\"completion_tokens\":3,"
    "\"cached_tokens\":0,\"e2e_latency\":0.0412},\"index\":0}\n\n"
    "data: {\"text\":\" Paris. It is\",\"meta_info\":{\"id\":\"8f3c2a\",\"finish_reason\":null,"
    "\"prompt_tokens\":7,\"weight_version\":\"default\",\"completion_tokens\":4,"
    "\"cached_tokens\":0,\"e2e_latency\":0.0518},\"index\":0}\n\n"
    "data: {\"text\":\" Paris. It is\",\"meta_info\":{\"id\":\"8f3c2a\",\"finish_reason\":"
    "{\"type\":\"length\",\"length\":4},\"prompt_tokens\":7,\"weight_version\":\"default\","
    "\"completion_tokens\":4,\"cached_tokens\":0,\"e2e_latency\":0.0519},\"index\":0}\n\n"
    "data: [DONE]\n\n";

/* TGI's POST /generate_stream: "data:" without a space, one token per event, the last a special
 * end-of-sequence token with generated_text and details. */
static const char tgi_stream[] =
    "data:{\"index\":1,\"token\":{\"id\":3681,\"text\":\" Paris\",\"logprob\":-0.12,"
    "\"special\":false},\"generated_text\":null,\"details\":null}\n\n"
    "data:{\"index\":2,\"token\":{\"id\":29889,\"text\":\".\",\"logprob\":-0.41,"
    "\"special\":false},\"generated_text\":null,\"details\":null}\n\n"
    "data:{\"index\":3,\"token\":{\"id\":2,\"text\":\"</s>\",\"logprob\":-0.01,"
    "\"special\":true},\"generated_text\":\" Paris.\",\"details\":{\"finish_reason\":"
    "\"eos_token\",\"generated_tokens\":3,\"input_length\":7,\"seed\":null}}\n\n";

/* The same without "details": true in the request: no count, the events are the tokens. */
static const char tgi_stream_no_details[] =
    "data:{\"index\":1,\"token\":{\"id\":3681,\"text\":\" Paris\",\"logprob\":-0.12,"
    "\"special\":false},\"generated_text\":null,\"details\":null}\n\n"
    "data:{\"index\":2,\"token\":{\"id\":29889,\"text\":\".\",\"logprob\":-0.41,"
    "\"special\":false},\"generated_text\":\" Paris.\",\"details\":null}\n\n";

/* llama.cpp's POST /completion, "stream": true: content per event; the last with "stop": true,
 * empty content and the timings. */
static const char llamacpp_stream[] =
    "data: {\"index\":0,\"content\":\" Paris\",\"tokens\":[3681],\"stop\":false,\"id_slot\":0,"
    "\"tokens_predicted\":1,\"tokens_evaluated\":7}\n\n"
    "data: {\"index\":0,\"content\":\"\",\"tokens\":[29889],\"stop\":false,\"id_slot\":0,"
    "\"tokens_predicted\":2,\"tokens_evaluated\":7}\n\n"
    "data: {\"index\":0,\"content\":\" It\",\"tokens\":[739],\"stop\":false,\"id_slot\":0,"
    "\"tokens_predicted\":3,\"tokens_evaluated\":7}\n\n"
    "data: {\"index\":0,\"content\":\"\",\"tokens\":[],\"id_slot\":0,\"stop\":true,"
    "\"model\":\"llama-3.1-8b-instruct\",\"tokens_predicted\":3,\"tokens_evaluated\":7,"
    "\"generation_settings\":{\"n_predict\":3,\"temperature\":0.0},\"prompt\":\"The capital "
    "of France is\",\"has_new_line\":false,\"truncated\":false,\"stop_type\":\"limit\","
    "\"stopping_word\":\"\",\"tokens_cached\":9,\"timings\":{\"prompt_n\":2,\"prompt_ms\":"
    "11.8,\"prompt_per_token_ms\":5.9,\"prompt_per_second\":169.5,\"predicted_n\":3,"
    "\"predicted_ms\":44.1,\"predicted_per_token_ms\":14.7,\"predicted_per_second\":68.0}}\n\n";

static void test_native_streams(void)
{
    struct stream_result r = stream_row(TS_API_SGLANG, sglang_stream);
    CHECK_EQ_INT(r.row.error_class, TS_ERR_NONE);
    CHECK_EQ_INT(r.row.output_tokens, 4);
    CHECK_EQ_INT(r.row.prompt_tokens, 7);
    CHECK_EQ_INT(r.row.tokens_from_usage, 1);
    CHECK_EQ_INT(r.row.content_events, 3); /* the repeat with the finish reason is none */

    r = stream_row(TS_API_TGI, tgi_stream);
    CHECK_EQ_INT(r.row.error_class, TS_ERR_NONE);
    CHECK_EQ_INT(r.row.output_tokens, 3);
    CHECK_EQ_INT(r.row.prompt_tokens, 7);
    CHECK_EQ_INT(r.row.tokens_from_usage, 1);
    CHECK_EQ_INT(r.row.content_events, 3); /* the special token counts, as in generated_tokens */
    r = stream_row(TS_API_TGI, tgi_stream_no_details);
    CHECK_EQ_INT(r.row.error_class, TS_ERR_NONE);
    CHECK_EQ_INT(r.row.output_tokens, 2);
    CHECK_EQ_INT(r.row.tokens_from_usage, 0);

    r = stream_row(TS_API_LLAMACPP, llamacpp_stream);
    CHECK_EQ_INT(r.row.error_class, TS_ERR_NONE);
    CHECK_EQ_INT(r.row.output_tokens, 3); /* timings.predicted_n, not the 2 non-empty events */
    CHECK_EQ_INT(r.row.prompt_tokens, 7); /* tokens_evaluated, not the uncached prompt_n */
    CHECK_EQ_INT(r.row.tokens_from_usage, 1);
    CHECK_EQ_INT(r.row.content_events, 2);

    /* Without a stop (SGLang: without [DONE] or a finish reason) the stream is truncated. */
    r = stream_row(TS_API_LLAMACPP, "data: {\"content\":\"x\",\"stop\":false}\n\n");
    CHECK_EQ_INT(r.row.error_class, TS_ERR_TRUNCATED);
    r = stream_row(TS_API_SGLANG, "data: {\"text\":\"x\",\"meta_info\":{\"finish_reason\":null,"
                                  "\"completion_tokens\":1}}\n\n");
    CHECK_EQ_INT(r.row.error_class, TS_ERR_TRUNCATED);
}

static void test_native_events(void)
{
    struct ts_api_chunk c;
    enum ts_api_kind kinds[] = {TS_API_SGLANG, TS_API_TGI, TS_API_LLAMACPP};
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        CHECK_EQ_INT(parse(kinds[i], "[DONE]", &c), 0);
        CHECK_EQ_INT(c.done, 1);
        CHECK_EQ_INT(parse(kinds[i], "{\"text\":", &c), TS_API_ERR_MALFORMED);
        CHECK_EQ_INT(c.error, 1);
        CHECK_EQ_INT(parse(kinds[i], "{\"error\":\"Input validation error: too long\","
                                     "\"error_type\":\"validation\"}",
                           &c),
                     0);
        CHECK_EQ_INT(c.error, 1);
        CHECK_EQ_STR(c.error_message, "Input validation error: too long");
        CHECK_EQ_INT(parse(kinds[i], "{\"error\":{\"message\":\"busy\"}}", &c), 0);
        CHECK_EQ_STR(c.error_message, "busy");
        CHECK_EQ_INT(parse(kinds[i], "{\"tokstorm_send_ns\":123456}", &c), 0);
        CHECK_EQ_INT(c.server_send_ns, 123456);
        check_quiet_chunk(&c);
    }
    /* SGLang: the running count, marked so; no count and empty text is no token. */
    CHECK_EQ_INT(parse(TS_API_SGLANG, "{\"text\":\"ab\",\"meta_info\":{\"prompt_tokens\":3,"
                                      "\"completion_tokens\":2,\"finish_reason\":null}}",
                       &c),
                 0);
    CHECK_EQ_INT(c.has_usage, 1);
    CHECK_EQ_INT(c.usage_cumulative, 1);
    CHECK_EQ_INT(c.completion_tokens, 2);
    CHECK_EQ_INT(c.prompt_tokens, 3);
    CHECK_EQ_INT(c.content_pieces, 1);
    CHECK_EQ_INT(c.finished, 0);
    CHECK_EQ_INT(parse(TS_API_SGLANG, "{\"text\":\"\",\"meta_info\":{}}", &c), 0);
    check_quiet_chunk(&c);
    CHECK_EQ_INT(parse(TS_API_SGLANG, "{\"text\":\"a\",\"meta_info\":{\"finish_reason\":"
                                      "{\"type\":\"stop\",\"matched\":2}}}",
                       &c),
                 0);
    CHECK_EQ_INT(c.content_pieces, 1);
    CHECK_EQ_INT(c.finished, 1);
    CHECK_EQ_INT(c.has_usage, 0);
    /* TGI: an event without a token object (an error, a keep-alive) is none. */
    CHECK_EQ_INT(parse(TS_API_TGI, "{\"token\":null,\"generated_text\":null,\"details\":null}",
                       &c),
                 0);
    check_quiet_chunk(&c);
    /* llama.cpp: timings win over tokens_predicted; prompt_n stands in for tokens_evaluated. */
    CHECK_EQ_INT(parse(TS_API_LLAMACPP, "{\"content\":\"\",\"stop\":true,\"tokens_predicted\":"
                                        "5,\"timings\":{\"prompt_n\":4,\"predicted_n\":6}}",
                       &c),
                 0);
    CHECK_EQ_INT(c.finished, 1);
    CHECK_EQ_INT(c.content_pieces, 0);
    CHECK_EQ_INT(c.completion_tokens, 6);
    CHECK_EQ_INT(c.prompt_tokens, 4);
}

static const char *const two_stops[] = {"</s>", "\n\nUser:"};

static struct ts_api_params knob_params(void)
{
    struct ts_api_params p = {
        .model = "m",
        .max_tokens = 64,
        .temperature = 0.7,
        .top_p = 0.9,
        .min_tokens = 8,
        .stop = two_stops,
        .n_stop = 2,
        .ignore_eos = 1,
        .stream = 1,
    };
    return p;
}

static void check_stops(const cJSON *stop)
{
    CHECK(cJSON_IsArray(stop) && cJSON_GetArraySize(stop) == 2);
    CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetArrayItem(stop, 0)), "</s>");
    CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetArrayItem(stop, 1)), "\n\nUser:");
}

static int near(const cJSON *item, double want)
{
    return cJSON_IsNumber(item) && fabs(item->valuedouble - want) < 1e-12;
}

static void test_build_knobs(void)
{
    struct ts_api_params p = knob_params();
    struct ts_prompt text = {.text = "The capital of France is", .messages_json = NULL};
    struct ts_prompt msgs = {.text = NULL,
                             .messages_json = "[{\"role\":\"system\",\"content\":\"Be brief.\"},"
                                              "{\"role\":\"user\",\"content\":\"Why?\"}]"};

    char *body = api_build_body(TS_API_CHAT, &p, &text);
    cJSON *root = parse_body(body);
    CHECK(near(get(root, "top_p"), 0.9));
    CHECK(near(get(root, "min_tokens"), 8));
    check_stops(get(root, "stop"));
    cJSON_Delete(root);
    free(body);

    body = api_build_body(TS_API_SGLANG, &p, &msgs);
    root = parse_body(body);
    const cJSON *sp = get(root, "sampling_params");
    CHECK_EQ_STR(cJSON_GetStringValue(get(root, "text")), "Be brief.\nWhy?");
    CHECK(cJSON_IsTrue(get(root, "stream")));
    CHECK(get(root, "model") == NULL && get(root, "max_tokens") == NULL);
    CHECK(near(get(sp, "max_new_tokens"), 64) && near(get(sp, "temperature"), 0.7));
    CHECK(near(get(sp, "top_p"), 0.9) && near(get(sp, "min_new_tokens"), 8));
    CHECK(cJSON_IsTrue(get(sp, "ignore_eos")));
    check_stops(get(sp, "stop"));
    cJSON_Delete(root);
    free(body);

    body = api_build_body(TS_API_TGI, &p, &text);
    root = parse_body(body);
    const cJSON *tp = get(root, "parameters");
    CHECK_EQ_STR(cJSON_GetStringValue(get(root, "inputs")), "The capital of France is");
    CHECK(near(get(tp, "max_new_tokens"), 64) && near(get(tp, "temperature"), 0.7));
    CHECK(near(get(tp, "top_p"), 0.9) && cJSON_IsTrue(get(tp, "details")));
    CHECK(get(tp, "min_new_tokens") == NULL && get(tp, "ignore_eos") == NULL);
    check_stops(get(tp, "stop"));
    cJSON_Delete(root);
    free(body);
    /* TGI rejects temperature 0: greedy is asked for by leaving it out. */
    p.temperature = 0;
    body = api_build_body(TS_API_TGI, &p, &text);
    root = parse_body(body);
    CHECK(get(get(root, "parameters"), "temperature") == NULL);
    cJSON_Delete(root);
    free(body);
    p.temperature = 0.7;

    body = api_build_body(TS_API_LLAMACPP, &p, &text);
    root = parse_body(body);
    CHECK_EQ_STR(cJSON_GetStringValue(get(root, "prompt")), "The capital of France is");
    CHECK(near(get(root, "n_predict"), 64) && near(get(root, "top_p"), 0.9));
    CHECK(cJSON_IsTrue(get(root, "stream")) && cJSON_IsTrue(get(root, "ignore_eos")));
    CHECK(get(root, "min_tokens") == NULL);
    check_stops(get(root, "stop"));
    cJSON_Delete(root);
    free(body);

    /* Unset knobs are left out. */
    struct ts_api_params plain = {.model = "m", .max_tokens = 4, .stream = 1};
    enum ts_api_kind kinds[] = {TS_API_CHAT, TS_API_COMPLETIONS, TS_API_SGLANG, TS_API_TGI,
                                TS_API_LLAMACPP};
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        body = api_build_body(kinds[i], &plain, &text);
        CHECK(body != NULL);
        CHECK(body == NULL || (strstr(body, "top_p") == NULL && strstr(body, "min_") == NULL &&
                               strstr(body, "stop") == NULL));
        free(body);
    }
}

static void test_build_extra_body(void)
{
    char msg[128];
    CHECK_EQ_INT(api_check_extra_body("{\"top_k\":20}", msg, sizeof msg), 0);
    CHECK_EQ_INT(api_check_extra_body("[1]", msg, sizeof msg), -1);
    CHECK(strstr(msg, "object") != NULL);
    CHECK_EQ_INT(api_check_extra_body("{top_k:20}", msg, sizeof msg), -1);
    CHECK(strstr(msg, "JSON") != NULL);

    struct ts_api_params p = knob_params();
    struct ts_prompt text = {.text = "x", .messages_json = NULL};
    /* Objects merge member by member; anything else replaces or is added. */
    p.extra_body = "{\"sampling_params\":{\"top_k\":20,\"top_p\":0.5},\"rid\":\"r1\","
                   "\"stream\":true}";
    char *body = api_build_body(TS_API_SGLANG, &p, &text);
    cJSON *root = parse_body(body);
    const cJSON *sp = get(root, "sampling_params");
    CHECK(near(get(sp, "top_k"), 20) && near(get(sp, "top_p"), 0.5));
    CHECK(near(get(sp, "max_new_tokens"), 64));
    CHECK_EQ_STR(cJSON_GetStringValue(get(root, "rid")), "r1");
    CHECK(cJSON_IsTrue(get(root, "stream")) && cJSON_GetArraySize(root) == 4);
    cJSON_Delete(root);
    free(body);

    p.extra_body = "{\"temperature\":1.5,\"chat_template_kwargs\":{\"enable_thinking\":false}}";
    body = api_build_body(TS_API_CHAT, &p, &text);
    root = parse_body(body);
    CHECK(near(get(root, "temperature"), 1.5));
    CHECK(cJSON_IsFalse(get(get(root, "chat_template_kwargs"), "enable_thinking")));
    cJSON_Delete(root);
    free(body);

    p.extra_body = "[]";
    CHECK(api_build_body(TS_API_CHAT, &p, &text) == NULL);
}

int main(void)
{
    test_kind_names();
    test_chat_chunks();
    test_usage();
    test_send_stamp();
    test_done();
    test_errors();
    test_malformed();
    test_completions_chunks();
    test_unstreamed_response();
    test_scan_corpus();
    test_scan_limits();
    test_scan_mutations();
    test_scan_generated();
    test_memo_templates();
    test_memo_mutations();
    test_build_chat();
    test_build_completions();
    test_build_rejects();
    test_chat_streams();
    test_native_streams();
    test_native_events();
    test_build_knobs();
    test_build_extra_body();
    return check_report("api");
}
