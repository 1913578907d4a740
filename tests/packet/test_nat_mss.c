/*
 * MSS clamping in the L4 full NAT (dataplane/tcp_syn_options.c, clamp_mss in nat.c): a SYN or
 * SYN-ACK offering more than xlb's port carries leaves with the port's limit in its MSS
 * option, byte for byte as a stack would have written it, checksums exact; a smaller offer,
 * a data segment and a port without a limit pass unchanged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <rte_tcp.h>

#include "nat.h"
#include "nat_segments.h"

#define MSS_MAX4 1400 /* as for a 1440-byte MTU */
#define MSS_MAX6 1380

static void limit_port(struct nat_fixture *n, uint16_t v4, uint16_t v6)
{
    n->f->snap->ports[0].mss_max_ipv4 = v4;
    n->f->snap->ports[0].mss_max_ipv6 = v6;
}

static uint64_t clamped(struct nat_fixture *n)
{
    return n->f->stats.events[XLB_EVENT_TCP_MSS_CLAMPED];
}

static void syn_and_syn_ack_are_clamped(void **state)
{
    struct nat_fixture *n = *state;
    limit_port(n, MSS_MAX4, MSS_MAX6);
    struct seg syn = from_client4(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    syn.wscale = 1 + 7;
    struct seg out = to_backend(syn, PORT_BASE);
    out.mss = MSS_MAX4;
    forward(n, &syn, &out);
    assert_int_equal(clamped(n), 1);

    struct seg syn_ack = from_backend4(PORT_BASE, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    syn_ack.mss = 8960; /* a jumbo-frame backend */
    struct seg back = to_client(syn_ack, CLIENT_PORT);
    back.mss = MSS_MAX4;
    forward(n, &syn_ack, &back);
    assert_int_equal(clamped(n), 2);

    /* Data carries no MSS option: forwarded as it came. */
    struct seg data = from_client4(CLIENT_PORT, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, PAYLOAD_TEXT);
    struct seg data_out = to_backend(data, PORT_BASE);
    forward(n, &data, &data_out);
    assert_int_equal(clamped(n), 2);
}

static void smaller_offers_pass_unchanged(void **state)
{
    struct nat_fixture *n = *state;
    limit_port(n, MSS_MAX4, MSS_MAX6);
    struct seg syn = from_client4(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    syn.mss = 1200;
    struct seg out = to_backend(syn, PORT_BASE);
    forward(n, &syn, &out);
    struct seg syn_ack = from_backend4(PORT_BASE, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    syn_ack.mss = MSS_MAX4; /* exactly the limit */
    struct seg back = to_client(syn_ack, CLIENT_PORT);
    forward(n, &syn_ack, &back);
    assert_int_equal(clamped(n), 0);
}

/* After a lone NOP the MSS value straddles two of the checksum's 16-bit words. */
static void ipv6_mss_after_a_nop(void **state)
{
    struct nat_fixture *n = *state;
    limit_port(n, MSS_MAX4, MSS_MAX6);
    struct seg syn = from_client6(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    syn.mss = 1440;
    syn.mss_after_nop = true;
    struct seg out = to_backend(syn, PORT_BASE);
    out.mss = MSS_MAX6;
    forward(n, &syn, &out);
    struct seg syn_ack = from_backend6(PORT_BASE, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    syn_ack.mss = 0xffff;
    syn_ack.mss_after_nop = true;
    struct seg back = to_client(syn_ack, CLIENT_PORT);
    back.mss = MSS_MAX6;
    forward(n, &syn_ack, &back);
    assert_int_equal(clamped(n), 2);
}

static void a_port_without_a_limit_changes_nothing(void **state)
{
    struct nat_fixture *n = *state;
    limit_port(n, 0, 0); /* xlb.tcp_mss_clamp "off" */
    struct seg syn = from_client4(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    syn.mss = 8960;
    struct seg out = to_backend(syn, PORT_BASE);
    forward(n, &syn, &out);
    assert_int_equal(clamped(n), 0);
}

/* The limit of a flow's path is the lower of its two ports'. */
static void two_ports_take_the_lower_limit(void **state)
{
    struct nat_fixture *n = *state;
    struct xlb_snapshot *snap = n->f->snap;
    snap->n_ports = 2;
    snap->ports[1] = snap->ports[0];
    snap->ports[0].mss_max_ipv4 = 1400;
    snap->ports[1].mss_max_ipv4 = 1300;
    assert_int_equal(xlb_nat_mss_max(snap, AF_INET, 0, 1), 1300);
    assert_int_equal(xlb_nat_mss_max(snap, AF_INET, 1, 0), 1300);
    assert_int_equal(xlb_nat_mss_max(snap, AF_INET, 0, 0), 1400);
    snap->ports[1].mss_max_ipv4 = 0; /* no limit on one side: the other's */
    assert_int_equal(xlb_nat_mss_max(snap, AF_INET, 0, 1), 1400);
    assert_int_equal(xlb_nat_mss_max(snap, AF_INET6, 0, 1), 0);
    snap->n_ports = 1;
}

/* What the snapshot builder derives from a port's MTU and xlb.tcp_mss_clamp. */
static void limits_from_mtu_and_setting(void **state)
{
    (void)state;
    assert_int_equal(xlb_port_mss_max(1500, UINT16_MAX, false), 1460);
    assert_int_equal(xlb_port_mss_max(1500, UINT16_MAX, true), 1440);
    assert_int_equal(xlb_port_mss_max(0, UINT16_MAX, false), 1460); /* unknown MTU: 1500 */
    assert_int_equal(xlb_port_mss_max(9000, UINT16_MAX, false), 8960);
    assert_int_equal(xlb_port_mss_max(1500, 1360, false), 1360);
    assert_int_equal(xlb_port_mss_max(1500, 0, false), 0); /* off */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(syn_and_syn_ack_are_clamped, nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(smaller_offers_pass_unchanged, nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(ipv6_mss_after_a_nop, nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(a_port_without_a_limit_changes_nothing, nat_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(two_ports_take_the_lower_limit, nat_setup, nat_teardown),
        cmocka_unit_test(limits_from_mtu_and_setting),
    };
    return cmocka_run_group_tests_name("nat_mss", tests, NULL, NULL);
}
