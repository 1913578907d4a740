/*
 * The NAT's segments of a burst, handled together. Looked up one at a time, each segment's
 * flow costs up to three dependent cache misses (hash bucket, key, flow entry) that nothing
 * overlaps. Held until the burst's end, their client keys go to rte_hash in one bulk lookup,
 * which interleaves the bucket and key reads of all of them, and the replies' flow entries and
 * stored keys are prefetched before the first segment is handled.
 *
 * Segments are then handled in arrival order, so a flow's packets keep their order. Handling
 * one may create or remove flows (a SYN, an eviction, a reused port), which makes the lookups
 * done for later segments stale: the table counts its changes, and a segment handled after a
 * change looks its flow up again.
 */
#include <sys/socket.h>

#include <rte_ether.h>
#include <rte_prefetch.h>

#include "nat.h"

xlb_verdict xlb_nat_defer(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                          struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len)
{
    if (ctx->n_pending == XLB_RX_BURST) {
        /* Not reached from the burst functions, which empty a full batch first. */
        struct xlb_flow_key key;
        xlb_nat_key_of(p, &key);
        if (p->owned->role == XLB_ROLE_VIP)
            return xlb_nat_from_client(ctx, snap, frame, p, tcp_len, &key,
                                       xlb_flow_lookup_client(ctx->flows, &key));
        return xlb_nat_from_backend(
            ctx, snap, frame, p, tcp_len, &key,
            xlb_flow_lookup_reply_at(ctx->flows, &key, p->owned->snat_index));
    }
    ctx->pending[ctx->n_pending++] = (struct xlb_nat_pending){
        .m = frame->m,
        .ip = p->ip,
        .tcp = p->tcp,
        .owned = p->owned,
        .tcp_len = tcp_len,
        .l3_len = frame->l3_avail,
        .l2_len = frame->l2_len,
        .port_index = p->port_index,
        .family = p->family,
    };
    return XLB_VERDICT_PENDING;
}

static void unpack(const struct xlb_nat_pending *d, struct xlb_frame *frame,
                   struct xlb_tcp_packet *p)
{
    *frame = (struct xlb_frame){
        .m = d->m,
        .eth = rte_pktmbuf_mtod(d->m, struct rte_ether_hdr *),
        .l2_len = d->l2_len,
        .ether_type = d->family == AF_INET ? RTE_ETHER_TYPE_IPV4 : RTE_ETHER_TYPE_IPV6,
        .l3 = d->ip,
        .l3_avail = d->l3_len,
    };
    *p = (struct xlb_tcp_packet){d->family, d->port_index, d->ip, d->tcp, d->owned};
}

void xlb_nat_run_pending(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                         xlb_verdict *verdicts)
{
    uint16_t n = ctx->n_pending;
    struct xlb_flow_table *t = ctx->flows;
    struct xlb_flow_key keys[XLB_RX_BURST];
    const struct xlb_flow_key *client_keys[XLB_RX_BURST];
    struct xlb_flow *client_flows[XLB_RX_BURST];
    uint16_t n_client = 0;
    for (uint16_t i = 0; i < n; i++) {
        struct xlb_frame frame;
        struct xlb_tcp_packet p;
        unpack(&ctx->pending[i], &frame, &p);
        xlb_nat_key_of(&p, &keys[i]);
        if (p.owned->role == XLB_ROLE_VIP)
            client_keys[n_client++] = &keys[i];
        else
            xlb_flow_prefetch_reply_port(t, &keys[i], p.owned->snat_index);
    }
    /* The client keys' bulk lookup gives the replies' port map reads time to arrive. */
    xlb_flow_lookup_client_bulk(t, client_keys, n_client, client_flows);
    for (uint16_t i = 0; i < n; i++)
        if (ctx->pending[i].owned->role != XLB_ROLE_VIP)
            xlb_flow_prefetch_reply(t, &keys[i], ctx->pending[i].owned->snat_index);
    uint32_t changes = t->changes;
    uint16_t c = 0;
    for (uint16_t i = 0; i < n; i++) {
        struct xlb_frame frame;
        struct xlb_tcp_packet p;
        unpack(&ctx->pending[i], &frame, &p);
        if (p.owned->role == XLB_ROLE_VIP) {
            struct xlb_flow *f = client_flows[c++];
            if (t->changes != changes)
                f = xlb_flow_lookup_client(t, &keys[i]);
            verdicts[i] =
                xlb_nat_from_client(ctx, snap, &frame, &p, ctx->pending[i].tcp_len, &keys[i], f);
        } else {
            verdicts[i] =
                xlb_nat_from_backend(ctx, snap, &frame, &p, ctx->pending[i].tcp_len, &keys[i],
                                     xlb_flow_lookup_reply_at(t, &keys[i], p.owned->snat_index));
        }
    }
    ctx->n_pending = 0;
}
