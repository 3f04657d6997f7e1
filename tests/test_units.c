/* test_units.c: durations, counts and lists as users type them, and what is refused. */
#include "tokstorm/units.h"

#include <stdlib.h>

#include "check.h"

static int64_t dur(const char *s, int64_t unit)
{
    int64_t v = -12345;
    return units_parse_duration_ns(s, unit, &v) == 0 ? v : -1;
}

int main(void)
{
    CHECK_EQ_INT(dur("1.5s", TS_NS_PER_S), 1500000000);
    CHECK_EQ_INT(dur("250ms", TS_NS_PER_S), 250000000);
    CHECK_EQ_INT(dur("30", TS_NS_PER_S), 30000000000LL);
    CHECK_EQ_INT(dur("50", TS_NS_PER_MS), 50000000);
    CHECK_EQ_INT(dur("2500us", TS_NS_PER_S), 2500000);
    CHECK_EQ_INT(dur("2m", TS_NS_PER_S), 120000000000LL);
    CHECK_EQ_INT(dur("1h", TS_NS_PER_S), 3600000000000LL);
    CHECK_EQ_INT(dur("7ns", TS_NS_PER_S), 7);
    CHECK_EQ_INT(dur("0", TS_NS_PER_S), 0);
    const char *bad[] = {"",     "-1",  "+1",  " 1",  "1x",  "s",           "1.2.3",
                         "0x10", "inf", "nan", "1 s", "1e3", "99999999999h"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int64_t v = 42;
        CHECK(units_parse_duration_ns(bad[i], TS_NS_PER_S, &v) == -1);
        CHECK_EQ_INT(v, 42);
    }

    int64_t n = 0;
    CHECK(units_parse_count("2k", &n) == 0 && n == 2000);
    CHECK(units_parse_count("3M", &n) == 0 && n == 3000000);
    CHECK(units_parse_count("1.5k", &n) == 0 && n == 1500);
    CHECK(units_parse_count("17", &n) == 0 && n == 17);
    CHECK(units_parse_count("1.5", &n) == -1);
    CHECK(units_parse_count("abc", &n) == -1);
    CHECK(units_parse_count("4kk", &n) == -1);

    int64_t *list = NULL;
    size_t len = 0;
    CHECK(units_parse_count_list("1,4,16,2k", &list, &len) == 0);
    CHECK_EQ_INT(len, 4);
    if (len == 4) {
        CHECK_EQ_INT(list[0], 1);
        CHECK_EQ_INT(list[3], 2000);
    }
    free(list);
    const char *bad_lists[] = {"", "1,,4", ",1", "1,", "0", "1,-2", "1;2", "a"};
    for (size_t i = 0; i < sizeof bad_lists / sizeof *bad_lists; i++)
        CHECK(units_parse_count_list(bad_lists[i], &list, &len) == -1);

    char buf[32];
    CHECK_EQ_STR(units_format_duration(1500000000, buf, sizeof buf), "1.50 s");
    CHECK_EQ_STR(units_format_duration(250000000, buf, sizeof buf), "250.00 ms");
    CHECK_EQ_STR(units_format_duration(12, buf, sizeof buf), "12 ns");
    return check_report("units");
}
