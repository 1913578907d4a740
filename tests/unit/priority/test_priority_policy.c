/*
 * gRFC A56 priority policy: one test per rule, on a virtual clock (every call takes now_ms).
 * Each update reports the state of every priority, as the caller does in production.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>

#include "priority_policy.h"

#define C  XLB_CHILD_CONNECTING
#define R  XLB_CHILD_READY
#define I  XLB_CHILD_IDLE
#define TF XLB_CHILD_TRANSIENT_FAILURE
#define T  XLB_PRIORITY_FAILOVER_MS

/* Report the states given, one per priority, at time now. */
#define UPDATE(pp, now, ...)                                                                       \
    do {                                                                                           \
        const enum xlb_child_state s_[] = {__VA_ARGS__};                                           \
        assert_int_equal(                                                                          \
            xlb_priority_policy_update((pp), s_, (uint32_t)(sizeof(s_) / sizeof(s_[0])), (now)),   \
            0);                                                                                    \
    } while (0)

static struct xlb_priority_policy *new_policy(void)
{
    struct xlb_priority_policy *pp = xlb_priority_policy_create();
    assert_non_null(pp);
    return pp;
}

/* No priorities: nothing chosen, TRANSIENT_FAILURE reported, no timer. */
static void test_empty(void **state)
{
    (void)state;
    struct xlb_priority_policy *pp = new_policy();
    assert_int_equal(xlb_priority_policy_chosen(pp), UINT32_MAX);
    assert_int_equal(xlb_priority_policy_state(pp), TF);
    assert_true(xlb_priority_policy_next_timer_ms(pp) == UINT64_MAX);
    assert_false(xlb_priority_policy_started(pp, 0));
    assert_int_equal(xlb_priority_policy_update(pp, NULL, 0, 0), 0);
    assert_int_equal(xlb_priority_policy_chosen(pp), UINT32_MAX);
    assert_false(xlb_priority_policy_poll(pp, 100000));
    xlb_priority_policy_free(pp);
}

/* Lazy start: only priority 0 is started, with its failover timer, and it is used meanwhile. */
static void test_initial_start_priority0_only(void **state)
{
    (void)state;
    struct xlb_priority_policy *pp = new_policy();
    UPDATE(pp, 1000, C, C, C);
    assert_true(xlb_priority_policy_started(pp, 0));
    assert_false(xlb_priority_policy_started(pp, 1));
    assert_false(xlb_priority_policy_started(pp, 2));
    assert_true(xlb_priority_policy_timer_running(pp, 0));
    assert_int_equal(xlb_priority_policy_next_timer_ms(pp), 1000 + T);
    assert_int_equal(xlb_priority_policy_chosen(pp), 0);
    assert_int_equal(xlb_priority_policy_state(pp), C);
    /* Repeating the same report changes nothing, the deadline included. */
    UPDATE(pp, 4000, C, C, C);
    assert_int_equal(xlb_priority_policy_next_timer_ms(pp), 1000 + T);
    assert_false(xlb_priority_policy_started(pp, 1));
    xlb_priority_policy_free(pp);
}

/* READY cancels the timer and is chosen; nothing lower is started. */
static void test_ready_chosen(void **state)
{
    (void)state;
    struct xlb_priority_policy *pp = new_policy();
    UPDATE(pp, 0, C, C);
    UPDATE(pp, 3000, R, C);
    assert_int_equal(xlb_priority_policy_chosen(pp), 0);
    assert_int_equal(xlb_priority_policy_state(pp), R);
    assert_false(xlb_priority_policy_timer_running(pp, 0));
    assert_true(xlb_priority_policy_next_timer_ms(pp) == UINT64_MAX);
    assert_false(xlb_priority_policy_started(pp, 1));
    /* Past the old deadline nothing fires. */
    assert_false(xlb_priority_policy_poll(pp, 50000));
    assert_int_equal(xlb_priority_policy_chosen(pp), 0);
    xlb_priority_policy_free(pp);
}

/* IDLE counts as READY: chosen, timer cancelled, nothing lower started. */
static void test_idle_like_ready(void **state)
{
    (void)state;
    struct xlb_priority_policy *pp = new_policy();
    UPDATE(pp, 0, I, C);
    assert_int_equal(xlb_priority_policy_chosen(pp), 0);
    assert_int_equal(xlb_priority_policy_state(pp), I);
    assert_false(xlb_priority_policy_timer_running(pp, 0));
    assert_false(xlb_priority_policy_started(pp, 1));
    /* IDLE -> CONNECTING (ring_hash at startup) gets a fresh timer, as after READY. */
    UPDATE(pp, 1000, C, C);
    assert_true(xlb_priority_policy_timer_running(pp, 0));
    assert_int_equal(xlb_priority_policy_next_timer_ms(pp), 1000 + T);
    assert_int_equal(xlb_priority_policy_chosen(pp), 0);
    xlb_priority_policy_free(pp);
}

/* TRANSIENT_FAILURE fails over at once: the next priority is started with its own timer. */
static void test_failover_on_tf(void **state)
{
    (void)state;
    struct xlb_priority_policy *pp = new_policy();
    UPDATE(pp, 0, C, C, C);
    UPDATE(pp, 2000, TF, C, C);
    assert_int_equal(xlb_priority_policy_chosen(pp), 1);
    assert_int_equal(xlb_priority_policy_state(pp), C);
    assert_false(xlb_priority_policy_timer_running(pp, 0));
    assert_true(xlb_priority_policy_timer_running(pp, 1));
    assert_int_equal(xlb_priority_policy_next_timer_ms(pp), 2000 + T);
    assert_false(xlb_priority_policy_started(pp, 2));
    UPDATE(pp, 3000, TF, R, C);
    assert_int_equal(xlb_priority_policy_chosen(pp), 1);
    assert_int_equal(xlb_priority_policy_state(pp), R);
    assert_false(xlb_priority_policy_started(pp, 2));
    xlb_priority_policy_free(pp);
}

/* The timer fires at exactly start + 10 s, not a millisecond before. */
static void test_failover_on_timer_expiry(void **state)
{
    (void)state;
    struct xlb_priority_policy *pp = new_policy();
    UPDATE(pp, 0, C, C);
    assert_false(xlb_priority_policy_poll(pp, T - 1));
    assert_int_equal(xlb_priority_policy_chosen(pp), 0);
    assert_false(xlb_priority_policy_started(pp, 1));
    assert_true(xlb_priority_policy_poll(pp, T));
    assert_int_equal(xlb_priority_policy_chosen(pp), 1);
    assert_true(xlb_priority_policy_started(pp, 1));
    assert_false(xlb_priority_policy_timer_running(pp, 0));
    assert_int_equal(xlb_priority_policy_next_timer_ms(pp), 2 * T);
    /* Priority 0 still reports CONNECTING: a duplicate, so its timer is not restarted. */
    UPDATE(pp, T + 2000, C, C);
    assert_false(xlb_priority_policy_timer_running(pp, 0));
    assert_int_equal(xlb_priority_policy_chosen(pp), 1);
    xlb_priority_policy_free(pp);
}

/* A late poll fires timers in order on the virtual clock: child 1 is started at 10 s (not at
 * the poll time), its timer fires at 20 s and child 2 is started then, due at 30 s. */
static void test_late_poll_replays_timers(void **state)
{
    (void)state;
    struct xlb_priority_policy *pp = new_policy();
    UPDATE(pp, 0, C, C, C);
    assert_true(xlb_priority_policy_poll(pp, 2 * T + 5000));
    assert_int_equal(xlb_priority_policy_chosen(pp), 2);
    assert_int_equal(xlb_priority_policy_next_timer_ms(pp), 3 * T);
    /* An update past a due timer fires it before applying the report. */
    struct xlb_priority_policy *pq = new_policy();
    UPDATE(pq, 0, C, C);
    UPDATE(pq, T, C, C);
    assert_int_equal(xlb_priority_policy_chosen(pq), 1);
    xlb_priority_policy_free(pq);
    xlb_priority_policy_free(pp);
}

/* A higher priority that becomes READY again is chosen back; the lower child stays started. */
static void test_recovery_of_higher_priority(void **state)
{
    (void)state;
    struct xlb_priority_policy *pp = new_policy();
    UPDATE(pp, 0, TF, R);
    assert_int_equal(xlb_priority_policy_chosen(pp), 1);
    assert_false(xlb_priority_policy_timer_running(pp, 1)); /* started straight into READY */
    UPDATE(pp, 5000, R, R);
    assert_int_equal(xlb_priority_policy_chosen(pp), 0);
    assert_int_equal(xlb_priority_policy_state(pp), R);
    assert_true(xlb_priority_policy_started(pp, 1));
    /* Failing again reuses the still-started child 1 at once. */
    UPDATE(pp, 6000, TF, R);
    assert_int_equal(xlb_priority_policy_chosen(pp), 1);
    xlb_priority_policy_free(pp);
}

/* A deactivated child's running timer is not cancelled (A56 cancels only on a report); it
 * fires harmlessly, the choice being idempotent. */
static void test_deactivated_child_timer_harmless(void **state)
{
    (void)state;
    struct xlb_priority_policy *pp = new_policy();
    UPDATE(pp, 0, C, C);
    UPDATE(pp, 1000, TF, C);
    UPDATE(pp, 2000, R, C);
    assert_int_equal(xlb_priority_policy_chosen(pp), 0);
    assert_true(xlb_priority_policy_timer_running(pp, 1));
    assert_false(xlb_priority_policy_poll(pp, 1000 + T));
    assert_int_equal(xlb_priority_policy_chosen(pp), 0);
    assert_false(xlb_priority_policy_timer_running(pp, 1));
    xlb_priority_policy_free(pp);
}

/* A chosen READY child that goes CONNECTING without failure gets a fresh timer and stays
 * chosen until it runs out. */
static void test_ready_to_connecting_stays_chosen(void **state)
{
    (void)state;
    struct xlb_priority_policy *pp = new_policy();
    UPDATE(pp, 0, R, C);
    UPDATE(pp, 5000, C, C);
    assert_int_equal(xlb_priority_policy_chosen(pp), 0);
    assert_int_equal(xlb_priority_policy_state(pp), C);
    assert_true(xlb_priority_policy_timer_running(pp, 0));
    assert_false(xlb_priority_policy_started(pp, 1));
    assert_false(xlb_priority_policy_poll(pp, 5000 + T - 1));
    assert_true(xlb_priority_policy_poll(pp, 5000 + T));
    assert_int_equal(xlb_priority_policy_chosen(pp), 1);
    xlb_priority_policy_free(pp);
}

/* A56's fix: CONNECTING after TRANSIENT_FAILURE (no READY/IDLE since) starts no timer, so the
 * failed child does not win the choice back while it retries. */
static void test_connecting_after_tf_no_timer(void **state)
{
    (void)state;
    struct xlb_priority_policy *pp = new_policy();
    UPDATE(pp, 0, R, R);
    UPDATE(pp, 1000, TF, R);
    assert_int_equal(xlb_priority_policy_chosen(pp), 1);
    UPDATE(pp, 2000, C, R);
    assert_false(xlb_priority_policy_timer_running(pp, 0));
    assert_true(xlb_priority_policy_next_timer_ms(pp) == UINT64_MAX);
    assert_int_equal(xlb_priority_policy_chosen(pp), 1);
    /* Until it is READY again: then a later CONNECTING does get a timer. */
    UPDATE(pp, 3000, R, R);
    assert_int_equal(xlb_priority_policy_chosen(pp), 0);
    UPDATE(pp, 4000, C, R);
    assert_true(xlb_priority_policy_timer_running(pp, 0));
    assert_int_equal(xlb_priority_policy_chosen(pp), 0);
    xlb_priority_policy_free(pp);
}

/* All failing: every child is started and the last (lowest) priority's picker is used,
 * reporting its TRANSIENT_FAILURE. */
static void test_all_failing(void **state)
{
    (void)state;
    struct xlb_priority_policy *pp = new_policy();
    UPDATE(pp, 0, TF, TF, TF);
    for (uint32_t p = 0; p < 3; p++)
        assert_true(xlb_priority_policy_started(pp, p));
    assert_int_equal(xlb_priority_policy_chosen(pp), 2);
    assert_int_equal(xlb_priority_policy_state(pp), TF);
    assert_true(xlb_priority_policy_next_timer_ms(pp) == UINT64_MAX);
    /* A child retrying (CONNECTING, no timer) is preferred over the last one... */
    UPDATE(pp, 1000, TF, C, TF);
    assert_int_equal(xlb_priority_policy_chosen(pp), 1);
    assert_int_equal(xlb_priority_policy_state(pp), C);
    /* ...the highest such priority first. */
    UPDATE(pp, 2000, C, C, TF);
    assert_int_equal(xlb_priority_policy_chosen(pp), 0);
    xlb_priority_policy_free(pp);
}

/* A child whose timer ran out while CONNECTING is still used ahead of a failed last child. */
static void test_timed_out_connecting_before_last(void **state)
{
    (void)state;
    struct xlb_priority_policy *pp = new_policy();
    UPDATE(pp, 0, TF, C, TF);
    assert_int_equal(xlb_priority_policy_chosen(pp), 1);
    assert_false(xlb_priority_policy_started(pp, 2));
    assert_false(xlb_priority_policy_poll(pp, T));
    assert_true(xlb_priority_policy_started(pp, 2));
    assert_int_equal(xlb_priority_policy_chosen(pp), 1);
    assert_int_equal(xlb_priority_policy_state(pp), C);
    UPDATE(pp, T + 1, TF, TF, TF);
    assert_int_equal(xlb_priority_policy_chosen(pp), 2);
    xlb_priority_policy_free(pp);
}

/* Shrinking n drops children (and a chosen one); growing adds unstarted ones, and a dropped
 * index that comes back starts afresh with a new timer. */
static void test_shrink_and_grow(void **state)
{
    (void)state;
    struct xlb_priority_policy *pp = new_policy();
    UPDATE(pp, 0, TF, TF, R);
    assert_int_equal(xlb_priority_policy_chosen(pp), 2);
    UPDATE(pp, 1000, TF, TF);
    assert_int_equal(xlb_priority_policy_chosen(pp), 1);
    assert_int_equal(xlb_priority_policy_state(pp), TF);
    assert_false(xlb_priority_policy_started(pp, 2));
    UPDATE(pp, 2000, TF, TF, C, C);
    assert_true(xlb_priority_policy_started(pp, 2));
    assert_true(xlb_priority_policy_timer_running(pp, 2));
    assert_int_equal(xlb_priority_policy_next_timer_ms(pp), 2000 + T);
    assert_false(xlb_priority_policy_started(pp, 3));
    assert_int_equal(xlb_priority_policy_chosen(pp), 2);
    /* Dropping the child with the running timer drops the timer too. */
    UPDATE(pp, 3000, TF, R);
    assert_int_equal(xlb_priority_policy_chosen(pp), 1);
    assert_true(xlb_priority_policy_next_timer_ms(pp) == UINT64_MAX);
    assert_int_equal(xlb_priority_policy_update(pp, NULL, 0, 4000), 0);
    assert_int_equal(xlb_priority_policy_chosen(pp), UINT32_MAX);
    assert_int_equal(xlb_priority_policy_state(pp), TF);
    assert_false(xlb_priority_policy_started(pp, 0));
    UPDATE(pp, 5000, C);
    assert_int_equal(xlb_priority_policy_chosen(pp), 0);
    assert_int_equal(xlb_priority_policy_next_timer_ms(pp), 5000 + T);
    xlb_priority_policy_free(pp);
}

/* Bad arguments are refused and change nothing. */
static void test_invalid_arguments(void **state)
{
    (void)state;
    struct xlb_priority_policy *pp = new_policy();
    UPDATE(pp, 0, R);
    assert_int_equal(xlb_priority_policy_update(pp, NULL, 1, 10), -EINVAL);
    const enum xlb_child_state bad[] = {TF, (enum xlb_child_state)42};
    assert_int_equal(xlb_priority_policy_update(pp, bad, 2, 10), -EINVAL);
    assert_int_equal(xlb_priority_policy_chosen(pp), 0);
    assert_int_equal(xlb_priority_policy_state(pp), R);
    assert_false(xlb_priority_policy_started(pp, 1));
    assert_int_equal(xlb_priority_policy_update(NULL, bad, 1, 10), -EINVAL);
    xlb_priority_policy_free(NULL);
    xlb_priority_policy_free(pp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_initial_start_priority0_only),
        cmocka_unit_test(test_ready_chosen),
        cmocka_unit_test(test_idle_like_ready),
        cmocka_unit_test(test_failover_on_tf),
        cmocka_unit_test(test_failover_on_timer_expiry),
        cmocka_unit_test(test_late_poll_replays_timers),
        cmocka_unit_test(test_recovery_of_higher_priority),
        cmocka_unit_test(test_deactivated_child_timer_harmless),
        cmocka_unit_test(test_ready_to_connecting_stays_chosen),
        cmocka_unit_test(test_connecting_after_tf_no_timer),
        cmocka_unit_test(test_all_failing),
        cmocka_unit_test(test_timed_out_connecting_before_last),
        cmocka_unit_test(test_shrink_and_grow),
        cmocka_unit_test(test_invalid_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
