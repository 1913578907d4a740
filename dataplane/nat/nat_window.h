/*
 * TCP sequence windows of the L4 full NAT: a segment of a known flow is forwarded only if its
 * sequence range and its acknowledgment fit what the two sides have sent and advertised, in
 * the spirit of Linux conntrack's tcp_in_window but with 12 bytes per flow (struct
 * xlb_flow_window). docs/forwarding.md says what is checked and where it is liberal.
 */
#ifndef XLB_NAT_WINDOW_H
#define XLB_NAT_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_tcp.h>

#include "xlb_flow_table.h"

/* The window scale a SYN offers (RFC 7323 option 3, a shift above 14 taken as 14), or
 * XLB_FLOW_WSCALE_NONE; the header's data offset must have been checked against the segment. */
uint8_t xlb_window_syn_scale(const struct rte_tcp_hdr *tcp);

/*
 * Whether a segment of flow f (in its state before the segment) fits the windows; if it does,
 * the windows take it in. payload: the segment's data bytes. A client SYN on a half-open flow
 * (the flow's first, or a retransmission) starts the client's side afresh and always fits.
 */
bool xlb_window_accept(struct xlb_flow *f, const struct rte_tcp_hdr *tcp, uint32_t payload,
                       enum xlb_flow_side from);

/*
 * Start the windows of a flow picked up mid-connection from a client segment that carries an
 * ACK (every segment after the handshake does; no SYN seen):
 * the client has sent up to the segment's end, the backend up to what it acknowledges, and
 * neither side's window or scale is known, so both are taken as the largest TCP allows. That
 * is as liberal as Linux conntrack is with the connections it picks up; out-of-window checks
 * then only catch segments a gigabyte astray.
 */
void xlb_window_pick_up(struct xlb_flow_window *w, const struct rte_tcp_hdr *tcp, uint32_t payload);

/* Whether both sides' SYNs have set their windows (an established L4 flow's have). */
static inline bool xlb_window_both_spoken(const struct xlb_flow_window *w)
{
    return w->max_win[XLB_FLOW_FROM_CLIENT] != 0 && w->max_win[XLB_FLOW_FROM_BACKEND] != 0;
}

/*
 * Whether seq can be that of a segment side `from` sent and the other side has not yet
 * acknowledged (RFC 5927's check of an ICMP error's quoted segment): before what it has sent,
 * by no more than the receiver's largest window (unacknowledged data never exceeds it). A side
 * that has sent nothing has nothing in flight.
 */
bool xlb_window_sent_unacked(const struct xlb_flow_window *w, uint32_t seq,
                             enum xlb_flow_side from);

/* xlb_window_accept for a data segment or ACK (no SYN, FIN or RST) of a flow whose sides have
 * both spoken: the same verdict and the same effect, with none of the other cases' checks. */
bool xlb_window_accept_data(struct xlb_flow_window *w, const struct rte_tcp_hdr *tcp,
                            uint32_t payload, enum xlb_flow_side from);

#endif
