/*
 * The relay's own state, shared by its files only: a relayed connection is a pair of TCP
 * connections, client side and backend side, in a per-worker pool allocated at start.
 */
#ifndef XLB_RELAY_PAIR_H
#define XLB_RELAY_PAIR_H

#include <rte_ether.h>

#include "relay.h"
#include "xlb_tcp.h"

#define XLB_RELAY_NONE   UINT32_MAX
#define XLB_RELAY_TX_CAP 512 /* output packets collected per endpoint call */
/* Timers fired per poll loop, in slices: bounded work, the rest waits for the next loop. */
#define XLB_RELAY_TIMERS_PER_SLICE 64
#define XLB_RELAY_POLL_SLICES      4

enum xlb_relay_side_index { XLB_RELAY_CLIENT, XLB_RELAY_BACKEND };

/* One side's connection and where its packets leave. */
struct xlb_relay_side {
    struct xlb_tcp_conn *conn; /* NULL once closed; kept through TIME-WAIT (done set) */
    struct xlb_tcp_tuple tuple;
    struct rte_ether_addr mac;   /* the peer's next hop */
    struct rte_ether_addr local; /* our port's */
    uint16_t port_index;
    bool flat;      /* the port sends no chains: segments are linearized first */
    bool connected; /* established once */
    bool done;      /* on_closed delivered: the connection is no longer ours to write */
    bool shut;      /* the other side's FIN was passed on (xlb_tcp_shutdown) */
};

struct xlb_relay_pair {
    struct xlb_relay_side side[2];
    struct xlb_relay_worker *w;
    uint32_t flow;          /* the flow's index in the worker's table, or XLB_RELAY_NONE */
    uint32_t next_free;     /* free-list link */
    uint32_t endpoint_slot; /* the LB core's, for the backend connection's outcome */
    bool in_use;
    bool newreno; /* the VIP's congestion control */
    bool ended;   /* both sides done: the flow keeps absorbing the last segments */
    bool pumping, again;
};

struct xlb_relay_worker {
    struct xlb_tcp_endpoint *ep;
    struct xlb_relay_pair *pairs;
    uint32_t n_pairs, free_head, in_use;
    /* The call in progress: the worker's context, its snapshot, the pair it is about (output
     * of connections that have closed since goes by it), and where untagged output (a cookie
     * SYN-ACK) goes: back where the segment came from. */
    struct xlb_burst_ctx *ctx;
    const struct xlb_snapshot *snap;
    struct xlb_relay_pair *current;
    struct rte_ether_addr reply_mac;
    uint16_t reply_port;
    uint16_t n_tx;
    struct rte_mbuf *tx[XLB_RELAY_TX_CAP];
};

/* relay_worker.c: entering and leaving a call into the endpoint, and its output. */
void xlb_relay_enter(struct xlb_relay_worker *w, struct xlb_burst_ctx *ctx,
                     const struct xlb_snapshot *snap, struct xlb_relay_pair *current);
/* Route the output collected so far (each packet to its side's next hop). */
void xlb_relay_route_output(struct xlb_relay_worker *w);
uint64_t xlb_relay_now_ms(const struct xlb_burst_ctx *ctx);
struct xlb_relay_pair *xlb_relay_pair_alloc(struct xlb_relay_worker *w);
void xlb_relay_pair_free(struct xlb_relay_worker *w, struct xlb_relay_pair *pr);

/* relay_pump.c: the callbacks both connections of a pair run on. */
extern const struct xlb_tcp_callbacks xlb_relay_callbacks;
/* Move what either side can pass to the other. */
void xlb_relay_pump(struct xlb_relay_worker *w, struct xlb_relay_pair *pr);
/* Reset both sides (the flow is going away). */
void xlb_relay_abort(struct xlb_relay_worker *w, struct xlb_relay_pair *pr);

#endif
