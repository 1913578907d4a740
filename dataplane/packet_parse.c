#include "packet_parse.h"

#include <rte_byteorder.h>

xlb_verdict xlb_parse_ethernet(struct rte_mbuf *m, const struct rte_ether_addr *port_mac,
                               struct xlb_frame *frame)
{
    /* Every handler reads the frame as one flat buffer. */
    if (!rte_pktmbuf_is_contiguous(m))
        return XLB_DROP_MULTI_SEGMENT;
    uint32_t len = rte_pktmbuf_data_len(m);
    if (len < sizeof(struct rte_ether_hdr))
        return XLB_DROP_L2_TRUNCATED;

    struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
    if (!rte_is_same_ether_addr(&eth->dst_addr, port_mac) &&
        !rte_is_multicast_ether_addr(&eth->dst_addr))
        return XLB_DROP_NOT_OUR_MAC;

    uint16_t offset = sizeof(*eth);
    uint16_t type = rte_be_to_cpu_16(eth->ether_type);
    for (int tags = 0; tags < 2 && (type == RTE_ETHER_TYPE_VLAN || type == RTE_ETHER_TYPE_QINQ);
         tags++) {
        if (len < offset + sizeof(struct rte_vlan_hdr))
            return XLB_DROP_VLAN_TRUNCATED;
        const struct rte_vlan_hdr *vlan = rte_pktmbuf_mtod_offset(m, void *, offset);
        type = rte_be_to_cpu_16(vlan->eth_proto);
        offset += sizeof(*vlan);
    }
    frame->m = m;
    frame->eth = eth;
    frame->l2_len = offset;
    frame->ether_type = type;
    frame->l3 = rte_pktmbuf_mtod_offset(m, uint8_t *, offset);
    frame->l3_avail = len - offset;
    return XLB_VERDICT_TX;
}

bool xlb_frame_set_l3_len(struct xlb_frame *frame, uint32_t l3_len)
{
    struct rte_mbuf *m = frame->m;
    uint32_t want = frame->l2_len + l3_len;
    if (want > (uint32_t)rte_pktmbuf_data_len(m) + rte_pktmbuf_tailroom(m))
        return false;
    m->data_len = (uint16_t)want;
    m->pkt_len = want;
    frame->l3_avail = l3_len;
    return true;
}

void xlb_frame_reply_ethernet(struct xlb_frame *frame, const struct rte_ether_addr *port_mac)
{
    rte_ether_addr_copy(&frame->eth->src_addr, &frame->eth->dst_addr);
    rte_ether_addr_copy(port_mac, &frame->eth->src_addr);
}
