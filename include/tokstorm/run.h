/* run.h: the whole sweep, callable from main() or a test: options, agreement on bad input,
 * preflight, levels, reduction, output. The only module that sees every other. */
#ifndef TOKSTORM_RUN_H
#define TOKSTORM_RUN_H

#include <mpi.h>

/* Exit statuses. */
#define TS_EXIT_OK        0 /* the sweep ran (request failures are data, not a failed run) */
#define TS_EXIT_RUNTIME   1 /* the run could not go on: the event loop, memory */
#define TS_EXIT_USAGE     2 /* bad command line, input file or output path, before any request */
#define TS_EXIT_PREFLIGHT 3 /* the server failed the preflight request */
/* The results file, --json or --csv could not be written: the run stopped after the level it
 * was writing, and what was written before is intact. */
#define TS_EXIT_OUTPUT 4
/* 130 and 143: interrupted by SIGINT or SIGTERM (interrupt.h). */

/* Runs tokstorm on comm with the given arguments; returns the exit status, the same on
 * every rank. */
int run(int argc, char **argv, MPI_Comm comm);

#endif
