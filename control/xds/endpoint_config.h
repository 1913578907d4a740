/*
 * A validated ClusterLoadAssignment (EDS) as a gRPC client reads it (A27, A61 dual-stack
 * addresses, A55 DRAINING endpoints, A76 endpoint hash keys): localities grouped by priority,
 * priorities contiguous from 0, drop overloads in parts per million.
 */
#ifndef XLB_XDS_ENDPOINT_CONFIG_H
#define XLB_XDS_ENDPOINT_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "envoy/config/endpoint/v3/endpoint.pb-c.h"
#include "json_read.h"
#include "xlb_host_port.h"
#include "xlb_override_map.h"

struct xlb_eds_endpoint {
    struct xlb_host_port *addresses; /* [0] is Endpoint.address, then additional_addresses */
    uint32_t n_addresses;
    enum xlb_health_status health; /* UNKNOWN, HEALTHY or DRAINING: others are left out */
    uint32_t weight;               /* load_balancing_weight, default 1, never 0 */
    char *hash_key;                /* A76: metadata "envoy.lb" "hash_key" (a string), else NULL */
};

struct xlb_eds_locality {
    char *region, *zone, *sub_zone;
    uint32_t weight; /* > 0: localities without weight are left out */
    struct xlb_eds_endpoint *endpoints;
    size_t n_endpoints;
};

struct xlb_eds_priority {
    struct xlb_eds_locality *localities; /* in resource order, at least one */
    size_t n_localities;
};

struct xlb_drop_overload {
    char *category;
    uint32_t parts_per_million; /* 0..1000000 */
};

struct xlb_endpoint_config {
    char *cluster_name;
    struct xlb_eds_priority *priorities; /* index = priority */
    size_t n_priorities;
    struct xlb_drop_overload *drops;
    size_t n_drops;
};

/*
 * Validate a ClusterLoadAssignment. Returns 0 with *out filled (free with
 * xlb_endpoint_config_free), or -1 with one line per problem appended to errs and *out empty.
 */
int xlb_validate_endpoints(const Envoy__Config__Endpoint__V3__ClusterLoadAssignment *msg,
                           struct xlb_endpoint_config *out, struct xlb_errors *errs);

void xlb_endpoint_config_free(struct xlb_endpoint_config *config);

#endif
