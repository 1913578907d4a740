/* Tell the control plane about a neighbour the snapshot wants, seen in ARP or ND. */
#ifndef XLB_NEIGHBOUR_REPORT_H
#define XLB_NEIGHBOUR_REPORT_H

#include <stdbool.h>

#include "burst.h"

/* True if addr is a neighbour the snapshot wants on this port (reported if its MAC is new). */
bool xlb_neighbour_report(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                          uint16_t port_index, const struct xlb_addr *addr,
                          const struct rte_ether_addr *mac);

#endif
