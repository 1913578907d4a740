/*
 * Circuit-breaker slots of clusters (control/lb_compile/cluster_slots.h): one per name, in
 * order of first sight, the same for the life of the process, none past the last slot.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "cluster_slots.h"

static void a_name_keeps_its_slot(void **state)
{
    struct xlb_cluster_slots s;
    xlb_cluster_slots_init(&s);
    assert_int_equal(xlb_cluster_slots_find(&s, "c1"), XLB_LB_NO_SLOT);
    assert_int_equal(xlb_cluster_slots_get(&s, "c1"), 0);
    assert_int_equal(xlb_cluster_slots_get(&s, "c2"), 1);
    assert_int_equal(xlb_cluster_slots_get(&s, "c1"), 0);
    assert_int_equal(xlb_cluster_slots_find(&s, "c2"), 1);
    assert_int_equal(xlb_cluster_slots_find(&s, "c3"), XLB_LB_NO_SLOT);
    xlb_cluster_slots_free(&s);
}

static void no_slot_past_the_last(void **state)
{
    struct xlb_cluster_slots s;
    xlb_cluster_slots_init(&s);
    char name[32];
    for (uint32_t i = 0; i < XLB_CLUSTER_SLOTS; i++) {
        snprintf(name, sizeof(name), "cluster-%u", i);
        assert_int_equal(xlb_cluster_slots_get(&s, name), i);
    }
    assert_int_equal(xlb_cluster_slots_get(&s, "one-too-many"), XLB_LB_NO_SLOT);
    assert_int_equal(xlb_cluster_slots_find(&s, "one-too-many"), XLB_LB_NO_SLOT);
    /* Those that have one keep it. */
    for (uint32_t i = 0; i < XLB_CLUSTER_SLOTS; i += 97) {
        snprintf(name, sizeof(name), "cluster-%u", i);
        assert_int_equal(xlb_cluster_slots_get(&s, name), i);
    }
    xlb_cluster_slots_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_name_keeps_its_slot),
        cmocka_unit_test(no_slot_past_the_last),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
