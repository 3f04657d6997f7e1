/* demo.h: --demo starts the bundled tokstorm-mock on a free loopback port (rank 0 only) and
 * stops it at the end. Process management only; no MPI, no HTTP. */
#ifndef TOKSTORM_DEMO_H
#define TOKSTORM_DEMO_H

#include <stddef.h>
#include <sys/types.h>

struct ts_demo {
    pid_t pid;     /* the mock's pid, 0 when not running */
    char url[128]; /* http://127.0.0.1:PORT */
    int stdout_fd; /* read end of the mock's stdout, kept open so it never gets SIGPIPE */
};

/* Finds tokstorm-mock beside this executable (or on PATH), starts it with the demo timing
 * model (TTFT 50 ms, 10 ms per decode step, batch 64) and waits up to 10 s for its
 * "listening on" line. Returns 0 or -1 with msg filled. */
int demo_start(struct ts_demo *d, char *msg, size_t msg_len);

/* Stops the mock (SIGTERM, then SIGKILL after 2 s) and reaps it. */
void demo_stop(struct ts_demo *d);

#endif
