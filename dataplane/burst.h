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
struct xlb_burst_ctx;

/* Send a port's tx batch now (the worker's rte_eth_tx_burst), emptying it. */
typedef void (*xlb_tx_flush_fn)(struct xlb_burst_ctx *ctx, uint16_t port_index);
struct xlb_lb_worker;
struct xlb_l7_worker;
struct xlb_relay_worker;
struct xlb_stream_worker;
struct xlb_addr_entry;

/*
 * A TCP segment to a VIP or SNAT address, parsed and checked, held until the end of its burst
 * so that the flows of all the burst's segments are looked up together by the flow layer
 * (dataplane/flow/flow_batch.c): their cache misses then overlap instead of following one
 * another.
 */
struct xlb_held_segment {
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
    struct xlb_l7_worker *l7;         /* HTTP/2 VIPs (dataplane/l7/l7.h), or NULL */
    struct xlb_relay_worker *relay;   /* terminate VIPs (dataplane/relay/relay.h), or NULL */
    struct xlb_stream_worker *stream; /* stream L7 VIPs (dataplane/stream/stream.h), or NULL */
    struct rte_ring *const *redirect; /* every worker's redirect ring, or NULL */
    unsigned n_workers;
    bool draining;        /* xlbd is stopping: engines tell their clients GOAWAY (xlb_shared) */
    bool redirected_pass; /* processing packets another worker redirected here */
    /* A flush the control plane asked for, worked through a bounded slice per loop. */
    struct xlb_flush {
        bool active;
        uint16_t port; /* host order, 0: any */
        uint32_t cursor;
        struct xlb_addr addr;
    } flush;
    /* A flow dump the control plane asked for (lib/xlb_flow_dump.h), a slice per loop. */
    struct xlb_flow_dump *dump;
    /* A TCP connection dump (lib/xlb_tcp_dump.h), likewise. */
    struct xlb_tcp_dump *tcp_dump;
    unsigned worker_id;
    uint16_t snat_port_base;  /* first SNAT port of worker 0's slice */
    uint32_t snat_slice;      /* ports per worker's slice */
    uint64_t now_tsc, tsc_hz; /* now_tsc: read once per poll loop */
    struct xlb_tx_batch tx[XLB_MAX_PORTS];
    /* A full batch is sent at once rather than dropped, when set: an engine that answers one
     * segment with many (the TCP relay) may fill it within a burst. NULL: dropped, tx_full. */
    xlb_tx_flush_fn tx_flush;
    void *tx_flush_arg;
    struct xlb_owned_cache owned; /* the snapshot's owned addresses last seen */
    uint16_t n_pending;
    struct xlb_held_segment pending[XLB_RX_BURST];
};

/*
 * The SNAT port space split into one slice per worker: the same power of two for every worker,
 * aligned, so worker w owns [w * slice, (w + 1) * slice) (ports below 1024 are never used).
 */
#define XLB_SNAT_PORT_BASE 1024u

static inline uint32_t xlb_snat_slice(unsigned n_workers)
{
    uint32_t pow2 = 1;
    while (pow2 < n_workers)
        pow2 <<= 1;
    return 65536u / pow2;
}

/*
 * The ports worker w's flow table hands out on every SNAT address: its slice
 * [base + w * slice, base + (w + 1) * slice), less the ports below XLB_SNAT_PORT_BASE. A reply
 * to a port of the slice of worker (port - base) / slice is that worker's (steered to it).
 */
static inline void xlb_snat_worker_ports(uint16_t base, uint32_t slice, unsigned worker_id,
                                         uint16_t *first, uint16_t *count)
{
    uint32_t start = base + worker_id * slice;
    uint32_t from = start < XLB_SNAT_PORT_BASE ? XLB_SNAT_PORT_BASE : start;
    *first = (uint16_t)from;
    *count = (uint16_t)(start + slice - from);
}

/* What a worker's burst context is made of (xlb_burst_ctx_init). */
struct xlb_burst_params {
    struct xlb_worker_stats *stats;
    struct rte_ring *to_control;
    struct rte_mempool *pool;
    /* Forwarding (NULL flows: TCP to VIPs is not served). */
    struct xlb_flow_table *flows;
    struct xlb_lb_worker *lb;
    struct xlb_l7_worker *l7;
    struct xlb_relay_worker *relay;
    struct xlb_stream_worker *stream;
    struct rte_ring *const *redirect; /* every worker's redirect ring, or NULL */
    unsigned worker_id, n_workers;
    /* The SNAT port slices, as xlb_snat_worker_ports made the flow table's range: worker 0's
     * slice starts at snat_port_base; snat_slice 0 is xlb_snat_slice(n_workers). */
    uint16_t snat_port_base;
    uint32_t snat_slice;
    uint64_t tsc_hz, now_tsc;
};

/* A context for a worker (xlbd's, or a test's, a benchmark's, a fuzz target's): everything not
 * in params starts empty. */
void xlb_burst_ctx_init(struct xlb_burst_ctx *ctx, const struct xlb_burst_params *params);

/* What a handler did with a packet; values >= 0 are an enum xlb_drop_reason. */
typedef int xlb_verdict;
#define XLB_VERDICT_TX       (-1) /* rewritten in place, to go out of the port it came in on */
#define XLB_VERDICT_CONSUMED (-2) /* handled, nothing to send: freed without a drop count */
#define XLB_VERDICT_SENT     (-3) /* the handler queued it itself (forwarded on some port) */
#define XLB_VERDICT_PENDING  (-4) /* held for the end of the burst (struct xlb_held_segment) */

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

/* Work on the dumps in progress, if any: one slice of the flow table, one of the TCP
 * endpoint's connections. */
void xlb_burst_dump_step(struct xlb_burst_ctx *ctx);

/* Queue m for transmission on port_index, or free it and count a tx-full drop. */
void xlb_tx_enqueue(struct xlb_burst_ctx *ctx, uint16_t port_index, struct rte_mbuf *m);

/* Every packet ends transmitted, handed on, consumed, or dropped under a reason. */
static inline void xlb_dispose(struct xlb_burst_ctx *ctx, uint16_t port_index, struct rte_mbuf *m,
                               xlb_verdict verdict)
{
    if (verdict == XLB_VERDICT_TX) {
        xlb_tx_enqueue(ctx, port_index, m);
        return;
    }
    if (verdict == XLB_VERDICT_SENT || verdict == XLB_VERDICT_PENDING)
        return;
    if (verdict >= 0)
        ctx->stats->drops[verdict]++;
    else
        ctx->stats->events[XLB_EVENT_CONSUMED]++;
    rte_pktmbuf_free(m);
}

#endif
