/* units.c: parse and format the durations and counts users type on the command line.
 * It knows nothing of options, files or clocks. */
#include "tokstorm/units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct unit {
    const char *suffix;
    double factor;
};

/* Longest suffixes first so that "ms" is not read as "m" followed by junk. */
static const struct unit duration_units[] = {
    {"ns", 1.0}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9},
};

static int parse_number_prefix(const char *text, double *value, const char **rest)
{
    if (text == NULL || *text == '\0' || isspace((unsigned char)*text) || *text == '-' ||
        *text == '+')
        return -1;
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno != 0 || !isfinite(v) || v < 0)
        return -1;
    /* strtod accepts hex floats, "inf" and "nan": only plain decimals are valid here. */
    for (const char *c = text; c < end; c++)
        if (!isdigit((unsigned char)*c) && *c != '.')
            return -1;
    *value = v;
    *rest = end;
    return 0;
}

int units_parse_duration_ns(const char *text, int64_t default_unit_ns, int64_t *out_ns)
{
    double v;
    const char *rest;
    if (parse_number_prefix(text, &v, &rest) != 0)
        return -1;
    double factor = (double)default_unit_ns;
    if (*rest != '\0') {
        factor = -1;
        for (size_t i = 0; i < sizeof duration_units / sizeof duration_units[0]; i++)
            if (strcmp(rest, duration_units[i].suffix) == 0)
                factor = duration_units[i].factor;
        if (factor < 0)
            return -1;
    }
    double ns = v * factor;
    if (ns > 9.0e18)
        return -1;
    *out_ns = (int64_t)llround(ns);
    return 0;
}

int units_parse_count(const char *text, int64_t *out)
{
    double v;
    const char *rest;
    if (parse_number_prefix(text, &v, &rest) != 0)
        return -1;
    double factor = 1;
    if (strcmp(rest, "k") == 0 || strcmp(rest, "K") == 0)
        factor = 1e3;
    else if (strcmp(rest, "M") == 0)
        factor = 1e6;
    else if (*rest != '\0')
        return -1;
    double n = v * factor;
    if (n != floor(n) || n > 9.0e18)
        return -1;
    *out = (int64_t)n;
    return 0;
}

int units_parse_count_list(const char *text, int64_t **out, size_t *n)
{
    if (text == NULL || *text == '\0')
        return -1;
    size_t cap = 1;
    for (const char *c = text; *c; c++)
        cap += (*c == ',');
    int64_t *vals = malloc(cap * sizeof *vals);
    char *copy = strdup(text);
    if (vals == NULL || copy == NULL)
        goto fail;
    size_t count = 0;
    /* strtok_r would skip empty fields ("1,,4"); walk commas by hand to reject them. */
    char *field = copy;
    for (;;) {
        char *comma = strchr(field, ',');
        if (comma)
            *comma = '\0';
        if (units_parse_count(field, &vals[count]) != 0 || vals[count] <= 0)
            goto fail;
        count++;
        if (!comma)
            break;
        field = comma + 1;
    }
    free(copy);
    *out = vals;
    *n = count;
    return 0;
fail:
    free(vals);
    free(copy);
    return -1;
}

int units_parse_rate_list(const char *text, double **out, size_t *n)
{
    if (text == NULL || *text == '\0')
        return -1;
    size_t cap = 1;
    for (const char *c = text; *c; c++)
        cap += (*c == ',');
    double *vals = malloc(cap * sizeof *vals);
    if (vals == NULL)
        return -1;
    size_t count = 0;
    const char *field = text;
    for (;;) {
        const char *rest;
        if (parse_number_prefix(field, &vals[count], &rest) != 0 || vals[count] <= 0 ||
            (*rest != ',' && *rest != '\0')) {
            free(vals);
            return -1;
        }
        count++;
        if (*rest == '\0')
            break;
        field = rest + 1;
    }
    *out = vals;
    *n = count;
    return 0;
}

char *units_format_duration(int64_t ns, char *buf, size_t len)
{
    double a = (double)(ns < 0 ? -ns : ns);
    if (a >= 1e9)
        snprintf(buf, len, "%.2f s", (double)ns / 1e9);
    else if (a >= 1e6)
        snprintf(buf, len, "%.2f ms", (double)ns / 1e6);
    else if (a >= 1e3)
        snprintf(buf, len, "%.2f us", (double)ns / 1e3);
    else
        snprintf(buf, len, "%lld ns", (long long)ns);
    return buf;
}
