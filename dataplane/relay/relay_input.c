/*
 * Segments of relayed connections, either direction, to their side's connection in the
 * endpoint. A side that has closed takes nothing more, except a side in TIME-WAIT, which
 * answers its peer's retransmitted FIN while the flow lasts.
 */
#include "relay_pair.h"

/* The connection a side's segments go to, or NULL. */
static struct xlb_tcp_conn *receiver(const struct xlb_relay_pair *pr, enum xlb_relay_side_index s)
{
    const struct xlb_relay_side *side = &pr->side[s];
    struct xlb_tcp_conn *c = side->conn;
    if (c == NULL || !side->done)
        return c;
    /* Past its on_closed, the block is the pair's only while it stays in TIME-WAIT. */
    return xlb_tcp_conn_state(c) == XLB_TCP_TIME_WAIT && xlb_tcp_conn_user(c) == pr ? c : NULL;
}

static xlb_verdict to_side(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                           struct xlb_frame *frame, struct xlb_flow *f, enum xlb_relay_side_index s)
{
    struct xlb_relay_worker *w = ctx->relay;
    if (w == NULL || f->relay >= w->n_pairs || !w->pairs[f->relay].in_use)
        return XLB_DROP_RELAY_ENDED;
    struct xlb_relay_pair *pr = &w->pairs[f->relay];
    struct xlb_tcp_conn *c = receiver(pr, s);
    if (c == NULL)
        return XLB_DROP_RELAY_ENDED;
    if (!pr->ended)
        xlb_flow_set_timeout(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz,
                             XLB_FLOW_ESTABLISHED_TIMEOUT_S);
    rte_pktmbuf_adj(frame->m, frame->l2_len);
    xlb_relay_enter(w, ctx, snap, pr);
    xlb_tcp_receive(w->ep, c, frame->m, xlb_relay_now_ms(ctx));
    xlb_relay_route_output(w);
    return XLB_VERDICT_SENT; /* taken by the endpoint, whatever it made of it */
}

void xlb_relay_icmp_error(struct xlb_burst_ctx *ctx, struct xlb_flow *f, bool to_backend,
                          uint32_t mtu, uint32_t seq)
{
    struct xlb_relay_worker *w = ctx->relay;
    if (w == NULL || mtu == 0 || f->relay >= w->n_pairs || !w->pairs[f->relay].in_use)
        return;
    struct xlb_relay_pair *pr = &w->pairs[f->relay];
    struct xlb_relay_side *s = &pr->side[to_backend ? XLB_RELAY_BACKEND : XLB_RELAY_CLIENT];
    if (s->conn == NULL || s->done)
        return;
    xlb_relay_enter(w, ctx, NULL, pr);
    xlb_tcp_pmtu(w->ep, s->conn, mtu, seq); /* checks seq against what is in flight */
    xlb_relay_route_output(w);
}

xlb_verdict xlb_relay_from_client(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                  struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                  struct xlb_flow *f)
{
    (void)p;
    return to_side(ctx, snap, frame, f, XLB_RELAY_CLIENT);
}

xlb_verdict xlb_relay_from_backend(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                   struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                   struct xlb_flow *f)
{
    (void)p;
    return to_side(ctx, snap, frame, f, XLB_RELAY_BACKEND);
}
