/*
 * The fast path (dataplane/flow/fast_hold.h) takes plain IPv4 TCP frames whose header
 * checksum holds, and IPv6 ones with TCP right after the fixed header: a whole connection goes
 * through it byte for byte as through the full path, a padded frame is trimmed, and every frame it
 * must refuse (another MAC, a bad checksum, a port address, a length that does not add up, a TCP
 * header longer than the segment) still gets the full path's verdict.
 */
#include <arpa/inet.h>
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

/* One frame in, with the NIC's verdict on its IPv4 header checksum; returns frames out. */
static unsigned send_flagged(struct nat_fixture *n, const uint8_t *frame, size_t len,
                             uint64_t cksum_flags)
{
    struct rte_mbuf *m = rte_pktmbuf_alloc(n->f->pool);
    assert_non_null(m);
    memcpy(rte_pktmbuf_append(m, (uint16_t)len), frame, len);
    m->ol_flags |= cksum_flags;
    unsigned before = n->f->ctx.tx[0].n;
    xlb_burst_process(&n->f->ctx, n->f->snap, 0, &m, 1);
    return n->f->ctx.tx[0].n - before;
}

/* frame, with these checksum flags, must be dropped for `reason`, once. */
static void refused_flagged(struct nat_fixture *n, const uint8_t *frame, size_t len,
                            uint64_t cksum_flags, enum xlb_drop_reason reason)
{
    uint64_t before = fixture_drops(n->f, reason), total = fixture_total_drops(n->f);
    assert_int_equal(send_flagged(n, frame, len, cksum_flags), 0);
    assert_int_equal(fixture_drops(n->f, reason), before + 1);
    assert_int_equal(fixture_total_drops(n->f), total + 1);
}

static void refused(struct nat_fixture *n, const uint8_t *frame, size_t len,
                    enum xlb_drop_reason reason)
{
    refused_flagged(n, frame, len, RTE_MBUF_F_RX_IP_CKSUM_GOOD, reason);
}

static struct seg checked(struct seg s)
{
    s.nic_checked = true;
    return s;
}

/* A bare ACK with `padding` bytes after its datagram (Ethernet's padding of short frames) must
 * leave without them, byte for byte. */
static void padded_ack_leaves_trimmed(struct nat_fixture *n, struct seg ack, size_t padding,
                                      uint64_t cksum_flags)
{
    uint8_t frame[256], want[256];
    size_t len = tcp_frame(frame, &ack);
    memset(frame + len, 0xee, padding);
    struct seg ack_out = to_backend(ack, PORT_BASE);
    size_t want_len = tcp_frame(want, &ack_out);
    unsigned before = n->f->ctx.tx[0].n;
    assert_int_equal(send_flagged(n, frame, len + padding, cksum_flags), 1);
    size_t out_len;
    const uint8_t *sent = fixture_tx(n->f, before, &out_len);
    assert_int_equal(out_len, want_len);
    assert_memory_equal(sent, want, want_len);
}

static void a_connection_goes_through_byte_for_byte(void **state)
{
    struct nat_fixture *n = *state;
    struct seg in[4] = {
        checked(from_client4(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL)),
        checked(from_backend4(PORT_BASE, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, NULL)),
        checked(from_client4(CLIENT_PORT, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, PAYLOAD_TEXT)),
        checked(from_backend4(PORT_BASE, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, "HTTP/1.1 200")),
    };
    struct seg out[4] = {to_backend(in[0], PORT_BASE), to_client(in[1], CLIENT_PORT),
                         to_backend(in[2], PORT_BASE), to_client(in[3], CLIENT_PORT)};
    for (unsigned i = 0; i < 4; i++) /* one at a time, then the same again in one burst */
        forward(n, &in[i], &out[i]);
    struct xlb_flow *f = client_flow(n, FIX_PEER4, CLIENT_PORT);
    assert_non_null(f);
    assert_int_equal(f->state, XLB_FLOW_ESTABLISHED);
    forward_burst(n, &in[2], &out[2], 2);

    /* A bare ACK padded to 60 bytes leaves without the padding. */
    uint8_t frame[256];
    struct seg ack = checked(from_client4(CLIENT_PORT, RTE_TCP_ACK_FLAG, NULL));
    padded_ack_leaves_trimmed(n, ack, 60 - tcp_frame(frame, &ack), RTE_MBUF_F_RX_IP_CKSUM_GOOD);
}

static void refused_frames_get_the_full_paths_verdict(void **state)
{
    struct nat_fixture *n = *state;
    client_syn4(n, CLIENT_PORT, PORT_BASE);
    struct seg data = from_client4(CLIENT_PORT, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, PAYLOAD_TEXT);
    uint8_t frame[256];
    size_t len = tcp_frame(frame, &data);
    struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(frame + sizeof(struct rte_ether_hdr));
    struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)(ip + 1);

    /* Another MAC. */
    frame[0] ^= 0x02;
    refused(n, frame, len, XLB_DROP_NOT_OUR_MAC);
    frame[0] ^= 0x02;
    /* A header checksum the NIC found bad, or that does not hold where it said nothing. */
    refused_flagged(n, frame, len, RTE_MBUF_F_RX_IP_CKSUM_BAD, XLB_DROP_IPV4_BAD_CHECKSUM);
    ip->hdr_checksum ^= 0x0101;
    refused_flagged(n, frame, len, 0, XLB_DROP_IPV4_BAD_CHECKSUM);
    ip->hdr_checksum ^= 0x0101;
    /* A datagram longer than the frame. */
    uint16_t total = ip->total_length;
    ip->total_length = htons((uint16_t)(ntohs(total) + 1));
    refused(n, frame, len, XLB_DROP_IPV4_MALFORMED);
    ip->total_length = total;
    /* A TCP header longer than the segment (data offset 15 words in a 20-byte segment). */
    struct seg bare = from_client4(CLIENT_PORT, RTE_TCP_ACK_FLAG, NULL);
    len = tcp_frame(frame, &bare);
    tcp->data_off = 15 << 4;
    refused(n, frame, len, XLB_DROP_TCP_MALFORMED);
    /* TCP to one of xlb's own port addresses. */
    struct seg to_port = from_client4(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    to_port.dst = FIX_PORT4;
    len = tcp_frame(frame, &to_port);
    refused(n, frame, len, XLB_DROP_TCP_NO_SERVICE);
    /* Nothing was forwarded, and the flow is as the SYN left it. */
    assert_int_equal(client_flow(n, FIX_PEER4, CLIENT_PORT)->state, XLB_FLOW_SYN_SENT);
}

static void an_ipv6_connection_goes_through_byte_for_byte(void **state)
{
    struct nat_fixture *n = *state;
    struct seg in[4] = {
        from_client6(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL),
        from_backend6(PORT_BASE, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, NULL),
        from_client6(CLIENT_PORT, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, PAYLOAD_TEXT),
        from_backend6(PORT_BASE, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, "HTTP/1.1 200"),
    };
    struct seg out[4] = {to_backend(in[0], PORT_BASE), to_client(in[1], CLIENT_PORT),
                         to_backend(in[2], PORT_BASE), to_client(in[3], CLIENT_PORT)};
    for (unsigned i = 0; i < 4; i++)
        forward(n, &in[i], &out[i]);
    struct xlb_flow *f = client_flow(n, FIX_PEER6, CLIENT_PORT);
    assert_non_null(f);
    assert_int_equal(f->state, XLB_FLOW_ESTABLISHED);
    forward_burst(n, &in[2], &out[2], 2);

    /* A bare ACK with trailing bytes leaves without them. */
    padded_ack_leaves_trimmed(n, from_client6(CLIENT_PORT, RTE_TCP_ACK_FLAG, NULL), 8, 0);
}

static void refused_ipv6_frames_get_the_full_paths_verdict(void **state)
{
    struct nat_fixture *n = *state;
    struct seg syn = from_client6(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    struct seg syn_out = to_backend(syn, PORT_BASE);
    forward(n, &syn, &syn_out);
    struct seg data = from_client6(CLIENT_PORT, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, PAYLOAD_TEXT);
    uint8_t frame[256];
    size_t len = tcp_frame(frame, &data);
    struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(frame + sizeof(struct rte_ether_hdr));
    struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)(ip + 1);

    /* Another MAC. */
    frame[0] ^= 0x02;
    refused_flagged(n, frame, len, 0, XLB_DROP_NOT_OUR_MAC);
    frame[0] ^= 0x02;
    /* A payload longer than the frame. */
    uint16_t payload = ip->payload_len;
    ip->payload_len = htons((uint16_t)(ntohs(payload) + 1));
    refused_flagged(n, frame, len, 0, XLB_DROP_IPV6_MALFORMED);
    ip->payload_len = payload;
    /* An extension header (hop-by-hop options) before TCP. */
    ip->proto = IPPROTO_HOPOPTS;
    refused_flagged(n, frame, len, 0, XLB_DROP_IPV6_EXT_HEADER);
    ip->proto = IPPROTO_TCP;
    /* A TCP header longer than the segment. */
    struct seg bare = from_client6(CLIENT_PORT, RTE_TCP_ACK_FLAG, NULL);
    len = tcp_frame(frame, &bare);
    tcp->data_off = 15 << 4;
    refused_flagged(n, frame, len, 0, XLB_DROP_TCP_MALFORMED);
    /* TCP to one of xlb's own port addresses. */
    struct seg to_port = from_client6(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    to_port.dst = FIX_PORT6;
    len = tcp_frame(frame, &to_port);
    refused_flagged(n, frame, len, 0, XLB_DROP_TCP_NO_SERVICE);
    assert_int_equal(client_flow(n, FIX_PEER6, CLIENT_PORT)->state, XLB_FLOW_SYN_SENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_connection_goes_through_byte_for_byte, nat_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(refused_frames_get_the_full_paths_verdict, nat_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(an_ipv6_connection_goes_through_byte_for_byte, nat_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(refused_ipv6_frames_get_the_full_paths_verdict, nat_setup,
                                        nat_teardown),
    };
    return cmocka_run_group_tests_name("nat_fast_path", tests, NULL, NULL);
}
