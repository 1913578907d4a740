/*
 * SEAM: the minimal stand-in for the sender module (dataplane/tcp/sender/, branch tcp-sender),
 * which brings the RFC 6298 estimator, NewReno/CUBIC and the RFC 6675 scoreboard. Until it is
 * merged: RTO fixed at the initial value with exponential backoff, no congestion window
 * (the peer's window alone limits), and fast retransmit of the first unacknowledged segment on
 * the third duplicate ACK. Only the functions below touch this state, so the merge replaces
 * this file and their bodies.
 */
#ifndef XLB_TCP_SENDER_SEAM_H
#define XLB_TCP_SENDER_SEAM_H

#include <stdint.h>

struct xlb_tcp_sender_seam {
    uint32_t rto_base_ms; /* before backoff */
    uint8_t backoff;      /* RTOs in a row: the RTO is rto_base_ms << backoff */
    uint8_t dup_acks;
    uint32_t recover; /* RFC 6582's recovery point: no second fast retransmit before it */
    uint32_t srtt_us, rttvar_us; /* last sample, for the listing */
};

static inline void xlb_tcp_seam_init(struct xlb_tcp_sender_seam *s, uint32_t rto_initial_ms,
                                     uint32_t iss)
{
    s->rto_base_ms = rto_initial_ms;
    s->backoff = 0;
    s->dup_acks = 0;
    s->recover = iss;
    s->srtt_us = 0;
    s->rttvar_us = 0;
}

static inline uint32_t xlb_tcp_seam_rto_ms(const struct xlb_tcp_sender_seam *s, uint32_t max_ms)
{
    uint64_t rto = (uint64_t)s->rto_base_ms << s->backoff;
    return rto > max_ms ? max_ms : (uint32_t)rto;
}

static inline void xlb_tcp_seam_rtt_sample(struct xlb_tcp_sender_seam *s, uint32_t rtt_us)
{
    s->srtt_us = rtt_us;
    s->rttvar_us = rtt_us / 2;
}

static inline uint32_t xlb_tcp_seam_cwnd(const struct xlb_tcp_sender_seam *s)
{
    (void)s;
    return UINT32_MAX;
}

#endif
