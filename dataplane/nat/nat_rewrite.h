/*
 * The NAT's rewrite of a segment, private to dataplane/nat/: addresses and ports replaced by the
 * flow's, checksums patched, the frame addressed to the next hop and queued. Inlined (always)
 * into the forwarding paths, for a constant family where the caller has one.
 */
#ifndef XLB_NAT_REWRITE_H
#define XLB_NAT_REWRITE_H

#include "checksum.h"
#include "nat.h"

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

/* The patches of flow f, made from the client key it was created with (at its creation). */
uint64_t xlb_nat_patches_of(const struct xlb_flow_table *t, const struct xlb_flow *f,
                            const struct xlb_flow_key *key);

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

/* Advance the flow's TCP state on a segment that fits its windows (nat_track.c); false when it
 * is out of window: nothing changes. */
bool xlb_nat_track(struct xlb_burst_ctx *ctx, struct xlb_flow *f, const struct rte_tcp_hdr *tcp,
                   uint32_t payload, enum xlb_flow_side from);

#endif
