/*
 * Messages between the planes, carried by value on single-producer single-consumer rte_rings
 * (one ring per worker and direction), so neither side allocates to talk to the other.
 */
#ifndef XLB_MSG_H
#define XLB_MSG_H

#include <stdint.h>

#include <rte_ether.h>
#include <rte_ring.h>

#include "xlb_addr.h"

enum xlb_msg_type {
    /* worker -> control: a neighbour the snapshot wants answered from this MAC */
    XLB_MSG_NEIGHBOUR_SEEN = 1,
    /* control -> worker: send an ARP request or neighbour solicitation for addr */
    XLB_MSG_SOLICIT = 2,
    /* control -> worker: end every flow to backend addr (and l4_port, unless 0) */
    XLB_MSG_FLUSH_ENDPOINT = 3,
    /* control -> worker: record the flows in dump (the protocol is in lib/xlb_flow_dump.h) */
    XLB_MSG_FLOWS_DUMP = 4,
    /* control -> worker: record the TCP endpoint's connections (lib/xlb_tcp_dump.h) */
    XLB_MSG_TCP_DUMP = 5,
};

struct xlb_flow_dump;
struct xlb_tcp_dump;

struct xlb_msg {
    uint16_t type;
    uint16_t port_index;
    struct rte_ether_addr mac;
    uint16_t l4_port; /* FLUSH_ENDPOINT: host order, 0 for any */
    struct xlb_addr addr;
    struct xlb_flow_dump *dump;    /* FLOWS_DUMP: the control plane's, until the worker is done */
    struct xlb_tcp_dump *tcp_dump; /* TCP_DUMP: likewise */
};

_Static_assert(sizeof(struct xlb_msg) % 4 == 0, "rte_ring elements are multiples of 4 bytes");

#define XLB_MSG_RING_SIZE 1024

/* Create one SP/SC ring of struct xlb_msg; NULL on failure (rte_errno set). */
struct rte_ring *xlb_msg_ring_create(const char *name, int socket_id);

static inline int xlb_msg_send(struct rte_ring *ring, const struct xlb_msg *msg)
{
    struct xlb_msg copy = *msg; /* rte_ring_sp_enqueue_elem takes a non-const pointer */
    return rte_ring_sp_enqueue_elem(ring, &copy, sizeof(copy));
}

static inline int xlb_msg_receive(struct rte_ring *ring, struct xlb_msg *msg)
{
    return rte_ring_sc_dequeue_elem(ring, msg, sizeof(*msg));
}

#endif
