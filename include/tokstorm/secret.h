/* secret.h: the API key, read from where the command line says it is (an environment variable
 * or a file, never argv), checked, and put into the header that carries it. The key is never
 * printed: messages name the variable or the file, not what it holds. No MPI, no network. */
#ifndef TOKSTORM_SECRET_H
#define TOKSTORM_SECRET_H

#include <stddef.h>

/* A longer "key" is some other file given by mistake. */
#define TS_SECRET_MAX_BYTES 16384

/* Reads the key from the environment variable env_name or, when that is NULL, from the file
 * file_path. Trailing whitespace (the file's final newline) is dropped; what is left must be
 * one non-empty word of visible ASCII characters, since it goes into a header line as it is.
 * Returns 0 with *key a malloc'd string (release it with secret_free), or -1 with *key NULL
 * and msg naming the option and the problem: the variable unset or empty, the file unreadable,
 * empty or over TS_SECRET_MAX_BYTES, a space, line break or control character inside. */
int secret_read_key(const char *env_name, const char *file_path, char **key, char *msg,
                    size_t msg_len);

/* "Authorization: Bearer <key>", malloc'd (release it with secret_free); NULL when out of
 * memory. */
char *secret_bearer_header(const char *key);

/* Overwrites the string s with zeros, so the key does not linger in freed memory, and frees it.
 * NULL is fine. */
void secret_free(char *s);

#endif
