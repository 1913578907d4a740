/* Ethernet ports: one rx queue per worker where the device has them, one tx queue per worker. */
#ifndef XLB_PORT_H
#define XLB_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mempool.h>

/* Descriptors per rx and tx queue (drivers may lower them, never raise them), and the per-lcore
 * cache of the mbuf pool; apps/xlbd/capacity.h sizes the pool from them. */
#define XLB_RX_DESC    1024
#define XLB_TX_DESC    1024
#define XLB_MBUF_CACHE 256

struct xlb_port_info {
    uint16_t port_id;
    uint16_t n_rxq;      /* workers 0..n_rxq-1 poll one each */
    unsigned flow_rules; /* rte_flow rules steering replies to their worker (0: rings) */
    struct rte_ether_addr mac;
    uint16_t mtu;      /* RTE_ETHER_MTU when the driver does not say */
    bool tx_multi_seg; /* the driver sends mbuf chains (RTE_ETH_TX_OFFLOAD_MULTI_SEGS) */
    bool tx_tcp_cksum; /* it computes TCP checksums (RTE_ETH_TX_OFFLOAD_TCP_CKSUM) */
    bool tx_ip_cksum;  /* it computes IPv4 header checksums (RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) */
};

struct rte_mempool *xlb_port_pool_create(unsigned n_mbufs);

/* Configure and start the named device with `mtu` (0: its default); on failure logs why and
 * returns -1. */
int xlb_port_open(const char *name, unsigned n_workers, uint16_t mtu, struct rte_mempool *pool,
                  struct xlb_port_info *out);
void xlb_port_close(uint16_t port_id);

#endif
