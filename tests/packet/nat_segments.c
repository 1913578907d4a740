#include "nat_segments.h"

#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rte_ip.h>
#include <rte_tcp.h>

static const struct rte_ether_addr port_mac = FIX_PORT_MAC;
static const struct rte_ether_addr client_mac = FIX_PEER_MAC;
static const struct rte_ether_addr backend_mac = NAT_BACKEND_MAC;
static const struct rte_ether_addr backend6_mac = NAT_BACKEND6_MAC;

/* ---- set-up ---- */

struct nat_fixture *nat_fixture_two_clusters(const char *name, uint32_t flows, unsigned n_workers,
                                             uint32_t max_requests4)
{
    static const char *const ep4[] = {BACKEND4 ":9001"};
    static const char *const ep6[] = {"[" BACKEND6 "]:9001"};
    static const uint32_t slot4[] = {SLOT4}, slot6[] = {SLOT6};
    const struct nat_cluster clusters[] = {
        {"backends4", XLB_LB_ROUND_ROBIN, ep4, 1, slot4, CLUSTER4, 1, max_requests4},
        {"backends6", XLB_LB_ROUND_ROBIN, ep6, 1, slot6, CLUSTER6, 2, 0},
    };
    static const struct nat_backend backends[] = {
        {BACKEND4, NAT_BACKEND_MAC},
        {BACKEND6, NAT_BACKEND6_MAC},
    };
    const struct nat_config cfg = {
        .name = name,
        .flows = flows,
        .port_count = PORT_COUNT,
        .start_tsc = START_TSC,
        .lb_seed = 42,
        .n_workers = n_workers,
        .backends = backends,
        .n_backends = 2,
        .clusters = clusters,
        .n_clusters = 2,
    };
    return nat_fixture_create(&cfg);
}

int nat_setup(void **state)
{
    struct nat_fixture *n = nat_fixture_two_clusters("nat", FLOWS, 0, 0);
    assert_int_equal(n->leaf[0]->endpoints[0].slot, SLOT4);
    assert_int_equal(n->leaf[1]->endpoints[0].slot, SLOT6);
    *state = n;
    return 0;
}

int nat_teardown(void **state)
{
    nat_fixture_destroy(*state);
    return 0;
}

/* ---- frames ---- */

static size_t put_eth(uint8_t *buf, const struct seg *s, uint16_t type)
{
    struct rte_ether_hdr *eth = (struct rte_ether_hdr *)buf;
    eth->dst_addr = *s->eth_dst;
    eth->src_addr = *s->eth_src;
    eth->ether_type = htons(type);
    return sizeof(*eth);
}

/* TCP header with an MSS option on SYNs (4 bytes, or 8 with the NOPs of mss_after_nop), and a
 * window scale (NOP, kind 3) if asked, then the payload; returns its length. */
static size_t put_tcp(uint8_t *l4, const struct seg *s)
{
    struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)l4;
    bool syn = s->flags & RTE_TCP_SYN_FLAG;
    bool wscale = syn && s->wscale != 0;
    size_t mss_len = syn ? (s->mss_after_nop ? 8 : 4) : 0;
    size_t hlen = sizeof(*tcp) + mss_len + (wscale ? 4 : 0);
    memset(tcp, 0, sizeof(*tcp));
    tcp->src_port = htons(s->sport);
    tcp->dst_port = htons(s->dport);
    tcp->sent_seq = htonl(s->seq);
    tcp->recv_ack = htonl(s->ack);
    tcp->data_off = (uint8_t)((hlen / 4) << 4);
    tcp->tcp_flags = s->flags;
    tcp->rx_win = htons(s->zero_window ? 0 : s->window != 0 ? s->window : 29200);
    tcp->tcp_urp = 0;
    if (syn) {
        uint16_t value = s->mss != 0 ? s->mss : 1460;
        const uint8_t mss[4] = {2, 4, (uint8_t)(value >> 8), (uint8_t)value};
        const uint8_t nops[8] = {1, 1, 1, 1, 1, 1, 1, 1};
        memcpy(l4 + sizeof(*tcp), nops, mss_len);
        memcpy(l4 + sizeof(*tcp) + (s->mss_after_nop ? 1 : 0), mss, 4);
    }
    if (wscale) {
        const uint8_t ws[4] = {1, 3, 3, (uint8_t)(s->wscale - 1)};
        memcpy(l4 + sizeof(*tcp) + mss_len, ws, 4);
    }
    size_t plen = s->payload != NULL ? strlen(s->payload) : 0;
    if (plen > 0)
        memcpy(l4 + hlen, s->payload, plen);
    return hlen + plen;
}

static size_t tcp4_frame(uint8_t *buf, const struct seg *s)
{
    size_t off = put_eth(buf, s, RTE_ETHER_TYPE_IPV4);
    struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(buf + off);
    uint8_t *l4 = (uint8_t *)(ip + 1);
    size_t l4_len = put_tcp(l4, s);
    memset(ip, 0, sizeof(*ip));
    ip->version_ihl = 0x45;
    ip->type_of_service = 0x28;
    ip->total_length = htons((uint16_t)(sizeof(*ip) + l4_len));
    ip->packet_id = htons(0x4d2e);
    ip->fragment_offset = htons(RTE_IPV4_HDR_DF_FLAG);
    ip->time_to_live = 61;
    ip->next_proto_id = IPPROTO_TCP;
    assert_int_equal(inet_pton(AF_INET, s->src, &ip->src_addr), 1);
    assert_int_equal(inet_pton(AF_INET, s->dst, &ip->dst_addr), 1);
    ip->hdr_checksum = rte_ipv4_cksum(ip);
    ((struct rte_tcp_hdr *)l4)->cksum = rte_ipv4_udptcp_cksum(ip, l4);
    return off + sizeof(*ip) + l4_len;
}

static size_t tcp6_frame(uint8_t *buf, const struct seg *s)
{
    size_t off = put_eth(buf, s, RTE_ETHER_TYPE_IPV6);
    struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(buf + off);
    uint8_t *l4 = (uint8_t *)(ip + 1);
    size_t l4_len = put_tcp(l4, s);
    memset(ip, 0, sizeof(*ip));
    ip->vtc_flow = htonl(6u << 28 | 0x28u << 20 | 0xbeefu); /* traffic class and flow label */
    ip->payload_len = htons((uint16_t)l4_len);
    ip->proto = IPPROTO_TCP;
    ip->hop_limits = 63;
    assert_int_equal(inet_pton(AF_INET6, s->src, &ip->src_addr), 1);
    assert_int_equal(inet_pton(AF_INET6, s->dst, &ip->dst_addr), 1);
    ((struct rte_tcp_hdr *)l4)->cksum = rte_ipv6_udptcp_cksum(ip, l4);
    return off + sizeof(*ip) + l4_len;
}

bool is_v6(const struct seg *s)
{
    return strchr(s->src, ':') != NULL;
}

size_t tcp_frame(uint8_t *buf, const struct seg *s)
{
    return is_v6(s) ? tcp6_frame(buf, s) : tcp4_frame(buf, s);
}

/* The segment as the client sends it to the VIP, and as the backend sends it to the SNAT. */
/* A side's sequence number before it sent data: its ISN on a SYN, one further after it. */
static uint32_t first_seq(uint32_t isn, uint8_t flags)
{
    return flags & RTE_TCP_SYN_FLAG ? isn : isn + 1;
}

static uint32_t first_ack(uint32_t peer_isn, uint8_t flags)
{
    return flags & RTE_TCP_ACK_FLAG ? peer_isn + 1 : 0;
}

struct seg from_client4(uint16_t sport, uint8_t flags, const char *payload)
{
    return (struct seg){&client_mac,
                        &port_mac,
                        FIX_PEER4,
                        FIX_VIP4,
                        sport,
                        VIP_PORT,
                        flags,
                        first_seq(SEQ_CLIENT, flags),
                        first_ack(SEQ_BACKEND, flags),
                        payload};
}

struct seg from_client6(uint16_t sport, uint8_t flags, const char *payload)
{
    struct seg s = from_client4(sport, flags, payload);
    s.src = FIX_PEER6;
    s.dst = FIX_VIP6;
    return s;
}

struct seg from_backend4(uint16_t snat_port, uint8_t flags, const char *payload)
{
    return (struct seg){&backend_mac,   &port_mac, BACKEND4, SNAT4,
                        VIP_PORT,       snat_port, flags,    first_seq(SEQ_BACKEND, flags),
                        SEQ_CLIENT + 1, payload};
}

struct seg from_backend6(uint16_t snat_port, uint8_t flags, const char *payload)
{
    struct seg s = from_backend4(snat_port, flags, payload);
    s.eth_src = &backend6_mac;
    s.src = BACKEND6;
    s.dst = SNAT6;
    return s;
}

/* What xlb must emit for a client segment: SNAT:port -> backend, from the port's MAC. */
struct seg to_backend(struct seg s, uint16_t snat_port)
{
    bool v6 = is_v6(&s);
    s.eth_src = &port_mac;
    s.eth_dst = v6 ? &backend6_mac : &backend_mac;
    s.src = v6 ? SNAT6 : SNAT4;
    s.dst = v6 ? BACKEND6 : BACKEND4;
    s.sport = snat_port;
    s.dport = VIP_PORT;
    return s;
}

/* What xlb must emit for a backend segment: VIP -> client, to the client's MAC. */
struct seg to_client(struct seg s, uint16_t client_port)
{
    bool v6 = is_v6(&s);
    s.eth_src = &port_mac;
    s.eth_dst = &client_mac;
    s.src = v6 ? FIX_VIP6 : FIX_VIP4;
    s.dst = v6 ? FIX_PEER6 : FIX_PEER4;
    s.sport = VIP_PORT;
    s.dport = client_port;
    return s;
}

/*
 * Send `in`; exactly one frame must come out, byte for byte `expected` (so TTL, TOS, ID, DF,
 * flow label, sequence numbers, options and payload are all unchanged), with valid checksums.
 */
void check_forwarded(struct nat_fixture *n, unsigned index, const struct seg *expected)
{
    uint8_t want[256];
    size_t want_len = tcp_frame(want, expected);
    size_t out_len;
    const uint8_t *out = fixture_tx(n->f, index, &out_len);
    assert_int_equal(out_len, want_len);
    const struct rte_ether_hdr *eth = (const void *)out;
    assert_memory_equal(&eth->src_addr, &port_mac, 6);
    assert_memory_equal(&eth->dst_addr, expected->eth_dst, 6);
    if (is_v6(expected)) {
        const struct rte_ipv6_hdr *ip = (const void *)(eth + 1);
        assert_int_equal(rte_ipv6_udptcp_cksum_verify(ip, ip + 1), 0);
    } else {
        const struct rte_ipv4_hdr *ip = (const void *)(eth + 1);
        assert_int_equal(rte_raw_cksum(ip, sizeof(*ip)), 0xffff);
        assert_int_equal(rte_ipv4_udptcp_cksum_verify(ip, ip + 1), 0);
    }
    if (memcmp(out, want, want_len) != 0) {
        for (size_t i = 0; i < want_len; i++)
            if (out[i] != want[i])
                print_message("byte %zu: got %02x want %02x\n", i, out[i], want[i]);
        fail_msg("forwarded frame %u differs from the expected one", index);
    }
}

void forward(struct nat_fixture *n, const struct seg *in, const struct seg *expected)
{
    forward_burst(n, in, expected, 1);
}

void forward_burst(struct nat_fixture *n, const struct seg *in, const struct seg *expected,
                   unsigned count)
{
    struct rte_mbuf *burst[XLB_RX_BURST];
    assert_true(count <= XLB_RX_BURST);
    for (unsigned i = 0; i < count; i++) {
        uint8_t frame[256];
        size_t len = tcp_frame(frame, &in[i]);
        burst[i] = rte_pktmbuf_alloc(n->f->pool);
        assert_non_null(burst[i]);
        memcpy(rte_pktmbuf_append(burst[i], (uint16_t)len), frame, len);
        if (in[i].nic_checked)
            burst[i]->ol_flags |= RTE_MBUF_F_RX_IP_CKSUM_GOOD;
    }
    unsigned before = n->f->ctx.tx[0].n;
    uint64_t drops_before = fixture_total_drops(n->f);
    xlb_burst_process(&n->f->ctx, n->f->snap, 0, burst, (uint16_t)count);
    assert_int_equal(fixture_total_drops(n->f), drops_before);
    assert_int_equal(n->f->ctx.tx[0].n - before, count);
    for (unsigned i = 0; i < count; i++)
        check_forwarded(n, before + i, &expected[i]);
}

struct seg client_syn4(struct nat_fixture *n, uint16_t client_port, uint16_t snat_port)
{
    struct seg syn = from_client4(client_port, RTE_TCP_SYN_FLAG, NULL);
    struct seg out = to_backend(syn, snat_port);
    forward(n, &syn, &out);
    return syn;
}

struct seg backend_syn_ack4(struct nat_fixture *n, uint16_t snat_port, uint16_t client_port)
{
    struct seg syn_ack = from_backend4(snat_port, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    struct seg out = to_client(syn_ack, client_port);
    forward(n, &syn_ack, &out);
    return syn_ack;
}

struct seg client_ack4(struct nat_fixture *n, uint16_t client_port, uint16_t snat_port)
{
    struct seg ack = from_client4(client_port, RTE_TCP_ACK_FLAG, NULL);
    struct seg out = to_backend(ack, snat_port);
    forward(n, &ack, &out);
    return ack;
}

/* Send `in` and expect it dropped, with this reason counted once more. */
void dropped(struct nat_fixture *n, const struct seg *in, enum xlb_drop_reason reason)
{
    uint8_t frame[256];
    size_t len = tcp_frame(frame, in);
    uint64_t before = fixture_drops(n->f, reason), total = fixture_total_drops(n->f);
    assert_int_equal(fixture_send(n->f, frame, len), 0);
    assert_int_equal(fixture_drops(n->f, reason), before + 1);
    assert_int_equal(fixture_total_drops(n->f), total + 1);
}

struct xlb_flow *client_flow(struct nat_fixture *n, const char *client, uint16_t sport)
{
    struct xlb_flow_key key = {
        .proto = IPPROTO_TCP, .src_port = htons(sport), .dst_port = htons(VIP_PORT)};
    bool v6 = strchr(client, ':') != NULL;
    key.family = v6 ? AF_INET6 : AF_INET;
    assert_int_equal(inet_pton(key.family, client, key.src), 1);
    assert_int_equal(inet_pton(key.family, v6 ? FIX_VIP6 : FIX_VIP4, key.dst), 1);
    return xlb_flow_lookup(n->flows, &key);
}

struct xlb_flow *backend_flow(struct nat_fixture *n, bool v6, uint16_t snat_port)
{
    struct xlb_flow_key key = {.family = v6 ? AF_INET6 : AF_INET,
                               .proto = IPPROTO_TCP,
                               .src_port = htons(VIP_PORT),
                               .dst_port = htons(snat_port)};
    assert_int_equal(inet_pton(key.family, v6 ? BACKEND6 : BACKEND4, key.src), 1);
    assert_int_equal(inet_pton(key.family, v6 ? SNAT6 : SNAT4, key.dst), 1);
    return xlb_flow_lookup(n->flows, &key);
}

/*
 * Send a client segment of no known connection and check the RST that comes back: to the
 * client's MAC, VIP -> client, no payload, checksums valid, RFC 9293's sequence numbers.
 */
void answered_with_reset(struct nat_fixture *n, const struct seg *in)
{
    uint8_t frame[256];
    size_t len = tcp_frame(frame, in);
    unsigned before = n->f->ctx.tx[0].n;
    assert_int_equal(fixture_send(n->f, frame, len), 1);
    size_t out_len;
    const uint8_t *out = fixture_tx(n->f, before, &out_len);
    const struct rte_ether_hdr *eth = (const void *)out;
    assert_memory_equal(&eth->dst_addr, in->eth_src, 6);
    assert_memory_equal(&eth->src_addr, &port_mac, 6);
    const struct rte_tcp_hdr *tcp;
    if (is_v6(in)) {
        const struct rte_ipv6_hdr *ip = (const void *)(eth + 1);
        assert_int_equal(ntohs(ip->payload_len), sizeof(*tcp));
        assert_int_equal(rte_ipv6_udptcp_cksum_verify(ip, ip + 1), 0);
        tcp = (const void *)(ip + 1);
    } else {
        const struct rte_ipv4_hdr *ip = (const void *)(eth + 1);
        uint32_t dst;
        assert_int_equal(inet_pton(AF_INET, in->src, &dst), 1);
        assert_int_equal(ip->dst_addr, dst);
        assert_int_equal(ntohs(ip->total_length), sizeof(*ip) + sizeof(*tcp));
        assert_int_equal(rte_raw_cksum(ip, sizeof(*ip)), 0xffff);
        assert_int_equal(rte_ipv4_udptcp_cksum_verify(ip, ip + 1), 0);
        tcp = (const void *)(ip + 1);
    }
    assert_int_equal(ntohs(tcp->src_port), in->dport);
    assert_int_equal(ntohs(tcp->dst_port), in->sport);
    if (in->flags & RTE_TCP_ACK_FLAG) {
        assert_int_equal(tcp->tcp_flags, RTE_TCP_RST_FLAG);
        assert_int_equal(ntohl(tcp->sent_seq), in->ack);
    } else {
        size_t plen = in->payload ? strlen(in->payload) : 0;
        assert_int_equal(tcp->tcp_flags, RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG);
        assert_int_equal(ntohl(tcp->recv_ack), in->seq + plen + !!(in->flags & RTE_TCP_FIN_FLAG));
    }
}
