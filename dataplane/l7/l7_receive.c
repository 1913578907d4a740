/*
 * RECEIVING: xlb is the client's TCP peer until the first request is in. While it connects to
 * the backend (CONNECTING) it goes on taking the client's bytes the same way, for the replay. Bytes
 * are taken in order only (a segment ahead of rcv_nxt is left for the client to retransmit), kept
 * for the replay, and scanned as HTTP/2: the client's ACK of xlb's SETTINGS and its PINGs are meant
 * for xlb, so they are answered or noted and cut from the replay. xlb's own bytes (SETTINGS,
 * PING ACKs) are resent with every answer until acknowledged: nothing else retransmits them.
 */
#include <string.h>

#include "l7_conn.h"

#define SEQ_LT(a, b) ((int32_t)((a) - (b)) < 0)
#define SEQ_LE(a, b) ((int32_t)((a) - (b)) <= 0)

struct receive_step {
    struct xlb_burst_ctx *ctx;
    struct xlb_l7_conn *c;
};

uint16_t xlb_l7_receive_window(const struct xlb_l7_conn *c)
{
    uint32_t room = (XLB_L7_IN_MAX - c->in_len) >> c->xlb_wscale;
    return (uint16_t)(room > UINT16_MAX ? UINT16_MAX : room);
}

static int strip(struct xlb_l7_conn *c, const struct xlb_h2_frame *f)
{
    if (c->n_strip == XLB_L7_STRIP_MAX)
        return -1;
    c->strip[c->n_strip].at = (uint32_t)f->offset;
    c->strip[c->n_strip].len = 9 + f->length;
    c->n_strip++;
    return 0;
}

static int on_frame_end(void *user, const struct xlb_h2_frame *f, const uint8_t *payload,
                        uint32_t len)
{
    struct receive_step *r = user;
    struct xlb_l7_conn *c = r->c;
    bool ack = f->flags & XLB_H2_FLAG_END_STREAM;
    if (c->phase != XLB_L7_RECEIVING)
        return 0; /* bound: everything goes to the backend (it answers PINGs itself) */
    if (f->type == XLB_H2_SETTINGS && ack && !c->settings_acked) {
        c->settings_acked = true; /* the backend never sent these SETTINGS: not replayed */
        return strip(c, f);
    }
    if (f->type == XLB_H2_PING && !ack && len == 8) {
        if (c->out_len + 17u > XLB_L7_OUT_MAX)
            return -1;
        c->out_len = (uint16_t)(c->out_len + xlb_h2_ping_ack(c->out + c->out_len, payload));
        c->snd_nxt = c->snd_una + c->out_len;
        return strip(c, f);
    }
    return 0;
}

static int on_header_block(void *user, uint32_t stream_id, bool end_stream, const uint8_t *block,
                           uint32_t len, uint64_t append_at, const struct xlb_h2_frame *last)
{
    (void)end_stream, (void)append_at, (void)last;
    struct receive_step *r = user;
    struct xlb_l7_conn *c = r->c;
    if (c->request_seen) {
        /* A later request before the splice: decoded to keep the table in step, and its stream
         * followed (from the binding on; before it, noted for the binding). */
        struct xlb_h2_headers later;
        char storage[1024];
        if (xlb_hpack_decode(&c->hpack, block, len, &later, storage, sizeof(storage)) != 0)
            return -1;
        if (c->phase == XLB_L7_CONNECTING && c->scan.block_type == XLB_H2_HEADERS)
            xlb_l7_stream_request(r->ctx, c, stream_id, &later);
        else if (stream_id != c->first_stream && c->n_early < XLB_L7_EARLY_STREAMS)
            c->early_streams[c->n_early++] = stream_id;
        return 0;
    }
    int rc = xlb_hpack_decode(&c->hpack, block, len, &c->binding->request, c->binding->storage,
                              sizeof(c->binding->storage));
    if (rc != 0)
        return -1;
    c->request_seen = true;
    c->request_ok = !c->binding->request.truncated;
    c->first_stream = stream_id;
    return 0;
}

static const struct xlb_h2_scan_events receive_events = {
    .frame_end = on_frame_end,
    .header_block = on_header_block,
};

/* Take what is new of the segment's payload into in[]; false on an HTTP/2 error. */
static bool take(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c, uint32_t seq,
                 const uint8_t *data, uint32_t len)
{
    if (len == 0 || SEQ_LT(c->rcv_nxt, seq))
        return true; /* nothing, or out of order: the client will send it again */
    uint32_t skip = c->rcv_nxt - seq;
    if (skip >= len)
        return true; /* a retransmission of what is held */
    uint32_t n = len - skip, room = XLB_L7_IN_MAX - c->in_len;
    if (n > room)
        n = room;
    struct receive_step r = {ctx, c};
    if (xlb_h2_scan_feed(&c->scan, data + skip, n, &receive_events, &r) != 0)
        return false;
    memcpy(c->binding->in + c->in_len, data + skip, n);
    c->in_len += n;
    c->rcv_nxt += n;
    return true;
}

static void acknowledged(struct xlb_l7_conn *c, uint32_t ack)
{
    /* Unsigned distance: an ACK 2^31 away is neither ahead nor behind in serial arithmetic. */
    uint32_t n = ack - c->snd_una;
    if (n == 0 || n > c->out_len)
        return;
    memmove(c->out, c->out + n, c->out_len - n);
    c->out_len = (uint16_t)(c->out_len - n);
    c->snd_una = ack;
}

static bool ready(const struct xlb_l7_conn *c)
{
    return c->request_seen && c->settings_acked && c->out_len == 0;
}

xlb_verdict xlb_l7_receive(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                           struct xlb_tcp_packet *p, uint32_t tcp_len, struct xlb_l7_conn *c)
{
    const struct rte_tcp_hdr *tcp = p->tcp;
    uint8_t flags = tcp->tcp_flags;
    if (flags & RTE_TCP_RST_FLAG) {
        xlb_l7_close(ctx, c);
        return XLB_VERDICT_CONSUMED;
    }
    uint32_t hlen = xlb_tcp_header_len(tcp);
    struct xlb_tcp_opts o;
    if (xlb_tcp_options_parse((const uint8_t *)(tcp + 1), hlen - sizeof(*tcp), &o) != 0)
        return XLB_DROP_TCP_MALFORMED;
    uint32_t seq = rte_be_to_cpu_32(tcp->sent_seq);
    if (o.has_ts && SEQ_LE(seq, c->rcv_nxt))
        c->ts_recent = o.tsval;
    c->client_window = rte_be_to_cpu_16(tcp->rx_win);
    if (flags & RTE_TCP_ACK_FLAG)
        acknowledged(c, rte_be_to_cpu_32(tcp->recv_ack));
    uint32_t len = tcp_len - hlen, before = c->rcv_nxt;
    if (!take(ctx, c, seq, (const uint8_t *)tcp + hlen, len)) {
        /* A decoder that found the worker's HPACK heap empty is refused as for an empty pool
         * (a RST), counted apart from the client's errors. */
        bool heap = c->quota.pool_empty && c->quota.last_failed != 0;
        ctx->stats->events[heap ? XLB_EVENT_L7_HPACK_POOL_FULL : XLB_EVENT_L7_PROTOCOL_ERRORS]++;
        xlb_l7_abort(ctx, snap, c);
        return XLB_VERDICT_CONSUMED;
    }
    bool receiving = c->phase == XLB_L7_RECEIVING;
    /* While xlb connects to the backend, a FIN is left unacknowledged: the client sends it
     * again, and then it passes to the backend. */
    if (receiving && (flags & RTE_TCP_FIN_FLAG) && seq + len == c->rcv_nxt) {
        xlb_l7_abort(ctx, snap, c); /* the client gave up before its request was bound */
        return XLB_VERDICT_CONSUMED;
    }
    if (receiving && ready(c)) {
        xlb_l7_bind(ctx, snap, c);
        return XLB_VERDICT_CONSUMED;
    }
    if (receiving && c->in_len == XLB_L7_IN_MAX) {
        ctx->stats->events[XLB_EVENT_L7_RECEIVE_OVERFLOWS]++;
        xlb_l7_abort(ctx, snap, c);
        return XLB_VERDICT_CONSUMED;
    }
    /* Answer data (and resend what is unacknowledged of xlb's); a bare ACK needs nothing. */
    if (len != 0 || c->rcv_nxt != before || c->out_len != 0)
        xlb_l7_send_ts(ctx, snap, c, XLB_L7_TO_CLIENT, c->snd_una, c->rcv_nxt,
                       RTE_TCP_ACK_FLAG | (c->out_len != 0 ? RTE_TCP_PSH_FLAG : 0),
                       xlb_l7_receive_window(c), c->out, c->out_len);
    return XLB_VERDICT_CONSUMED;
}
