/* log.c: rank-prefixed diagnostics on stderr. The rank and level are set once at start-up,
 * before any other thread or loop exists, so these two statics are written only then. */
#include "tokstorm/log.h"

#include <stdarg.h>
#include <stdio.h>

static int log_rank = -1;
static enum ts_log_level log_max = TS_LOG_WARN;

void log_setup(int rank, enum ts_log_level max_level)
{
    log_rank = rank;
    log_max = max_level;
}

void log_msg(enum ts_log_level level, const char *fmt, ...)
{
    static const char *const names[] = {"error", "warning", "info", "debug"};
    if (level > log_max)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (log_rank >= 0)
        fprintf(stderr, "tokstorm[%d]: %s: %s\n", log_rank, names[level], line);
    else
        fprintf(stderr, "tokstorm: %s: %s\n", names[level], line);
}
