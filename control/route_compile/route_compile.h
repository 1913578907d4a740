/*
 * Compile a validated RouteConfiguration (control/xds/route_config.h) into the workers' route
 * table (lib/route/xlb_route_table.h). Runs on the control plane; allocates.
 */
#ifndef XLB_ROUTE_COMPILE_H
#define XLB_ROUTE_COMPILE_H

#include <stdint.h>

#include "route_config.h"
#include "xlb_route_table.h"

/*
 * Build *out from config. Cluster indexes follow cluster_names (distinct names): position i is
 * index i. A cluster the config names that the list lacks is appended after the list's names,
 * in order of first use, so the table's cluster_names always name every index it uses.
 * Regexes compile through xlb_xds_regex_compile, the function validation used, then go to the
 * JIT. Returns 0, or -ENOMEM with *out NULL (free the result with xlb_route_table_free).
 */
int xlb_route_compile(const struct xlb_route_config *config, const char *const *cluster_names,
                      uint32_t n_cluster_names, struct xlb_route_table **out);

#endif
