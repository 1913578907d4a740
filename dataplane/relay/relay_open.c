/*
 * Opening a relayed connection. The client's SYN is answered by the endpoint with a SYN cookie
 * (no state); the ACK that returns a valid one gets a pick from the LB core, a flow with a SNAT
 * port of this worker (replies come back to it), the accepted client connection and the
 * backend connection, in that order. Anything that fails before the client's connection
 * exists is answered with a RST by the flow layer; nothing is held for a forged ACK.
 */
#include <string.h>
#include <sys/socket.h>

#include "relay_pair.h"
#include "xlb_siphash.h"
#include "tcp_accept.h"

static xlb_verdict answer_syn(struct xlb_relay_worker *w, struct xlb_burst_ctx *ctx,
                              const struct xlb_snapshot *snap, struct xlb_frame *frame,
                              const struct xlb_tcp_packet *p)
{
    struct xlb_syn_cookie_keys keys;
    xlb_accept_cookie_keys(ctx, &keys);
    xlb_relay_enter(w, ctx, snap, NULL);
    w->reply_mac = frame->eth->src_addr;
    w->reply_port = p->port_index;
    xlb_accept_mss_limit(w->ep, snap, p->family, p->port_index);
    if (xlb_tcp_answer_syn(w->ep, xlb_accept_ip_packet(frame), &keys, xlb_relay_now_ms(ctx)) == 0)
        ctx->stats->events[XLB_EVENT_RELAY_SYN_COOKIES_SENT]++;
    xlb_relay_route_output(w);
    return XLB_VERDICT_SENT;
}

/* RFC 6528's initial sequence number: a 4 µs clock plus a keyed hash of the connection. */
static uint32_t backend_iss(const struct xlb_burst_ctx *ctx, const struct xlb_tcp_tuple *t)
{
    uint64_t key[2];
    xlb_siphash_key(key, ctx->flows->secret);
    return (uint32_t)xlb_siphash24(key, t, sizeof(*t)) + (uint32_t)(xlb_relay_now_ms(ctx) * 250);
}

static void side_init(struct xlb_relay_side *s, uint8_t family, const uint8_t *local,
                      uint16_t local_port, const uint8_t *remote, uint16_t remote_port,
                      const struct rte_ether_addr *mac, const struct xlb_port_view *port,
                      uint16_t port_index)
{
    size_t len = family == AF_INET ? 4 : 16;
    s->tuple.family = family;
    memcpy(s->tuple.local, local, len);
    memcpy(s->tuple.remote, remote, len);
    s->tuple.local_port = local_port;
    s->tuple.remote_port = remote_port;
    s->mac = *mac;
    s->local = port->mac;
    s->flat = !port->tx_multi_seg;
    s->port_index = port_index;
}

/* The pick and the flow; a drop reason when either fails (the client gets a RST). */
static xlb_verdict make_flow(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                             const struct xlb_frame *frame, const struct xlb_tcp_packet *p,
                             const struct xlb_flow_key *key, const struct xlb_vip_view *vip,
                             struct xlb_flow **out, uint32_t *endpoint_slot)
{
    struct xlb_lb_request request = {.connection_id = xlb_flow_connection_hash(snap, key)};
    struct xlb_lb_trace trace;
    if (xlb_lb_pick(vip->lb, &request, ctx->lb, &trace) != XLB_LB_PICKED)
        return XLB_DROP_NO_BACKEND;
    const struct xlb_lb_endpoint *e = &trace.cluster->endpoints[trace.endpoint];
    struct rte_ether_addr mac;
    uint16_t out_port;
    enum xlb_flow_create_failure why = XLB_FLOW_CREATE_TABLE_FULL;
    xlb_verdict verdict = XLB_VERDICT_TX;
    struct xlb_flow *f = NULL;
    /* A61: the endpoint's first address of the client's family xlb can reach. */
    const struct xlb_host_port *to = xlb_egress_endpoint_address(
        snap, trace.cluster, trace.endpoint, p->family, &mac, &out_port, &verdict);
    if (to != NULL &&
        (f = xlb_flow_create(ctx->flows, key, &to->addr, rte_cpu_to_be_16(to->port), &why)) == NULL)
        verdict = xlb_flow_create_drop(why);
    else if (to != NULL)
        verdict = XLB_VERDICT_TX;
    if (verdict != XLB_VERDICT_TX) {
        xlb_flow_request_finished(ctx, trace.cluster->cluster_slot, trace.slot);
        return verdict;
    }
    f->kind = XLB_FLOW_KIND_TCP_RELAY;
    f->client_mac = frame->eth->src_addr;
    f->client_port_index = p->port_index;
    f->backend_mac = mac;
    f->backend_port_index = out_port;
    f->endpoint_slot = RTE_MIN(e->slot, (uint32_t)XLB_ENDPOINT_SLOTS);
    f->cluster_slot = RTE_MIN(trace.cluster->cluster_slot, (uint32_t)XLB_CLUSTER_SLOTS);
    f->state = XLB_FLOW_ESTABLISHED;
    xlb_flow_set_timeout(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz, XLB_FLOW_ESTABLISHED_TIMEOUT_S);
    xlb_flow_schedule(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz);
    ctx->stats->events[XLB_EVENT_FLOWS_CREATED]++;
    *endpoint_slot = e->slot;
    *out = f;
    return XLB_VERDICT_TX;
}

static void sides_of(struct xlb_relay_pair *pr, const struct xlb_burst_ctx *ctx,
                     const struct xlb_snapshot *snap, const struct xlb_frame *frame,
                     const struct xlb_tcp_packet *p, const struct xlb_flow_key *key,
                     const struct xlb_flow *f)
{
    const struct xlb_flow_table *t = ctx->flows;
    side_init(&pr->side[XLB_RELAY_CLIENT], key->family, key->dst, key->dst_port, key->src,
              key->src_port, &frame->eth->src_addr, &snap->ports[p->port_index], p->port_index);
    uint16_t snat_port = rte_cpu_to_be_16(f->snat_port);
    side_init(&pr->side[XLB_RELAY_BACKEND], key->family, t->snat[f->snat_index].bytes, snat_port,
              f->backend, f->backend_port, &f->backend_mac, &snap->ports[f->backend_port_index],
              f->backend_port_index);
}

/* A valid cookie: both connections. */
static xlb_verdict open_pair(struct xlb_relay_worker *w, struct xlb_burst_ctx *ctx,
                             const struct xlb_snapshot *snap, struct xlb_frame *frame,
                             const struct xlb_tcp_packet *p, const struct xlb_flow_key *key,
                             const struct xlb_vip_view *vip)
{
    /* Both sides need a block: the endpoint holds two per pair (relay_worker.c). */
    if (w->free_head == XLB_RELAY_NONE || xlb_tcp_conns_in_use(w->ep) + 2 > 2 * w->n_pairs) {
        ctx->stats->events[XLB_EVENT_RELAY_POOL_FULL]++;
        return XLB_DROP_TCP_NO_FLOW;
    }
    struct xlb_flow *f = NULL;
    uint32_t endpoint_slot = 0;
    xlb_verdict verdict = make_flow(ctx, snap, frame, p, key, vip, &f, &endpoint_slot);
    if (verdict != XLB_VERDICT_TX) {
        ctx->stats->events[XLB_EVENT_RELAY_BACKEND_FAILURES]++;
        return XLB_DROP_TCP_NO_FLOW;
    }
    struct xlb_relay_pair *pr = xlb_relay_pair_alloc(w);
    pr->flow = (uint32_t)(f - ctx->flows->flows);
    pr->endpoint_slot = endpoint_slot;
    pr->newreno = vip->newreno;
    f->relay = (uint32_t)(pr - w->pairs);
    sides_of(pr, ctx, snap, frame, p, key, f);

    struct xlb_syn_cookie_keys keys;
    xlb_accept_cookie_keys(ctx, &keys);
    uint64_t now = xlb_relay_now_ms(ctx);
    xlb_relay_enter(w, ctx, snap, pr);
    xlb_accept_mss_limit(w->ep, snap, p->family, p->port_index);
    struct xlb_tcp_conn *client =
        xlb_tcp_accept(w->ep, xlb_accept_ip_packet(frame), &keys, now, &xlb_relay_callbacks, pr);
    struct xlb_tcp_conn *backend = NULL;
    if (client != NULL) {
        const struct xlb_tcp_tuple *t = &pr->side[XLB_RELAY_BACKEND].tuple;
        xlb_accept_mss_limit(w->ep, snap, p->family, f->backend_port_index);
        backend = xlb_tcp_connect(w->ep, t, backend_iss(ctx, t), now, &xlb_relay_callbacks, pr);
    }
    if (backend == NULL) {
        /* Not reached with the room checked above; the client is told, the flow goes. */
        xlb_relay_route_output(w);
        xlb_flow_release(ctx, f); /* resets the client through xlb_relay_release */
        return XLB_VERDICT_SENT;
    }
    pr->side[XLB_RELAY_BACKEND].conn = backend;
    if (pr->newreno)
        xlb_tcp_set_cc(w->ep, backend, XLB_TCP_CC_NEWRENO);
    ctx->stats->events[XLB_EVENT_RELAY_OPENED]++;
    xlb_relay_pump(w, pr); /* data that came with the ACK */
    xlb_relay_route_output(w);
    return XLB_VERDICT_SENT;
}

xlb_verdict xlb_relay_no_flow(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                              struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len,
                              const struct xlb_flow_key *key, const struct xlb_vip_view *vip)
{
    struct xlb_relay_worker *w = ctx->relay;
    if (w == NULL || vip->lb == NULL)
        return XLB_DROP_TCP_NO_SERVICE;
    uint8_t flags = p->tcp->tcp_flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG);
    if (flags == RTE_TCP_SYN_FLAG)
        return answer_syn(w, ctx, snap, frame, p);
    if (flags != RTE_TCP_ACK_FLAG)
        return XLB_DROP_TCP_NO_FLOW;
    if (!xlb_accept_cookie_valid(ctx, p->tcp, xlb_tcp_payload_len(p->tcp, tcp_len), key)) {
        ctx->stats->events[XLB_EVENT_RELAY_BAD_COOKIES]++;
        return XLB_DROP_TCP_NO_FLOW; /* answered with a RST, as Linux answers a bad cookie */
    }
    return open_pair(w, ctx, snap, frame, p, key, vip);
}
