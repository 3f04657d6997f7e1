/* log.h: levelled diagnostics on stderr, each line prefixed with the MPI rank.
 * Human results go to stdout from rank 0 (report.c); everything here goes to stderr. */
#ifndef TOKSTORM_LOG_H
#define TOKSTORM_LOG_H

enum ts_log_level { TS_LOG_ERROR = 0, TS_LOG_WARN = 1, TS_LOG_INFO = 2, TS_LOG_DEBUG = 3 };

/* Sets this process's rank (for the prefix) and the most verbose level printed. */
void log_setup(int rank, enum ts_log_level max_level);

void log_msg(enum ts_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(TS_LOG_ERROR, __VA_ARGS__)
#define log_warn(...)  log_msg(TS_LOG_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(TS_LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(TS_LOG_DEBUG, __VA_ARGS__)

#endif
