/*
 * Compile a READY VIP of the dependency manager into the workers' struct xlb_lb_vip: its route
 * table (A28, L7 only), the A42 hash policies of each route, and for every cluster a route can
 * name the leaf clusters it resolves to (an aggregate's leaves in priority order, A37/A75).
 */
#ifndef XLB_VIP_COMPILE_H
#define XLB_VIP_COMPILE_H

#include <stdbool.h>
#include <stddef.h>

#include "dependency_manager.h"
#include "xlb_lb.h"

/*
 * The compiled leaf cluster, with a reference for the caller; NULL when none. policy is NULL,
 * or (aggregate backward compatibility) the aggregate cluster whose lb_policy the leaf must use
 * in place of its own.
 */
typedef struct xlb_lb_cluster *(*xlb_leaf_resolver)(void *arg, const struct xlb_dm_cluster *leaf,
                                                    const struct xlb_cluster_config *policy);

/*
 * Returns 0 with *out (refs = 1), or -1 with a reason in err. aggregate_compat restores the
 * aggregate-cluster behaviour before gRPC A75 (gRPC's GRPC_XDS_AGGREGATE_CLUSTER_BACKWARD_COMPAT):
 * the aggregate's lb_policy applies to every leaf, and a session may pin any leaf's endpoint.
 * routing_of: NULL, or a previous tree of this VIP compiled from the same listener and route
 * configuration; the new tree then shares its routes, hash policies and cookies (L7).
 */
int xlb_vip_compile(const struct xlb_dm_vip *vip, bool aggregate_compat, xlb_leaf_resolver resolve,
                    void *arg, struct xlb_lb_vip *routing_of, struct xlb_lb_vip **out, char *err,
                    size_t err_len);

#endif
