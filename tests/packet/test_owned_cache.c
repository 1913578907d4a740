/*
 * The worker's cache of owned addresses (dataplane/owned_cache.h) must follow the snapshot:
 * once a reload drops a VIP, packets to it are not ours any more, however recently the worker
 * looked the address up; once a VIP comes back, it is ours again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <rte_tcp.h>

#include "packet_fixture.h"

/* As a reload does: the worker moves to the new snapshot while the old one still exists (it is
 * freed only after an RCU grace period), so a stale cache entry would still look valid. */
static struct xlb_snapshot *replace_snapshot(struct fixture *f, bool with_vips)
{
    struct xlb_snapshot *old = f->snap;
    f->snap = fixture_make_snapshot(with_vips);
    return old;
}

static void a_new_snapshot_forgets_cached_addresses(void **state)
{
    (void)state;
    struct fixture *f = fixture_create();
    uint8_t frame[128];
    size_t len = build_tcp4(frame, FIX_PEER4, FIX_VIP4, 443, RTE_TCP_SYN_FLAG);

    /* The VIP is owned (this fixture forwards nothing: no service), twice, the second time
     * from the cache. */
    fixture_send(f, frame, len);
    fixture_send(f, frame, len);
    assert_int_equal(fixture_drops(f, XLB_DROP_TCP_NO_SERVICE), 2);

    struct xlb_snapshot *with_vip = replace_snapshot(f, false);
    fixture_send(f, frame, len);
    assert_int_equal(fixture_drops(f, XLB_DROP_NOT_OUR_ADDRESS), 1);
    assert_int_equal(fixture_drops(f, XLB_DROP_TCP_NO_SERVICE), 2);

    struct xlb_snapshot *without_vip = replace_snapshot(f, true);
    fixture_send(f, frame, len);
    assert_int_equal(fixture_drops(f, XLB_DROP_TCP_NO_SERVICE), 3);
    assert_int_equal(fixture_drops(f, XLB_DROP_NOT_OUR_ADDRESS), 1);
    xlb_snapshot_free(with_vip);
    xlb_snapshot_free(without_vip);
    fixture_destroy(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_new_snapshot_forgets_cached_addresses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
