/* RFC 6298's estimator, step by step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "xlb_tcp_rtt.h"

static struct xlb_tcp_rtt fresh(void)
{
    struct xlb_tcp_rtt r;
    xlb_tcp_rtt_init(&r, 200000, 60000000);
    return r;
}

static void before_any_sample_the_rto_is_one_second(void **state)
{
    (void)state;
    struct xlb_tcp_rtt r = fresh();
    assert_int_equal(xlb_tcp_rtt_timeout_us(&r), 1000000); /* 2.1 */
    assert_int_equal(r.srtt_us, 0);
}

static void samples_follow_the_rfc_formulas(void **state)
{
    (void)state;
    struct xlb_tcp_rtt r = fresh();
    /* 2.2: R = 100 ms: SRTT 100 ms, RTTVAR 50 ms, RTO = 100 + max(1, 4 x 50) = 300 ms. */
    xlb_tcp_rtt_sample(&r, 100000);
    assert_int_equal(r.srtt_us, 100000);
    assert_int_equal(r.rttvar_us, 50000);
    assert_int_equal(xlb_tcp_rtt_timeout_us(&r), 300000);
    /* 2.3: R' = 200 ms: RTTVAR = 3/4 x 50 + 1/4 x |100 - 200| = 62.5 ms,
     * SRTT = 7/8 x 100 + 1/8 x 200 = 112.5 ms, RTO = 112.5 + 4 x 62.5 = 362.5 ms. */
    xlb_tcp_rtt_sample(&r, 200000);
    assert_int_equal(r.rttvar_us, 62500);
    assert_int_equal(r.srtt_us, 112500);
    assert_int_equal(xlb_tcp_rtt_timeout_us(&r), 362500);
}

static void the_minimum_holds_for_short_paths(void **state)
{
    (void)state;
    struct xlb_tcp_rtt r = fresh();
    /* 1 ms: 1 + max(1, 4 x 0.5) = 3 ms, raised to the 200 ms minimum (2.4). */
    xlb_tcp_rtt_sample(&r, 1000);
    assert_int_equal(xlb_tcp_rtt_timeout_us(&r), 200000);
}

static void backoff_doubles_up_to_the_maximum_and_a_sample_ends_it(void **state)
{
    (void)state;
    struct xlb_tcp_rtt r = fresh();
    xlb_tcp_rtt_sample(&r, 100000); /* RTO 300 ms */
    uint64_t expect = 300000;
    for (int i = 0; i < 12; i++) {
        xlb_tcp_rtt_backoff(&r);
        expect *= 2;
        assert_int_equal(xlb_tcp_rtt_timeout_us(&r), expect > 60000000 ? 60000000 : expect);
    }
    assert_int_equal(r.backoff, 12); /* still counted at the cap */
    /* 5.7: a new sample recomputes the RTO without the backoff. */
    xlb_tcp_rtt_sample(&r, 100000);
    assert_int_equal(r.backoff, 0);
    assert_true(xlb_tcp_rtt_timeout_us(&r) < 1000000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(before_any_sample_the_rto_is_one_second),
        cmocka_unit_test(samples_follow_the_rfc_formulas),
        cmocka_unit_test(the_minimum_holds_for_short_paths),
        cmocka_unit_test(backoff_doubles_up_to_the_maximum_and_a_sample_ends_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
