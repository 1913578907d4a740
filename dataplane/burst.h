/*
 * The worker's burst function: a received burst in, replies queued per port, every packet
 * accounted for (transmitted, consumed, or dropped with a reason). Pure with respect to its
 * inputs, so packet tests drive it with crafted mbufs and inspect the tx batches.
 */
#ifndef XLB_BURST_H
#define XLB_BURST_H

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_tcp.h>

#include "xlb_counters.h"
#include "xlb_limits.h"
#include "xlb_msg.h"
#include "owned_cache.h"
#include "xlb_snapshot.h"

/* Room for one rx burst of replies plus what control messages generate in one loop. */
#define XLB_TX_BATCH      (XLB_RX_BURST * 2)
#define XLB_MSGS_PER_LOOP 8

struct xlb_tx_batch {
    uint16_t n;
    struct rte_mbuf *pkts[XLB_TX_BATCH];
};

struct xlb_flow_table;
struct xlb_lb_worker;
struct xlb_l7_worker;
struct xlb_addr_entry;

/*
 * A TCP segment for the NAT, parsed and checked, held until the end of its burst so that the
 * flows of all the burst's segments are looked up together (dataplane/nat_batch.c): their
 * cache misses then overlap instead of following one another.
 */
struct xlb_nat_pending {
    struct rte_mbuf *m;
    void *ip; /* struct rte_ipv4_hdr or rte_ipv6_hdr */
    struct rte_tcp_hdr *tcp;
    const struct xlb_addr_entry *owned;
    uint32_t tcp_len; /* header and payload */
    uint32_t l3_len;  /* the datagram's length */
    uint16_t l2_len;  /* Ethernet header and VLAN tags */
    uint16_t port_index;
    uint8_t family;
};

struct xlb_burst_ctx {
    struct xlb_worker_stats *stats;
    struct rte_ring *to_control; /* neighbour reports */
    struct rte_mempool *pool;    /* for packets the worker originates (solicitations) */
    /* Forwarding (NULL in tests that do not forward): this worker's flows and LB state. */
    struct xlb_flow_table *flows;
    struct xlb_lb_worker *lb;
    struct xlb_l7_worker *l7;         /* HTTP/2 VIPs (dataplane/l7.h), or NULL */
    struct rte_ring *const *redirect; /* every worker's redirect ring, or NULL */
    unsigned n_workers;
    bool redirected_pass; /* processing packets another worker redirected here */
    /* A flush the control plane asked for, worked through a bounded slice per loop. */
    struct xlb_flush {
        bool active;
        uint16_t port; /* host order, 0: any */
        uint32_t cursor;
        struct xlb_addr addr;
    } flush;
    unsigned worker_id;
    uint16_t snat_port_base;  /* first SNAT port of worker 0's slice */
    uint32_t snat_slice;      /* ports per worker's slice; 0: the flow table's port count */
    uint64_t now_tsc, tsc_hz; /* now_tsc: read once per poll loop */
    struct xlb_tx_batch tx[XLB_MAX_PORTS];
    struct xlb_owned_cache owned; /* the snapshot's owned addresses last seen */
    uint16_t n_pending;
    struct xlb_nat_pending pending[XLB_RX_BURST];
};

/* What a handler did with a packet; values >= 0 are an enum xlb_drop_reason. */
typedef int xlb_verdict;
#define XLB_VERDICT_TX       (-1) /* rewritten in place, to go out of the port it came in on */
#define XLB_VERDICT_CONSUMED (-2) /* handled, nothing to send: freed without a drop count */
#define XLB_VERDICT_SENT     (-3) /* the handler queued it itself (forwarded on some port) */
#define XLB_VERDICT_PENDING  (-4) /* held for the end of the burst (struct xlb_nat_pending) */

void xlb_burst_process(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                       uint16_t port_index, struct rte_mbuf **pkts, uint16_t n);

/*
 * Packets another worker redirected to this one (their rx was counted there; their outcome is
 * counted here). Their port is found from m->port.
 */
void xlb_burst_process_redirected(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                  struct rte_mbuf **pkts, uint16_t n);

/* Act on one message from the control plane (e.g. send a solicitation). */
void xlb_burst_handle_message(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                              const struct xlb_msg *msg);

/* Queue m for transmission on port_index, or free it and count a tx-full drop. */
void xlb_tx_enqueue(struct xlb_burst_ctx *ctx, uint16_t port_index, struct rte_mbuf *m);

#endif
