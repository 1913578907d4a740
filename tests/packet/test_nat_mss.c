/*
 * MSS clamping in the L4 full NAT (dataplane/tcp_syn_options.c, xlb_egress_clamp_mss in
 * dataplane/flow/egress.c): a SYN or SYN-ACK offering more than xlb's port carries leaves with the
 * port's limit in its MSS option, byte for byte as a stack would have written it, checksums exact;
 * a smaller offer, a data segment and a port without a limit pass unchanged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "nat/nat.h"
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

/* The client's SYN and the backend's SYN-ACK through xlb, on the flow of CLIENT_PORT and
 * PORT_BASE; each must leave with its MSS option at syn_out and syn_ack_out (0: as it came). */
static void handshake(struct nat_fixture *n, struct seg syn, struct seg syn_ack, uint16_t syn_out,
                      uint16_t syn_ack_out)
{
    struct seg out = to_backend(syn, PORT_BASE);
    out.mss = syn_out != 0 ? syn_out : syn.mss;
    forward(n, &syn, &out);
    struct seg back = to_client(syn_ack, CLIENT_PORT);
    back.mss = syn_ack_out != 0 ? syn_ack_out : syn_ack.mss;
    forward(n, &syn_ack, &back);
}

static void syn_and_syn_ack_are_clamped(void **state)
{
    struct nat_fixture *n = *state;
    limit_port(n, MSS_MAX4, MSS_MAX6);
    struct seg syn = from_client4(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    syn.wscale = 1 + 7;
    struct seg syn_ack = from_backend4(PORT_BASE, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    syn_ack.mss = 8960; /* a jumbo-frame backend */
    handshake(n, syn, syn_ack, MSS_MAX4, MSS_MAX4);
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
    struct seg syn_ack = from_backend4(PORT_BASE, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    syn_ack.mss = MSS_MAX4; /* exactly the limit */
    handshake(n, syn, syn_ack, 0, 0);
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
    struct seg syn_ack = from_backend6(PORT_BASE, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    syn_ack.mss = 0xffff;
    syn_ack.mss_after_nop = true;
    handshake(n, syn, syn_ack, MSS_MAX6, MSS_MAX6);
    assert_int_equal(clamped(n), 2);
}

/* The same straddling value over IPv4, on a SYN that the client sends again (its first was
 * lost): each copy is clamped on its own. */
static void ipv4_after_a_nop_and_again(void **state)
{
    struct nat_fixture *n = *state;
    limit_port(n, MSS_MAX4, MSS_MAX6);
    struct seg syn = from_client4(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    syn.mss = 1460;
    syn.mss_after_nop = true;
    struct seg out = to_backend(syn, PORT_BASE);
    out.mss = MSS_MAX4;
    forward(n, &syn, &out);
    forward(n, &syn, &out);
    assert_int_equal(clamped(n), 2);
    assert_int_equal(n->flows->n_used, 1);
}

/* Two MSS options (malformed but seen): both are lowered, whichever the backend believes. */
static void every_mss_option_is_clamped(void **state)
{
    struct nat_fixture *n = *state;
    limit_port(n, MSS_MAX4, MSS_MAX6);
    struct seg syn = from_client4(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    uint8_t frame[256];
    size_t len = tcp_frame(frame, &syn);
    /* Append a second MSS option, 9000, after the first (the header grows by 4 bytes). */
    struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(frame + sizeof(struct rte_ether_hdr));
    struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)(ip + 1);
    const uint8_t second[4] = {2, 4, 9000 >> 8, 9000 & 0xff};
    memcpy(frame + len, second, 4);
    len += 4;
    tcp->data_off = (uint8_t)(tcp->data_off + (1 << 4));
    ip->total_length = rte_cpu_to_be_16((uint16_t)(rte_be_to_cpu_16(ip->total_length) + 4));
    ip->hdr_checksum = 0;
    ip->hdr_checksum = rte_ipv4_cksum(ip);
    tcp->cksum = 0;
    tcp->cksum = rte_ipv4_udptcp_cksum(ip, tcp);

    struct rte_mbuf *m = rte_pktmbuf_alloc(n->f->pool);
    assert_non_null(m);
    memcpy(rte_pktmbuf_append(m, (uint16_t)len), frame, len);
    unsigned before = n->f->ctx.tx[0].n;
    xlb_burst_process(&n->f->ctx, n->f->snap, 0, &m, 1);
    assert_int_equal(n->f->ctx.tx[0].n, before + 1);
    size_t out_len;
    const uint8_t *out = fixture_tx(n->f, before, &out_len);
    assert_int_equal(out_len, len);
    const struct rte_ipv4_hdr *oip = (const void *)(out + sizeof(struct rte_ether_hdr));
    const uint8_t *opts = (const uint8_t *)(oip + 1) + sizeof(struct rte_tcp_hdr);
    assert_int_equal(opts[2] << 8 | opts[3], MSS_MAX4);
    assert_int_equal(opts[6] << 8 | opts[7], MSS_MAX4);
    assert_int_equal(rte_ipv4_udptcp_cksum_verify(oip, oip + 1), 0);
    assert_int_equal(clamped(n), 1);
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
    assert_int_equal(xlb_egress_mss_max(snap, AF_INET, 0, 1), 1300);
    assert_int_equal(xlb_egress_mss_max(snap, AF_INET, 1, 0), 1300);
    assert_int_equal(xlb_egress_mss_max(snap, AF_INET, 0, 0), 1400);
    snap->ports[1].mss_max_ipv4 = 0; /* no limit on one side: the other's */
    assert_int_equal(xlb_egress_mss_max(snap, AF_INET, 0, 1), 1400);
    assert_int_equal(xlb_egress_mss_max(snap, AF_INET6, 0, 1), 0);
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
    assert_int_equal(xlb_port_mss_max(1500, 1360, true), 1340); /* the same packet size */
    assert_int_equal(xlb_port_mss_max(1400, UINT16_MAX, false), 1360);
    assert_int_equal(xlb_port_mss_max(1400, UINT16_MAX, true), 1340);
    assert_int_equal(xlb_port_mss_max(1500, 0, false), 0); /* off */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(syn_and_syn_ack_are_clamped, nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(smaller_offers_pass_unchanged, nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(ipv6_mss_after_a_nop, nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(ipv4_after_a_nop_and_again, nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(every_mss_option_is_clamped, nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(a_port_without_a_limit_changes_nothing, nat_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(two_ports_take_the_lower_limit, nat_setup, nat_teardown),
        cmocka_unit_test(limits_from_mtu_and_setting),
    };
    return cmocka_run_group_tests_name("nat_mss", tests, NULL, NULL);
}
