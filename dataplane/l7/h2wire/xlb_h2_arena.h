/*
 * A bounded allocator for nghttp2 (its nghttp2_mem) over one block of the caller's memory.
 *
 * Each L7 connection keeps HPACK decoder state for as long as it lives (the dynamic tables must
 * follow the peers' encoders), and a worker may not call malloc. So the tables live in one
 * fixed-size element of a per-lcore mempool, and this allocator hands out pieces of it.
 *
 * Design: segregated fit with coalescing (the TLSF scheme). Free blocks sit in size classes, 8
 * per power of two, each with a free list; a bitmap finds a class that is sure to fit in O(1);
 * a request is cut to size (16-byte granularity) and a freed block merges with free neighbours
 * on both sides. Both matter here: nghttp2 asks for buffers of 2x a Huffman string's length, so
 * rounding to powers of two (a buddy system) would nearly double the worst case, and a
 * connection can fill its table with tiny entries and later with one big one, which only
 * merging lets the same bytes serve. Exhaustion is an ordinary NULL (nghttp2 reports
 * NGHTTP2_ERR_NOMEM), never a crash.
 */
#ifndef XLB_H2_ARENA_H
#define XLB_H2_ARENA_H

#include <stdint.h>

#include <nghttp2/nghttp2.h>

/* Bytes each allocation costs beyond what was asked for, before rounding up to 16. */
#define XLB_H2_ARENA_HEADER 16
/* Largest managed size; a bigger block is used only up to this. A worker's shared HPACK heap
 * (xlb_h2_quota.h) is one arena, so this is sized for a pool of connections, not for one. */
#define XLB_H2_ARENA_MAX (1u << 30)

/* Size classes: first level = power of two (2^5 .. 2^30), second level = 8 slices of it. */
#define XLB_H2_ARENA_FL_MIN 5
#define XLB_H2_ARENA_FL     26
#define XLB_H2_ARENA_SL     8
/* Blocks of the request's own class examined when no larger class has one: a bound on the
 * work of one allocation however many blocks the arena holds (failing then is allowed). */
#define XLB_H2_ARENA_WALK_MAX 64u

struct xlb_h2_arena {
    nghttp2_mem mem; /* mem_user_data is the arena itself */
    uint8_t *base;   /* 16-byte aligned start of the managed bytes */
    uint32_t size;   /* managed bytes (the block less alignment, at most XLB_H2_ARENA_MAX) */
    uint32_t in_use; /* bytes of the blocks handed out, headers and rounding included */
    uint32_t high_water;
    /* The size of the last request that could not be met, 0 when none failed: lets the HPACK
     * decoder tell a full arena from a header block that claims a string longer than itself. */
    uint32_t last_failed;
    uint32_t fl_map;                 /* bit f: some class of first level f has a block */
    uint8_t sl_map[XLB_H2_ARENA_FL]; /* bit s: class (f, s) has a block */
    uint32_t free_head[XLB_H2_ARENA_FL][XLB_H2_ARENA_SL]; /* offsets; UINT32_MAX: empty */
};

/* Manage `size` bytes at `block` (any alignment; a few bytes may go to aligning it). */
void xlb_h2_arena_init(struct xlb_h2_arena *a, void *block, uint32_t size);
uint32_t xlb_h2_arena_in_use(const struct xlb_h2_arena *a);
uint32_t xlb_h2_arena_high_water(const struct xlb_h2_arena *a);

/* The allocator itself, also reachable through a->mem (tests call these directly). NULL when
 * nothing fits; free ignores NULL and pointers it did not hand out. */
void *xlb_h2_arena_alloc(struct xlb_h2_arena *a, uint32_t size);
void xlb_h2_arena_free(struct xlb_h2_arena *a, void *ptr);
/* Bytes the block of a pointer this arena handed out takes (header and rounding included: what
 * in_use counts for it); 0 for NULL and for any other pointer. */
uint32_t xlb_h2_arena_block_size(const struct xlb_h2_arena *a, void *ptr);

#endif
