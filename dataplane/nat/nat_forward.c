/*
 * The NAT's forwarding of segments on flows it has: established data and ACKs straight
 * through (xlb_nat_forward_established, the bulk of a worker's traffic), and the general
 * handlers that track the TCP state first. The rewrite itself is nat_rewrite.h.
 */
#include "nat.h"

#include <string.h>
#include <sys/socket.h>

#include "nat_proxy.h"
#include "nat_rewrite.h"
#include "nat_window.h"

uint64_t xlb_nat_patches_of(const struct xlb_flow_table *t, const struct xlb_flow *f,
                            const struct xlb_flow_key *key)
{
    size_t len = key->family == AF_INET ? 4 : 16;
    const uint8_t *snat = t->snat[f->snat_index].bytes;
    uint16_t snat_port = rte_cpu_to_be_16(f->snat_port);
    uint16_t client_ports[2] = {key->src_port, key->dst_port},
             to_backend[2] = {snat_port, f->backend_port};
    uint16_t backend_ports[2] = {f->backend_port, snat_port},
             to_client[2] = {key->dst_port, key->src_port};
    uint64_t out = xlb_csum_diff(key->src, snat, len) + xlb_csum_diff(key->dst, f->backend, len);
    uint64_t back = xlb_csum_diff(f->backend, key->dst, len) + xlb_csum_diff(snat, key->src, len);
    union rewrite_patches p;
    p.ip[XLB_FLOW_FROM_CLIENT] = xlb_csum_fold(out);
    p.ip[XLB_FLOW_FROM_BACKEND] = xlb_csum_fold(back);
    p.tcp[XLB_FLOW_FROM_CLIENT] = xlb_csum_fold(out + xlb_csum_diff(client_ports, to_backend, 4));
    p.tcp[XLB_FLOW_FROM_BACKEND] = xlb_csum_fold(back + xlb_csum_diff(backend_ports, to_client, 4));
    return p.word;
}

xlb_verdict xlb_nat_from_client(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len,
                                struct xlb_flow *f)
{
    if (f->kind == XLB_FLOW_KIND_NAT_PROXY)
        return xlb_nat_proxy_from_client(ctx, snap, frame, p, tcp_len, f);
    return xlb_nat_send_from_client(ctx, snap, frame, p, tcp_len, f);
}

xlb_verdict xlb_nat_send_from_client(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                     struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                     uint32_t tcp_len, struct xlb_flow *f)
{
    /* Never refused for a flow xlb_nat_no_flow just made: a client SYN on a half-open flow
     * fits. */
    if (!xlb_nat_track(ctx, f, p->tcp, xlb_tcp_payload_len(p->tcp, tcp_len), XLB_FLOW_FROM_CLIENT))
        return XLB_DROP_TCP_OUT_OF_WINDOW;
    if (!f->scheduled)
        xlb_flow_schedule(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz);
    if (p->tcp->tcp_flags & RTE_TCP_SYN_FLAG)
        xlb_egress_clamp_mss(ctx, snap, p, f->backend_port_index);
    to_backend(ctx, snap, frame->m, p, f);
    return XLB_VERDICT_SENT;
}

xlb_verdict xlb_nat_from_backend(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                 struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                 uint32_t tcp_len, struct xlb_flow *f)
{
    if (f->kind == XLB_FLOW_KIND_NAT_PROXY)
        return xlb_nat_proxy_from_backend(ctx, snap, frame, p, tcp_len, f);
    if (!xlb_nat_track(ctx, f, p->tcp, xlb_tcp_payload_len(p->tcp, tcp_len), XLB_FLOW_FROM_BACKEND))
        return XLB_DROP_TCP_OUT_OF_WINDOW;
    if (p->tcp->tcp_flags & RTE_TCP_SYN_FLAG)
        xlb_egress_clamp_mss(ctx, snap, p, f->client_port_index);
    to_client(ctx, snap, frame->m, p, f);
    return XLB_VERDICT_SENT;
}

/* ---- established flows ---- */

/* The lane's rewrite and send, inlined for a constant family: the rewrite's lengths and the
 * checksum patches are then straight code, with no branch on the family among them. */
static inline __attribute__((always_inline)) void
send_established(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                 const struct xlb_held_segment *d, const struct xlb_flow *f,
                 enum xlb_flow_side from, uint8_t family)
{
    struct xlb_tcp_packet p = xlb_flow_packet_of(d);
    p.family = family;
    if (from == XLB_FLOW_FROM_CLIENT)
        to_backend(ctx, snap, d->m, &p, f);
    else
        to_client(ctx, snap, d->m, &p, f);
}

bool xlb_nat_forward_established(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                 const struct xlb_held_segment *d, struct xlb_flow *f,
                                 enum xlb_flow_side from, uint32_t expires_s, xlb_verdict *verdict)
{
    struct rte_tcp_hdr *tcp = d->tcp;
    if (f == NULL || f->kind != XLB_FLOW_KIND_NAT || f->state != XLB_FLOW_ESTABLISHED ||
        !f->scheduled ||
        (tcp->tcp_flags & (RTE_TCP_SYN_FLAG | RTE_TCP_FIN_FLAG | RTE_TCP_RST_FLAG)) ||
        !xlb_window_both_spoken(&f->window))
        return false;
    uint32_t payload = xlb_tcp_payload_len(tcp, d->tcp_len);
    if (!xlb_window_accept_data(&f->window, tcp, payload, from)) {
        *verdict = XLB_DROP_TCP_OUT_OF_WINDOW;
        return true;
    }
    /* What track() leaves of such a segment: the state stays, its timeout starts again. */
    f->expires_s = expires_s;
    if (d->family == AF_INET)
        send_established(ctx, snap, d, f, from, AF_INET);
    else
        send_established(ctx, snap, d, f, from, AF_INET6);
    *verdict = XLB_VERDICT_SENT;
    return true;
}
