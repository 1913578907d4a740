/*
 * SPLICED: the two connections are one. Each segment is rewritten in place: addresses and
 * ports as the L4 NAT does, and the numbers the two connections do not share —
 *   client -> backend: seq - stripped; ACK and SACK edges - s2c_seq_add; TSecr - ts_add;
 *   backend -> client: seq + s2c_seq_add; ACK and SACK edges + stripped; TSval + ts_add; the
 *   window rescaled from the backend's window scale to the one xlb offered the client.
 * Client data from before the binding was replayed by xlb and is not passed on again.
 */
#include <string.h>
#include <sys/socket.h>

#include <rte_ip.h>

#include "l7_conn.h"

#define SEQ_LT(a, b) ((int32_t)((a) - (b)) < 0)

void xlb_l7_set_addresses(struct xlb_tcp_packet *p, const uint8_t *src, uint16_t sport,
                          const uint8_t *dst, uint16_t dport)
{
    if (p->family == AF_INET) {
        struct rte_ipv4_hdr *ip = p->ip;
        memcpy(&ip->src_addr, src, 4);
        memcpy(&ip->dst_addr, dst, 4);
    } else {
        struct rte_ipv6_hdr *ip = p->ip;
        memcpy(ip->src_addr, src, 16);
        memcpy(ip->dst_addr, dst, 16);
    }
    p->tcp->src_port = sport;
    p->tcp->dst_port = dport;
}

static bool options_of(struct rte_tcp_hdr *tcp, struct xlb_tcp_opts *o)
{
    uint32_t len = xlb_tcp_options_len(tcp);
    return xlb_tcp_options_parse((const uint8_t *)(tcp + 1), len, o) == 0;
}

static uint32_t timeout_s(uint8_t state)
{
    return state == XLB_FLOW_ESTABLISHED ? XLB_FLOW_ESTABLISHED_TIMEOUT_S
           : state == XLB_FLOW_CLOSING   ? XLB_FLOW_CLOSING_TIMEOUT_S
                                         : XLB_FLOW_CLOSED_TIMEOUT_S;
}

/*
 * Flow state for its idle timeout. A RST ends the connection; so do FINs from both sides: the
 * flow is then kept only the short CLOSED time for the last ACKs, not the closing time of a
 * half-closed one, and its pool entry goes back as soon as nothing more needs it (xlb_l7_over).
 */
static void track(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c, uint8_t flags,
                  bool from_backend)
{
    struct xlb_flow *f = c->flow;
    uint8_t before = f->state;
    if (flags & RTE_TCP_FIN_FLAG)
        c->fin_seen |= from_backend ? 2 : 1;
    if (flags & RTE_TCP_RST_FLAG)
        c->fin_seen |= 4;
    if ((flags & RTE_TCP_RST_FLAG) || (c->fin_seen & 3) == 3)
        f->state = XLB_FLOW_CLOSED;
    else if ((flags & RTE_TCP_FIN_FLAG) && f->state == XLB_FLOW_ESTABLISHED)
        f->state = XLB_FLOW_CLOSING;
    xlb_flow_set_timeout(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz, timeout_s(f->state));
    if (f->state != before)
        xlb_flow_schedule(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz);
}

bool xlb_l7_over(const struct xlb_l7_conn *c)
{
    if (c->fin_seen & 4)
        return true; /* reset: nothing is retransmitted any more */
    return c->flow->state == XLB_FLOW_CLOSED && c->n_inserts == 0 && !c->on_retry_list;
}

static void forward(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                    struct xlb_frame *frame, struct xlb_tcp_packet *p, uint16_t port_index,
                    const struct rte_ether_addr *next_hop)
{
    xlb_l7_checksums(p);
    frame->eth->src_addr = snap->ports[port_index].mac;
    frame->eth->dst_addr = *next_hop;
    xlb_tx_enqueue(ctx, port_index, frame->m);
}

/* Each SACK edge of a client segment, from the client's numbers to the backend's. */
static void sack_to_backend(const struct xlb_l7_conn *c, uint8_t *opts,
                            const struct xlb_tcp_opts *o)
{
    for (uint8_t i = 0; o->sack_at >= 0 && i < o->n_sack; i++)
        for (int edge = 0; edge < 2; edge++) {
            uint8_t *at = opts + o->sack_at + 2 + 8 * i + 4 * edge;
            uint32_t v;
            memcpy(&v, at, 4);
            v = rte_cpu_to_be_32(xlb_l7_client_to_backend(c, rte_be_to_cpu_32(v)));
            memcpy(at, &v, 4);
        }
}

static uint32_t payload_length(const struct xlb_tcp_packet *p)
{
    uint32_t l4 = p->family == AF_INET
                      ? rte_be_to_cpu_16(((struct rte_ipv4_hdr *)p->ip)->total_length) -
                            rte_ipv4_hdr_len(p->ip)
                      : rte_be_to_cpu_16(((struct rte_ipv6_hdr *)p->ip)->payload_len);
    return xlb_tcp_payload_len(p->tcp, l4);
}

xlb_verdict xlb_l7_splice_from_client(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                      struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                      uint32_t tcp_len, struct xlb_l7_conn *c)
{
    (void)tcp_len;
    struct rte_tcp_hdr *tcp = p->tcp;
    struct xlb_tcp_opts o;
    if (!options_of(tcp, &o))
        return XLB_DROP_TCP_MALFORMED;
    uint32_t seq = rte_be_to_cpu_32(tcp->sent_seq), payload = payload_length(p);
    if (payload != 0 && !SEQ_LT(c->rcv_nxt, seq + payload))
        return XLB_DROP_L7_REPLAYED; /* held and replayed by xlb already */
    if (!xlb_l7_inspect_client(ctx, c, seq, xlb_tcp_payload(tcp), payload))
        return XLB_DROP_L7_OUT_OF_ORDER;
    struct xlb_flow *f = c->flow;
    if (o.has_ts)
        c->ts_recent = o.tsval;
    tcp->sent_seq = rte_cpu_to_be_32(seq - c->stripped);
    uint8_t *opts = (uint8_t *)(tcp + 1);
    sack_to_backend(c, opts, &o);
    if (tcp->tcp_flags & RTE_TCP_ACK_FLAG) {
        uint32_t ack = rte_be_to_cpu_32(tcp->recv_ack);
        if (SEQ_LT(ack, c->snd_nxt))
            ack = c->snd_nxt; /* acknowledges only xlb's own bytes */
        tcp->recv_ack = rte_cpu_to_be_32(xlb_l7_client_to_backend(c, ack));
        xlb_l7_inserts_fold(c, ack);
    }
    o.sack_at = -1; /* translated above, edge by edge */
    xlb_tcp_options_shift(opts, &o, 0, (uint32_t)0 - c->ts_add, 0);
    track(ctx, c, tcp->tcp_flags, false);
    xlb_l7_set_addresses(p, ctx->flows->snat[f->snat_index].bytes, rte_cpu_to_be_16(f->snat_port),
                         f->backend, f->backend_port);
    forward(ctx, snap, frame, p, f->backend_port_index, &f->backend_mac);
    if (xlb_l7_over(c))
        xlb_l7_retire(ctx, c);
    return XLB_VERDICT_SENT;
}

static uint16_t client_window(const struct xlb_l7_conn *c, uint16_t backend_window)
{
    uint64_t bytes = (uint64_t)backend_window << c->backend_wscale;
    uint64_t field = bytes >> c->xlb_wscale;
    return (uint16_t)(field > UINT16_MAX ? UINT16_MAX : field);
}

xlb_verdict xlb_l7_splice_from_backend(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                       struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                       uint32_t tcp_len, struct xlb_l7_conn *c)
{
    (void)tcp_len;
    struct rte_tcp_hdr *tcp = p->tcp;
    if (tcp->tcp_flags & RTE_TCP_SYN_FLAG)
        return XLB_DROP_L7_UNEXPECTED; /* a repeated SYN-ACK: the replay's ACK answers it */
    struct xlb_tcp_opts o;
    if (!options_of(tcp, &o))
        return XLB_DROP_TCP_MALFORMED;
    uint32_t seq = rte_be_to_cpu_32(tcp->sent_seq), payload = payload_length(p);
    if ((tcp->tcp_flags & RTE_TCP_RST_FLAG) && c->s2c_sent == 0) {
        /* Reset before any of its bytes reached the client: the client gets UNAVAILABLE. */
        xlb_l7_reject(ctx, snap, c, "xlb: the backend reset the connection");
        return XLB_VERDICT_CONSUMED;
    }
    bool again = payload != 0 && SEQ_LT(seq, c->s2c_next) && xlb_l7_insert_at(c, seq);
    if (!xlb_l7_inspect_backend(ctx, c, seq, xlb_tcp_payload(tcp), payload))
        return XLB_DROP_L7_OUT_OF_ORDER;
    uint32_t shift =
        c->s2c_seq_add + xlb_l7_inserted_before(c, seq) - (again ? c->cookie_field_len : 0u);
    if (!xlb_l7_insert_apply(ctx, snap, c, frame, p, seq, &payload, again))
        return XLB_DROP_L7_NO_ROOM;
    struct xlb_flow *f = c->flow;
    if (o.has_ts)
        c->backend_tsval = o.tsval;
    if (tcp->tcp_flags & RTE_TCP_ACK_FLAG) {
        uint32_t ack = rte_be_to_cpu_32(tcp->recv_ack);
        if (SEQ_LT(c->backend_una, ack))
            c->backend_una = ack;
        if (!SEQ_LT(c->backend_una, c->client_isn + 1 + c->replay_len)) {
            xlb_l7_retry_disarm(ctx, c);
            xlb_l7_binding_put(ctx, c); /* the replay is the backend's now */
        }
        tcp->recv_ack = rte_cpu_to_be_32(ack + c->stripped);
    }
    tcp->sent_seq = rte_cpu_to_be_32(seq + shift);
    tcp->rx_win = rte_cpu_to_be_16(client_window(c, rte_be_to_cpu_16(tcp->rx_win)));
    xlb_tcp_options_shift((uint8_t *)(tcp + 1), &o, c->ts_add, 0, c->stripped);
    track(ctx, c, tcp->tcp_flags, true);
    struct xlb_flow_key client;
    xlb_flow_client_key(ctx->flows, f, &client);
    xlb_l7_set_addresses(p, client.dst, client.dst_port, client.src, client.src_port);
    c->s2c_sent += payload;
    /* The Ethernet header first: a cut copies the whole header into its second part. */
    frame->eth->src_addr = snap->ports[f->client_port_index].mac;
    frame->eth->dst_addr = f->client_mac;
    struct rte_mbuf *second = xlb_l7_split_to_mss(ctx, snap, c, frame, p, payload);
    forward(ctx, snap, frame, p, f->client_port_index, &f->client_mac);
    if (second != NULL)
        xlb_tx_enqueue(ctx, f->client_port_index, second);
    if (xlb_l7_over(c))
        xlb_l7_retire(ctx, c);
    return XLB_VERDICT_SENT;
}
