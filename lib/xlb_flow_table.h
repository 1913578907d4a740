/*
 * One worker's NAT flow table: no sharing, no locks, nothing allocated after creation. It
 * lives in lib/ because the control plane reads it (xlbctl flows) and asks workers to flush it.
 *
 * A flow is found from either side: the client's packets by (client, VIP) and the backend's
 * replies by (backend, SNAT address, SNAT port). Both keys live in one rte_hash (created
 * without multi-writer or reader-writer concurrency: the worker is its only user) and point to
 * the same entry in a preallocated array. SNAT source ports come from this worker's own slice
 * of each SNAT address's port range, so two workers never hand out the same port.
 *
 * Expiry: a timer wheel of one-second slots. Each entry carries the TSC at which its state's
 * idle timeout ends and sits in the slot of that second. A packet only moves the deadline
 * (no list work on the fast path); when a slot's second has passed, its entries are either
 * due (handed to the caller) or, refreshed since, moved on to their current slot. Work per
 * call is bounded; a slot not finished in one call is continued in the next.
 */
#ifndef XLB_FLOW_TABLE_H
#define XLB_FLOW_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_hash.h>

#include "xlb_addr.h"

#define XLB_FLOW_MAX_SNAT    16 /* SNAT addresses a worker hands ports from */
#define XLB_FLOW_NONE        UINT32_MAX
#define XLB_FLOW_WHEEL_SLOTS 512 /* seconds: longer than the longest idle timeout */

/* A direction of a flow as it arrives: bytewise compared, so every byte is set. */
struct xlb_flow_key {
    uint8_t family;              /* AF_INET, AF_INET6 */
    uint8_t proto;               /* IPPROTO_TCP */
    uint16_t src_port, dst_port; /* network order */
    uint16_t zero;
    uint8_t src[16], dst[16];
};

enum xlb_flow_state {
    XLB_FLOW_SYN_SENT,    /* the client's SYN went to the backend */
    XLB_FLOW_ESTABLISHED, /* the backend answered SYN-ACK */
    XLB_FLOW_CLOSING,     /* a FIN was seen */
    XLB_FLOW_CLOSED,      /* a RST was seen */
};

struct xlb_flow {
    struct xlb_flow_key client_key;    /* client -> VIP */
    struct xlb_flow_key backend_key;   /* backend -> SNAT */
    struct rte_ether_addr client_mac;  /* where the client's packets came from (return hop) */
    struct rte_ether_addr backend_mac; /* the backend's next hop */
    uint16_t client_port_index, backend_port_index;
    uint8_t state;
    uint8_t snat_index;
    uint16_t snat_port; /* host order */
    uint32_t endpoint_slot, cluster_slot;
    uint64_t expires_tsc;
    uint32_t next_free;              /* free list link; XLB_FLOW_NONE at the end */
    uint32_t wheel_next, wheel_prev; /* links in its wheel slot */
    uint16_t wheel_slot;
    bool used;
    bool scheduled; /* in a wheel slot */
};

struct xlb_flow_table {
    struct rte_hash *hash;
    struct xlb_flow *flows;
    uint32_t capacity, n_used, free_head;
    /* Flows still in SYN_SENT, and the most there may be: a SYN flood fills at most this
     * share of the table, so established flows always find room. */
    uint32_t n_syn, syn_cap;
    /* The timer wheel: slot heads, the next second to process, TSC ticks per second. */
    uint32_t wheel[XLB_FLOW_WHEEL_SLOTS];
    uint64_t wheel_second, wheel_hz;
    /* This worker's SNAT ports: [port_base, port_base + port_count) on every SNAT address. */
    uint16_t port_base, port_count;
    uint8_t n_snat;
    struct xlb_addr snat[XLB_FLOW_MAX_SNAT];
    uint16_t *free_ports[XLB_FLOW_MAX_SNAT]; /* stacks */
    uint32_t n_free_ports[XLB_FLOW_MAX_SNAT];
};

/*
 * Create on the main lcore, before the worker starts: capacity flows, this worker's port slice
 * of each SNAT address. NULL when memory runs out.
 */
struct xlb_flow_table *xlb_flow_table_create(const char *name, uint32_t capacity, int socket,
                                             const struct xlb_addr *snat, unsigned n_snat,
                                             uint16_t port_base, uint16_t port_count);
void xlb_flow_table_free(struct xlb_flow_table *t);

/* The flow either key names, or NULL. */
struct xlb_flow *xlb_flow_lookup(const struct xlb_flow_table *t, const struct xlb_flow_key *key);

/*
 * A new flow for a client key, with a SNAT address of the client's family and a port from this
 * worker's slice; its backend key is filled from backend address/port. NULL when the table or
 * the ports are exhausted (*why says which: 0 table, 1 ports, 2 no SNAT address of the family).
 */
struct xlb_flow *xlb_flow_create(struct xlb_flow_table *t, const struct xlb_flow_key *client,
                                 const struct xlb_addr *backend, uint16_t backend_port_be,
                                 int *why);

/* Remove a flow: both keys, its wheel slot, its port back to the slice. */
void xlb_flow_remove(struct xlb_flow_table *t, struct xlb_flow *f);

/*
 * Make room when the table is full: remove the flow whose idle deadline is nearest, from the
 * earliest wheel slots, examining at most `budget` entries (the nearest seen goes when the
 * budget runs out). Returns the removed flow's copy in *evicted (for the caller's accounting),
 * or false when the table holds no flow on the wheel.
 */
bool xlb_flow_evict_oldest(struct xlb_flow_table *t, uint32_t budget, struct xlb_flow *evicted);

/* Put a new flow on the wheel at its expires_tsc (the first call starts the wheel's clock). */
void xlb_flow_schedule(struct xlb_flow_table *t, struct xlb_flow *f, uint64_t now_tsc, uint64_t hz);

/*
 * Up to max flows whose deadline has passed, taken off the wheel (the caller removes them);
 * at most `budget` entries are examined. Returns how many were stored in due.
 */
uint32_t xlb_flow_due(struct xlb_flow_table *t, uint64_t now_tsc, uint32_t budget,
                      struct xlb_flow **due, uint32_t max);

#endif
