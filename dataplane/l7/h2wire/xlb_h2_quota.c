/*
 * Metered shares of a shared arena (see xlb_h2_quota.h).
 */
#include <string.h>

#include "xlb_h2_quota.h"

static uint32_t max_u32(uint32_t a, uint32_t b)
{
    return a > b ? a : b;
}

void xlb_h2_pool_init(struct xlb_h2_pool *p, void *block, uint32_t size)
{
    xlb_h2_arena_init(&p->heap, block, size);
    p->capacity = p->heap.size - p->heap.size / 8;
    p->committed = 0;
}

/* What the pool's commitment becomes when the quota holds `in_use` instead. */
static uint32_t commit_delta(const struct xlb_h2_quota *q, uint32_t in_use)
{
    return max_u32(in_use, q->floor) - max_u32(q->in_use, q->floor);
}

static void *fail(struct xlb_h2_quota *q, uint32_t size, bool pool_empty)
{
    q->pool_empty = pool_empty;
    q->last_failed = size ? size : 1;
    return NULL;
}

void *xlb_h2_quota_alloc(struct xlb_h2_quota *q, uint32_t size)
{
    struct xlb_h2_pool *pool = q->pool;
    if (pool == NULL)
        return fail(q, size, true);
    if ((uint64_t)size + XLB_H2_ARENA_HEADER > q->limit - q->in_use)
        return fail(q, size, false); /* before the heap is asked: a lie costs it nothing */
    void *p = xlb_h2_arena_alloc(&pool->heap, size);
    if (p == NULL)
        return fail(q, size, true);
    uint32_t bytes = xlb_h2_arena_block_size(&pool->heap, p);
    bool in_limit = bytes <= q->limit - q->in_use;
    uint32_t grow = in_limit ? commit_delta(q, q->in_use + bytes) : 0;
    if (!in_limit || grow > pool->capacity - pool->committed) {
        xlb_h2_arena_free(&pool->heap, p); /* the heap is as it was */
        return fail(q, size, in_limit);
    }
    pool->committed += grow;
    q->in_use += bytes;
    if (q->in_use > q->high_water)
        q->high_water = q->in_use;
    return p;
}

void xlb_h2_quota_free(struct xlb_h2_quota *q, void *ptr)
{
    if (q->pool == NULL || ptr == NULL)
        return;
    uint32_t bytes = xlb_h2_arena_block_size(&q->pool->heap, ptr);
    if (bytes == 0 || bytes > q->in_use)
        return;                                               /* not this quota's */
    q->pool->committed += commit_delta(q, q->in_use - bytes); /* a negative delta, mod 2^32 */
    q->in_use -= bytes;
    xlb_h2_arena_free(&q->pool->heap, ptr);
}

/* nghttp2_mem's four functions. */

static void *mem_malloc(size_t size, void *user)
{
    return size > UINT32_MAX ? NULL : xlb_h2_quota_alloc(user, (uint32_t)size);
}

static void mem_free(void *ptr, void *user)
{
    xlb_h2_quota_free(user, ptr);
}

static void *mem_calloc(size_t n, size_t size, void *user)
{
    if (size != 0 && n > UINT32_MAX / size)
        return NULL;
    void *p = xlb_h2_quota_alloc(user, (uint32_t)(n * size));
    if (p != NULL)
        memset(p, 0, n * size);
    return p;
}

static void *mem_realloc(void *ptr, size_t size, void *user)
{
    struct xlb_h2_quota *q = user;
    if (ptr == NULL)
        return mem_malloc(size, user);
    uint32_t bytes = q->pool == NULL ? 0 : xlb_h2_arena_block_size(&q->pool->heap, ptr);
    if (bytes == 0 || size > UINT32_MAX)
        return NULL;
    uint32_t room = bytes - XLB_H2_ARENA_HEADER;
    if (size <= room)
        return ptr;
    void *grown = xlb_h2_quota_alloc(q, (uint32_t)size);
    if (grown == NULL)
        return NULL; /* the old block stays valid, as realloc promises */
    memcpy(grown, ptr, room);
    xlb_h2_quota_free(q, ptr);
    return grown;
}

bool xlb_h2_quota_init(struct xlb_h2_quota *q, struct xlb_h2_pool *pool, uint32_t floor,
                       uint32_t limit)
{
    memset(q, 0, sizeof(*q));
    q->mem.mem_user_data = q;
    q->mem.malloc = mem_malloc;
    q->mem.free = mem_free;
    q->mem.calloc = mem_calloc;
    q->mem.realloc = mem_realloc;
    q->floor = floor;
    q->limit = limit;
    if (floor > pool->capacity - pool->committed) {
        q->pool_empty = true;
        return false;
    }
    pool->committed += floor;
    q->pool = pool;
    return true;
}

void xlb_h2_quota_fini(struct xlb_h2_quota *q)
{
    if (q->pool == NULL)
        return;
    q->pool->committed -= max_u32(q->in_use, q->floor);
    q->pool = NULL;
}
