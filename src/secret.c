/* secret.c: reads the API key from an environment variable or a file and builds the header
 * that carries it. It knows nothing of MPI or curl; what it reads it never prints. */
#include "tokstorm/secret.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Drops trailing whitespace, then checks that what is left is one word a header can carry.
 * what names the source for messages ("--api-key-file /run/key"). */
static int check_key(char *key, const char *what, char *msg, size_t len)
{
    size_t n = strlen(key);
    while (n > 0 &&
           (key[n - 1] == '\n' || key[n - 1] == '\r' || key[n - 1] == ' ' || key[n - 1] == '\t'))
        key[--n] = '\0';
    if (n == 0) {
        snprintf(msg, len, "%s: the key is empty", what);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)key[i] <= ' ' || (unsigned char)key[i] >= 0x7f) {
            snprintf(msg, len,
                     "%s: the key holds a space, line break or non-ASCII character (give the "
                     "key alone, on one line)",
                     what);
            return -1;
        }
    return 0;
}

/* Zeroes the whole of read_file's buffer, NUL bytes or not, and frees it. */
static void discard(char *buf)
{
    if (buf != NULL)
        explicit_bzero(buf, TS_SECRET_MAX_BYTES + 2);
    free(buf);
}

static int read_file(const char *path, char **key, char *msg, size_t len)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(msg, len, "--api-key-file: cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    char *buf = calloc(1, TS_SECRET_MAX_BYTES + 2);
    size_t n = buf ? fread(buf, 1, TS_SECRET_MAX_BYTES + 1, f) : 0;
    int failed = buf == NULL || ferror(f);
    int saved_errno = errno;
    fclose(f);
    if (failed) {
        snprintf(msg, len, "--api-key-file: cannot read %s: %s", path,
                 buf ? strerror(saved_errno) : "out of memory");
        discard(buf);
        return -1;
    }
    if (n > TS_SECRET_MAX_BYTES || memchr(buf, '\0', n) != NULL) {
        snprintf(msg, len, "--api-key-file: %s is not a key (%s)", path,
                 n > TS_SECRET_MAX_BYTES ? "over 16 KiB" : "binary");
        discard(buf);
        return -1;
    }
    *key = buf;
    return 0;
}

int secret_read_key(const char *env_name, const char *file_path, char **key, char *msg, size_t len)
{
    char what[600];
    *key = NULL;
    if (env_name != NULL) {
        const char *value = getenv(env_name);
        if (value == NULL) {
            snprintf(msg, len,
                     "--api-key-env: %s is not set on rank 0's host (mpirun -x %s passes it on "
                     "when rank 0 runs elsewhere)",
                     env_name, env_name);
            return -1;
        }
        if (strlen(value) > TS_SECRET_MAX_BYTES) {
            snprintf(msg, len, "--api-key-env: %s holds over 16 KiB: not a key", env_name);
            return -1;
        }
        if ((*key = strdup(value)) == NULL) {
            snprintf(msg, len, "out of memory");
            return -1;
        }
        snprintf(what, sizeof what, "--api-key-env %s", env_name);
    } else {
        if (read_file(file_path, key, msg, len) != 0)
            return -1;
        snprintf(what, sizeof what, "--api-key-file %s", file_path);
    }
    if (check_key(*key, what, msg, len) != 0) {
        secret_free(*key);
        *key = NULL;
        return -1;
    }
    return 0;
}

char *secret_bearer_header(const char *key)
{
    static const char prefix[] = "Authorization: Bearer ";
    size_t n = strlen(key);
    char *line = malloc(sizeof prefix + n);
    if (line != NULL) {
        memcpy(line, prefix, sizeof prefix - 1);
        memcpy(line + sizeof prefix - 1, key, n + 1);
    }
    return line;
}

void secret_free(char *s)
{
    if (s == NULL)
        return;
    explicit_bzero(s, strlen(s));
    free(s);
}
