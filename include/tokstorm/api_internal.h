/* api_internal.h: what api_openai.c and api_scan.c share, and what tests and the parse benchmark
 * reach past api_parse_event for. Not part of the interface the rest of tokstorm uses: only api.h
 * is. Nothing here knows of curl, sockets, clocks or MPI. */
#ifndef TOKSTORM_API_INTERNAL_H
#define TOKSTORM_API_INTERNAL_H

#include <stddef.h>

#include "tokstorm/api.h"

/* api_scan_event returns this when it cannot be sure of the answer cJSON would give. */
#define TS_API_SCAN_DECLINED 1

/* The reference reading of one event's data: cJSON builds the whole tree and the members are
 * looked up in it. Same contract as api_parse_event, which falls back to it. */
int api_parse_event_cjson(enum ts_api_kind kind, const char *data, size_t len,
                          struct ts_api_chunk *out);

/* The fast reading (api_scan.c): tokenizes the data in place with jsmn, without allocating.
 * Returns 0 with *out exactly as api_parse_event_cjson would fill it, or TS_API_SCAN_DECLINED
 * (*out then zeroed) for anything it does not fully understand: not a JSON object (which
 * includes "[DONE]" and every malformed event), too many tokens or too deep, a number in a
 * usage field that is not a plain integer, a member name with an escape, an error message
 * with one. */
int api_scan_event(enum ts_api_kind kind, const char *data, size_t len, struct ts_api_chunk *out);

/* Where api_scan_event_at found what it read, as byte offsets into the data: the value of the
 * string it counted last (content, reasoning or text; between the quotes) and the root's
 * "tokstorm_send_ns" value; [0, 0) when there is none. */
struct ts_api_scan_where {
    size_t value_start, value_end;
    size_t stamp_start, stamp_end;
};

/* api_scan_event that also says where (when where is not NULL and it returns 0). */
int api_scan_event_at(enum ts_api_kind kind, const char *data, size_t len,
                      struct ts_api_chunk *out, struct ts_api_scan_where *where);

/* Copies at most limit bytes of src (src_len bytes, no NUL needed) into dst (cap bytes, NUL
 * included), never ending inside a UTF-8 sequence, with control bytes turned into spaces. */
void api_copy_message(char *dst, size_t cap, const char *src, size_t src_len, size_t limit);

#endif
