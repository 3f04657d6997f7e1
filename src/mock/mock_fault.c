/* mock_fault.c: fault names, the --fault spec, and the seeded draws that decide which fault a
 * connection or a request gets. It knows nothing of sockets, HTTP or clocks; mock_conn.c
 * carries the faults out. */
#include "mock_fault.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[MOCK_FAULT__COUNT] = {
    [MOCK_FAULT_REFUSE] = "refuse",
    [MOCK_FAULT_RESET] = "reset",
    [MOCK_FAULT_429] = "429",
    [MOCK_FAULT_500] = "500",
    [MOCK_FAULT_503] = "503",
    [MOCK_FAULT_CLOSE] = "close",
    [MOCK_FAULT_STALL] = "stall",
    [MOCK_FAULT_MALFORMED] = "malformed",
    [MOCK_FAULT_ERROR_EVENT] = "error-event",
    [MOCK_FAULT_SPLIT] = "split",
    [MOCK_FAULT_HUGE_EVENT] = "huge-event",
    [MOCK_FAULT_NO_FINISH] = "no-finish",
    [MOCK_FAULT_NOT_SSE] = "not-sse",
};

void mock_fault_config_init(struct mock_fault_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->seed = 1;
    cfg->stall_ns = INT64_C(2000000000);
    cfg->huge_event_bytes = INT64_C(4000000);
}

const char *mock_fault_name(enum mock_fault f)
{
    return f > MOCK_FAULT_NONE && f < MOCK_FAULT__COUNT ? names[f] : NULL;
}

bool mock_fault_stream_only(enum mock_fault f)
{
    return f >= MOCK_FAULT_CLOSE && f < MOCK_FAULT__COUNT;
}

static enum mock_fault fault_by_name(const char *name, size_t len)
{
    for (int f = MOCK_FAULT_NONE + 1; f < MOCK_FAULT__COUNT; f++)
        if (strlen(names[f]) == len && memcmp(names[f], name, len) == 0)
            return (enum mock_fault)f;
    return MOCK_FAULT_NONE;
}

/* "0.25", "1", "25%", "2.5%": a number in [0, 1], or a percentage in [0, 100]. */
static int parse_probability(const char *text, double *out)
{
    char *end = NULL;
    if (text[0] < '0' || text[0] > '9') /* no sign, no space, no "inf" or "nan" */
        return -1;
    double v = strtod(text, &end);
    if (end == text)
        return -1;
    if (*end == '%') {
        v /= 100;
        end++;
    }
    if (*end != '\0' || !(v >= 0 && v <= 1))
        return -1;
    *out = v;
    return 0;
}

int mock_fault_parse(const char *spec, struct mock_fault_config *cfg, char *err, size_t err_len)
{
    char *copy = strdup(spec);
    if (copy == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    int rc = 0;
    char *save = NULL;
    char *item = strtok_r(copy, ",", &save);
    if (item == NULL) {
        snprintf(err, err_len, "invalid value '%s' for --fault: expected NAME=P", spec);
        rc = -1;
    }
    for (; item != NULL && rc == 0; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        enum mock_fault f = eq ? fault_by_name(item, (size_t)(eq - item)) : MOCK_FAULT_NONE;
        double p;
        if (f == MOCK_FAULT_NONE) {
            snprintf(err, err_len,
                     "invalid value '%s' for --fault: '%.*s' is not a fault (see --help)", spec,
                     eq ? (int)(eq - item) : (int)strlen(item), item);
            rc = -1;
        } else if (parse_probability(eq + 1, &p) != 0) {
            snprintf(err, err_len,
                     "invalid value '%s' for --fault: '%s' is not a probability from 0 to 1 "
                     "(or 0%% to 100%%)",
                     spec, eq + 1);
            rc = -1;
        } else {
            cfg->prob[f] = p;
        }
    }
    free(copy);
    return rc;
}

int mock_fault_check(const struct mock_fault_config *cfg, char *err, size_t err_len)
{
    double conn = 0, req = 0;
    for (int f = MOCK_FAULT_NONE + 1; f < MOCK_FAULT__COUNT; f++)
        *(f < MOCK_FAULT_FIRST_REQUEST ? &conn : &req) += cfg->prob[f];
    /* A little slack for sums of decimal fractions such as 0.7 + 0.2 + 0.1. */
    if (conn > 1 + 1e-9 || req > 1 + 1e-9) {
        snprintf(err, err_len,
                 "invalid --fault: the chances of the %s faults add up to %g, more than 1",
                 conn > 1 + 1e-9 ? "connection (refuse, reset)" : "request", conn > 1 ? conn : req);
        return -1;
    }
    return 0;
}

bool mock_fault_any(const struct mock_fault_config *cfg)
{
    for (int f = MOCK_FAULT_NONE + 1; f < MOCK_FAULT__COUNT; f++)
        if (cfg->prob[f] > 0)
            return true;
    return false;
}

/* splitmix64: tiny, fast, and every seed (0 included) gives a good sequence. */
static uint64_t next_u64(struct mock_fault_state *st)
{
    uint64_t z = (st->rng += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Uniform in [0, 1), 53 bits. */
static double next_unit(struct mock_fault_state *st)
{
    return (double)(next_u64(st) >> 11) * (1.0 / 9007199254740992.0);
}

void mock_fault_init(struct mock_fault_state *st, const struct mock_fault_config *cfg,
                     uint64_t worker)
{
    memset(st, 0, sizeof *st);
    st->cfg = *cfg;
    st->rng = cfg->seed;
    /* Each worker its own sequence: advance the seed by a different odd multiple. */
    st->rng ^= worker * UINT64_C(0xD1B54A32D192ED03);
}

/* One draw over the faults [first, last): the first whose cumulative chance exceeds it. */
static enum mock_fault draw(struct mock_fault_state *st, int first, int last)
{
    double u = next_unit(st), sum = 0;
    for (int f = first; f < last; f++) {
        sum += st->cfg.prob[f];
        if (st->cfg.prob[f] > 0 && u < sum)
            return (enum mock_fault)f;
    }
    return MOCK_FAULT_NONE;
}

enum mock_fault mock_fault_pick_connection(struct mock_fault_state *st)
{
    if (st->connections++ < st->cfg.skip)
        return MOCK_FAULT_NONE;
    enum mock_fault f = draw(st, MOCK_FAULT_NONE + 1, MOCK_FAULT_FIRST_REQUEST);
    st->injected[f]++;
    return f;
}

enum mock_fault mock_fault_pick_request(struct mock_fault_state *st, bool stream)
{
    if (st->requests++ < st->cfg.skip)
        return MOCK_FAULT_NONE;
    enum mock_fault f = draw(st, MOCK_FAULT_FIRST_REQUEST, MOCK_FAULT__COUNT);
    if (!stream && mock_fault_stream_only(f))
        f = MOCK_FAULT_NONE;
    st->injected[f]++;
    return f;
}

int64_t mock_fault_trigger_token(int64_t max_tokens)
{
    int64_t t = (max_tokens + 1) / 2;
    return t >= 1 ? t : 1;
}
