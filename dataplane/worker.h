/* A worker lcore: poll its rx queues, run the burst function, flush tx, report quiescence. */
#ifndef XLB_WORKER_H
#define XLB_WORKER_H

#include <stdint.h>

#include <rte_mempool.h>

#include "burst.h"
#include "port_offloads.h"
#include "stream/stream.h"
#include "xlb_limits.h"
#include "xlb_shared.h"

struct xlb_worker_rxq {
    uint16_t port_index;
    uint16_t port_id;
    uint16_t queue_id;
};

struct xlb_worker_config {
    unsigned id; /* worker number: index into shared->stats and the rings, RCU thread id */
    struct xlb_shared *shared;
    struct rte_mempool *pool;
    unsigned n_rxq;
    struct xlb_worker_rxq rxq[XLB_MAX_PORTS];
    uint16_t n_ports;
    uint16_t port_ids[XLB_MAX_PORTS]; /* by port index, for tx */
    uint16_t txq;                     /* this worker's tx queue on every port */
    /* The checksums every port computes: the worker's TCP endpoints leave them out. */
    struct xlb_port_tx_cksum tx_cksum;
    /* Sleep this long when a loop found no packets: for shared test machines, 0 in production. */
    unsigned idle_sleep_us;
    /* Forwarding: this worker's flow table and LB state (NULL: TCP to VIPs is not served). */
    struct xlb_flow_table *flows;
    struct xlb_lb_worker *lb;
    struct xlb_l7_worker *l7;
    struct xlb_relay_worker *relay; /* terminate VIPs' TCP endpoint (dataplane/relay/) */
    /* Stream L7 VIPs' engine (dataplane/stream/), made when stream_limits.connections > 0. */
    struct xlb_stream_worker *stream;
    struct xlb_stream_limits stream_limits;
    uint16_t snat_port_base;
    uint32_t snat_slice; /* SNAT ports per worker: worker w owns [w * slice, (w + 1) * slice) */
};

/*
 * Create worker w's flow table, LB state, (l7_connections > 0) HTTP/2 connection pool and
 * (tcp_connections > 0) TCP endpoint for terminate VIPs on
 * the main lcore (they are allocated once, never
 * on the worker). Returns 0 or -1 (logged); without SNAT addresses nothing is created.
 */
/* ... and (cfg->stream_limits.connections > 0) the stream engine of stream L7 VIPs. */
int xlb_worker_forwarding_create(struct xlb_worker_config *cfg, const struct xlb_addr *snat,
                                 unsigned n_snat, uint32_t flows_per_worker,
                                 uint32_t l7_connections, uint32_t tcp_connections);
void xlb_worker_forwarding_free(struct xlb_worker_config *cfg);

/* lcore entry point; arg is a struct xlb_worker_config. Returns when shared->stop is set. */
int xlb_worker_main(void *arg);

#endif
