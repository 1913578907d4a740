/*
 * Maglev consistent hashing (Eisenbud et al., NSDI 2016, section 3.4) for L4 clusters that
 * ask for consistent hashing, so that several xlb hosts behind ECMP send a flow to the same
 * backend without talking to each other.
 *
 * The table must therefore be a pure function of the configuration: endpoints are ordered by
 * their key (the "ip:port" text) before filling, each key's permutation comes from two XXH64
 * hashes with fixed seeds (offset: seed 0, skip: seed 1, as Envoy uses), and nothing depends on
 * input order, pointers or randomness. Weights follow Envoy's weighted Maglev: in round k an
 * endpoint of weight w places an entry when k * w has caught up with its placements so far
 * times the largest weight, so the heaviest endpoint places every round and one of a third its
 * weight every third round.
 *
 * Table size: a prime at least 100 times the endpoint count (Maglev's disruption bound wants
 * M >> N), the smallest from a fixed list starting at 65537 (the paper's and Envoy's default).
 */
#ifndef XLB_MAGLEV_H
#define XLB_MAGLEV_H

#include <stdint.h>

#include "xlb_pick.h"

#define XLB_MAGLEV_DEFAULT_SIZE 65537u
#define XLB_MAGLEV_MAX_KEY      255

struct xlb_maglev_endpoint {
    const char *key; /* NUL-terminated, unique, at most XLB_MAGLEV_MAX_KEY bytes */
    uint32_t slot;
    uint32_t weight; /* 0 leaves the endpoint out */
};

struct xlb_maglev {
    uint32_t size; /* prime */
    uint32_t n_endpoints;
    uint32_t table[]; /* slot per entry */
};

/* The table size the automatic choice gives n endpoints, or 0 when n is too large. */
uint32_t xlb_maglev_size_for(uint32_t n_endpoints);

/* Whether n is prime (exposed for callers validating a configured table_size). */
int xlb_maglev_is_prime(uint32_t n);

/*
 * Build a table. table_size 0 chooses automatically; otherwise it must be a prime no smaller
 * than the number of weighted endpoints (Envoy's MaglevLbConfig.table_size). Returns 0,
 * -EINVAL for no endpoints, every weight 0, a bad key or size, -EEXIST for a duplicate key,
 * -E2BIG when no listed prime is large enough, or -ENOMEM.
 */
int xlb_maglev_build(const struct xlb_maglev_endpoint *endpoints, uint32_t n, uint32_t table_size,
                     struct xlb_maglev **out);

void xlb_maglev_free(struct xlb_maglev *maglev);
uint64_t xlb_maglev_bytes(const struct xlb_maglev *maglev);

/*
 * The endpoint a hash picks when some may not take it (usable: as xlb_slot_usable reads it, NULL
 * for all): the hash's table entry, or the next entry in table order whose endpoint is usable,
 * so every host with the same table and the same usable set moves a connection alike.
 * XLB_PICK_NONE when none is.
 */
uint32_t xlb_maglev_pick_usable(const struct xlb_maglev *maglev, uint64_t hash,
                                const uint64_t *usable);

static inline uint32_t xlb_maglev_pick(const struct xlb_maglev *maglev, uint64_t hash)
{
    if (maglev == NULL)
        return XLB_PICK_NONE;
    return maglev->table[hash % maglev->size];
}

#endif
