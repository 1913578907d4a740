/*
 * The retransmission timer's estimator (RFC 6298): smoothed RTT, its variation, and the RTO
 * with exponential backoff. Times in microseconds.
 *
 * Karn's rule is the caller's: pass only samples that cannot be ambiguous, i.e. from a
 * timestamp echo (RFC 7323 section 4) or from a segment that was never retransmitted.
 */
#ifndef XLB_TCP_RTT_H
#define XLB_TCP_RTT_H

#include <stdint.h>

/* RFC 6298 section 2.1: the RTO before any sample. */
#define XLB_TCP_RTO_INITIAL_US 1000000u
/* The clock granularity G of section 2.3: the endpoint's timer wheel ticks in milliseconds. */
#define XLB_TCP_RTO_GRANULARITY_US 1000u
/* Defaults of the configurable bounds. RFC 6298 (2.4) asks for 1 s at least; like Linux, xlb
 * defaults to 200 ms, because a data centre's RTTs are far below it (docs/tcp-sender.md). */
#define XLB_TCP_RTO_MIN_DEFAULT_US 200000u
#define XLB_TCP_RTO_MAX_DEFAULT_US 60000000u

struct xlb_tcp_rtt {
    uint32_t srtt_us;    /* SRTT; 0 until the first sample */
    uint32_t rttvar_us;  /* RTTVAR */
    uint32_t rto_us;     /* RTO before backoff, within [min_rto_us, max_rto_us] */
    uint32_t min_rto_us; /* configured bounds */
    uint32_t max_rto_us;
    uint8_t backoff; /* RTO expiries since the last sample: the timer runs rto_us << backoff */
    uint8_t has_sample;
};

/* Before the first sample: RTO = 1 s (clamped to the bounds), no backoff. */
void xlb_tcp_rtt_init(struct xlb_tcp_rtt *r, uint32_t min_rto_us, uint32_t max_rto_us);

/* A new measurement R (section 2.2 first, 2.3 later). It also ends any backoff (5.7). */
void xlb_tcp_rtt_sample(struct xlb_tcp_rtt *r, uint32_t rtt_us);

/* The retransmission timer expired (5.5): the next RTO doubles, up to max_rto_us. */
void xlb_tcp_rtt_backoff(struct xlb_tcp_rtt *r);

/* The timer to arm now: the RTO with its backoff, at most max_rto_us. */
uint32_t xlb_tcp_rtt_timeout_us(const struct xlb_tcp_rtt *r);

#endif
