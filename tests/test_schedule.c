/* test_schedule.c: arrival processes against their textbook moments (mean gap 1/rate;
 * coefficient of variation 1 for Poisson, 1/sqrt(k) for gamma of shape k, 0 for constant),
 * and determinism from the seed. */
#include "tokstorm/schedule.h"

#include <math.h>

#include "check.h"

/* Mean and coefficient of variation of n gaps. */
static void moments(struct ts_schedule *s, int n, double *mean, double *cv)
{
    double sum = 0, sum2 = 0;
    for (int i = 0; i < n; i++) {
        double g = schedule_gap_s(s);
        sum += g;
        sum2 += g * g;
    }
    *mean = sum / n;
    *cv = sqrt(sum2 / n - *mean * *mean) / *mean;
}

int main(void)
{
    enum { N = 200000 };
    struct ts_schedule s;
    double mean, cv;

    schedule_init(&s, TS_ARRIVAL_POISSON, 50.0, 1.0, 42);
    moments(&s, N, &mean, &cv);
    CHECK(fabs(mean - 0.02) < 0.02 * 0.01); /* 1% of the mean: ~4.5 standard errors */
    CHECK(fabs(cv - 1.0) < 0.02);

    const double shapes[] = {0.25, 0.5, 2.0, 8.0};
    for (int i = 0; i < 4; i++) {
        schedule_init(&s, TS_ARRIVAL_GAMMA, 10.0, shapes[i], 7 + i);
        moments(&s, N, &mean, &cv);
        double se = 0.1 / sqrt(shapes[i] * N); /* standard error of the mean */
        if (fabs(mean - 0.1) > 5 * se || fabs(cv - 1.0 / sqrt(shapes[i])) > 0.03 / sqrt(shapes[i]))
            fprintf(stderr, "gamma k=%g: mean %g cv %g\n", shapes[i], mean, cv);
        CHECK(fabs(mean - 0.1) < 5 * se);
        CHECK(fabs(cv - 1.0 / sqrt(shapes[i])) < 0.03 / sqrt(shapes[i]));
    }

    schedule_init(&s, TS_ARRIVAL_CONSTANT, 4.0, 1.0, 1);
    CHECK_EQ_INT(schedule_take(&s), 0);
    CHECK_EQ_INT(schedule_take(&s), 250000000);
    CHECK_EQ_INT(schedule_take(&s), 500000000);

    /* The same seed gives the same times; another seed, others. */
    struct ts_schedule a, b, c;
    schedule_init(&a, TS_ARRIVAL_GAMMA, 100.0, 0.5, 99);
    schedule_init(&b, TS_ARRIVAL_GAMMA, 100.0, 0.5, 99);
    schedule_init(&c, TS_ARRIVAL_GAMMA, 100.0, 0.5, 100);
    int same = 1, differ = 0, ascending = 1;
    int64_t prev = -1;
    for (int i = 0; i < 1000; i++) {
        int64_t ta = schedule_take(&a), tb = schedule_take(&b), tc = schedule_take(&c);
        same &= ta == tb;
        differ |= ta != tc;
        ascending &= ta >= prev;
        prev = ta;
    }
    CHECK(same);
    CHECK(differ);
    CHECK(ascending);

    enum ts_arrival k;
    CHECK(schedule_arrival_from_name("gamma", &k) == 0 && k == TS_ARRIVAL_GAMMA);
    CHECK(schedule_arrival_from_name("uniform", &k) == -1);
    CHECK_EQ_STR(schedule_arrival_name(TS_ARRIVAL_CONSTANT), "constant");
    return check_report("schedule");
}
