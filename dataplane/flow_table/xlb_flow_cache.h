/*
 * A worker's exact-match cache in front of its flow table's hash (xlb_flow_table.c, beside it),
 * for the flows that carry its traffic now. Even with everything in the CPU's caches, rte_hash's
 * bulk lookup costs a client segment ~20 cycles (docs/performance.md): two buckets, their
 * signatures compared, the key compared through a pointer. Here the same hash picks one slot,
 * which names a flow's index.
 *
 * A slot is a hint, never trusted: the table confirms a hit against the key the hash keeps at
 * that index and the flow's used bit. So a removed flow, or an index the hash has since given
 * to another key, is a miss, and nothing has to be cleared when flows come and go. The signature
 * kept with the index spares a miss (a slot another flow holds) that confirming read.
 *
 * Direct-mapped, filled on every hash hit: with many more flows than slots, most lookups miss
 * and go on to rte_hash, as they would without the cache.
 */
#ifndef XLB_FLOW_CACHE_H
#define XLB_FLOW_CACHE_H

#include <stdint.h>

#define XLB_FLOW_CACHE_SLOTS 8192 /* a power of two: 64 KiB per worker */

struct xlb_flow_cache_slot {
    uint32_t sig;    /* the key's hash (keyed), as rte_hash gets it */
    uint32_t index1; /* the flow's index + 1; 0: empty */
};

struct xlb_flow_cache {
    struct xlb_flow_cache_slot slots[XLB_FLOW_CACHE_SLOTS];
};

/* The flow index the slot of sig names, or -1 when it names none for sig. */
static inline int64_t xlb_flow_cache_probe(const struct xlb_flow_cache *c, uint32_t sig)
{
    const struct xlb_flow_cache_slot *s = &c->slots[sig & (XLB_FLOW_CACHE_SLOTS - 1)];
    return s->sig == sig && s->index1 != 0 ? (int64_t)s->index1 - 1 : -1;
}

/* Remember that the key of signature sig is the flow at index (displacing the slot's last flow). */
static inline void xlb_flow_cache_fill(struct xlb_flow_cache *c, uint32_t sig, uint32_t index)
{
    c->slots[sig & (XLB_FLOW_CACHE_SLOTS - 1)] =
        (struct xlb_flow_cache_slot){.sig = sig, .index1 = index + 1};
}

#endif
