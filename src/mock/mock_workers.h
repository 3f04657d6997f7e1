/* mock_workers.h: the processes of tokstorm-mock. With one worker the server runs in this
 * process; with --workers N the process binds the port, forks N worker servers that share it
 * through SO_REUSEPORT, announces them, relays stop signals and sums their totals. */
#ifndef TOKSTORM_MOCK_WORKERS_H
#define TOKSTORM_MOCK_WORKERS_H

#include <signal.h>

#include "mock_options.h"

/* Runs the server(s) until *stop is set by SIGINT/SIGTERM (which must be blocked except in
 * wait_mask), --exit-after passes or a failure; with --stats prints the (summed) totals line
 * on stderr. Returns the exit status: 0 after a clean stop, 1 after a failure (reported on
 * stderr). In a forked worker it also returns, with that worker's status, so that the worker
 * leaves through main like the parent does. */
int mock_workers_run(const struct mock_options *opt, volatile sig_atomic_t *stop,
                     const sigset_t *wait_mask);

#endif
