/* Packet fixtures through the worker's burst function: frame in, exact frame (or drop) out. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <rte_arp.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "packet_fixture.h"
#include "xlb_msg.h"

static const struct rte_ether_addr port_mac = FIX_PORT_MAC;
static const struct rte_ether_addr peer_mac = FIX_PEER_MAC;
static const struct rte_ether_addr gw_mac = FIX_GW_MAC;
static const struct rte_ether_addr broadcast = {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};

/* Source-NAT addresses: owned like VIPs (ARP, ND, ping), but TCP to them is a backend's reply. */
#define SNAT4 "198.18.0.11"
#define SNAT6 "2001:2::11"

static void own(struct fixture *f, const char *text, uint8_t role)
{
    struct xlb_addr_entry e = {.role = role, .port_mask = 1};
    assert_int_equal(xlb_addr_parse(text, &e.addr), 0);
    assert_int_equal(xlb_snapshot_add_address(f->snap, &e), 0);
}

static int setup(void **state)
{
    struct fixture *f = fixture_create();
    own(f, SNAT4, XLB_ROLE_SNAT);
    own(f, SNAT6, XLB_ROLE_SNAT);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_destroy(*state);
    return 0;
}

static uint32_t ip4(const char *text)
{
    struct in_addr a;
    inet_pton(AF_INET, text, &a);
    return a.s_addr;
}

static void arp_request_for_vip_gets_reply(void **state)
{
    struct fixture *f = *state;
    uint8_t frame[128];
    size_t len = build_arp(frame, RTE_ARP_OP_REQUEST, FIX_PEER4, FIX_VIP4, &broadcast, &peer_mac);
    assert_int_equal(fixture_send(f, frame, len), 1);

    size_t out_len;
    const uint8_t *out = fixture_tx(f, 0, &out_len);
    const struct rte_ether_hdr *eth = (const void *)out;
    const struct rte_arp_hdr *arp = (const void *)(eth + 1);
    assert_memory_equal(&eth->dst_addr, &peer_mac, 6);
    assert_memory_equal(&eth->src_addr, &port_mac, 6);
    assert_int_equal(ntohs(arp->arp_opcode), RTE_ARP_OP_REPLY);
    assert_memory_equal(&arp->arp_data.arp_sha, &port_mac, 6);
    assert_int_equal(arp->arp_data.arp_sip, ip4(FIX_VIP4));
    assert_memory_equal(&arp->arp_data.arp_tha, &peer_mac, 6);
    assert_int_equal(arp->arp_data.arp_tip, ip4(FIX_PEER4));
    assert_int_equal(f->stats.events[XLB_EVENT_ARP_REPLIES], 1);
    assert_int_equal(fixture_total_drops(f), 0);
}

static void arp_for_port_address_is_answered_too(void **state)
{
    struct fixture *f = *state;
    uint8_t frame[128];
    size_t len = build_arp(frame, RTE_ARP_OP_REQUEST, FIX_PEER4, FIX_PORT4, &broadcast, &peer_mac);
    assert_int_equal(fixture_send(f, frame, len), 1);
}

static void arp_for_someone_else_is_dropped(void **state)
{
    struct fixture *f = *state;
    uint8_t frame[128];
    size_t len =
        build_arp(frame, RTE_ARP_OP_REQUEST, FIX_PEER4, "198.18.0.77", &broadcast, &peer_mac);
    assert_int_equal(fixture_send(f, frame, len), 0);
    assert_int_equal(fixture_drops(f, XLB_DROP_ARP_NOT_OURS), 1);
}

static void arp_and_ns_for_snat_addresses_are_answered(void **state)
{
    struct fixture *f = *state;
    uint8_t frame[256];
    size_t len = build_arp(frame, RTE_ARP_OP_REQUEST, FIX_PEER4, SNAT4, &broadcast, &peer_mac);
    assert_int_equal(fixture_send(f, frame, len), 1);
    size_t out_len;
    const uint8_t *out = fixture_tx(f, 0, &out_len);
    const struct rte_arp_hdr *arp = (const void *)(out + 14);
    assert_int_equal(ntohs(arp->arp_opcode), RTE_ARP_OP_REPLY);
    assert_memory_equal(&arp->arp_data.arp_sha, &port_mac, 6);
    assert_int_equal(arp->arp_data.arp_sip, ip4(SNAT4));
    assert_int_equal(arp->arp_data.arp_tip, ip4(FIX_PEER4));

    len = build_ns(frame, FIX_PEER6, SNAT6, true, 255);
    assert_int_equal(fixture_send(f, frame, len), 1);
    out = fixture_tx(f, 1, &out_len);
    const struct rte_ipv6_hdr *ip = (const void *)(out + 14);
    const uint8_t *na = (const uint8_t *)(ip + 1);
    uint8_t snat[16];
    inet_pton(AF_INET6, SNAT6, snat);
    assert_memory_equal(ip->src_addr, snat, 16);
    assert_int_equal(na[0], 136);
    assert_memory_equal(na + 8, snat, 16);
    assert_memory_equal(na + 26, &port_mac, 6);
    assert_int_equal(rte_ipv6_udptcp_cksum_verify(ip, na), 0);
    assert_int_equal(f->stats.events[XLB_EVENT_ARP_REPLIES], 1);
    assert_int_equal(f->stats.events[XLB_EVENT_ND_ADVERTISEMENTS], 1);
    assert_int_equal(fixture_total_drops(f), 0);
}

/* Ping answers for every owned address, SNAT included: operators can check the path to it. */
static void echo_to_snat_addresses_gets_reply(void **state)
{
    struct fixture *f = *state;
    uint8_t frame[256];
    size_t len = build_icmp4_echo(frame, FIX_PEER4, SNAT4, 10, 0);
    assert_int_equal(fixture_send(f, frame, len), 1);
    size_t out_len;
    const uint8_t *out = fixture_tx(f, 0, &out_len);
    const struct rte_ipv4_hdr *ip = (const void *)(out + 14);
    const struct rte_icmp_hdr *icmp = (const void *)(ip + 1);
    assert_int_equal(ip->src_addr, ip4(SNAT4));
    assert_int_equal(ip->dst_addr, ip4(FIX_PEER4));
    assert_int_equal(icmp->icmp_type, RTE_IP_ICMP_ECHO_REPLY);
    assert_int_equal(rte_raw_cksum(icmp, 18), 0xffff);

    len = build_icmp6_echo(frame, FIX_PEER6, SNAT6, 16);
    assert_int_equal(fixture_send(f, frame, len), 1);
    out = fixture_tx(f, 1, &out_len);
    const struct rte_ipv6_hdr *ip6 = (const void *)(out + 14);
    uint8_t snat[16];
    inet_pton(AF_INET6, SNAT6, snat);
    assert_memory_equal(ip6->src_addr, snat, 16);
    assert_int_equal(((const uint8_t *)(ip6 + 1))[0], 129);
    assert_int_equal(rte_ipv6_udptcp_cksum_verify(ip6, ip6 + 1), 0);
    assert_int_equal(f->stats.events[XLB_EVENT_ECHO_REPLIES], 2);
}

/* TCP to a SNAT address is a backend's reply; without forwarding (no flow table) no flow can
 * own it. */
static void tcp_to_snat_without_forwarding_is_dropped(void **state)
{
    struct fixture *f = *state;
    uint8_t frame[256];
    size_t len =
        build_tcp4(frame, "198.18.0.20", SNAT4, 40000, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG);
    assert_int_equal(fixture_send(f, frame, len), 0);
    assert_int_equal(fixture_drops(f, XLB_DROP_TCP_NO_SERVICE), 1);
}

static void vlan_tagged_arp_reply_keeps_its_tag(void **state)
{
    struct fixture *f = *state;
    uint8_t frame[128];
    size_t len = build_arp(frame, RTE_ARP_OP_REQUEST, FIX_PEER4, FIX_VIP4, &broadcast, &peer_mac);
    len = add_vlan(frame, len, 42);
    assert_int_equal(fixture_send(f, frame, len), 1);
    size_t out_len;
    const uint8_t *out = fixture_tx(f, 0, &out_len);
    assert_int_equal(out[12], 0x81);
    assert_int_equal(out[15], 42);
    const struct rte_arp_hdr *arp = (const void *)(out + 18);
    assert_int_equal(ntohs(arp->arp_opcode), RTE_ARP_OP_REPLY);
    assert_int_equal(arp->arp_data.arp_sip, ip4(FIX_VIP4));
}

static void gateway_arp_reply_is_reported(void **state)
{
    struct fixture *f = *state;
    uint8_t frame[128];
    size_t len = build_arp(frame, RTE_ARP_OP_REPLY, FIX_GW4, FIX_PORT4, &port_mac, &gw_mac);
    assert_int_equal(fixture_send(f, frame, len), 0);
    assert_int_equal(fixture_total_drops(f), 0);
    assert_int_equal(f->stats.events[XLB_EVENT_CONSUMED], 1);

    struct xlb_msg msg;
    assert_int_equal(xlb_msg_receive(f->to_control, &msg), 0);
    assert_int_equal(msg.type, XLB_MSG_NEIGHBOUR_SEEN);
    assert_int_equal(msg.port_index, 0);
    assert_memory_equal(&msg.mac, &gw_mac, 6);
    struct xlb_addr gw;
    xlb_addr_parse(FIX_GW4, &gw);
    assert_true(xlb_addr_equal(&msg.addr, &gw));
    assert_int_not_equal(xlb_msg_receive(f->to_control, &msg), 0);
}

static void neighbour_solicitation_gets_advertisement(void **state)
{
    struct fixture *f = *state;
    uint8_t frame[256];
    size_t len = build_ns(frame, FIX_PEER6, FIX_VIP6, true, 255);
    assert_int_equal(fixture_send(f, frame, len), 1);

    size_t out_len;
    const uint8_t *out = fixture_tx(f, 0, &out_len);
    assert_int_equal(out_len, 14 + 40 + 32);
    const struct rte_ether_hdr *eth = (const void *)out;
    const struct rte_ipv6_hdr *ip = (const void *)(eth + 1);
    const uint8_t *na = (const uint8_t *)(ip + 1);
    uint8_t vip[16], peer[16];
    inet_pton(AF_INET6, FIX_VIP6, vip);
    inet_pton(AF_INET6, FIX_PEER6, peer);
    assert_memory_equal(&eth->dst_addr, &peer_mac, 6);
    assert_memory_equal(&eth->src_addr, &port_mac, 6);
    assert_memory_equal(ip->src_addr, vip, 16);
    assert_memory_equal(ip->dst_addr, peer, 16);
    assert_int_equal(ip->hop_limits, 255);
    assert_int_equal(na[0], 136);
    assert_int_equal(na[4], 0x60); /* solicited + override, not a router */
    assert_memory_equal(na + 8, vip, 16);
    assert_int_equal(na[24], 2); /* target link-layer address option */
    assert_memory_equal(na + 26, &port_mac, 6);
    assert_int_equal(rte_ipv6_udptcp_cksum_verify(ip, na), 0);
    assert_int_equal(f->stats.events[XLB_EVENT_ND_ADVERTISEMENTS], 1);
}

static void solicitation_without_slla_still_answered(void **state)
{
    struct fixture *f = *state;
    uint8_t frame[256];
    size_t len = build_ns(frame, FIX_PEER6, FIX_PORT6, false, 255);
    assert_int_equal(fixture_send(f, frame, len), 1);
    size_t out_len;
    const uint8_t *out = fixture_tx(f, 0, &out_len);
    assert_memory_equal(out, &peer_mac, 6); /* back to the frame's source */
}

static void solicitation_from_off_link_is_dropped(void **state)
{
    struct fixture *f = *state;
    uint8_t frame[256];
    size_t len = build_ns(frame, FIX_PEER6, FIX_VIP6, true, 64);
    assert_int_equal(fixture_send(f, frame, len), 0);
    assert_int_equal(fixture_drops(f, XLB_DROP_ND_MALFORMED), 1);
}

static void gateway_advertisement_is_reported(void **state)
{
    struct fixture *f = *state;
    uint8_t frame[256];
    size_t len = build_na(frame, FIX_GW6, &gw_mac);
    assert_int_equal(fixture_send(f, frame, len), 0);
    struct xlb_msg msg;
    assert_int_equal(xlb_msg_receive(f->to_control, &msg), 0);
    assert_memory_equal(&msg.mac, &gw_mac, 6);
    assert_int_equal(msg.addr.family, AF_INET6);
}

static void echo_to_vip_gets_reply_without_padding(void **state)
{
    struct fixture *f = *state;
    uint8_t frame[256];
    /* 18-byte datagram payload: the frame is padded on the wire, the reply must not be. */
    size_t len = build_icmp4_echo(frame, FIX_PEER4, FIX_VIP4, 10, 60);
    assert_int_equal(len, 60);
    assert_int_equal(fixture_send(f, frame, len), 1);

    size_t out_len;
    const uint8_t *out = fixture_tx(f, 0, &out_len);
    assert_int_equal(out_len, 14 + 20 + 8 + 10);
    const struct rte_ipv4_hdr *ip = (const void *)(out + 14);
    const struct rte_icmp_hdr *icmp = (const void *)(ip + 1);
    assert_memory_equal(out, &peer_mac, 6);
    assert_memory_equal(out + 6, &port_mac, 6);
    assert_int_equal(ip->src_addr, ip4(FIX_VIP4));
    assert_int_equal(ip->dst_addr, ip4(FIX_PEER4));
    assert_int_equal(rte_raw_cksum(ip, 20), 0xffff);
    assert_int_equal(icmp->icmp_type, RTE_IP_ICMP_ECHO_REPLY);
    assert_int_equal(ntohs(icmp->icmp_ident), 0x1234);
    assert_int_equal(ntohs(icmp->icmp_seq_nb), 7);
    assert_int_equal(rte_raw_cksum(icmp, 18), 0xffff);
    assert_memory_equal((const uint8_t *)(icmp + 1), frame + 14 + 20 + 8, 10);
}

static void echo6_to_vip_gets_reply(void **state)
{
    struct fixture *f = *state;
    uint8_t frame[256];
    size_t len = build_icmp6_echo(frame, FIX_PEER6, FIX_VIP6, 32);
    assert_int_equal(fixture_send(f, frame, len), 1);
    size_t out_len;
    const uint8_t *out = fixture_tx(f, 0, &out_len);
    const struct rte_ipv6_hdr *ip = (const void *)(out + 14);
    const uint8_t *icmp = (const uint8_t *)(ip + 1);
    uint8_t vip[16];
    inet_pton(AF_INET6, FIX_VIP6, vip);
    assert_memory_equal(ip->src_addr, vip, 16);
    assert_int_equal(icmp[0], 129);
    assert_int_equal(rte_ipv6_udptcp_cksum_verify(ip, icmp), 0);
    assert_int_equal(f->stats.events[XLB_EVENT_ECHO_REPLIES], 1);
}

static void bad_checksums_are_dropped(void **state)
{
    struct fixture *f = *state;
    uint8_t frame[256];
    size_t len = build_icmp4_echo(frame, FIX_PEER4, FIX_VIP4, 10, 0);
    frame[14 + 10] ^= 0x01; /* IPv4 header checksum */
    assert_int_equal(fixture_send(f, frame, len), 0);
    assert_int_equal(fixture_drops(f, XLB_DROP_IPV4_BAD_CHECKSUM), 1);

    len = build_icmp4_echo(frame, FIX_PEER4, FIX_VIP4, 10, 0);
    frame[len - 1] ^= 0x40; /* ICMP payload */
    assert_int_equal(fixture_send(f, frame, len), 0);
    assert_int_equal(fixture_drops(f, XLB_DROP_ICMP_BAD_CHECKSUM), 1);

    len = build_icmp6_echo(frame, FIX_PEER6, FIX_VIP6, 8);
    frame[len - 1] ^= 0x40;
    assert_int_equal(fixture_send(f, frame, len), 0);
    assert_int_equal(fixture_drops(f, XLB_DROP_ICMP_BAD_CHECKSUM), 2);
}

static void others_traffic_is_dropped_by_reason(void **state)
{
    struct fixture *f = *state;
    uint8_t frame[256];
    size_t len = build_icmp4_echo(frame, FIX_PEER4, "198.18.0.77", 10, 0);
    assert_int_equal(fixture_send(f, frame, len), 0);
    assert_int_equal(fixture_drops(f, XLB_DROP_NOT_OUR_ADDRESS), 1);

    len = build_icmp4_echo(frame, FIX_PEER4, FIX_VIP4, 10, 0);
    frame[0] = 0x02; /* unicast to another MAC */
    frame[5] = 0x99;
    assert_int_equal(fixture_send(f, frame, len), 0);
    assert_int_equal(fixture_drops(f, XLB_DROP_NOT_OUR_MAC), 1);

    len = build_icmp4_echo(frame, FIX_PEER4, FIX_VIP4, 10, 0);
    frame[12] = 0x88; /* an ethertype xlb does not speak */
    frame[13] = 0xcc;
    assert_int_equal(fixture_send(f, frame, len), 0);
    assert_int_equal(fixture_drops(f, XLB_DROP_ETHERTYPE_UNSUPPORTED), 1);

    len = build_tcp4(frame, FIX_PEER4, FIX_VIP4, 8080, RTE_TCP_SYN_FLAG);
    assert_int_equal(fixture_send(f, frame, len), 0);
    assert_int_equal(fixture_drops(f, XLB_DROP_TCP_NO_SERVICE), 1);

    len = build_icmp4_echo(frame, FIX_PEER4, FIX_VIP4, 10, 0);
    frame[14 + 6] = 0x20; /* more fragments */
    frame[14 + 10] = frame[14 + 11] = 0;
    *(uint16_t *)(frame + 14 + 10) = rte_ipv4_cksum((const struct rte_ipv4_hdr *)(frame + 14));
    assert_int_equal(fixture_send(f, frame, len), 0);
    assert_int_equal(fixture_drops(f, XLB_DROP_IPV4_FRAGMENT), 1);
}

static void every_truncation_is_dropped_safely(void **state)
{
    struct fixture *f = *state;
    uint8_t frame[256];
    size_t lens[4];
    uint8_t frames[4][256];
    lens[0] = build_icmp4_echo(frames[0], FIX_PEER4, FIX_VIP4, 16, 0);
    lens[1] = build_icmp6_echo(frames[1], FIX_PEER6, FIX_VIP6, 16);
    lens[2] = build_ns(frames[2], FIX_PEER6, FIX_VIP6, true, 255);
    lens[3] = build_arp(frames[3], RTE_ARP_OP_REQUEST, FIX_PEER4, FIX_VIP4, &broadcast, &peer_mac);
    lens[3] = 42; /* the ARP frame without padding */
    for (int k = 0; k < 4; k++) {
        for (size_t cut = 0; cut < lens[k]; cut++) {
            memcpy(frame, frames[k], cut);
            assert_int_equal(fixture_send(f, frame, cut), 0);
        }
    }
    uint64_t sent = 0;
    for (int k = 0; k < 4; k++)
        sent += lens[k];
    assert_int_equal(fixture_total_drops(f), sent);
}

static void solicit_message_sends_arp_request_and_ns(void **state)
{
    struct fixture *f = *state;
    struct xlb_msg msg = {.type = XLB_MSG_SOLICIT, .port_index = 0};
    xlb_addr_parse(FIX_GW4, &msg.addr);
    xlb_burst_handle_message(&f->ctx, f->snap, &msg);
    xlb_addr_parse(FIX_GW6, &msg.addr);
    xlb_burst_handle_message(&f->ctx, f->snap, &msg);
    xlb_addr_parse("203.0.113.1", &msg.addr); /* not on-link: nothing to send */
    xlb_burst_handle_message(&f->ctx, f->snap, &msg);
    assert_int_equal(f->ctx.tx[0].n, 2);
    assert_int_equal(f->stats.events[XLB_EVENT_SOLICITATIONS_SENT], 2);

    size_t len;
    const uint8_t *arp_frame = fixture_tx(f, 0, &len);
    const struct rte_arp_hdr *arp = (const void *)(arp_frame + 14);
    assert_memory_equal(arp_frame, &broadcast, 6);
    assert_int_equal(ntohs(arp->arp_opcode), RTE_ARP_OP_REQUEST);
    assert_int_equal(arp->arp_data.arp_sip, ip4(FIX_PORT4));
    assert_int_equal(arp->arp_data.arp_tip, ip4(FIX_GW4));

    const uint8_t *ns_frame = fixture_tx(f, 1, &len);
    const struct rte_ipv6_hdr *ip = (const void *)(ns_frame + 14);
    uint8_t group[16] = {0xff, 0x02, [11] = 0x01, [12] = 0xff, [15] = 0x01};
    const uint8_t group_mac[6] = {0x33, 0x33, 0xff, 0x00, 0x00, 0x01};
    assert_memory_equal(ns_frame, group_mac, 6);
    assert_memory_equal(ip->dst_addr, group, 16);
    assert_int_equal(ip->hop_limits, 255);
    assert_int_equal(rte_ipv6_udptcp_cksum_verify(ip, ip + 1), 0);

    /* What xlb sends, xlb itself would accept as a valid solicitation. */
    fixture_clear_tx(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(arp_request_for_vip_gets_reply, setup, teardown),
        cmocka_unit_test_setup_teardown(arp_for_port_address_is_answered_too, setup, teardown),
        cmocka_unit_test_setup_teardown(arp_for_someone_else_is_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(arp_and_ns_for_snat_addresses_are_answered, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(echo_to_snat_addresses_gets_reply, setup, teardown),
        cmocka_unit_test_setup_teardown(tcp_to_snat_without_forwarding_is_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(vlan_tagged_arp_reply_keeps_its_tag, setup, teardown),
        cmocka_unit_test_setup_teardown(gateway_arp_reply_is_reported, setup, teardown),
        cmocka_unit_test_setup_teardown(neighbour_solicitation_gets_advertisement, setup, teardown),
        cmocka_unit_test_setup_teardown(solicitation_without_slla_still_answered, setup, teardown),
        cmocka_unit_test_setup_teardown(solicitation_from_off_link_is_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(gateway_advertisement_is_reported, setup, teardown),
        cmocka_unit_test_setup_teardown(echo_to_vip_gets_reply_without_padding, setup, teardown),
        cmocka_unit_test_setup_teardown(echo6_to_vip_gets_reply, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_checksums_are_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(others_traffic_is_dropped_by_reason, setup, teardown),
        cmocka_unit_test_setup_teardown(every_truncation_is_dropped_safely, setup, teardown),
        cmocka_unit_test_setup_teardown(solicit_message_sends_arp_request_and_ns, setup, teardown),
    };
    return cmocka_run_group_tests_name("burst", tests, NULL, NULL);
}
