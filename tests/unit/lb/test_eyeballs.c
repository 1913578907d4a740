/*
 * Happy eyeballs over an endpoint's addresses (lib/lb/xlb_eyeballs.h, A61/A62): which address
 * a connection attempt tries, when the next one starts (the latest failing: at once; none
 * connected after 250 ms: on the timer), the first to connect winning over the others, and
 * the endpoint failing only when every address has. The clock is a number passed in.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "xlb_eyeballs.h"

#define T0   5000u /* an arbitrary start */
#define NONE XLB_EYEBALLS_NONE
#define ALL  0xfu

static void first_address_first(void **state)
{
    (void)state;
    struct xlb_eyeballs eb;
    assert_int_equal(xlb_eyeballs_begin(&eb, 3, ALL, T0), 0);
    assert_int_equal(eb.live, 1u);
    assert_int_equal(eb.due_ms, T0 + XLB_EYEBALLS_DELAY_MS);
    assert_false(xlb_eyeballs_over(&eb));
}

static void one_address_has_no_timer(void **state)
{
    (void)state;
    struct xlb_eyeballs eb;
    assert_int_equal(xlb_eyeballs_begin(&eb, 1, ALL, T0), 0);
    assert_int_equal(eb.due_ms, 0);
    assert_int_equal(xlb_eyeballs_due(&eb, T0 + 100000), NONE);
    /* It fails: nothing is left, the endpoint failed. */
    assert_int_equal(xlb_eyeballs_failed(&eb, 0, T0 + 10), NONE);
    assert_true(xlb_eyeballs_over(&eb));
}

/* Addresses of a family xlb cannot reach are never tried. */
static void unreachable_family_skipped(void **state)
{
    (void)state;
    struct xlb_eyeballs eb;
    assert_int_equal(xlb_eyeballs_begin(&eb, 3, 0x6u, T0), 1);
    assert_int_equal(xlb_eyeballs_failed(&eb, 1, T0 + 1), 2);
    assert_int_equal(eb.due_ms, 0); /* the last usable one */
    assert_int_equal(xlb_eyeballs_failed(&eb, 2, T0 + 2), NONE);
    assert_true(xlb_eyeballs_over(&eb));
    assert_int_equal(xlb_eyeballs_begin(&eb, 2, 0x0u, T0), NONE);
    assert_true(xlb_eyeballs_over(&eb));
}

/* A refused first address: the second starts at once, not after the delay. */
static void failure_starts_next_at_once(void **state)
{
    (void)state;
    struct xlb_eyeballs eb;
    xlb_eyeballs_begin(&eb, 2, ALL, T0);
    assert_int_equal(xlb_eyeballs_failed(&eb, 0, T0 + 3), 1);
    assert_int_equal(eb.live, 2u);
    assert_int_equal(xlb_eyeballs_connected(&eb, 1), 0);
    assert_int_equal(eb.won, 1);
    assert_false(xlb_eyeballs_over(&eb));
}

/* A silent first address: nothing before 250 ms, the second at 250 ms, both in progress. */
static void delay_starts_next(void **state)
{
    (void)state;
    struct xlb_eyeballs eb;
    xlb_eyeballs_begin(&eb, 3, ALL, T0);
    assert_int_equal(xlb_eyeballs_due(&eb, T0 + XLB_EYEBALLS_DELAY_MS - 1), NONE);
    assert_int_equal(xlb_eyeballs_due(&eb, T0 + XLB_EYEBALLS_DELAY_MS), 1);
    assert_int_equal(eb.live, 3u);
    assert_int_equal(eb.due_ms, T0 + 2 * XLB_EYEBALLS_DELAY_MS);
    /* Once: the same instant starts nothing more. */
    assert_int_equal(xlb_eyeballs_due(&eb, T0 + XLB_EYEBALLS_DELAY_MS), NONE);
    assert_int_equal(xlb_eyeballs_due(&eb, T0 + 2 * XLB_EYEBALLS_DELAY_MS), 2);
    assert_int_equal(eb.due_ms, 0);
    assert_int_equal(eb.live, 7u);
}

/* The first address is slow, not dead: it may still win over the later one. */
static void earlier_attempt_may_win(void **state)
{
    (void)state;
    struct xlb_eyeballs eb;
    xlb_eyeballs_begin(&eb, 2, ALL, T0);
    xlb_eyeballs_due(&eb, T0 + XLB_EYEBALLS_DELAY_MS);
    assert_int_equal(xlb_eyeballs_connected(&eb, 0), 2u); /* address 1 is abandoned */
    assert_int_equal(eb.won, 0);
    assert_int_equal(eb.live, 0);
    /* The abandoned attempt's close afterwards changes nothing. */
    assert_int_equal(xlb_eyeballs_failed(&eb, 1, T0 + 300), NONE);
    assert_false(xlb_eyeballs_over(&eb));
}

/* An older attempt failing while a later one is in progress leaves the later one its delay. */
static void older_failure_keeps_timer(void **state)
{
    (void)state;
    struct xlb_eyeballs eb;
    xlb_eyeballs_begin(&eb, 3, ALL, T0);
    xlb_eyeballs_due(&eb, T0 + XLB_EYEBALLS_DELAY_MS); /* 0 and 1 in progress */
    assert_int_equal(xlb_eyeballs_failed(&eb, 0, T0 + 260), NONE);
    assert_int_equal(eb.live, 2u);
    assert_int_equal(eb.due_ms, T0 + 2 * XLB_EYEBALLS_DELAY_MS);
    assert_int_equal(xlb_eyeballs_due(&eb, T0 + 2 * XLB_EYEBALLS_DELAY_MS), 2);
    /* Then the latest fails too: none left, but 1 is still in progress. */
    assert_int_equal(xlb_eyeballs_failed(&eb, 2, T0 + 600), NONE);
    assert_false(xlb_eyeballs_over(&eb));
    assert_int_equal(xlb_eyeballs_failed(&eb, 1, T0 + 700), NONE);
    assert_true(xlb_eyeballs_over(&eb));
}

/* More addresses than kept: the first XLB_EYEBALLS_MAX only. */
static void bounded(void **state)
{
    (void)state;
    struct xlb_eyeballs eb;
    assert_int_equal(xlb_eyeballs_begin(&eb, 9, 0xffu, T0), 0);
    assert_int_equal(eb.n, XLB_EYEBALLS_MAX);
    uint32_t k = 0, tried = 1;
    while ((k = xlb_eyeballs_failed(&eb, k, T0)) != NONE)
        tried++;
    assert_int_equal(tried, XLB_EYEBALLS_MAX);
    assert_true(xlb_eyeballs_over(&eb));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(first_address_first),        cmocka_unit_test(one_address_has_no_timer),
        cmocka_unit_test(unreachable_family_skipped), cmocka_unit_test(failure_starts_next_at_once),
        cmocka_unit_test(delay_starts_next),          cmocka_unit_test(earlier_attempt_may_win),
        cmocka_unit_test(older_failure_keeps_timer),  cmocka_unit_test(bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
