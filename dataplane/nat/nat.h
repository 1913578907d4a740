/*
 * Full NAT of TCP flows for L4 VIPs: a client's SYN to a VIP picks a backend with the LB core
 * (lib/lb), and every packet of the flow goes out as SNAT address:port -> backend; the
 * backend's replies to that SNAT address:port come back rewritten as VIP -> client. Backends
 * need no change: they see xlb's SNAT address as their peer.
 *
 * An engine under the flow layer (dataplane/flow/flow.h), which hands it the segments of flows
 * of kind XLB_FLOW_KIND_NAT and those of L4 VIPs that have no flow. Its files: the rewrite and
 * forwarding (nat_forward.c, nat_rewrite.h), the TCP state a flow tracks (nat_track.c,
 * nat_window.c), new flows (nat_new.c).
 */
#ifndef XLB_NAT_H
#define XLB_NAT_H

#include "flow/flow.h"

/* Flow entries examined to find one to evict when the table is full. */
#define XLB_NAT_EVICT_BUDGET 64

/*
 * The bulk of a worker's traffic, forwarded without the general handlers below: a data or ACK
 * segment (no SYN, FIN or RST) of an established L4 flow. It is judged by the flow's windows,
 * gets the flow's timeout renewed to `expires_s` (xlb_flow_deadline for an established flow,
 * the same for the whole burst), and is rewritten and queued as those handlers would; *verdict
 * says which (sent, or dropped out of window). False, with nothing done, for any other segment
 * or flow (f may be NULL): the general handlers take it.
 */
bool xlb_nat_forward_established(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                 const struct xlb_held_segment *d, struct xlb_flow *f,
                                 enum xlb_flow_side from, uint32_t expires_s, xlb_verdict *verdict);

/* client -> VIP on the NAT flow f: forwarded if the segment fits the flow's windows.
 * tcp_len: the segment's length. */
xlb_verdict xlb_nat_from_client(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len,
                                struct xlb_flow *f);

/* backend -> SNAT address on the NAT flow f: rewritten back to the client if the segment fits
 * the flow's windows. tcp_len: the segment's length. */
xlb_verdict xlb_nat_from_backend(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                 struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                 uint32_t tcp_len, struct xlb_flow *f);

/*
 * client -> VIP with no flow (vip: the segment's L4 VIP, or NULL when it has none): a SYN picks
 * a backend and makes the flow; a later segment of a connection whose flow this process lacks is
 * picked up on a VIP that picks by hash. XLB_DROP_TCP_NO_FLOW: no connection is known or can be
 * (the flow layer answers with a RST).
 */
xlb_verdict xlb_nat_no_flow(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                            struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len,
                            const struct xlb_flow_key *key, const struct xlb_vip_view *vip);

/*
 * A flow of kind XLB_FLOW_KIND_NAT_PROXY in SYN_SENT whose deadline has passed (the flow layer's
 * expiry, which has taken it off the wheel): the backend SYN is sent again and the flow stays,
 * on the wheel (true), or its retries are spent and the client gets a RST (false: the caller
 * ends the flow, a connect failure).
 */
bool xlb_nat_proxy_syn_due(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                           struct xlb_flow *f);

#endif
