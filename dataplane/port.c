#include "port.h"
#include "port_offloads.h"

#include <string.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "xlb_log.h"

struct rte_mempool *xlb_port_pool_create(unsigned n_mbufs)
{
    struct rte_mempool *pool = rte_pktmbuf_pool_create("xlb_mbufs", n_mbufs, XLB_MBUF_CACHE, 0,
                                                       RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
    if (pool == NULL)
        XLB_LOG(ERR, PORT, "cannot create a pool of %u mbufs: %s", n_mbufs,
                rte_strerror(rte_errno));
    return pool;
}

static void configure_offloads(const struct rte_eth_dev_info *info, uint16_t n_rxq,
                               struct rte_eth_conf *conf)
{
    memset(conf, 0, sizeof(*conf));
    if (info->rx_offload_capa & RTE_ETH_RX_OFFLOAD_IPV4_CKSUM)
        conf->rxmode.offloads |= RTE_ETH_RX_OFFLOAD_IPV4_CKSUM;
    conf->txmode.offloads = xlb_port_tx_offloads(info->tx_offload_capa);
    /* Spread flows over the workers' queues by addresses and ports. */
    uint64_t rss = info->flow_type_rss_offloads & (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP);
    if (n_rxq > 1 && rss != 0) {
        conf->rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
        conf->rx_adv_conf.rss_conf.rss_hf = rss;
    }
}

static int setup_queues(uint16_t port_id, uint16_t n_rxq, uint16_t n_txq, struct rte_mempool *pool,
                        const struct rte_eth_conf *conf)
{
    uint16_t rx_desc = XLB_RX_DESC, tx_desc = XLB_TX_DESC;
    int socket = rte_eth_dev_socket_id(port_id);
    if (rte_eth_dev_configure(port_id, n_rxq, n_txq, conf) != 0 ||
        rte_eth_dev_adjust_nb_rx_tx_desc(port_id, &rx_desc, &tx_desc) != 0)
        return -1;
    for (uint16_t q = 0; q < n_rxq; q++)
        if (rte_eth_rx_queue_setup(port_id, q, rx_desc, socket, NULL, pool) != 0)
            return -1;
    for (uint16_t q = 0; q < n_txq; q++)
        if (rte_eth_tx_queue_setup(port_id, q, tx_desc, socket, NULL) != 0)
            return -1;
    return 0;
}

int xlb_port_open(const char *name, unsigned n_workers, uint16_t mtu, struct rte_mempool *pool,
                  struct xlb_port_info *out)
{
    uint16_t port_id;
    if (rte_eth_dev_get_port_by_name(name, &port_id) != 0) {
        XLB_LOG(ERR, PORT, "port %s: no such DPDK device (check the eal --vdev/-a arguments)",
                name);
        return -1;
    }
    struct rte_eth_dev_info info;
    if (rte_eth_dev_info_get(port_id, &info) != 0)
        return -1;
    if (info.max_tx_queues < n_workers) {
        XLB_LOG(ERR, PORT,
                "port %s: %u tx queues but %u workers need one each (af_packet: qpairs=%u; af_xdp: "
                "queue_count=%u)",
                name, info.max_tx_queues, n_workers, n_workers, n_workers);
        return -1;
    }
    if (mtu != 0 && (mtu < info.min_mtu || mtu > info.max_mtu)) {
        XLB_LOG(ERR, PORT, "port %s: MTU %u is outside what the device takes (%u..%u)", name, mtu,
                info.min_mtu, info.max_mtu);
        return -1;
    }
    uint16_t n_rxq = (uint16_t)RTE_MIN(n_workers, (unsigned)info.max_rx_queues);
    struct rte_eth_conf conf;
    configure_offloads(&info, n_rxq, &conf);
    conf.rxmode.mtu = mtu; /* 0: the ethdev default, 1500 */
    if (setup_queues(port_id, n_rxq, (uint16_t)n_workers, pool, &conf) != 0 ||
        rte_eth_dev_start(port_id) != 0) {
        XLB_LOG(ERR, PORT, "port %s: cannot configure and start: %s", name,
                rte_strerror(rte_errno));
        return -1;
    }
    /* Promiscuous so that frames to VIP MACs learned elsewhere still arrive; filtered by MAC
     * in the worker. Not every driver supports it, and xlb works without. */
    rte_eth_promiscuous_enable(port_id);
    out->port_id = port_id;
    out->n_rxq = n_rxq;
    xlb_port_info_set_tx(out, conf.txmode.offloads);
    rte_eth_macaddr_get(port_id, &out->mac);
    if (rte_eth_dev_get_mtu(port_id, &out->mtu) != 0 || out->mtu == 0)
        out->mtu = RTE_ETHER_MTU;
    XLB_LOG(INFO, PORT,
            "port %s: id %u, %u rx and %u tx queues, MTU %u, " RTE_ETHER_ADDR_PRT_FMT
            ", tx offloads:%s%s%s",
            name, port_id, n_rxq, n_workers, out->mtu, RTE_ETHER_ADDR_BYTES(&out->mac),
            out->tx_multi_seg ? " chains" : "", out->tx_tcp_cksum ? " tcp-checksum" : "",
            out->tx_ip_cksum ? " ipv4-checksum" : "");
    return 0;
}

void xlb_port_close(uint16_t port_id)
{
    rte_eth_dev_stop(port_id);
    rte_eth_dev_close(port_id);
}
