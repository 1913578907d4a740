/* The RFC 6675 scoreboard; see xlb_tcp_sack_board.h. Ranges are sorted by start, disjoint and
 * not adjacent (touching ranges merge), all within (snd_una, snd_nxt]. */
#include <string.h>

#include "xlb_tcp_sack_board.h"
#include "xlb_tcp_seq.h"

/* Forget everything at or below the cumulative ACK. */
static void drop_acked(struct xlb_tcp_sack_board *b, uint32_t ack)
{
    unsigned keep = 0;
    for (unsigned i = 0; i < b->n; i++) {
        struct xlb_tcp_sack_range r = b->r[i];
        if (xlb_seq_le(r.end, ack))
            continue;
        if (xlb_seq_lt(r.start, ack))
            r.start = ack;
        b->r[keep++] = r;
    }
    b->n = (uint8_t)keep;
}

/* Add [start, end), merging what it touches; returns the bytes that were not SACKed yet. */
static uint32_t insert(struct xlb_tcp_sack_board *b, uint32_t start, uint32_t end, uint8_t *dropped)
{
    uint32_t covered = 0; /* bytes of [start, end) already on the board */
    unsigned i = 0;
    while (i < b->n && xlb_seq_lt(b->r[i].end, start))
        i++;
    /* Ranges i..j-1 touch or overlap [start, end): fold them in. */
    unsigned j = i;
    uint32_t lo = start, hi = end;
    while (j < b->n && xlb_seq_le(b->r[j].start, end)) {
        uint32_t os = xlb_seq_max(b->r[j].start, start), oe = xlb_seq_min(b->r[j].end, end);
        if (xlb_seq_lt(os, oe))
            covered += oe - os;
        lo = xlb_seq_min(lo, b->r[j].start);
        hi = xlb_seq_max(hi, b->r[j].end);
        j++;
    }
    if (j > i) {
        b->r[i] = (struct xlb_tcp_sack_range){lo, hi};
        memmove(&b->r[i + 1], &b->r[j], (b->n - j) * sizeof(b->r[0]));
        b->n = (uint8_t)(b->n - (j - i - 1));
        return (end - start) - covered;
    }
    if (b->n == XLB_TCP_SACK_BOARD_MAX) {
        /* Full: forget the highest range (or this one, if it is the highest). The highest
         * matters least: it only counts towards the losses below it. */
        (*dropped)++;
        if (i == b->n)
            return 0;
        b->n--;
    }
    memmove(&b->r[i + 1], &b->r[i], (b->n - i) * sizeof(b->r[0]));
    b->r[i] = (struct xlb_tcp_sack_range){start, end};
    b->n++;
    return end - start;
}

/* RFC 2883: the first block is a D-SACK when it lies below the cumulative ACK or inside the
 * second block. */
static bool is_dsack(uint32_t ack, const struct xlb_tcp_sack_block *blocks, unsigned n)
{
    if (n == 0)
        return false;
    if (xlb_seq_le(blocks[0].right, ack))
        return true;
    return n > 1 && xlb_seq_ge(blocks[0].left, blocks[1].left) &&
           xlb_seq_le(blocks[0].right, blocks[1].right);
}

struct xlb_tcp_sack_update xlb_tcp_sack_board_update(struct xlb_tcp_sack_board *b, uint32_t ack,
                                                     uint32_t snd_nxt,
                                                     const struct xlb_tcp_sack_block *blocks,
                                                     unsigned n_blocks)
{
    struct xlb_tcp_sack_update u = {0};
    drop_acked(b, ack);
    unsigned first = 0;
    if (is_dsack(ack, blocks, n_blocks)) {
        u.dsack = 1;
        first = 1;
    }
    for (unsigned i = first; i < n_blocks; i++) {
        uint32_t l = blocks[i].left, r = blocks[i].right;
        /* Valid: non-empty, above the cumulative ACK, not beyond what was sent. */
        if (!xlb_seq_lt(l, r) || xlb_seq_le(r, ack) || xlb_seq_gt(r, snd_nxt) ||
            r - l > snd_nxt - ack) {
            u.invalid++;
            continue;
        }
        if (xlb_seq_lt(l, ack))
            l = ack;
        u.newly_sacked += insert(b, l, r, &u.dropped);
    }
    /* The byte at the cumulative ACK cannot be SACKed: a receiver holding it would have
     * acknowledged it. The peer discarded what it had reported (RFC 2018 section 8). */
    if (b->n > 0 && b->r[0].start == ack) {
        u.reneged = 1;
        b->n = 0;
    }
    return u;
}

bool xlb_tcp_sack_board_has(const struct xlb_tcp_sack_board *b, uint32_t seq)
{
    for (unsigned i = 0; i < b->n; i++)
        if (xlb_seq_in(seq, b->r[i].start, b->r[i].end))
            return true;
    return false;
}

uint32_t xlb_tcp_sack_board_high(const struct xlb_tcp_sack_board *b, uint32_t snd_una)
{
    return b->n ? b->r[b->n - 1].end : snd_una;
}

uint32_t xlb_tcp_sack_board_bytes(const struct xlb_tcp_sack_board *b)
{
    uint32_t total = 0;
    for (unsigned i = 0; i < b->n; i++)
        total += b->r[i].end - b->r[i].start;
    return total;
}

/* SACKed bytes and ranges above `seq` (ranges wholly above it; one containing it counts only
 * its part above). */
static void sacked_above(const struct xlb_tcp_sack_board *b, uint32_t seq, uint32_t *bytes,
                         unsigned *ranges)
{
    *bytes = 0;
    *ranges = 0;
    for (unsigned i = 0; i < b->n; i++) {
        if (xlb_seq_le(b->r[i].end, seq))
            continue;
        uint32_t from = xlb_seq_max(b->r[i].start, seq + 1);
        if (xlb_seq_lt(from, b->r[i].end)) {
            *bytes += b->r[i].end - from;
            (*ranges)++;
        }
    }
}

bool xlb_tcp_sack_board_is_lost(const struct xlb_tcp_sack_board *b, uint32_t seq, uint32_t mss)
{
    uint32_t bytes;
    unsigned ranges;
    sacked_above(b, seq, &bytes, &ranges);
    return ranges >= XLB_TCP_DUPTHRESH || bytes > (XLB_TCP_DUPTHRESH - 1) * mss;
}

bool xlb_tcp_sack_board_next_hole(const struct xlb_tcp_sack_board *b, uint32_t from, uint32_t limit,
                                  uint32_t *start, uint32_t *end)
{
    uint32_t s = from;
    for (unsigned i = 0; i < b->n && xlb_seq_lt(s, limit); i++) {
        if (xlb_seq_le(b->r[i].end, s))
            continue;
        if (xlb_seq_lt(s, b->r[i].start)) {
            *start = s;
            *end = xlb_seq_min(b->r[i].start, limit);
            return true;
        }
        s = b->r[i].end; /* s inside this range: skip past it */
    }
    if (xlb_seq_lt(s, limit)) {
        *start = s;
        *end = limit;
        return true;
    }
    return false;
}

uint32_t xlb_tcp_sack_board_pipe(const struct xlb_tcp_sack_board *b, uint32_t snd_una,
                                 uint32_t snd_nxt, uint32_t high_rxt, uint32_t mss,
                                 uint32_t lost_below)
{
    uint32_t pipe = 0, s = snd_una, hs, he;
    /* Within one hole every byte has the same SACKed bytes above it, so a hole is lost or not
     * as a whole; its retransmitted part counts again. Bounded: one pass per range. */
    for (unsigned guard = 0;
         guard <= XLB_TCP_SACK_BOARD_MAX && xlb_tcp_sack_board_next_hole(b, s, snd_nxt, &hs, &he);
         guard++) {
        uint32_t judged = xlb_seq_max(hs, lost_below); /* below it: lost by decree */
        if (xlb_seq_lt(judged, he) && !xlb_tcp_sack_board_is_lost(b, hs, mss))
            pipe += he - judged;
        if (xlb_seq_lt(hs, high_rxt))
            pipe += xlb_seq_min(he, high_rxt) - hs;
        s = he;
    }
    return pipe;
}
