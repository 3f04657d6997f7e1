/* test_secret.c: the API key from a variable or a file: a final newline dropped, every kind of
 * bad key refused with a message that names where it came from and never quotes it. */
#include "tokstorm/secret.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static char dir[] = "/tmp/tokstorm-test-secret.XXXXXX";

/* Writes len bytes of text to a file in dir; returns its path (static buffer). */
static const char *file_with(const char *name, const char *text, size_t len)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f) {
        fwrite(text, 1, len, f);
        fclose(f);
    }
    return path;
}

/* Reads the key from env (or path); checks it is want (NULL: refused, msg holding
 * msg_part and not the secret "sk-SECRET"). */
static int reads(const char *env, const char *path, const char *want, const char *msg_part)
{
    char *key = (char *)"untouched", msg[512] = "";
    int rc = secret_read_key(env, path, &key, msg, sizeof msg);
    int ok;
    if (want != NULL)
        ok = rc == 0 && key != NULL && strcmp(key, want) == 0;
    else
        ok = rc == -1 && key == NULL && strstr(msg, msg_part) != NULL &&
             strstr(msg, "sk-SECRET") == NULL && strchr(msg, '\n') == NULL;
    if (!ok)
        fprintf(stderr, "env %s path %s: rc %d key '%s' msg '%s'\n", env ? env : "-",
                path ? path : "-", rc, rc == 0 && key ? key : "", msg);
    if (rc == 0)
        secret_free(key);
    return ok;
}

int main(void)
{
    if (mkdtemp(dir) == NULL)
        return 1;

    setenv("TS_TEST_KEY", "sk-abc_123.XYZ", 1);
    CHECK(reads("TS_TEST_KEY", NULL, "sk-abc_123.XYZ", NULL));
    setenv("TS_TEST_KEY", "sk-abc\n", 1); /* $(cat file) keeps no newline, but "$(...)\n" may */
    CHECK(reads("TS_TEST_KEY", NULL, "sk-abc", NULL));
    unsetenv("TS_TEST_KEY");
    CHECK(reads("TS_TEST_KEY", NULL, NULL, "--api-key-env: TS_TEST_KEY is not set on rank 0"));
    setenv("TS_TEST_KEY", "", 1);
    CHECK(reads("TS_TEST_KEY", NULL, NULL, "--api-key-env TS_TEST_KEY: the key is empty"));
    setenv("TS_TEST_KEY", "Bearer sk-SECRET", 1);
    CHECK(reads("TS_TEST_KEY", NULL, NULL, "TS_TEST_KEY: the key holds a space"));
    setenv("TS_TEST_KEY", "sk-SECRET\r\nX-Evil: 1", 1);
    CHECK(reads("TS_TEST_KEY", NULL, NULL, "holds a space, line break"));
    /* The variable wins over the file when both are given (options.c refuses both). */
    setenv("TS_TEST_KEY", "from-env", 1);
    CHECK(reads("TS_TEST_KEY", "/nonexistent", "from-env", NULL));

    CHECK(reads(NULL, file_with("k1", "sk-file\n", 8), "sk-file", NULL));
    CHECK(reads(NULL, file_with("k2", "sk-file\r\n\n", 10), "sk-file", NULL));
    CHECK(reads(NULL, file_with("k3", "sk-file", 7), "sk-file", NULL));
    CHECK(reads(NULL, file_with("k4", "", 0), NULL, "k4: the key is empty"));
    CHECK(reads(NULL, file_with("k5", "\n\n", 2), NULL, "the key is empty"));
    CHECK(reads(NULL, file_with("k6", "sk-SECRET\nsecond line\n", 22), NULL, "line break"));
    CHECK(reads(NULL, file_with("k7", "sk-\0SECRET", 10), NULL, "k7 is not a key (binary)"));
    CHECK(reads(NULL, file_with("k8", "sk-SECRET\xc3\xa9", 11), NULL, "non-ASCII"));
    char *big = calloc(1, TS_SECRET_MAX_BYTES + 2);
    memset(big, 'k', TS_SECRET_MAX_BYTES + 1);
    CHECK(reads(NULL, file_with("k10", big, TS_SECRET_MAX_BYTES + 1), NULL, "over 16 KiB"));
    big[TS_SECRET_MAX_BYTES] = '\0'; /* the longest accepted */
    CHECK(reads(NULL, file_with("k9", big, TS_SECRET_MAX_BYTES), big, NULL));
    free(big);
    CHECK(reads(NULL, "/nonexistent/key", NULL,
                "--api-key-file: cannot open /nonexistent/key: No such file"));
    CHECK(reads(NULL, dir, NULL, "--api-key-file: cannot read"));

    char *header = secret_bearer_header("sk-1");
    CHECK_EQ_STR(header, "Authorization: Bearer sk-1");
    secret_free(header);
    secret_free(NULL);

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return check_report("secret");
}
