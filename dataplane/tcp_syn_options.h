/*
 * What the L4 full NAT reads and changes in the options of a SYN or SYN-ACK it forwards: the
 * window scale (for the sequence windows) and the MSS (clamped to what xlb's ports carry).
 * Read leniently, the way the endpoints' stacks read them: an option area that turns malformed
 * part-way ends the walk but does not make the segment invalid, since the NAT forwards what it
 * does not understand. The L7 mode, which answers SYNs itself, parses strictly instead
 * (dataplane/l7/tcpwire/xlb_tcp_options.h).
 */
#ifndef XLB_TCP_SYN_OPTIONS_H
#define XLB_TCP_SYN_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_tcp.h>

/*
 * The first option of `kind` whose length byte says `len`, as a pointer to its kind byte, or
 * NULL. The header's data offset must have been checked against the segment.
 */
const uint8_t *xlb_syn_option_find(const struct rte_tcp_hdr *tcp, uint8_t kind, uint8_t len);

/*
 * Lower the segment's MSS options (normally one) to `max` where they offer more, patching the
 * TCP checksum. Returns true when it lowered one. A segment without an MSS option is left alone:
 * its sender then assumes 536 (IPv4) or 1220 (IPv6), which fits every port.
 */
bool xlb_syn_clamp_mss(struct rte_tcp_hdr *tcp, uint16_t max);

#endif
