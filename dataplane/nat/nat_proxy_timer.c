/*
 * The SYN proxy's own timer for the backend SYN (docs/forwarding.md "SYN proxy"). Behind the
 * proxy the client believes it is connected from its ACK on, so nothing it sends would bring a
 * lost backend SYN or SYN-ACK back if it waits for the server to speak first (SMTP, a name
 * server): xlb sends the SYN again itself, 1, 2 and 4 s apart, and when the SYN timeout ends
 * with no answer the client gets a RST and the flow ends.
 *
 * The flow table's expiry wheel is the timer: a proxied flow in SYN_SENT has its deadline at
 * its next retransmission, and the flow layer's expiry hands it here instead of freeing it
 * (bounded as the expiry is, no scan). The SYN is rebuilt from what the flow holds: addresses
 * and ports, the client's ISN (its window's end), the options its cookie gives back (decoded
 * again) and the client's TSval (kept in the window's backend half, free until the backend
 * speaks, nat_proxy.h). Frames come from the worker's own mbuf pool.
 */
#include <string.h>
#include <sys/socket.h>

#include <rte_ip.h>
#include <rte_mbuf.h>

#include "nat_proxy.h"
#include "xlb_tcp_options.h"

/* Seconds from each send of the backend SYN to the next, the first send's wait first; the
 * last wait ends at the SYN timeout (1 + 2 + 4 + 3 s). */
static const uint8_t wait_s[XLB_NAT_PROXY_SYN_RETRIES + 1] = {1, 2, 4, 3};
_Static_assert(1 + 2 + 4 + 3 == XLB_FLOW_SYN_TIMEOUT_S, "the client is reset at the SYN timeout");

/* The next deadline counts from the last one, not from when the wheel got to it: the waits do
 * not drift by the wheel's second, and the RST comes when a plain flow's SYN timeout would
 * end. */
static void arm(struct xlb_burst_ctx *ctx, struct xlb_flow *f, uint8_t sends)
{
    *xlb_nat_proxy_syn_sends(f) = sends;
    if (sends == 0)
        xlb_flow_set_timeout(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz, wait_s[0]);
    else
        f->expires_s += wait_s[sends];
    xlb_flow_schedule(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz);
}

void xlb_nat_proxy_arm_syn_timer(struct xlb_burst_ctx *ctx, struct xlb_flow *f)
{
    arm(ctx, f, 0);
}

/* One side of a segment between xlb and an end of the flow. */
struct ends {
    uint8_t family;
    uint8_t src[16], dst[16];
    uint16_t sport, dport; /* network order */
    uint16_t port_index;
    const struct rte_ether_addr *next_hop;
};

static void ends_of(const struct xlb_flow_table *t, const struct xlb_flow *f, bool to_backend,
                    struct ends *e)
{
    struct xlb_flow_key key;
    xlb_flow_client_key(t, f, &key);
    e->family = key.family;
    if (to_backend) {
        memcpy(e->src, t->snat[f->snat_index].bytes, 16);
        memcpy(e->dst, f->backend, 16);
        e->sport = rte_cpu_to_be_16(f->snat_port);
        e->dport = f->backend_port;
        e->port_index = f->backend_port_index;
        e->next_hop = &f->backend_mac;
    } else {
        memcpy(e->src, key.dst, 16);
        memcpy(e->dst, key.src, 16);
        e->sport = key.dst_port;
        e->dport = key.src_port;
        e->port_index = f->client_port_index;
        e->next_hop = &f->client_mac;
    }
}

/* A segment without payload, built in a fresh mbuf and queued; none when the pool is empty
 * (counted as no_mbuf: the segment is as good as lost, and the timer goes on). */
static void send_segment(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                         const struct ends *e, uint8_t flags, uint32_t seq, uint32_t ack,
                         uint16_t window, const uint8_t *options, uint32_t options_len)
{
    bool v4 = e->family == AF_INET;
    uint32_t l3_len = v4 ? sizeof(struct rte_ipv4_hdr) : sizeof(struct rte_ipv6_hdr);
    uint32_t tcp_len = (uint32_t)sizeof(struct rte_tcp_hdr) + options_len;
    uint32_t total = (uint32_t)sizeof(struct rte_ether_hdr) + l3_len + tcp_len;
    struct rte_mbuf *m = rte_pktmbuf_alloc(ctx->pool);
    if (m == NULL || rte_pktmbuf_append(m, (uint16_t)total) == NULL) {
        rte_pktmbuf_free(m);
        ctx->stats->drops[XLB_DROP_NO_MBUF]++;
        return;
    }
    struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
    eth->src_addr = snap->ports[e->port_index].mac;
    eth->dst_addr = *e->next_hop;
    eth->ether_type = rte_cpu_to_be_16(v4 ? RTE_ETHER_TYPE_IPV4 : RTE_ETHER_TYPE_IPV6);
    void *ip = eth + 1;
    struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)((uint8_t *)ip + l3_len);
    *tcp = (struct rte_tcp_hdr){
        .src_port = e->sport,
        .dst_port = e->dport,
        .sent_seq = rte_cpu_to_be_32(seq),
        .recv_ack = rte_cpu_to_be_32(ack),
        .data_off = (uint8_t)((tcp_len / 4) << 4),
        .tcp_flags = flags,
        .rx_win = rte_cpu_to_be_16(window),
    };
    if (options_len != 0)
        memcpy(tcp + 1, options, options_len);
    if (v4) {
        struct rte_ipv4_hdr *ip4 = ip;
        *ip4 = (struct rte_ipv4_hdr){
            .version_ihl = 0x45,
            .total_length = rte_cpu_to_be_16((uint16_t)(l3_len + tcp_len)),
            .fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG),
            .time_to_live = 64,
            .next_proto_id = IPPROTO_TCP,
        };
        memcpy(&ip4->src_addr, e->src, 4);
        memcpy(&ip4->dst_addr, e->dst, 4);
        ip4->hdr_checksum = rte_ipv4_cksum(ip4);
        tcp->cksum = rte_ipv4_udptcp_cksum(ip4, tcp);
    } else {
        struct rte_ipv6_hdr *ip6 = ip;
        *ip6 = (struct rte_ipv6_hdr){
            .vtc_flow = rte_cpu_to_be_32(6u << 28),
            .payload_len = rte_cpu_to_be_16((uint16_t)tcp_len),
            .proto = IPPROTO_TCP,
            .hop_limits = 64,
        };
        memcpy(ip6->src_addr, e->src, 16);
        memcpy(ip6->dst_addr, e->dst, 16);
        tcp->cksum = rte_ipv6_udptcp_cksum(ip6, tcp);
    }
    xlb_tx_enqueue(ctx, e->port_index, m);
}

/* The backend SYN again, as the client's ACK made it first (nat_proxy.c send_backend_syn): the
 * client's ISN, the options the cookie gave back, the client's TSval, the MSS clamped on the
 * backend's path. False when the cookie no longer decodes (the client took over a minute to
 * ACK it): nothing is sent. */
static bool resend_syn(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                       struct xlb_flow *f)
{
    struct xlb_syn_cookie_opts opts;
    if (!xlb_nat_proxy_cookie_opts(ctx, f, &opts))
        return false;
    struct ends e;
    ends_of(ctx->flows, f, true, &e);
    uint16_t path = xlb_egress_mss_max(snap, e.family, f->client_port_index, e.port_index);
    struct xlb_tcp_opts syn = {
        .mss = path != 0 && path < opts.mss ? path : opts.mss,
        .has_wscale = opts.has_wscale,
        .wscale = opts.wscale,
        .sack_ok = opts.sack_ok,
        .has_ts = opts.has_ts,
        .tsval = *xlb_nat_proxy_client_tsval(f),
    };
    uint8_t options[40] = {0};
    uint32_t len = xlb_tcp_options_write_syn(options, &syn);
    /* The window of the client's ACK is not kept: the largest an unscaled SYN can offer. */
    send_segment(ctx, snap, &e, RTE_TCP_SYN_FLAG, f->window.end[XLB_FLOW_FROM_CLIENT] - 1, 0,
                 UINT16_MAX, options, len);
    return true;
}

/* The client, whose handshake xlb completed, is told the backend never answered: a RST at the
 * cookie's next sequence number, as when the backend refuses. */
static void reset_client(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                         struct xlb_flow *f)
{
    struct ends e;
    ends_of(ctx->flows, f, false, &e);
    uint32_t cookie_isn = xlb_nat_proxy_side_of(ctx->flows, f)->seq_add;
    send_segment(ctx, snap, &e, RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG, cookie_isn + 1,
                 f->window.end[XLB_FLOW_FROM_CLIENT], 0, NULL, 0);
    ctx->stats->events[XLB_EVENT_SYN_PROXY_BACKEND_TIMEOUTS]++;
}

bool xlb_nat_proxy_syn_due(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                           struct xlb_flow *f)
{
    uint8_t sends = *xlb_nat_proxy_syn_sends(f);
    if (sends < XLB_NAT_PROXY_SYN_RETRIES && resend_syn(ctx, snap, f)) {
        ctx->stats->events[XLB_EVENT_SYN_PROXY_BACKEND_SYN_RETRANSMITS]++;
        arm(ctx, f, (uint8_t)(sends + 1));
        return true;
    }
    reset_client(ctx, snap, f);
    return false;
}
