/*
 * The snapshot: everything a worker needs to handle a packet, immutable once published.
 *
 * The control plane builds a new snapshot, publishes it with one atomic pointer store, and
 * retires the old one to an RCU defer queue; it is freed once every worker has reported a
 * quiescent state after the swap. Workers load the pointer once per burst and never write it.
 */
#ifndef XLB_SNAPSHOT_H
#define XLB_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_hash.h>

#include "xlb_addr.h"
#include "xlb_host_port.h"
#include "xlb_lb.h"
#include "xlb_limits.h"

/* What an address in the snapshot's address table is to xlb. */
enum xlb_addr_role {
    XLB_ROLE_PORT_ADDRESS, /* owned: configured on a port */
    XLB_ROLE_SNAT,         /* owned: source-NAT address */
    XLB_ROLE_VIP,          /* owned: a virtual service address */
    XLB_ROLE_NEIGHBOUR,    /* not owned: an on-link host whose MAC xlb wants */
};

struct xlb_addr_entry {
    struct xlb_addr addr;
    uint8_t role;
    /* Owned roles: ports that answer ARP/ND for it (bit = port index). */
    uint32_t port_mask;
    /* SNAT role: its place in the bootstrap's snat list, which numbers the flow tables' SNAT
     * addresses the same way (replies find their port map without searching). */
    uint16_t snat_index;
    /* Neighbour role: the port it sits behind, and its MAC once resolved. */
    uint16_t port_index;
    bool resolved;
    struct rte_ether_addr mac;
};

struct xlb_port_view {
    uint16_t port_id; /* DPDK ethdev port id */
    struct rte_ether_addr mac;
    uint8_t n_prefixes;
    struct xlb_prefix prefixes[XLB_MAX_PORT_PREFIXES];
    uint8_t n_gateways; /* next hops for destinations that are not on-link */
    struct xlb_addr gateways[XLB_MAX_GATEWAYS];
    uint16_t mtu;      /* the device's, read when the port starts; 0: unknown, taken as 1500 */
    bool tx_multi_seg; /* it sends mbuf chains; else they are made flat first */
    /* The largest MSS a SYN or SYN-ACK forwarded through this port may offer, by family:
     * what its MTU carries after the IP and TCP headers, or less (xlb.tcp_mss_clamp). 0: no
     * clamping. Set by the snapshot builder. */
    uint16_t mss_max_ipv4, mss_max_ipv6;
};

/*
 * What a port of `mtu` bytes (0: 1500) carries as TCP payload after the family's IP and TCP
 * headers without options, capped by `clamp`: UINT16_MAX no cap, 0 off (returns 0), else an
 * IPv4 MSS, which for IPv6 means 20 bytes less (the same packet size, IPv6's header being 20
 * bytes longer).
 */
static inline uint16_t xlb_port_mss_max(uint16_t mtu, uint16_t clamp, bool ipv6)
{
    if (clamp == 0)
        return 0;
    unsigned headers = (ipv6 ? 40u : 20u) + 20u, path = mtu != 0 ? mtu : 1500u;
    unsigned carried = path > headers + 64u ? path - headers : 64u; /* IPv4's least MTU is 68 */
    unsigned cap = clamp == UINT16_MAX || !ipv6 ? clamp : clamp - 20u;
    return (uint16_t)(carried < cap ? carried : cap);
}

struct xlb_lb_vip;

struct xlb_vip_view {
    struct xlb_addr addr;
    uint16_t l4_port; /* host byte order */
    bool l7;          /* xDS target (HTTP/2) or a cluster (L4) */
    bool terminate;   /* L4 with xlb's own TCP on both sides (dataplane/relay/), else full NAT */
    bool newreno;     /* terminate: NewReno instead of CUBIC, for both sides */
    bool stream;      /* l7: "l7_mode": "stream" (dataplane/stream/), else splice (dataplane/l7/) */
    /* Its compiled LB tree (lib/lb/xlb_lb.h), NULL until its configuration is complete; the
     * snapshot holds a reference, dropped when the snapshot is freed. */
    struct xlb_lb_vip *lb;
    /* "tls" (docs/tls.md): the TLS server its clients' handshakes use, NULL: cleartext. The
     * snapshot holds a reference, dropped when it is freed. tls_index: where workers count. */
    struct xlb_tls_server *tls;
    uint8_t tls_index;
};

struct xlb_tls_server;

struct xlb_snapshot {
    uint64_t generation;
    uint16_t n_ports;
    struct xlb_port_view ports[XLB_MAX_PORTS];

    /* Address table: key struct xlb_addr, data = index into entries. */
    struct rte_hash *addresses;
    uint32_t n_entries;
    uint32_t capacity;
    struct xlb_addr_entry *entries;

    uint32_t n_vips;
    struct xlb_vip_view *vips;
    /* L4 VIPs answer SYNs with SYN cookies and open the backend connection only after the
     * client's ACK (xlb.l4_syn_proxy, dataplane/nat/nat_proxy.c): an enum xlb_syn_proxy_mode;
     * in AUTO, once the worker's half-open pool is l4_syn_proxy_percent full. */
    uint8_t l4_syn_proxy;
    uint8_t l4_syn_proxy_percent;
    /* Ring hash's connection hash is SipHash-2-4 with this key (xlb.connection_hash_key),
     * else an unkeyed CRC (dataplane/flow/flow_life.c). */
    bool connection_hash_keyed;
    uint64_t connection_hash_key[2];

    /* The endpoints of the stream VIPs' trees by stable slot (xlb_snapshot_index_endpoints):
     * a worker's subchannel to a slot that is gone, or now names another address, is closed
     * (dataplane/stream/stream_sub.c). Entries of no endpoint have family 0. */
    bool slot_hosts_known; /* false: not indexed (no memory), nothing may be concluded */
    uint32_t n_slot_hosts;
    struct xlb_host_port *slot_hosts;
    /* And each slot's cluster (a slot belongs to one), which the snapshot holds: its
     * upstream TLS (A29), health check (A17) and load reports (A58) are the subchannel's. */
    const struct xlb_lb_cluster **slot_cluster;
};

/* Allocate a zeroed snapshot with room for the given entries; the hash is sized for them. */
struct xlb_snapshot *xlb_snapshot_alloc(uint64_t generation, uint32_t max_entries,
                                        uint32_t max_vips);
void xlb_snapshot_free(struct xlb_snapshot *snap);

/* Add an entry to the address table; -1 if it is already there or the table is full. */
int xlb_snapshot_add_address(struct xlb_snapshot *snap, const struct xlb_addr_entry *entry);

/* Index the endpoints of the stream VIPs' trees by slot, once the VIPs are in. Returns 0 or
 * -ENOMEM (slot_hosts_known stays false). */
int xlb_snapshot_index_endpoints(struct xlb_snapshot *snap);

/* Whether a stream VIP's tree in this snapshot has `where` at endpoint slot `slot`; true when
 * the snapshot could not tell (slot_hosts_known false). */
static inline bool xlb_snapshot_has_endpoint(const struct xlb_snapshot *snap, uint32_t slot,
                                             const struct xlb_host_port *where)
{
    if (!snap->slot_hosts_known)
        return true;
    if (slot >= snap->n_slot_hosts)
        return false;
    return xlb_host_port_equal(&snap->slot_hosts[slot], where);
}

/* The upstream TLS of a stream VIP's endpoint slot into *tls (NULL: cleartext); false when
 * the snapshot cannot tell (not indexed, or the slot is not a stream VIP's): then no
 * subchannel may connect, lest a TLS cluster be spoken to in cleartext. */
/* The cluster of a stream VIP's endpoint slot, NULL: none (or not known). */
static inline const struct xlb_lb_cluster *
xlb_snapshot_slot_cluster(const struct xlb_snapshot *snap, uint32_t slot)
{
    if (!snap->slot_hosts_known || slot >= snap->n_slot_hosts || snap->slot_cluster == NULL)
        return NULL;
    return snap->slot_cluster[slot];
}

static inline bool xlb_snapshot_slot_tls(const struct xlb_snapshot *snap, uint32_t slot,
                                         struct ssl_ctx_st **tls)
{
    if (!snap->slot_hosts_known || slot >= snap->n_slot_hosts || snap->slot_cluster == NULL)
        return false;
    *tls = snap->slot_cluster[slot] != NULL ? snap->slot_cluster[slot]->upstream_tls : NULL;
    return true;
}

/* The A17 health-check service of a stream VIP's endpoint slot, NULL: none (or not known). */
static inline const char *xlb_snapshot_slot_health(const struct xlb_snapshot *snap, uint32_t slot)
{
    const struct xlb_lb_cluster *c = xlb_snapshot_slot_cluster(snap, slot);
    /* A17: pick first does no health checking (it would not know what to do with it). */
    return c != NULL && c->policy != XLB_LB_POLICY_PICK_FIRST ? c->health_service : NULL;
}

/* A58/A51: the out-of-band load reporting a stream VIP's endpoint slot asks for, NULL: none. */
static inline const struct xlb_wrr_config *xlb_snapshot_slot_oob(const struct xlb_snapshot *snap,
                                                                 uint32_t slot)
{
    const struct xlb_lb_cluster *c = xlb_snapshot_slot_cluster(snap, slot);
    return c != NULL && c->policy == XLB_LB_POLICY_WRR && c->wrr.oob ? &c->wrr : NULL;
}

/* Worker-side lookup: the entry for addr, or NULL. */
static inline const struct xlb_addr_entry *xlb_snapshot_lookup(const struct xlb_snapshot *snap,
                                                               const struct xlb_addr *addr)
{
    /* rte_hash's CRC reads the key 8 bytes at a time and struct xlb_addr has no alignment of
     * its own (one inside a copied endpoint may sit at any 4 bytes): an aligned copy. */
    struct xlb_addr key __rte_aligned(8) = *addr;
    void *data;
    if (rte_hash_lookup_data(snap->addresses, &key, &data) < 0)
        return NULL;
    return &snap->entries[(uintptr_t)data];
}

/* An owned address answered on port_index, or NULL. */
static inline const struct xlb_addr_entry *
xlb_snapshot_owned_on_port(const struct xlb_snapshot *snap, const struct xlb_addr *addr,
                           uint16_t port_index)
{
    const struct xlb_addr_entry *e = xlb_snapshot_lookup(snap, addr);
    if (e == NULL || e->role == XLB_ROLE_NEIGHBOUR || !(e->port_mask & (1u << port_index)))
        return NULL;
    return e;
}

/* The port prefix that contains addr on port_index, or NULL: the source for solicitations. */
const struct xlb_prefix *xlb_port_prefix_for(const struct xlb_port_view *port,
                                             const struct xlb_addr *addr);

#endif
