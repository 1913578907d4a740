/* The TCP endpoint's millisecond timer wheel: deadlines within and beyond one turn, same-slot
 * timers, cancelling and re-arming, a long pause, and each expired timer handed out once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "xlb_tcp_timer_wheel.h"

static struct xlb_tcp_wheel wheel;

static unsigned drain(uint64_t now)
{
    unsigned n = 0;
    /* Bounded: each call disarms the timer it returns. */
    while (xlb_tcp_wheel_expired(&wheel, now) && n < 100000)
        n++;
    return n;
}

static void test_deadlines_fire_on_time(void **state)
{
    (void)state;
    struct xlb_tcp_timer a = {0}, b = {0}, c = {0};
    xlb_tcp_wheel_init(&wheel, 1000);
    xlb_tcp_wheel_arm(&wheel, &a, 1005);
    xlb_tcp_wheel_arm(&wheel, &b, 1000 + 1500); /* beyond one turn of 1,024 ms */
    xlb_tcp_wheel_arm(&wheel, &c, 1005);        /* the same slot as a */
    assert_int_equal(wheel.armed, 3);
    assert_null(xlb_tcp_wheel_expired(&wheel, 1004));
    struct xlb_tcp_timer *t1 = xlb_tcp_wheel_expired(&wheel, 1005);
    struct xlb_tcp_timer *t2 = xlb_tcp_wheel_expired(&wheel, 1005);
    assert_true((t1 == &a && t2 == &c) || (t1 == &c && t2 == &a));
    assert_false(xlb_tcp_timer_armed(&a));
    assert_null(xlb_tcp_wheel_expired(&wheel, 1005));
    /* b's slot comes round at 1,000 + 1,500 - 1,024 = 1,476: not yet its turn. */
    assert_null(xlb_tcp_wheel_expired(&wheel, 2499));
    assert_ptr_equal(xlb_tcp_wheel_expired(&wheel, 2500), &b);
    assert_int_equal(wheel.armed, 0);
}

static void test_cancel_and_rearm(void **state)
{
    (void)state;
    struct xlb_tcp_timer a = {0}, b = {0};
    xlb_tcp_wheel_init(&wheel, 0);
    xlb_tcp_wheel_arm(&wheel, &a, 10);
    xlb_tcp_wheel_arm(&wheel, &b, 10);
    xlb_tcp_wheel_cancel(&wheel, &a);
    xlb_tcp_wheel_cancel(&wheel, &a);  /* twice is harmless */
    xlb_tcp_wheel_arm(&wheel, &b, 20); /* re-arming moves it */
    assert_int_equal(drain(15), 0);
    assert_int_equal(drain(20), 1);
    /* A deadline already passed fires at the next poll. */
    xlb_tcp_wheel_arm(&wheel, &a, 5);
    assert_ptr_equal(xlb_tcp_wheel_expired(&wheel, 21), &a);
}

static void test_many_expire_once_each(void **state)
{
    (void)state;
    static struct xlb_tcp_timer t[500];
    xlb_tcp_wheel_init(&wheel, 0);
    for (unsigned i = 0; i < 500; i++)
        xlb_tcp_wheel_arm(&wheel, &t[i], 1 + i % 3000);
    /* A long pause: more than two turns at once. */
    assert_int_equal(drain(10000), 500);
    assert_int_equal(wheel.armed, 0);
    assert_int_equal(drain(20000), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deadlines_fire_on_time),
        cmocka_unit_test(test_cancel_and_rearm),
        cmocka_unit_test(test_many_expire_once_each),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
