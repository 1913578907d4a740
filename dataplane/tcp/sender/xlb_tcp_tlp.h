/*
 * Tail loss probe (RFC 8985 section 7). When the last segments of a flight are lost, no SACK
 * follows them and RFC 6675 has nothing to start a recovery with: the RTO (200 ms at least)
 * would. Instead, about two round trips after the last new data or ACK progress, the sender
 * sends one probe -- a new segment when the windows' data allow, else the last segment again --
 * so that the peer's ACK for it tells the sender, by its SACK, what was lost below it.
 *
 * RFC 8985 leaves that telling to RACK (section 6): everything sent before a segment that was
 * delivered is lost, after a reordering window. xlb's SACK recovery has no per-segment send
 * times yet; for the probe, which is the newest transmission by construction, the conclusion
 * is the same with no window: when the probe is SACKed, every byte below it the peer does not
 * hold is lost (xlb_tcp_recovery_on_ack starts the recovery with `lost_below` at the probe).
 *
 * The state lives in struct xlb_tcp_recovery (tlp_*); the core drives it:
 *
 *     after new data is sent or an ACK advances snd_una:  arm the PTO for
 *         xlb_tcp_tlp_timeout_us(r, srtt, flight, mss, rto) microseconds (0: do not arm)
 *     when the PTO expires:  c = xlb_tcp_tlp_probe(r, &view); send c (ignoring cwnd);
 *         xlb_tcp_tlp_sent(r, c.seq, c.len, retransmission); arm the RTO (not the PTO)
 */
#ifndef XLB_TCP_TLP_H
#define XLB_TCP_TLP_H

#include <stdbool.h>
#include <stdint.h>

#include "xlb_tcp_recovery.h"

/* RFC 8985's WCDelAckT: the peer may hold its ACK of a lone segment this long. */
#define XLB_TCP_TLP_MAX_ACK_DELAY_US 200000u
/* A floor under 2 * SRTT (Linux has one too): on a sub-millisecond path the probe would go
 * before the peer's ACK of the flight could, at the wheel's 1 ms granularity. */
#define XLB_TCP_TLP_MIN_US 10000u

/*
 * The probe timeout (RFC 8985 section 7.2), or 0 when no probe is due: no RTT sample yet, the
 * peer without SACK, nothing in flight, in a recovery (fast or after an RTO), or a probe still
 * unacknowledged. PTO = 2 * SRTT (at least XLB_TCP_TLP_MIN_US), plus the worst-case delayed ACK
 * when one segment is in flight, and never more than the RTO.
 */
uint32_t xlb_tcp_tlp_timeout_us(const struct xlb_tcp_recovery *r, uint32_t srtt_us,
                                uint32_t in_flight, uint32_t rto_us);

/*
 * What the probe sends (RFC 8985 section 7.3): one new segment if there is unsent data and the
 * peer's window takes it (the congestion window is not asked), else the last MSS of what is in
 * flight again. Nothing when no probe is due.
 */
struct xlb_tcp_send_choice xlb_tcp_tlp_probe(const struct xlb_tcp_recovery *r,
                                             const struct xlb_tcp_send_view *v);

/* The core sent the probe [seq, seq + len) (len counts a FIN). */
void xlb_tcp_tlp_sent(struct xlb_tcp_recovery *r, uint32_t seq, uint32_t len, bool retransmission,
                      struct xlb_tcp_recovery_stats *st);

#endif
