/* The control plane's watch over the L7 pools (control/orchestration/capacity_watch.c): one
 * line per interval when a pool is nearly full or refused connections, none otherwise. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "capacity_watch.h"

static void quiet_pools_say_nothing(void **state)
{
    (void)state;
    struct xlb_capacity_watch w = {0};
    struct xlb_worker_stats s[2] = {0};
    char line[256];
    assert_false(xlb_capacity_watch_check(&w, s, 2, line, sizeof(line))); /* no pools */
    s[0].l7_capacity = s[1].l7_capacity = 1000;
    s[0].l7_in_use = 899;
    s[0].l7_high_water = 950;
    assert_false(xlb_capacity_watch_check(&w, s, 2, line, sizeof(line)));
}

static void a_nearly_full_pool_is_reported(void **state)
{
    (void)state;
    struct xlb_capacity_watch w = {0};
    struct xlb_worker_stats s[2] = {0};
    char line[256];
    s[0].l7_capacity = s[1].l7_capacity = 1000;
    s[1].l7_in_use = 900;
    s[1].l7_high_water = 990;
    assert_true(xlb_capacity_watch_check(&w, s, 2, line, sizeof(line)));
    assert_string_equal(line, "worker 1 900/1000 (high water 990) at 90 % or more; 0 "
                              "connections refused (events.l7_pool_full)");
}

static void refusals_are_counted_per_interval(void **state)
{
    (void)state;
    struct xlb_capacity_watch w = {0};
    struct xlb_worker_stats s[2] = {0};
    char line[256];
    s[0].l7_capacity = s[1].l7_capacity = 1000;
    s[0].events[XLB_EVENT_L7_POOL_FULL] = 5;
    s[1].events[XLB_EVENT_L7_POOL_FULL] = 7;
    assert_true(xlb_capacity_watch_check(&w, s, 2, line, sizeof(line)));
    assert_string_equal(line, "no worker at 90 % or more; 12 connections refused "
                              "(events.l7_pool_full)");
    /* Nothing new: quiet again. */
    assert_false(xlb_capacity_watch_check(&w, s, 2, line, sizeof(line)));
    s[1].events[XLB_EVENT_L7_POOL_FULL] = 8;
    s[0].l7_in_use = s[1].l7_in_use = 1000;
    s[0].l7_high_water = s[1].l7_high_water = 1000;
    assert_true(xlb_capacity_watch_check(&w, s, 2, line, sizeof(line)));
    assert_string_equal(line, "worker 0 1000/1000 (high water 1000), worker 1 1000/1000 (high "
                              "water 1000) at 90 % or more; 1 connections refused "
                              "(events.l7_pool_full)");
    /* A short buffer is cut, never overrun. */
    char small[16];
    s[1].events[XLB_EVENT_L7_POOL_FULL] = 9;
    assert_true(xlb_capacity_watch_check(&w, s, 2, small, sizeof(small)));
    assert_int_equal(strlen(small), sizeof(small) - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quiet_pools_say_nothing),
        cmocka_unit_test(a_nearly_full_pool_is_reported),
        cmocka_unit_test(refusals_are_counted_per_interval),
    };
    return cmocka_run_group_tests_name("capacity_watch", tests, NULL, NULL);
}
