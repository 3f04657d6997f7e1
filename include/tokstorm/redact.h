/* redact.h: keeps secrets given on the command line out of what tokstorm records (the results
 * file, the --json summary). The command line is stored with the value of every option named
 * like --api-key (--api-key, --api-key-file, and the abbreviations getopt_long accepts for
 * them) and of every -H/--header whose header name looks secret replaced by REDACTED. Pure:
 * no I/O, nothing is allocated except the returned strings. */
#ifndef TOKSTORM_REDACT_H
#define TOKSTORM_REDACT_H

#include <stddef.h>

/* What a secret value is replaced with. Needs no shell quoting. */
#define TS_REDACTED "REDACTED"

/* Whether a header of this name (len bytes, no ':') carries a credential: its name, ignoring
 * case, contains "auth" (Authorization, Proxy-Authorization, X-Auth-Token), "key", "token",
 * "secret", "password" or "cookie". */
int redact_header_name_is_secret(const char *name, size_t len);

/* A header line "Name: value" as it may be recorded: "Name: REDACTED" when the name is
 * secret, else a copy. A line without ':' is copied (it names a header, carries no value).
 * Returns a malloc'd string, or NULL when out of memory. */
char *redact_header(const char *line);

/* argv[0..argc-1] as one line fit to record: arguments joined with spaces, each quoted for a
 * POSIX shell when it needs it ('a b' stays one argument), with the secret values described
 * above replaced by REDACTED (the option and a header's name stay, so a reader sees that one
 * was given). Returns a malloc'd string, or NULL when out of memory. */
char *redact_command_line(int argc, char *const *argv);

#endif
