/* interrupt.h: SIGINT and SIGTERM as a request to stop, not an end. The handler only records
 * the first signal (the program's one global, a volatile sig_atomic_t) and gives both signals
 * back their default action, so that a second one ends the process at once. The run reads the
 * record at its agreement points and from its event loop's tick, and decides with the other
 * ranks what to do (run.c, sweep.c). No MPI, no I/O. */
#ifndef TOKSTORM_INTERRUPT_H
#define TOKSTORM_INTERRUPT_H

/* Exit statuses of an interrupted run: 128 + the signal number, as a shell reports a process
 * that a signal ended. */
#define TS_EXIT_SIGINT  130
#define TS_EXIT_SIGTERM 143

/* Installs the handler for SIGINT and SIGTERM and forgets any earlier signal. Returns 0 or -1
 * (sigaction failed). */
int interrupt_install(void);

/* Puts back the dispositions interrupt_install replaced. */
void interrupt_restore(void);

/* The exit status the first signal asks for (TS_EXIT_SIGINT or TS_EXIT_SIGTERM), or 0 when
 * none has come. Async-signal-safe to read. */
int interrupt_status(void);

/* "SIGINT" or "SIGTERM" for such a status, "a signal" for any other. */
const char *interrupt_name(int status);

#endif
