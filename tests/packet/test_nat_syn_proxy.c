/*
 * The SYN proxy of L4 VIPs (dataplane/nat/nat_proxy.c): a SYN gets a cookie SYN-ACK and no
 * flow; an ACK with a bad cookie is counted and answered with a RST, nothing sent to a backend; a
 * good one makes the flow and the backend SYN with the client's options; the backend's SYN-ACK is
 * absorbed and ACKed; then data both ways has seq, ack, SACK edges, timestamps and windows
 * translated, checksums valid; RSTs both ways; sequence numbers across 2^32.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "nat/nat.h"
#include "nat/nat_proxy.h"
#include "nat_segments.h"
#include "xlb_tcp_options.h"

#define CLIENT_TSVAL  1000u
#define BACKEND_TSVAL 555555u

static const struct rte_ether_addr port_mac = FIX_PORT_MAC, peer_mac = FIX_PEER_MAC,
                                   backend_mac = NAT_BACKEND_MAC, backend6_mac = NAT_BACKEND6_MAC;

/* A TCP segment over IPv4, as built or as parsed from a transmitted frame. */
struct pkt {
    const char *src, *dst;
    uint16_t sport, dport;
    uint8_t flags;
    uint32_t seq, ack;
    uint16_t window;
    struct xlb_tcp_opts opts; /* written as SYN options on SYNs, else TS and SACK */
    const char *payload;
};

static size_t build(uint8_t *buf, const struct pkt *p, bool from_backend)
{
    bool v6 = strchr(p->src, ':') != NULL;
    struct rte_ether_hdr *eth = (struct rte_ether_hdr *)buf;
    eth->src_addr = from_backend ? (v6 ? backend6_mac : backend_mac) : peer_mac;
    eth->dst_addr = port_mac;
    eth->ether_type = rte_cpu_to_be_16(v6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
    struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
    struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(eth + 1);
    struct rte_tcp_hdr *tcp = v6 ? (struct rte_tcp_hdr *)(ip6 + 1) : (struct rte_tcp_hdr *)(ip + 1);
    uint8_t *opts = (uint8_t *)(tcp + 1);
    uint32_t olen = 0;
    if (p->flags & RTE_TCP_SYN_FLAG) {
        olen = xlb_tcp_options_write_syn(opts, &p->opts);
    } else {
        if (p->opts.has_ts)
            olen = xlb_tcp_options_write_ts(opts, p->opts.tsval, p->opts.tsecr);
        if (p->opts.n_sack > 0) {
            opts[olen++] = XLB_TCPOPT_NOP;
            opts[olen++] = XLB_TCPOPT_NOP;
            opts[olen++] = XLB_TCPOPT_SACK;
            opts[olen++] = (uint8_t)(2 + 8 * p->opts.n_sack);
            for (unsigned i = 0; i < p->opts.n_sack; i++) {
                uint32_t l = htonl(p->opts.sack_left[i]), r = htonl(p->opts.sack_right[i]);
                memcpy(opts + olen, &l, 4);
                memcpy(opts + olen + 4, &r, 4);
                olen += 8;
            }
        }
    }
    size_t plen = p->payload != NULL ? strlen(p->payload) : 0;
    memcpy(opts + olen, p->payload != NULL ? p->payload : "", plen);
    uint16_t l4_len = (uint16_t)(sizeof(*tcp) + olen + plen);
    tcp->src_port = htons(p->sport);
    tcp->dst_port = htons(p->dport);
    tcp->sent_seq = htonl(p->seq);
    tcp->recv_ack = htonl(p->ack);
    tcp->data_off = (uint8_t)(((sizeof(*tcp) + olen) / 4) << 4);
    tcp->tcp_flags = p->flags;
    tcp->rx_win = htons(p->window != 0 ? p->window : 1000);
    tcp->cksum = 0;
    tcp->tcp_urp = 0;
    if (v6) {
        memset(ip6, 0, sizeof(*ip6));
        ip6->vtc_flow = rte_cpu_to_be_32(6u << 28);
        ip6->payload_len = rte_cpu_to_be_16(l4_len);
        ip6->proto = IPPROTO_TCP;
        ip6->hop_limits = 64;
        inet_pton(AF_INET6, p->src, ip6->src_addr);
        inet_pton(AF_INET6, p->dst, ip6->dst_addr);
        tcp->cksum = rte_ipv6_udptcp_cksum(ip6, tcp);
        return sizeof(*eth) + sizeof(*ip6) + l4_len;
    }
    memset(ip, 0, sizeof(*ip));
    ip->version_ihl = 0x45;
    ip->time_to_live = 64;
    ip->next_proto_id = IPPROTO_TCP;
    ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + l4_len));
    inet_pton(AF_INET, p->src, &ip->src_addr);
    inet_pton(AF_INET, p->dst, &ip->dst_addr);
    ip->hdr_checksum = rte_ipv4_cksum(ip);
    tcp->cksum = rte_ipv4_udptcp_cksum(ip, tcp);
    return sizeof(*eth) + sizeof(*ip) + l4_len;
}

/* Send p; returns how many frames came out (fixture_send's count). */
static unsigned send_pkt(struct nat_fixture *n, const struct pkt *p, bool from_backend)
{
    uint8_t frame[256];
    size_t len = build(frame, p, from_backend);
    fixture_clear_tx(n->f);
    return fixture_send(n->f, frame, len);
}

/* The one transmitted frame, parsed: checksums must be valid; the ethernet destination must be
 * to_mac. */
static struct pkt sent(struct nat_fixture *n, const struct rte_ether_addr *to_mac,
                       size_t *payload_len)
{
    size_t len;
    const uint8_t *frame = fixture_tx(n->f, 0, &len);
    assert_non_null(frame);
    const struct rte_ether_hdr *eth = (const struct rte_ether_hdr *)frame;
    assert_memory_equal(&eth->dst_addr, to_mac, sizeof(*to_mac));
    static char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
    const struct rte_tcp_hdr *tcp;
    uint32_t l4_len;
    if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6)) {
        const struct rte_ipv6_hdr *ip6 = (const struct rte_ipv6_hdr *)(eth + 1);
        tcp = (const struct rte_tcp_hdr *)(ip6 + 1);
        assert_int_equal(rte_ipv6_udptcp_cksum_verify(ip6, tcp), 0);
        inet_ntop(AF_INET6, ip6->src_addr, src, sizeof(src));
        inet_ntop(AF_INET6, ip6->dst_addr, dst, sizeof(dst));
        l4_len = rte_be_to_cpu_16(ip6->payload_len);
    } else {
        const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eth + 1);
        assert_int_equal(rte_raw_cksum(ip, sizeof(*ip)), 0xffff);
        tcp = (const struct rte_tcp_hdr *)(ip + 1);
        assert_int_equal(rte_ipv4_udptcp_cksum_verify(ip, tcp), 0);
        inet_ntop(AF_INET, &ip->src_addr, src, sizeof(src));
        inet_ntop(AF_INET, &ip->dst_addr, dst, sizeof(dst));
        l4_len = rte_be_to_cpu_16(ip->total_length) - (uint32_t)sizeof(*ip);
    }
    struct pkt p = {
        .src = src,
        .dst = dst,
        .sport = ntohs(tcp->src_port),
        .dport = ntohs(tcp->dst_port),
        .flags = tcp->tcp_flags,
        .seq = ntohl(tcp->sent_seq),
        .ack = ntohl(tcp->recv_ack),
        .window = ntohs(tcp->rx_win),
    };
    uint32_t hlen = (uint32_t)(tcp->data_off >> 4) * 4;
    assert_int_equal(
        xlb_tcp_options_parse((const uint8_t *)(tcp + 1), hlen - sizeof(*tcp), &p.opts), 0);
    *payload_len = l4_len - hlen;
    return p;
}

static uint64_t event(struct nat_fixture *n, enum xlb_event_counter e)
{
    return n->f->stats.events[e];
}

static const struct xlb_tcp_opts client_syn_opts = {
    .mss = 1460,
    .has_wscale = true,
    .wscale = 6,
    .sack_ok = true,
    .has_ts = true,
    .tsval = CLIENT_TSVAL,
};

/* The handshake with xlb: SYN -> cookie SYN-ACK (no flow). Returns the SYN-ACK. */
static struct pkt cookie_handshake(struct nat_fixture *n, uint32_t client_isn)
{
    n->f->snap->l4_syn_proxy = true;
    struct pkt syn = {FIX_PEER4,  FIX_VIP4, CLIENT_PORT, VIP_PORT,        RTE_TCP_SYN_FLAG,
                      client_isn, 0,        29200,       client_syn_opts, NULL};
    uint64_t cookies = event(n, XLB_EVENT_SYN_PROXY_COOKIES_SENT);
    assert_int_equal(send_pkt(n, &syn, false), 1);
    size_t plen;
    struct pkt sa = sent(n, &peer_mac, &plen);
    assert_string_equal(sa.src, FIX_VIP4);
    assert_string_equal(sa.dst, FIX_PEER4);
    assert_int_equal(sa.sport, VIP_PORT);
    assert_int_equal(sa.dport, CLIENT_PORT);
    assert_int_equal(sa.flags, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG);
    assert_int_equal(sa.ack, client_isn + 1);
    assert_true(sa.opts.has_ts && sa.opts.tsecr == CLIENT_TSVAL);
    assert_true(sa.opts.has_wscale && sa.opts.sack_ok);
    assert_int_equal(sa.opts.wscale, 7);
    assert_null(client_flow(n, FIX_PEER4, CLIENT_PORT)); /* no state for a SYN */
    assert_int_equal(event(n, XLB_EVENT_SYN_PROXY_COOKIES_SENT), cookies + 1);
    return sa;
}

/* The client's ACK of the cookie: the backend SYN must go out with the client's ISN and
 * options. Returns the client's ACK. */
static struct pkt proxy_opens(struct nat_fixture *n, const struct pkt *sa, uint32_t client_isn)
{
    struct pkt ack = {FIX_PEER4,        FIX_VIP4,       CLIENT_PORT, VIP_PORT,
                      RTE_TCP_ACK_FLAG, client_isn + 1, sa->seq + 1, 229};
    ack.opts.has_ts = true;
    ack.opts.tsval = CLIENT_TSVAL + 1;
    ack.opts.tsecr = sa->opts.tsval;
    assert_int_equal(send_pkt(n, &ack, false), 1);
    size_t plen;
    struct pkt syn = sent(n, &backend_mac, &plen);
    assert_string_equal(syn.src, SNAT4);
    assert_string_equal(syn.dst, BACKEND4);
    assert_int_equal(syn.sport, PORT_BASE);
    assert_int_equal(syn.flags, RTE_TCP_SYN_FLAG);
    assert_int_equal(syn.seq, client_isn);
    assert_int_equal(plen, 0);
    assert_int_equal(syn.opts.mss, 1460);
    assert_true(syn.opts.has_wscale && syn.opts.wscale == 6 && syn.opts.sack_ok);
    assert_true(syn.opts.has_ts && syn.opts.tsval == CLIENT_TSVAL + 1 && syn.opts.tsecr == 0);
    struct xlb_flow *f = client_flow(n, FIX_PEER4, CLIENT_PORT);
    assert_non_null(f);
    assert_int_equal(f->state, XLB_FLOW_SYN_SENT);
    return ack;
}

/* The backend's SYN-ACK (wscale 9): answered by xlb with an ACK to the backend, nothing to
 * the client. */
static void backend_answers(struct nat_fixture *n, uint32_t client_isn, uint32_t backend_isn)
{
    struct pkt sa = {
        BACKEND4,    SNAT4,          VIP_PORT, PORT_BASE, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG,
        backend_isn, client_isn + 1, 65535};
    sa.opts = (struct xlb_tcp_opts){.mss = 1460,
                                    .has_wscale = true,
                                    .wscale = 9,
                                    .sack_ok = true,
                                    .has_ts = true,
                                    .tsval = BACKEND_TSVAL,
                                    .tsecr = CLIENT_TSVAL + 1};
    assert_int_equal(send_pkt(n, &sa, true), 1);
    size_t plen;
    struct pkt ack = sent(n, &backend_mac, &plen);
    assert_string_equal(ack.src, SNAT4);
    assert_string_equal(ack.dst, BACKEND4);
    assert_int_equal(ack.sport, PORT_BASE);
    assert_int_equal(ack.dport, VIP_PORT);
    assert_int_equal(ack.flags, RTE_TCP_ACK_FLAG);
    assert_int_equal(ack.seq, client_isn + 1);
    assert_int_equal(ack.ack, backend_isn + 1);
    assert_true(ack.opts.has_ts && ack.opts.tsval == CLIENT_TSVAL + 1 &&
                ack.opts.tsecr == BACKEND_TSVAL);
    assert_int_equal(plen, 0);
    assert_int_equal(client_flow(n, FIX_PEER4, CLIENT_PORT)->state, XLB_FLOW_ESTABLISHED);
}

static void connection_through_the_proxy(struct nat_fixture *n, uint32_t client_isn,
                                         uint32_t backend_isn)
{
    struct pkt sa = cookie_handshake(n, client_isn);
    uint32_t cookie = sa.seq, our_ts = sa.opts.tsval;
    proxy_opens(n, &sa, client_isn);
    backend_answers(n, client_isn, backend_isn);

    /* Backend data: seq into the cookie's space, TSval onto xlb's clock, window rescaled. */
    struct pkt data = {
        BACKEND4,        SNAT4,          VIP_PORT, PORT_BASE, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG,
        backend_isn + 1, client_isn + 1, 100};
    data.opts = (struct xlb_tcp_opts){
        .has_ts = true, .tsval = BACKEND_TSVAL + 45, .tsecr = CLIENT_TSVAL + 1};
    data.payload = "0123456789";
    assert_int_equal(send_pkt(n, &data, true), 1);
    size_t plen;
    struct pkt out = sent(n, &peer_mac, &plen);
    assert_string_equal(out.src, FIX_VIP4);
    assert_string_equal(out.dst, FIX_PEER4);
    assert_int_equal(out.seq, cookie + 1);
    assert_int_equal(out.ack, client_isn + 1);
    assert_int_equal(out.opts.tsval, our_ts + 45);
    assert_int_equal(out.opts.tsecr, CLIENT_TSVAL + 1);
    assert_int_equal(out.window, 100 << 2); /* backend shift 9, the client's view 7 */
    assert_int_equal(plen, 10);

    /* Client data with a SACK of backend bytes: ack, SACK edges and TSecr back to the
     * backend's space; its seq is the backend's already. */
    struct pkt cdata = {
        FIX_PEER4,      FIX_VIP4,        CLIENT_PORT, VIP_PORT, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG,
        client_isn + 1, cookie + 1 + 10, 300};
    cdata.opts = (struct xlb_tcp_opts){.has_ts = true,
                                       .tsval = CLIENT_TSVAL + 2,
                                       .tsecr = our_ts + 45,
                                       .n_sack = 1,
                                       .sack_left = {cookie + 21},
                                       .sack_right = {cookie + 31}};
    cdata.payload = "hello";
    assert_int_equal(send_pkt(n, &cdata, false), 1);
    out = sent(n, &backend_mac, &plen);
    assert_string_equal(out.dst, BACKEND4);
    assert_int_equal(out.seq, client_isn + 1);
    assert_int_equal(out.ack, backend_isn + 11);
    assert_int_equal(out.opts.tsval, CLIENT_TSVAL + 2);
    assert_int_equal(out.opts.tsecr, BACKEND_TSVAL + 45);
    assert_int_equal(out.opts.n_sack, 1);
    assert_int_equal(out.opts.sack_left[0], backend_isn + 21);
    assert_int_equal(out.opts.sack_right[0], backend_isn + 31);
    assert_int_equal(out.window, 300);
    assert_int_equal(plen, 5);

    /* The backend closes: its FIN reaches the client in the cookie's space. */
    struct pkt fin = {
        BACKEND4,         SNAT4,          VIP_PORT, PORT_BASE, RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG,
        backend_isn + 11, client_isn + 6, 100};
    fin.opts = (struct xlb_tcp_opts){
        .has_ts = true, .tsval = BACKEND_TSVAL + 50, .tsecr = CLIENT_TSVAL + 2};
    assert_int_equal(send_pkt(n, &fin, true), 1);
    out = sent(n, &peer_mac, &plen);
    assert_int_equal(out.flags, RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG);
    assert_int_equal(out.seq, cookie + 11);
    assert_int_equal(client_flow(n, FIX_PEER4, CLIENT_PORT)->state, XLB_FLOW_CLOSING);

    /* The client resets: its ACK number goes back to the backend's space. */
    struct pkt rst = {FIX_PEER4,
                      FIX_VIP4,
                      CLIENT_PORT,
                      VIP_PORT,
                      RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG,
                      client_isn + 6,
                      cookie + 12,
                      0};
    assert_int_equal(send_pkt(n, &rst, false), 1);
    out = sent(n, &backend_mac, &plen);
    assert_int_equal(out.flags, RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG);
    assert_int_equal(out.seq, client_isn + 6);
    assert_int_equal(out.ack, backend_isn + 12);
    assert_int_equal(event(n, XLB_EVENT_SYN_PROXY_VALID_ACKS), 1);
}

static void proxied_connection(void **state)
{
    connection_through_the_proxy(*state, SEQ_CLIENT, SEQ_BACKEND);
}

/* Every offset wraps: the client's and the backend's sequence numbers cross 2^32 mid-way. */
static void sequence_numbers_across_2_32(void **state)
{
    connection_through_the_proxy(*state, 0xfffffffcu, 0xfffffff9u);
}

static void bad_cookie_is_dropped(void **state)
{
    struct nat_fixture *n = *state;
    struct pkt sa = cookie_handshake(n, SEQ_CLIENT);
    struct pkt ack = {FIX_PEER4,        FIX_VIP4,       CLIENT_PORT,     VIP_PORT,
                      RTE_TCP_ACK_FLAG, SEQ_CLIENT + 1, sa.seq + 1 + 64, 229};
    ack.opts.has_ts = true;
    ack.opts.tsval = CLIENT_TSVAL + 1;
    ack.opts.tsecr = sa.opts.tsval;
    /* Answered with a RST to the client, as any ACK of no connection; nothing to a backend. */
    assert_int_equal(send_pkt(n, &ack, false), 1);
    size_t plen;
    struct pkt rst = sent(n, &peer_mac, &plen);
    assert_string_equal(rst.dst, FIX_PEER4);
    assert_int_equal(rst.flags, RTE_TCP_RST_FLAG);
    assert_int_equal(rst.seq, sa.seq + 1 + 64);
    assert_int_equal(event(n, XLB_EVENT_SYN_PROXY_INVALID_ACKS), 1);
    assert_int_equal(event(n, XLB_EVENT_SYN_PROXY_VALID_ACKS), 0);
    assert_null(client_flow(n, FIX_PEER4, CLIENT_PORT));
    assert_int_equal(n->flows->n_used, 0);
}

/* Before the backend answers: the client's data is dropped, but the same first segment sent
 * again re-sends the backend SYN; the backend's RST reaches the client as a RST. */
static void backend_refuses(void **state)
{
    struct nat_fixture *n = *state;
    struct pkt sa = cookie_handshake(n, SEQ_CLIENT);
    struct pkt ack = proxy_opens(n, &sa, SEQ_CLIENT);
    ack.flags |= RTE_TCP_PSH_FLAG;
    ack.payload = "early data";
    ack.opts.tsval++;
    assert_int_equal(send_pkt(n, &ack, false), 1);
    size_t plen;
    struct pkt syn = sent(n, &backend_mac, &plen);
    assert_int_equal(syn.flags, RTE_TCP_SYN_FLAG);
    assert_int_equal(syn.seq, SEQ_CLIENT);
    assert_int_equal(plen, 0);
    assert_int_equal(event(n, XLB_EVENT_SYN_PROXY_BACKEND_SYN_RETRANSMITS), 1);

    struct pkt rst = {
        BACKEND4, SNAT4,          VIP_PORT, PORT_BASE, RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG,
        0,        SEQ_CLIENT + 1, 0};
    assert_int_equal(send_pkt(n, &rst, true), 1);
    struct pkt out = sent(n, &peer_mac, &plen);
    assert_string_equal(out.src, FIX_VIP4);
    assert_int_equal(out.dport, CLIENT_PORT);
    assert_true(out.flags & RTE_TCP_RST_FLAG);
    assert_int_equal(out.seq, sa.seq + 1);
    assert_int_equal(event(n, XLB_EVENT_SYN_PROXY_BACKEND_FAILURES), 1);
    assert_int_equal(client_flow(n, FIX_PEER4, CLIENT_PORT)->state, XLB_FLOW_CLOSED);
}

/* The expiry's clock `after_s` seconds after the start, then one poll loop's expiry; returns
 * how many frames it sent. */
static unsigned poll_at(struct nat_fixture *n, uint64_t after_s)
{
    fixture_clear_tx(n->f);
    n->f->ctx.now_tsc = START_TSC + after_s * TSC_HZ;
    xlb_flow_expire(&n->f->ctx, n->f->snap);
    return n->f->ctx.tx[0].n;
}

/* The backend SYN as xlb sends it again: the first one's ISN, options and TSval. */
static void is_backend_syn_again(struct nat_fixture *n)
{
    size_t plen;
    struct pkt syn = sent(n, &backend_mac, &plen);
    assert_string_equal(syn.src, SNAT4);
    assert_string_equal(syn.dst, BACKEND4);
    assert_int_equal(syn.sport, PORT_BASE);
    assert_int_equal(syn.dport, VIP_PORT);
    assert_int_equal(syn.flags, RTE_TCP_SYN_FLAG);
    assert_int_equal(syn.seq, SEQ_CLIENT);
    assert_int_equal(plen, 0);
    assert_int_equal(syn.opts.mss, 1460);
    assert_true(syn.opts.has_wscale && syn.opts.wscale == 6 && syn.opts.sack_ok);
    assert_true(syn.opts.has_ts && syn.opts.tsval == CLIENT_TSVAL + 1 && syn.opts.tsecr == 0);
}

/* The backend's SYN-ACK is lost and the client, waiting for the server to speak, sends
 * nothing: xlb's own timer sends the backend its SYN again, and the connection goes on. */
static void lost_syn_ack_the_backend_gets_the_syn_again(void **state)
{
    struct nat_fixture *n = *state;
    struct pkt sa = cookie_handshake(n, SEQ_CLIENT);
    proxy_opens(n, &sa, SEQ_CLIENT);
    assert_int_equal(poll_at(n, 0), 0); /* not before its time */
    assert_int_equal(poll_at(n, 2), 1);
    is_backend_syn_again(n);
    assert_int_equal(event(n, XLB_EVENT_SYN_PROXY_BACKEND_SYN_RETRANSMITS), 1);
    assert_int_equal(client_flow(n, FIX_PEER4, CLIENT_PORT)->state, XLB_FLOW_SYN_SENT);
    n->f->ctx.now_tsc = START_TSC + 2 * TSC_HZ;
    backend_answers(n, SEQ_CLIENT, SEQ_BACKEND);
    assert_int_equal(poll_at(n, 30), 0); /* established: the timer is over */
    assert_non_null(client_flow(n, FIX_PEER4, CLIENT_PORT));
}

/* A backend that never answers: the SYN goes again 1, 2 and 4 s apart, then the client, which
 * believes it is connected, gets a RST at the SYN timeout and the flow ends, a connect
 * failure for the endpoint. */
static void silent_backend_the_client_gets_a_rst(void **state)
{
    struct nat_fixture *n = *state;
    struct pkt sa = cookie_handshake(n, SEQ_CLIENT);
    proxy_opens(n, &sa, SEQ_CLIENT);
    unsigned syns = 0, resets = 0;
    uint64_t syn_at[XLB_NAT_PROXY_SYN_RETRIES] = {0}, reset_at = 0;
    for (uint64_t second = 1; second <= 15; second++) {
        if (poll_at(n, second) == 0)
            continue;
        assert_int_equal(n->f->ctx.tx[0].n, 1);
        size_t len;
        const struct rte_ether_hdr *eth = (const void *)fixture_tx(n->f, 0, &len);
        if (memcmp(&eth->dst_addr, &backend_mac, sizeof(backend_mac)) == 0) {
            is_backend_syn_again(n);
            assert_true(syns < XLB_NAT_PROXY_SYN_RETRIES);
            syn_at[syns++] = second;
            continue;
        }
        size_t plen;
        struct pkt out = sent(n, &peer_mac, &plen);
        assert_string_equal(out.src, FIX_VIP4);
        assert_string_equal(out.dst, FIX_PEER4);
        assert_int_equal(out.sport, VIP_PORT);
        assert_int_equal(out.dport, CLIENT_PORT);
        assert_int_equal(out.flags, RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG);
        assert_int_equal(out.seq, sa.seq + 1);
        assert_int_equal(out.ack, SEQ_CLIENT + 1);
        resets++;
        reset_at = second;
    }
    assert_int_equal(syns, XLB_NAT_PROXY_SYN_RETRIES);
    assert_int_equal(resets, 1);
    /* On the expiry wheel's seconds: the first SYN again within 2 s of the ACK, then 2 and 4 s
     * apart; the RST when a SYN timeout's second has passed, as a plain flow would expire. */
    assert_true(syn_at[0] >= 1 && syn_at[0] <= 2);
    assert_int_equal(syn_at[1] - syn_at[0], 2);
    assert_int_equal(syn_at[2] - syn_at[1], 4);
    assert_int_equal(reset_at, XLB_FLOW_SYN_TIMEOUT_S + 1);
    assert_null(client_flow(n, FIX_PEER4, CLIENT_PORT));
    assert_int_equal(n->flows->n_used, 0);
    assert_int_equal(event(n, XLB_EVENT_SYN_PROXY_BACKEND_SYN_RETRANSMITS),
                     XLB_NAT_PROXY_SYN_RETRIES);
    assert_int_equal(event(n, XLB_EVENT_SYN_PROXY_BACKEND_TIMEOUTS), 1);
    assert_int_equal(event(n, XLB_EVENT_SYN_PROXY_BACKEND_FAILURES), 1);
    assert_int_equal(n->load->endpoints[SLOT4].failed, 1);
}

/*
 * The SNAT port was the backend's peer port in an earlier connection, which it still holds in
 * TIME-WAIT: it answers the proxy's SYN with an ACK of that connection (e2e_forwarding with
 * two workers hung on this). Behind the proxy the client never sees that ACK, so xlb answers
 * it with the RST the client's TCP would send, at the ACK's number, which ends the TIME-WAIT;
 * its timer's SYN then opens the connection.
 */
static void time_wait_ack_is_reset_and_the_syn_sent_again(void **state)
{
    struct nat_fixture *n = *state;
    struct pkt sa = cookie_handshake(n, SEQ_CLIENT);
    proxy_opens(n, &sa, SEQ_CLIENT);
    struct pkt stale = {BACKEND4,         SNAT4,      VIP_PORT,   PORT_BASE,
                        RTE_TCP_ACK_FLAG, 541473161u, 668436691u, 501};
    stale.opts = (struct xlb_tcp_opts){.has_ts = true, .tsval = 3065220904u, .tsecr = 2975129107u};
    assert_int_equal(send_pkt(n, &stale, true), 1);
    size_t plen;
    struct pkt rst = sent(n, &backend_mac, &plen);
    assert_string_equal(rst.src, SNAT4);
    assert_string_equal(rst.dst, BACKEND4);
    assert_int_equal(rst.sport, PORT_BASE);
    assert_int_equal(rst.dport, VIP_PORT);
    assert_int_equal(rst.flags, RTE_TCP_RST_FLAG);
    assert_int_equal(rst.seq, 668436691u);
    assert_int_equal(plen, 0);
    assert_int_equal(event(n, XLB_EVENT_SYN_PROXY_STALE_RESETS), 1);
    assert_int_equal(client_flow(n, FIX_PEER4, CLIENT_PORT)->state, XLB_FLOW_SYN_SENT);
    assert_int_equal(poll_at(n, 2), 1);
    is_backend_syn_again(n);
    n->f->ctx.now_tsc = START_TSC + 2 * TSC_HZ;
    backend_answers(n, SEQ_CLIENT, SEQ_BACKEND);
}

/* The client's retransmissions send the SYN too, but do not move the timer on: a client that
 * retransmits often does not hold off xlb's own SYN, nor its RST at the SYN timeout. */
static void client_retransmissions_leave_the_timer_alone(void **state)
{
    struct nat_fixture *n = *state;
    struct pkt sa = cookie_handshake(n, SEQ_CLIENT);
    struct pkt ack = proxy_opens(n, &sa, SEQ_CLIENT);
    for (uint64_t second = 1; second <= 15; second++) {
        n->f->ctx.now_tsc = START_TSC + second * TSC_HZ;
        if (client_flow(n, FIX_PEER4, CLIENT_PORT) == NULL)
            break;
        ack.opts.tsval++;
        assert_int_equal(send_pkt(n, &ack, false), 1); /* the SYN again */
        poll_at(n, second);
    }
    assert_null(client_flow(n, FIX_PEER4, CLIENT_PORT));
    assert_int_equal(event(n, XLB_EVENT_SYN_PROXY_BACKEND_TIMEOUTS), 1);
}

/* The timer's frames are built afresh, not rewritten from a received one: over IPv6 too, the
 * SYN again and the client's RST carry their flow's addresses and valid checksums. */
static void ipv6_syn_again_and_reset(void **state)
{
    struct nat_fixture *n = *state;
    n->f->snap->l4_syn_proxy = true;
    struct pkt syn = {FIX_PEER6,  FIX_VIP6, CLIENT_PORT, VIP_PORT,        RTE_TCP_SYN_FLAG,
                      SEQ_CLIENT, 0,        29200,       client_syn_opts, NULL};
    assert_int_equal(send_pkt(n, &syn, false), 1);
    size_t plen;
    struct pkt sa = sent(n, &peer_mac, &plen);
    assert_int_equal(sa.flags, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG);
    struct pkt ack = {FIX_PEER6,        FIX_VIP6,       CLIENT_PORT, VIP_PORT,
                      RTE_TCP_ACK_FLAG, SEQ_CLIENT + 1, sa.seq + 1,  229};
    ack.opts =
        (struct xlb_tcp_opts){.has_ts = true, .tsval = CLIENT_TSVAL + 1, .tsecr = sa.opts.tsval};
    assert_int_equal(send_pkt(n, &ack, false), 1);
    const struct rte_ether_addr backend6 = NAT_BACKEND6_MAC;
    struct pkt first = sent(n, &backend6, &plen);
    assert_string_equal(first.dst, BACKEND6);
    assert_int_equal(first.flags, RTE_TCP_SYN_FLAG);

    assert_int_equal(poll_at(n, 2), 1);
    struct pkt again = sent(n, &backend6, &plen);
    assert_string_equal(again.src, SNAT6);
    assert_string_equal(again.dst, BACKEND6);
    assert_int_equal(again.sport, first.sport);
    assert_int_equal(again.dport, VIP_PORT);
    assert_int_equal(again.flags, RTE_TCP_SYN_FLAG);
    assert_int_equal(again.seq, SEQ_CLIENT);
    assert_int_equal(again.opts.mss, first.opts.mss);
    assert_true(again.opts.has_wscale && again.opts.wscale == 6 && again.opts.sack_ok);
    assert_true(again.opts.has_ts && again.opts.tsval == CLIENT_TSVAL + 1);
    assert_int_equal(plen, 0);

    unsigned resets = 0;
    for (uint64_t second = 3; second <= 15; second++) {
        if (poll_at(n, second) == 0)
            continue;
        size_t len;
        const struct rte_ether_hdr *eth = (const void *)fixture_tx(n->f, 0, &len);
        if (memcmp(&eth->dst_addr, &backend6, sizeof(backend6)) == 0)
            continue; /* the SYN once more */
        struct pkt rst = sent(n, &peer_mac, &plen);
        assert_string_equal(rst.src, FIX_VIP6);
        assert_string_equal(rst.dst, FIX_PEER6);
        assert_int_equal(rst.sport, VIP_PORT);
        assert_int_equal(rst.dport, CLIENT_PORT);
        assert_int_equal(rst.flags, RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG);
        assert_int_equal(rst.seq, sa.seq + 1);
        resets++;
    }
    assert_int_equal(resets, 1);
    assert_null(client_flow(n, FIX_PEER6, CLIENT_PORT));
}

int main(void)
{
    fixture_eal_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(proxied_connection, nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(sequence_numbers_across_2_32, nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(bad_cookie_is_dropped, nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(backend_refuses, nat_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(lost_syn_ack_the_backend_gets_the_syn_again, nat_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(silent_backend_the_client_gets_a_rst, nat_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(time_wait_ack_is_reset_and_the_syn_sent_again, nat_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(client_retransmissions_leave_the_timer_alone, nat_setup,
                                        nat_teardown),
        cmocka_unit_test_setup_teardown(ipv6_syn_again_and_reset, nat_setup, nat_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
