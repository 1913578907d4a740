/*
 * Opening a client connection, as the relay opens its client side: the SYN is answered with a
 * SYN cookie (no state); the ACK that returns a valid one gets a flow (the client's key; no
 * backend: requests are picked one by one later), the accepted TCP connection and its HTTP/2
 * session. Anything that fails before the connection exists is answered with a RST by the flow
 * layer; nothing is held for a forged ACK.
 */
#include <string.h>
#include <sys/socket.h>

#include "stream_conn.h"
#include "tcp_accept.h"

static xlb_verdict answer_syn(struct xlb_stream_worker *w, struct xlb_burst_ctx *ctx,
                              const struct xlb_snapshot *snap, struct xlb_frame *frame,
                              const struct xlb_tcp_packet *p)
{
    struct xlb_syn_cookie_keys keys;
    xlb_accept_cookie_keys(ctx, &keys);
    xlb_stream_enter(w, ctx, snap, NULL);
    w->reply_mac = frame->eth->src_addr;
    w->reply_port = p->port_index;
    xlb_accept_mss_limit(w->ep, snap, p->family, p->port_index);
    if (xlb_tcp_answer_syn(w->ep, xlb_accept_ip_packet(frame), &keys, xlb_stream_now_ms(ctx)) == 0)
        ctx->stats->events[XLB_EVENT_STREAM_SYN_COOKIES_SENT]++;
    xlb_stream_route_output(w);
    return XLB_VERDICT_SENT;
}

/* The client's flow: its key, the VIP as the "backend" (no backend is bound to it). */
static struct xlb_flow *make_flow(struct xlb_burst_ctx *ctx, const struct xlb_frame *frame,
                                  const struct xlb_tcp_packet *p, const struct xlb_flow_key *key,
                                  const struct xlb_vip_view *vip, xlb_verdict *verdict)
{
    enum xlb_flow_create_failure why = XLB_FLOW_CREATE_TABLE_FULL;
    struct xlb_flow *f = xlb_flow_create(ctx->flows, key, &vip->addr, key->dst_port, &why);
    if (f == NULL) {
        *verdict = xlb_flow_create_drop(why);
        return NULL;
    }
    f->kind = XLB_FLOW_KIND_STREAM_CLIENT;
    f->client_mac = frame->eth->src_addr;
    f->client_port_index = p->port_index;
    f->backend_mac = frame->eth->src_addr;
    f->backend_port_index = p->port_index;
    f->endpoint_slot = XLB_ENDPOINT_SLOTS; /* nothing counted for the connection itself */
    f->cluster_slot = XLB_CLUSTER_SLOTS;
    f->state = XLB_FLOW_ESTABLISHED;
    xlb_flow_set_timeout(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz, XLB_FLOW_ESTABLISHED_TIMEOUT_S);
    xlb_flow_schedule(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz);
    ctx->stats->events[XLB_EVENT_FLOWS_CREATED]++;
    return f;
}

static void conn_init(struct xlb_stream_conn *c, const struct xlb_snapshot *snap,
                      const struct xlb_frame *frame, const struct xlb_tcp_packet *p,
                      const struct xlb_flow_key *key)
{
    size_t len = key->family == AF_INET ? 4 : 16;
    c->key = *key;
    c->side.link.tuple.family = key->family;
    memcpy(c->side.link.tuple.local, key->dst, len);
    memcpy(c->side.link.tuple.remote, key->src, len);
    c->side.link.tuple.local_port = key->dst_port;
    c->side.link.tuple.remote_port = key->src_port;
    c->side.link.mac = frame->eth->src_addr;
    c->side.link.local = snap->ports[p->port_index].mac;
    c->side.link.flat = !snap->ports[p->port_index].tx_multi_seg;
    c->side.link.port_index = p->port_index;
}

static xlb_verdict open_conn(struct xlb_stream_worker *w, struct xlb_burst_ctx *ctx,
                             const struct xlb_snapshot *snap, struct xlb_frame *frame,
                             const struct xlb_tcp_packet *p, const struct xlb_flow_key *key,
                             const struct xlb_vip_view *vip)
{
    if (w->free_head == XLB_STREAM_NONE) {
        ctx->stats->events[XLB_EVENT_STREAM_POOL_FULL]++;
        return XLB_DROP_TCP_NO_FLOW;
    }
    struct xlb_stream_conn *c = xlb_stream_conn_alloc(w);
    if (!xlb_stream_session_open(c)) {
        ctx->stats->events[XLB_EVENT_STREAM_HEAP_FULL]++;
        xlb_stream_conn_free(w, c);
        return XLB_DROP_TCP_NO_FLOW;
    }
    xlb_verdict verdict = XLB_VERDICT_TX;
    struct xlb_flow *f = make_flow(ctx, frame, p, key, vip, &verdict);
    if (f == NULL) {
        xlb_stream_conn_free(w, c);
        return verdict;
    }
    c->side.flow = (uint32_t)(f - ctx->flows->flows);
    f->stream = (uint32_t)(c - w->conns);
    conn_init(c, snap, frame, p, key);

    struct xlb_syn_cookie_keys keys;
    xlb_accept_cookie_keys(ctx, &keys);
    xlb_stream_enter(w, ctx, snap, &c->side.link);
    if (vip->tls != NULL && !xlb_stream_tls_accept(&c->side, vip)) {
        xlb_flow_release(ctx, f); /* frees c through xlb_stream_release */
        return XLB_DROP_TCP_NO_FLOW;
    }
    xlb_accept_mss_limit(w->ep, snap, p->family, p->port_index);
    struct xlb_tcp_conn *tcp =
        xlb_tcp_accept(w->ep, xlb_accept_ip_packet(frame), &keys, xlb_stream_now_ms(ctx),
                       &xlb_stream_client_callbacks, c);
    if (tcp == NULL) {
        xlb_stream_route_output(w);
        xlb_flow_release(ctx, f); /* frees c through xlb_stream_release */
        return XLB_VERDICT_SENT;
    }
    ctx->stats->events[XLB_EVENT_STREAM_OPENED]++;
    xlb_stream_pump(&c->side); /* SETTINGS, and whatever came with the ACK */
    xlb_stream_route_output(w);
    return XLB_VERDICT_SENT;
}

xlb_verdict xlb_stream_no_flow(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                               struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len,
                               const struct xlb_flow_key *key, const struct xlb_vip_view *vip)
{
    struct xlb_stream_worker *w = ctx->stream;
    if (w == NULL || ctx->flows == NULL)
        return XLB_DROP_TCP_NO_SERVICE;
    uint8_t flags = p->tcp->tcp_flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG);
    if (flags == RTE_TCP_SYN_FLAG)
        return answer_syn(w, ctx, snap, frame, p);
    if (flags != RTE_TCP_ACK_FLAG)
        return XLB_DROP_TCP_NO_FLOW;
    if (!xlb_accept_cookie_valid(ctx, p->tcp, xlb_tcp_payload_len(p->tcp, tcp_len), key)) {
        ctx->stats->events[XLB_EVENT_STREAM_BAD_COOKIES]++;
        return XLB_DROP_TCP_NO_FLOW;
    }
    return open_conn(w, ctx, snap, frame, p, key, vip);
}

/* A segment of a client connection; a connection over takes nothing more, except one in
 * TIME-WAIT, which answers a retransmitted FIN while the flow lasts. */
xlb_verdict xlb_stream_from_client(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                   struct xlb_frame *frame, struct xlb_flow *f)
{
    struct xlb_stream_worker *w = ctx->stream;
    if (w == NULL || f->stream >= w->n_conns || !w->conns[f->stream].side.link.in_use)
        return XLB_DROP_STREAM_ENDED;
    struct xlb_stream_conn *c = &w->conns[f->stream];
    struct xlb_tcp_conn *tcp = c->side.tcp;
    if (tcp != NULL && c->side.done &&
        !(xlb_tcp_conn_state(tcp) == XLB_TCP_TIME_WAIT && xlb_tcp_conn_user(tcp) == c))
        tcp = NULL;
    if (tcp == NULL)
        return XLB_DROP_STREAM_ENDED;
    if (!c->side.done)
        xlb_flow_set_timeout(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz,
                             XLB_FLOW_ESTABLISHED_TIMEOUT_S);
    rte_pktmbuf_adj(frame->m, frame->l2_len);
    xlb_stream_enter(w, ctx, snap, &c->side.link);
    xlb_tcp_receive(w->ep, tcp, frame->m, xlb_stream_now_ms(ctx));
    xlb_stream_route_output(w);
    return XLB_VERDICT_SENT;
}
