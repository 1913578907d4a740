/*
 * Which tx offloads xlb asks of a port, from what its driver says it has, and what a worker's
 * TCP endpoints may then leave to the ports: pure functions of the capabilities, so that the
 * decision is tested without a device that has them (the vdevs of the tests have none).
 */
#ifndef XLB_PORT_OFFLOADS_H
#define XLB_PORT_OFFLOADS_H

#include <stdbool.h>
#include <stdint.h>

#include "port.h"

/* The RTE_ETH_TX_OFFLOAD_* flags to enable on a port whose dev_info has tx_offload_capa: mbuf
 * chains, and the TCP and IPv4 header checksums, each where the driver has it. */
uint64_t xlb_port_tx_offloads(uint64_t tx_offload_capa);

/* Record in a port's info the tx offloads enabled on it (xlb_port_tx_offloads' flags). */
void xlb_port_info_set_tx(struct xlb_port_info *info, uint64_t tx_offloads);

/* The checksums a worker's TCP endpoint may leave to the ports: one only when every port the
 * worker may send on (all n of them) computes it; none without ports. */
struct xlb_port_tx_cksum {
    bool tcp; /* RTE_ETH_TX_OFFLOAD_TCP_CKSUM */
    bool ip;  /* RTE_ETH_TX_OFFLOAD_IPV4_CKSUM */
};
struct xlb_port_tx_cksum xlb_port_tx_cksum(const struct xlb_port_info *ports, unsigned n);

#endif
