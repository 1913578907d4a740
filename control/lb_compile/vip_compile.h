/*
 * Compile a READY VIP of the dependency manager into the workers' struct xlb_lb_vip: its route
 * table (A28, L7 only), the A42 hash policies of each route, and for every cluster a route can
 * name the leaf clusters it resolves to (an aggregate's leaves in priority order, A37/A75).
 */
#ifndef XLB_VIP_COMPILE_H
#define XLB_VIP_COMPILE_H

#include <stddef.h>

#include "dependency_manager.h"
#include "xlb_lb.h"

/* The compiled leaf cluster of a name, with a reference for the caller; NULL when none. */
typedef struct xlb_lb_cluster *(*xlb_leaf_resolver)(void *arg, const struct xlb_dm_cluster *leaf);

/* Returns 0 with *out (refs = 1), or -1 with a reason in err. */
int xlb_vip_compile(const struct xlb_dm_vip *vip, xlb_leaf_resolver resolve, void *arg,
                    struct xlb_lb_vip **out, char *err, size_t err_len);

#endif
