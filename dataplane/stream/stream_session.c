/*
 * A client connection's HTTP/2: an nghttp2 server session fed with the bytes xlb's TCP has
 * received in order (zero-copy, xlb_tcp_peek) and whose output is copied into the TCP send
 * queue (xlb_tcp_write_copy, in mbufs of a segment's payload that go to the wire in place) as
 * far as it has room. What it refuses waits in mbufs of the side's own (pending) and nothing
 * more is taken from the session until it has gone: on_writable resumes. The session never updates
 * windows on its own (NGHTTP2_OPT_NO_AUTO_WINDOW_UPDATE): a request's DATA is acknowledged only
 * once it has been taken, so flow control follows what xlb can pass on. On a TLS VIP the bytes pass
 * through the connection's TLS both ways (stream_tls.c).
 */
#include <errno.h>
#include <string.h>

#include "stream_conn.h"

static bool live(const struct xlb_stream_side *d)
{
    return d->tcp != NULL && !d->done;
}

bool xlb_stream_session_open(struct xlb_stream_conn *c)
{
    struct xlb_stream_worker *w = c->side.w;
    if (!xlb_h2_quota_init(&c->side.quota, &w->heap, XLB_STREAM_QUOTA_FLOOR,
                           XLB_STREAM_QUOTA_LIMIT))
        return false;
    /* Callbacks and options were made once, off the fast path: nothing here uses malloc. */
    bool ok = nghttp2_session_server_new3(&c->side.h2, w->callbacks, c, w->options,
                                          &c->side.quota.mem) == 0;
    if (ok) {
        const nghttp2_settings_entry settings[] = {
            {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, w->limits.max_concurrent_streams},
            {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, w->limits.window_bytes},
            {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        };
        ok = nghttp2_submit_settings(c->side.h2, NGHTTP2_FLAG_NONE, settings, 3) == 0;
    }
    if (ok && w->session_bytes == 0)
        w->session_bytes = c->side.quota.in_use; /* an idle session, its SETTINGS queued */
    if (ok) {
        w->sessions_live++;
        xlb_stream_drain_session(c);
    }
    if (!ok) {
        if (c->side.h2 != NULL)
            nghttp2_session_del(c->side.h2);
        c->side.h2 = NULL;
        xlb_h2_quota_fini(&c->side.quota);
    }
    return ok;
}

/* Append n bytes to a chain of the worker's mbufs (a new one when head is NULL), filling the
 * tail's room first; NULL when the pool has too few (the chain given is freed). */
static struct rte_mbuf *copy_to_mbufs(struct rte_mempool *pool, struct rte_mbuf *head,
                                      const uint8_t *data, uint32_t n)
{
    struct rte_mbuf *tail = head != NULL ? rte_pktmbuf_lastseg(head) : NULL;
    while (n > 0) {
        struct rte_mbuf *m = tail;
        if (m == NULL || rte_pktmbuf_tailroom(m) == 0) {
            m = rte_pktmbuf_alloc(pool);
            if (m == NULL) {
                rte_pktmbuf_free(head);
                return NULL;
            }
            if (head == NULL) {
                head = m;
            } else {
                tail->next = m;
                head->nb_segs++;
            }
            tail = m;
        }
        uint32_t room = rte_pktmbuf_tailroom(m);
        uint32_t piece = n < room ? n : room;
        memcpy(rte_pktmbuf_mtod_offset(m, uint8_t *, m->data_len), data, piece);
        m->data_len = (uint16_t)(m->data_len + piece);
        head->pkt_len += piece;
        data += piece;
        n -= piece;
    }
    return head;
}

/* Write the chunk the send queue refused before; true when nothing is pending. */
static bool write_pending(struct xlb_stream_side *d)
{
    if (d->pending == NULL)
        return true;
    if (xlb_tcp_write(d->w->ep, d->tcp, d->pending) != 0)
        return false; /* on_writable resumes */
    d->pending = NULL;
    return true;
}

/* CHUNK_LAST: taken, and the session failed after it (counted): nothing more this pump. */
enum chunk { CHUNK_TAKEN, CHUNK_LAST, CHUNK_NONE, CHUNK_NO_MBUFS };

/* A frame of the session's output (valid only until its next call) into the send queue,
 * copied into mbufs of a segment's payload each (xlb_tcp_write_copy: its segments go in place);
 * into d->pending, as TLS records do, when the queue refuses it or bytes already wait there. */
static enum chunk put_frame(struct xlb_stream_side *d, const uint8_t *data, uint32_t n)
{
    struct xlb_stream_worker *w = d->w;
    if (d->pending == NULL) {
        int r = xlb_tcp_write_copy(w->ep, d->tcp, data, n);
        if (r == 0)
            return CHUNK_TAKEN;
        if (r == -ENOBUFS)
            return CHUNK_NO_MBUFS;
    }
    d->pending = copy_to_mbufs(w->ctx->pool, d->pending, data, n);
    return d->pending != NULL ? CHUNK_TAKEN : CHUNK_NO_MBUFS;
}

/* Cleartext: the frames the session has next (nghttp2 gives one a call: an RPC's HEADERS, DATA
 * and trailers, WINDOW_UPDATEs) follow the first, up to XLB_STREAM_GATHER_BYTES in all and
 * while the send queue has room for one more chunk: the small ones fill the same mbuf of the
 * send queue, not one each. */
static enum chunk gather(struct xlb_stream_side *d, uint32_t taken)
{
    struct xlb_stream_worker *w = d->w;
    while (taken < XLB_STREAM_GATHER_BYTES &&
           xlb_tcp_send_space(w->ep, d->tcp, 0) >= XLB_STREAM_CHUNK_ROOM) {
        const uint8_t *data;
        ssize_t n = nghttp2_session_mem_send(d->h2, &data);
        if (n < 0) {
            w->ctx->stats->events[XLB_EVENT_STREAM_SESSION_ERRORS]++;
            return CHUNK_LAST;
        }
        if (n == 0)
            break;
        enum chunk got = put_frame(d, data, (uint32_t)n);
        if (got != CHUNK_TAKEN)
            return got;
        taken += (uint32_t)n;
    }
    return CHUNK_TAKEN;
}

/* The next bytes for the peer: on TLS, what the glue holds first (handshake records, an alert,
 * close_notify), and nothing of the session before the handshake is done; then a chunk of the
 * session's output, copied (or sealed) at once: the session's buffer is valid only until its
 * next call. */
static enum chunk next_chunk(struct xlb_stream_side *d, struct xlb_tls_conn *t)
{
    struct xlb_stream_worker *w = d->w;
    if (t != NULL && xlb_tls_conn_pending(t) > 0) {
        d->pending = xlb_stream_tls_take(d);
        return d->pending != NULL ? CHUNK_TAKEN : CHUNK_NO_MBUFS;
    }
    if (t != NULL && t->state != XLB_TLS_OPEN)
        return CHUNK_NONE;
    const uint8_t *data;
    ssize_t n = nghttp2_session_mem_send(d->h2, &data);
    if (n <= 0) {
        if (n < 0)
            w->ctx->stats->events[XLB_EVENT_STREAM_SESSION_ERRORS]++;
        return CHUNK_NONE;
    }
    if (t != NULL) {
        d->pending = xlb_stream_tls_seal(d, data, (uint32_t)n);
        return d->pending != NULL ? CHUNK_TAKEN : CHUNK_NO_MBUFS;
    }
    enum chunk got = put_frame(d, data, (uint32_t)n);
    return got == CHUNK_TAKEN ? gather(d, (uint32_t)n) : got;
}

/* The peer's bytes, a chunk at a time, each taken only while the send queue has room for it. */
static void send_output(struct xlb_stream_side *d)
{
    struct xlb_stream_worker *w = d->w;
    struct xlb_tls_conn *t = xlb_stream_tls_of(d);
    int i;
    for (i = 0; i < XLB_STREAM_SEND_CHUNKS && write_pending(d); i++) {
        if (xlb_tcp_send_space(w->ep, d->tcp, XLB_STREAM_CHUNK_ROOM) < XLB_STREAM_CHUNK_ROOM)
            break; /* on_writable resumes */
        enum chunk got = next_chunk(d, t);
        if (got == CHUNK_NONE)
            break;
        if (got == CHUNK_LAST) {
            write_pending(d);
            break;
        }
        if (got == CHUNK_NO_MBUFS) {
            /* The bytes are lost to the stream: the connection cannot go on. */
            w->ctx->stats->drops[XLB_DROP_NO_MBUF]++;
            xlb_tcp_abort(w->ep, d->tcp);
            return;
        }
    }
    if (!live(d))
        return;
    /* Out of chunks for this call with more to send: nothing else would bring us back (the
     * peer may be waiting for these bytes, sending nothing): the next poll goes on. */
    if (i == XLB_STREAM_SEND_CHUNKS && nghttp2_session_want_write(d->h2))
        xlb_stream_defer(d);
    xlb_stream_cork(d);
}

/* Cleartext: the session reads the bytes in place in the TCP receive queue. */
static bool feed_plain(struct xlb_stream_side *d, bool *eof)
{
    struct xlb_stream_worker *w = d->w;
    for (int i = 0; i < XLB_STREAM_RECV_PIECES; i++) {
        const uint8_t *data;
        uint32_t len;
        if (xlb_tcp_peek(d->tcp, &data, &len, eof) == 0 || len == 0)
            break;
        ssize_t n = nghttp2_session_mem_recv(d->h2, data, len);
        if (n < 0) {
            w->ctx->stats->events[XLB_EVENT_STREAM_SESSION_ERRORS]++;
            return false;
        }
        xlb_tcp_consume(w->ep, d->tcp, (uint32_t)n);
        if (!live(d))
            return true;
    }
    return true;
}

/* Feed what the peer has sent; false when the session failed (the peer is reset). */
static bool feed_input(struct xlb_stream_side *d, bool *eof)
{
    struct xlb_tls_conn *t = xlb_stream_tls_of(d);
    *eof = false;
    bool ok = t != NULL ? xlb_stream_tls_input(d, eof) : feed_plain(d, eof);
    if (!ok || !live(d))
        return ok;
    /* Pieces left past this call's share: the pump takes another round for them, unless a
     * handshake waits for the next poll's budget (it is on the deferred list). */
    const uint8_t *rest;
    uint32_t rest_len;
    bool fin = false;
    bool waiting = t != NULL && t->state == XLB_TLS_HANDSHAKING && t->handshake_due;
    if (xlb_tcp_peek(d->tcp, &rest, &rest_len, &fin) > 0 && !waiting)
        d->again = true;
    *eof |= fin;
    return true;
}

void xlb_stream_pump(struct xlb_stream_side *d)
{
    if (d->pumping) { /* called back into while pumping: one more round */
        d->again = true;
        return;
    }
    d->pumping = true;
    for (int round = 0; round < 4 && live(d) && d->h2 != NULL; round++) {
        d->again = false;
        bool eof = false;
        if (!feed_input(d, &eof)) {
            xlb_tcp_abort(d->w->ep, d->tcp);
            break;
        }
        if (!live(d) || d->h2 == NULL)
            break;
        send_output(d);
        if (!live(d))
            break;
        bool finished = (!nghttp2_session_want_read(d->h2) && !nghttp2_session_want_write(d->h2) &&
                         !xlb_stream_linger(d)) ||
                        xlb_stream_tls_failed(d);
        /* A TLS client is told close_notify before the FIN. */
        if ((eof || finished) && !d->shut && xlb_stream_tls_of(d) != NULL &&
            xlb_stream_tls_notify(d))
            send_output(d);
        /* A client session that is over (GOAWAY sent on an error, say) answers nothing more:
         * its RPCs end now (their backend streams cancelled, the cluster's count released),
         * not when the client gets round to closing its end. */
        if (finished && !d->is_sub)
            xlb_stream_conn_lost((struct xlb_stream_conn *)d);
        if ((eof || finished) && d->pending == NULL && !d->shut) {
            d->shut = true; /* the peer closed, or the session is over (GOAWAY sent) */
            xlb_tcp_shutdown(d->w->ep, d->tcp);
        }
        if (!d->again)
            break;
    }
    /* Called back into on the last round (a window update owed to this side, say): the next
     * poll takes the round this call had no room for. */
    if (d->again && live(d) && d->h2 != NULL)
        xlb_stream_defer(d);
    d->again = false;
    d->pumping = false;
}

void xlb_stream_send(struct xlb_stream_side *d)
{
    if (d->pumping) { /* a pump in progress takes it as one more round */
        d->again = true;
        return;
    }
    if (!xlb_stream_send_later(d))
        xlb_stream_pump(d);
}

void xlb_stream_session_over(struct xlb_stream_side *d)
{
    if (!d->is_sub && d->h2 != NULL && !d->done)
        d->w->sessions_live--;
}

void xlb_stream_abort(struct xlb_stream_side *d)
{
    if (live(d))
        xlb_tcp_abort(d->w->ep, d->tcp); /* on_closed marks it done */
}

static void on_connected(struct xlb_tcp_conn *t, void *user)
{
    struct xlb_stream_side *d = user;
    d->tcp = t;
    if (d->is_sub) /* A62: the first of its endpoint's attempts to connect wins */
        xlb_stream_eyeballs_connected((struct xlb_stream_sub *)d);
    xlb_stream_pump(d);
}

static void on_data(struct xlb_tcp_conn *t, void *user)
{
    (void)t;
    xlb_stream_pump(user);
}

/* The connection is over: its session goes (its RPCs end on the other side), its flow stays a
 * little for the last segments a TIME-WAIT connection may still have to answer. */
static void on_closed(struct xlb_tcp_conn *t, void *user, enum xlb_tcp_close_reason why)
{
    struct xlb_stream_side *d = user;
    struct xlb_stream_worker *w = d->w;
    xlb_stream_session_over(d);
    d->done = true;
    if (xlb_tcp_conn_state(t) != XLB_TCP_TIME_WAIT)
        d->tcp = NULL;
    struct xlb_stream_link *was = w->current;
    w->current = &d->link; /* what it sent last (its RST) goes out by this connection */
    xlb_stream_route_output(w);
    w->current = was;
    if (d->is_sub)
        xlb_stream_sub_closed((struct xlb_stream_sub *)d, why);
    else
        xlb_stream_conn_lost((struct xlb_stream_conn *)d);
    if (d->h2 != NULL) {
        nghttp2_session_del(d->h2);
        d->h2 = NULL;
    }
    /* The session's heap floor and the TLS state go now, not when the flow goes (seconds
     * later, for the last segments of TIME-WAIT): new connections need that room at once. */
    xlb_h2_quota_fini(&d->quota);
    xlb_stream_tls_close(d);
    xlb_stream_linger_cancel(d);
    rte_pktmbuf_free(d->pending);
    d->pending = NULL;
    if (!d->is_sub)
        w->ctx->stats->events[XLB_EVENT_STREAM_CLOSED]++;
    if (d->flow == XLB_STREAM_NONE)
        return;
    struct xlb_flow *f = &w->ctx->flows->flows[d->flow];
    f->state = XLB_FLOW_CLOSED;
    xlb_flow_set_timeout(w->ctx->flows, f, w->ctx->now_tsc, w->ctx->tsc_hz,
                         XLB_FLOW_CLOSED_TIMEOUT_S + 1);
    xlb_flow_schedule(w->ctx->flows, f, w->ctx->now_tsc, w->ctx->tsc_hz);
    if (!d->is_sub && d->tcp == NULL) {
        /* No TIME-WAIT to answer for: the entry goes back to the pool now, and the flow stays
         * alone to drop the connection's late segments (stream_segment_after_end). Short
         * connections at a high rate would otherwise hold the pool for the flow's seconds. */
        f->stream = XLB_STREAM_NONE;
        d->flow = XLB_STREAM_NONE;
        xlb_stream_conn_free(w, (struct xlb_stream_conn *)d);
    }
}

const struct xlb_tcp_callbacks xlb_stream_client_callbacks = {
    .on_connected = on_connected,
    .on_readable = on_data,
    .on_writable = on_data,
    .on_closed = on_closed,
};
