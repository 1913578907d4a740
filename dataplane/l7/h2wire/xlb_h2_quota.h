/*
 * Metered shares of a shared xlb_h2_arena, as nghttp2_mems: what each HPACK decoder allocates.
 *
 * Each L7 connection keeps two HPACK decoders for as long as it lives, and what they hold varies
 * by a factor of twenty between a real peer (a few dozen fields: 1-2 KiB) and an adversarial one
 * that fills its table with the smallest entries (about 30 KiB, more while a large block is
 * decoded). Reserving the worst case in every connection's entry made the entry four times what
 * real traffic needs. So a worker's decoders all allocate from one heap, each through a quota:
 *
 * - its floor is committed when the quota is made (a connection that cannot have it is
 *   refused): up to its floor a decoder always finds memory, so a bound connection is never
 *   starved by the others;
 * - beyond its floor it grows from what no quota has committed, up to its limit (what a peer
 *   within the default table size can need), and gives it back as entries leave its table;
 * - a failure says whose it was: the limit's (the peer uses more than it may) or the pool's
 *   (the worker has no memory left; the connection asking is the one that fails).
 */
#ifndef XLB_H2_QUOTA_H
#define XLB_H2_QUOTA_H

#include <stdbool.h>
#include <stdint.h>

#include <nghttp2/nghttp2.h>

#include "xlb_h2_arena.h"

/* The shared heap and what its quotas have committed of it. */
struct xlb_h2_pool {
    struct xlb_h2_arena heap;
    uint32_t capacity;  /* bytes quotas may commit: less than the heap, against fragmentation */
    uint32_t committed; /* the sum over live quotas of max(in_use, floor) */
};

struct xlb_h2_quota {
    nghttp2_mem mem;          /* mem_user_data is the quota itself */
    struct xlb_h2_pool *pool; /* NULL: not made, or given back */
    uint32_t floor, limit;    /* heap bytes (blocks, headers included) */
    uint32_t in_use;          /* heap bytes it holds */
    uint32_t high_water;
    uint32_t last_failed; /* as xlb_h2_arena's: the last request not met, 0 when none failed */
    bool pool_empty;      /* that request failed for want of memory, not for the limit */
};

/* `size` bytes at `block`; quotas commit at most 7/8 of it. */
void xlb_h2_pool_init(struct xlb_h2_pool *p, void *block, uint32_t size);

/* Make a quota, committing its floor. false (and nothing committed) when the pool cannot. */
bool xlb_h2_quota_init(struct xlb_h2_quota *q, struct xlb_h2_pool *pool, uint32_t floor,
                       uint32_t limit);
/* Give the quota's commitment back (its user freed what it holds first). Safe on a zeroed or
 * given-back quota. */
void xlb_h2_quota_fini(struct xlb_h2_quota *q);

/* The allocator, also reachable through q->mem. NULL when the limit or the pool is reached. */
void *xlb_h2_quota_alloc(struct xlb_h2_quota *q, uint32_t size);
void xlb_h2_quota_free(struct xlb_h2_quota *q, void *ptr);

#endif
