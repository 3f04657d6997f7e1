/* test_redact.c: the command line as recorded: credentials masked in every form getopt_long
 * accepts them, everything else kept and quoted so that a shell reads it back the same. */
#include "tokstorm/redact.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"

#define ARGV(...) ((char *const[]){"tokstorm", __VA_ARGS__})
#define ARGC(...) ((int)(sizeof((char *[]){"tokstorm", __VA_ARGS__}) / sizeof(char *)))

/* The recorded form of argv equals want. */
static int records(int argc, char *const *argv, const char *want)
{
    char *got = redact_command_line(argc, argv);
    int ok = got != NULL && strcmp(got, want) == 0;
    if (!ok)
        fprintf(stderr, "recorded '%s', wanted '%s'\n", got ? got : "(null)", want);
    free(got);
    return ok;
}
#define RECORDS(want, ...) CHECK(records(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), want))

static int header(const char *line, const char *want)
{
    char *got = redact_header(line);
    int ok = got != NULL && strcmp(got, want) == 0;
    if (!ok)
        fprintf(stderr, "header '%s' -> '%s', wanted '%s'\n", line, got ? got : "(null)", want);
    free(got);
    return ok;
}

int main(void)
{
    /* Nothing secret: the words as they were, quoted only when a shell needs it. */
    RECORDS("tokstorm --url http://h:8000 --levels 1,4 -o x.h5", "--url", "http://h:8000",
            "--levels", "1,4", "-o", "x.h5");
    RECORDS("tokstorm --model 'my model' --prompts 'it'\\''s.jsonl' --out ''", "--model",
            "my model", "--prompts", "it's.jsonl", "--out", "");
    RECORDS("tokstorm --slo ttft=2s,tpot=50ms", "--slo", "ttft=2s,tpot=50ms");
    char *const one[] = {"/usr/bin/tokstorm"};
    CHECK(records(1, one, "/usr/bin/tokstorm"));
    CHECK(records(0, one, ""));

    /* --api-key and its family: the value goes, the option stays. */
    RECORDS("tokstorm --api-key REDACTED --url http://h", "--api-key", "sk-123", "--url",
            "http://h");
    RECORDS("tokstorm --api-key=REDACTED", "--api-key=sk-123");
    RECORDS("tokstorm --api-key-file REDACTED", "--api-key-file", "/secret/key");
    RECORDS("tokstorm --api-keys=REDACTED", "--api-keys=a,b");
    /* getopt_long takes unique abbreviations: --api-k means --api-key. */
    RECORDS("tokstorm --api-k REDACTED --api-=REDACTED", "--api-k", "sk-1", "--api-=sk-2");
    /* --api (the dialect) is not a key. */
    RECORDS("tokstorm --api completions", "--api", "completions");
    /* A key that looks like an option is still the key's value. */
    RECORDS("tokstorm --api-key REDACTED --url x", "--api-key", "--url", "--url", "x");
    RECORDS("tokstorm --api-key", "--api-key"); /* no value: nothing to hide */
    RECORDS("tokstorm --api-key=REDACTED", "--api-key=");

    /* Headers: the value of a credential goes, the header's name stays. */
    RECORDS("tokstorm -H 'Authorization: REDACTED'", "-H", "Authorization: Bearer sk-1");
    RECORDS("tokstorm '-HAuthorization: REDACTED'", "-HAuthorization: Bearer sk-1");
    RECORDS("tokstorm --header 'x-api-key: REDACTED'", "--header", "x-api-key: abc");
    RECORDS("tokstorm '--header=X-Auth-Token: REDACTED'", "--header=X-Auth-Token:abc");
    RECORDS("tokstorm --head 'Proxy-Authorization: REDACTED'", "--head",
            "Proxy-Authorization: Basic eA==");
    RECORDS("tokstorm -vH 'Cookie: REDACTED' -v", "-vH", "Cookie: session=1", "-v");
    RECORDS("tokstorm -H 'X-Request-Id: 42' -H X-Empty:", "-H", "X-Request-Id: 42", "-H",
            "X-Empty:");
    RECORDS("tokstorm -H Authorization", "-H", "Authorization"); /* a name, no value */
    /* -o takes a value: "-oH" writes to a file named H, and what follows is an option. */
    RECORDS("tokstorm -oH --model m", "-oH", "--model", "m");
    RECORDS("tokstorm -o -H --model m", "-o", "-H", "--model", "m");

    CHECK(redact_header_name_is_secret("Authorization", 13));
    CHECK(redact_header_name_is_secret("X-API-KEY", 9));
    CHECK(redact_header_name_is_secret("api_token", 9));
    CHECK(redact_header_name_is_secret("X-Client-Secret", 15));
    CHECK(!redact_header_name_is_secret("Content-Type", 12));
    CHECK(!redact_header_name_is_secret("Accept", 6));
    CHECK(!redact_header_name_is_secret("Authorization", 3)); /* only len bytes are read */
    CHECK(header("Authorization: Bearer x", "Authorization: REDACTED"));
    CHECK(header("authorization:x", "authorization: REDACTED"));
    CHECK(header("Content-Type: application/json", "Content-Type: application/json"));
    CHECK(header("no colon", "no colon"));
    CHECK(header("Value: has a key: inside", "Value: has a key: inside")); /* the name decides */
    return check_report("redact");
}
