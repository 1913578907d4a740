/* What the layers above call: write, flush, peek and consume, shutdown, abort, and the PMTU
 * entry point. */
#include <errno.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <rte_tcp.h>

#include "xlb_tcp_conn.h"
#include "xlb_tcp_seq.h"

static bool can_queue(const struct xlb_tcp_conn *c)
{
    if (c->flags & XLB_TCPF_FIN_QUEUED)
        return false;
    return c->state == XLB_TCP_ESTABLISHED || c->state == XLB_TCP_CLOSE_WAIT ||
           c->state == XLB_TCP_SYN_SENT || c->state == XLB_TCP_SYN_RECEIVED;
}

/* 0 when n more bytes may be queued; -EPIPE after shutdown or in a state that cannot send;
 * -EAGAIN when the send queue lacks room (on_writable follows). A write larger than the whole
 * buffer is taken when the queue is empty, or it could never be written. */
static int may_queue(const struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, uint32_t n)
{
    if (!can_queue(c))
        return -EPIPE;
    if (c->sndq.bytes && c->sndq.bytes + n > ep->cfg.snd_buf) {
        c->flags |= XLB_TCPF_WANT_WRITE;
        return -EAGAIN;
    }
    return 0;
}

/* One send-queue entry per mbuf of the chain that holds bytes (each may go in place when
 * sent); empty ones are freed. */
static void queue_chain(struct xlb_tcp_conn *c, struct rte_mbuf *m)
{
    while (m) {
        struct rte_mbuf *next = m->next;
        if (m->data_len)
            xlb_tcp_sndq_push(&c->sndq, m);
        else {
            m->next = NULL;
            rte_pktmbuf_free_seg(m);
        }
        m = next;
    }
}

int xlb_tcp_write(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, struct rte_mbuf *m)
{
    int r = may_queue(ep, c, m->pkt_len);
    if (r == 0)
        queue_chain(c, m);
    return r;
}

/* The payload of the mbufs xlb_tcp_write_copy fills: one segment's, so that each segment can
 * be sent in place; not below MIN_COPY_PIECE (a tiny MSS would take an mbuf per few bytes). */
#define MIN_COPY_PIECE 512u

/* n bytes in new mbufs of at most piece bytes each, as a chain; NULL when the pool has too
 * few (none taken). Bounded by n / piece mbufs. */
static struct rte_mbuf *copy_into_chain(struct rte_mempool *pool, const uint8_t *data, uint32_t n,
                                        uint32_t piece)
{
    struct rte_mbuf *head = NULL, *tail = NULL;
    while (n) {
        struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
        if (!m) {
            rte_pktmbuf_free(head);
            return NULL;
        }
        uint32_t len = RTE_MIN(n, RTE_MIN(piece, (uint32_t)rte_pktmbuf_tailroom(m)));
        memcpy(rte_pktmbuf_append(m, (uint16_t)len), data, len);
        if (tail)
            tail->next = m;
        else
            head = m;
        tail = m;
        data += len;
        n -= len;
    }
    return head;
}

int xlb_tcp_write_copy(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, const void *data,
                       uint32_t n)
{
    int r = may_queue(ep, c, n);
    if (r != 0)
        return r;
    uint32_t piece = RTE_MAX((uint32_t)c->mss, MIN_COPY_PIECE);
    uint32_t unsent = c->sndq.bytes - (c->snd_max - c->snd_una);
    if (c->state == XLB_TCP_SYN_SENT || c->state == XLB_TCP_SYN_RECEIVED)
        unsent = c->sndq.bytes; /* snd_max counts the SYN: no data went yet */
    uint32_t top = RTE_MIN(n, xlb_tcp_sndq_tail_room(&c->sndq, unsent, piece));
    const uint8_t *bytes = data;
    /* The new mbufs first: all or nothing. */
    struct rte_mbuf *chain = copy_into_chain(ep->pool, bytes + top, n - top, piece);
    if (!chain && n > top) {
        ep->ctr.no_mbuf++;
        return -ENOBUFS;
    }
    if (top)
        xlb_tcp_sndq_append_tail(&c->sndq, bytes, top);
    queue_chain(c, chain);
    return 0;
}

void *xlb_tcp_conn_user(const struct xlb_tcp_conn *c)
{
    return c->user;
}

void xlb_tcp_set_cc(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, enum xlb_tcp_cc_kind cc)
{
    c->cc_kind = (uint8_t)cc;
    /* Synchronized already (an accepted connection): its sender starts again with the new
     * controller, which is sound while nothing has been sent. */
    if (c->state != XLB_TCP_SYN_SENT && c->state != XLB_TCP_SYN_RECEIVED &&
        c->snd_una == c->snd_max)
        xlb_tcp_sender_start(ep, c);
}

void xlb_tcp_flush(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c)
{
    if (c->state != XLB_TCP_CLOSED)
        xlb_tcp_output(ep, c);
}

uint32_t xlb_tcp_peek(const struct xlb_tcp_conn *c, const uint8_t **data, uint32_t *len, bool *eof)
{
    *eof = (c->flags & XLB_TCPF_FIN_RCVD) && c->rcvq.bytes == 0;
    if (!c->rcvq.head) {
        *data = NULL;
        *len = 0;
        return 0;
    }
    *data = rte_pktmbuf_mtod_offset(c->rcvq.head, const uint8_t *, c->rcv_consumed_off);
    *len = c->rcvq.head->data_len - c->rcv_consumed_off;
    return c->rcvq.bytes;
}

/* The receive window after the application took bytes: when the window the peer knows has
 * fallen below half of what it now is, the sender is told now rather than at the next ACK, which
 * a closed window holds back (Linux's rule; the edge moves by at least the RFC 9293 section
 * 3.8.6.2.2 step, xlb_tcp_rcv_window). A reader that keeps up leaves the peer's window near full,
 * so it sends no update and the ACKs stay at one per two segments. before: the window before
 * the read. */
static void window_after_read(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, uint32_t before)
{
    if (c->state != XLB_TCP_ESTABLISHED && c->state != XLB_TCP_FIN_WAIT_1 &&
        c->state != XLB_TCP_FIN_WAIT_2)
        return;
    uint32_t now = xlb_tcp_rcv_window(ep, c);
    if (now > before && now / 2 >= before) {
        ep->ctr.window_updates++;
        xlb_tcp_send_ack(ep, c);
        xlb_tcp_timers_update(ep, c);
    }
}

static uint32_t window_now(const struct xlb_tcp_conn *c)
{
    return xlb_seq_gt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
}

void xlb_tcp_consume(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, uint32_t n)
{
    uint32_t before = window_now(c);
    xlb_tcp_mq_drop(&c->rcvq, n, &c->rcv_consumed_off);
    window_after_read(ep, c, before);
}

struct rte_mbuf *xlb_tcp_read(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, uint32_t max)
{
    struct xlb_tcp_mqueue *q = &c->rcvq;
    if (!q->head || q->head->data_len - c->rcv_consumed_off > max)
        return NULL;
    uint32_t before = window_now(c);
    /* The head's bytes already consumed are cut off, so the chain starts at the next byte. */
    rte_pktmbuf_adj(q->head, (uint16_t)c->rcv_consumed_off);
    c->rcv_consumed_off = 0;
    struct rte_mbuf *head = q->head, *last = head;
    uint32_t bytes = head->data_len;
    uint16_t segs = 1;
    /* Bounded by the queue's segments. */
    while (last->next && bytes + last->next->data_len <= max) {
        last = last->next;
        bytes += last->data_len;
        segs++;
    }
    q->head = last->next;
    q->segs -= segs;
    *q->held -= segs;
    last->next = NULL;
    if (!q->head)
        q->tail = NULL;
    q->bytes -= bytes;
    head->nb_segs = segs;
    head->pkt_len = bytes;
    window_after_read(ep, c, before);
    return head;
}

uint32_t xlb_tcp_send_space(const struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c,
                            uint32_t want)
{
    if (!can_queue(c))
        return 0;
    uint32_t space = c->sndq.bytes < ep->cfg.snd_buf ? ep->cfg.snd_buf - c->sndq.bytes : 0;
    if (space < want)
        c->flags |= XLB_TCPF_WANT_WRITE; /* as a refused write: on_writable when room frees */
    return space;
}

void *xlb_tcp_user_of(const struct xlb_tcp_endpoint *ep, const struct rte_mbuf *m)
{
    uint32_t tag = m->hash.usr;
    if (tag == 0 || tag > ep->cfg.max_connections)
        return NULL;
    const struct xlb_tcp_conn *c = &ep->conns[tag - 1];
    return c->state == XLB_TCP_CLOSED ? NULL : c->user;
}

void xlb_tcp_shutdown(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c)
{
    switch (c->state) {
    case XLB_TCP_SYN_SENT:
        xlb_tcp_close(ep, c, XLB_TCP_CLOSE_NORMAL); /* nothing synchronized to close */
        return;
    case XLB_TCP_SYN_RECEIVED:
    case XLB_TCP_ESTABLISHED:
        c->state = XLB_TCP_FIN_WAIT_1;
        break;
    case XLB_TCP_CLOSE_WAIT:
        c->state = XLB_TCP_LAST_ACK;
        break;
    default:
        return;
    }
    c->flags |= XLB_TCPF_FIN_QUEUED;
    xlb_tcp_output(ep, c);
}

void xlb_tcp_abort(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c)
{
    if (c->state == XLB_TCP_CLOSED)
        return;
    if (c->state != XLB_TCP_SYN_SENT && c->state != XLB_TCP_TIME_WAIT) {
        ep->ctr.rst_out_abort++;
        xlb_tcp_send_rst(ep, c, c->snd_nxt, c->rcv_nxt, true);
    }
    xlb_tcp_close(ep, c, XLB_TCP_CLOSE_ABORTED);
}

void xlb_tcp_pmtu(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, uint32_t mtu, uint32_t seq)
{
    /* Only an ICMP quoting a segment in flight: anything else is spoofed or stale. */
    if (c->state == XLB_TCP_CLOSED || c->snd_una == c->snd_max ||
        !xlb_seq_in(seq, c->snd_una, c->snd_max)) {
        ep->ctr.pmtu_ignored++;
        return;
    }
    bool v4 = c->tuple.family == AF_INET;
    uint32_t floor = v4 ? 576 : 1280; /* RFC 791's and RFC 8200's minimum MTUs */
    if (mtu < floor)
        mtu = floor;
    uint32_t mss = mtu - (v4 ? 40u : 60u) - ((c->flags & XLB_TCPF_TS) ? 12u : 0u);
    if (mss >= c->mss) {
        ep->ctr.pmtu_ignored++;
        return;
    }
    c->mss = (uint16_t)mss;
    c->rec.mss = mss;
    xlb_tcp_cc_set_mss(&c->rec.cc, mss);
    ep->ctr.pmtu_lowered++;
    /* The first segment in flight was too big: send it again at the new size (RFC 1191);
     * the rest follows as the ACKs or the recovery module ask. */
    c->rtt_timing = false;
    xlb_tcp_retransmit_first(ep, c);
    xlb_tcp_output(ep, c);
}
