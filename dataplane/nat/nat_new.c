/*
 * New L4 flows: a client segment with no flow gets a pick from the LB core (lib/lb) and a flow
 * with a SNAT address and port of this worker's slice; a full table makes room by eviction.
 */
#include "nat.h"

#include "nat_proxy.h"

#include "nat_rewrite.h"
#include "nat_window.h"

static xlb_verdict pick_outcome_drop(enum xlb_lb_outcome outcome)
{
    switch (outcome) {
    case XLB_LB_DROPPED:
        return XLB_DROP_LB_DROP_OVERLOAD;
    case XLB_LB_CIRCUIT_OPEN:
        return XLB_DROP_LB_CIRCUIT_OPEN;
    default:
        return XLB_DROP_NO_BACKEND;
    }
}

/*
 * Whether an L4 VIP picks by each connection's addresses and ports alone: every leaf of its
 * cluster is a ring hash (A42) over xlb_flow_connection_hash. Picking again, later or in another
 * xlb process with the same configuration, then gives a connection the backend its SYN got.
 */
static bool picks_by_hash(const struct xlb_lb_vip *lb)
{
    if (lb == NULL || lb->n_targets != 1 || !lb->targets[0].ready)
        return false;
    const struct xlb_lb_target *target = &lb->targets[0];
    for (uint32_t i = 0; i < target->n_leaves; i++)
        if (!xlb_lb_policy_hashes(target->leaves[i]->policy))
            return false;
    return target->n_leaves > 0;
}

/*
 * The flow for a pick; a full table makes room by evicting the flow nearest its idle timeout.
 * A VIP that picks by hash gets the SNAT address and port its key's hash names, so that the
 * connection can be picked up again (strictly so when resuming: any other port would make
 * another peer to the backend).
 */
static struct xlb_flow *create_evicting(struct xlb_burst_ctx *ctx, const struct xlb_flow_key *key,
                                        const struct xlb_host_port *to, const uint64_t *hash,
                                        bool strict, enum xlb_flow_create_failure *why)
{
    struct xlb_flow_table *t = ctx->flows;
    uint16_t port = rte_cpu_to_be_16(to->port);
    for (int attempt = 0; attempt < 2; attempt++) {
        struct xlb_flow *f =
            hash != NULL ? xlb_flow_create_hashed(t, key, &to->addr, port, *hash, strict, why)
                         : xlb_flow_create(t, key, &to->addr, port, why);
        struct xlb_flow evicted;
        if (f != NULL || attempt > 0 || *why != XLB_FLOW_CREATE_TABLE_FULL ||
            !xlb_flow_evict_oldest(t, XLB_NAT_EVICT_BUDGET, &evicted))
            return f;
        xlb_flow_evicted(ctx, &evicted); /* whatever its kind: its engine's state ends */
    }
    return NULL;
}

/*
 * A flow for a client segment that has none: a SYN's, or (resume) a later segment's of a
 * connection whose flow this process does not have (it restarted, or took over the addresses
 * of another xlb host). The LB core picks the backend and the flow is created. A connection
 * is picked up only on a VIP that picks by hash, on the SNAT port its SYN got: then the
 * backend sees the same peer, and the connection goes on. XLB_DROP_TCP_NO_FLOW: it cannot be.
 * vip: the segment's L4 VIP, or NULL when it has none.
 */
/*
 * "auto": a SYN also gets a cookie once its cluster has l4_syn_proxy_percent of its
 * max_requests in flight (or its circuit is open). A flow counts as a request from its SYN, so
 * a flood's half-open flows would otherwise fill the circuit breaker (1,024 by default) long
 * before the half-open pool's threshold (a quarter of 65,536, half of it) and refuse every
 * real client with them; with cookies, a real client's ACK is picked against the half left.
 */
static bool cookie_for_cluster(const struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                               const struct xlb_tcp_packet *p, bool hashed,
                               enum xlb_lb_outcome outcome, const struct xlb_lb_trace *trace)
{
    uint8_t flags = p->tcp->tcp_flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG);
    if (snap->l4_syn_proxy != XLB_SYN_PROXY_AUTO || hashed || flags != RTE_TCP_SYN_FLAG)
        return false;
    if (outcome == XLB_LB_CIRCUIT_OPEN)
        return true;
    const struct xlb_lb_cluster *c = trace->cluster;
    return outcome == XLB_LB_PICKED && c->max_requests != 0 &&
           xlb_lb_in_flight(ctx->lb, c->cluster_slot) * 100 >=
               (uint64_t)c->max_requests * snap->l4_syn_proxy_percent;
}

xlb_verdict xlb_nat_new_flow(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                             struct xlb_frame *frame, const struct xlb_tcp_packet *p,
                             const struct xlb_flow_key *key, const struct xlb_vip_view *vip,
                             uint32_t payload, bool resume, struct xlb_flow **out)
{
    if (vip == NULL)
        return resume ? XLB_DROP_TCP_NO_FLOW : XLB_DROP_TCP_NO_SERVICE;
    bool hashed = picks_by_hash(vip->lb);
    if (resume && !hashed)
        return XLB_DROP_TCP_NO_FLOW;
    /* SYN flood policy: half-open flows take at most a quarter of the table. */
    if (ctx->flows->n_syn >= ctx->flows->syn_cap)
        return XLB_DROP_SYN_POOL_FULL;
    struct xlb_lb_request request = {.connection_id = xlb_flow_connection_hash(snap, key)};
    struct xlb_lb_trace trace;
    enum xlb_lb_outcome outcome = xlb_lb_pick(vip->lb, &request, ctx->lb, &trace);
    if (cookie_for_cluster(ctx, snap, p, hashed, outcome, &trace)) {
        if (outcome == XLB_LB_PICKED) /* the pick counted a request start: no flow, none */
            xlb_flow_request_finished(ctx, trace.cluster->cluster_slot, trace.slot);
        return XLB_NAT_VERDICT_COOKIE;
    }
    if (outcome != XLB_LB_PICKED)
        return pick_outcome_drop(outcome);
    const struct xlb_lb_endpoint *e = &trace.cluster->endpoints[trace.endpoint];
    struct xlb_flow *f = NULL;
    xlb_verdict verdict = XLB_VERDICT_TX;
    struct rte_ether_addr mac;
    uint16_t out_port;
    /* A61: the endpoint's first address of the client's family xlb can reach (no NAT between
     * families; a SYN lost to a dead address is the client's to retry). */
    const struct xlb_host_port *to = xlb_egress_endpoint_address(
        snap, trace.cluster, trace.endpoint, p->family, &mac, &out_port, &verdict);
    if (to != NULL)
        verdict = XLB_VERDICT_TX;
    enum xlb_flow_create_failure why = XLB_FLOW_CREATE_TABLE_FULL;
    if (verdict == XLB_VERDICT_TX &&
        (f = create_evicting(ctx, key, to, hashed ? &request.connection_id : NULL, resume, &why)) ==
            NULL)
        verdict = xlb_flow_create_drop(why);
    if (verdict != XLB_VERDICT_TX) {
        /* The pick counted a request start: end it, so circuit breaking sees it gone. */
        xlb_flow_request_finished(ctx, trace.cluster->cluster_slot, trace.slot);
        return verdict;
    }
    f->client_mac = frame->eth->src_addr;
    f->client_port_index = p->port_index;
    f->backend_mac = mac;
    f->backend_port_index = out_port;
    /* Slots beyond the counters (none expected) are stored as the limit: nothing counted. */
    f->endpoint_slot = RTE_MIN(e->slot, (uint32_t)XLB_ENDPOINT_SLOTS);
    f->cluster_slot = RTE_MIN(trace.cluster->cluster_slot, (uint32_t)XLB_CLUSTER_SLOTS);
    f->state = resume ? XLB_FLOW_RESUMING : XLB_FLOW_SYN_SENT;
    if (resume)
        xlb_window_pick_up(&f->window, p->tcp, payload);
    xlb_flow_set_word(ctx->flows, f, xlb_nat_patches_of(ctx->flows, f, key));
    ctx->flows->n_syn++;
    ctx->stats->events[resume ? XLB_EVENT_FLOWS_RESUMED : XLB_EVENT_FLOWS_CREATED]++;
    *out = f;
    return XLB_VERDICT_TX;
}

/* Whether a segment without a flow goes to the SYN proxy. A VIP that picks by hash keeps its
 * connections resumable (another xlb, or this one restarted, picks them up): a proxied
 * connection's sequence offset would be lost with its flow, so such VIPs are not proxied. In
 * "auto", a SYN gets a cookie once the worker's half-open pool is l4_syn_proxy_percent full
 * (as Linux turns to cookies when its SYN backlog overflows), and any other segment is checked
 * as the ACK of a cookie, which it may be: the pool may have emptied since. */
static bool proxied(const struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                    const struct xlb_vip_view *vip, uint8_t flags)
{
    if (snap->l4_syn_proxy == XLB_SYN_PROXY_OFF || vip == NULL || picks_by_hash(vip->lb))
        return false;
    if (snap->l4_syn_proxy == XLB_SYN_PROXY_ON || flags != RTE_TCP_SYN_FLAG)
        return true;
    return (uint64_t)ctx->flows->n_syn * 100 >=
           (uint64_t)ctx->flows->syn_cap * snap->l4_syn_proxy_percent;
}

xlb_verdict xlb_nat_no_flow(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                            struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len,
                            const struct xlb_flow_key *key, const struct xlb_vip_view *vip)
{
    uint8_t flags = p->tcp->tcp_flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG);
    if (proxied(ctx, snap, vip, flags))
        return xlb_nat_proxy_no_flow(ctx, snap, frame, p, tcp_len, key, vip);
    bool syn = flags == RTE_TCP_SYN_FLAG;
    /* After the handshake every segment carries an ACK: only such a one is picked up. */
    bool later = flags == RTE_TCP_ACK_FLAG;
    if (!syn && !later)
        return XLB_DROP_TCP_NO_FLOW;
    struct xlb_flow *f = NULL;
    xlb_verdict verdict = xlb_nat_new_flow(ctx, snap, frame, p, key, vip,
                                           xlb_tcp_payload_len(p->tcp, tcp_len), !syn, &f);
    if (verdict == XLB_NAT_VERDICT_COOKIE) {
        ctx->stats->events[XLB_EVENT_SYN_PROXY_CIRCUIT_COOKIES]++;
        return xlb_nat_proxy_no_flow(ctx, snap, frame, p, tcp_len, key, vip);
    }
    if (verdict != XLB_VERDICT_TX)
        return verdict;
    return xlb_nat_send_from_client(ctx, snap, frame, p, tcp_len, f);
}
