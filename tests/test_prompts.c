/* test_prompts.c: loading JSON Lines prompt files, the bundled one included, and the one-line
 * messages for each kind of bad file. */
#include "tokstorm/prompts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static char tmp_path[64];

static const char *write_tmp(const char *text)
{
    snprintf(tmp_path, sizeof tmp_path, "/tmp/tokstorm-test-prompts-%d.jsonl", (int)getpid());
    FILE *f = fopen(tmp_path, "w");
    fputs(text, f);
    fclose(f);
    return tmp_path;
}

static int load_error(const char *text, int want_rc, const char *want_in_msg)
{
    struct ts_prompts p;
    char msg[256] = "";
    int rc = prompts_load(&p, write_tmp(text), msg, sizeof msg);
    int ok = rc == want_rc && strstr(msg, want_in_msg) != NULL && strstr(msg, tmp_path) != NULL;
    if (!ok)
        fprintf(stderr, "rc %d msg '%s'\n", rc, msg);
    prompts_free(&p);
    return ok;
}

int main(void)
{
    struct ts_prompts p;
    char msg[256] = "";

    /* The bundled file: at least 60 prompts, both shapes present. */
    int rc = prompts_load(&p, TS_SOURCE_DIR "/prompts/coding.jsonl", msg, sizeof msg);
    CHECK_EQ_INT(rc, 0);
    CHECK(p.count >= 60);
    size_t texts = 0, messages = 0;
    for (size_t i = 0; i < p.count; i++) {
        texts += p.items[i].text != NULL;
        messages += p.items[i].messages_json != NULL;
    }
    CHECK(texts > 0 && messages > 0 && texts + messages == p.count);
    prompts_free(&p);

    /* Both shapes, blank lines skipped, CRLF tolerated. */
    rc = prompts_load(&p,
                      write_tmp("{\"prompt\": \"write fizzbuzz\"}\r\n\n   \n"
                                "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}\n"),
                      msg, sizeof msg);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(p.count, 2);
    if (p.count == 2) {
        CHECK_EQ_STR(p.items[0].text, "write fizzbuzz");
        CHECK(p.items[0].messages_json == NULL);
        CHECK_EQ_STR(p.items[1].messages_json, "[{\"role\":\"user\",\"content\":\"hi\"}]");
    }
    prompts_free(&p);

    /* Each kind of bad file: the message names the file, and the line where there is one. */
    CHECK(load_error("{\"prompt\": \"ok\"}\n{not json}\n", TS_PROMPTS_ERR_FORMAT,
                     ":2: not valid JSON"));
    CHECK(load_error("[1,2]\n", TS_PROMPTS_ERR_FORMAT, ":1: not a JSON object"));
    CHECK(load_error("{\"text\": \"x\"}\n", TS_PROMPTS_ERR_FORMAT, ":1: needs a \"prompt\""));
    CHECK(load_error("{\"prompt\": 5}\n", TS_PROMPTS_ERR_FORMAT, ":1: \"prompt\" must be"));
    CHECK(load_error("{\"prompt\": \"\"}\n", TS_PROMPTS_ERR_FORMAT, ":1: \"prompt\" must be"));
    CHECK(load_error("{\"messages\": []}\n", TS_PROMPTS_ERR_FORMAT, ":1: \"messages\" must be"));
    CHECK(load_error("{\"messages\": [{\"role\": \"user\"}]}\n", TS_PROMPTS_ERR_FORMAT,
                     ":1: each message"));
    CHECK(load_error("{\"prompt\": \"a\", \"messages\": []}\n", TS_PROMPTS_ERR_FORMAT,
                     ":1: has both"));
    CHECK(load_error("\n\n", TS_PROMPTS_ERR_EMPTY, "holds no prompt"));

    rc = prompts_load(&p, "/nonexistent/prompts.jsonl", msg, sizeof msg);
    CHECK_EQ_INT(rc, TS_PROMPTS_ERR_IO);
    CHECK(strstr(msg, "/nonexistent/prompts.jsonl") && strstr(msg, "No such file"));
    CHECK_EQ_INT(p.count, 0);
    prompts_free(&p);

    unlink(tmp_path);
    return check_report("prompts");
}
