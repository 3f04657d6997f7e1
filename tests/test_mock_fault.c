/* test_mock_fault.c: tokstorm-mock's fault injection without a socket: the --fault spec, the
 * seeded draws (deterministic, at the asked frequencies, sparing the skipped ones), the events
 * the faults render, and how tokstorm's own request code classifies a stream that carries each
 * of them. */
#include "mock_fault.h"
#include "mock_openai.h"

#include "check.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokstorm/xfer.h"

static int parse_fails(const char *spec, const char *want)
{
    struct mock_fault_config cfg;
    mock_fault_config_init(&cfg);
    char err[256] = "";
    int rc = mock_fault_parse(spec, &cfg, err, sizeof err);
    int ok = rc == -1 && strstr(err, want) != NULL;
    if (!ok)
        fprintf(stderr, "spec '%s': rc %d, message '%s', wanted '%s'\n", spec, rc, err, want);
    return ok;
}

static void test_parse(void)
{
    struct mock_fault_config cfg;
    mock_fault_config_init(&cfg);
    CHECK(!mock_fault_any(&cfg));
    CHECK_EQ_INT(cfg.seed, 1);
    CHECK_EQ_INT(cfg.stall_ns, 2000000000);
    CHECK_EQ_INT(cfg.huge_event_bytes, 4000000);
    char err[256];
    CHECK_EQ_INT(mock_fault_parse("503=0.2,stall=5%,refuse=1", &cfg, err, sizeof err), 0);
    CHECK(fabs(cfg.prob[MOCK_FAULT_503] - 0.2) < 1e-12);
    CHECK(fabs(cfg.prob[MOCK_FAULT_STALL] - 0.05) < 1e-12);
    CHECK(cfg.prob[MOCK_FAULT_REFUSE] == 1.0);
    CHECK(mock_fault_any(&cfg));
    CHECK_EQ_INT(mock_fault_parse("503=0", &cfg, err, sizeof err), 0); /* again: the new value */
    CHECK(cfg.prob[MOCK_FAULT_503] == 0);
    CHECK_EQ_INT(mock_fault_check(&cfg, err, sizeof err), 0);

    /* Every name parses back to its fault. */
    int all = 1;
    for (int f = MOCK_FAULT_NONE + 1; f < MOCK_FAULT__COUNT; f++) {
        char spec[64];
        mock_fault_config_init(&cfg);
        snprintf(spec, sizeof spec, "%s=0.5", mock_fault_name((enum mock_fault)f));
        all &= mock_fault_parse(spec, &cfg, err, sizeof err) == 0 && cfg.prob[f] == 0.5;
    }
    CHECK(all);
    CHECK(mock_fault_name(MOCK_FAULT_NONE) == NULL && mock_fault_name(MOCK_FAULT__COUNT) == NULL);
    CHECK(!mock_fault_stream_only(MOCK_FAULT_503) && mock_fault_stream_only(MOCK_FAULT_STALL));

    CHECK(parse_fails("timeout=0.5", "'timeout' is not a fault"));
    CHECK(parse_fails("503", "'503' is not a fault"));
    CHECK(parse_fails("=0.5", "'' is not a fault"));
    CHECK(parse_fails("", "expected NAME=P"));
    CHECK(parse_fails("503=1.5", "'1.5' is not a probability"));
    CHECK(parse_fails("503=101%", "'101%' is not a probability"));
    CHECK(parse_fails("503=-0.1", "'-0.1' is not a probability"));
    CHECK(parse_fails("503=", "'' is not a probability"));
    CHECK(parse_fails("503=nan", "'nan' is not a probability"));
    CHECK(parse_fails("503=0.5x", "'0.5x' is not a probability"));

    /* Each group's chances add up to at most 1; the groups are separate draws. */
    mock_fault_config_init(&cfg);
    CHECK_EQ_INT(
        mock_fault_parse("503=0.7,close=0.2,stall=0.1,refuse=0.6,reset=0.4", &cfg, err, sizeof err),
        0);
    CHECK_EQ_INT(mock_fault_check(&cfg, err, sizeof err), 0);
    CHECK_EQ_INT(mock_fault_parse("429=0.2", &cfg, err, sizeof err), 0);
    CHECK_EQ_INT(mock_fault_check(&cfg, err, sizeof err), -1);
    CHECK(strstr(err, "request faults add up to 1.2") != NULL);
    mock_fault_config_init(&cfg);
    CHECK_EQ_INT(mock_fault_parse("refuse=60%,reset=50%", &cfg, err, sizeof err), 0);
    CHECK_EQ_INT(mock_fault_check(&cfg, err, sizeof err), -1);
    CHECK(strstr(err, "connection (refuse, reset) faults add up to 1.1") != NULL);
}

static void test_draws(void)
{
    struct mock_fault_config cfg;
    mock_fault_config_init(&cfg);
    char err[128];
    CHECK_EQ_INT(mock_fault_parse("503=0.3,close=0.2,reset=0.25", &cfg, err, sizeof err), 0);

    /* The same seed gives the same decisions; another seed or another worker others. */
    struct mock_fault_state a, b, c, d;
    mock_fault_init(&a, &cfg, 0);
    mock_fault_init(&b, &cfg, 0);
    mock_fault_init(&c, &cfg, 1);
    cfg.seed = 2;
    mock_fault_init(&d, &cfg, 0);
    int same = 1, differs_worker = 0, differs_seed = 0;
    for (int i = 0; i < 1000; i++) {
        enum mock_fault fa = mock_fault_pick_request(&a, true);
        same &= fa == mock_fault_pick_request(&b, true);
        differs_worker |= fa != mock_fault_pick_request(&c, true);
        differs_seed |= fa != mock_fault_pick_request(&d, true);
    }
    CHECK(same && differs_worker && differs_seed);

    /* Frequencies: 200,000 draws land within 1% (absolute) of the asked chances; connection
     * draws only ever give connection faults, request draws request faults. */
    cfg.seed = 7;
    struct mock_fault_state st;
    mock_fault_init(&st, &cfg, 0);
    const int n = 200000;
    int only_request = 1, only_connection = 1;
    for (int i = 0; i < n; i++) {
        enum mock_fault f = mock_fault_pick_request(&st, true);
        only_request &= f == MOCK_FAULT_NONE || f >= MOCK_FAULT_FIRST_REQUEST;
        f = mock_fault_pick_connection(&st);
        only_connection &= f == MOCK_FAULT_NONE || f == MOCK_FAULT_RESET;
    }
    CHECK(only_request && only_connection);
    CHECK(fabs((double)st.injected[MOCK_FAULT_503] / n - 0.3) < 0.01);
    CHECK(fabs((double)st.injected[MOCK_FAULT_CLOSE] / n - 0.2) < 0.01);
    CHECK(fabs((double)st.injected[MOCK_FAULT_RESET] / n - 0.25) < 0.01);
    CHECK_EQ_INT(st.injected[MOCK_FAULT_REFUSE], 0);
    CHECK_EQ_INT(st.injected[MOCK_FAULT_NONE] + st.injected[MOCK_FAULT_503] +
                     st.injected[MOCK_FAULT_CLOSE] + st.injected[MOCK_FAULT_RESET],
                 2 * n);

    /* Skip spares the first connections and requests; a stream-only fault drawn for a
     * non-streaming request is no fault, and is not counted. */
    mock_fault_config_init(&cfg);
    CHECK_EQ_INT(mock_fault_parse("stall=1,refuse=1", &cfg, err, sizeof err), 0);
    cfg.skip = 2;
    mock_fault_init(&st, &cfg, 0);
    CHECK_EQ_INT(mock_fault_pick_request(&st, true), MOCK_FAULT_NONE);
    CHECK_EQ_INT(mock_fault_pick_connection(&st), MOCK_FAULT_NONE);
    CHECK_EQ_INT(mock_fault_pick_request(&st, true), MOCK_FAULT_NONE);
    CHECK_EQ_INT(mock_fault_pick_request(&st, true), MOCK_FAULT_STALL);
    CHECK_EQ_INT(mock_fault_pick_request(&st, false), MOCK_FAULT_NONE);
    CHECK_EQ_INT(mock_fault_pick_connection(&st), MOCK_FAULT_NONE);
    CHECK_EQ_INT(mock_fault_pick_connection(&st), MOCK_FAULT_REFUSE);
    CHECK_EQ_INT(st.injected[MOCK_FAULT_STALL], 1);
    CHECK_EQ_INT(st.injected[MOCK_FAULT_REFUSE], 1);

    CHECK_EQ_INT(mock_fault_trigger_token(1), 1);
    CHECK_EQ_INT(mock_fault_trigger_token(2), 1);
    CHECK_EQ_INT(mock_fault_trigger_token(3), 2);
    CHECK_EQ_INT(mock_fault_trigger_token(8), 4);
}

static struct mock_openai_reply reply_for(enum mock_api api, int64_t max_tokens)
{
    char body[160], err[128];
    snprintf(body, sizeof body,
             api == MOCK_API_CHAT
                 ? "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":%lld,"
                   "\"stream\":true,\"stream_options\":{\"include_usage\":true}}"
                 : "{\"prompt\":\"hi\",\"max_tokens\":%lld,\"stream\":true,"
                   "\"stream_options\":{\"include_usage\":true}}",
             (long long)max_tokens);
    struct mock_openai_reply r;
    int rc = mock_openai_parse_request(api, body, strlen(body), "m", 42, 1700000000, &r, err,
                                       sizeof err);
    CHECK_EQ_INT(rc, 0);
    return r;
}

/* The JSON of one rendered "data: ...\n\n" event, or NULL when it is not JSON. */
static cJSON *event_json(const struct mock_buf *b)
{
    size_t len = mock_buf_len(b);
    const char *p = mock_buf_head(b);
    if (len < 8 || memcmp(p, "data: ", 6) != 0 || memcmp(p + len - 2, "\n\n", 2) != 0)
        return NULL;
    return cJSON_ParseWithLength(p + 6, len - 8);
}

static void test_render(void)
{
    struct mock_buf b = {0};
    CHECK_EQ_INT(mock_openai_render_error(429, "slow", &b), 0);
    cJSON *j = cJSON_ParseWithLength(mock_buf_head(&b), mock_buf_len(&b));
    cJSON *e = cJSON_GetObjectItem(j, "error");
    CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(e, "type")), "rate_limit_error");
    CHECK_EQ_INT(cJSON_GetNumberValue(cJSON_GetObjectItem(e, "code")), 429);
    cJSON_Delete(j);
    mock_buf_reset(&b, 0);
    CHECK_EQ_INT(mock_openai_render_error(503, "busy", &b), 0);
    CHECK(strstr(mock_buf_head(&b), "\"type\":\"server_error\"") != NULL);
    mock_buf_reset(&b, 0);
    CHECK_EQ_INT(mock_openai_render_error(400, "bad", &b), 0);
    CHECK(strstr(mock_buf_head(&b), "\"type\":\"invalid_request_error\"") != NULL);

    mock_buf_reset(&b, 0);
    CHECK_EQ_INT(mock_openai_render_error_event("boom", &b), 0);
    j = event_json(&b);
    e = cJSON_GetObjectItem(j, "error");
    CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(e, "message")), "boom");
    CHECK_EQ_INT(cJSON_GetNumberValue(cJSON_GetObjectItem(e, "code")), 500);
    cJSON_Delete(j);

    for (int api = MOCK_API_CHAT; api <= MOCK_API_COMPLETIONS; api++) {
        struct mock_openai_reply r = reply_for((enum mock_api)api, 8);
        mock_buf_reset(&b, 0);
        CHECK_EQ_INT(mock_openai_render_malformed(&r, &b), 0);
        CHECK(mock_buf_len(&b) > 8 && event_json(&b) == NULL); /* "data: {...cut\n\n" */
        CHECK(memchr(mock_buf_head(&b), '\n', mock_buf_len(&b) - 2) == NULL);

        /* The huge event: one line, valid JSON, exactly the asked bytes of content. */
        mock_buf_reset(&b, 0);
        CHECK_EQ_INT(mock_openai_render_huge(&r, 3000000, 12345, &b), 0);
        CHECK(memchr(mock_buf_head(&b), '\n', mock_buf_len(&b) - 2) == NULL);
        j = event_json(&b);
        cJSON *choice = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "choices"), 0);
        cJSON *text = api == MOCK_API_CHAT
                          ? cJSON_GetObjectItem(cJSON_GetObjectItem(choice, "delta"), "content")
                          : cJSON_GetObjectItem(choice, "text");
        const char *s = cJSON_GetStringValue(text);
        CHECK(s != NULL && strlen(s) == 3000000 && s[0] == 'x' && s[2999999] == 'x');
        CHECK_EQ_INT(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "tokstorm_send_ns")), 12345);
        cJSON_Delete(j);
        mock_openai_reply_free(&r);
    }
    mock_buf_free(&b);
}

/* A stream of 4 tokens as the mock renders it, with the fault's event after token 2. */
static void render_stream(enum mock_fault fault, int64_t huge_bytes, struct mock_buf *out)
{
    struct mock_openai_reply r = reply_for(MOCK_API_CHAT, 4);
    struct mock_openai_stamp st;
    mock_openai_stamp_set(&st, 1000);
    mock_openai_render_role(&r, 1000, out);
    for (int64_t t = 1; t <= 4; t++) {
        mock_openai_render_token(&r, t, &st, out);
        if (t != mock_fault_trigger_token(4))
            continue;
        if (fault == MOCK_FAULT_MALFORMED)
            mock_openai_render_malformed(&r, out);
        else if (fault == MOCK_FAULT_ERROR_EVENT)
            mock_openai_render_error_event("boom", out);
        else if (fault == MOCK_FAULT_HUGE_EVENT)
            mock_openai_render_huge(&r, huge_bytes, 1000, out);
    }
    mock_openai_render_finish(&r, 1000, out);
    mock_openai_render_usage(&r, 1000, out);
    mock_openai_render_done(out);
    mock_openai_reply_free(&r);
}

/* What tokstorm makes of it, fed in pieces of `piece` bytes. */
static int classify(enum mock_fault fault, int64_t huge_bytes, size_t cap, size_t piece,
                    int64_t *tokens)
{
    struct mock_buf b = {0};
    render_stream(fault, huge_bytes, &b);
    struct ts_xfer x;
    CHECK_EQ_INT(xfer_init(&x, TS_API_CHAT, cap), 0);
    xfer_begin(&x, 1);
    const char *head[] = {"HTTP/1.1 200 OK\r\n", "Content-Type: text/event-stream\r\n", "\r\n"};
    for (int i = 0; i < 3; i++)
        xfer_on_header(&x, head[i], strlen(head[i]), 2);
    enum ts_transport how = TS_TRANSPORT_OK;
    for (size_t off = 0; off < mock_buf_len(&b); off += piece) {
        size_t n = mock_buf_len(&b) - off < piece ? mock_buf_len(&b) - off : piece;
        if (xfer_on_body(&x, mock_buf_head(&b) + off, n, 3) != 0) {
            how = TS_TRANSPORT_ABORTED;
            break;
        }
    }
    struct ts_row row;
    memset(&row, 0, sizeof row);
    xfer_finish(&x, how, NULL, 4, 0, &row);
    xfer_free(&x);
    mock_buf_free(&b);
    *tokens = row.output_tokens;
    return row.error_class;
}

static void test_client_view(void)
{
    int64_t tokens;
    CHECK_EQ_INT(classify(MOCK_FAULT_NONE, 0, 1 << 20, 1 << 20, &tokens), TS_ERR_NONE);
    CHECK_EQ_INT(tokens, 4);
    /* The split fault's bytes, one at a time, are the same stream. */
    CHECK_EQ_INT(classify(MOCK_FAULT_NONE, 0, 1 << 20, 1, &tokens), TS_ERR_NONE);
    CHECK_EQ_INT(tokens, 4);
    CHECK_EQ_INT(classify(MOCK_FAULT_MALFORMED, 0, 1 << 20, 1, &tokens), TS_ERR_MALFORMED);
    CHECK_EQ_INT(tokens, 0);
    CHECK_EQ_INT(classify(MOCK_FAULT_ERROR_EVENT, 0, 1 << 20, 7, &tokens), TS_ERR_STREAM);
    CHECK_EQ_INT(tokens, 0);
    CHECK_EQ_INT(classify(MOCK_FAULT_HUGE_EVENT, 2000000, 1 << 20, 16384, &tokens),
                 TS_ERR_OVERSIZED);
    CHECK_EQ_INT(tokens, 0);
    /* Under a cap that fits it, the huge event is one more content event, and the tokens are
     * still the usage's. */
    CHECK_EQ_INT(classify(MOCK_FAULT_HUGE_EVENT, 2000000, 4000000, 16384, &tokens), TS_ERR_NONE);
    CHECK_EQ_INT(tokens, 4);
}

int main(void)
{
    test_parse();
    test_draws();
    test_render();
    test_client_view();
    return check_report("mock_fault");
}
