/*
 * How many connections a configuration can hold, and the default size of the L7 connection
 * pool (docs/configuration.md, "Capacity"): pure arithmetic on the bootstrap's figures and the
 * EAL arguments, in xlbd's argument library so that the unit tests check what xlbd prints.
 */
#ifndef XLBD_CAPACITY_H
#define XLBD_CAPACITY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The default L7 pool never goes below today's fixed default, nor above the key's limit. */
#define XLBD_L7_POOL_FLOOR   1024
#define XLBD_L7_POOL_CEILING 1048576
/* The share of the EAL memory the default L7 pools of all workers take together: 1/4. */
#define XLBD_L7_POOL_SHARE_DIV 4
/* The mbuf pool never defaults below what it was before it was sized (2^13 - 1). */
#define XLBD_MBUF_POOL_FLOOR 8191

/* The memory the EAL arguments give DPDK, in bytes: `-m MB` (or `-mMB`), or the sum of
 * `--socket-mem=MB,MB,...` (or `--socket-mem MB,...`); the last one given wins. 0 when none
 * is given (EAL takes hugepages as it needs them) or a value does not parse. */
uint64_t xlbd_eal_memory_bytes(char *const *args, unsigned n_args);

/*
 * The default L7 connections per worker: a quarter of the EAL memory shared among the
 * workers, in entries of conn_bytes each, but never fewer than XLBD_L7_POOL_FLOOR (also when
 * the memory is unknown) nor more than XLBD_L7_POOL_CEILING.
 */
uint32_t xlbd_l7_pool_default(uint64_t memory_bytes, unsigned workers, size_t conn_bytes);

/*
 * The default heap of a worker's stream engine (its HTTP/2 sessions): per_conn bytes for each
 * of its connections, but at most an eighth of the EAL memory shared among the workers, and
 * never less than min_bytes (what it was before it followed the memory; also when the memory
 * is unknown) nor more than 1 GiB.
 */
#define XLBD_STREAM_HEAP_SHARE_DIV 8
uint32_t xlbd_stream_heap_default(uint64_t memory_bytes, unsigned workers, uint32_t connections,
                                  uint32_t per_conn, uint32_t min_bytes);

/*
 * What can hold mbufs of the pool at once, all at their fullest: every rx queue's descriptors
 * (one per worker on every port), every tx queue's (the same), each worker's redirect ring when
 * there are other workers to fill it, and each lcore's mempool cache (DPDK lets one grow to
 * 1.5 times its size before it flushes). A pool smaller than the total can run dry with no
 * packet leaking: rx stops (rx_nombuf) and the workers' own segments fail (no_mbuf).
 */
struct xlbd_mbuf_need {
    /* In: */
    unsigned workers, ports;
    uint32_t rx_desc, tx_desc, redirect_ring, cache; /* per queue, ring and lcore */
    /* Out: */
    uint64_t rx, tx, redirect, caches, total;
};
void xlbd_mbufs_needed(struct xlbd_mbuf_need *n);
/* The pool when xlb.mbuf_pool_size is not given: 8191, or what the total needs if more. */
uint32_t xlbd_mbuf_pool_default(const struct xlbd_mbuf_need *n);
/* "mbuf pool P < T needed: rx ... + tx ... + redirect rings ... + lcore caches ..." (pool
 * smaller than the total, returns -1) or the same with ">=" (returns 0). */
int xlbd_mbufs_explain(char *buf, size_t len, uint32_t pool, const struct xlbd_mbuf_need *n);

struct xlbd_capacity {
    unsigned workers;
    uint32_t flows_per_worker, l7_per_worker;
    size_t flow_bytes, l7_conn_bytes; /* per entry */
    uint64_t memory_bytes;            /* the EAL's, or 0 when not given */
    /* The stream mode's engine (0 connections: no stream VIP, no engine, no line). */
    uint32_t stream_per_worker;
    uint64_t stream_worker_bytes;
    uint32_t stream_heap_bytes, stream_sessions; /* its heap, and the sessions it holds */
    uint32_t stream_tls_heap_bytes;              /* OpenSSL's heap, per worker */
};

/* The figures as `xlbd --check` prints them: one line each for flows and L7 connections
 * (per worker x workers = total, and the memory they take), and the EAL memory. */
void xlbd_capacity_print(FILE *out, const struct xlbd_capacity *c);

#endif
