#include "arp.h"

#include <string.h>

#include <rte_arp.h>
#include <rte_byteorder.h>

#include "neighbour_report.h"

/* Smallest Ethernet frame without its FCS; shorter frames are padded to it. */
#define XLB_MIN_FRAME 60

static bool arp_header_valid(const struct rte_arp_hdr *arp)
{
    uint16_t op = rte_be_to_cpu_16(arp->arp_opcode);
    return arp->arp_hardware == rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) &&
           arp->arp_protocol == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) && arp->arp_hlen == 6 &&
           arp->arp_plen == 4 && (op == RTE_ARP_OP_REQUEST || op == RTE_ARP_OP_REPLY);
}

/* Turn the request into its reply in place: the asked-for address is at the port's MAC. */
static void make_reply(struct xlb_frame *frame, struct rte_arp_hdr *arp,
                       const struct rte_ether_addr *port_mac)
{
    struct rte_arp_ipv4 *data = &arp->arp_data;
    uint32_t asked = data->arp_tip;
    arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
    rte_ether_addr_copy(&data->arp_sha, &data->arp_tha);
    data->arp_tip = data->arp_sip;
    rte_ether_addr_copy(port_mac, &data->arp_sha);
    data->arp_sip = asked;
    xlb_frame_reply_ethernet(frame, port_mac);
}

xlb_verdict xlb_arp_input(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                          uint16_t port_index, struct xlb_frame *frame)
{
    if (frame->l3_avail < sizeof(struct rte_arp_hdr))
        return XLB_DROP_ARP_MALFORMED;
    struct rte_arp_hdr *arp = (struct rte_arp_hdr *)frame->l3;
    if (!arp_header_valid(arp))
        return XLB_DROP_ARP_MALFORMED;

    const struct rte_arp_ipv4 *data = &arp->arp_data;
    struct xlb_addr sender, target;
    xlb_addr_from_ipv4(data->arp_sip, &sender);
    xlb_addr_from_ipv4(data->arp_tip, &target);
    bool wanted =
        data->arp_sip != 0 && xlb_neighbour_report(ctx, snap, port_index, &sender, &data->arp_sha);

    if (arp->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REQUEST) &&
        xlb_snapshot_owned_on_port(snap, &target, port_index) != NULL) {
        make_reply(frame, arp, &snap->ports[port_index].mac);
        ctx->stats->events[XLB_EVENT_ARP_REPLIES]++;
        return XLB_VERDICT_TX;
    }
    return wanted ? XLB_VERDICT_CONSUMED : XLB_DROP_ARP_NOT_OURS;
}

struct rte_mbuf *xlb_arp_build_request(struct rte_mempool *pool, const struct xlb_port_view *port,
                                       const struct xlb_addr *source, const struct xlb_addr *target)
{
    struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
    if (m == NULL)
        return NULL;
    uint8_t *frame = (uint8_t *)rte_pktmbuf_append(m, XLB_MIN_FRAME);
    if (frame == NULL) {
        rte_pktmbuf_free(m);
        return NULL;
    }
    memset(frame, 0, XLB_MIN_FRAME);
    struct rte_ether_hdr *eth = (struct rte_ether_hdr *)frame;
    memset(&eth->dst_addr, 0xff, sizeof(eth->dst_addr));
    rte_ether_addr_copy(&port->mac, &eth->src_addr);
    eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);

    struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(eth + 1);
    arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
    arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
    arp->arp_hlen = RTE_ETHER_ADDR_LEN;
    arp->arp_plen = 4;
    arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REQUEST);
    rte_ether_addr_copy(&port->mac, &arp->arp_data.arp_sha);
    arp->arp_data.arp_sip = xlb_addr_ipv4(source);
    arp->arp_data.arp_tip = xlb_addr_ipv4(target);
    return m;
}
