/*
 * gRFC A50 outlier detection: the success-rate and failure-percentage algorithms, enforcement
 * and max_ejection_percent here; lifecycle rules in test_outlier_lifecycle.c. The clock is
 * virtual and the RNG seeded, so every test replays exactly. A50 gives no worked numeric
 * examples; the figures are chosen to hit each boundary on both sides.
 */
#include "outlier_test.h"

/* Four endpoints at 100 %, one at 0 %: mean 0.8, stdev 0.4, threshold 0.8 - 0.76 = 0.04. */
static void test_success_rate_ejects_clear_outlier(void **state)
{
    struct fixture f;
    struct xlb_outlier_detection c = sr_config();
    setup(&f, 5, &c, 1);
    for (uint32_t i = 0; i < 4; i++)
        xlb_outlier_add_calls(f.od, i, 100, 0);
    xlb_outlier_add_calls(f.od, 4, 0, 100);
    assert_false(xlb_outlier_poll(f.od, INTERVAL_MS - 1));
    sweep(&f, INTERVAL_MS);

    const struct xlb_outlier_changes *ch = xlb_outlier_changes(f.od);
    assert_int_equal(ch->n_ejected, 1);
    assert_int_equal(ch->ejected[0], 4);
    assert_int_equal(ch->n_unejected, 0);
    assert_int_equal(xlb_outlier_n_ejected(f.od), 1);
    for (uint32_t i = 0; i < 4; i++)
        assert_false(ejected(&f, i));
    struct xlb_outlier_endpoint_info info;
    xlb_outlier_endpoint_info(f.od, 4, &info);
    assert_true(info.ejected);
    assert_int_equal(info.multiplier, 1);
    assert_int_equal(info.ejected_at_ms, INTERVAL_MS);
    assert_int_equal(info.ejected_until_ms, INTERVAL_MS + 30000);
    assert_int_equal(info.last_failures, 100);
    assert_int_equal(xlb_outlier_next_sweep_ms(f.od), 2 * INTERVAL_MS);
    xlb_outlier_free(f.od);
}

/* Step 1: only four endpoints reach request_volume, fewer than minimum_hosts 5. */
static void test_success_rate_minimum_hosts(void **state)
{
    struct fixture f;
    struct xlb_outlier_detection c = sr_config();
    setup(&f, 5, &c, 1);
    for (uint32_t i = 0; i < 3; i++)
        xlb_outlier_add_calls(f.od, i, 100, 0);
    xlb_outlier_add_calls(f.od, 3, 0, 100);
    xlb_outlier_add_calls(f.od, 4, 99, 0);
    sweep(&f, INTERVAL_MS);
    assert_int_equal(xlb_outlier_n_ejected(f.od), 0);

    /* The same interval with minimum_hosts 4 runs the algorithm: 3 x 1.0 and 0.0 give mean
     * 0.75, stdev 0.433, threshold 0.75 - 0.823 < 0, so lower the factor to 1000 as well. */
    c.success_rate.minimum_hosts = 4;
    c.success_rate.stdev_factor = 1000;
    xlb_outlier_set_config(f.od, &c, INTERVAL_MS);
    for (uint32_t i = 0; i < 3; i++)
        xlb_outlier_add_calls(f.od, i, 100, 0);
    xlb_outlier_add_calls(f.od, 3, 0, 100);
    xlb_outlier_add_calls(f.od, 4, 99, 0);
    sweep(&f, 2 * INTERVAL_MS);
    assert_int_equal(xlb_outlier_n_ejected(f.od), 1);
    assert_true(ejected(&f, 3));
    xlb_outlier_free(f.od);
}

/* An endpoint below request_volume is neither counted nor a candidate, however bad it is. */
static void test_success_rate_request_volume_filter(void **state)
{
    struct fixture f;
    struct xlb_outlier_detection c = sr_config();
    c.success_rate.minimum_hosts = 5;
    setup(&f, 6, &c, 1);
    for (uint32_t i = 0; i < 5; i++)
        xlb_outlier_add_calls(f.od, i, 100, 0);
    xlb_outlier_add_calls(f.od, 5, 0, 99);
    sweep(&f, INTERVAL_MS);
    assert_int_equal(xlb_outlier_n_ejected(f.od), 0);

    /* One more failed call and it qualifies: 5 x 1.0 and 0.0, stdev 0.373, threshold 0.124. */
    for (uint32_t i = 0; i < 5; i++)
        xlb_outlier_add_calls(f.od, i, 100, 0);
    xlb_outlier_add_calls(f.od, 5, 0, 100);
    sweep(&f, 2 * INTERVAL_MS);
    assert_true(ejected(&f, 5));
    xlb_outlier_free(f.od);
}

/* 4 x 1.0 and 0.5: mean 0.9, stdev 0.2. Factor 1.9 gives 0.52 (ejects), 2.1 gives 0.48 (not). */
static void run_stdev(uint32_t factor, bool expect)
{
    struct fixture f;
    struct xlb_outlier_detection c = sr_config();
    c.success_rate.stdev_factor = factor;
    setup(&f, 5, &c, 7);
    for (uint32_t i = 0; i < 4; i++)
        xlb_outlier_add_calls(f.od, i, 100, 0);
    xlb_outlier_add_calls(f.od, 4, 50, 50);
    sweep(&f, INTERVAL_MS);
    assert_int_equal(ejected(&f, 4), expect);
    assert_int_equal(xlb_outlier_n_ejected(f.od), expect ? 1 : 0);
    xlb_outlier_free(f.od);
}

static void test_success_rate_stdev_factor(void **state)
{
    run_stdev(1900, true);
    run_stdev(2100, false);
    /* Factor 0: the threshold is the mean itself; 0.5 < 0.9. */
    run_stdev(0, true);
}

/* A uniform population has stdev 0 and nobody strictly below the mean. */
static void test_success_rate_uniform_population(void **state)
{
    struct fixture f;
    struct xlb_outlier_detection c = sr_config();
    setup(&f, 5, &c, 1);
    feed_all(&f, 50, 50);
    sweep(&f, INTERVAL_MS);
    assert_int_equal(xlb_outlier_n_ejected(f.od), 0);
    xlb_outlier_free(f.od);
}

/* A50: failure percentage strictly greater than threshold. 85 of 100 stays, 86 goes. */
static void test_failure_percentage_threshold(void **state)
{
    struct fixture f;
    struct xlb_outlier_detection c = fp_config();
    c.max_ejection_percent = 100;
    setup(&f, 5, &c, 1);
    xlb_outlier_add_calls(f.od, 0, 15, 85);
    xlb_outlier_add_calls(f.od, 1, 14, 86);
    xlb_outlier_add_calls(f.od, 2, 0, 100);
    xlb_outlier_add_calls(f.od, 3, 100, 0);
    xlb_outlier_add_calls(f.od, 4, 100, 0);
    sweep(&f, INTERVAL_MS);
    assert_false(ejected(&f, 0));
    assert_true(ejected(&f, 1));
    assert_true(ejected(&f, 2));
    assert_int_equal(xlb_outlier_n_ejected(f.od), 2);
    xlb_outlier_free(f.od);
}

/* A50 step 1 counts all addresses: 4 never run, 5 run even when only one has traffic. */
static void test_failure_percentage_minimum_hosts(void **state)
{
    struct fixture f;
    struct xlb_outlier_detection c = fp_config();
    setup(&f, 4, &c, 1);
    feed_all(&f, 0, 100);
    sweep(&f, INTERVAL_MS);
    assert_int_equal(xlb_outlier_n_ejected(f.od), 0);
    xlb_outlier_free(f.od);

    setup(&f, 5, &c, 1);
    xlb_outlier_add_calls(f.od, 2, 0, 100);
    sweep(&f, INTERVAL_MS);
    assert_int_equal(xlb_outlier_n_ejected(f.od), 1);
    assert_true(ejected(&f, 2));
    xlb_outlier_free(f.od);
}

static void test_failure_percentage_request_volume(void **state)
{
    struct fixture f;
    struct xlb_outlier_detection c = fp_config();
    setup(&f, 5, &c, 1);
    xlb_outlier_add_calls(f.od, 0, 0, 49);
    sweep(&f, INTERVAL_MS);
    assert_int_equal(xlb_outlier_n_ejected(f.od), 0);
    xlb_outlier_add_calls(f.od, 0, 0, 50);
    sweep(&f, 2 * INTERVAL_MS);
    assert_true(ejected(&f, 0));
    xlb_outlier_free(f.od);
}

/* n endpoints all failing, max_ejection_percent 100: how many does one sweep eject? */
static uint32_t enforcement_run(uint32_t n, uint32_t percentage, uint64_t seed, bool success_rate)
{
    struct fixture f;
    struct xlb_outlier_detection c = success_rate ? sr_config() : fp_config();
    c.max_ejection_percent = 100;
    c.success_rate.enforcement_percentage = percentage;
    c.failure_percentage.enforcement_percentage = percentage;
    setup(&f, n, &c, seed);
    if (success_rate) {
        /* Half at 100 %, half at 0 %: mean 0.5, stdev 0.5, factor 0.9 gives threshold 0.05. */
        c.success_rate.stdev_factor = 900;
        xlb_outlier_set_config(f.od, &c, 0);
        for (uint32_t i = 0; i < n; i++)
            xlb_outlier_add_calls(f.od, i, i % 2 ? 0 : 100, i % 2 ? 100 : 0);
    } else {
        feed_all(&f, 0, 100);
    }
    sweep(&f, INTERVAL_MS);
    uint32_t out = xlb_outlier_n_ejected(f.od);
    xlb_outlier_free(f.od);
    return out;
}

static void test_enforcement_percentage(void **state)
{
    for (uint64_t seed = 1; seed <= 20; seed++) {
        assert_int_equal(enforcement_run(10, 0, seed, false), 0);
        assert_int_equal(enforcement_run(10, 100, seed, false), 10);
        assert_int_equal(enforcement_run(10, 0, seed, true), 0);
        assert_int_equal(enforcement_run(10, 100, seed, true), 5);
    }
    /* 1000 independent draws at 50 %: Binomial(1000, 0.5), mean 500, sigma 15.8; 5 sigma. */
    uint32_t k = enforcement_run(1000, 50, 42, false);
    assert_in_range(k, 421, 579);
    k = enforcement_run(1000, 50, 43, true);
    assert_in_range(k, 500 / 2 - 56, 500 / 2 + 56); /* Binomial(500, 0.5): sigma 11.2 */
}

/*
 * A50 stops before a candidate when ejected / n * 100 > max. With 20 endpoints and 10 %, the
 * third ejection is still allowed (10 % is not greater than 10 %), so three go (15 %); C-core,
 * which ejects only while below the maximum, would stop at two.
 */
static void test_max_ejection_percent(void **state)
{
    struct fixture f;
    struct xlb_outlier_detection c = fp_config();
    setup(&f, 20, &c, 1);
    feed_all(&f, 0, 100);
    sweep(&f, INTERVAL_MS);
    assert_int_equal(xlb_outlier_n_ejected(f.od), 3);
    assert_true(ejected(&f, 0) && ejected(&f, 1) && ejected(&f, 2));
    assert_false(ejected(&f, 3));

    /* Already-ejected endpoints count: 15 % > 10 %, nothing more this sweep. */
    feed_all(&f, 0, 100);
    sweep(&f, 2 * INTERVAL_MS);
    assert_int_equal(xlb_outlier_n_ejected(f.od), 3);
    assert_int_equal(xlb_outlier_changes(f.od)->n_ejected, 0);
    xlb_outlier_free(f.od);
}

/* "At least one address regardless of the value": max 0 still ejects exactly one. */
static void test_max_ejection_percent_at_least_one(void **state)
{
    struct fixture f;
    struct xlb_outlier_detection c = fp_config();
    c.max_ejection_percent = 0;
    setup(&f, 5, &c, 1);
    feed_all(&f, 0, 100);
    sweep(&f, INTERVAL_MS);
    assert_int_equal(xlb_outlier_n_ejected(f.od), 1);
    feed_all(&f, 0, 100);
    sweep(&f, 2 * INTERVAL_MS);
    assert_int_equal(xlb_outlier_n_ejected(f.od), 1);
    xlb_outlier_free(f.od);

    /* 5 endpoints at the default 10 %: one ejection already makes 20 %. */
    c.max_ejection_percent = 10;
    setup(&f, 5, &c, 1);
    feed_all(&f, 0, 100);
    sweep(&f, INTERVAL_MS);
    assert_int_equal(xlb_outlier_n_ejected(f.od), 1);
    xlb_outlier_free(f.od);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_success_rate_ejects_clear_outlier),
        cmocka_unit_test(test_success_rate_minimum_hosts),
        cmocka_unit_test(test_success_rate_request_volume_filter),
        cmocka_unit_test(test_success_rate_stdev_factor),
        cmocka_unit_test(test_success_rate_uniform_population),
        cmocka_unit_test(test_failure_percentage_threshold),
        cmocka_unit_test(test_failure_percentage_minimum_hosts),
        cmocka_unit_test(test_failure_percentage_request_volume),
        cmocka_unit_test(test_enforcement_percentage),
        cmocka_unit_test(test_max_ejection_percent),
        cmocka_unit_test(test_max_ejection_percent_at_least_one),
        cmocka_unit_test(test_ejection_time_multiplier_and_cap),
        cmocka_unit_test(test_ejection_cap_never_below_base),
        cmocka_unit_test(test_uneject_after_time),
        cmocka_unit_test(test_multiplier_decay),
        cmocka_unit_test(test_both_disabled_unejects_all),
        cmocka_unit_test(test_endpoints_added_and_removed),
        cmocka_unit_test(test_config_change_timer),
        cmocka_unit_test(test_first_config_resets_counters),
        cmocka_unit_test(test_both_algorithms_one_ejection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
