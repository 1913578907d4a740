/*
 * A worker's memory of the owned addresses its last packets were sent to. Nearly every packet
 * a worker sees goes to one of a few VIPs and SNAT addresses, and each would otherwise cost a
 * lookup in the snapshot's address table (a CRC hash and a bucket search). The cache holds
 * entries of one snapshot; another snapshot (or generation) empties it, so an entry is never used
 * after its snapshot is gone. Only hits are kept: a packet to an address xlb does not own
 * always takes the table lookup.
 */
#ifndef XLB_OWNED_CACHE_H
#define XLB_OWNED_CACHE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "xlb_snapshot.h"

#define XLB_OWNED_CACHE_SLOTS 8 /* a power of two */

struct xlb_owned_cache {
    const struct xlb_snapshot *snap; /* the snapshot the entries point into, */
    uint64_t generation;             /* and its generation (a new one may reuse the memory) */
    struct xlb_addr addr[XLB_OWNED_CACHE_SLOTS];
    const struct xlb_addr_entry *entry[XLB_OWNED_CACHE_SLOTS];
};

/* Empty the cache if its entries are from another snapshot than snap. */
static inline void xlb_owned_cache_follow(struct xlb_owned_cache *c,
                                          const struct xlb_snapshot *snap)
{
    if (c->snap != snap || c->generation != snap->generation) {
        memset(c->entry, 0, sizeof(c->entry));
        c->snap = snap;
        c->generation = snap->generation;
    }
}

/* The snapshot's entry for addr, through the cache; NULL when xlb does not own addr. */
static inline const struct xlb_addr_entry *xlb_owned_cache_lookup(struct xlb_owned_cache *c,
                                                                  const struct xlb_snapshot *snap,
                                                                  const struct xlb_addr *addr)
{
    xlb_owned_cache_follow(c, snap);
    /* The address's last byte picks the slot: VIPs and SNAT addresses are usually neighbours. */
    unsigned slot = addr->bytes[addr->family == AF_INET ? 3 : 15] & (XLB_OWNED_CACHE_SLOTS - 1);
    /* Compared field by field, as the caller just wrote them (a wider read of the fresh
     * stores would stall on store forwarding). */
    const struct xlb_addr *cached = &c->addr[slot];
    if (c->entry[slot] != NULL && cached->family == addr->family &&
        (addr->family == AF_INET ? memcmp(cached->bytes, addr->bytes, 4) == 0
                                 : memcmp(cached->bytes, addr->bytes, 16) == 0))
        return c->entry[slot];
    const struct xlb_addr_entry *e = xlb_snapshot_lookup(snap, addr);
    if (e != NULL && e->role != XLB_ROLE_NEIGHBOUR) {
        c->addr[slot] = *addr;
        c->entry[slot] = e;
    }
    return e;
}

/* Whether e is an address xlb owns on the port. */
static inline bool xlb_owned_on_port(const struct xlb_addr_entry *e, uint16_t port_index)
{
    return e != NULL && e->role != XLB_ROLE_NEIGHBOUR && (e->port_mask & (1u << port_index));
}

/* xlb_snapshot_owned_on_port, through the cache. */
static inline const struct xlb_addr_entry *xlb_owned_cache_on_port(struct xlb_owned_cache *c,
                                                                   const struct xlb_snapshot *snap,
                                                                   const struct xlb_addr *addr,
                                                                   uint16_t port_index)
{
    const struct xlb_addr_entry *e = xlb_owned_cache_lookup(c, snap, addr);
    return xlb_owned_on_port(e, port_index) ? e : NULL;
}

/* A header address not in the cache: looked up in the snapshot as a struct xlb_addr. Out of
 * line, so that the hit path needs no frame for it. */
static __attribute__((noinline, cold)) const struct xlb_addr_entry *
xlb_owned_cache_miss(struct xlb_owned_cache *c, const struct xlb_snapshot *snap, uint8_t family,
                     const uint8_t *bytes)
{
    struct xlb_addr addr;
    if (family == AF_INET) {
        uint32_t be_addr;
        memcpy(&be_addr, bytes, 4);
        xlb_addr_from_ipv4(be_addr, &addr);
    } else {
        xlb_addr_from_ipv6(bytes, &addr);
    }
    return xlb_owned_cache_lookup(c, snap, &addr);
}

/*
 * The same for an address as the header carries it (4 bytes for AF_INET, 16 for AF_INET6),
 * for a caller that has made the cache follow snap (the burst function does, once per burst).
 * Inlined with a constant family, a hit compares the bytes in registers with the slot's: no
 * struct xlb_addr is built (a call, a clear and the stores) unless the address has to be
 * looked up in the snapshot.
 */
static inline __attribute__((always_inline)) const struct xlb_addr_entry *
xlb_owned_cache_on_port_header(struct xlb_owned_cache *c, const struct xlb_snapshot *snap,
                               uint8_t family, const uint8_t *bytes, uint16_t port_index)
{
    size_t len = family == AF_INET ? 4 : 16;
    unsigned slot = bytes[len - 1] & (XLB_OWNED_CACHE_SLOTS - 1); /* as xlb_owned_cache_lookup */
    const struct xlb_addr_entry *e = c->entry[slot];
    if (e == NULL || c->addr[slot].family != family || memcmp(c->addr[slot].bytes, bytes, len) != 0)
        e = xlb_owned_cache_miss(c, snap, family, bytes);
    return xlb_owned_on_port(e, port_index) ? e : NULL;
}

/* An IPv4 address as the header carries it (network order), for a cache that may not follow
 * snap yet. */
static inline const struct xlb_addr_entry *
xlb_owned_cache_on_port_v4(struct xlb_owned_cache *c, const struct xlb_snapshot *snap,
                           uint32_t be_addr, uint16_t port_index)
{
    xlb_owned_cache_follow(c, snap);
    return xlb_owned_cache_on_port_header(c, snap, AF_INET, (const uint8_t *)&be_addr, port_index);
}

#endif
