/* TCP segments to owned addresses: to a VIP or back from a backend to a SNAT address. */
#ifndef XLB_TCP_INPUT_H
#define XLB_TCP_INPUT_H

#include "flow/flow.h"
#include "packet_parse.h"

/* p->tcp points at tcp_len bytes of the segment (header and payload). */
xlb_verdict xlb_tcp_input(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                          struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len);

#endif
