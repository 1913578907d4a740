/* IPv4 and IPv6 input: header validation, then dispatch by protocol. */
#ifndef XLB_IP_INPUT_H
#define XLB_IP_INPUT_H

#include "packet_parse.h"

xlb_verdict xlb_ipv4_input(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                           uint16_t port_index, struct xlb_frame *frame);
xlb_verdict xlb_ipv6_input(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                           uint16_t port_index, struct xlb_frame *frame);

#endif
