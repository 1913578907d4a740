/*
 * Ending a connection from xlb's side. A request xlb cannot forward (no route, a drop
 * overload, an open circuit, no endpoint, a backend that never answered) gets the answer a
 * proxyless gRPC client would have made itself: the RPC fails UNAVAILABLE, with the reason in
 * grpc-message, as a trailers-only response on the request's stream; then GOAWAY and FIN.
 * Protocol errors and overflows get a RST.
 */
#include "l7_conn.h"

/* HTTP/2 error codes (RFC 9113 7). */
#define H2_NO_ERROR 0x0u

void xlb_l7_close(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c)
{
    c->phase = XLB_L7_CLOSED;       /* nothing more is sent to the client */
    xlb_flow_release(ctx, c->flow); /* calls xlb_l7_release, which frees c */
}

void xlb_l7_abort(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap, struct xlb_l7_conn *c)
{
    xlb_l7_send_ts(ctx, snap, c, XLB_L7_TO_CLIENT, c->snd_nxt, c->rcv_nxt,
                   RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG, 0, NULL, 0);
    ctx->stats->events[XLB_EVENT_L7_ABORTED]++;
    xlb_l7_close(ctx, c);
}

void xlb_l7_reject(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                   struct xlb_l7_conn *c, const char *reason)
{
    uint8_t out[512];
    uint32_t n = xlb_h2_trailers_only(&ctx->l7->encoder, out, sizeof(out) - 17, c->first_stream,
                                      14 /* UNAVAILABLE */, reason, NULL);
    if (n == 0) {
        xlb_l7_abort(ctx, snap, c);
        return;
    }
    n += xlb_h2_goaway(out + n, c->first_stream, H2_NO_ERROR);
    xlb_l7_send_ts(ctx, snap, c, XLB_L7_TO_CLIENT, c->snd_nxt, c->rcv_nxt,
                   RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG | RTE_TCP_FIN_FLAG, xlb_l7_receive_window(c),
                   out, n);
    c->snd_nxt += n + 1;
    c->phase = XLB_L7_CLOSED;
    xlb_l7_retry_disarm(ctx, c);
    ctx->stats->events[XLB_EVENT_L7_REJECTED]++;
    /* What the client sends now only closes the connection: the flow ends soon. */
    struct xlb_flow *f = c->flow;
    f->state = XLB_FLOW_CLOSING;
    xlb_flow_set_timeout(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz, XLB_FLOW_CLOSED_TIMEOUT_S);
    xlb_flow_schedule(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz);
}
