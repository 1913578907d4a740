/*
 * The per-worker endpoint: the connection pool (a fixed array with a free list, allocated at
 * create, never on the fast path), the timer wheel and the timers each connection runs on it,
 * and closing.
 */
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_tcp.h>

#include "xlb_tcp_conn.h"
#include "xlb_tcp_seq.h"

#define NO_CONN UINT32_MAX

void xlb_tcp_config_default(struct xlb_tcp_config *cfg)
{
    *cfg = (struct xlb_tcp_config){
        .max_connections = 1024,
        .rcv_buf = 256 * 1024,
        .snd_buf = 256 * 1024,
        .rcv_max_segs = 1024,
        .ooo_max_bytes = 128 * 1024,
        .ooo_max_bytes_worker = 16 * 1024 * 1024,
        .mss_limit4 = 1460,
        .mss_limit6 = 1440,
        .wscale = 7,
        .timestamps = true,
        .sack = true,
        .delack_ms = 40,
        .rto_min_ms = 200,
        .rto_max_ms = 120000,
        .syn_retries = 6,
        .retries = 15,
        .timewait_ms = 2000,
        .keepalive_idle_ms = 0,
        .keepalive_intvl_ms = 75000,
        .keepalive_probes = 9,
        .challenge_acks_per_s = 1000,
        .persist_max_ms = 60000,
        .cc = XLB_TCP_CC_CUBIC,
    };
}

size_t xlb_tcp_endpoint_bytes(uint32_t max_connections)
{
    return sizeof(struct xlb_tcp_endpoint) + (size_t)max_connections * sizeof(struct xlb_tcp_conn);
}

struct xlb_tcp_endpoint *xlb_tcp_endpoint_create(const struct xlb_tcp_config *cfg,
                                                 struct rte_mempool *pool, uint64_t now_ms)
{
    if (!cfg->max_connections || cfg->wscale > 14 || !pool)
        return NULL;
    if (xlb_tcp_sndq_register() != 0)
        return NULL; /* rte_errno says why: no room left in the mbufs for the queue's field */
    struct xlb_tcp_endpoint *ep = rte_zmalloc("xlb_tcp_endpoint", sizeof(*ep), 0);
    if (!ep)
        return NULL;
    ep->conns = rte_zmalloc("xlb_tcp_conns", (size_t)cfg->max_connections * sizeof(*ep->conns),
                            RTE_CACHE_LINE_SIZE);
    if (!ep->conns) {
        rte_free(ep);
        return NULL;
    }
    ep->cfg = *cfg;
    ep->configured_mss4 = cfg->mss_limit4;
    ep->configured_mss6 = cfg->mss_limit6;
    ep->pool = pool;
    ep->now_ms = now_ms;
    xlb_tcp_wheel_init(&ep->wheel, now_ms);
    for (uint32_t i = 0; i < cfg->max_connections; i++)
        ep->conns[i].index = i + 1 < cfg->max_connections ? i + 1 : NO_CONN;
    ep->free_head = 0;
    return ep;
}

static void conn_free_buffers(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c)
{
    xlb_tcp_sndq_free(&c->sndq);
    xlb_tcp_mq_free(&c->rcvq);
    xlb_tcp_reass_free(ep, c);
}

void xlb_tcp_endpoint_free(struct xlb_tcp_endpoint *ep)
{
    if (!ep)
        return;
    for (uint32_t i = 0; i < ep->cfg.max_connections; i++)
        if (ep->conns[i].state != XLB_TCP_CLOSED)
            conn_free_buffers(ep, &ep->conns[i]);
    rte_free(ep->conns);
    rte_free(ep);
}

const struct xlb_tcp_counters *xlb_tcp_counters(const struct xlb_tcp_endpoint *ep)
{
    return &ep->ctr;
}
uint32_t xlb_tcp_conns_in_use(const struct xlb_tcp_endpoint *ep)
{
    return ep->in_use;
}
uint32_t xlb_tcp_ooo_bytes(const struct xlb_tcp_endpoint *ep)
{
    return ep->ooo_bytes;
}

uint64_t xlb_tcp_clock_ms(void)
{
    return rte_get_tsc_cycles() / (rte_get_tsc_hz() / 1000);
}

void xlb_tcp_endpoint_set_clock(struct xlb_tcp_endpoint *ep, uint64_t now_ms)
{
    if (ep->wheel.armed != 0)
        return;
    ep->now_ms = now_ms;
    xlb_tcp_wheel_init(&ep->wheel, now_ms);
}

void xlb_tcp_set_mss_limit(struct xlb_tcp_endpoint *ep, uint8_t family, uint16_t mss)
{
    if (family == AF_INET)
        ep->cfg.mss_limit4 = mss != 0 ? mss : ep->configured_mss4;
    else
        ep->cfg.mss_limit6 = mss != 0 ? mss : ep->configured_mss6;
}

void xlb_tcp_set_tx_offloads(struct xlb_tcp_endpoint *ep, bool tcp_cksum, bool ip_cksum)
{
    ep->cfg.tx_cksum_offload = tcp_cksum;
    ep->cfg.tx_ip_cksum_offload = ip_cksum;
}

void xlb_tcp_tx_set(struct xlb_tcp_endpoint *ep, struct rte_mbuf **tx, uint16_t cap, uint16_t *n)
{
    ep->tx = tx;
    ep->tx_cap = cap;
    ep->tx_n = n;
}

struct xlb_tcp_conn *xlb_tcp_conn_alloc(struct xlb_tcp_endpoint *ep)
{
    if (ep->free_head == NO_CONN) {
        ep->ctr.pool_full++;
        return NULL;
    }
    struct xlb_tcp_conn *c = &ep->conns[ep->free_head];
    ep->free_head = c->index;
    uint32_t index = (uint32_t)(c - ep->conns);
    memset(c, 0, sizeof(*c));
    c->index = index;
    c->sndq.held = c->rcvq.held = &ep->held_segs;
    c->cc_kind = (uint8_t)ep->cfg.cc;
    ep->in_use++;
    return c;
}

void xlb_tcp_conn_release(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c)
{
    xlb_tcp_wheel_cancel(&ep->wheel, &c->timer);
    conn_free_buffers(ep, c);
    c->state = XLB_TCP_CLOSED;
    c->cb = NULL;
    c->index = ep->free_head;
    ep->free_head = (uint32_t)(c - ep->conns);
    ep->in_use--;
}

void xlb_tcp_close(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c,
                   enum xlb_tcp_close_reason why)
{
    const struct xlb_tcp_callbacks *cb = c->cb;
    void *user = c->user;
    bool tell = cb && cb->on_closed && !(c->flags & XLB_TCPF_CLOSED_SENT);
    c->close_reason = (uint8_t)why;
    xlb_tcp_conn_release(ep, c);
    if (tell)
        cb->on_closed(c, user, why);
}

void xlb_tcp_enter_timewait(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c)
{
    /* The application is done with it; the block stays for the peer's last segments. */
    conn_free_buffers(ep, c);
    c->rto_at = c->delack_at = c->persist_at = c->keepalive_at = c->tlp_at = 0;
    c->timewait_at = ep->now_ms + ep->cfg.timewait_ms;
    xlb_tcp_timers_update(ep, c);
    const struct xlb_tcp_callbacks *cb = c->cb;
    c->flags |= XLB_TCPF_CLOSED_SENT;
    c->cb = NULL;
    if (cb && cb->on_closed)
        cb->on_closed(c, c->user, XLB_TCP_CLOSE_NORMAL);
}

static uint64_t earliest(uint64_t a, uint64_t b)
{
    return !a ? b : (!b ? a : RTE_MIN(a, b));
}

void xlb_tcp_timers_update(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c)
{
    if (ep->cfg.keepalive_idle_ms && c->state == XLB_TCP_ESTABLISHED && !c->ka_probes)
        c->keepalive_at = c->last_rx_ms + ep->cfg.keepalive_idle_ms;
    uint64_t at = earliest(earliest(c->rto_at, c->delack_at), earliest(c->persist_at, c->tlp_at));
    at = earliest(at, earliest(c->keepalive_at, c->timewait_at));
    if (!at)
        xlb_tcp_wheel_cancel(&ep->wheel, &c->timer);
    else if (!xlb_tcp_timer_armed(&c->timer) || c->timer.expiry_ms != at)
        xlb_tcp_wheel_arm(&ep->wheel, &c->timer, at);
}

/* The retransmission timer: a SYN again, or what the recovery module says after an RTO. */
static void rto_fired(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c)
{
    c->rto_at = 0;
    if (c->state == XLB_TCP_SYN_SENT || c->state == XLB_TCP_SYN_RECEIVED) {
        if (++c->syn_tries > ep->cfg.syn_retries) {
            ep->ctr.timeouts++;
            xlb_tcp_close(ep, c, XLB_TCP_CLOSE_TIMEOUT);
            return;
        }
        ep->ctr.syn_retransmits++;
        xlb_tcp_rtt_backoff(&c->rtt);
        xlb_tcp_send_syn(ep, c, c->state == XLB_TCP_SYN_RECEIVED);
        c->rto_at = ep->now_ms + xlb_tcp_rto_ms(c);
        return;
    }
    if (c->snd_una == c->snd_max)
        return;
    if (++c->rto_tries > ep->cfg.retries) {
        ep->ctr.timeouts++;
        ep->ctr.rst_out_timeout++;
        xlb_tcp_send_rst(ep, c, c->snd_nxt, c->rcv_nxt, true);
        xlb_tcp_close(ep, c, XLB_TCP_CLOSE_TIMEOUT);
        return;
    }
    ep->ctr.rtos++;
    c->tlp_at = 0;
    xlb_tcp_rtt_backoff(&c->rtt);
    c->rtt_timing = false; /* Karn */
    /* RFC 6675 section 5.1: everything outstanding is lost, sent again in slow start. */
    xlb_tcp_recovery_on_rto(&c->rec, c->snd_una, c->snd_max, c->rtt.backoff, ep->now_ms * 1000,
                            &ep->ctr.recovery);
    c->rto_at = ep->now_ms + xlb_tcp_rto_ms(c);
    xlb_tcp_output(ep, c);
}

/* Zero-window probe: a segment below the window (Linux's way), which the peer must answer
 * with an ACK carrying its window. */
static void persist_fired(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c)
{
    c->persist_at = 0;
    if (c->snd_wnd != 0 || c->sndq.bytes <= c->snd_nxt - c->snd_una)
        return;
    ep->ctr.zero_window_probes++;
    xlb_tcp_send_segment(ep, c, c->snd_una - 1, 0, 0);
    c->persist_ms = RTE_MIN(c->persist_ms * 2, ep->cfg.persist_max_ms);
    c->persist_at = ep->now_ms + c->persist_ms;
}

static void keepalive_fired(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c)
{
    c->keepalive_at = 0;
    if (c->state != XLB_TCP_ESTABLISHED)
        return;
    if (c->ka_probes >= ep->cfg.keepalive_probes) {
        ep->ctr.keepalive_timeouts++;
        ep->ctr.rst_out_timeout++;
        xlb_tcp_send_rst(ep, c, c->snd_nxt, c->rcv_nxt, true);
        xlb_tcp_close(ep, c, XLB_TCP_CLOSE_TIMEOUT);
        return;
    }
    c->ka_probes++;
    ep->ctr.keepalive_probes++;
    xlb_tcp_send_segment(ep, c, c->snd_una - 1, 0, 0);
    c->keepalive_at = ep->now_ms + ep->cfg.keepalive_intvl_ms;
}

static void conn_timers_fired(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c)
{
    uint64_t now = ep->now_ms;
    if (c->timewait_at && c->timewait_at <= now) {
        xlb_tcp_conn_release(ep, c); /* TIME-WAIT over: nobody to tell */
        return;
    }
    if (c->tlp_at && c->tlp_at <= now)
        xlb_tcp_tlp_fire(ep, c); /* re-arms the RTO: never both at once */
    if (c->rto_at && c->rto_at <= now) {
        rto_fired(ep, c);
        if (c->state == XLB_TCP_CLOSED)
            return;
    }
    if (c->keepalive_at && c->keepalive_at <= now) {
        keepalive_fired(ep, c);
        if (c->state == XLB_TCP_CLOSED)
            return;
    }
    if (c->persist_at && c->persist_at <= now)
        persist_fired(ep, c);
    if (c->delack_at && c->delack_at <= now) {
        c->delack_at = 0;
        xlb_tcp_send_ack(ep, c);
    }
    xlb_tcp_timers_update(ep, c);
}

uint32_t xlb_tcp_poll(struct xlb_tcp_endpoint *ep, uint64_t now_ms, uint32_t max_timers)
{
    ep->now_ms = now_ms;
    uint32_t fired = 0;
    while (fired < max_timers) {
        struct xlb_tcp_timer *t = xlb_tcp_wheel_expired(&ep->wheel, now_ms);
        if (!t)
            break;
        struct xlb_tcp_conn *c =
            (struct xlb_tcp_conn *)((uint8_t *)t - offsetof(struct xlb_tcp_conn, timer));
        conn_timers_fired(ep, c);
        fired++;
    }
    return fired;
}
