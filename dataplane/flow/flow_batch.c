/*
 * A burst's segments to VIPs and SNAT addresses, handled together. Looked up one at a time, each
 * segment's flow costs up to three dependent cache misses (hash bucket, key, flow entry) that
 * nothing overlaps. Held until the burst's end, their client keys go to rte_hash in one bulk
 * lookup, which interleaves the bucket and key reads of all of them, and the replies' flow entries
 * and stored keys are prefetched before the first segment is handled.
 *
 * Segments are then handled in arrival order, so a flow's packets keep their order. Handling
 * one may create or remove flows (a SYN, an eviction, a reused port), which makes the lookups
 * done for later segments stale: the table counts its changes, and a segment handled after a
 * change looks its flow up again. Most segments are data and ACKs of established NAT flows,
 * which xlb_nat_forward_established takes straight through; the rest go to the engine of their
 * flow's kind, or of their VIP's kind when they have no flow (dispatch). Each segment's verdict
 * is then disposed of here: queued, consumed, or dropped with its reason.
 */
#include <sys/socket.h>

#include <rte_ether.h>
#include <rte_prefetch.h>

#include "flow.h"
#include "l7/l7.h"
#include "nat/nat.h"
#include "relay/relay.h"
#include "stream/stream.h"
#include "xlb_flow_hkey.h"

/*
 * A reply for a SNAT port of another worker's slice reached this worker's queue (RSS hashes
 * the two directions of a NATed flow differently): hand it to the owner over its redirect
 * ring. A packet already redirected is never passed on again.
 */
static xlb_verdict steer_to_owner(struct xlb_burst_ctx *ctx, struct xlb_frame *frame, uint16_t port)
{
    if (port < ctx->snat_port_base)
        return XLB_DROP_TCP_NO_FLOW;
    uint32_t slice = ctx->snat_slice;
    unsigned owner = slice == 0 ? 0 : (unsigned)((port - ctx->snat_port_base) / slice);
    if (owner == ctx->worker_id || ctx->redirected_pass)
        return XLB_DROP_TCP_NO_FLOW;
    if (ctx->redirect == NULL || owner >= ctx->n_workers)
        return XLB_DROP_FLOW_OTHER_WORKER;
    if (rte_ring_mp_enqueue(ctx->redirect[owner], frame->m) != 0)
        return XLB_DROP_REDIRECT_FULL;
    ctx->stats->events[XLB_EVENT_REDIRECTED_OUT]++;
    return XLB_VERDICT_SENT;
}

/*
 * A segment to its engine: by its flow's kind, or without a flow, a client's by its VIP's kind
 * (a segment of no connection either engine knows gets a RST) and a backend's to the worker
 * that owns its SNAT port.
 */
static xlb_verdict dispatch(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                            struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len,
                            const struct xlb_flow_key *key, struct xlb_flow *f, bool from_client)
{
    if (!from_client) {
        if (f == NULL)
            return steer_to_owner(ctx, frame, rte_be_to_cpu_16(key->dst_port));
        if (f->kind == XLB_FLOW_KIND_L7_SPLICE)
            return xlb_l7_from_backend(ctx, snap, frame, p, tcp_len, f);
        if (f->kind == XLB_FLOW_KIND_L7_CLOSED)
            return xlb_l7_closed_from_backend(ctx, snap, frame, p, f);
        if (f->kind == XLB_FLOW_KIND_TCP_RELAY)
            return xlb_relay_from_backend(ctx, snap, frame, p, f);
        if (f->kind == XLB_FLOW_KIND_STREAM_SUB)
            return xlb_stream_from_backend(ctx, snap, frame, f);
        if (f->kind == XLB_FLOW_KIND_STREAM_CLIENT)
            return XLB_DROP_RELAY_ENDED; /* no backend talks on a client connection's flow */
        return xlb_nat_from_backend(ctx, snap, frame, p, tcp_len, f);
    }
    /* The client reuses its port after a FIN or RST: a new connection, picked afresh. */
    if (f != NULL && f->state >= XLB_FLOW_CLOSING &&
        (p->tcp->tcp_flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG)) ==
            RTE_TCP_SYN_FLAG) {
        xlb_flow_release(ctx, f);
        f = NULL;
    }
    if (f != NULL) {
        if (f->kind == XLB_FLOW_KIND_L7_SPLICE)
            return xlb_l7_from_client(ctx, snap, frame, p, tcp_len, f);
        if (f->kind == XLB_FLOW_KIND_L7_CLOSED)
            return xlb_l7_closed_from_client(ctx, snap, frame, p, tcp_len, f);
        if (f->kind == XLB_FLOW_KIND_TCP_RELAY)
            return xlb_relay_from_client(ctx, snap, frame, p, f);
        if (f->kind == XLB_FLOW_KIND_STREAM_CLIENT)
            return xlb_stream_from_client(ctx, snap, frame, f);
        if (f->kind == XLB_FLOW_KIND_STREAM_SUB)
            return XLB_DROP_RELAY_ENDED; /* a made-up key: no client sends on it */
        return xlb_nat_from_client(ctx, snap, frame, p, tcp_len, f);
    }
    const struct xlb_vip_view *vip = xlb_flow_vip_of(snap, key);
    xlb_verdict verdict;
    if (vip != NULL && vip->l7 && vip->stream)
        verdict = xlb_stream_no_flow(ctx, snap, frame, p, tcp_len, key, vip);
    else if (vip != NULL && vip->l7)
        verdict = xlb_l7_no_flow(ctx, snap, frame, p, tcp_len, key, vip);
    else if (vip != NULL && vip->terminate)
        verdict = xlb_relay_no_flow(ctx, snap, frame, p, tcp_len, key, vip);
    else
        verdict = xlb_nat_no_flow(ctx, snap, frame, p, tcp_len, key, vip);
    return verdict == XLB_DROP_TCP_NO_FLOW ? xlb_egress_reset_reply(ctx, snap, frame, p, tcp_len)
                                           : verdict;
}

xlb_verdict xlb_flow_hold(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                          struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len)
{
    if (ctx->n_pending == XLB_RX_BURST) {
        /* Not reached from the burst functions, which empty a full batch first. */
        struct xlb_flow_key key;
        xlb_flow_key_of(p, &key);
        bool from_client = p->owned->role == XLB_ROLE_VIP;
        struct xlb_flow *f = from_client
                                 ? xlb_flow_lookup_client(ctx->flows, &key)
                                 : xlb_flow_lookup_reply_at(ctx->flows, &key, p->owned->snat_index);
        return dispatch(ctx, snap, frame, p, tcp_len, &key, f, from_client);
    }
    ctx->pending[ctx->n_pending++] = (struct xlb_held_segment){
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

static void unpack(const struct xlb_held_segment *d, struct xlb_frame *frame,
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
    *p = xlb_flow_packet_of(d);
}

/* What the first pass learns of the held segments, for the lookups and the second. */
struct lookups {
    bool from_client[XLB_RX_BURST];      /* to a VIP; otherwise a reply to a SNAT address */
    const uint32_t *slots[XLB_RX_BURST]; /* replies: their port map entry, or NULL */
    struct xlb_flow_hkey hkeys[XLB_RX_BURST];
    struct xlb_flow *found[XLB_RX_BURST]; /* the bulk lookup's flow of hkeys[j] */
    int16_t hkey_at[XLB_RX_BURST];        /* a client segment's hkeys[] entry, or -1 */
    uint16_t n_hkeys;
    const uint32_t *reply_slots[XLB_RX_BURST]; /* the replies' slots that name a port */
    uint16_t n_reply_slots;
    /* The full keys of segments the general handlers will take (keyed), built here: read
     * right after being written, a key's small stores would stall its wider loads. Aligned
     * for rte_hash_crc, which reads a key 8 bytes at a time. */
    struct xlb_flow_key keys[XLB_RX_BURST] __attribute__((aligned(8)));
    bool keyed[XLB_RX_BURST];
};

/*
 * Each client segment's key in the hash's compact form, for the bulk lookup, and each reply's
 * port map entry, found (once) and prefetched; straight from the headers, as nothing more is
 * needed for most segments. A client key no flow can have (an IPv6 VIP the table has not
 * numbered) is looked up no further. A SYN, FIN or RST, which the general handlers take, gets
 * its full key too.
 */
static void first_pass(const struct xlb_burst_ctx *ctx, struct lookups *l)
{
    const struct xlb_flow_table *t = ctx->flows;
    l->n_hkeys = l->n_reply_slots = 0;
    for (uint16_t i = 0; i < ctx->n_pending; i++) {
        const struct xlb_held_segment *d = &ctx->pending[i];
        const uint8_t *src, *dst;
        xlb_flow_addresses(d->family, d->ip, &src, &dst);
        l->keyed[i] = d->tcp->tcp_flags & (RTE_TCP_SYN_FLAG | RTE_TCP_FIN_FLAG | RTE_TCP_RST_FLAG);
        if (l->keyed[i]) {
            struct xlb_tcp_packet p = xlb_flow_packet_of(d);
            xlb_flow_key_of(&p, &l->keys[i]);
        }
        l->from_client[i] = d->owned->role == XLB_ROLE_VIP;
        if (l->from_client[i]) {
            l->hkey_at[i] = -1;
            if (xlb_flow_hkey_from(&t->vip6, d->family, src, d->tcp->src_port, dst,
                                   d->tcp->dst_port, &l->hkeys[l->n_hkeys]))
                l->hkey_at[i] = (int16_t)l->n_hkeys++;
        } else {
            l->slots[i] =
                xlb_flow_reply_slot(t, d->family, dst, d->tcp->dst_port, d->owned->snat_index);
            if (l->slots[i] != NULL) {
                rte_prefetch0(l->slots[i]);
                l->reply_slots[l->n_reply_slots++] = l->slots[i];
            }
        }
    }
}

/*
 * The flow of a held segment, as the second pass finds it: a client segment's from the bulk
 * lookup, or afresh if flows have changed since; a reply's from its port map entry now. A
 * client key that had no compact form (an IPv6 VIP not numbered yet) may have one now, when a
 * SYN earlier in the burst made the VIP's first flow: it is looked up by its full key.
 */
static struct xlb_flow *flow_of(struct xlb_flow_table *t, struct lookups *l, uint16_t i,
                                const struct xlb_held_segment *d, bool stale)
{
    if (!l->from_client[i]) {
        const uint8_t *src, *dst;
        xlb_flow_addresses(d->family, d->ip, &src, &dst);
        return xlb_flow_reply_at_slot(t, l->slots[i], d->family, src, d->tcp->src_port);
    }
    if (!stale)
        return l->hkey_at[i] >= 0 ? l->found[l->hkey_at[i]] : NULL;
    if (l->hkey_at[i] >= 0)
        return xlb_flow_lookup_client_hkey(t, &l->hkeys[l->hkey_at[i]]);
    if (!l->keyed[i]) {
        struct xlb_tcp_packet p = xlb_flow_packet_of(d);
        xlb_flow_key_of(&p, &l->keys[i]);
        l->keyed[i] = true;
    }
    return xlb_flow_lookup_client(t, &l->keys[i]);
}

void xlb_flow_run_held(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap)
{
    uint16_t n = ctx->n_pending, unsent = 0;
    if (n == 0)
        return;
    struct xlb_flow_table *t = ctx->flows;
    xlb_verdict verdicts[XLB_RX_BURST];
    struct lookups l;
    first_pass(ctx, &l);
    /* The client keys' bulk lookup gives the replies' port map reads time to arrive. */
    xlb_flow_lookup_client_bulk(t, l.hkeys, l.n_hkeys, l.found);
    for (uint16_t j = 0; j < l.n_reply_slots; j++)
        xlb_flow_prefetch_slot(t, l.reply_slots[j]);
    uint32_t changes = t->changes;
    uint32_t established_expires =
        xlb_flow_deadline(t, ctx->now_tsc, ctx->tsc_hz, XLB_FLOW_ESTABLISHED_TIMEOUT_S);
    for (uint16_t i = 0; i < n; i++) {
        const struct xlb_held_segment *d = &ctx->pending[i];
        bool from_client = l.from_client[i];
        struct xlb_flow *f = flow_of(t, &l, i, d, t->changes != changes);
        if (xlb_nat_forward_established(ctx, snap, d, f,
                                        from_client ? XLB_FLOW_FROM_CLIENT : XLB_FLOW_FROM_BACKEND,
                                        established_expires, &verdicts[i])) {
            unsent += verdicts[i] != XLB_VERDICT_SENT;
            continue;
        }
        struct xlb_frame frame;
        struct xlb_tcp_packet p;
        unpack(d, &frame, &p);
        if (!l.keyed[i])
            xlb_flow_key_of(&p, &l.keys[i]);
        verdicts[i] = dispatch(ctx, snap, &frame, &p, d->tcp_len, &l.keys[i], f, from_client);
        unsent += verdicts[i] != XLB_VERDICT_SENT;
    }
    ctx->n_pending = 0;
    if (unsent == 0)
        return; /* all rewritten and queued: nothing to count or free */
    for (uint16_t i = 0; i < n; i++)
        xlb_dispose(ctx, ctx->pending[i].port_index, ctx->pending[i].m, verdicts[i]);
}
