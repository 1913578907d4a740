#include "burst.h"

#include <string.h>
#include <sys/socket.h>

#include <rte_ether.h>

#include "arp.h"
#include "ip_input.h"
#include "flow/fast_hold.h"
#include "flow/flow.h"
#include "neighbour_discovery.h"
#include "packet_parse.h"
#include "stream/stream.h"
#include "relay/relay.h"
#include "xlb_tcp_report.h"

void xlb_tx_enqueue(struct xlb_burst_ctx *ctx, uint16_t port_index, struct rte_mbuf *m)
{
    struct xlb_tx_batch *batch = &ctx->tx[port_index];
    if (batch->n == XLB_TX_BATCH && ctx->tx_flush != NULL)
        ctx->tx_flush(ctx, port_index);
    if (batch->n == XLB_TX_BATCH) {
        ctx->stats->drops[XLB_DROP_TX_FULL]++;
        rte_pktmbuf_free(m);
        return;
    }
    batch->pkts[batch->n++] = m;
}

void xlb_burst_ctx_init(struct xlb_burst_ctx *ctx, const struct xlb_burst_params *params)
{
    memset(ctx, 0, sizeof(*ctx));
    ctx->stats = params->stats;
    ctx->to_control = params->to_control;
    ctx->pool = params->pool;
    ctx->flows = params->flows;
    ctx->lb = params->lb;
    ctx->l7 = params->l7;
    ctx->relay = params->relay;
    ctx->stream = params->stream;
    ctx->redirect = params->redirect;
    ctx->worker_id = params->worker_id;
    ctx->n_workers = params->n_workers;
    ctx->snat_port_base = params->snat_port_base;
    ctx->snat_slice =
        params->snat_slice != 0 ? params->snat_slice : xlb_snat_slice(params->n_workers);
    ctx->tsc_hz = params->tsc_hz;
    ctx->now_tsc = params->now_tsc;
}

static xlb_verdict classify(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                            uint16_t port_index, struct rte_mbuf *m)
{
    struct xlb_frame frame;
    xlb_verdict verdict = xlb_parse_ethernet(m, &snap->ports[port_index].mac, &frame);
    if (verdict != XLB_VERDICT_TX)
        return verdict;
    switch (frame.ether_type) {
    case RTE_ETHER_TYPE_ARP:
        return xlb_arp_input(ctx, snap, port_index, &frame);
    case RTE_ETHER_TYPE_IPV4:
        return xlb_ipv4_input(ctx, snap, port_index, &frame);
    case RTE_ETHER_TYPE_IPV6:
        return xlb_ipv6_input(ctx, snap, port_index, &frame);
    default:
        return XLB_DROP_ETHERTYPE_UNSUPPORTED;
    }
}

void xlb_burst_process(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                       uint16_t port_index, struct rte_mbuf **pkts, uint16_t n)
{
    ctx->stats->rx_packets += n;
    /* What the fast path assumes of every packet, settled once for the burst. */
    bool forwarding = ctx->flows != NULL && ctx->lb != NULL;
    xlb_owned_cache_follow(&ctx->owned, snap);
    for (uint16_t i = 0; i < n; i++) {
        if (i + 1 < n)
            rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
        if (!forwarding || !xlb_flow_fast_hold(ctx, snap, port_index, pkts[i]))
            xlb_dispose(ctx, port_index, pkts[i], classify(ctx, snap, port_index, pkts[i]));
        if (ctx->n_pending == XLB_RX_BURST)
            xlb_flow_run_held(ctx, snap); /* a burst longer than the batch */
    }
    xlb_flow_run_held(ctx, snap);
    xlb_stream_flush(ctx);
}

static uint16_t port_index_of(const struct xlb_snapshot *snap, uint16_t port_id)
{
    for (uint16_t p = 0; p < snap->n_ports; p++)
        if (snap->ports[p].port_id == port_id)
            return p;
    return UINT16_MAX;
}

void xlb_burst_process_redirected(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                  struct rte_mbuf **pkts, uint16_t n)
{
    ctx->stats->events[XLB_EVENT_REDIRECTED_IN] += n;
    ctx->redirected_pass = true;
    for (uint16_t i = 0; i < n; i++) {
        uint16_t port_index = port_index_of(snap, pkts[i]->port);
        if (port_index == UINT16_MAX) {
            xlb_dispose(ctx, 0, pkts[i], XLB_DROP_NOT_OUR_MAC);
            continue;
        }
        xlb_dispose(ctx, port_index, pkts[i], classify(ctx, snap, port_index, pkts[i]));
        if (ctx->n_pending == XLB_RX_BURST)
            xlb_flow_run_held(ctx, snap);
    }
    xlb_flow_run_held(ctx, snap);
    xlb_stream_flush(ctx);
    ctx->redirected_pass = false;
}

static void send_solicitation(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                              const struct xlb_msg *msg)
{
    if (msg->port_index >= snap->n_ports)
        return;
    const struct xlb_port_view *port = &snap->ports[msg->port_index];
    const struct xlb_prefix *source = xlb_port_prefix_for(port, &msg->addr);
    if (source == NULL)
        return;
    struct rte_mbuf *m = msg->addr.family == AF_INET
                             ? xlb_arp_build_request(ctx->pool, port, &source->addr, &msg->addr)
                             : xlb_nd_build_solicit(ctx->pool, port, &source->addr, &msg->addr);
    if (m == NULL) {
        ctx->stats->drops[XLB_DROP_NO_MBUF]++;
        return;
    }
    ctx->stats->events[XLB_EVENT_SOLICITATIONS_SENT]++;
    xlb_tx_enqueue(ctx, msg->port_index, m);
}

void xlb_burst_handle_message(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                              const struct xlb_msg *msg)
{
    ctx->stats->events[XLB_EVENT_CONTROL_MESSAGES]++;
    if (msg->type == XLB_MSG_SOLICIT)
        send_solicitation(ctx, snap, msg);
    else if (msg->type == XLB_MSG_FLUSH_ENDPOINT && ctx->flows != NULL)
        ctx->flush = (struct xlb_flush){
            .active = true, .port = msg->l4_port, .cursor = 0, .addr = msg->addr};
    else if (msg->type == XLB_MSG_FLOWS_DUMP && msg->dump != NULL)
        ctx->dump = msg->dump; /* one at a time: the control plane waits for the last one */
    else if (msg->type == XLB_MSG_TCP_DUMP && msg->tcp_dump != NULL)
        ctx->tcp_dump = msg->tcp_dump; /* likewise */
}

void xlb_burst_dump_step(struct xlb_burst_ctx *ctx)
{
    if (ctx->dump != NULL &&
        xlb_flow_table_dump_step(ctx->flows, ctx->dump, ctx->worker_id, ctx->now_tsc))
        ctx->dump = NULL;
    const struct xlb_tcp_endpoint *eps[] = {
        ctx->relay ? xlb_relay_endpoint(ctx->relay) : NULL,
        ctx->stream ? xlb_stream_endpoint(ctx->stream) : NULL,
    };
    if (ctx->tcp_dump != NULL && xlb_tcp_dump_step(eps, 2, ctx->tcp_dump, ctx->worker_id))
        ctx->tcp_dump = NULL; /* without an endpoint, at once and empty */
}
