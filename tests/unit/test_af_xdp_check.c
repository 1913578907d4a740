/* xlbd --check for af_xdp vdevs: the interface must exist in this namespace (lo always does,
 * a made-up name never), iface= must be given, and each worker needs a queue. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "af_xdp_check.h"

static const char *problem(const char *arg, unsigned workers)
{
    static char buf[160];
    return xlbd_af_xdp_problem(arg, workers, buf, sizeof(buf));
}

static void other_drivers_are_not_looked_at(void **state)
{
    (void)state;
    assert_null(problem("--vdev=net_af_packet0,iface=nosuchif0,qpairs=1", 1));
    assert_null(problem("--no-huge", 1));
    assert_null(problem("256", 1));
}

static void an_existing_interface_passes(void **state)
{
    (void)state;
    assert_null(problem("--vdev=net_af_xdp0,iface=lo,start_queue=0,queue_count=1", 1));
    assert_null(problem("net_af_xdp1,iface=lo", 1)); /* the value of a separate --vdev */
}

static void a_missing_interface_is_named(void **state)
{
    (void)state;
    assert_string_equal(problem("--vdev=net_af_xdp0,iface=nosuchif0,queue_count=1", 1),
                        "net_af_xdp0: interface nosuchif0 does not exist in this network "
                        "namespace");
    assert_non_null(
        strstr(problem("--vdev=net_af_xdp0,iface=averyveryverylongname0", 1), "does not exist"));
}

static void iface_is_required(void **state)
{
    (void)state;
    assert_string_equal(problem("--vdev=net_af_xdp0", 1),
                        "net_af_xdp0: no iface= (the interface whose queues xlb takes)");
    assert_non_null(problem("--vdev=net_af_xdp0,start_queue=0", 1));
}

static void each_worker_needs_a_queue(void **state)
{
    (void)state;
    assert_string_equal(problem("--vdev=net_af_xdp0,iface=lo", 2),
                        "net_af_xdp0: queue_count=1 but 2 workers need a queue each");
    assert_null(problem("--vdev=net_af_xdp0,iface=lo,queue_count=2", 2));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(other_drivers_are_not_looked_at),
        cmocka_unit_test(an_existing_interface_passes),
        cmocka_unit_test(a_missing_interface_is_named),
        cmocka_unit_test(iface_is_required),
        cmocka_unit_test(each_worker_needs_a_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
