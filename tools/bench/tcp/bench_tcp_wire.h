/*
 * bench_tcp's wire: two TCP endpoints (dataplane/tcp/) back to back in one process, an active
 * side and a passive side, each with its own tx array, and a wire that carries what one sent to
 * the other as a NIC would: each frame copied into one fresh mbuf (rx) and the sent packet freed
 * (tx done). Those copies and frees are the harness's, not counted; what is counted is the
 * cycles each side spends inside the endpoint's API (input, answer_syn, accept, write, flush,
 * peek and consume, shutdown, connect, poll), per side.
 */
#ifndef XLB_BENCH_TCP_WIRE_H
#define XLB_BENCH_TCP_WIRE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "xlb_tcp.h"

#define WIRE_BURST    32u   /* segments handed to an endpoint per timed call group */
#define WIRE_TX_MAX   1024u /* a side's tx array */
#define WIRE_MAX_CONN 1024u /* connections the bench drives at once */

/* One connection as the bench's two applications know it: the active side's end and the
 * passive side's end (NULL until accepted, and again once closed). */
struct bconn {
    struct xlb_tcp_conn *active, *passive;
    uint16_t active_port; /* the active side's local port: how the wire finds the connection */
    bool active_closed, passive_closed;
};

struct side {
    struct xlb_tcp_endpoint *ep;
    struct rte_mbuf *tx[WIRE_TX_MAX];
    uint16_t n_tx;
    uint64_t cycles; /* in the endpoint's API: what the figures add up */
    bool passive;    /* answers SYNs with cookies and accepts */
};

/* What the wire counted while carrying segments (not timed). */
struct wire_counts {
    uint64_t data_segs, data_bytes, pure_acks, other;
};

struct wire {
    struct rte_mempool *pool;
    struct side active, passive;
    struct xlb_syn_cookie_keys keys;
    uint64_t now_ms; /* a simulated clock: the bench moves it */
    struct bconn conns[WIRE_MAX_CONN];
    uint32_t n_conns;
    struct wire_counts to_passive, to_active;
    uint64_t lost; /* segments for a connection the receiving side no longer has */
    /* A NIC with TCP checksum offloads: the endpoints leave the tx checksum to it and the wire
     * computes nothing, marking every frame's checksum good on rx. Without: the endpoints
     * compute it and the wire marks it unknown, so the receiver verifies it in software. */
    bool nic_offload;
};

extern struct wire W;

__attribute__((noreturn)) void die(const char *what);
void eal_init(uint32_t memory_mib);
/* The pool and both endpoints, each with cfg and max_connections of it. */
void wire_create(const struct xlb_tcp_config *cfg);
void wire_free(void);
/* rte_malloc heap bytes in use. */
uint64_t heap_bytes(void);

/* Connection i's tuple as the active side opens it: 198.18.0.2:port -> 198.18.0.100:443. */
void wire_tuple(uint32_t i, struct xlb_tcp_tuple *t);
/* Open connection i from the active side (timed on the active side). */
void wire_connect(uint32_t i, uint32_t iss);
/* Carry everything `from` has sent to the other side, WIRE_BURST segments per endpoint call
 * group; with read, the receiving application reads everything after each burst (timed on the
 * receiver: peek and consume). Returns the number of segments carried. */
uint32_t wire_deliver(struct side *from, bool read);
/* Drop everything `from` has sent (a lost burst, for the memory figure). */
void wire_drop(struct side *from);
/* Everything connection c's passive end can read, read and consumed (timed on the passive
 * side). Returns the bytes read. */
uint64_t wire_read(struct bconn *c);
/* Move the clock by ms and fire both sides' timers (timed, each on its side). */
void wire_tick(uint64_t ms);
/* Move the clock past TIME-WAIT and fire every timer (not timed), until both pools are empty. */
void wire_drain(void);

#endif
