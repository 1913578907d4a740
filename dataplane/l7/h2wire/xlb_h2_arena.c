/*
 * Segregated-fit allocator with coalescing over a caller-given block (see xlb_h2_arena.h).
 *
 * The managed bytes are always tiled by blocks, each starting with a 16-byte header that gives
 * its size and its lower neighbour's size, so a freed block finds both neighbours in O(1). No two
 * free blocks are ever adjacent. A free block keeps its list links in its payload.
 *
 * Finding a block is O(1): the request is rounded up to the next class boundary, so any block
 * of that class or a higher one fits, and the two bitmaps name the first non-empty one. Only
 * when none exists is the request's own class walked for a block that happens to be big enough
 * (at most XLB_H2_ARENA_WALK_MAX blocks; a rare path, taken when memory is tight).
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "xlb_h2_arena.h"

#define NONE      UINT32_MAX
#define TAG_USED  0x48325553u /* catches frees of foreign or already freed pointers */
#define TAG_FREE  0x48324652u
#define GRANULE   16u
#define MIN_BLOCK 32u
#define SL_SHIFT  3 /* log2(XLB_H2_ARENA_SL) */

struct block {
    uint32_t size;      /* the whole block, header included: a multiple of GRANULE */
    uint32_t prev_size; /* the block just below; 0 for the first */
    uint32_t tag;
    uint32_t unused;
};

/* Free-list links, in a free block's payload. */
struct links {
    uint32_t next;
    uint32_t prev;
};

_Static_assert(sizeof(struct block) == XLB_H2_ARENA_HEADER, "header size");

static struct block *at(const struct xlb_h2_arena *a, uint32_t off)
{
    return (struct block *)(a->base + off);
}

static struct links *links_of(const struct xlb_h2_arena *a, uint32_t off)
{
    return (struct links *)(at(a, off) + 1);
}

static uint32_t log2_floor(uint32_t v)
{
    return 31u - (uint32_t)__builtin_clz(v);
}

/* The class holding free blocks of `size` bytes (size >= MIN_BLOCK, <= XLB_H2_ARENA_MAX). */
static void class_of(uint32_t size, uint32_t *f, uint32_t *s)
{
    uint32_t fl = log2_floor(size);
    *f = fl - XLB_H2_ARENA_FL_MIN;
    *s = (size >> (fl - SL_SHIFT)) & (XLB_H2_ARENA_SL - 1);
}

static void insert(struct xlb_h2_arena *a, uint32_t off)
{
    uint32_t f, s;
    class_of(at(a, off)->size, &f, &s);
    struct links *l = links_of(a, off);
    at(a, off)->tag = TAG_FREE;
    l->prev = NONE;
    l->next = a->free_head[f][s];
    if (l->next != NONE)
        links_of(a, l->next)->prev = off;
    a->free_head[f][s] = off;
    a->fl_map |= 1u << f;
    a->sl_map[f] |= (uint8_t)(1u << s);
}

static void unlink_free(struct xlb_h2_arena *a, uint32_t off)
{
    uint32_t f, s;
    class_of(at(a, off)->size, &f, &s);
    struct links *l = links_of(a, off);
    if (l->prev != NONE)
        links_of(a, l->prev)->next = l->next;
    else
        a->free_head[f][s] = l->next;
    if (l->next != NONE)
        links_of(a, l->next)->prev = l->prev;
    if (a->free_head[f][s] == NONE) {
        a->sl_map[f] &= (uint8_t) ~(1u << s);
        if (a->sl_map[f] == 0)
            a->fl_map &= ~(1u << f);
    }
    at(a, off)->tag = 0; /* taken, or about to stop being a header */
}

/* The first block of class (f, s) or above; NONE when every such class is empty. */
static uint32_t first_at_or_above(const struct xlb_h2_arena *a, uint32_t f, uint32_t s)
{
    if (f >= XLB_H2_ARENA_FL)
        return NONE;
    uint32_t sl = a->sl_map[f] & (uint32_t)(0xffu << s);
    if (sl == 0) {
        uint32_t fl = a->fl_map & ~((2u << f) - 1);
        if (fl == 0)
            return NONE;
        f = (uint32_t)__builtin_ctz(fl);
        sl = a->sl_map[f];
    }
    return a->free_head[f][__builtin_ctz(sl)];
}

/* A free block of at least `need` bytes, or NONE. */
static uint32_t find(const struct xlb_h2_arena *a, uint32_t need)
{
    uint32_t f, s;
    uint32_t up = need + (1u << (log2_floor(need) - SL_SHIFT)) - 1;
    if (up <= XLB_H2_ARENA_MAX) {
        class_of(up, &f, &s);
        uint32_t off = first_at_or_above(a, f, s);
        if (off != NONE)
            return off;
    }
    class_of(need, &f, &s);
    uint32_t walked = 0;
    for (uint32_t off = a->free_head[f][s]; off != NONE && walked < XLB_H2_ARENA_WALK_MAX;
         off = links_of(a, off)->next, walked++)
        if (at(a, off)->size >= need)
            return off;
    return NONE;
}

/* Tell the block above `off` (if any) how big `off` is now. */
static void set_next_prev_size(struct xlb_h2_arena *a, uint32_t off)
{
    uint32_t next = off + at(a, off)->size;
    if (next < a->size)
        at(a, next)->prev_size = at(a, off)->size;
}

void *xlb_h2_arena_alloc(struct xlb_h2_arena *a, uint32_t size)
{
    uint32_t need = size > XLB_H2_ARENA_MAX - XLB_H2_ARENA_HEADER
                        ? NONE
                        : (size + XLB_H2_ARENA_HEADER + GRANULE - 1) & ~(GRANULE - 1);
    need = need < MIN_BLOCK ? MIN_BLOCK : need;
    uint32_t off = need == NONE ? NONE : find(a, need);
    if (off == NONE) {
        a->last_failed = size ? size : 1;
        return NULL;
    }
    unlink_free(a, off);
    struct block *b = at(a, off);
    b->tag = TAG_USED;
    if (b->size - need >= MIN_BLOCK) {
        uint32_t rest = off + need;
        at(a, rest)->size = b->size - need;
        at(a, rest)->prev_size = need;
        b->size = need;
        set_next_prev_size(a, rest);
        insert(a, rest);
    }
    a->in_use += b->size;
    if (a->in_use > a->high_water)
        a->high_water = a->in_use;
    return b + 1;
}

/* The header of a pointer this arena handed out, or NULL for anything else. */
static struct block *owner(const struct xlb_h2_arena *a, void *ptr)
{
    uint8_t *p = ptr;
    if (p == NULL || p < a->base + XLB_H2_ARENA_HEADER || p >= a->base + a->size ||
        (uintptr_t)(p - a->base) % GRANULE != 0)
        return NULL;
    struct block *b = (struct block *)p - 1;
    uint32_t off = (uint32_t)((uint8_t *)b - a->base);
    if (b->tag != TAG_USED || b->size < MIN_BLOCK || b->size > a->size - off)
        return NULL;
    return b;
}

uint32_t xlb_h2_arena_block_size(const struct xlb_h2_arena *a, void *ptr)
{
    const struct block *b = owner(a, ptr);
    return b == NULL ? 0 : b->size;
}

void xlb_h2_arena_free(struct xlb_h2_arena *a, void *ptr)
{
    struct block *b = owner(a, ptr);
    if (b == NULL)
        return;
    uint32_t off = (uint32_t)((uint8_t *)b - a->base);
    a->in_use -= b->size;
    b->tag = 0; /* freed, until insert marks the merged block */
    uint32_t next = off + b->size;
    if (next < a->size && at(a, next)->tag == TAG_FREE) {
        unlink_free(a, next);
        b->size += at(a, next)->size;
    }
    if (b->prev_size != 0 && at(a, off - b->prev_size)->tag == TAG_FREE) {
        uint32_t prev = off - b->prev_size;
        unlink_free(a, prev);
        at(a, prev)->size += b->size;
        off = prev;
    }
    set_next_prev_size(a, off);
    insert(a, off);
}

/* nghttp2_mem's four functions. */

static void *mem_malloc(size_t size, void *user)
{
    return size > UINT32_MAX ? NULL : xlb_h2_arena_alloc(user, (uint32_t)size);
}

static void mem_free(void *ptr, void *user)
{
    xlb_h2_arena_free(user, ptr);
}

static void *mem_calloc(size_t n, size_t size, void *user)
{
    if (size != 0 && n > UINT32_MAX / size)
        return NULL;
    void *p = xlb_h2_arena_alloc(user, (uint32_t)(n * size));
    if (p != NULL)
        memset(p, 0, n * size);
    return p;
}

static void *mem_realloc(void *ptr, size_t size, void *user)
{
    struct xlb_h2_arena *a = user;
    if (ptr == NULL)
        return mem_malloc(size, user);
    struct block *b = owner(a, ptr);
    if (b == NULL || size > UINT32_MAX)
        return NULL;
    uint32_t room = b->size - XLB_H2_ARENA_HEADER;
    if (size <= room)
        return ptr;
    void *grown = xlb_h2_arena_alloc(a, (uint32_t)size);
    if (grown == NULL)
        return NULL; /* the old block stays valid, as realloc promises */
    memcpy(grown, ptr, room);
    xlb_h2_arena_free(a, ptr);
    return grown;
}

void xlb_h2_arena_init(struct xlb_h2_arena *a, void *block, uint32_t size)
{
    memset(a, 0, sizeof(*a));
    a->mem.mem_user_data = a;
    a->mem.malloc = mem_malloc;
    a->mem.free = mem_free;
    a->mem.calloc = mem_calloc;
    a->mem.realloc = mem_realloc;
    memset(a->free_head, 0xff, sizeof(a->free_head));
    uintptr_t start = ((uintptr_t)block + GRANULE - 1) & ~(uintptr_t)(GRANULE - 1);
    uint32_t lost = (uint32_t)(start - (uintptr_t)block);
    a->base = (uint8_t *)start;
    uint32_t usable = size > lost ? size - lost : 0;
    a->size = (usable < XLB_H2_ARENA_MAX ? usable : XLB_H2_ARENA_MAX) & ~(GRANULE - 1);
    if (a->size < MIN_BLOCK) {
        a->size = 0;
        return;
    }
    at(a, 0)->size = a->size;
    at(a, 0)->prev_size = 0;
    insert(a, 0);
}

uint32_t xlb_h2_arena_in_use(const struct xlb_h2_arena *a)
{
    return a->in_use;
}

uint32_t xlb_h2_arena_high_water(const struct xlb_h2_arena *a)
{
    return a->high_water;
}
