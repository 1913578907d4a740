/*
 * Segment input (RFC 9293 section 3.10.7), with RFC 5961's RST, SYN and ACK checks, RFC 7323's
 * PAWS and timestamp echo, and delivery in order to the receive queue (zero-copy: the mbuf is
 * kept, its headers stripped) or to the reassembly queue. Events are delivered at the end, once
 * the connection's state is final for this segment.
 */
#include <netinet/in.h>
#include <sys/socket.h>

#include <rte_tcp.h>

#include "xlb_tcp_conn.h"
#include "xlb_tcp_seq.h"

#define PAWS_IDLE_MS (24ull * 24 * 3600 * 1000) /* RFC 7323 section 5.5: ts_recent invalid */
#define COALESCE_MAX 256 /* small in-order segments are copied into the queue's tail mbuf */

enum { EV_CONNECTED = 1, EV_READABLE = 2, EV_WRITABLE = 4 };

static void deliver(struct xlb_tcp_conn *c, unsigned ev)
{
    const struct xlb_tcp_callbacks *cb = c->cb;
    if (!cb)
        return;
    if ((ev & EV_CONNECTED) && cb->on_connected && c->state != XLB_TCP_CLOSED)
        cb->on_connected(c, c->user);
    if ((ev & EV_READABLE) && cb->on_readable && c->state != XLB_TCP_CLOSED)
        cb->on_readable(c, c->user);
    if ((ev & EV_WRITABLE) && cb->on_writable && c->state != XLB_TCP_CLOSED)
        cb->on_writable(c, c->user);
}

void xlb_tcp_event_readable(struct xlb_tcp_conn *c)
{
    deliver(c, EV_READABLE);
}

/* The options a SYN or SYN-ACK settles: MSS, window scale, SACK, timestamps. */
static void take_syn_options(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c,
                             const struct xlb_tcp_seg *s)
{
    uint16_t limit = c->tuple.family == AF_INET ? ep->cfg.mss_limit4 : ep->cfg.mss_limit6;
    uint16_t dflt = c->tuple.family == AF_INET ? 536 : 1220; /* RFC 9293 3.7.1, RFC 8200 */
    c->peer_mss = s->opts.mss ? s->opts.mss : dflt;
    if (s->opts.has_wscale) { /* we offer it in every SYN */
        c->flags |= XLB_TCPF_WSCALE;
        c->snd_wscale = s->opts.wscale;
        c->rcv_wscale = ep->cfg.wscale;
    } else {
        c->snd_wscale = 0;
        c->rcv_wscale = 0;
    }
    if (s->opts.sack_ok && ep->cfg.sack)
        c->flags |= XLB_TCPF_SACK;
    if (s->opts.has_ts && ep->cfg.timestamps) {
        c->flags |= XLB_TCPF_TS;
        c->ts_recent = s->opts.tsval;
        c->ts_recent_ms = ep->now_ms;
    }
    uint32_t mss = RTE_MIN(c->peer_mss, limit);
    if (c->flags & XLB_TCPF_TS)
        mss -= 12;
    c->mss = (uint16_t)RTE_MAX(mss, 64u);
}

/* SYN-SENT (RFC 9293 section 3.10.7.3). */
static int input_syn_sent(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c,
                          const struct xlb_tcp_seg *s, unsigned *ev)
{
    bool has_ack = s->flags & RTE_TCP_ACK_FLAG;
    if (has_ack && (xlb_seq_le(s->ack, c->iss) || xlb_seq_gt(s->ack, c->snd_max))) {
        if (!(s->flags & RTE_TCP_RST_FLAG)) {
            ep->ctr.rst_out_bad_ack++;
            xlb_tcp_send_rst(ep, c, s->ack, 0, false);
        }
        return -1;
    }
    if (s->flags & RTE_TCP_RST_FLAG) {
        if (!has_ack)
            return -1;
        ep->ctr.rst_in_syn_sent++;
        xlb_tcp_close(ep, c, XLB_TCP_CLOSE_REFUSED);
        return 0;
    }
    if (!(s->flags & RTE_TCP_SYN_FLAG))
        return -1;
    uint16_t our_mss = c->mss;
    take_syn_options(ep, c, s);
    c->irs = s->seq;
    c->rcv_nxt = s->seq + 1;
    c->rcv_adv = c->rcv_nxt;
    if (has_ack) {
        c->snd_una = s->ack;
        c->snd_wnd = s->win; /* a SYN's window is never scaled */
        c->max_snd_wnd = c->snd_wnd;
        c->snd_wl1 = s->seq;
        c->snd_wl2 = s->ack;
        c->state = XLB_TCP_ESTABLISHED;
        c->rto_at = 0;
        /* The handshake's RTT, unless the SYN went more than once (Karn). */
        if (c->syn_tries == 0)
            xlb_tcp_rtt_sample(&c->rtt, (uint32_t)(ep->now_ms - c->rtt_sent_ms) * 1000u);
        xlb_tcp_sender_start(ep, c);
        ep->ctr.established++;
        c->flags |= XLB_TCPF_ACK_NOW;
        *ev |= EV_CONNECTED;
        return 0;
    }
    /* Simultaneous open: our SYN crossed theirs; answer with a SYN-ACK of our ISN. */
    c->state = XLB_TCP_SYN_RECEIVED;
    c->snd_wnd = s->win;
    c->snd_wl1 = s->seq;
    (void)our_mss;
    xlb_tcp_send_syn(ep, c, true);
    return 0;
}

static bool acceptable(const struct xlb_tcp_conn *c, const struct xlb_tcp_seg *s)
{
    uint32_t wnd = xlb_seq_gt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
    uint32_t space = xlb_tcp_seg_space(s);
    if (space == 0)
        return wnd == 0 ? s->seq == c->rcv_nxt : xlb_seq_in(s->seq, c->rcv_nxt, c->rcv_nxt + wnd);
    if (wnd == 0)
        return false;
    return xlb_seq_in(s->seq, c->rcv_nxt, c->rcv_nxt + wnd) ||
           xlb_seq_in(s->seq + space - 1, c->rcv_nxt, c->rcv_nxt + wnd);
}

/* The ACK field (RFC 9293 section 3.10.7.4, fifth check, with RFC 5961 section 5). Returns -1
 * when the segment must be dropped. */
static int process_ack(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c,
                       const struct xlb_tcp_seg *s, unsigned *ev)
{
    if (c->state == XLB_TCP_SYN_RECEIVED) {
        if (xlb_seq_le(s->ack, c->snd_una) || xlb_seq_gt(s->ack, c->snd_max)) {
            ep->ctr.rst_out_bad_ack++;
            xlb_tcp_send_rst(ep, c, s->ack, 0, false);
            return -1;
        }
        c->state = XLB_TCP_ESTABLISHED;
        c->snd_una = s->ack;
        c->rto_at = 0;
        xlb_tcp_sender_start(ep, c);
        ep->ctr.established++;
        *ev |= EV_CONNECTED;
    }
    if (xlb_seq_gt(s->ack, c->snd_max)) {
        ep->ctr.ack_too_new++;
        c->flags |= XLB_TCPF_ACK_NOW;
        return -1;
    }
    if (xlb_seq_lt(s->ack, c->snd_una - c->max_snd_wnd)) {
        xlb_tcp_challenge_ack(ep, c);
        return -1;
    }
    uint32_t win = (uint32_t)s->win << c->snd_wscale;
    bool advances = xlb_seq_gt(s->ack, c->snd_una);
    /* RTT: from the echoed timestamp, or the timed segment (Karn: never a retransmitted one,
     * which rtt_timing excludes). */
    if (advances && (c->flags & XLB_TCPF_TS) && s->opts.has_ts && s->opts.tsecr)
        xlb_tcp_rtt_sample(&c->rtt, (xlb_tcp_ts_now(ep) - s->opts.tsecr) * 1000u);
    else if (advances && c->rtt_timing && xlb_seq_gt(s->ack, c->rtt_seq)) {
        xlb_tcp_rtt_sample(&c->rtt, (uint32_t)(ep->now_ms - c->rtt_sent_ms) * 1000u);
        c->rtt_timing = false;
    }
    if (xlb_seq_ge(s->ack, c->snd_una) && c->snd_una != c->snd_max) {
        struct xlb_tcp_sack_block blocks[XLB_TCP_SACK_MAX];
        for (unsigned i = 0; i < s->opts.n_sack; i++)
            blocks[i] = (struct xlb_tcp_sack_block){s->opts.sack_left[i], s->opts.sack_right[i]};
        bool duplicate = !advances && s->len == 0 && win == c->snd_wnd &&
                         !(s->flags & (RTE_TCP_SYN_FLAG | RTE_TCP_FIN_FLAG));
        if (duplicate)
            ep->ctr.dup_acks_in++;
        struct xlb_tcp_ack_event ack_ev = {
            .ack = s->ack,
            .snd_una = c->snd_una,
            .snd_nxt = c->snd_max,
            .sack = blocks,
            .n_sack = (c->flags & XLB_TCPF_SACK) ? s->opts.n_sack : 0,
            .duplicate = duplicate,
            .srtt_us = c->rtt.srtt_us,
            .now_us = ep->now_ms * 1000,
        };
        xlb_tcp_recovery_on_ack(&c->rec, &ack_ev, &ep->ctr.recovery);
    }
    if (advances) {
        uint32_t acked = s->ack - c->snd_una;
        bool fin_acked = (c->flags & XLB_TCPF_FIN_SENT) && xlb_seq_gt(s->ack, c->fin_seq);
        uint32_t data = RTE_MIN(acked - (fin_acked ? 1u : 0u), c->sndq.bytes);
        xlb_tcp_sndq_drop(&c->sndq, data, &c->snd_head_off);
        c->snd_una = s->ack;
        if (xlb_seq_lt(c->snd_nxt, c->snd_una))
            c->snd_nxt = c->snd_una;
        c->rto_tries = 0;
        c->rto_at = c->snd_una == c->snd_max ? 0 : ep->now_ms + xlb_tcp_rto_ms(c);
        xlb_tcp_tlp_arm(ep, c);
        /* A write was refused: tell the writer that ACKs freed room (it retries). */
        if ((c->flags & XLB_TCPF_WANT_WRITE) && data) {
            c->flags &= (uint16_t)~XLB_TCPF_WANT_WRITE;
            *ev |= EV_WRITABLE;
        }
        if (fin_acked) {
            if (c->state == XLB_TCP_FIN_WAIT_1)
                c->state = XLB_TCP_FIN_WAIT_2;
            else if (c->state == XLB_TCP_CLOSING)
                c->state = XLB_TCP_TIME_WAIT;
            else if (c->state == XLB_TCP_LAST_ACK)
                c->state = XLB_TCP_CLOSED;
        }
    }
    /* Window update (RFC 9293 section 3.10.7.4): only from a segment newer than the last. */
    if (xlb_seq_lt(c->snd_wl1, s->seq) ||
        (c->snd_wl1 == s->seq && xlb_seq_le(c->snd_wl2, s->ack))) {
        c->snd_wnd = win;
        c->snd_wl1 = s->seq;
        c->snd_wl2 = s->ack;
        if (win > c->max_snd_wnd)
            c->max_snd_wnd = win;
        if (win) {
            c->persist_at = 0;
            c->persist_ms = 0;
        }
    }
    return 0;
}

/* The FIN in order: what each state becomes (RFC 9293 section 3.10.7.4, eighth check). */
static void fin_received(struct xlb_tcp_conn *c)
{
    c->rcv_nxt++;
    c->flags |= XLB_TCPF_FIN_RCVD | XLB_TCPF_ACK_NOW;
    switch (c->state) {
    case XLB_TCP_ESTABLISHED:
        c->state = XLB_TCP_CLOSE_WAIT;
        break;
    case XLB_TCP_FIN_WAIT_1:
        c->state = XLB_TCP_CLOSING; /* simultaneous close: our FIN is not acknowledged yet */
        break;
    case XLB_TCP_FIN_WAIT_2:
        c->state = XLB_TCP_TIME_WAIT;
        break;
    default:
        break;
    }
}

/* In-order payload (m's data starts at seq == rcv_nxt): to the receive queue. */
static bool queue_in_order(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, struct rte_mbuf *m)
{
    struct rte_mbuf *tail = c->rcvq.tail;
    uint16_t len = m->data_len;
    if (tail && len <= COALESCE_MAX && rte_pktmbuf_tailroom(tail) >= len &&
        rte_mbuf_refcnt_read(tail) == 1 && RTE_MBUF_DIRECT(tail)) {
        rte_memcpy(rte_pktmbuf_mtod_offset(tail, uint8_t *, tail->data_len),
                   rte_pktmbuf_mtod(m, const uint8_t *), len);
        tail->data_len = (uint16_t)(tail->data_len + len);
        tail->pkt_len = tail->data_len;
        c->rcvq.bytes += len;
        rte_pktmbuf_free(m);
        return true;
    }
    if (c->rcvq.segs >= ep->cfg.rcv_max_segs) {
        ep->ctr.rcv_queue_full++;
        rte_pktmbuf_free(m);
        return false;
    }
    if (ep->cfg.held_max_segs && ep->held_segs >= ep->cfg.held_max_segs) {
        ep->ctr.rcv_worker_full++;
        rte_pktmbuf_free(m);
        return false;
    }
    xlb_tcp_mq_push(&c->rcvq, m);
    return true;
}

static bool accepts_data(const struct xlb_tcp_conn *c)
{
    return c->state == XLB_TCP_ESTABLISHED || c->state == XLB_TCP_FIN_WAIT_1 ||
           c->state == XLB_TCP_FIN_WAIT_2;
}

/* Data and FIN (sixth to eighth checks); consumes m. */
static void process_data(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c,
                         const struct xlb_tcp_seg *s, struct rte_mbuf *m, unsigned *ev)
{
    uint32_t seq = s->seq, len = s->len;
    bool fin = s->flags & RTE_TCP_FIN_FLAG;
    if ((len == 0 && !fin) || !accepts_data(c)) {
        if (fin && c->state == XLB_TCP_TIME_WAIT) /* our last ACK was lost: again */
            c->flags |= XLB_TCPF_ACK_NOW;
        rte_pktmbuf_free(m);
        return;
    }
    rte_pktmbuf_adj(m, (uint16_t)s->hdr_len);
    /* Trim what we already have from the front and what is beyond the window from the back. */
    if (xlb_seq_lt(seq, c->rcv_nxt)) {
        uint32_t cut = RTE_MIN(c->rcv_nxt - seq, len);
        if (cut) { /* bytes we had: report them (D-SACK, RFC 2883 section 4) */
            c->dsack_left = seq;
            c->dsack_right = seq + cut;
        }
        rte_pktmbuf_adj(m, (uint16_t)cut);
        seq += cut;
        len -= cut;
        c->flags |= XLB_TCPF_ACK_NOW;      /* a retransmission: the peer may have lost our ACK */
        if (xlb_seq_lt(seq, c->rcv_nxt)) { /* a FIN we already took */
            rte_pktmbuf_free(m);
            return;
        }
    }
    if (xlb_seq_gt(seq + len, c->rcv_adv)) {
        uint32_t keep = xlb_seq_gt(c->rcv_adv, seq) ? c->rcv_adv - seq : 0;
        rte_pktmbuf_trim(m, (uint16_t)(len - keep));
        len = keep;
        fin = false;
        c->flags |= XLB_TCPF_ACK_NOW;
    }
    if (seq != c->rcv_nxt) {
        xlb_tcp_reass_insert(ep, c, seq, len, fin, m);
        c->flags |= XLB_TCPF_ACK_NOW; /* a gap: duplicate ACK with SACK, at once */
        return;
    }
    bool filled_gap = c->n_ooo != 0;
    if (len) {
        if (!queue_in_order(ep, c, m)) {
            c->flags |= XLB_TCPF_ACK_NOW;
            return;
        }
        c->rcv_nxt += len;
        ep->ctr.bytes_in += len;
        *ev |= EV_READABLE;
    } else {
        rte_pktmbuf_free(m);
    }
    if (filled_gap && !fin)
        fin = xlb_tcp_reass_pull(ep, c);
    if (fin) {
        fin_received(c);
        *ev |= EV_READABLE;
    } else if (filled_gap) {
        c->flags |= XLB_TCPF_ACK_NOW;
    } else if (++c->unacked_segs >= 2) {
        c->flags |= XLB_TCPF_ACK_NOW; /* every second segment */
    } else if (!c->delack_at) {
        c->delack_at = ep->now_ms + ep->cfg.delack_ms;
        ep->ctr.delayed_acks++;
    }
}

/* RST on a synchronized connection (RFC 5961 section 3). */
static void process_rst(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c,
                        const struct xlb_tcp_seg *s)
{
    uint32_t wnd = xlb_seq_gt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
    if (s->seq == c->rcv_nxt) {
        ep->ctr.rst_in_exact++;
        xlb_tcp_close(ep, c, XLB_TCP_CLOSE_RESET);
    } else if (xlb_seq_in(s->seq, c->rcv_nxt, c->rcv_nxt + wnd)) {
        ep->ctr.rst_in_challenged++;
        xlb_tcp_challenge_ack(ep, c);
        xlb_tcp_timers_update(ep, c);
    } else {
        ep->ctr.rst_in_out_of_window++;
    }
}

static int input_synchronized(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c,
                              const struct xlb_tcp_seg *s, struct rte_mbuf *m, unsigned *ev)
{
    bool rst = s->flags & RTE_TCP_RST_FLAG;
    /* PAWS (RFC 7323 section 5.3): a timestamp older than the last one in order is a segment
     * from an earlier wrap of the sequence space. */
    if ((c->flags & XLB_TCPF_TS) && s->opts.has_ts && !rst &&
        xlb_seq_lt(s->opts.tsval, c->ts_recent) && ep->now_ms - c->ts_recent_ms < PAWS_IDLE_MS) {
        ep->ctr.paws_drops++;
        c->flags |= XLB_TCPF_ACK_NOW;
        goto drop;
    }
    if (rst) {
        process_rst(ep, c, s);
        goto drop_quiet;
    }
    if (!acceptable(c, s)) {
        /* Data we already have (a retransmission whose ACK was lost): D-SACK it. */
        if (s->len && xlb_seq_le(s->seq + s->len, c->rcv_nxt) &&
            c->rcv_nxt - s->seq <= XLB_TCP_MAX_WINDOW) {
            c->dsack_left = s->seq;
            c->dsack_right = s->seq + s->len;
        }
        ep->ctr.out_of_window++;
        c->flags |= XLB_TCPF_ACK_NOW;
        goto drop;
    }
    if (s->flags & RTE_TCP_SYN_FLAG) { /* RFC 5961 section 4 */
        ep->ctr.syn_in_sync++;
        xlb_tcp_challenge_ack(ep, c);
        goto drop;
    }
    if (!(s->flags & RTE_TCP_ACK_FLAG)) {
        ep->ctr.bad_no_ack++;
        goto drop_quiet;
    }
    /* RFC 7323 section 4.3: keep the timestamp of the segment our next ACK covers. */
    if ((c->flags & XLB_TCPF_TS) && s->opts.has_ts && xlb_seq_le(s->seq, c->ts_last_ack_sent) &&
        xlb_seq_ge(s->opts.tsval, c->ts_recent)) {
        c->ts_recent = s->opts.tsval;
        c->ts_recent_ms = ep->now_ms;
    }
    if (process_ack(ep, c, s, ev) != 0)
        goto drop;
    if (c->state == XLB_TCP_CLOSED) {
        rte_pktmbuf_free(m);
        xlb_tcp_close(ep, c, XLB_TCP_CLOSE_NORMAL);
        return 0;
    }
    process_data(ep, c, s, m, ev);
    return 0;
drop:
    rte_pktmbuf_free(m);
    xlb_tcp_output(ep, c);
    return -1;
drop_quiet:
    rte_pktmbuf_free(m);
    return -1;
}

int xlb_tcp_receive(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, struct rte_mbuf *m,
                    uint64_t now_ms)
{
    ep->now_ms = now_ms;
    struct xlb_tcp_seg s;
    if (xlb_tcp_seg_parse(ep, &m, &s) != 0) {
        rte_pktmbuf_free(m);
        return -1;
    }
    if (c->state == XLB_TCP_CLOSED) {
        rte_pktmbuf_free(m);
        return -1;
    }
    c->last_rx_ms = now_ms;
    c->ka_probes = 0;
    unsigned ev = 0;
    int rc;
    enum xlb_tcp_state before = (enum xlb_tcp_state)c->state;
    if (c->state == XLB_TCP_SYN_SENT) {
        rc = input_syn_sent(ep, c, &s, &ev);
        rte_pktmbuf_free(m);
        if (c->state == XLB_TCP_CLOSED)
            return rc;
    } else {
        rc = input_synchronized(ep, c, &s, m, &ev);
        if (c->state == XLB_TCP_CLOSED)
            return rc;
    }
    xlb_tcp_output(ep, c);
    deliver(c, ev);
    if (c->state == XLB_TCP_TIME_WAIT && before != XLB_TCP_TIME_WAIT)
        xlb_tcp_enter_timewait(ep, c);
    else if (c->state == XLB_TCP_TIME_WAIT)
        xlb_tcp_timers_update(ep, c);
    return rc;
}
