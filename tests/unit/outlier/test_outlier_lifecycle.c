/* A50 ejection time, un-ejection, multiplier decay, disabling, endpoint updates, timer rules. */
#include <errno.h>

#include "outlier_test.h"

/* Endpoint 0 of five fails every interval; the others succeed. */
static void bad_interval(struct fixture *f)
{
    xlb_outlier_add_calls(f->od, 0, 0, 100);
    for (uint32_t i = 1; i < 5; i++)
        xlb_outlier_add_calls(f->od, i, 100, 0);
}

/*
 * base 10 s, max 25 s, interval 10 s. Ejection n lasts min(10 s * n, 25 s); the endpoint comes
 * back at the first sweep strictly after that, and is ejected again at once by its failures.
 */
void test_ejection_time_multiplier_and_cap(void **state)
{
    struct fixture f;
    struct xlb_outlier_detection c = fp_config();
    c.base_ejection_time = ms(10000);
    c.max_ejection_time = ms(25000);
    setup(&f, 5, &c, 1);
    struct xlb_outlier_endpoint_info info;

    bad_interval(&f);
    sweep(&f, 10000);
    xlb_outlier_endpoint_info(f.od, 0, &info);
    assert_int_equal(info.multiplier, 1);
    assert_int_equal(info.ejected_until_ms, 20000);

    sweep(&f, 20000); /* 20 s is not after 20 s */
    assert_true(ejected(&f, 0));
    sweep(&f, 30000);
    assert_false(ejected(&f, 0));
    assert_int_equal(xlb_outlier_changes(f.od)->n_unejected, 1);
    assert_int_equal(multiplier(&f, 0), 1); /* un-ejected this sweep: no decay yet */

    bad_interval(&f);
    sweep(&f, 40000);
    xlb_outlier_endpoint_info(f.od, 0, &info);
    assert_int_equal(info.multiplier, 2);
    assert_int_equal(info.ejected_until_ms, 40000 + 20000);

    sweep(&f, 50000);
    sweep(&f, 60000);
    assert_true(ejected(&f, 0));
    sweep(&f, 70000);
    assert_false(ejected(&f, 0));

    bad_interval(&f);
    sweep(&f, 80000);
    xlb_outlier_endpoint_info(f.od, 0, &info);
    assert_int_equal(info.multiplier, 3);
    assert_int_equal(info.ejected_until_ms, 80000 + 25000); /* 30 s capped at 25 s */
    sweep(&f, 90000);
    sweep(&f, 100000);
    assert_true(ejected(&f, 0));
    sweep(&f, 110000);
    assert_false(ejected(&f, 0));
    xlb_outlier_free(f.od);
}

/* max_ejection_time below base: the cap is max(base, max) = base. */
void test_ejection_cap_never_below_base(void **state)
{
    struct fixture f;
    struct xlb_outlier_detection c = fp_config();
    c.base_ejection_time = ms(30000);
    c.max_ejection_time = ms(5000);
    setup(&f, 5, &c, 1);
    bad_interval(&f);
    sweep(&f, 10000);
    struct xlb_outlier_endpoint_info info;
    xlb_outlier_endpoint_info(f.od, 0, &info);
    assert_int_equal(info.ejected_until_ms, 40000);
    xlb_outlier_free(f.od);
}

/* Un-ejection needs no traffic: quiet sweeps return the endpoint once its time has passed. */
void test_uneject_after_time(void **state)
{
    struct fixture f;
    struct xlb_outlier_detection c = fp_config();
    setup(&f, 5, &c, 1);
    bad_interval(&f);
    sweep(&f, 10000);
    assert_true(ejected(&f, 0));
    for (uint64_t t = 20000; t <= 40000; t += 10000) {
        sweep(&f, t);
        assert_true(ejected(&f, 0));
        assert_int_equal(xlb_outlier_changes(f.od)->n_unejected, 0);
    }
    sweep(&f, 50000); /* 50 s is after 10 s + 30 s */
    assert_false(ejected(&f, 0));
    const struct xlb_outlier_changes *ch = xlb_outlier_changes(f.od);
    assert_int_equal(ch->n_unejected, 1);
    assert_int_equal(ch->unejected[0], 0);
    assert_int_equal(xlb_outlier_n_ejected(f.od), 0);
    xlb_outlier_free(f.od);
}

/* The multiplier falls by one per sweep while not ejected, and stops at 0. */
void test_multiplier_decay(void **state)
{
    struct fixture f;
    struct xlb_outlier_detection c = fp_config();
    c.base_ejection_time = ms(5000);
    setup(&f, 5, &c, 1);
    bad_interval(&f);
    sweep(&f, 10000);
    sweep(&f, 20000); /* ejected 10 s + 5 s: back */
    assert_false(ejected(&f, 0));
    bad_interval(&f);
    sweep(&f, 30000);
    assert_int_equal(multiplier(&f, 0), 2);
    sweep(&f, 40000); /* 10 s ejection over only after 40 s */
    assert_true(ejected(&f, 0));
    sweep(&f, 50000);
    assert_false(ejected(&f, 0));
    assert_int_equal(multiplier(&f, 0), 2);
    sweep(&f, 60000);
    assert_int_equal(multiplier(&f, 0), 1);
    sweep(&f, 70000);
    assert_int_equal(multiplier(&f, 0), 0);
    sweep(&f, 80000);
    assert_int_equal(multiplier(&f, 0), 0);
    xlb_outlier_free(f.od);
}

/* Both algorithms off: no timer, no counting, every endpoint back in service. */
void test_both_disabled_unejects_all(void **state)
{
    struct fixture f;
    struct xlb_outlier_detection c = fp_config();
    c.max_ejection_percent = 100;
    setup(&f, 5, &c, 1);
    xlb_outlier_add_calls(f.od, 1, 0, 100);
    xlb_outlier_add_calls(f.od, 3, 0, 100);
    feed_all(&f, 0, 0);
    for (uint32_t i = 0; i < 5; i++)
        if (i != 1 && i != 3)
            xlb_outlier_add_calls(f.od, i, 100, 0);
    sweep(&f, INTERVAL_MS);
    assert_int_equal(xlb_outlier_n_ejected(f.od), 2);

    struct xlb_outlier_detection off = defaults();
    xlb_outlier_set_config(f.od, &off, 12000);
    const struct xlb_outlier_changes *ch = xlb_outlier_changes(f.od);
    assert_int_equal(ch->n_unejected, 2);
    assert_int_equal(ch->unejected[0], 1);
    assert_int_equal(ch->unejected[1], 3);
    assert_int_equal(xlb_outlier_n_ejected(f.od), 0);
    assert_int_equal(xlb_outlier_next_sweep_ms(f.od), XLB_OUTLIER_NO_SWEEP);
    assert_false(xlb_outlier_poll(f.od, 1000000));
    xlb_outlier_add_calls(f.od, 0, 0, 100); /* not counted */

    /* A cluster without outlier_detection at all behaves the same. */
    struct xlb_outlier_detection absent = fp_config();
    absent.enabled = false;
    xlb_outlier_set_config(f.od, &absent, 13000);
    assert_int_equal(xlb_outlier_next_sweep_ms(f.od), XLB_OUTLIER_NO_SWEEP);

    /* Re-enabled: the timer starts afresh at now and nothing counted while off survives. */
    xlb_outlier_set_config(f.od, &c, 20000);
    assert_int_equal(xlb_outlier_next_sweep_ms(f.od), 30000);
    sweep(&f, 30000);
    struct xlb_outlier_endpoint_info info;
    xlb_outlier_endpoint_info(f.od, 0, &info);
    assert_int_equal(info.last_failures, 0);
    assert_int_equal(xlb_outlier_n_ejected(f.od), 0);
    xlb_outlier_free(f.od);
}

/* Endpoints that stay keep their state under their new index; new ones start fresh. */
void test_endpoints_added_and_removed(void **state)
{
    struct fixture f;
    struct xlb_outlier_detection c = fp_config();
    setup(&f, 5, &c, 1);
    xlb_outlier_add_calls(f.od, 3, 0, 100);
    xlb_outlier_add_calls(f.od, 4, 0, 10); /* counted but not yet consumed when the set changes */
    sweep(&f, INTERVAL_MS);
    assert_true(ejected(&f, 3));
    xlb_outlier_add_calls(f.od, 4, 0, 45);

    /* Drop 0 and 1, keep 3 (ejected) and 4, add 7 and 8 across another priority. */
    struct xlb_outlier_key keys[] = {key(7), key(4), key(3), key(2), key(8)};
    assert_int_equal(xlb_outlier_set_endpoints(f.od, keys, 5), 0);
    assert_int_equal(xlb_outlier_size(f.od), 5);
    assert_int_equal(xlb_outlier_n_ejected(f.od), 1);
    assert_true(ejected(&f, 2));
    assert_int_equal(multiplier(&f, 2), 1);
    assert_false(ejected(&f, 0));
    assert_int_equal(multiplier(&f, 0), 0);
    assert_int_equal(xlb_outlier_changes(f.od)->n_ejected, 0);

    /* Endpoint 4's 45 failures carried over; 5 more reach request_volume 50. */
    xlb_outlier_add_calls(f.od, 1, 0, 5);
    sweep(&f, 2 * INTERVAL_MS);
    struct xlb_outlier_endpoint_info info;
    xlb_outlier_endpoint_info(f.od, 1, &info);
    assert_int_equal(info.last_failures, 50);
    /* 1 of 5 already ejected is 20 % > 10 %: the cap holds it back. */
    assert_false(info.ejected);

    /* Duplicate keys are refused and leave the set unchanged. */
    struct xlb_outlier_key dup[] = {key(1), key(2), key(1)};
    assert_int_equal(xlb_outlier_set_endpoints(f.od, dup, 3), -EINVAL);
    assert_int_equal(xlb_outlier_size(f.od), 5);
    assert_true(ejected(&f, 2));

    /* Out-of-range indices are ignored or refused. */
    xlb_outlier_add_calls(f.od, 99, 1, 1);
    assert_int_equal(xlb_outlier_endpoint_info(f.od, 5, &info), -EINVAL);

    /* An empty set is allowed and sweeps harmlessly. */
    assert_int_equal(xlb_outlier_set_endpoints(f.od, NULL, 0), 0);
    sweep(&f, 3 * INTERVAL_MS);
    assert_int_equal(xlb_outlier_n_ejected(f.od), 0);
    xlb_outlier_free(f.od);
}

/* A50 config update rules for the timer. */
void test_config_change_timer(void **state)
{
    struct fixture f;
    struct xlb_outlier_detection c = fp_config();
    xlb_rng_seed(&f.rng, 1);
    f.od = xlb_outlier_create(&f.rng);
    assert_int_equal(xlb_outlier_next_sweep_ms(f.od), XLB_OUTLIER_NO_SWEEP);
    struct xlb_outlier_key keys[5];
    for (uint32_t i = 0; i < 5; i++)
        keys[i] = key(i);
    assert_int_equal(xlb_outlier_set_endpoints(f.od, keys, 5), 0);

    /* First config at 1 s: timer start 1 s, first sweep at 11 s. */
    xlb_outlier_set_config(f.od, &c, 1000);
    assert_int_equal(xlb_outlier_next_sweep_ms(f.od), 11000);

    /* New config at 4 s with interval 20 s: start stays 1 s, so 21 s. */
    c.interval = ms(20000);
    xlb_outlier_add_calls(f.od, 0, 0, 60);
    xlb_outlier_set_config(f.od, &c, 4000);
    assert_int_equal(xlb_outlier_next_sweep_ms(f.od), 21000);
    assert_false(xlb_outlier_poll(f.od, 11000));

    /* At 15 s, interval 5 s: 1 s + 5 s is past, so the sweep is due now. Counts survive an
     * update of a running timer. */
    c.interval = ms(5000);
    xlb_outlier_set_config(f.od, &c, 15000);
    assert_int_equal(xlb_outlier_next_sweep_ms(f.od), 15000);
    sweep(&f, 15000);
    assert_true(ejected(&f, 0));

    /* The sweep restarts the timer at its own time. */
    assert_int_equal(xlb_outlier_next_sweep_ms(f.od), 20000);

    /* An unchanged config keeps the schedule. */
    xlb_outlier_set_config(f.od, &c, 17000);
    assert_int_equal(xlb_outlier_next_sweep_ms(f.od), 20000);

    /* A late poll runs one sweep and schedules from its own time. */
    sweep(&f, 26000);
    assert_int_equal(xlb_outlier_next_sweep_ms(f.od), 31000);
    assert_false(xlb_outlier_poll(f.od, 30999));
    xlb_outlier_free(f.od);
}

/* The first config after a stopped timer resets counters counted before it. */
void test_first_config_resets_counters(void **state)
{
    struct fixture f;
    struct xlb_outlier_detection c = fp_config();
    setup(&f, 5, &c, 1);
    xlb_outlier_add_calls(f.od, 0, 0, 100);
    struct xlb_outlier_detection off = defaults();
    xlb_outlier_set_config(f.od, &off, 5000);
    xlb_outlier_set_config(f.od, &c, 6000);
    sweep(&f, 16000);
    assert_false(ejected(&f, 0));
    xlb_outlier_free(f.od);
}

/* Both algorithms in one sweep: success rate ejects, failure percentage skips it, so the
 * multiplier rises once. */
void test_both_algorithms_one_ejection(void **state)
{
    struct fixture f;
    struct xlb_outlier_detection c = sr_config();
    c.failure_percentage_enabled = true;
    c.max_ejection_percent = 100;
    setup(&f, 5, &c, 1);
    bad_interval(&f);
    sweep(&f, INTERVAL_MS);
    assert_true(ejected(&f, 0));
    assert_int_equal(multiplier(&f, 0), 1);
    assert_int_equal(xlb_outlier_changes(f.od)->n_ejected, 1);
    xlb_outlier_free(f.od);
}
