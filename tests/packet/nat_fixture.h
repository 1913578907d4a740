/*
 * Shared fixture for the NAT packet tests (dataplane/nat/): the packet fixture's snapshot
 * completed with resolved gateways, resolved backends, two SNAT addresses and two L4 VIPs
 * (FIX_VIP4 and FIX_VIP6 on VIP_PORT) whose LB trees are compiled from EDS clusters; a flow
 * table, an LB worker with its load counters, redirect rings if asked, all wired into the burst
 * context. What differs between the tests (capacities, clusters, backends) is a nat_config.
 */
#ifndef XLB_NAT_FIXTURE_H
#define XLB_NAT_FIXTURE_H

#include <stdint.h>

#include <rte_ether.h>
#include <rte_ring.h>

#include "cluster_compile.h"
#include "packet_fixture.h"
#include "xlb_flow_table.h"
#include "xlb_lb.h"

#define VIP_PORT  9001
#define SNAT4     "198.18.0.11"
#define SNAT6     "2001:2::11"
#define PORT_BASE 1024
#define CLUSTER4  3 /* cluster slot of the IPv4 VIP's cluster */
#define CLUSTER6  4
#define TSC_HZ    1000000ull

#define NAT_GW6_MAC                                                                                \
    {                                                                                              \
        {                                                                                          \
            0x02, 0x00, 0x00, 0x00, 0x00, 0x61                                                     \
        }                                                                                          \
    }
#define NAT_BACKEND_MAC                                                                            \
    {                                                                                              \
        {                                                                                          \
            0x02, 0x00, 0x00, 0x00, 0x00, 0x21                                                     \
        }                                                                                          \
    }

#define NAT_MAX_CLUSTERS 3
#define NAT_MAX_WORKERS  2

/* A cluster of healthy endpoints of weight 1 in one locality. */
struct nat_cluster {
    const char *name;
    enum xlb_lb_policy policy;
    const char *const *endpoints; /* "host:port", or "host:port,host:port" (A61) */
    uint32_t n_endpoints;         /* at most 4 */
    const uint32_t *endpoint_slots;
    uint32_t cluster_slot, locality_slot;
    uint32_t max_requests; /* circuit breaker; 0: the default */
};

/* A backend: a neighbour of the port, resolved to mac. */
struct nat_backend {
    const char *addr;
    struct rte_ether_addr mac;
};

struct nat_config {
    const char *name;    /* prefix of the flow table's and the redirect rings' names */
    uint32_t flows;      /* flow table capacity */
    uint16_t port_count; /* SNAT ports per address in each worker's slice */
    uint64_t start_tsc;  /* the context's clock at the start */
    uint32_t lb_seed;
    unsigned n_workers; /* redirect rings, one per worker; 0: none (the context's left alone) */
    const struct nat_backend *backends;
    unsigned n_backends;
    /* clusters[0] serves FIX_VIP4, clusters[1] FIX_VIP6; any further one only gets its VIP
     * built (vip[i]) for a test to put in the snapshot. */
    const struct nat_cluster *clusters;
    unsigned n_clusters;
};

struct nat_fixture {
    struct fixture *f;
    struct xlb_flow_table *flows;
    struct xlb_worker_load *load;
    struct xlb_lb_worker lb;
    unsigned n_clusters, n_workers;
    struct xlb_lb_cluster *leaf[NAT_MAX_CLUSTERS];
    struct xlb_lb_target target[NAT_MAX_CLUSTERS];
    struct xlb_lb_vip vip[NAT_MAX_CLUSTERS];
    struct rte_ring *redirect[NAT_MAX_WORKERS];
};

struct nat_fixture *nat_fixture_create(const struct nat_config *cfg);
/* Asserts the redirect rings are empty; fixture_destroy asserts every mbuf is back. */
void nat_fixture_destroy(struct nat_fixture *n);

/* Compile a cluster; asserts it has all its endpoints. */
struct xlb_lb_cluster *nat_compile_cluster(const struct nat_cluster *c);
/* The snapshot's entry for an address that must be there. */
struct xlb_addr_entry *nat_entry(struct xlb_snapshot *snap, const char *text);

#endif
