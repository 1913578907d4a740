/*
 * Per-worker load counters for load reporting (LRS), circuit breaking and outlier detection:
 * one slot per (cluster, priority, locality), per (cluster, drop category), per cluster and per
 * (cluster, endpoint). The control plane
 * assigns locality, drop and cluster slots and never reuses one, so their counters are
 * monotonic; endpoint slots are reused after an RCU grace period, from a baseline (see
 * control/lb_compile/endpoint_slots.h). Workers write
 * their own copy (single writer, aligned 64-bit values) and the control plane sums the copies
 * of all workers.
 *
 * The data plane fills these as it forwards (an RPC in L7 mode, a connection in L4 mode);
 * until then nothing writes them and load reports carry zeros.
 */
#ifndef XLB_LOAD_H
#define XLB_LOAD_H

#include <stdint.h>

#define XLB_LOCALITY_SLOTS 16384 /* (cluster, priority, locality) combinations per process */
#define XLB_DROP_SLOTS     4096  /* (cluster, drop category) combinations per process */

struct xlb_locality_load {
    uint64_t issued;    /* calls started */
    uint64_t succeeded; /* calls finished OK */
    uint64_t failed;    /* calls finished otherwise */
};

#define XLB_ENDPOINT_LOAD_SLOTS 131072 /* (cluster, endpoint): lib/lb/xlb_lb.h */
#define XLB_CLUSTER_LOAD_SLOTS  4096   /* clusters: circuit breaking */

/*
 * A58: what this worker (one gRPC channel) knows of an endpoint's weight from its ORCA load
 * reports (lib/pick/xlb_wrr.h reads and writes it). Times are the worker's clock in ms, at
 * least 1, so that a zeroed slot reads as "no report" and XLB_WEIGHT_NEVER (0) as gRPC's
 * "infinite" non_empty_since.
 */
#define XLB_WEIGHT_NEVER 0u
struct xlb_endpoint_weight {
    uint64_t last_update_ms;     /* the last report with utilization and qps; 0: none yet */
    uint64_t non_empty_since_ms; /* the first such report since READY or expiry */
    float weight;                /* qps / (utilization + eps / qps * penalty), last report */
    uint32_t scaled;             /* the scheduler's share for this round, 0: not picked */
};

/* Per endpoint: fed to outlier detection (A50) and idle-timeout draining (A75). */
struct xlb_endpoint_load {
    uint64_t succeeded;
    uint64_t failed;
    uint64_t session_picks; /* picks that came through a session cookie (override host) */
    /* Calls to it this worker has started and not yet finished (least request, A48: each
     * worker is one channel and reads only its own). Mirrors the cluster's started/finished:
     * counted exactly when the call counts in xlb_cluster_load. Single writer, so a plain
     * increment; the finish saturates at 0 so that a call started on a slot before its reuse
     * cannot wrap the count of the endpoint that reuses it. */
    uint32_t in_flight;
    /* enum xlb_connectivity of this worker's subchannels to it (L7 stream mode), IDLE when
     * it has none; the control plane aggregates over workers (lib/lb/xlb_lb_connectivity.h). */
    uint8_t connectivity;
    /* A61: 1 + the index of the endpoint's address its subchannel connected to (READY),
     * 0: none; `xlbctl endpoints` shows it. */
    uint8_t connected_address;
    /* Its weighted round robin weight on this worker (A58, stream mode). */
    struct xlb_endpoint_weight weight;
};

/* Per cluster: requests in flight = started - finished, summed over workers (A27). */
struct xlb_cluster_load {
    uint64_t started;
    uint64_t finished;
    uint64_t circuit_dropped; /* refused by the circuit breaker: LRS uncategorized drops */
};

/* One worker's copy. */
struct xlb_worker_load {
    struct xlb_locality_load localities[XLB_LOCALITY_SLOTS];
    uint64_t drops[XLB_DROP_SLOTS];
    struct xlb_cluster_load clusters[XLB_CLUSTER_LOAD_SLOTS];
    struct xlb_endpoint_load endpoints[XLB_ENDPOINT_LOAD_SLOTS];
};

#endif
