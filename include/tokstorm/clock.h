/* clock.h: the only reader of the system clocks. Durations everywhere else are int64_t
 * nanoseconds of CLOCK_MONOTONIC passed in as arguments; wall-clock time is only a label. */
#ifndef TOKSTORM_CLOCK_H
#define TOKSTORM_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds (plus the test offset below, if one was set). */
int64_t clock_now_ns(void);

/* For tests of clock alignment on one machine, where every "host" shares one kernel clock:
 * shifts everything clock_now_ns returns in this process by offset_ns. Set once, at start-up,
 * before any time is read; run.c sets it from TOKSTORM_TEST_CLOCK_OFFSET_NS times the rank. */
void clock_set_test_offset(int64_t offset_ns);

/* Formats the current UTC time as ISO 8601 ("2026-11-29T22:04:07Z") into buf. */
char *clock_utc_iso8601(char *buf, size_t len);

/* Sleeps for ns nanoseconds (restarts after signals). */
void clock_sleep_ns(int64_t ns);

/* Returns at target_ns of CLOCK_MONOTONIC (at once if it has passed): sleeps until 5 ms
 * before it, then spins, since a sleep alone can wake late by that much. */
void clock_wait_until(int64_t target_ns);

#endif
