/* test_timeline.c: binning tokens and request ends, the window sum with partial edge bins,
 * and the 100 ms series, against counts worked out by hand. */
#include "tokstorm/timeline.h"

#include <math.h>
#include <stdlib.h>

#include "check.h"

int main(void)
{
    struct ts_timeline t;
    timeline_init(&t);
    /* 10 tokens in every 1 ms bin for 2.5 s (one event of 10 per bin, at its middle). */
    int all_ok = 1;
    for (int64_t ms = 0; ms < 2500; ms++)
        all_ok &= timeline_add_tokens(&t, ms * 1000000 + 500000, 10) == 0;
    CHECK(all_ok);
    CHECK_EQ_INT(t.n_fine, 2500);
    /* Whole window, an inner window on bin edges, one with half bins at both edges. */
    CHECK(fabs(timeline_tokens_between(&t, 0, 2500000000) - 25000) < 1e-9);
    CHECK(fabs(timeline_tokens_between(&t, 1000000000, 2000000000) - 10000) < 1e-9);
    CHECK(fabs(timeline_tokens_between(&t, 1500000, 3500000) - 20) < 1e-9);
    CHECK(fabs(timeline_tokens_between(&t, 5000000, 5000000)) < 1e-12);
    CHECK(fabs(timeline_tokens_between(&t, -100, 1000000) - 10) < 1e-9);
    CHECK(fabs(timeline_tokens_between(&t, 2400000000, 9000000000) - 1000) < 1e-9);

    /* Ends: 3 ok in the first 100 ms bin, 1 error at 250 ms, 1 ok at 1.05 s. */
    timeline_add_end(&t, 10, 1);
    timeline_add_end(&t, 50000000, 1);
    timeline_add_end(&t, 99999999, 1);
    timeline_add_end(&t, 250000000, 0);
    timeline_add_end(&t, 1050000000, 1);
    CHECK_EQ_INT(timeline_series_len(&t), 25); /* 2.5 s of tokens in 100 ms bins */
    size_t n = 30;
    uint64_t *tok = malloc(n * sizeof *tok), *ok = malloc(n * sizeof *ok),
             *err = malloc(n * sizeof *err);
    timeline_series(&t, n, tok, ok, err);
    CHECK_EQ_INT(tok[0], 1000);
    CHECK_EQ_INT(tok[24], 1000);
    CHECK_EQ_INT(tok[25], 0);
    CHECK_EQ_INT(ok[0], 3);
    CHECK_EQ_INT(err[2], 1);
    CHECK_EQ_INT(ok[10], 1);
    uint64_t sum_ok = 0, sum_err = 0;
    for (size_t i = 0; i < n; i++) {
        sum_ok += ok[i];
        sum_err += err[i];
    }
    CHECK(sum_ok == 4 && sum_err == 1);

    /* Reset keeps nothing; a late end grows the series past the tokens. */
    timeline_reset(&t);
    CHECK_EQ_INT(timeline_series_len(&t), 0);
    CHECK(fabs(timeline_tokens_between(&t, 0, 1000000000)) < 1e-12);
    timeline_add_end(&t, 3000000000, 0);
    CHECK_EQ_INT(timeline_series_len(&t), 31);
    timeline_series(&t, n, tok, ok, err); /* shorter than recorded: truncated, no overrun */
    CHECK_EQ_INT(err[29], 0);

    free(tok);
    free(ok);
    free(err);
    timeline_free(&t);
    return check_report("timeline");
}
