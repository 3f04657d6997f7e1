/* mock_options.h: the command line of tokstorm-mock, parsed and validated. User input only;
 * derived run-time values (sockets, deadlines) live in the server. */
#ifndef TOKSTORM_MOCK_OPTIONS_H
#define TOKSTORM_MOCK_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mock_fault.h"

struct mock_options {
    const char *host;         /* numeric IPv4 or IPv6 listen address (points into argv) */
    int port;                 /* TCP port; 0 = an ephemeral port chosen by the kernel */
    const char *port_file;    /* where to write the chosen port, or NULL */
    const char *model;        /* model id served and listed (points into argv or a literal) */
    int64_t ttft_ns;          /* prefill time: admission to first token */
    int64_t step_ns;          /* fixed cost of one decode step */
    int64_t per_seq_ns;       /* extra decode-step cost per stream in the step */
    int64_t max_batch;        /* streams admitted at once (prefill + decode), per worker */
    int64_t events_per_write; /* tokens per stream per decode step, sent in one write */
    int64_t reasoning_tokens; /* chat: leading tokens sent as reasoning_content deltas */
    int workers;              /* server processes sharing the port; 1 = no fork */
    int64_t exit_after_ns;    /* exit by itself after this long; 0 = never */
    bool quiet;               /* no warnings on stderr, only fatal errors */
    bool stats;               /* print a totals line on stderr at exit */
    struct mock_fault_config faults; /* --fault and --fault-*: what to break, how often */
    const char *api_key;      /* /v1/ requests need "Authorization: Bearer <it>"; NULL = any */
};

enum mock_options_result {
    MOCK_OPTIONS_RUN = 0,  /* options are valid: run the server */
    MOCK_OPTIONS_EXIT = 1, /* --help or --version was printed: exit 0 */
    MOCK_OPTIONS_BAD = 2,  /* invalid input; err names the option: exit 2 */
};

/* Fills *opt from argv (defaults first). Does no I/O except printing --help/--version to out. */
enum mock_options_result mock_options_parse(int argc, char **argv, struct mock_options *opt,
                                            FILE *out, char *err, size_t err_len);

#endif
