/* TCP segments to owned addresses. Until a VIP has a forwarding service they are counted. */
#ifndef XLB_TCP_INPUT_H
#define XLB_TCP_INPUT_H

#include "packet_parse.h"

/* tcp points at tcp_len bytes of the segment (header and payload). */
xlb_verdict xlb_tcp_input(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                          struct xlb_frame *frame, const uint8_t *tcp, uint32_t tcp_len);

#endif
