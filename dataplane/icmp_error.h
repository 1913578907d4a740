/*
 * ICMP errors about NATed flows (RFC 5508 behaviour for a NAT): a "destination unreachable",
 * "fragmentation needed" / "packet too big" or "time exceeded" that a backend or a router sends
 * about a segment xlb forwarded is translated for the other side of the flow, so that path MTU
 * discovery and error reporting work through xlb. The quoted segment and the outer header are
 * both rewritten; checksums are recomputed.
 */
#ifndef XLB_ICMP_ERROR_H
#define XLB_ICMP_ERROR_H

#include <stdbool.h>

#include "packet_parse.h"

/* ICMP error types xlb translates. */
static inline bool xlb_icmp4_is_error(uint8_t type)
{
    return type == 3 /* destination unreachable */ || type == 11 /* time exceeded */;
}

static inline bool xlb_icmp6_is_error(uint8_t type)
{
    return type == 1 /* unreachable */ || type == 2 /* too big */ || type == 3 /* time */;
}

/*
 * An ICMP error (the frame holds a validated IPv4 or IPv6 header, icmp_len bytes of ICMP with
 * a verified checksum) to an owned address of the given role: forwarded, translated, to the
 * flow's other side, or dropped (no flow: tcp_no_flow; quote too short: icmp_malformed).
 */
xlb_verdict xlb_icmp_error_input(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                 struct xlb_frame *frame, uint8_t family, void *ip,
                                 uint32_t icmp_len, uint8_t role);

#endif
