/*
 * Weighted round robin (A58): endpoint weights from load reports (the formula, ignored
 * reports, blackout, expiration, READY again), the scheduler's shares (mean for endpoints
 * without a weight, round robin below two weights, the 1 % floor) and the stride scheduler's
 * exact proportions. Explicit clocks, no sleeping.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "xlb_wrr.h"

#define T0 1000000u

static struct xlb_wrr_config config(uint64_t blackout_ms)
{
    struct xlb_wrr_config cfg;
    xlb_wrr_config_default(&cfg);
    cfg.blackout_ms = blackout_ms;
    return cfg;
}

static struct xlb_wrr_report report(double utilization, double qps, double eps)
{
    return (struct xlb_wrr_report){.cpu_utilization = utilization, .qps = qps, .eps = eps};
}

/* qps / (utilization + eps / qps * penalty); application_utilization over cpu_utilization. */
static void test_weight_formula(void **state)
{
    (void)state;
    struct xlb_wrr_config cfg = config(0);
    struct xlb_endpoint_weight w = {0};
    struct xlb_wrr_report r = report(0.5, 100, 0);
    assert_true(xlb_wrr_weight_update(&w, 1.0f, &r, T0));
    assert_float_equal(xlb_wrr_weight_get(&w, &cfg, T0), 200, 1e-3);
    r = report(0.5, 100, 10); /* 0.5 + 10 / 100 * 2 = 0.7 */
    assert_true(xlb_wrr_weight_update(&w, 2.0f, &r, T0));
    assert_float_equal(xlb_wrr_weight_get(&w, &cfg, T0), 100 / 0.7, 1e-3);
    r = report(0.9, 100, 0);
    r.application_utilization = 0.25;
    assert_true(xlb_wrr_weight_update(&w, 1.0f, &r, T0));
    assert_float_equal(xlb_wrr_weight_get(&w, &cfg, T0), 400, 1e-3);
}

/* Reports without utilization or qps (or with nonsense) leave the weight as it was. */
static void test_unusable_reports_ignored(void **state)
{
    (void)state;
    struct xlb_wrr_config cfg = config(0);
    struct xlb_endpoint_weight w = {0};
    struct xlb_wrr_report good = report(0.5, 50, 0);
    assert_true(xlb_wrr_weight_update(&w, 1.0f, &good, T0));
    const struct xlb_wrr_report bad[] = {report(0, 50, 0), report(0.5, 0, 0), report(-1, 50, 0),
                                         report(NAN, 50, 0), report(0.5, NAN, 0)};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_false(xlb_wrr_weight_update(&w, 1.0f, &bad[i], T0 + 10));
    assert_float_equal(xlb_wrr_weight_get(&w, &cfg, T0 + 10), 100, 1e-3);
    assert_int_equal(w.last_update_ms, T0);
}

/* Blackout from the first report; expiry forgets the weight and starts the blackout again;
 * a subchannel READY again also starts it again. */
static void test_blackout_and_expiration(void **state)
{
    (void)state;
    struct xlb_wrr_config cfg = config(10000);
    struct xlb_endpoint_weight w = {0};
    struct xlb_wrr_report r = report(0.5, 100, 0);
    assert_float_equal(xlb_wrr_weight_get(&w, &cfg, T0), 0, 0);
    xlb_wrr_weight_update(&w, 1.0f, &r, T0);
    xlb_wrr_weight_update(&w, 1.0f, &r, T0 + 9999);
    assert_float_equal(xlb_wrr_weight_get(&w, &cfg, T0 + 9999), 0, 0);
    assert_float_equal(xlb_wrr_weight_get(&w, &cfg, T0 + 10000), 200, 1e-3);
    /* Three minutes without a report: expired, and the blackout starts with the next one. */
    uint64_t late = T0 + 9999 + XLB_WRR_EXPIRATION_MS;
    assert_float_equal(xlb_wrr_weight_peek(&w, &cfg, late - 1), 200, 1e-3);
    assert_float_equal(xlb_wrr_weight_get(&w, &cfg, late), 0, 0);
    xlb_wrr_weight_update(&w, 1.0f, &r, late + 1);
    assert_float_equal(xlb_wrr_weight_get(&w, &cfg, late + 5000), 0, 0);
    assert_float_equal(xlb_wrr_weight_get(&w, &cfg, late + 10001), 200, 1e-3);
    xlb_wrr_weight_ready(&w);
    xlb_wrr_weight_update(&w, 1.0f, &r, late + 10002);
    assert_float_equal(xlb_wrr_weight_get(&w, &cfg, late + 10003), 0, 0);
    assert_float_equal(xlb_wrr_weight_get(&w, &cfg, late + 20002), 200, 1e-3);
}

static uint32_t share_of(const float *weights, uint32_t n, uint32_t i)
{
    struct xlb_wrr_round round = {0};
    for (uint32_t k = 0; k < n; k++)
        xlb_wrr_round_add(&round, weights[k]);
    return xlb_wrr_share(&round, weights[i]);
}

static void test_shares(void **state)
{
    (void)state;
    /* One weight only: round robin over the candidates; non-candidates get nothing. */
    const float one[] = {5, 0, -1};
    assert_int_equal(share_of(one, 3, 0), XLB_WRR_SCALE);
    assert_int_equal(share_of(one, 3, 1), XLB_WRR_SCALE);
    assert_int_equal(share_of(one, 3, 2), 0);
    /* Two weights: the largest gets the whole scale, no weight gets the mean. */
    const float two[] = {400, 100, 0};
    assert_int_equal(share_of(two, 3, 0), XLB_WRR_SCALE);
    assert_int_equal(share_of(two, 3, 1), (XLB_WRR_SCALE + 2) / 4);
    assert_int_equal(share_of(two, 3, 2), (uint32_t)(XLB_WRR_SCALE * 250.0 / 400 + 0.5));
    /* Below 1 % of the largest: raised to 1 %. */
    const float tiny[] = {10000, 1};
    assert_int_equal(share_of(tiny, 2, 1), (uint32_t)(XLB_WRR_SCALE / 100.0));
}

/* Over many rounds the stride scheduler takes each entry in proportion to its share, within
 * one round's worth, and never one with no share. */
static void test_stride_proportions(void **state)
{
    (void)state;
    const uint32_t scaled[4] = {XLB_WRR_SCALE, XLB_WRR_SCALE / 2, XLB_WRR_SCALE / 4, 0};
    uint32_t taken[4] = {0};
    const uint32_t n = 4, rounds = XLB_WRR_SCALE * 2;
    for (uint32_t seq = 0; seq < n * rounds; seq++)
        taken[seq % n] += xlb_wrr_takes(scaled[seq % n], seq % n, n, seq);
    assert_int_equal(taken[0], rounds);
    assert_true(taken[1] >= rounds / 2 - 1 && taken[1] <= rounds / 2 + 1);
    assert_true(taken[2] >= rounds / 4 - 1 && taken[2] <= rounds / 4 + 1);
    assert_int_equal(taken[3], 0);
    /* In any 100 consecutive rounds an entry at the 1 % floor is taken at least once. */
    uint32_t floor = XLB_WRR_SCALE / 100, since = 0, longest = 0;
    for (uint32_t round = 0; round < 20000; round++) {
        since = xlb_wrr_takes(floor, 1, 2, round * 2 + 1) ? 0 : since + 1;
        longest = since > longest ? since : longest;
    }
    assert_true(longest < XLB_WRR_MAX_ROUNDS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weight_formula),
        cmocka_unit_test(test_unusable_reports_ignored),
        cmocka_unit_test(test_blackout_and_expiration),
        cmocka_unit_test(test_shares),
        cmocka_unit_test(test_stride_proportions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
