/*
 * The SYN proxy of L4 VIPs (nat_proxy.c), private to dataplane/nat/: what it shares with the
 * NAT's other files.
 */
#ifndef XLB_NAT_PROXY_H
#define XLB_NAT_PROXY_H

#include "nat.h"
#include "xlb_syn_cookie.h"

/* The window scale xlb advertises to a client in its cookie SYN-ACK (Linux's usual shift, so
 * that most backends' windows pass unchanged). */
#define XLB_NAT_PROXY_WSCALE 7

/* The times xlb sends the backend SYN again on its own timer before giving up (docs/forwarding.md
 * "SYN proxy"): 1, 2 and 4 s apart; the client is reset when the SYN timeout ends. */
#define XLB_NAT_PROXY_SYN_RETRIES 3

/* A proxied flow's side word (struct xlb_flow_table side[]). */
union xlb_nat_proxy_side {
    uint64_t word;
    struct {
        uint32_t seq_add; /* SYN_SENT: the cookie ISN; after: client seq - backend seq */
        uint32_t ts_add;  /* SYN_SENT: xlb's TSval; after: client TSval view - backend TSval */
    };
};

static inline union xlb_nat_proxy_side *xlb_nat_proxy_side_of(const struct xlb_flow_table *t,
                                                              const struct xlb_flow *f)
{
    return (union xlb_nat_proxy_side *)&t->side[f - t->flows];
}

/*
 * Until the backend's SYN-ACK starts the backend's half of a flow's window, that half holds
 * nothing: a proxied flow in SYN_SENT keeps there what its SYN needs to be sent again, the
 * client's TSval (from its ACK) and how many times the timer has sent it.
 */
static inline uint32_t *xlb_nat_proxy_client_tsval(struct xlb_flow *f)
{
    return &f->window.end[XLB_FLOW_FROM_BACKEND];
}

static inline uint8_t *xlb_nat_proxy_syn_sends(struct xlb_flow *f)
{
    return &f->window.wscale[XLB_FLOW_FROM_BACKEND];
}

/* nat_proxy.c: the options the flow's cookie gave back, decoded again from what the flow
 * holds (for the SYN sent again). False when the cookie no longer checks. */
bool xlb_nat_proxy_cookie_opts(struct xlb_burst_ctx *ctx, struct xlb_flow *f,
                               struct xlb_syn_cookie_opts *opts);

/* nat_proxy_timer.c: start the backend SYN's timer (the SYN has just gone out the first
 * time). */
void xlb_nat_proxy_arm_syn_timer(struct xlb_burst_ctx *ctx, struct xlb_flow *f);

/* nat_new.c: pick a backend and make the flow for a client segment (see there). In "auto",
 * XLB_NAT_VERDICT_COOKIE for a SYN whose cluster's circuit breaker is filling: the caller
 * answers it with a cookie (never returned for any other segment). */
#define XLB_NAT_VERDICT_COOKIE (-16)
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
