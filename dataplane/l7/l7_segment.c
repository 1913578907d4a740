/*
 * Segments xlb makes itself on an L7 connection: SYN-ACKs of cookies are made elsewhere (no
 * flow yet); these are the ACKs, SETTINGS and PING answers to a client xlb is receiving from,
 * the SYN and replay to a backend, and rejections. Untagged Ethernet, checksums in software:
 * a few segments per connection, not the forwarding path.
 */
#include <string.h>
#include <sys/socket.h>

#include <rte_ip.h>

#include "l7_conn.h"

struct segment_ends {
    uint8_t family;
    const uint8_t *src, *dst; /* addresses */
    uint16_t sport, dport;    /* network order */
    uint16_t port_index;
    const struct rte_ether_addr *next_hop;
};

static void ends_of(struct xlb_burst_ctx *ctx, const struct xlb_flow *f, enum xlb_l7_side side,
                    struct xlb_flow_key *client, struct segment_ends *e)
{
    xlb_flow_client_key(ctx->flows, f, client);
    e->family = client->family;
    if (side == XLB_L7_TO_CLIENT) {
        e->src = client->dst;
        e->dst = client->src;
        e->sport = client->dst_port;
        e->dport = client->src_port;
        e->port_index = f->client_port_index;
        e->next_hop = &f->client_mac;
    } else {
        e->src = ctx->flows->snat[f->snat_index].bytes;
        e->dst = f->backend;
        e->sport = rte_cpu_to_be_16(f->snat_port);
        e->dport = f->backend_port;
        e->port_index = f->backend_port_index;
        e->next_hop = &f->backend_mac;
    }
}

static void *put_ip(struct rte_mbuf *m, const struct segment_ends *e, uint32_t tcp_len)
{
    if (e->family == AF_INET) {
        struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, void *, sizeof(struct rte_ether_hdr));
        *ip = (struct rte_ipv4_hdr){
            .version_ihl = RTE_IPV4_VHL_DEF,
            .total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + tcp_len)),
            .fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG),
            .time_to_live = 64,
            .next_proto_id = IPPROTO_TCP,
        };
        memcpy(&ip->src_addr, e->src, 4);
        memcpy(&ip->dst_addr, e->dst, 4);
        return ip;
    }
    struct rte_ipv6_hdr *ip = rte_pktmbuf_mtod_offset(m, void *, sizeof(struct rte_ether_hdr));
    *ip = (struct rte_ipv6_hdr){
        .vtc_flow = rte_cpu_to_be_32(6u << 28),
        .payload_len = rte_cpu_to_be_16((uint16_t)tcp_len),
        .proto = IPPROTO_TCP,
        .hop_limits = 64,
    };
    memcpy(ip->src_addr, e->src, 16);
    memcpy(ip->dst_addr, e->dst, 16);
    return ip;
}

bool xlb_l7_send(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap, struct xlb_flow *f,
                 enum xlb_l7_side side, const struct xlb_l7_segment *s)
{
    struct xlb_flow_key client;
    struct segment_ends e;
    ends_of(ctx, f, side, &client, &e);
    uint32_t l3_len =
        e.family == AF_INET ? sizeof(struct rte_ipv4_hdr) : sizeof(struct rte_ipv6_hdr);
    uint32_t tcp_len = (uint32_t)sizeof(struct rte_tcp_hdr) + s->options_len + s->payload_len;
    uint32_t total = (uint32_t)sizeof(struct rte_ether_hdr) + l3_len + tcp_len;
    struct rte_mbuf *m = rte_pktmbuf_alloc(ctx->pool);
    if (m == NULL || rte_pktmbuf_append(m, (uint16_t)total) == NULL) {
        rte_pktmbuf_free(m);
        ctx->stats->drops[XLB_DROP_L7_NO_MBUF]++;
        return false;
    }
    struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
    eth->src_addr = snap != NULL ? snap->ports[e.port_index].mac : ctx->l7->port_mac[e.port_index];
    eth->dst_addr = *e.next_hop;
    eth->ether_type =
        rte_cpu_to_be_16(e.family == AF_INET ? RTE_ETHER_TYPE_IPV4 : RTE_ETHER_TYPE_IPV6);
    void *ip = put_ip(m, &e, tcp_len);
    struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)((uint8_t *)ip + l3_len);
    *tcp = (struct rte_tcp_hdr){
        .src_port = e.sport,
        .dst_port = e.dport,
        .sent_seq = rte_cpu_to_be_32(s->seq),
        .recv_ack = rte_cpu_to_be_32(s->ack),
        .data_off = (uint8_t)(((sizeof(*tcp) + s->options_len) / 4) << 4),
        .tcp_flags = s->flags,
        .rx_win = rte_cpu_to_be_16(s->window),
    };
    uint8_t *body = (uint8_t *)(tcp + 1);
    if (s->options_len != 0)
        memcpy(body, s->options, s->options_len);
    if (s->payload_len != 0)
        memcpy(body + s->options_len, s->payload, s->payload_len);
    struct xlb_tcp_packet p = {.family = e.family, .ip = ip, .tcp = tcp};
    xlb_l7_checksums(&p);
    xlb_tx_enqueue(ctx, e.port_index, m);
    return true;
}

uint32_t xlb_l7_payload_max(const struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                            const struct xlb_l7_conn *c, enum xlb_l7_side side,
                            uint32_t options_len)
{
    uint32_t mss = side == XLB_L7_TO_CLIENT ? c->client.mss : c->backend_mss;
    if (mss == 0)
        mss = 536;
    const struct xlb_flow *f = c->flow;
    uint32_t path = xlb_egress_mss_max(snap, ctx->flows->snat[f->snat_index].family,
                                       f->client_port_index, f->backend_port_index);
    if (path != 0 && path < mss)
        mss = path;
    return mss > options_len + 64 ? mss - options_len : 64; /* never below 64 bytes a segment */
}

bool xlb_l7_send_ts(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                    struct xlb_l7_conn *c, enum xlb_l7_side side, uint32_t seq, uint32_t ack,
                    uint8_t flags, uint16_t window, const uint8_t *payload, uint32_t len)
{
    uint8_t options[12];
    struct xlb_l7_segment s = {
        .seq = seq,
        .ack = ack,
        .flags = flags,
        .window = window,
        .payload = payload,
        .payload_len = len,
    };
    if (c->client.has_ts) {
        /* Toward the client xlb's own clock; toward the backend the client's, as if the
         * client had sent it (the backend echoes it, the client never sees it). */
        uint32_t tsval = side == XLB_L7_TO_CLIENT ? (uint32_t)xlb_l7_now_ms(ctx) : c->ts_recent;
        uint32_t tsecr = side == XLB_L7_TO_CLIENT ? c->ts_recent : c->backend_tsval;
        s.options_len = xlb_tcp_options_write_ts(options, tsval, tsecr);
        s.options = options;
    }
    return xlb_l7_send(ctx, snap, c->flow, side, &s);
}

void xlb_l7_checksums(struct xlb_tcp_packet *p)
{
    p->tcp->cksum = 0;
    if (p->family == AF_INET) {
        struct rte_ipv4_hdr *ip = p->ip;
        ip->hdr_checksum = 0;
        ip->hdr_checksum = rte_ipv4_cksum(ip);
        p->tcp->cksum = rte_ipv4_udptcp_cksum(ip, p->tcp);
    } else {
        p->tcp->cksum = rte_ipv6_udptcp_cksum(p->ip, p->tcp);
    }
}
