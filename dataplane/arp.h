/* ARP: answer requests for owned addresses, learn wanted neighbours, originate requests. */
#ifndef XLB_ARP_H
#define XLB_ARP_H

#include "packet_parse.h"

xlb_verdict xlb_arp_input(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                          uint16_t port_index, struct xlb_frame *frame);

/* A broadcast request for target from source; NULL when the pool is empty. */
struct rte_mbuf *xlb_arp_build_request(struct rte_mempool *pool, const struct xlb_port_view *port,
                                       const struct xlb_addr *source,
                                       const struct xlb_addr *target);

#endif
