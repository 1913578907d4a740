/* Compile the bootstrap, the ports, the neighbour table and the VIPs' LB trees into a new
 * immutable snapshot. */
#ifndef XLB_SNAPSHOT_BUILDER_H
#define XLB_SNAPSHOT_BUILDER_H

#include "bootstrap.h"
#include "lb_trees.h"
#include "neighbour_table.h"
#include "tls_watch.h"
#include "xlb_snapshot.h"

/* NULL when memory runs out (logged); the caller keeps serving the previous snapshot. */
struct xlb_snapshot *xlb_snapshot_build(const struct xlb_bootstrap *bootstrap,
                                        const struct xlb_port_view *ports, unsigned n_ports,
                                        const struct xlb_neighbour_table *neighbours,
                                        const struct xlb_lb_trees *lb,
                                        const struct xlb_tls_watch *tls, uint64_t generation);

#endif
