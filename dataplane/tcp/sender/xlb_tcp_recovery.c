/* Loss recovery: RFC 6675 with SACK, RFC 6582 without, RFC 6675 section 5.1 after an RTO.
 * See xlb_tcp_recovery.h for how the core drives it. */
#include "xlb_tcp_recovery.h"
#include "xlb_tcp_seq.h"

static uint32_t min3(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t m = a < b ? a : b;
    return m < c ? m : c;
}

void xlb_tcp_recovery_init(struct xlb_tcp_recovery *r, enum xlb_tcp_cc_kind cc, bool sack_ok,
                           uint32_t mss, uint32_t iss)
{
    *r = (struct xlb_tcp_recovery){.mss = mss ? mss : 536, .sack_ok = sack_ok};
    xlb_tcp_cc_init(&r->cc, cc, r->mss);
    /* No recovery may start before data above the ISS is acknowledged (RFC 6582 "recover"). */
    r->recovery_point = iss;
    r->high_rxt = iss;
    r->snd_nxt = iss;
}

static void count_board(const struct xlb_tcp_sack_update *u, struct xlb_tcp_recovery_stats *st)
{
    st->dsacks += u->dsack;
    st->sack_invalid += u->invalid;
    st->sack_dropped += u->dropped;
    st->sack_reneging += u->reneged;
}

/* RFC 6675 section 5 step (4) / RFC 6582 step 2: the loss is taken as a congestion signal and
 * the first unacknowledged segment goes again. */
static void enter_recovery(struct xlb_tcp_recovery *r, const struct xlb_tcp_ack_event *ev,
                           struct xlb_tcp_recovery_stats *st)
{
    r->recovery_point = ev->snd_nxt;
    r->high_rxt = ev->ack;
    r->lost_below = ev->ack;
    r->rescue_used = 0;
    r->in_recovery = 1;
    r->head_due = 1;
    xlb_tcp_cc_on_congestion(&r->cc, ev->snd_nxt - ev->ack, ev->now_us);
    st->fast_retransmits++;
    if (r->sack_ok) {
        st->sack_recoveries++;
    } else {
        st->newreno_recoveries++;
        r->inflation = XLB_TCP_DUPTHRESH * r->mss; /* the three segments that left */
    }
}

/* An ACK during fast recovery: the full ACK ends it, a partial one moves it on. */
static void ack_in_recovery(struct xlb_tcp_recovery *r, const struct xlb_tcp_ack_event *ev,
                            uint32_t advanced, struct xlb_tcp_recovery_stats *st)
{
    if (xlb_seq_ge(ev->ack, r->recovery_point)) {
        r->in_recovery = 0;
        r->inflation = 0;
        r->dupacks = 0;
        xlb_tcp_cc_on_recovery_exit(&r->cc);
        return;
    }
    if (xlb_seq_gt(ev->ack, r->high_rxt))
        r->high_rxt = ev->ack;
    if (r->sack_ok)
        return; /* the scoreboard and pipe say what goes next */
    if (advanced == 0) {
        r->inflation += r->mss; /* RFC 6582 step 4: a segment has left the network */
        return;
    }
    /* RFC 6582 step 5, the partial ACK: the next hole goes now; deflate by what was
     * acknowledged, and add one MSS back if that was a segment or more. */
    st->partial_acks++;
    r->head_due = 1;
    r->inflation = r->inflation > advanced ? r->inflation - advanced : 0;
    if (advanced >= r->mss)
        r->inflation += r->mss;
}

static bool is_duplicate(const struct xlb_tcp_recovery *r, const struct xlb_tcp_ack_event *ev,
                         const struct xlb_tcp_sack_update *u)
{
    if (!ev->duplicate)
        return false;
    /* RFC 6675: with SACK, a duplicate ACK is one that reports data not SACKed before (a
     * repeat of old news is not a new departure); a peer that sends no block is taken
     * at its word, as RFC 5681 would. */
    return !r->sack_ok || ev->n_sack == 0 || u->newly_sacked > 0;
}

/*
 * What this ACK says about the tail loss probe in flight (xlb_tcp_tlp.h). True when the probe
 * is SACKed with data below it missing: the probe is the newest segment sent, so everything
 * below it that the peer does not hold is lost (RACK's rule, RFC 8985 section 6.2, for the one
 * segment whose send time is known to be the latest).
 */
static bool probe_reveals_loss(struct xlb_tcp_recovery *r, const struct xlb_tcp_ack_event *ev,
                               const struct xlb_tcp_sack_update *u,
                               struct xlb_tcp_recovery_stats *st)
{
    if (!r->tlp_out)
        return false;
    if (xlb_seq_ge(ev->ack, r->tlp_end)) {
        /* Acknowledged. A retransmitted probe that no D-SACK calls a duplicate repaired the
         * loss of the last segment: that is a congestion signal too (RFC 8985 section 7.4). */
        r->tlp_out = 0;
        if (r->tlp_rxt && !u->dsack && !r->in_recovery && !r->after_rto) {
            xlb_tcp_cc_on_congestion(&r->cc, ev->snd_nxt - ev->snd_una, ev->now_us);
            xlb_tcp_cc_on_recovery_exit(&r->cc);
            st->tlp_recoveries++;
        }
        return false;
    }
    if (r->in_recovery || r->after_rto || !xlb_seq_lt(ev->ack, r->tlp_seq))
        return false;
    return xlb_tcp_sack_board_has(&r->board, r->tlp_seq);
}

/*
 * Lost retransmissions (xlb_tcp_rxt_watch.h): one found lost goes again in the same recovery,
 * with no second reduction; the segment at snd_una first of all, as it holds everything back.
 */
static void watch_retransmissions(struct xlb_tcp_recovery *r, const struct xlb_tcp_ack_event *ev,
                                  struct xlb_tcp_recovery_stats *st)
{
    if (!r->sack_ok || !(r->in_recovery || r->after_rto)) {
        xlb_tcp_rxt_watch_clear(&r->rxt);
        return;
    }
    bool head;
    st->lost_retransmits += xlb_tcp_rxt_watch_on_ack(&r->rxt, &r->board, ev->ack, r->mss, &head);
    if (head)
        r->head_due = 1;
}

void xlb_tcp_recovery_on_ack(struct xlb_tcp_recovery *r, const struct xlb_tcp_ack_event *ev,
                             struct xlb_tcp_recovery_stats *st)
{
    struct xlb_tcp_sack_update u = {0};
    if (r->sack_ok) {
        u = xlb_tcp_sack_board_update(&r->board, ev->ack, ev->snd_nxt, ev->sack, ev->n_sack);
        count_board(&u, st);
    }
    uint32_t advanced = ev->ack - ev->snd_una;
    if (probe_reveals_loss(r, ev, &u, st) && xlb_seq_ge(ev->ack, r->recovery_point)) {
        enter_recovery(r, ev, st);
        r->lost_below = r->tlp_seq;
        st->tlp_recoveries++;
        return;
    }
    if (xlb_seq_gt(ev->snd_nxt, r->snd_nxt))
        r->snd_nxt = ev->snd_nxt;
    watch_retransmissions(r, ev, st);
    if (r->after_rto) {
        if (xlb_seq_gt(ev->ack, r->high_rxt))
            r->high_rxt = ev->ack;
        if (xlb_seq_ge(ev->ack, r->recovery_point))
            r->after_rto = 0;
        xlb_tcp_cc_on_ack(&r->cc, advanced, ev->srtt_us, ev->now_us); /* slow start again */
        return;
    }
    if (r->in_recovery) {
        ack_in_recovery(r, ev, advanced, st);
        return;
    }
    if (advanced > 0) {
        r->dupacks = 0;
        xlb_tcp_cc_on_ack(&r->cc, advanced, ev->srtt_us, ev->now_us);
        return;
    }
    if (!is_duplicate(r, ev, &u))
        return;
    if (r->dupacks < UINT8_MAX)
        r->dupacks++;
    /* Step (C) of RFC 6675 section 5: the SACKed data may prove the loss before the third
     * duplicate. Neither rule restarts recovery for losses of data sent before the last one
     * began (RFC 6582's "recover"). recovery_point is one past the highest byte sent then, so
     * an ACK that reaches it covers "recover": the byte at it was sent later, a new loss. */
    bool lost = r->sack_ok && xlb_tcp_sack_board_is_lost(&r->board, ev->ack, r->mss);
    if ((r->dupacks >= XLB_TCP_DUPTHRESH || lost) && xlb_seq_ge(ev->ack, r->recovery_point))
        enter_recovery(r, ev, st);
}

void xlb_tcp_recovery_on_rto(struct xlb_tcp_recovery *r, uint32_t snd_una, uint32_t snd_nxt,
                             uint32_t backoff, uint64_t now_us, struct xlb_tcp_recovery_stats *st)
{
    if (backoff <= 1)
        st->rto_recoveries++;
    xlb_tcp_cc_on_rto(&r->cc, snd_nxt - snd_una, backoff, now_us);
    /* RFC 2018 section 8: after a timeout the SACKed bits go (the peer may have reneged);
     * RFC 6675 section 5.1: the recovery point is the highest data sent, everything below it
     * is lost and is sent again from snd_una, in slow start. */
    xlb_tcp_sack_board_clear(&r->board);
    r->after_rto = 1;
    r->in_recovery = 0;
    r->inflation = 0;
    r->dupacks = 0;
    r->recovery_point = snd_nxt;
    r->high_rxt = snd_una;
    r->head_due = 1;
    r->rescue_used = 0;
    r->tlp_out = 0;                   /* RFC 8985 section 7.4: the RTO ends the probe's episode */
    xlb_tcp_rxt_watch_clear(&r->rxt); /* everything goes again from snd_una */
    if (xlb_seq_gt(snd_nxt, r->snd_nxt))
        r->snd_nxt = snd_nxt;
}

/* New data within the peer's window: a whole segment, or all that is queued, or -- with nothing
 * in flight -- what the window still takes (sender-side SWS avoidance, RFC 9293 3.8.6.2.1). */
static struct xlb_tcp_send_choice new_data(const struct xlb_tcp_send_view *v, uint32_t cwnd_room)
{
    struct xlb_tcp_send_choice none = {XLB_TCP_SEND_NOTHING, 0, 0};
    uint32_t in_flight = v->snd_nxt - v->snd_una;
    uint32_t wnd_room = v->snd_wnd > in_flight ? v->snd_wnd - in_flight : 0;
    uint32_t want = v->unsent < v->mss ? v->unsent : v->mss;
    if (want == 0 || cwnd_room < want)
        return none;
    if (wnd_room < want && (wnd_room == 0 || in_flight > 0))
        return none; /* the core's persist timer probes a closed window */
    return (struct xlb_tcp_send_choice){XLB_TCP_SEND_NEW, v->snd_nxt, min3(want, wnd_room, want)};
}

static struct xlb_tcp_send_choice retransmit(uint32_t seq, uint32_t end, uint32_t mss)
{
    uint32_t len = end - seq;
    return (struct xlb_tcp_send_choice){XLB_TCP_SEND_RETRANSMIT, seq, len < mss ? len : mss};
}

/* RFC 6675 NextSeg(), rules 1 to 4, within what cwnd - pipe allows. */
static struct xlb_tcp_send_choice next_sack(struct xlb_tcp_recovery *r,
                                            const struct xlb_tcp_send_view *v, uint32_t lost_below,
                                            struct xlb_tcp_recovery_stats *st)
{
    struct xlb_tcp_send_choice none = {XLB_TCP_SEND_NOTHING, 0, 0};
    uint32_t pipe =
        xlb_tcp_sack_board_pipe(&r->board, v->snd_una, v->snd_nxt, r->high_rxt, v->mss, lost_below);
    uint32_t gone = xlb_tcp_rxt_watch_due_bytes(&r->rxt, v->snd_una); /* lost copies */
    pipe = pipe > gone ? pipe - gone : 0;
    if (r->cc.cwnd < pipe || r->cc.cwnd - pipe < v->mss)
        return none;
    uint32_t from = xlb_seq_max(r->high_rxt, v->snd_una), hs, he;
    /* Before rule 1: a retransmission found lost (xlb_tcp_rxt_watch.h). */
    if (xlb_tcp_rxt_watch_next(&r->rxt, &r->board, v->snd_una, &hs, &he))
        return retransmit(hs, he, v->mss);
    uint32_t high_sack = xlb_tcp_sack_board_high(&r->board, v->snd_una);
    uint32_t limit = xlb_seq_max(high_sack, lost_below);
    bool hole = xlb_tcp_sack_board_next_hole(&r->board, from, limit, &hs, &he);
    /* Rule 1: the first hole above HighRxt that is lost. */
    if (hole && (xlb_seq_lt(hs, lost_below) || xlb_tcp_sack_board_is_lost(&r->board, hs, v->mss)))
        return retransmit(hs, he, v->mss);
    /* Rule 2: new data. */
    struct xlb_tcp_send_choice fresh = new_data(v, r->cc.cwnd - pipe);
    if (fresh.what != XLB_TCP_SEND_NOTHING || r->after_rto)
        return fresh;
    /* Rule 3: a hole below the highest SACK, lost or not. */
    if (hole)
        return retransmit(hs, he, v->mss);
    /* Rule 4, once per recovery: the highest outstanding unSACKed segment (rescue). */
    if (!r->rescue_used && xlb_seq_lt(high_sack, v->snd_nxt) && xlb_seq_lt(from, v->snd_nxt)) {
        uint32_t start = xlb_seq_max(
            xlb_seq_max(high_sack, from),
            v->snd_nxt - (v->snd_nxt - v->snd_una < v->mss ? v->snd_nxt - v->snd_una : v->mss));
        r->rescue_used = 1;
        st->rescue_retransmits++;
        return retransmit(start, v->snd_nxt, v->mss);
    }
    return none;
}

struct xlb_tcp_send_choice xlb_tcp_recovery_next(struct xlb_tcp_recovery *r,
                                                 const struct xlb_tcp_send_view *v,
                                                 struct xlb_tcp_recovery_stats *st)
{
    struct xlb_tcp_send_choice none = {XLB_TCP_SEND_NOTHING, 0, 0};
    uint32_t in_flight = v->snd_nxt - v->snd_una;
    if (r->head_due) {
        r->head_due = 0; /* the core sends what it is given */
        if (in_flight > 0 && !(r->sack_ok && xlb_tcp_sack_board_has(&r->board, v->snd_una)))
            return retransmit(v->snd_una, v->snd_nxt, v->mss);
    }
    if (r->after_rto)
        return next_sack(r, v, r->recovery_point, st); /* with or without SACK: go-back-N */
    if (r->in_recovery && r->sack_ok)
        return next_sack(r, v, xlb_seq_max(v->snd_una, r->lost_below), st);
    uint32_t cwnd = r->cc.cwnd + r->inflation;
    if (!r->in_recovery && r->dupacks > 0 && r->dupacks < XLB_TCP_DUPTHRESH)
        cwnd += r->dupacks * v->mss; /* RFC 3042, limited transmit */
    if (cwnd <= in_flight)
        return none;
    struct xlb_tcp_send_choice c = new_data(v, cwnd - in_flight);
    if (c.what == XLB_TCP_SEND_NEW && r->dupacks > 0 && !r->in_recovery &&
        in_flight + c.len > r->cc.cwnd)
        st->limited_transmits++;
    return c;
}

uint32_t xlb_tcp_recovery_new_run(const struct xlb_tcp_recovery *r,
                                  const struct xlb_tcp_send_view *v)
{
    if (r->head_due || r->after_rto || r->in_recovery || r->dupacks > 0)
        return 0;
    uint32_t in_flight = v->snd_nxt - v->snd_una;
    uint32_t cwnd = r->cc.cwnd + r->inflation;
    uint32_t cwnd_room = cwnd > in_flight ? cwnd - in_flight : 0;
    uint32_t wnd_room = v->snd_wnd > in_flight ? v->snd_wnd - in_flight : 0;
    return cwnd_room < wnd_room ? cwnd_room : wnd_room;
}

void xlb_tcp_recovery_sent(struct xlb_tcp_recovery *r, uint32_t seq, uint32_t len,
                           bool retransmission)
{
    if (!retransmission) {
        if (xlb_seq_gt(seq + len, r->snd_nxt))
            r->snd_nxt = seq + len;
        return;
    }
    if (r->sack_ok && (r->in_recovery || r->after_rto))
        xlb_tcp_rxt_watch_sent(&r->rxt, seq, len, r->snd_nxt);
    if (xlb_seq_gt(seq + len, r->high_rxt))
        r->high_rxt = seq + len;
}
