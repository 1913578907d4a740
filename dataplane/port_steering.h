/*
 * Return-path steering in the NIC: one rte_flow rule per worker and SNAT address sends a
 * backend's replies (TCP to SNAT address, destination port in the worker's slice) straight to
 * the rx queue of the worker that owns the flow. Where the device cannot, replies that land on
 * another worker cross a redirect ring instead (dataplane/flow/flow_batch.c).
 */
#ifndef XLB_PORT_STEERING_H
#define XLB_PORT_STEERING_H

#include <stdint.h>

#include "xlb_addr.h"

/*
 * Install the rules on a started port with n_rxq queues, one per worker, each worker owning an
 * aligned slice of `slice` SNAT ports. Returns the number of rules installed: 0 when the port
 * has one queue, or when the device refuses the first rule (nothing is left half-installed).
 */
unsigned xlb_port_steer_snat(uint16_t port_id, uint16_t n_rxq, const struct xlb_addr *snat,
                             unsigned n_snat, uint32_t slice);

/* Remove every rule installed on the port. */
void xlb_port_steer_flush(uint16_t port_id);

#endif
