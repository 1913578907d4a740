/*
 * The SYN proxy of L4 VIPs (nat_proxy.c), private to dataplane/nat/: what it shares with the
 * NAT's other files.
 */
#ifndef XLB_NAT_PROXY_H
#define XLB_NAT_PROXY_H

#include "nat.h"

/* The window scale xlb advertises to a client in its cookie SYN-ACK (Linux's usual shift, so
 * that most backends' windows pass unchanged). */
#define XLB_NAT_PROXY_WSCALE 7

/* nat_new.c: pick a backend and make the flow for a client segment (see there). */
xlb_verdict xlb_nat_new_flow(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                             struct xlb_frame *frame, const struct xlb_tcp_packet *p,
                             const struct xlb_flow_key *key, const struct xlb_vip_view *vip,
                             uint32_t payload, bool resume, struct xlb_flow **out);

/* nat_forward.c: track a client segment and send it to the backend, as rewritten. */
xlb_verdict xlb_nat_send_from_client(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                     struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                     uint32_t tcp_len, struct xlb_flow *f);

/* A client segment to an L4 VIP with no flow, the proxy on (VIPs that do not pick by hash): a SYN
 * is answered with a cookie, an ACK returning a valid cookie opens the backend connection. */
xlb_verdict xlb_nat_proxy_no_flow(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                  struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                  uint32_t tcp_len, const struct xlb_flow_key *key,
                                  const struct xlb_vip_view *vip);

/* Segments of a flow of kind XLB_FLOW_KIND_NAT_PROXY. */
xlb_verdict xlb_nat_proxy_from_client(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                      struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                      uint32_t tcp_len, struct xlb_flow *f);
xlb_verdict xlb_nat_proxy_from_backend(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                       struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                       uint32_t tcp_len, struct xlb_flow *f);

#endif
