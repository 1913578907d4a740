/*
 * The TCP state an L4 flow tracks: each segment that fits the flow's windows (nat_window.c)
 * moves the state on (SYN_SENT, ESTABLISHED, CLOSING, CLOSED, RESET, RESUMING) and restarts the
 * state's idle timeout; connect outcomes are call results for the endpoint.
 *
 * A flow is a request in flight on its cluster (circuit breaking) from its pick until the
 * connection closes, as a gRPC call is until it ends, not until its entry goes: FINs from both
 * sides, or a RST. A closed flow's cluster slot becomes XLB_CLUSTER_SLOTS (nothing to end at
 * release). A RST on an established connection is not taken on trust (state RESET): its
 * request ends at the RST, the flow keeps its slot, and if the connection goes on the request
 * starts again; release ends nothing for a flow in RESET (dataplane/flow/flow_life.c).
 */
#include "nat.h"

#include "nat_rewrite.h"
#include "nat_window.h"

static uint32_t timeout_s(enum xlb_flow_state state)
{
    static const uint32_t seconds[] = {
        [XLB_FLOW_SYN_SENT] = XLB_FLOW_SYN_TIMEOUT_S,
        [XLB_FLOW_ESTABLISHED] = XLB_FLOW_ESTABLISHED_TIMEOUT_S,
        [XLB_FLOW_CLOSING] = XLB_FLOW_CLOSING_TIMEOUT_S,
        [XLB_FLOW_CLOSED] = XLB_FLOW_CLOSED_TIMEOUT_S,
        [XLB_FLOW_RESET] = XLB_FLOW_RESET_TIMEOUT_S,
        [XLB_FLOW_RESUMING] = XLB_FLOW_SYN_TIMEOUT_S,
    };
    return seconds[state];
}

/* The connection closed for good: its request ends, once. */
static void request_closed(struct xlb_burst_ctx *ctx, struct xlb_flow *f)
{
    xlb_flow_request_finished(ctx, f->cluster_slot, f->endpoint_slot);
    f->cluster_slot = XLB_CLUSTER_SLOTS;
}

/* A FIN not seen before from its side: it moves the side's end of sequence on (`sent`, the
 * end before the segment); a retransmitted FIN does not. */
static bool new_fin(const struct rte_tcp_hdr *tcp, uint32_t payload, uint32_t sent)
{
    uint8_t flags = tcp->tcp_flags;
    if (!(flags & RTE_TCP_FIN_FLAG) || (flags & RTE_TCP_RST_FLAG))
        return false;
    uint32_t end = rte_be_to_cpu_32(tcp->sent_seq) + payload + 1 + !!(flags & RTE_TCP_SYN_FLAG);
    return (int32_t)(end - sent) > 0;
}

/*
 * Advance the state on a segment that fits the flow's windows; a connect outcome is one call
 * result for the endpoint. False when the segment is out of window: nothing changes.
 */
bool xlb_nat_track(struct xlb_burst_ctx *ctx, struct xlb_flow *f, const struct rte_tcp_hdr *tcp,
                   uint32_t payload, enum xlb_flow_side from)
{
    uint32_t sent = f->window.end[from];
    bool backend_spoke = f->window.max_win[XLB_FLOW_FROM_BACKEND] != 0;
    if (!xlb_window_accept(f, tcp, payload, from))
        return false;
    bool from_backend = from == XLB_FLOW_FROM_BACKEND;
    uint8_t flags = tcp->tcp_flags, before = f->state;
    if (flags & RTE_TCP_RST_FLAG) {
        if (f->state == XLB_FLOW_SYN_SENT && from_backend)
            xlb_flow_count_endpoint(ctx, f->endpoint_slot, false); /* connection refused */
        /* In the window is not yet exact: the endpoint may answer with a challenge ACK instead
         * (RFC 5961 3.2). An established connection keeps its flow a while. */
        f->state = f->state == XLB_FLOW_ESTABLISHED || f->state == XLB_FLOW_RESET ? XLB_FLOW_RESET
                                                                                  : XLB_FLOW_CLOSED;
        if (before == XLB_FLOW_ESTABLISHED)
            xlb_flow_request_finished(ctx, f->cluster_slot,
                                      f->endpoint_slot); /* the slot stays: see above */
        else if (f->state == XLB_FLOW_CLOSED)
            request_closed(ctx, f);
    } else if (f->state == XLB_FLOW_RESET && !(flags & RTE_TCP_SYN_FLAG)) {
        f->state = XLB_FLOW_ESTABLISHED; /* the connection went on: the RST was not taken */
        xlb_flow_request_started(ctx, f->cluster_slot, f->endpoint_slot);
    } else if (f->state == XLB_FLOW_SYN_SENT && from_backend &&
               (flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG)) ==
                   (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG)) {
        if (!backend_spoke)
            xlb_flow_count_endpoint(ctx, f->endpoint_slot, true);
        /* A backend answering proves nothing about the client (a spoofed SYN is answered
         * too): the flow stays half-open, on the SYN timeout, until the client's ACK. Behind
         * the SYN proxy the client's ACK came first. */
        if (f->kind == XLB_FLOW_KIND_NAT_PROXY)
            f->state = XLB_FLOW_ESTABLISHED;
    } else if (f->state == XLB_FLOW_SYN_SENT && !from_backend && backend_spoke &&
               (flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG)) == RTE_TCP_ACK_FLAG) {
        f->state = XLB_FLOW_ESTABLISHED; /* the client's ACK of the backend's SYN-ACK */
    } else if (f->state == XLB_FLOW_RESUMING && from_backend) {
        f->state = XLB_FLOW_ESTABLISHED; /* the backend knows the connection: it goes on */
    }
    if (new_fin(tcp, payload, sent)) {
        if (f->state == XLB_FLOW_ESTABLISHED)
            f->state = XLB_FLOW_CLOSING; /* the first FIN */
        else if (f->state == XLB_FLOW_CLOSING && before == XLB_FLOW_CLOSING)
            request_closed(ctx, f); /* the other side's FIN: both have closed */
    }
    xlb_flow_set_timeout(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz, timeout_s(f->state));
    if (xlb_flow_half_open(before) && !xlb_flow_half_open(f->state) && ctx->flows->n_syn > 0)
        ctx->flows->n_syn--;
    /* The wheel follows a later deadline lazily, but a state with a shorter timeout must move
     * the flow to an earlier slot now. Rare: a few state changes per connection. */
    if (f->state != before && f->scheduled)
        xlb_flow_schedule(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz);
    return true;
}
