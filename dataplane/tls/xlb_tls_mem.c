/* SPDX-License-Identifier: BSD-3-Clause */
#include "xlb_tls_mem.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

/* The registered heaps, written on the control plane only (at start and stop), read by all. */
struct heap_range {
    uintptr_t base, end;
    struct xlb_tls_heap *heap; /* NULL: retired, frees ignored */
    void (*release)(void *);   /* a retired heap's block, released at shutdown */
    void *block;
};

static struct heap_range ranges[XLB_TLS_HEAPS_MAX];
static uint32_t n_ranges;
static bool installed;

static __thread struct xlb_tls_heap *current;
static __thread uint64_t system_calls;

static bool in_range(const struct heap_range *r, const void *p)
{
    uintptr_t a = (uintptr_t)p;
    return a >= r->base && a < r->end;
}

static bool heap_holds(const struct xlb_tls_heap *h, const void *p)
{
    uintptr_t a = (uintptr_t)p, base = (uintptr_t)h->arena.base;
    return a >= base && a < base + h->arena.size;
}

/* Whose pointer: a heap's (*gone when it was retired), or NULL for malloc's. */
static struct xlb_tls_heap *owner_of(const void *p, bool *gone)
{
    *gone = false;
    if (current != NULL && heap_holds(current, p))
        return current;
    uint32_t n = __atomic_load_n(&n_ranges, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        if (!in_range(&ranges[i], p))
            continue;
        struct xlb_tls_heap *h = __atomic_load_n(&ranges[i].heap, __ATOMIC_ACQUIRE);
        *gone = h == NULL;
        return h;
    }
    return NULL;
}

/* Blocks other threads freed go back to the arena, by its owner. */
static void take_back(struct xlb_tls_heap *h)
{
    if (__atomic_load_n(&h->remote, __ATOMIC_RELAXED) == NULL)
        return;
    void *p = __atomic_exchange_n(&h->remote, NULL, __ATOMIC_ACQUIRE);
    while (p != NULL) {
        void *next = *(void **)p;
        xlb_h2_arena_free(&h->arena, p);
        h->taken_back++;
        p = next;
    }
}

static void give_back(struct xlb_tls_heap *h, void *p)
{
    void *head = __atomic_load_n(&h->remote, __ATOMIC_RELAXED);
    do
        *(void **)p = head;
    while (!__atomic_compare_exchange_n(&h->remote, &head, p, true, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED));
}

static void *heap_alloc(struct xlb_tls_heap *h, size_t n)
{
    take_back(h);
    /* At least a pointer's room, for the remote list. */
    void *p =
        n > XLB_H2_ARENA_MAX ? NULL : xlb_h2_arena_alloc(&h->arena, n < 16 ? 16u : (uint32_t)n);
    if (p == NULL)
        h->failed++;
    return p;
}

static void *tls_malloc(size_t n, const char *file, int line)
{
    (void)file, (void)line;
    if (current != NULL)
        return heap_alloc(current, n);
    system_calls++;
    return malloc(n);
}

static void tls_free(void *p, const char *file, int line)
{
    (void)file, (void)line;
    bool gone;
    if (p == NULL)
        return;
    struct xlb_tls_heap *h = owner_of(p, &gone);
    if (gone)
        return;
    if (h == NULL) {
        /* A worker dropping the last reference to a control plane's object (a replaced
         * context outlived by a connection): rare, and counted. */
        system_calls++;
        free(p);
    } else if (h == current) {
        xlb_h2_arena_free(&h->arena, p);
    } else {
        give_back(h, p);
    }
}

/* The payload bytes a block holds. */
static size_t usable(const struct xlb_tls_heap *h, bool gone, void *p)
{
    if (h != NULL)
        return xlb_h2_arena_block_size(&h->arena, p) - XLB_H2_ARENA_HEADER;
    return gone ? 0 : malloc_usable_size(p);
}

static void *tls_realloc(void *p, size_t n, const char *file, int line)
{
    bool gone;
    if (p == NULL)
        return tls_malloc(n, file, line);
    if (n == 0) {
        tls_free(p, file, line);
        return NULL;
    }
    struct xlb_tls_heap *h = owner_of(p, &gone);
    if (h == NULL && !gone && current == NULL) {
        system_calls++;
        return realloc(p, n);
    }
    size_t old = usable(h, gone, p);
    if (h != NULL && h == current && n <= old)
        return p;
    /* Another allocator's block, or a heap block too small: move it (the arena does not grow
     * a block in place). */
    void *q = tls_malloc(n, file, line);
    if (q == NULL)
        return NULL; /* p stays valid, as realloc promises */
    memcpy(q, p, old < n ? old : n);
    tls_free(p, file, line);
    return q;
}

int xlb_tls_mem_install(void)
{
    if (CRYPTO_set_mem_functions(tls_malloc, tls_realloc, tls_free) != 1)
        return -1;
    installed = true;
    return 0;
}

bool xlb_tls_mem_installed(void)
{
    return installed;
}

bool xlb_tls_heap_init(struct xlb_tls_heap *h, void *block, uint32_t size, unsigned worker)
{
    memset(h, 0, sizeof(*h));
    xlb_h2_arena_init(&h->arena, block, size);
    h->worker = worker;
    uintptr_t base = (uintptr_t)h->arena.base, end = base + h->arena.size;
    uint32_t n = n_ranges, slot = n;
    /* A retired heap whose block was released: its range means nothing any more. */
    for (uint32_t i = 0; i < n && slot == n; i++)
        if (ranges[i].heap == NULL && ranges[i].block == NULL)
            slot = i;
    if (slot == XLB_TLS_HEAPS_MAX)
        return false;
    ranges[slot].base = base;
    ranges[slot].end = end;
    __atomic_store_n(&ranges[slot].heap, h, __ATOMIC_RELEASE);
    if (slot == n)
        __atomic_store_n(&n_ranges, n + 1, __ATOMIC_RELEASE);
    return true;
}

void xlb_tls_heap_retire(struct xlb_tls_heap *h, void (*release)(void *), void *block)
{
    bool kept = false;
    for (uint32_t i = 0; i < n_ranges; i++) {
        if (ranges[i].heap != h)
            continue;
        __atomic_store_n(&ranges[i].heap, NULL, __ATOMIC_RELEASE);
        if (installed && block != NULL) {
            ranges[i].release = release;
            ranges[i].block = block;
            kept = true;
        }
    }
    if (current == h)
        current = NULL;
    if (!kept && release != NULL && block != NULL)
        release(block);
}

void xlb_tls_thread_stop(void)
{
    OPENSSL_thread_stop();
}

void xlb_tls_mem_shutdown(void)
{
    OPENSSL_cleanup();
    for (uint32_t i = 0; i < n_ranges; i++) {
        if (ranges[i].block == NULL)
            continue;
        ranges[i].release(ranges[i].block);
        ranges[i].block = NULL;
    }
}

void xlb_tls_heap_enter(struct xlb_tls_heap *h)
{
    current = h;
}

struct xlb_tls_heap *xlb_tls_heap_current(void)
{
    return current;
}

unsigned xlb_tls_worker_index(void)
{
    return current != NULL ? current->worker : 0;
}

uint32_t xlb_tls_heap_in_use(const struct xlb_tls_heap *h)
{
    return xlb_h2_arena_in_use(&h->arena);
}

uint32_t xlb_tls_heap_high_water(const struct xlb_tls_heap *h)
{
    return xlb_h2_arena_high_water(&h->arena);
}

uint64_t xlb_tls_mem_system_calls(void)
{
    return system_calls;
}

uint32_t xlb_tls_heap_bytes(uint32_t connections, uint64_t cap)
{
    uint64_t bytes = (uint64_t)connections * XLB_TLS_HEAP_PER_CONN;
    if (cap == 0)
        cap = XLB_TLS_HEAP_DEFAULT_MAX;
    if (bytes > cap)
        bytes = cap;
    if (bytes < XLB_TLS_HEAP_MIN_BYTES)
        bytes = XLB_TLS_HEAP_MIN_BYTES;
    return bytes > (1u << 30) ? (1u << 30) : (uint32_t)bytes;
}
