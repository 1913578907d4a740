#include "tcp_input.h"

#include <rte_tcp.h>

xlb_verdict xlb_tcp_input(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                          struct xlb_frame *frame, const uint8_t *tcp, uint32_t tcp_len)
{
    if (tcp_len < sizeof(struct rte_tcp_hdr))
        return XLB_DROP_TCP_MALFORMED;
    const struct rte_tcp_hdr *th = (const struct rte_tcp_hdr *)tcp;
    uint32_t header_len = (uint32_t)(th->data_off >> 4) * 4;
    if (header_len < sizeof(*th) || header_len > tcp_len)
        return XLB_DROP_TCP_MALFORMED;
    /* A well-formed segment to an owned address: no forwarding service is attached to VIPs
     * in this release, so it is dropped under its own reason for operators to see. */
    return XLB_DROP_TCP_NO_SERVICE;
}
