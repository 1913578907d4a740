/*
 * An L7 connection whose exchange is over. Both FINs went by (each way's insertions
 * acknowledged, the replay acknowledged), or a RST; or xlb ended the connection itself and has
 * acknowledged the client's FIN. Its pool entry (tens of KiB) goes back to the pool at once, and
 * the flow turns into one of kind XLB_FLOW_KIND_L7_CLOSED that keeps, in the flow entry and its
 * data word, only what its last segments need: a retransmitted FIN and the last ACKs pass both
 * ways with their sequence numbers, ACKs, SACK edges, timestamps and windows translated as
 * before; a client FIN to a connection xlb ended is acknowledged again. The flow stays for the
 * CLOSED timeout, so its SNAT port is not reused at once (TIME-WAIT-like). The connection's
 * accounting (its streams, its endpoint and cluster counts) was done when the entry went back.
 *
 * Bytes of the backend before its FIN that a retransmission carries again are old to the client
 * (it acknowledged every insertion): shifted past all insertions, they stay before its receive
 * point and are dropped by it as duplicates. Client ACKs and SACK edges map back past all
 * insertions too: never above what the client acknowledged.
 */
#include <string.h>
#include <sys/socket.h>

#include <rte_ip.h>

#include "l7_conn.h"

#define SEQ_LT(a, b) ((int32_t)((a) - (b)) < 0)

/* What the flow entry's union has no room for: kept in the flow's data word. */
union closed_word {
    uint64_t word;
    struct {
        uint8_t backend_wscale, xlb_wscale;
        uint8_t by_xlb; /* ended by xlb: l7_closed.s2c_add is xlb's next seq to the client */
    } s;
};

void xlb_l7_retire(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c)
{
    struct xlb_flow *f = c->flow;
    bool by_xlb = c->phase == XLB_L7_CLOSED;
    struct xlb_flow_l7_closed k = {
        .stripped = c->stripped,
        /* Every insertion is folded (xlb_l7_over): one shift for all the backend's bytes. */
        .s2c_add = by_xlb ? c->snd_nxt : c->s2c_seq_add + c->inserted_folded,
        .ts_add = c->ts_add,
    };
    union closed_word w = {.word = 0};
    w.s.backend_wscale = c->backend_wscale;
    w.s.xlb_wscale = c->xlb_wscale;
    w.s.by_xlb = by_xlb;
    xlb_l7_release(ctx, f); /* streams, accounting, the entry back to the pool */
    f->kind = XLB_FLOW_KIND_L7_CLOSED;
    f->l7_closed = k;
    xlb_flow_set_word(ctx->flows, f, w.word);
    f->state = XLB_FLOW_CLOSED;
    xlb_flow_set_timeout(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz, XLB_FLOW_CLOSED_TIMEOUT_S);
    xlb_flow_schedule(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz);
}

/* A segment of the flow restarts its CLOSED time (as a FIN restarts TIME-WAIT). */
static void refresh(struct xlb_burst_ctx *ctx, struct xlb_flow *f)
{
    xlb_flow_set_timeout(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz, XLB_FLOW_CLOSED_TIMEOUT_S);
}

static bool parse(struct rte_tcp_hdr *tcp, struct xlb_tcp_opts *o)
{
    return xlb_tcp_options_parse((const uint8_t *)(tcp + 1), xlb_tcp_options_len(tcp), o) == 0;
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

/* xlb ended the connection: a client FIN is acknowledged again, a RST ends the flow. */
static xlb_verdict ended_by_xlb(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                struct xlb_tcp_packet *p, uint32_t tcp_len, struct xlb_flow *f)
{
    struct rte_tcp_hdr *tcp = p->tcp;
    if (tcp->tcp_flags & RTE_TCP_RST_FLAG) {
        xlb_flow_release(ctx, f);
        return XLB_VERDICT_CONSUMED;
    }
    if (!(tcp->tcp_flags & RTE_TCP_FIN_FLAG))
        return XLB_VERDICT_CONSUMED;
    struct xlb_tcp_opts o;
    uint8_t options[12];
    struct xlb_l7_segment s = {
        .seq = f->l7_closed.s2c_add,
        .ack = rte_be_to_cpu_32(tcp->sent_seq) + xlb_tcp_payload_len(tcp, tcp_len) + 1,
        .flags = RTE_TCP_ACK_FLAG,
    };
    if (parse(tcp, &o) && o.has_ts) {
        s.options_len = xlb_tcp_options_write_ts(options, (uint32_t)xlb_l7_now_ms(ctx), o.tsval);
        s.options = options;
    }
    refresh(ctx, f);
    xlb_l7_send(ctx, snap, f, XLB_L7_TO_CLIENT, &s);
    return XLB_VERDICT_CONSUMED;
}

xlb_verdict xlb_l7_closed_from_client(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                      struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                      uint32_t tcp_len, struct xlb_flow *f)
{
    union closed_word w = {.word = xlb_flow_word(ctx->flows, f)};
    if (w.s.by_xlb)
        return ended_by_xlb(ctx, snap, p, tcp_len, f);
    struct rte_tcp_hdr *tcp = p->tcp;
    struct xlb_tcp_opts o;
    if (!parse(tcp, &o))
        return XLB_DROP_TCP_MALFORMED;
    const struct xlb_flow_l7_closed *k = &f->l7_closed;
    tcp->sent_seq = rte_cpu_to_be_32(rte_be_to_cpu_32(tcp->sent_seq) - k->stripped);
    if (tcp->tcp_flags & RTE_TCP_ACK_FLAG)
        tcp->recv_ack = rte_cpu_to_be_32(rte_be_to_cpu_32(tcp->recv_ack) - k->s2c_add);
    xlb_tcp_options_shift((uint8_t *)(tcp + 1), &o, 0, (uint32_t)0 - k->ts_add,
                          (uint32_t)0 - k->s2c_add);
    refresh(ctx, f);
    xlb_l7_set_addresses(p, ctx->flows->snat[f->snat_index].bytes, rte_cpu_to_be_16(f->snat_port),
                         f->backend, f->backend_port);
    forward(ctx, snap, frame, p, f->backend_port_index, &f->backend_mac);
    return XLB_VERDICT_SENT;
}

xlb_verdict xlb_l7_closed_from_backend(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                       struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                       struct xlb_flow *f)
{
    union closed_word w = {.word = xlb_flow_word(ctx->flows, f)};
    struct rte_tcp_hdr *tcp = p->tcp;
    if (w.s.by_xlb || (tcp->tcp_flags & RTE_TCP_SYN_FLAG))
        return XLB_DROP_L7_UNEXPECTED;
    struct xlb_tcp_opts o;
    if (!parse(tcp, &o))
        return XLB_DROP_TCP_MALFORMED;
    const struct xlb_flow_l7_closed *k = &f->l7_closed;
    tcp->sent_seq = rte_cpu_to_be_32(rte_be_to_cpu_32(tcp->sent_seq) + k->s2c_add);
    if (tcp->tcp_flags & RTE_TCP_ACK_FLAG)
        tcp->recv_ack = rte_cpu_to_be_32(rte_be_to_cpu_32(tcp->recv_ack) + k->stripped);
    uint64_t bytes = (uint64_t)rte_be_to_cpu_16(tcp->rx_win) << w.s.backend_wscale;
    uint64_t field = bytes >> w.s.xlb_wscale;
    tcp->rx_win = rte_cpu_to_be_16((uint16_t)(field > UINT16_MAX ? UINT16_MAX : field));
    xlb_tcp_options_shift((uint8_t *)(tcp + 1), &o, k->ts_add, 0, k->stripped);
    refresh(ctx, f);
    struct xlb_flow_key client;
    xlb_flow_client_key(ctx->flows, f, &client);
    xlb_l7_set_addresses(p, client.dst, client.dst_port, client.src, client.src_port);
    forward(ctx, snap, frame, p, f->client_port_index, &f->client_mac);
    return XLB_VERDICT_SENT;
}
