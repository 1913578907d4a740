/* ICMP and ICMPv6 echo: xlb answers pings to the addresses it owns, VIPs included. */
#ifndef XLB_ICMP_ECHO_H
#define XLB_ICMP_ECHO_H

#include <rte_ip.h>

#include "packet_parse.h"

/* The frame holds a validated IPv4 header and icmp_len bytes of ICMP. */
xlb_verdict xlb_icmp4_input(struct xlb_burst_ctx *ctx, const struct xlb_port_view *port,
                            struct xlb_frame *frame, struct rte_ipv4_hdr *ip, uint32_t icmp_len);

/* The frame holds a validated IPv6 header; the ICMPv6 checksum is already verified. */
xlb_verdict xlb_icmp6_echo_reply(struct xlb_burst_ctx *ctx, const struct xlb_port_view *port,
                                 struct xlb_frame *frame, struct rte_ipv6_hdr *ip);

#endif
