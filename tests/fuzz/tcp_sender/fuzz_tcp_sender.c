/*
 * Fuzz target for the TCP sender's algorithms: the input is a script of events for one
 * connection -- ACKs with arbitrary SACK blocks, RTOs, and rounds of "send what you may" --
 * applied to a model of the core's sequence variables, and tail loss probes when one is due.
 * After each event what must hold:
 * the scoreboard is sorted, disjoint, within (snd_una, snd_nxt] and bounded; every
 * retransmission lies within [snd_una, snd_nxt); new data starts at snd_nxt, fits the queue
 * and the MSS; a probe is the next new segment or ends at snd_nxt; the pipe never exceeds twice
 * what is in flight; the window is at least a segment. Any of them broken aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xlb_tcp_recovery.h"
#include "xlb_tcp_seq.h"
#include "xlb_tcp_tlp.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

struct input {
    const uint8_t *p;
    size_t left;
};

static uint32_t take(struct input *in, unsigned bytes)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < bytes && in->left > 0; i++, in->left--)
        v = v << 8 | *in->p++;
    return v;
}

struct model {
    struct xlb_tcp_recovery r;
    struct xlb_tcp_recovery_stats st;
    struct xlb_tcp_rtt rtt;
    uint32_t una, nxt, unsent, mss;
    uint64_t now;
    uint32_t backoff;
};

static void check_board(const struct model *m)
{
    const struct xlb_tcp_sack_board *b = &m->r.board;
    CHECK(b->n <= XLB_TCP_SACK_BOARD_MAX);
    for (unsigned i = 0; i < b->n; i++) {
        CHECK(xlb_seq_lt(b->r[i].start, b->r[i].end));
        CHECK(xlb_seq_gt(b->r[i].start, m->una)); /* a board never claims snd_una */
        CHECK(xlb_seq_le(b->r[i].end, m->nxt));
        if (i > 0)
            CHECK(xlb_seq_lt(b->r[i - 1].end, b->r[i].start));
    }
    uint32_t pipe = xlb_tcp_sack_board_pipe(b, m->una, m->nxt, m->r.high_rxt, m->mss, m->una);
    CHECK(pipe <= 2 * (m->nxt - m->una));
    CHECK(m->r.cc.cwnd >= m->r.cc.mss);
    uint32_t rto = xlb_tcp_rtt_timeout_us(&m->rtt);
    CHECK(rto >= m->rtt.min_rto_us && rto <= m->rtt.max_rto_us);
}

/* An ACK somewhere in [una, nxt] with up to four blocks near the window. */
static void do_ack(struct model *m, struct input *in)
{
    uint32_t flight = m->nxt - m->una;
    uint32_t adv = flight ? take(in, 2) % (flight + 1) : 0;
    unsigned n = take(in, 1) % 5;
    struct xlb_tcp_sack_block b[4];
    for (unsigned i = 0; i < n; i++) {
        /* Edges anywhere within a bit more than the window, so that invalid ones occur too. */
        b[i].left = m->una - 2000 + take(in, 2) % (flight + 4000);
        b[i].right = b[i].left + take(in, 2) % 6000;
    }
    uint32_t ack = m->una + adv;
    struct xlb_tcp_ack_event ev = {.ack = ack,
                                   .snd_una = m->una,
                                   .snd_nxt = m->nxt,
                                   .sack = b,
                                   .n_sack = n,
                                   .duplicate = adv == 0 && flight > 0,
                                   .srtt_us = take(in, 1) * 100,
                                   .now_us = m->now};
    xlb_tcp_recovery_on_ack(&m->r, &ev, &m->st);
    m->una = ack;
    m->backoff = 0;
    if (adv > 0)
        xlb_tcp_rtt_sample(&m->rtt, take(in, 3));
}

static void do_send_round(struct model *m, struct input *in)
{
    unsigned rounds = take(in, 1) % 32;
    uint32_t wnd = take(in, 3);
    for (unsigned i = 0; i < rounds; i++) {
        struct xlb_tcp_send_view v = {.snd_una = m->una,
                                      .snd_nxt = m->nxt,
                                      .snd_wnd = wnd,
                                      .unsent = m->unsent,
                                      .mss = m->mss};
        struct xlb_tcp_send_choice c = xlb_tcp_recovery_next(&m->r, &v, &m->st);
        if (c.what == XLB_TCP_SEND_NOTHING)
            break;
        CHECK(c.len > 0 && c.len <= m->mss);
        if (c.what == XLB_TCP_SEND_RETRANSMIT) {
            CHECK(xlb_seq_ge(c.seq, m->una));
            CHECK(xlb_seq_le(c.seq + c.len, m->nxt));
        } else {
            CHECK(c.seq == m->nxt && c.len <= m->unsent);
            m->nxt += c.len;
            m->unsent -= c.len;
        }
        xlb_tcp_recovery_sent(&m->r, c.seq, c.len, c.what == XLB_TCP_SEND_RETRANSMIT);
    }
}

/* The probe timeout expired, if one was due (the core arms it only then). */
static void do_probe(struct model *m, struct input *in)
{
    uint32_t flight = m->nxt - m->una;
    if (!xlb_tcp_tlp_timeout_us(&m->r, m->rtt.srtt_us, flight, xlb_tcp_rtt_timeout_us(&m->rtt)))
        return;
    struct xlb_tcp_send_view v = {.snd_una = m->una,
                                  .snd_nxt = m->nxt,
                                  .snd_wnd = take(in, 3),
                                  .unsent = m->unsent,
                                  .mss = m->mss};
    struct xlb_tcp_send_choice c = xlb_tcp_tlp_probe(&m->r, &v);
    CHECK(c.what != XLB_TCP_SEND_NOTHING); /* due: something goes */
    CHECK(c.len > 0 && c.len <= m->mss);
    if (c.what == XLB_TCP_SEND_NEW) {
        CHECK(c.seq == m->nxt && c.len <= m->unsent);
        m->nxt += c.len;
        m->unsent -= c.len;
    } else {
        CHECK(xlb_seq_ge(c.seq, m->una) && c.seq + c.len == m->nxt);
        xlb_tcp_recovery_sent(&m->r, c.seq, c.len, true);
    }
    xlb_tcp_tlp_sent(&m->r, c.seq, c.len, c.what == XLB_TCP_SEND_RETRANSMIT, &m->st);
    CHECK(!xlb_tcp_tlp_timeout_us(&m->r, m->rtt.srtt_us, m->nxt - m->una, 1000000));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct input in = {data, size};
    struct model m = {0};
    uint32_t iss = take(&in, 4);
    m.mss = 536 + take(&in, 2) % 8500;
    bool sack = take(&in, 1) & 1;
    xlb_tcp_recovery_init(&m.r, take(&in, 1) & 1 ? XLB_TCP_CC_NEWRENO : XLB_TCP_CC_CUBIC, sack,
                          m.mss, iss);
    m.una = m.nxt = iss + 1;
    xlb_tcp_rtt_init(&m.rtt, 1000 * (1 + take(&in, 1)), 1000 * (1 + take(&in, 3)));
    m.unsent = 1u << 24;
    m.now = 1000000;
    for (unsigned steps = 0; in.left > 0 && steps < 4096; steps++) {
        m.now += take(&in, 1) * 1000;
        switch (take(&in, 1) % 4) {
        case 0:
            do_ack(&m, &in);
            break;
        case 1:
            do_send_round(&m, &in);
            break;
        case 2:
            do_probe(&m, &in);
            break;
        default:
            if (m.nxt != m.una) {
                m.backoff++;
                xlb_tcp_rtt_backoff(&m.rtt);
                xlb_tcp_recovery_on_rto(&m.r, m.una, m.nxt, m.backoff, m.now, &m.st);
            }
            break;
        }
        check_board(&m);
    }
    return 0;
}
