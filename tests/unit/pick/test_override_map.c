/* Override-host map: hits, misses, IPv6, statuses, usability, sizes. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "pick_test.h"
#include "xlb_override_map.h"

static struct xlb_host_port hp(const char *addr, uint16_t port)
{
    struct xlb_host_port out = {.port = port};
    assert_int_equal(xlb_addr_parse(addr, &out.addr), 0);
    return out;
}

static struct xlb_override_map *sample(void)
{
    const struct xlb_override_endpoint eps[] = {
        {hp("198.18.0.1", 80), 1, XLB_HEALTH_HEALTHY},
        {hp("198.18.0.2", 80), 2, XLB_HEALTH_UNKNOWN},
        {hp("198.18.0.3", 80), 3, XLB_HEALTH_DRAINING},
        {hp("198.18.0.4", 80), 4, XLB_HEALTH_UNHEALTHY},
        {hp("2001:2::1", 443), 5, XLB_HEALTH_HEALTHY},
        {hp("2001:2::2", 443), 6, XLB_HEALTH_DEGRADED},
        {hp("198.18.0.1", 81), 7, XLB_HEALTH_HEALTHY}, /* same address, other port */
    };
    struct xlb_override_map *map;
    assert_int_equal(xlb_override_map_build(eps, 7, &map), 0);
    return map;
}

static void test_hits_and_misses(void **state)
{
    struct xlb_override_map *map = sample();
    struct xlb_host_port q = hp("198.18.0.1", 80);
    const struct xlb_override_bucket *b = xlb_override_map_find(map, &q);
    assert_non_null(b);
    assert_int_equal(b->slot, 1);
    assert_int_equal(b->status, XLB_HEALTH_HEALTHY);
    q = hp("198.18.0.1", 81);
    assert_int_equal(xlb_override_map_find(map, &q)->slot, 7);
    q = hp("2001:2::1", 443);
    assert_int_equal(xlb_override_map_find(map, &q)->slot, 5);

    const struct xlb_host_port misses[] = {
        hp("198.18.0.1", 82), hp("198.18.0.9", 80),        hp("2001:2::1", 80),
        hp("2001:2::3", 443), hp("::ffff:198.18.0.1", 80), /* IPv4-mapped IPv6 is another address */
    };
    for (size_t i = 0; i < sizeof(misses) / sizeof(misses[0]); i++)
        assert_null(xlb_override_map_find(map, &misses[i]));
    struct xlb_host_port zero = {0};
    assert_null(xlb_override_map_find(map, &zero));
    assert_null(xlb_override_map_find(NULL, &q));
    xlb_override_map_free(map);
}

/* A55: honoured only for statuses in override_host_status, default {UNKNOWN, HEALTHY}. */
static void test_status_sets(void **state)
{
    struct xlb_override_map *map = sample();
    const uint32_t def = XLB_OVERRIDE_STATUS_DEFAULT;
    struct xlb_host_port q;
    q = hp("198.18.0.1", 80);
    assert_int_equal(xlb_override_pick(map, &q, def, NULL), 1);
    q = hp("198.18.0.2", 80);
    assert_int_equal(xlb_override_pick(map, &q, def, NULL), 2);
    q = hp("198.18.0.3", 80);
    assert_int_equal(xlb_override_pick(map, &q, def, NULL), XLB_PICK_NONE);
    uint32_t with_draining = def | XLB_HEALTH_BIT(XLB_HEALTH_DRAINING);
    assert_int_equal(xlb_override_pick(map, &q, with_draining, NULL), 3);
    q = hp("198.18.0.4", 80);
    assert_int_equal(xlb_override_pick(map, &q, with_draining, NULL), XLB_PICK_NONE);
    q = hp("2001:2::2", 443);
    assert_int_equal(xlb_override_pick(map, &q, def, NULL), XLB_PICK_NONE);
    assert_int_equal(xlb_override_pick(map, &q, XLB_HEALTH_BIT(XLB_HEALTH_DEGRADED), NULL), 6);
    q = hp("198.18.0.9", 80);
    assert_int_equal(xlb_override_pick(map, &q, ~0u, NULL), XLB_PICK_NONE);
    xlb_override_map_free(map);
}

/* An ejected or failing endpoint stays in the map but the override falls through. */
static void test_unusable_falls_through(void **state)
{
    struct xlb_override_map *map = sample();
    uint64_t usable[XLB_USABLE_WORDS(8)];
    memset(usable, 0xff, sizeof(usable));
    xlb_slot_set_usable(usable, 5, false);
    struct xlb_host_port q = hp("2001:2::1", 443);
    assert_non_null(xlb_override_map_find(map, &q));
    assert_int_equal(xlb_override_pick(map, &q, XLB_OVERRIDE_STATUS_DEFAULT, usable),
                     XLB_PICK_NONE);
    q = hp("198.18.0.1", 80);
    assert_int_equal(xlb_override_pick(map, &q, XLB_OVERRIDE_STATUS_DEFAULT, usable), 1);
    xlb_override_map_free(map);
}

static void test_build_errors(void **state)
{
    struct xlb_override_endpoint eps[2] = {
        {hp("198.18.0.1", 80), 1, XLB_HEALTH_HEALTHY},
        {hp("198.18.0.1", 80), 2, XLB_HEALTH_HEALTHY},
    };
    struct xlb_override_map *map = (void *)1;
    assert_int_equal(xlb_override_map_build(eps, 2, &map), -EEXIST);
    assert_null(map);
    assert_int_equal(xlb_override_map_build(eps, 0, &map), -EINVAL);
    assert_int_equal(xlb_override_map_build(NULL, 1, &map), -EINVAL);
    eps[1].where = hp("198.18.0.2", 80);
    eps[1].status = XLB_HEALTH_DEGRADED + 1;
    assert_int_equal(xlb_override_map_build(eps, 2, &map), -EINVAL);
    eps[1].status = XLB_HEALTH_HEALTHY;
    eps[1].where.addr.family = 0;
    assert_int_equal(xlb_override_map_build(eps, 2, &map), -EINVAL);
}

/* Many endpoints: every one found, the table at most half full, garbage padding ignored. */
static void test_large_map(void **state)
{
    enum { N = 100000 };
    struct xlb_override_endpoint *eps = calloc(N, sizeof(*eps));
    for (uint32_t i = 0; i < N; i++) {
        uint32_t be = htonl(0xc6120000u + i); /* 198.18.0.0/15 */
        xlb_addr_from_ipv4(be, &eps[i].where.addr);
        eps[i].where.port = (uint16_t)(1000 + i % 7);
        eps[i].slot = i;
        eps[i].status = (uint8_t)(i % 6);
    }
    struct xlb_override_map *map;
    assert_int_equal(xlb_override_map_build(eps, N, &map), 0);
    assert_true((uint64_t)map->mask + 1 >= 2ull * N);
    for (uint32_t i = 0; i < N; i++) {
        struct xlb_host_port q = eps[i].where;
        q.addr.pad[0] = 0x5a; /* padding must not matter */
        const struct xlb_override_bucket *b = xlb_override_map_find(map, &q);
        assert_non_null(b);
        assert_int_equal(b->slot, i);
        assert_int_equal(b->status, i % 6);
    }
    xlb_override_map_free(map);
    free(eps);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hits_and_misses),
        cmocka_unit_test(test_status_sets),
        cmocka_unit_test(test_unusable_falls_through),
        cmocka_unit_test(test_build_errors),
        cmocka_unit_test(test_large_map),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
