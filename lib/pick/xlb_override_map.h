/*
 * Override-host lookup for stateful session affinity (gRPC A55, A60, A61).
 *
 * A session cookie names the endpoint a session is pinned to as "ip:port". The map answers,
 * in a few memory reads, which slot that address is and what its EDS health status is, across
 * every priority of the cluster (a session stays pinned when its endpoint sits in a priority
 * that is not currently chosen). The override is honoured only when that status is in the
 * cluster's override_host_status set (default {UNKNOWN, HEALTHY}) and the endpoint is usable
 * now; otherwise the pick falls through to the normal policy, exactly as gRPC's override_host
 * picker falls through when the subchannel is not READY. Endpoints ejected by outlier detection
 * stay in the map and are simply marked unusable in the bitmap.
 *
 * The map is immutable: open addressing, a power-of-two table at most half full, linear
 * probing. Built on the control plane, read-only for workers.
 */
#ifndef XLB_OVERRIDE_MAP_H
#define XLB_OVERRIDE_MAP_H

#include <stdint.h>

#include "xlb_host_port.h"
#include "xlb_pick.h"

/* envoy.config.core.v3.HealthStatus, numbered as on the wire. */
enum xlb_health_status {
    XLB_HEALTH_UNKNOWN = 0,
    XLB_HEALTH_HEALTHY = 1,
    XLB_HEALTH_UNHEALTHY = 2,
    XLB_HEALTH_DRAINING = 3,
    XLB_HEALTH_TIMEOUT = 4,
    XLB_HEALTH_DEGRADED = 5,
};

/* A set of statuses as a bit mask; the default override_host_status of A55. */
#define XLB_HEALTH_BIT(status) (1u << (status))
#define XLB_OVERRIDE_STATUS_DEFAULT                                                                \
    (XLB_HEALTH_BIT(XLB_HEALTH_UNKNOWN) | XLB_HEALTH_BIT(XLB_HEALTH_HEALTHY))

struct xlb_override_endpoint {
    struct xlb_host_port where;
    uint32_t slot;
    uint8_t status; /* enum xlb_health_status */
};

/* Key as stored: family, port and address bytes only, so padding never affects a match. */
struct xlb_override_key {
    uint8_t family; /* 0 marks an empty bucket */
    uint8_t zero;
    uint16_t port;
    uint8_t bytes[16];
};

struct xlb_override_bucket {
    struct xlb_override_key key;
    uint32_t slot;
    uint8_t status;
    uint8_t reserved[7]; /* 32 bytes: two buckets per cache line, never split */
};

struct xlb_override_map {
    uint32_t mask; /* buckets - 1 */
    uint32_t n_endpoints;
    struct xlb_override_bucket buckets[];
};

/*
 * Build the map. Returns 0, -EINVAL for no endpoints, too many (more than 2^30), a status
 * outside the enum or an address that is neither IPv4 nor IPv6, -EEXIST when an address
 * appears twice (gRPC rejects EDS resources with duplicate addresses), or -ENOMEM.
 */
int xlb_override_map_build(const struct xlb_override_endpoint *endpoints, uint32_t n,
                           struct xlb_override_map **out);

void xlb_override_map_free(struct xlb_override_map *map);
uint64_t xlb_override_map_bytes(const struct xlb_override_map *map);

/* The bucket for this address, or NULL when the cluster has no such endpoint. */
const struct xlb_override_bucket *xlb_override_map_find(const struct xlb_override_map *map,
                                                        const struct xlb_host_port *where);

/*
 * The slot a session cookie's address should go to, or XLB_PICK_NONE to fall through to
 * the normal pick: unknown address, status not in status_mask, or unusable now.
 */
uint32_t xlb_override_pick(const struct xlb_override_map *map, const struct xlb_host_port *where,
                           uint32_t status_mask, const uint64_t *usable);

#endif
