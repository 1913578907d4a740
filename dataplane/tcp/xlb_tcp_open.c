/*
 * Opening connections: passively from a SYN cookie (the SYN costs no state, the ACK that
 * returns the cookie makes an ESTABLISHED connection with the options the cookie kept), and
 * actively with a SYN offering MSS, window scale, SACK and timestamps.
 */
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_tcp.h>

#include "xlb_tcp_conn.h"
#include "xlb_tcp_options.h"
#include "xlb_tcp_seq.h"

static uint16_t mss_limit(const struct xlb_tcp_endpoint *ep, uint8_t family)
{
    return family == AF_INET ? ep->cfg.mss_limit4 : ep->cfg.mss_limit6;
}

static void cookie_tuple(const struct xlb_tcp_seg *s, struct xlb_syn_cookie_tuple *t)
{
    memset(t, 0, sizeof(*t));
    t->family = s->tuple.family;
    memcpy(t->client, s->tuple.remote, 16);
    memcpy(t->vip, s->tuple.local, 16);
    t->client_port = s->tuple.remote_port;
    t->vip_port = s->tuple.local_port;
}

int xlb_tcp_answer_syn(struct xlb_tcp_endpoint *ep, struct rte_mbuf *m,
                       const struct xlb_syn_cookie_keys *keys, uint64_t now_ms)
{
    ep->now_ms = now_ms;
    struct xlb_tcp_seg s;
    int rc = xlb_tcp_seg_parse(ep, &m, &s);
    rte_pktmbuf_free(m);
    if (rc != 0)
        return -1;
    if ((s.flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG)) != RTE_TCP_SYN_FLAG) {
        ep->ctr.bad_header++;
        return -1;
    }
    struct xlb_syn_cookie_tuple t;
    cookie_tuple(&s, &t);
    struct xlb_syn_cookie_opts in = {
        .mss = s.opts.mss,
        .wscale = s.opts.wscale,
        .has_wscale = s.opts.has_wscale,
        .sack_ok = s.opts.sack_ok && ep->cfg.sack,
        .has_ts = s.opts.has_ts && ep->cfg.timestamps,
    };
    struct xlb_syn_cookie_opts kept;
    uint32_t tsval = 0;
    uint32_t iss = xlb_syn_cookie_make(keys, &t, s.seq, &in, now_ms, &tsval, &kept);
    /* Window scale and SACK survive only in the timestamp: offer them only then. */
    struct xlb_tcp_opts o = {
        .mss = mss_limit(ep, s.tuple.family),
        .has_wscale = kept.has_wscale,
        .wscale = ep->cfg.wscale,
        .sack_ok = kept.sack_ok,
        .has_ts = kept.has_ts,
        .tsval = tsval,
        .tsecr = s.opts.tsval,
    };
    uint8_t opts[XLB_TCP_OPTS_MAX_LEN];
    uint32_t opt_len = xlb_tcp_options_write_syn(opts, &o);
    xlb_tcp_send_raw(ep, &s.tuple, iss, s.seq + 1, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG,
                     (uint16_t)RTE_MIN(ep->cfg.rcv_buf, 65535u), opts, opt_len);
    return 0;
}

struct xlb_tcp_conn *xlb_tcp_accept(struct xlb_tcp_endpoint *ep, struct rte_mbuf *m,
                                    const struct xlb_syn_cookie_keys *keys, uint64_t now_ms,
                                    const struct xlb_tcp_callbacks *cb, void *user)
{
    ep->now_ms = now_ms;
    struct xlb_tcp_seg s;
    if (xlb_tcp_seg_parse(ep, &m, &s) != 0) {
        rte_pktmbuf_free(m);
        return NULL;
    }
    struct xlb_syn_cookie_tuple t;
    cookie_tuple(&s, &t);
    struct xlb_syn_cookie_opts kept;
    uint32_t client_isn;
    /* Not necessarily the handshake's ACK: that and the first data may have been lost, and
     * this segment then waits out of order for the client to send them again. */
    if ((s.flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG)) != RTE_TCP_ACK_FLAG ||
        xlb_syn_cookie_check_flight(keys, &t, s.seq, s.len, s.ack, s.opts.has_ts, s.opts.tsecr,
                                    now_ms, &client_isn, &kept) != 0) {
        ep->ctr.bad_cookie++;
        rte_pktmbuf_free(m);
        return NULL;
    }
    struct xlb_tcp_conn *c = xlb_tcp_conn_alloc(ep);
    if (!c) {
        rte_pktmbuf_free(m);
        return NULL;
    }
    c->tuple = s.tuple;
    c->iss = s.ack - 1;
    c->snd_una = c->snd_nxt = c->snd_max = s.ack;
    c->irs = client_isn;
    c->rcv_nxt = client_isn + 1;
    c->rcv_adv = c->rcv_nxt + RTE_MIN(ep->cfg.rcv_buf, 65535u);
    c->ts_last_ack_sent = c->rcv_nxt;
    if (kept.has_wscale) {
        c->flags |= XLB_TCPF_WSCALE;
        c->snd_wscale = kept.wscale;
        c->rcv_wscale = ep->cfg.wscale;
    }
    if (kept.sack_ok)
        c->flags |= XLB_TCPF_SACK;
    if (kept.has_ts) {
        c->flags |= XLB_TCPF_TS;
        c->ts_recent = s.opts.tsval;
        c->ts_recent_ms = now_ms;
    }
    c->peer_mss = kept.mss;
    uint32_t mss = RTE_MIN(kept.mss, mss_limit(ep, s.tuple.family));
    c->mss = (uint16_t)(mss - ((c->flags & XLB_TCPF_TS) ? 12u : 0u));
    c->snd_wnd = (uint32_t)s.win << c->snd_wscale;
    c->max_snd_wnd = c->snd_wnd;
    c->snd_wl1 = s.seq;
    c->snd_wl2 = s.ack;
    c->state = XLB_TCP_ESTABLISHED;
    c->last_rx_ms = now_ms;
    xlb_tcp_rtt_init(&c->rtt, ep->cfg.rto_min_ms * 1000, ep->cfg.rto_max_ms * 1000);
    xlb_tcp_sender_start(ep, c);
    c->cb = cb;
    c->user = user;
    ep->ctr.passive_opens++;
    ep->ctr.established++;
    xlb_tcp_timers_update(ep, c);
    if (cb && cb->on_connected)
        cb->on_connected(c, user);
    if (c->state != XLB_TCP_CLOSED && (s.len || (s.flags & RTE_TCP_FIN_FLAG))) {
        ep->ctr.segs_in--; /* counted again by input */
        xlb_tcp_receive(ep, c, m, now_ms);
    } else {
        rte_pktmbuf_free(m);
    }
    /* An application that aborted from on_connected has no connection. */
    return c->state == XLB_TCP_CLOSED ? NULL : c;
}

struct xlb_tcp_conn *xlb_tcp_connect(struct xlb_tcp_endpoint *ep, const struct xlb_tcp_tuple *t,
                                     uint32_t iss, uint64_t now_ms,
                                     const struct xlb_tcp_callbacks *cb, void *user)
{
    ep->now_ms = now_ms;
    if (t->family != AF_INET && t->family != AF_INET6)
        return NULL;
    struct xlb_tcp_conn *c = xlb_tcp_conn_alloc(ep);
    if (!c)
        return NULL;
    c->tuple = *t;
    c->iss = iss;
    c->snd_una = iss;
    c->snd_nxt = c->snd_max = iss + 1;
    c->mss = mss_limit(ep, t->family); /* what we offer; the SYN-ACK sets what we send */
    c->rcv_wscale = ep->cfg.wscale;
    c->state = XLB_TCP_SYN_SENT;
    c->last_rx_ms = now_ms;
    c->rtt_sent_ms = now_ms; /* the handshake's RTT sample */
    c->cb = cb;
    c->user = user;
    xlb_tcp_rtt_init(&c->rtt, ep->cfg.rto_min_ms * 1000, ep->cfg.rto_max_ms * 1000);
    ep->ctr.active_opens++;
    xlb_tcp_send_syn(ep, c, false);
    c->rto_at = now_ms + xlb_tcp_rto_ms(c);
    xlb_tcp_timers_update(ep, c);
    return c;
}

bool xlb_tcp_timewait_reuse(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, uint64_t now_ms)
{
    /* Linux's tcp_tw_reuse: with timestamps, the new connection's TSvals (this clock, 1 s
     * later) are newer than anything of the old one, so PAWS at the peer tells them apart. */
    if (c->state != XLB_TCP_TIME_WAIT || !(c->flags & XLB_TCPF_TS) || now_ms < c->last_rx_ms + 1000)
        return false;
    ep->ctr.timewait_reused++;
    xlb_tcp_conn_release(ep, c);
    return true;
}
