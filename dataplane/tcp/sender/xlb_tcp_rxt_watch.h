/*
 * Lost retransmissions (RFC 8985 section 6's main case, found by sequence order): RFC 6675
 * retransmits a hole once per recovery, so when that copy is lost too only the RTO is left.
 * RACK finds such losses from per-segment send times; xlb keeps, for each retransmission of
 * the current recovery (up to XLB_TCP_RXT_WATCH of them), snd_nxt when it went: data at or
 * above that mark was first sent after it, so once more than (DupThresh - 1) * MSS of it is
 * SACKed while the retransmitted range is still missing, the retransmission was lost and is
 * due again. The DupThresh margin stands in for RACK's reordering window; sequence order is
 * send order for first transmissions, so without reordering there is no false alarm.
 *
 * Bounded: a fixed array per connection, every call walks it once.
 */
#ifndef XLB_TCP_RXT_WATCH_H
#define XLB_TCP_RXT_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "xlb_tcp_sack_board.h"

#define XLB_TCP_RXT_WATCH 8

struct xlb_tcp_rxt_watched {
    uint32_t seq, end; /* the retransmitted range, [seq, end) */
    uint32_t mark;     /* snd_nxt when it went */
    uint8_t due;       /* found lost: it goes again */
};

struct xlb_tcp_rxt_watch {
    struct xlb_tcp_rxt_watched w[XLB_TCP_RXT_WATCH];
    uint8_t n;
};

static inline void xlb_tcp_rxt_watch_clear(struct xlb_tcp_rxt_watch *x)
{
    x->n = 0;
}

/* [seq, seq + len) was retransmitted with snd_nxt at snd_nxt: watched from now on (a range
 * watched already that holds seq is watched again from this copy). When every slot is taken,
 * the oldest copy is forgotten: only the RTO then finds its loss. */
void xlb_tcp_rxt_watch_sent(struct xlb_tcp_rxt_watch *x, uint32_t seq, uint32_t len,
                            uint32_t snd_nxt);

/* After an ACK of `ack` updated board b: ranges delivered are forgotten, and those found lost
 * become due. Returns how many were found lost; *head is set when one of them holds `ack`
 * (the segment at snd_una). */
unsigned xlb_tcp_rxt_watch_on_ack(struct xlb_tcp_rxt_watch *x, const struct xlb_tcp_sack_board *b,
                                  uint32_t ack, uint32_t mss, bool *head);

/* The first hole of a due range at or above snd_una: [*start, *end). False if none. */
bool xlb_tcp_rxt_watch_next(const struct xlb_tcp_rxt_watch *x, const struct xlb_tcp_sack_board *b,
                            uint32_t snd_una, uint32_t *start, uint32_t *end);

/* The bytes of due ranges at or above snd_una: copies RFC 6675's SetPipe counts in flight that
 * are known lost. */
uint32_t xlb_tcp_rxt_watch_due_bytes(const struct xlb_tcp_rxt_watch *x, uint32_t snd_una);

#endif
