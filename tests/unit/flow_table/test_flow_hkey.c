/*
 * The flow table's compact keys (dataplane/flow_table/xlb_flow_hkey.c): every client key comes
 * back whole from its compact form, IPv4 and IPv6; IPv6 VIPs are numbered once each, up to the
 * limit; keys no flow can have are refused rather than confused with others.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "xlb_flow_table.h"

static struct xlb_flow_key key(int family, const char *client, uint16_t cport, const char *vip,
                               uint16_t vport)
{
    struct xlb_flow_key k;
    memset(&k, 0, sizeof(k));
    k.family = (uint8_t)family;
    k.proto = IPPROTO_TCP;
    k.src_port = htons(cport);
    k.dst_port = htons(vport);
    assert_int_equal(inet_pton(family, client, k.src), 1);
    assert_int_equal(inet_pton(family, vip, k.dst), 1);
    return k;
}

static void round_trip(const struct xlb_flow_vip6 *vip6, const struct xlb_flow_key *k)
{
    struct xlb_flow_hkey h;
    struct xlb_flow_key back;
    assert_true(xlb_flow_hkey_of(vip6, k, &h));
    xlb_flow_hkey_expand(vip6, &h, &back);
    assert_memory_equal(&back, k, sizeof(*k));
}

static void ipv4_keys_come_back_whole(void **state)
{
    (void)state;
    struct xlb_flow_vip6 vip6 = {0};
    struct xlb_flow_key k = key(AF_INET, "198.18.0.2", 40000, "198.18.0.100", 443);
    round_trip(&vip6, &k);
    k = key(AF_INET, "255.255.255.254", 1, "198.19.255.255", 65535);
    round_trip(&vip6, &k);
    assert_int_equal(vip6.n, 0);
}

static void ipv6_vips_are_numbered_once(void **state)
{
    (void)state;
    struct xlb_flow_vip6 vip6 = {0};
    struct xlb_flow_key a = key(AF_INET6, "2001:2::2", 40000, "2001:2::100", 443);
    struct xlb_flow_key b = key(AF_INET6, "2001:2::3", 40001, "2001:2::101", 443);
    struct xlb_flow_hkey h;
    /* Not numbered yet: no flow can have this key. */
    assert_false(xlb_flow_hkey_of(&vip6, &a, &h));
    assert_true(xlb_flow_vip6_add(&vip6, a.dst));
    assert_true(xlb_flow_vip6_add(&vip6, a.dst));
    assert_true(xlb_flow_vip6_add(&vip6, b.dst));
    assert_int_equal(vip6.n, 2);
    round_trip(&vip6, &a);
    round_trip(&vip6, &b);

    /* Two keys differing only in their VIP differ compactly too. */
    struct xlb_flow_hkey ha, hb;
    b = key(AF_INET6, "2001:2::2", 40000, "2001:2::101", 443);
    assert_true(xlb_flow_hkey_of(&vip6, &a, &ha));
    assert_true(xlb_flow_hkey_of(&vip6, &b, &hb));
    assert_memory_not_equal(&ha, &hb, sizeof(ha));
}

static void ipv4_and_ipv6_keys_never_meet(void **state)
{
    (void)state;
    struct xlb_flow_vip6 vip6 = {0};
    /* An IPv6 client at the IPv4-mapped address of an IPv4 client, to VIP number 0. */
    struct xlb_flow_key v6 = key(AF_INET6, "::ffff:198.18.0.2", 40000, "2001:2::100", 443);
    assert_true(xlb_flow_vip6_add(&vip6, v6.dst));
    struct xlb_flow_key v4 = key(AF_INET, "198.18.0.2", 40000, "255.255.255.0", 443);
    struct xlb_flow_hkey h6, h4;
    assert_true(xlb_flow_hkey_of(&vip6, &v6, &h6));
    /* The IPv4 VIP that would look like VIP number 0 is refused, not confused with it. */
    assert_false(xlb_flow_hkey_of(&vip6, &v4, &h4));
    round_trip(&vip6, &v6);
}

static void the_ipv6_vip_numbers_run_out(void **state)
{
    (void)state;
    struct xlb_flow_vip6 vip6 = {0};
    uint8_t addr[16] = {0x20, 0x01, 0x00, 0x02};
    for (unsigned i = 0; i < XLB_FLOW_MAX_VIP6; i++) {
        addr[14] = (uint8_t)(i >> 8);
        addr[15] = (uint8_t)i;
        assert_true(xlb_flow_vip6_add(&vip6, addr));
    }
    addr[13] = 1;
    assert_false(xlb_flow_vip6_add(&vip6, addr));
    addr[13] = 0;
    addr[15] = 7;
    assert_true(xlb_flow_vip6_add(&vip6, addr)); /* one already numbered still is */
    assert_int_equal(vip6.n, XLB_FLOW_MAX_VIP6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ipv4_keys_come_back_whole),
        cmocka_unit_test(ipv6_vips_are_numbered_once),
        cmocka_unit_test(ipv4_and_ipv6_keys_never_meet),
        cmocka_unit_test(the_ipv6_vip_numbers_run_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
