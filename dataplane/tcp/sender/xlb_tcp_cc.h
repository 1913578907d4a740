/*
 * Congestion control for the TCP endpoint's sender: NewReno (RFC 5681 with appropriate byte
 * counting, RFC 3465) and CUBIC (RFC 9438, the default), behind one struct and one set of
 * calls. The kind is a field, not a table of function pointers, so each call is a switch the
 * compiler can inline. Windows are in bytes; times in microseconds.
 *
 * The loss-recovery module (xlb_tcp_recovery.h) decides when the window is reduced; this
 * module only says by how much and how it grows again.
 */
#ifndef XLB_TCP_CC_H
#define XLB_TCP_CC_H

#include <stdint.h>

enum xlb_tcp_cc_kind {
    XLB_TCP_CC_CUBIC = 0, /* the default */
    XLB_TCP_CC_NEWRENO = 1,
};

/* RFC 6928: the initial window, in segments. */
#define XLB_TCP_CC_INITIAL_SEGMENTS 10u
/* RFC 3465's limit L: slow start grows by at most this many segments per ACK. */
#define XLB_TCP_CC_ABC_LIMIT 2u

/* CUBIC's state (RFC 9438 section 4). Windows in bytes, times in microseconds. */
struct xlb_tcp_cubic {
    uint64_t epoch_start_us; /* start of the current congestion-avoidance epoch; 0: none */
    uint32_t w_max;          /* window before the last reduction (after fast convergence) */
    uint32_t cwnd_epoch;     /* cwnd when the epoch started */
    double w_est;            /* the Reno-friendly estimate (section 4.3), fractional bytes */
    double grow_carry;       /* growth earned but below one byte, for the next ACK */
    uint32_t cwnd_prior;     /* cwnd when ssthresh was last set: alpha becomes 1 past it */
    uint32_t k_us;           /* K, the time to reach w_max again */
};

struct xlb_tcp_cc {
    uint8_t kind; /* enum xlb_tcp_cc_kind */
    uint32_t mss;
    uint32_t cwnd;
    uint32_t ssthresh;
    uint32_t acked_in_ca; /* NewReno: bytes acknowledged towards the next MSS of growth */
    struct xlb_tcp_cubic cubic;
};

void xlb_tcp_cc_init(struct xlb_tcp_cc *cc, enum xlb_tcp_cc_kind kind, uint32_t mss);

/* New data acknowledged outside loss recovery: slow start or congestion avoidance.
 * `srtt_us` is the estimator's SRTT (CUBIC looks one RTT ahead; 0 if unknown). */
void xlb_tcp_cc_on_ack(struct xlb_tcp_cc *cc, uint32_t acked, uint32_t srtt_us, uint64_t now_us);

/* A loss detected by duplicate ACKs or SACK: ssthresh and cwnd reduced from the flight size
 * (RFC 5681 (4), RFC 9438 section 4.6, with fast convergence, 4.7). */
void xlb_tcp_cc_on_congestion(struct xlb_tcp_cc *cc, uint32_t flight_size, uint64_t now_us);

/* Loss recovery ended (the recovery point is acknowledged): cwnd = ssthresh. */
void xlb_tcp_cc_on_recovery_exit(struct xlb_tcp_cc *cc);

/* The retransmission timer expired: reduce as for a congestion event, unless this is a
 * further expiry of the same loss, and drop to the loss window, one segment (RFC 5681 (5)). */
void xlb_tcp_cc_on_rto(struct xlb_tcp_cc *cc, uint32_t flight_size, uint32_t backoff,
                       uint64_t now_us);

/* The sender was idle longer than an RTO (RFC 5681 section 4.1): restart from
 * min(cwnd, initial window); CUBIC starts a new epoch when it grows again. */
void xlb_tcp_cc_on_idle(struct xlb_tcp_cc *cc);

/* The path's MSS changed (PMTU): the windows keep their segment counts' byte sizes bounded. */
void xlb_tcp_cc_set_mss(struct xlb_tcp_cc *cc, uint32_t mss);

#endif
