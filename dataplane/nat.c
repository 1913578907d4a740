#include "nat.h"

#include <string.h>
#include <sys/socket.h>

#include <rte_cycles.h>
#include <rte_hash_crc.h>
#include <rte_ip.h>

#include "checksum.h"
#include "l7.h"
#include "nat_window.h"
#include "tcp_syn_options.h"
#include "xlb_lb.h"

/* ---- keys and addresses ---- */

void xlb_nat_key_of(const struct xlb_tcp_packet *p, struct xlb_flow_key *key)
{
    const uint8_t *src, *dst;
    size_t len = xlb_nat_addresses(p->family, p->ip, &src, &dst);
    memset(key, 0, sizeof(*key));
    key->family = p->family;
    key->proto = IPPROTO_TCP;
    key->src_port = p->tcp->src_port;
    key->dst_port = p->tcp->dst_port;
    memcpy(key->src, src, len);
    memcpy(key->dst, dst, len);
}

static void addr_of(uint8_t family, const uint8_t bytes[16], struct xlb_addr *out)
{
    memset(out, 0, sizeof(*out));
    out->family = family;
    memcpy(out->bytes, bytes, family == AF_INET ? 4 : 16);
}

/*
 * The checksum patches of a flow's rewrites, one word kept with the flow (xlb_flow_word): a
 * segment from either side always has the same addresses and ports rewritten to the same new
 * ones, so what the rewrite adds to the checksums' sums (RFC 1624, eqn. 3) is worked out once,
 * when the flow is made, not for every segment. For each side, the TCP checksum's patch covers
 * the four fields (its pseudo-header holds the addresses); the IPv4 header's, the addresses.
 */
union rewrite_patches {
    uint64_t word;
    struct {
        uint16_t tcp[2], ip[2]; /* by enum xlb_flow_side */
    };
};

static uint64_t patches_of(const struct xlb_flow_table *t, const struct xlb_flow *f,
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

/* Rewrite the segment's addresses and ports, and patch the checksums by the flow's patches for
 * the side. len is a constant at each call, so the copies unroll. */
static inline __attribute__((always_inline)) void
rewrite_fields(struct rte_tcp_hdr *tcp, uint8_t *src_field, uint8_t *dst_field, uint16_t *ip_csum,
               const uint8_t *src, uint16_t sport, const uint8_t *dst, uint16_t dport, size_t len,
               union rewrite_patches patches, enum xlb_flow_side from)
{
    /* rte_tcp_hdr is packed: work on an aligned copy. */
    uint16_t csum = tcp->cksum;
    xlb_csum_apply(&csum, patches.tcp[from]);
    tcp->cksum = csum;
    if (ip_csum != NULL)
        xlb_csum_apply(ip_csum, patches.ip[from]);
    memcpy(src_field, src, len);
    memcpy(dst_field, dst, len);
    tcp->src_port = sport;
    tcp->dst_port = dport;
}

static inline __attribute__((always_inline)) void
rewrite(const struct xlb_flow_table *t, const struct xlb_flow *f, enum xlb_flow_side from,
        struct xlb_tcp_packet *p, const uint8_t *src, uint16_t sport, const uint8_t *dst,
        uint16_t dport)
{
    union rewrite_patches patches = {.word = xlb_flow_word(t, f)};
    if (p->family == AF_INET) {
        struct rte_ipv4_hdr *ip = p->ip;
        uint16_t ip_csum = ip->hdr_checksum;
        rewrite_fields(p->tcp, (uint8_t *)&ip->src_addr, (uint8_t *)&ip->dst_addr, &ip_csum, src,
                       sport, dst, dport, 4, patches, from);
        ip->hdr_checksum = ip_csum;
    } else {
        struct rte_ipv6_hdr *ip = p->ip;
        rewrite_fields(p->tcp, ip->src_addr, ip->dst_addr, NULL, src, sport, dst, dport, 16,
                       patches, from);
    }
}

static inline __attribute__((always_inline)) void
send_frame(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap, struct rte_mbuf *m,
           uint16_t port_index, const struct rte_ether_addr *next_hop)
{
    struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
    eth->src_addr = snap->ports[port_index].mac;
    eth->dst_addr = *next_hop;
    xlb_tx_enqueue(ctx, port_index, m);
}

/* A segment of flow f from its client, rewritten from the SNAT address to the backend. */
static inline __attribute__((always_inline)) void
to_backend(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap, struct rte_mbuf *m,
           struct xlb_tcp_packet *p, const struct xlb_flow *f)
{
    rewrite(ctx->flows, f, XLB_FLOW_FROM_CLIENT, p, ctx->flows->snat[f->snat_index].bytes,
            rte_cpu_to_be_16(f->snat_port), f->backend, f->backend_port);
    send_frame(ctx, snap, m, f->backend_port_index, &f->backend_mac);
}

/* A segment of flow f from its backend, rewritten from the VIP to the client. */
static inline __attribute__((always_inline)) void
to_client(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap, struct rte_mbuf *m,
          struct xlb_tcp_packet *p, const struct xlb_flow *f)
{
    const struct xlb_flow_hkey *h = xlb_flow_stored_key(ctx->flows, f);
    const uint8_t *client, *vip;
    uint32_t vip4;
    xlb_flow_hkey_addresses(&ctx->flows->vip6, h, &client, &vip, &vip4);
    rewrite(ctx->flows, f, XLB_FLOW_FROM_BACKEND, p, vip, h->vip_port, client, h->client_port);
    send_frame(ctx, snap, m, f->client_port_index, &f->client_mac);
}

/*
 * A SYN or SYN-ACK may offer an MSS larger than a port on the flow's path carries (its peer
 * has a larger MTU than xlb's ports, or xlb.tcp_mss_clamp is lower): lowered to what both the
 * port it came in by and the one it leaves by carry, so that neither end sends segments xlb
 * would have to drop.
 */
static void clamp_mss(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                      struct xlb_tcp_packet *p, uint16_t out_port_index)
{
    uint16_t max = xlb_nat_mss_max(snap, p->family, p->port_index, out_port_index);
    if (max != 0 && xlb_syn_clamp_mss(p->tcp, max))
        ctx->stats->events[XLB_EVENT_TCP_MSS_CLAMPED]++;
}

/* ---- next hops ---- */

/* The MAC and port for dst: the neighbour itself when on-link, else the port's gateway. */
static bool next_hop(const struct xlb_snapshot *snap, const struct xlb_addr *dst,
                     struct rte_ether_addr *mac, uint16_t *port_index)
{
    for (uint16_t p = 0; p < snap->n_ports; p++) {
        const struct xlb_port_view *port = &snap->ports[p];
        const struct xlb_addr *hop = NULL;
        if (xlb_port_prefix_for(port, dst) != NULL)
            hop = dst;
        for (uint8_t g = 0; hop == NULL && g < port->n_gateways; g++)
            if (port->gateways[g].family == dst->family)
                hop = &port->gateways[g];
        if (hop == NULL)
            continue;
        const struct xlb_addr_entry *e = xlb_snapshot_lookup(snap, hop);
        if (e == NULL || e->role != XLB_ROLE_NEIGHBOUR || !e->resolved)
            return false;
        *mac = e->mac;
        *port_index = e->port_index;
        return true;
    }
    return false;
}

/* ---- TCP state ---- */

static uint32_t timeout_s(enum xlb_flow_state state)
{
    static const uint32_t seconds[] = {
        [XLB_FLOW_SYN_SENT] = XLB_NAT_SYN_TIMEOUT_S,
        [XLB_FLOW_ESTABLISHED] = XLB_NAT_ESTABLISHED_TIMEOUT_S,
        [XLB_FLOW_CLOSING] = XLB_NAT_CLOSING_TIMEOUT_S,
        [XLB_FLOW_CLOSED] = XLB_NAT_CLOSED_TIMEOUT_S,
        [XLB_FLOW_RESET] = XLB_NAT_RESET_TIMEOUT_S,
        [XLB_FLOW_RESUMING] = XLB_NAT_SYN_TIMEOUT_S,
    };
    return seconds[state];
}

static void count_endpoint(struct xlb_burst_ctx *ctx, uint32_t slot, bool ok)
{
    if (ctx->lb == NULL || ctx->lb->load == NULL || slot >= XLB_ENDPOINT_SLOTS)
        return;
    if (ok)
        ctx->lb->load->endpoints[slot].succeeded++;
    else
        ctx->lb->load->endpoints[slot].failed++;
}

/*
 * Advance the state on a segment that fits the flow's windows; a connect outcome is one call
 * result for the endpoint. False when the segment is out of window: nothing changes.
 */
static bool track(struct xlb_burst_ctx *ctx, struct xlb_flow *f, const struct rte_tcp_hdr *tcp,
                  uint32_t payload, enum xlb_flow_side from)
{
    if (!xlb_window_accept(f, tcp, payload, from))
        return false;
    bool from_backend = from == XLB_FLOW_FROM_BACKEND;
    uint8_t flags = tcp->tcp_flags, before = f->state;
    if (flags & RTE_TCP_RST_FLAG) {
        if (f->state == XLB_FLOW_SYN_SENT && from_backend)
            count_endpoint(ctx, f->endpoint_slot, false); /* connection refused */
        /* In the window is not yet exact: the endpoint may answer with a challenge ACK instead
         * (RFC 5961 3.2). An established connection keeps its flow a while. */
        f->state = f->state == XLB_FLOW_ESTABLISHED || f->state == XLB_FLOW_RESET ? XLB_FLOW_RESET
                                                                                  : XLB_FLOW_CLOSED;
    } else if (f->state == XLB_FLOW_RESET && !(flags & RTE_TCP_SYN_FLAG)) {
        f->state = XLB_FLOW_ESTABLISHED; /* the connection went on: the RST was not taken */
    } else if (f->state == XLB_FLOW_SYN_SENT && from_backend &&
               (flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG)) ==
                   (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG)) {
        count_endpoint(ctx, f->endpoint_slot, true);
        f->state = XLB_FLOW_ESTABLISHED;
    } else if (f->state == XLB_FLOW_RESUMING && from_backend) {
        f->state = XLB_FLOW_ESTABLISHED; /* the backend knows the connection: it goes on */
    }
    if ((flags & RTE_TCP_FIN_FLAG) && !(flags & RTE_TCP_RST_FLAG) &&
        f->state == XLB_FLOW_ESTABLISHED)
        f->state = XLB_FLOW_CLOSING;
    xlb_flow_set_timeout(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz, timeout_s(f->state));
    if (xlb_flow_half_open(before) && !xlb_flow_half_open(f->state) && ctx->flows->n_syn > 0)
        ctx->flows->n_syn--;
    /* The wheel follows a later deadline lazily, but a state with a shorter timeout must move
     * the flow to an earlier slot now. Rare: a few state changes per connection. */
    if (f->state != before && f->scheduled)
        xlb_flow_schedule(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz);
    return true;
}

static void release(struct xlb_burst_ctx *ctx, struct xlb_flow *f)
{
    if (f->l7)
        xlb_l7_release(ctx, f);
    if (ctx->lb != NULL && ctx->lb->load != NULL && f->cluster_slot < XLB_CLUSTER_SLOTS)
        ctx->lb->load->clusters[f->cluster_slot].finished++;
    xlb_flow_remove(ctx->flows, f);
    ctx->stats->events[XLB_EVENT_FLOWS_CLOSED]++;
}

void xlb_nat_expire(struct xlb_burst_ctx *ctx)
{
    struct xlb_flow_table *t = ctx->flows;
    if (t == NULL)
        return;
    if (t->n_used == 0) {
        /* Nothing on the wheel: keep its clock current rather than catching up later. */
        if (t->wheel_hz != 0)
            t->wheel_second = ctx->now_tsc / t->wheel_hz;
        return;
    }
    struct xlb_flow *due[XLB_NAT_EXPIRE_BUDGET];
    uint32_t n =
        xlb_flow_due(t, ctx->now_tsc, XLB_NAT_EXPIRE_BUDGET * 2, due, XLB_NAT_EXPIRE_BUDGET);
    for (uint32_t i = 0; i < n; i++) {
        if (due[i]->state == XLB_FLOW_SYN_SENT)
            count_endpoint(ctx, due[i]->endpoint_slot, false); /* the SYN timed out */
        release(ctx, due[i]);
    }
}

static bool flow_to(const struct xlb_flow_table *t, const struct xlb_flow *f,
                    const struct xlb_flush *flush)
{
    size_t len = flush->addr.family == AF_INET ? 4 : 16;
    return t->snat[f->snat_index].family == flush->addr.family &&
           memcmp(f->backend, flush->addr.bytes, len) == 0 &&
           (flush->port == 0 || rte_be_to_cpu_16(f->backend_port) == flush->port);
}

void xlb_nat_flush_step(struct xlb_burst_ctx *ctx)
{
    struct xlb_flush *flush = &ctx->flush;
    struct xlb_flow_table *t = ctx->flows;
    if (!flush->active || t == NULL)
        return;
    uint32_t end = flush->cursor + XLB_NAT_FLUSH_BUDGET;
    if (end > t->capacity)
        end = t->capacity;
    for (uint32_t i = flush->cursor; i < end; i++) {
        struct xlb_flow *f = &t->flows[i];
        if (f->used && flow_to(t, f, flush)) {
            release(ctx, f);
            ctx->stats->events[XLB_EVENT_FLOWS_FLUSHED]++;
        }
    }
    flush->cursor = end;
    flush->active = end < t->capacity;
}

/* ---- client side ---- */

static const struct xlb_vip_view *find_vip(const struct xlb_snapshot *snap,
                                           const struct xlb_addr *addr, uint16_t port)
{
    for (uint32_t v = 0; v < snap->n_vips; v++)
        if (snap->vips[v].l4_port == port && xlb_addr_equal(&snap->vips[v].addr, addr))
            return &snap->vips[v];
    return NULL;
}

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

static xlb_verdict flow_create_drop(enum xlb_flow_create_failure why)
{
    return why == XLB_FLOW_CREATE_TABLE_FULL        ? XLB_DROP_FLOW_TABLE_FULL
           : why == XLB_FLOW_CREATE_PORTS_EXHAUSTED ? XLB_DROP_SNAT_PORTS_EXHAUSTED
           : why == XLB_FLOW_CREATE_NO_SNAT         ? XLB_DROP_NO_SNAT_ADDRESS
                                                    : XLB_DROP_TCP_NO_FLOW; /* PORT_TAKEN */
}

/*
 * The connection's request hash for ring hash (A42 points are 64-bit): a 32-bit CRC
 * of the 5-tuple spread over 64 bits by splitmix64's finalizer, so connections land all over
 * the ring and not only below 2^32.
 */
static uint64_t connection_hash(const struct xlb_burst_ctx *ctx, const struct xlb_flow_key *key)
{
    uint64_t z = rte_hash_crc(key, sizeof(*key), 0) + UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/*
 * Whether an L4 VIP picks by each connection's addresses and ports alone: every leaf of its
 * cluster is a ring hash (A42) over connection_hash. Picking again, later or in another xlb
 * process with the same configuration, then gives a connection the backend its SYN got.
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
                                        const struct xlb_lb_endpoint *e, const uint64_t *hash,
                                        bool strict, enum xlb_flow_create_failure *why)
{
    struct xlb_flow_table *t = ctx->flows;
    uint16_t port = rte_cpu_to_be_16(e->where.port);
    for (int attempt = 0; attempt < 2; attempt++) {
        struct xlb_flow *f =
            hash != NULL ? xlb_flow_create_hashed(t, key, &e->where.addr, port, *hash, strict, why)
                         : xlb_flow_create(t, key, &e->where.addr, port, why);
        struct xlb_flow evicted;
        if (f != NULL || attempt > 0 || *why != XLB_FLOW_CREATE_TABLE_FULL ||
            !xlb_flow_evict_oldest(t, XLB_NAT_EVICT_BUDGET, &evicted))
            return f;
        if (evicted.l7)
            xlb_l7_release(ctx, &evicted); /* its streams end; its connection goes back */
        if (ctx->lb->load != NULL && evicted.cluster_slot < XLB_CLUSTER_SLOTS)
            ctx->lb->load->clusters[evicted.cluster_slot].finished++;
        ctx->stats->events[XLB_EVENT_FLOWS_EVICTED]++;
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
static xlb_verdict new_flow(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
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
    struct xlb_lb_request request = {.connection_id = connection_hash(ctx, key)};
    struct xlb_lb_trace trace;
    enum xlb_lb_outcome outcome = xlb_lb_pick(vip->lb, &request, ctx->lb, &trace);
    if (outcome != XLB_LB_PICKED)
        return pick_outcome_drop(outcome);
    const struct xlb_lb_endpoint *e = &trace.cluster->endpoints[trace.endpoint];
    struct xlb_flow *f = NULL;
    xlb_verdict verdict = XLB_VERDICT_TX;
    struct rte_ether_addr mac;
    uint16_t out_port;
    if (e->where.addr.family != p->family)
        verdict = XLB_DROP_BACKEND_FAMILY;
    else if (!next_hop(snap, &e->where.addr, &mac, &out_port))
        verdict = XLB_DROP_NEXT_HOP_UNRESOLVED;
    enum xlb_flow_create_failure why = XLB_FLOW_CREATE_TABLE_FULL;
    if (verdict == XLB_VERDICT_TX &&
        (f = create_evicting(ctx, key, e, hashed ? &request.connection_id : NULL, resume, &why)) ==
            NULL)
        verdict = flow_create_drop(why);
    if (verdict != XLB_VERDICT_TX) {
        /* The pick counted a request start: end it, so circuit breaking sees it gone. */
        if (ctx->lb->load != NULL && trace.cluster->cluster_slot < XLB_CLUSTER_SLOTS)
            ctx->lb->load->clusters[trace.cluster->cluster_slot].finished++;
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
    xlb_flow_set_word(ctx->flows, f, patches_of(ctx->flows, f, key));
    ctx->flows->n_syn++;
    ctx->stats->events[resume ? XLB_EVENT_FLOWS_RESUMED : XLB_EVENT_FLOWS_CREATED]++;
    *out = f;
    return XLB_VERDICT_TX;
}

/*
 * A segment of no known connection gets a RST (RFC 9293 3.10.7.1), so the client gives up at
 * once instead of retransmitting into silence: the flow expired, or it was made on another xlb
 * host (a full NAT cannot carry a connection across hosts: the backend knows its peer as that
 * host's SNAT address and port). Rewritten in place: addresses and ports swapped, payload and
 * options dropped, checksums computed afresh.
 */
static xlb_verdict reset_reply(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                               struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len)
{
    struct rte_tcp_hdr *tcp = p->tcp;
    uint8_t flags = tcp->tcp_flags;
    if (flags & RTE_TCP_RST_FLAG)
        return XLB_DROP_TCP_NO_FLOW; /* never answer a reset */
    uint32_t payload = tcp_len - (uint32_t)(tcp->data_off >> 4) * 4;
    uint32_t seq_len = payload + !!(flags & RTE_TCP_SYN_FLAG) + !!(flags & RTE_TCP_FIN_FLAG);
    uint32_t seq = 0, ack = 0;
    uint8_t out_flags = RTE_TCP_RST_FLAG;
    if (flags & RTE_TCP_ACK_FLAG) {
        seq = tcp->recv_ack;
    } else {
        ack = rte_cpu_to_be_32(rte_be_to_cpu_32(tcp->sent_seq) + seq_len);
        out_flags |= RTE_TCP_ACK_FLAG;
    }
    uint16_t sport = tcp->src_port;
    tcp->src_port = tcp->dst_port;
    tcp->dst_port = sport;
    tcp->sent_seq = seq;
    tcp->recv_ack = ack;
    tcp->data_off = 5 << 4;
    tcp->tcp_flags = out_flags;
    tcp->rx_win = 0;
    tcp->tcp_urp = 0;
    xlb_frame_set_l3_len(frame, xlb_nat_turn_around(p, (uint32_t)sizeof(*tcp)));
    xlb_frame_reply_ethernet(frame, &snap->ports[p->port_index].mac);
    ctx->stats->events[XLB_EVENT_TCP_RESETS_SENT]++;
    return XLB_VERDICT_TX;
}

xlb_verdict xlb_nat_from_client(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len,
                                const struct xlb_flow_key *key, struct xlb_flow *f)
{
    bool syn = (p->tcp->tcp_flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG)) ==
               RTE_TCP_SYN_FLAG;
    /* The client reuses its port after a FIN or RST: a new connection, picked afresh. */
    if (f != NULL && syn && f->state >= XLB_FLOW_CLOSING) {
        release(ctx, f);
        f = NULL;
    }
    uint32_t payload = tcp_len - (uint32_t)(p->tcp->data_off >> 4) * 4;
    if (f != NULL && f->l7)
        return xlb_l7_from_client(ctx, snap, frame, p, tcp_len, f);
    if (f == NULL) {
        const struct xlb_vip_view *vip = xlb_nat_vip_of(snap, key);
        if (vip != NULL && vip->l7) {
            xlb_verdict verdict = xlb_l7_no_flow(ctx, snap, frame, p, tcp_len, key, vip);
            return verdict == XLB_DROP_TCP_NO_FLOW ? reset_reply(ctx, snap, frame, p, tcp_len)
                                                   : verdict;
        }
        /* After the handshake every segment carries an ACK: only such a one is picked up. */
        bool later = (p->tcp->tcp_flags &
                      (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG)) == RTE_TCP_ACK_FLAG;
        if (!syn && !later)
            return reset_reply(ctx, snap, frame, p, tcp_len);
        xlb_verdict verdict = new_flow(ctx, snap, frame, p, key, vip, payload, !syn, &f);
        if (verdict == XLB_DROP_TCP_NO_FLOW)
            return reset_reply(ctx, snap, frame, p, tcp_len);
        if (verdict != XLB_VERDICT_TX)
            return verdict;
    }
    /* Never refused for a flow new_flow just made: a client SYN on a half-open flow fits. */
    if (!track(ctx, f, p->tcp, payload, XLB_FLOW_FROM_CLIENT))
        return XLB_DROP_TCP_OUT_OF_WINDOW;
    if (!f->scheduled)
        xlb_flow_schedule(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz);
    if (p->tcp->tcp_flags & RTE_TCP_SYN_FLAG)
        clamp_mss(ctx, snap, p, f->backend_port_index);
    to_backend(ctx, snap, frame->m, p, f);
    return XLB_VERDICT_SENT;
}

/* ---- backend side ---- */

/*
 * A reply for a SNAT port of another worker's slice reached this worker's queue (RSS hashes
 * the two directions of a NATed flow differently): hand it to the owner over its redirect
 * ring. A packet already redirected is never passed on again.
 */
static xlb_verdict steer_to_owner(struct xlb_burst_ctx *ctx, struct xlb_frame *frame, uint16_t port)
{
    if (port < ctx->snat_port_base)
        return XLB_DROP_TCP_NO_FLOW;
    uint32_t slice = ctx->snat_slice != 0 ? ctx->snat_slice : ctx->flows->port_count;
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

xlb_verdict xlb_nat_from_backend(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                 struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                 uint32_t tcp_len, const struct xlb_flow_key *key,
                                 struct xlb_flow *f)
{
    if (f == NULL)
        return steer_to_owner(ctx, frame, rte_be_to_cpu_16(key->dst_port));
    if (f->l7)
        return xlb_l7_from_backend(ctx, snap, frame, p, tcp_len, f);
    uint32_t payload = tcp_len - (uint32_t)(p->tcp->data_off >> 4) * 4;
    if (!track(ctx, f, p->tcp, payload, XLB_FLOW_FROM_BACKEND))
        return XLB_DROP_TCP_OUT_OF_WINDOW;
    if (p->tcp->tcp_flags & RTE_TCP_SYN_FLAG)
        clamp_mss(ctx, snap, p, f->client_port_index);
    to_client(ctx, snap, frame->m, p, f);
    return XLB_VERDICT_SENT;
}

/* ---- established flows ---- */

/* The lane's rewrite and send, inlined for a constant family: the rewrite's lengths and the
 * checksum patches are then straight code, with no branch on the family among them. */
static inline __attribute__((always_inline)) void
send_established(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                 const struct xlb_nat_pending *d, const struct xlb_flow *f, enum xlb_flow_side from,
                 uint8_t family)
{
    struct xlb_tcp_packet p = xlb_nat_packet_of(d);
    p.family = family;
    if (from == XLB_FLOW_FROM_CLIENT)
        to_backend(ctx, snap, d->m, &p, f);
    else
        to_client(ctx, snap, d->m, &p, f);
}

bool xlb_nat_forward_established(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                 const struct xlb_nat_pending *d, struct xlb_flow *f,
                                 enum xlb_flow_side from, uint32_t expires_s, xlb_verdict *verdict)
{
    struct rte_tcp_hdr *tcp = d->tcp;
    if (f == NULL || f->l7 || f->state != XLB_FLOW_ESTABLISHED || !f->scheduled ||
        (tcp->tcp_flags & (RTE_TCP_SYN_FLAG | RTE_TCP_FIN_FLAG | RTE_TCP_RST_FLAG)) ||
        !xlb_window_both_spoken(&f->window))
        return false;
    uint32_t payload = d->tcp_len - (uint32_t)(tcp->data_off >> 4) * 4;
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

/* ---- for the L7 mode (dataplane/l7_*.c) ---- */

uint32_t xlb_nat_turn_around(struct xlb_tcp_packet *p, uint32_t tcp_len)
{
    uint32_t l3_len;
    p->tcp->cksum = 0;
    if (p->family == AF_INET) {
        struct rte_ipv4_hdr *ip = p->ip;
        rte_be32_t a = ip->src_addr;
        ip->src_addr = ip->dst_addr;
        ip->dst_addr = a;
        l3_len = rte_ipv4_hdr_len(ip) + tcp_len;
        ip->total_length = rte_cpu_to_be_16((uint16_t)l3_len);
        ip->time_to_live = 64;
        ip->hdr_checksum = 0;
        ip->hdr_checksum = rte_ipv4_cksum(ip);
        p->tcp->cksum = rte_ipv4_udptcp_cksum(ip, p->tcp);
    } else {
        struct rte_ipv6_hdr *ip = p->ip;
        uint8_t a[16];
        memcpy(a, ip->src_addr, 16);
        memcpy(ip->src_addr, ip->dst_addr, 16);
        memcpy(ip->dst_addr, a, 16);
        ip->payload_len = rte_cpu_to_be_16((uint16_t)tcp_len);
        ip->hop_limits = 64;
        l3_len = (uint32_t)sizeof(*ip) + tcp_len;
        p->tcp->cksum = rte_ipv6_udptcp_cksum(ip, p->tcp);
    }
    return l3_len;
}

const struct xlb_vip_view *xlb_nat_vip_of(const struct xlb_snapshot *snap,
                                          const struct xlb_flow_key *key)
{
    struct xlb_addr vip_addr;
    addr_of(key->family, key->dst, &vip_addr);
    return find_vip(snap, &vip_addr, rte_be_to_cpu_16(key->dst_port));
}

bool xlb_nat_next_hop(const struct xlb_snapshot *snap, const struct xlb_addr *dst,
                      struct rte_ether_addr *mac, uint16_t *port_index)
{
    return next_hop(snap, dst, mac, port_index);
}

uint16_t xlb_nat_mss_max(const struct xlb_snapshot *snap, uint8_t family, uint16_t port_a,
                         uint16_t port_b)
{
    const struct xlb_port_view *x = &snap->ports[port_a], *y = &snap->ports[port_b];
    bool ipv6 = family == AF_INET6;
    uint16_t a = ipv6 ? x->mss_max_ipv6 : x->mss_max_ipv4;
    uint16_t b = ipv6 ? y->mss_max_ipv6 : y->mss_max_ipv4;
    return a == 0 ? b : b == 0 || a < b ? a : b; /* 0: no clamping on that port */
}

uint64_t xlb_nat_connection_hash(const struct xlb_flow_key *key)
{
    return connection_hash(NULL, key);
}

void xlb_nat_count_endpoint(struct xlb_burst_ctx *ctx, uint32_t slot, bool ok)
{
    count_endpoint(ctx, slot, ok);
}

void xlb_nat_request_ended(struct xlb_burst_ctx *ctx, uint32_t cluster_slot)
{
    if (ctx->lb->load != NULL && cluster_slot < XLB_CLUSTER_SLOTS)
        ctx->lb->load->clusters[cluster_slot].finished++;
}

void xlb_nat_remove_flow(struct xlb_burst_ctx *ctx, struct xlb_flow *f)
{
    release(ctx, f);
}
