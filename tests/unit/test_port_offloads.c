/*
 * The tx checksum offloads from a port's capabilities to its worker's TCP endpoints
 * (dataplane/port_offloads.h): which offloads a port is configured with, what its info then
 * says, and what the endpoints may leave to the ports. The test vdevs (net_ring, af_packet,
 * memif) have none of these offloads, so the decision is tested here from capability flags.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <rte_ethdev.h>

#include "port_offloads.h"

#define CSUMS (RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_IPV4_CKSUM)

/* A port whose driver reports capa, as xlb_port_open records it. */
static struct xlb_port_info port_with(uint64_t capa)
{
    struct xlb_port_info info = {0};
    xlb_port_info_set_tx(&info, xlb_port_tx_offloads(capa));
    return info;
}

/* Only what xlb uses is enabled, and only where the driver has it. */
static void test_offloads_enabled(void **state)
{
    (void)state;
    uint64_t others = RTE_ETH_TX_OFFLOAD_TCP_TSO | RTE_ETH_TX_OFFLOAD_VLAN_INSERT |
                      RTE_ETH_TX_OFFLOAD_UDP_CKSUM | RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
    assert_int_equal(xlb_port_tx_offloads(0), 0);
    assert_int_equal(xlb_port_tx_offloads(others), 0);
    assert_int_equal(xlb_port_tx_offloads(others | CSUMS | RTE_ETH_TX_OFFLOAD_MULTI_SEGS),
                     CSUMS | RTE_ETH_TX_OFFLOAD_MULTI_SEGS);
    assert_int_equal(xlb_port_tx_offloads(RTE_ETH_TX_OFFLOAD_TCP_CKSUM),
                     RTE_ETH_TX_OFFLOAD_TCP_CKSUM);
}

static void test_port_info(void **state)
{
    (void)state;
    struct xlb_port_info none = port_with(RTE_ETH_TX_OFFLOAD_MULTI_SEGS);
    assert_true(none.tx_multi_seg);
    assert_false(none.tx_tcp_cksum);
    assert_false(none.tx_ip_cksum);
    struct xlb_port_info all = port_with(CSUMS);
    assert_false(all.tx_multi_seg);
    assert_true(all.tx_tcp_cksum);
    assert_true(all.tx_ip_cksum);
}

/* An endpoint leaves a checksum out only when every port of its worker fills it in. */
static void test_worker_decision(void **state)
{
    (void)state;
    struct xlb_port_info ports[3] = {port_with(CSUMS), port_with(CSUMS), port_with(CSUMS)};
    struct xlb_port_tx_cksum c = xlb_port_tx_cksum(ports, 3);
    assert_true(c.tcp);
    assert_true(c.ip);
    ports[1] = port_with(RTE_ETH_TX_OFFLOAD_IPV4_CKSUM); /* no TCP checksum */
    c = xlb_port_tx_cksum(ports, 3);
    assert_false(c.tcp);
    assert_true(c.ip);
    ports[2] = port_with(0); /* the vdevs of the tests */
    c = xlb_port_tx_cksum(ports, 3);
    assert_false(c.tcp);
    assert_false(c.ip);
    /* Only the first port counted: it has both. */
    c = xlb_port_tx_cksum(ports, 1);
    assert_true(c.tcp);
    assert_true(c.ip);
    c = xlb_port_tx_cksum(ports, 0);
    assert_false(c.tcp);
    assert_false(c.ip);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_offloads_enabled),
        cmocka_unit_test(test_port_info),
        cmocka_unit_test(test_worker_decision),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
