/*
 * bench_fwd's fixture (bench_fwd_setup.c): EAL, a real snapshot with one port, an L4 VIP whose
 * LB tree is a compiled round-robin cluster of N_BACKENDS on-link backends (resolved
 * neighbours) and MAX_SNAT SNAT addresses; a real LB worker state with its load counters; flow
 * tables with each flow's tuples; frame templates, and rx simulated by copying them into mbufs.
 * What is measured, and how, is described in bench_fwd.c.
 */
#ifndef BENCH_FWD_SETUP_H
#define BENCH_FWD_SETUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "burst.h"
#include "worker.h"
#include "xlb_flow_table.h"
#include "xlb_lb.h"
#include "xlb_snapshot.h"

#define BURST        XLB_RX_BURST
#define PAYLOAD      64  /* TCP payload of a data segment, bytes */
#define FRAME_COPY   128 /* bytes copied into each mbuf: every template fits */
#define MIN_FRAME    60  /* Ethernet minimum without FCS: short frames arrive padded */
#define N_BACKENDS   16
#define N_SNAT       4            /* SNAT addresses a table hands ports from, up to 258,048 flows */
#define MAX_SNAT     XLB_MAX_SNAT /* larger tables use more, one per SNAT_PORTS flows */
#define VIP_PORT     443
#define BACKEND_PORT 8443
#define CLUSTER_SLOT 1
#define CLIENT_ADDRS 4096 /* flow i comes from 100.64.0.0 + 1 + i % 4096 */
#define POOL_SIZE    8191
#define POOL_CACHE   256
#define SNAT_PORTS   (65536u - XLB_SNAT_PORT_BASE) /* one worker: the whole range */
#define MAX_FLOWS    (MAX_SNAT * SNAT_PORTS)

/*
 * A frame with zero addresses and ports; sum: its IPv4 header's ones' complement sum. An IPv6
 * frame (ipv6) carries its addresses' common prefix (BENCH_IPV6_PREFIX): a tuple gives their
 * last 4 bytes.
 */
struct tmpl {
    uint8_t bytes[FRAME_COPY];
    uint16_t len;
    uint32_t sum;
    bool ipv6;
};

/* With --ipv6 every address is 2001:2::/96 with the IPv4 address the bench would use in its
 * last 4 bytes (198.18.0.100 becomes 2001:2::c612:64). */
#define BENCH_IPV6_PREFIX                                                                          \
    {                                                                                              \
        0x20, 0x01, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0, 0                                             \
    }

/* One direction of a flow as its packets arrive; sum: the two addresses' 16-bit words. */
struct tuple {
    rte_be32_t src, dst;
    rte_be16_t sport, dport;
    uint32_t sum;
};

/* The fixture, set up once by setup() (b.ctx.flows: the current flow table). */
struct bench_fwd {
    struct rte_mempool *pool;
    struct rte_ring *to_control;
    struct xlb_snapshot *snap;
    struct xlb_lb_cluster *cluster;
    struct xlb_lb_target target;
    struct xlb_lb_vip vip;
    struct xlb_worker_load *load;
    struct xlb_lb_worker lb;
    struct xlb_worker_stats stats;
    struct xlb_burst_ctx ctx;
    struct xlb_addr snat[MAX_SNAT];
    struct tmpl data, back_data, syn, syn_ack, ack;
    uint64_t tsc_hz;
    bool ipv6; /* set before setup(): IPv6 VIP, SNAT addresses, backends and frames */
};

extern struct bench_fwd b;

_Noreturn void die(const char *what);

/* A packet that should have been forwarded was not: say why, and stop. */
_Noreturn void die_dropped(const char *when);

void *xcalloc(size_t n, size_t size);

/* One lcore, no PCI devices, no shared config: a stand-alone process. extra: more arguments
 * (NULL-terminated; NULL for none), e.g. --vdev. */
void eal_init(bool hugepages, uint32_t memory_mib, char *const *extra);

/* The pool, snapshot, VIP and LB tree, LB worker, burst context and frame templates. */
void setup(void);
void teardown(void);

/* rte_malloc heap bytes allocated, over every socket. */
uint64_t heap_bytes(void);

struct flows {
    uint32_t n; /* flows, = the table's capacity */
    struct xlb_flow_table *table;
    uint64_t bytes;        /* rte_malloc heap the table holds */
    struct tuple *client;  /* per flow: client -> VIP */
    struct tuple *backend; /* per flow: backend -> SNAT address:port, once created */
};

/* A flow table of capacity n, made the burst context's, and its flows' client tuples. */
void flows_create(struct flows *f, uint32_t n);
void flows_free(struct flows *f);

/* The backend's answer to a frame xlb sent it: the same addresses and ports, swapped. */
void answer_tuple(const struct rte_mbuf *m, struct tuple *u);

/*
 * What the NIC would have delivered: the template with the flow's addresses, ports and IPv4
 * header checksum. The TCP checksum is left as it is: xlb never verifies it, it only patches it.
 */
static inline void fill(struct rte_mbuf *m, const struct tmpl *t, const struct tuple *u)
{
    uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *);
    memcpy(d, t->bytes, FRAME_COPY);
    m->data_len = t->len;
    m->pkt_len = t->len;
    if (t->ipv6) {
        struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(d + sizeof(struct rte_ether_hdr));
        struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)(ip6 + 1);
        m->ol_flags = 0;
        memcpy(ip6->src_addr + 12, &u->src, 4);
        memcpy(ip6->dst_addr + 12, &u->dst, 4);
        tcp->src_port = u->sport;
        tcp->dst_port = u->dport;
        return;
    }
    m->ol_flags = RTE_MBUF_F_RX_IP_CKSUM_GOOD;
    struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(d + sizeof(struct rte_ether_hdr));
    struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)(ip + 1);
    ip->src_addr = u->src;
    ip->dst_addr = u->dst;
    uint32_t s = t->sum + u->sum;
    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    ip->hdr_checksum = (uint16_t)~s;
    tcp->src_port = u->sport;
    tcp->dst_port = u->dport;
}

/* Random flow indexes below n, the same sequence for the same seed (an LCG, multiply-shift). */
static inline uint32_t next_index(uint64_t *x, uint32_t n)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(((*x >> 32) * n) >> 32);
}

static inline void fill_burst(struct rte_mbuf **pkts, const struct tmpl *t,
                              const struct tuple *tuples, uint32_t n, uint64_t *rng)
{
    if (rte_pktmbuf_alloc_bulk(b.pool, pkts, BURST) != 0)
        die("mbuf pool empty");
    for (unsigned i = 0; i < BURST; i++)
        fill(pkts[i], t, &tuples[next_index(rng, n)]);
}

/* Hand the tx batch on: everything xlb forwards leaves on the one port. */
static inline unsigned free_tx(void)
{
    struct xlb_tx_batch *tx = &b.ctx.tx[0];
    unsigned n = tx->n;
    rte_pktmbuf_free_bulk(tx->pkts, n);
    tx->n = 0;
    return n;
}

#endif
