#include "tcp_input.h"

#include <rte_tcp.h>

xlb_verdict xlb_tcp_input(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                          struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len)
{
    if (tcp_len < sizeof(struct rte_tcp_hdr))
        return XLB_DROP_TCP_MALFORMED;
    const struct rte_tcp_hdr *th = p->tcp;
    uint32_t header_len = xlb_tcp_header_len(th);
    if (header_len < sizeof(*th) || header_len > tcp_len)
        return XLB_DROP_TCP_MALFORMED;
    switch (p->owned->role) {
    case XLB_ROLE_VIP:
        if (ctx->flows == NULL || ctx->lb == NULL)
            return XLB_DROP_TCP_NO_SERVICE;
        return xlb_flow_hold(ctx, snap, frame, p, tcp_len);
    case XLB_ROLE_SNAT:
        if (ctx->flows == NULL)
            return XLB_DROP_TCP_NO_SERVICE;
        return xlb_flow_hold(ctx, snap, frame, p, tcp_len);
    default:
        return XLB_DROP_TCP_NO_SERVICE; /* xlb's own port addresses serve nothing over TCP */
    }
}
