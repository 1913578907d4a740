#include "neighbour_report.h"

bool xlb_neighbour_report(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                          uint16_t port_index, const struct xlb_addr *addr,
                          const struct rte_ether_addr *mac)
{
    const struct xlb_addr_entry *entry = xlb_snapshot_lookup(snap, addr);
    if (entry == NULL || entry->role != XLB_ROLE_NEIGHBOUR || entry->port_index != port_index)
        return false;
    /* Already known with this MAC: nothing to say. Until the control plane republishes, a
     * neighbour may be reported once per packet; the ring bounds that. */
    if (entry->resolved && rte_is_same_ether_addr(&entry->mac, mac))
        return true;
    if (rte_is_multicast_ether_addr(mac) || rte_is_zero_ether_addr(mac))
        return true;

    struct xlb_msg msg = {
        .type = XLB_MSG_NEIGHBOUR_SEEN,
        .port_index = port_index,
        .addr = *addr,
    };
    rte_ether_addr_copy(mac, &msg.mac);
    if (xlb_msg_send(ctx->to_control, &msg) == 0)
        ctx->stats->events[XLB_EVENT_NEIGHBOURS_REPORTED]++;
    else
        ctx->stats->events[XLB_EVENT_NEIGHBOUR_REPORTS_LOST]++;
    return true;
}
