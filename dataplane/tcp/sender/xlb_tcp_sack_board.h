/*
 * The sender's SACK scoreboard (RFC 6675 section 3 and 4): which bytes above the cumulative
 * ACK the peer has reported holding, kept as at most XLB_TCP_SACK_BOARD_MAX sorted, disjoint
 * ranges. A peer cannot make it larger: a block that would need a range more is dropped, from
 * the top, and counted; forgetting a SACKed range only makes the sender retransmit more, it
 * never makes it believe data delivered that was not.
 */
#ifndef XLB_TCP_SACK_BOARD_H
#define XLB_TCP_SACK_BOARD_H

#include <stdbool.h>
#include <stdint.h>

#define XLB_TCP_SACK_BOARD_MAX 16
/* RFC 6675's DupThresh. */
#define XLB_TCP_DUPTHRESH 3u

struct xlb_tcp_sack_range {
    uint32_t start, end; /* [start, end) */
};

struct xlb_tcp_sack_board {
    struct xlb_tcp_sack_range r[XLB_TCP_SACK_BOARD_MAX];
    uint8_t n;
};

/* A block as it arrived in a SACK option (RFC 2018): left and right edges. */
struct xlb_tcp_sack_block {
    uint32_t left, right;
};

/* What one ACK's blocks did to the board. */
struct xlb_tcp_sack_update {
    uint32_t newly_sacked; /* bytes SACKed for the first time */
    uint8_t dsack;         /* the first block reported a duplicate (RFC 2883) */
    uint8_t invalid;       /* blocks outside (snd_una, snd_nxt] or empty, ignored */
    uint8_t dropped;       /* ranges forgotten because the board was full */
    uint8_t reneged;       /* the peer dropped data it had SACKed (RFC 2018 section 8) */
};

static inline void xlb_tcp_sack_board_clear(struct xlb_tcp_sack_board *b)
{
    b->n = 0;
}

/*
 * Apply one acceptable ACK: `ack` is its cumulative ACK (snd_una after it), `snd_nxt` the
 * highest byte sent plus one. Ranges at or below `ack` leave the board. When the board then
 * still claims the byte at `ack`, the peer has reneged: the board is cleared and the update
 * says so.
 */
struct xlb_tcp_sack_update xlb_tcp_sack_board_update(struct xlb_tcp_sack_board *b, uint32_t ack,
                                                     uint32_t snd_nxt,
                                                     const struct xlb_tcp_sack_block *blocks,
                                                     unsigned n_blocks);

/* Whether the byte `seq` is SACKed. */
bool xlb_tcp_sack_board_has(const struct xlb_tcp_sack_board *b, uint32_t seq);

/* HighACK's SACK counterpart: one past the highest SACKed byte, or `snd_una` if none. */
uint32_t xlb_tcp_sack_board_high(const struct xlb_tcp_sack_board *b, uint32_t snd_una);

/* RFC 6675's IsLost(seq): DupThresh ranges, or more than (DupThresh - 1) * mss bytes, SACKed
 * above it. */
bool xlb_tcp_sack_board_is_lost(const struct xlb_tcp_sack_board *b, uint32_t seq, uint32_t mss);

/* Total SACKed bytes. */
uint32_t xlb_tcp_sack_board_bytes(const struct xlb_tcp_sack_board *b);

/*
 * RFC 6675's SetPipe(): the bytes between `snd_una` and `snd_nxt` still thought in the
 * network. An unSACKed byte counts once unless it is lost, and once more if it was
 * retransmitted (below `high_rxt`). Every unSACKed byte below `lost_below` is lost whatever
 * the board says (after an RTO: the recovery point; otherwise pass `snd_una`).
 */
uint32_t xlb_tcp_sack_board_pipe(const struct xlb_tcp_sack_board *b, uint32_t snd_una,
                                 uint32_t snd_nxt, uint32_t high_rxt, uint32_t mss,
                                 uint32_t lost_below);

/*
 * The first unSACKed range at or above `from` and below `limit`: [*start, *end). False if
 * every byte there is SACKed.
 */
bool xlb_tcp_sack_board_next_hole(const struct xlb_tcp_sack_board *b, uint32_t from, uint32_t limit,
                                  uint32_t *start, uint32_t *end);

#endif
