/*
 * Loss recovery for the TCP endpoint's sender: when to retransmit what, and how much new data
 * the congestion window lets out. With SACK, RFC 6675 (conservative SACK-based recovery, with
 * limited transmit, RFC 3042, and the rescue retransmission); without, RFC 6582 (NewReno,
 * with partial ACKs). After an RTO, RFC 6675 section 5.1: everything unSACKed is lost and goes
 * again from snd_una, in slow start.
 *
 * The core owns the sequence variables (snd_una, snd_nxt, the peer's window) and the send
 * queue; it tells this module about every acceptable ACK, every RTO and every segment it
 * sends, and asks it what to send next:
 *
 *     xlb_tcp_recovery_on_ack(r, &ack_event)   before advancing snd_una
 *     while (budget-- && (c = xlb_tcp_recovery_next(r, &view)).what != XLB_TCP_SEND_NOTHING) {
 *         build and send c (a retransmission of [seq, seq+len), or up to len new bytes)
 *         xlb_tcp_recovery_sent(r, seq, len, c.what == XLB_TCP_SEND_RETRANSMIT)
 *     }
 *
 * Every state is here, bounded; nothing is allocated.
 */
#ifndef XLB_TCP_RECOVERY_H
#define XLB_TCP_RECOVERY_H

#include <stdbool.h>
#include <stdint.h>

#include "xlb_tcp_cc.h"
#include "xlb_tcp_rtt.h"
#include "xlb_tcp_rxt_watch.h"
#include "xlb_tcp_sack_board.h"

/* What recovery counts, per connection; the core adds them to its per-worker counters. */
struct xlb_tcp_recovery_stats {
    uint64_t fast_retransmits;   /* recoveries entered by duplicate ACKs or SACK (each) */
    uint64_t sack_recoveries;    /* of which SACK-based */
    uint64_t newreno_recoveries; /* of which NewReno (peer without SACK) */
    uint64_t rto_recoveries;     /* RTOs (first expiry of a loss) */
    uint64_t tlp_recoveries;     /* losses a tail loss probe revealed: recoveries it started, or
                                  * a lone tail segment it repaired (cwnd reduced for both) */
    uint64_t partial_acks;       /* NewReno partial ACKs */
    uint64_t limited_transmits;  /* segments sent under RFC 3042 */
    uint64_t rescue_retransmits; /* RFC 6675 NextSeg rule 4 */
    uint64_t sack_reneging;      /* boards discarded because the peer reneged */
    uint64_t dsacks;             /* D-SACKs received (RFC 2883): spurious retransmissions */
    uint64_t sack_invalid;       /* SACK blocks outside the window, ignored */
    uint64_t sack_dropped;       /* SACK ranges forgotten: the board was full */
    uint64_t tlp_probes;         /* tail loss probes sent (RFC 8985 section 7) */
    uint64_t lost_retransmits;   /* retransmissions found lost again (no RTO) */
};

struct xlb_tcp_recovery {
    struct xlb_tcp_cc cc;
    struct xlb_tcp_sack_board board;
    uint32_t mss;
    uint32_t recovery_point;   /* RFC 6675 RecoveryPoint / RFC 6582 recover */
    uint32_t high_rxt;         /* one past the highest byte retransmitted in this recovery */
    uint32_t rescue_rxt;       /* RFC 6675 RescueRxt */
    uint32_t inflation;        /* NewReno: bytes the window is inflated by (RFC 6582) */
    uint32_t lost_below;       /* in fast recovery: every unSACKed byte below it is lost */
    uint32_t tlp_seq, tlp_end; /* the tail loss probe in flight (xlb_tcp_tlp.h) */
    /* This recovery's retransmissions, watched for their own loss (xlb_tcp_rxt_watch.h). */
    struct xlb_tcp_rxt_watch rxt;
    uint32_t snd_nxt; /* the highest sequence sent plus one, as the core last told */
    uint8_t sack_ok;  /* the peer negotiated SACK */
    uint8_t dupacks;
    uint8_t in_recovery; /* in fast recovery (dupacks/SACK) */
    uint8_t after_rto;   /* in RTO recovery: every unSACKed byte below recovery_point lost */
    uint8_t head_due;    /* the first unacknowledged segment must go next */
    uint8_t rescue_used;
    uint8_t had_loss; /* a recovery has happened: recovery_point is meaningful */
    uint8_t tlp_out;  /* a probe is unacknowledged: no other until it is */
    uint8_t tlp_rxt;  /* it was a retransmission */
};

/* One acceptable ACK (SEG.ACK within [snd_una, snd_nxt]), seen before snd_una advances. */
struct xlb_tcp_ack_event {
    uint32_t ack;     /* SEG.ACK */
    uint32_t snd_una; /* before this ACK */
    uint32_t snd_nxt;
    const struct xlb_tcp_sack_block *sack; /* its SACK blocks, as sent */
    unsigned n_sack;
    /* RFC 5681's duplicate ACK, as the core saw it: no data, no SYN/FIN, the window unchanged,
     * SEG.ACK == snd_una and data outstanding. */
    bool duplicate;
    uint32_t srtt_us; /* the estimator's SRTT after this ACK's sample, 0 if none */
    uint64_t now_us;
};

/* What the sender may send now, in the core's terms. */
struct xlb_tcp_send_view {
    uint32_t snd_una, snd_nxt;
    uint32_t snd_wnd; /* the peer's window (scaled), from snd_una */
    uint32_t unsent;  /* bytes queued and never sent */
    uint32_t mss;     /* the effective MSS for data */
};

enum xlb_tcp_send_what {
    XLB_TCP_SEND_NOTHING = 0,
    XLB_TCP_SEND_RETRANSMIT, /* [seq, seq + len): data sent before */
    XLB_TCP_SEND_NEW,        /* up to len new bytes from snd_nxt */
};

struct xlb_tcp_send_choice {
    enum xlb_tcp_send_what what;
    uint32_t seq, len;
};

void xlb_tcp_recovery_init(struct xlb_tcp_recovery *r, enum xlb_tcp_cc_kind cc, bool sack_ok,
                           uint32_t mss, uint32_t iss);

void xlb_tcp_recovery_on_ack(struct xlb_tcp_recovery *r, const struct xlb_tcp_ack_event *ev,
                             struct xlb_tcp_recovery_stats *st);

/* The retransmission timer expired with data outstanding (the core backs off the RTT estimator
 * itself; `backoff` is its count after that). */
void xlb_tcp_recovery_on_rto(struct xlb_tcp_recovery *r, uint32_t snd_una, uint32_t snd_nxt,
                             uint32_t backoff, uint64_t now_us, struct xlb_tcp_recovery_stats *st);

/* The next segment to send, or nothing (window, pipe or data exhausted). */
struct xlb_tcp_send_choice xlb_tcp_recovery_next(struct xlb_tcp_recovery *r,
                                                 const struct xlb_tcp_send_view *v,
                                                 struct xlb_tcp_recovery_stats *st);

/* Outside any recovery (no dupACK, no loss, nothing due), the new data the congestion and peer
 * windows let out from v->snd_nxt: what xlb_tcp_recovery_next would give, segment after
 * segment, for the core to send as segments of v->mss (the last may be shorter: the end of
 * the data) without asking for each. 0 otherwise: each segment must be asked for. */
uint32_t xlb_tcp_recovery_new_run(const struct xlb_tcp_recovery *r,
                                  const struct xlb_tcp_send_view *v);

/* The core sent [seq, seq + len) (`retransmission`: sent before). */
void xlb_tcp_recovery_sent(struct xlb_tcp_recovery *r, uint32_t seq, uint32_t len,
                           bool retransmission);

/* The congestion window the listing shows (cwnd plus any NewReno inflation). */
static inline uint32_t xlb_tcp_recovery_cwnd(const struct xlb_tcp_recovery *r)
{
    return r->cc.cwnd + r->inflation;
}

#endif
