#include "port_offloads.h"

#include <rte_ethdev.h>

uint64_t xlb_port_tx_offloads(uint64_t capa)
{
    /* Chains (the TCP relay's segments: headers, then the payload attached) where the driver
     * takes them; elsewhere the relay sends them flat. Checksums where the NIC computes them:
     * the TCP endpoint then does not read a segment's payload to send it (docs/tcp.md). */
    const uint64_t wanted = RTE_ETH_TX_OFFLOAD_MULTI_SEGS | RTE_ETH_TX_OFFLOAD_TCP_CKSUM |
                            RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
    return capa & wanted;
}

void xlb_port_info_set_tx(struct xlb_port_info *info, uint64_t tx_offloads)
{
    info->tx_multi_seg = (tx_offloads & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) != 0;
    info->tx_tcp_cksum = (tx_offloads & RTE_ETH_TX_OFFLOAD_TCP_CKSUM) != 0;
    info->tx_ip_cksum = (tx_offloads & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) != 0;
}

struct xlb_port_tx_cksum xlb_port_tx_cksum(const struct xlb_port_info *ports, unsigned n)
{
    /* A segment's port is chosen per connection (its next hop), after the endpoint built it:
     * the endpoint can leave a checksum out only if whichever port it leaves by fills it in. */
    struct xlb_port_tx_cksum c = {.tcp = n > 0, .ip = n > 0};
    for (unsigned p = 0; p < n; p++) {
        c.tcp = c.tcp && ports[p].tx_tcp_cksum;
        c.ip = c.ip && ports[p].tx_ip_cksum;
    }
    return c;
}
