/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where OpenSSL's memory comes from (docs/tls.md, "Worker memory").
 *
 * xlbd installs these functions as OpenSSL's allocator before any other OpenSSL call. A thread
 * that entered a TLS heap (a worker: the stream engine's, at its first TLS call) allocates from
 * that heap only: a bounded arena (xlb_h2_arena) over a block of EAL memory taken at start.
 * When it is full the request fails, OpenSSL reports an error and the connection asking is
 * refused or its handshake fails; a worker never falls back to malloc. Any other thread (the
 * control plane) allocates with malloc.
 *
 * A pointer goes back to whoever made it, found by address: a registered heap's range, else
 * malloc. A heap is single-threaded, so a block another thread frees (the control plane
 * freeing a worker's SSL at stop, OpenSSL freeing a cache entry a worker made) is pushed on
 * the heap's remote list, an atomic stack the owner takes back at its next allocation: the
 * only write another thread makes to a heap. After xlb_tls_heap_retire (the worker stopped and
 * its connections were freed), frees into the heap's range are ignored.
 *
 * Some of what a worker allocates is OpenSSL's, not a connection's: its thread's error queue
 * and random generators, entries of the caches OpenSSL fills the first time an algorithm is
 * used. They stay in the heap for good (a few KiB) and OpenSSL reads them when it cleans up at
 * exit, so a retired heap's block is released only after OPENSSL_cleanup
 * (xlb_tls_mem_shutdown).
 */
#ifndef XLB_TLS_MEM_H
#define XLB_TLS_MEM_H

#include <stdbool.h>
#include <stdint.h>

#include "xlb_h2_arena.h"

/* Heaps xlbd can register at once: one per worker. */
#define XLB_TLS_HEAPS_MAX 128

/* Bytes of TLS heap a stream connection is counted for when xlbd sizes a worker's heap
 * (xlb_tls_heap_bytes): an open TLS connection holds about 16 KiB, a full handshake about
 * 74 KiB more while a step runs (tools/bench/tls_mem_bench.c, docs/tls.md). */
#define XLB_TLS_HEAP_PER_CONN    (32u * 1024u)
#define XLB_TLS_HEAP_MIN_BYTES   (4u * 1024u * 1024u)
#define XLB_TLS_HEAP_DEFAULT_MAX (16u * 1024u * 1024u) /* when the EAL memory is unknown */

struct xlb_tls_heap {
    struct xlb_h2_arena arena;
    unsigned worker;     /* which per-worker context of a TLS server this thread's SSLs use */
    uint64_t failed;     /* requests not met: the heap was full */
    uint64_t taken_back; /* blocks other threads freed, taken back by the owner */
    /* Blocks freed by other threads (a stack through their first bytes), on its own line. */
    _Alignas(64) void *remote;
};

/* Makes OpenSSL allocate through this file. Must come before any other OpenSSL call (OpenSSL
 * refuses it after its first allocation): 0, or -1 when refused. */
int xlb_tls_mem_install(void);
bool xlb_tls_mem_installed(void);

/* A heap over `size` bytes at `block`, registered so that its pointers find it; false when
 * XLB_TLS_HEAPS_MAX are registered. On the control plane, before the worker uses it. */
bool xlb_tls_heap_init(struct xlb_tls_heap *h, void *block, uint32_t size, unsigned worker);
/* The worker stopped and freed its connections. Its block goes by release(block): now when
 * OpenSSL does not allocate through this file, else at xlb_tls_mem_shutdown. */
void xlb_tls_heap_retire(struct xlb_tls_heap *h, void (*release)(void *), void *block);
/* A worker thread stops: OpenSSL frees the state it keeps for this thread (its error queue,
 * its random generators), back into the thread's heap. They would otherwise outlive the
 * thread's work, holding references to OpenSSL's shared objects through it. */
void xlb_tls_thread_stop(void);
/* At exit, after the last OpenSSL call: OpenSSL cleans up, then the retired heaps' blocks are
 * released. */
void xlb_tls_mem_shutdown(void);

/* This thread allocates from h from now on (NULL: from malloc). */
void xlb_tls_heap_enter(struct xlb_tls_heap *h);
struct xlb_tls_heap *xlb_tls_heap_current(void);
/* This thread's worker context index: its heap's worker, 0 without one. */
unsigned xlb_tls_worker_index(void);

/* Bytes of the heap's blocks in use (headers included), and the most ever. */
uint32_t xlb_tls_heap_in_use(const struct xlb_tls_heap *h);
uint32_t xlb_tls_heap_high_water(const struct xlb_tls_heap *h);

/* Calls this thread made to malloc, realloc or free through OpenSSL's functions: for tests, a
 * worker's must not move. */
uint64_t xlb_tls_mem_system_calls(void);

/* A worker's TLS heap for `connections` stream connections: XLB_TLS_HEAP_PER_CONN each, at
 * most `cap` (xlbd: a sixteenth of the EAL memory shared among the workers; 0, unknown:
 * XLB_TLS_HEAP_DEFAULT_MAX), at least XLB_TLS_HEAP_MIN_BYTES, 1 GiB at most. */
uint32_t xlb_tls_heap_bytes(uint32_t connections, uint64_t cap);

#endif
