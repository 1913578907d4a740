/*
 * The client's handshake with xlb, stateless until it completes: the SYN is answered with a
 * SYN cookie (dataplane/l7/tcpwire/xlb_syn_cookie.h) carrying the client's MSS, window scale,
 * SACK and timestamp options; only the ACK that returns a valid cookie takes a connection
 * from the pool and a flow. A SYN flood therefore costs no memory.
 */
#include <string.h>
#include <sys/socket.h>

#include <rte_ip.h>

#include "l7_conn.h"
#include "xlb_lb.h"

/* The MSS xlb announces: what the client's port carries (xlb.tcp_mss_clamp, its MTU), or a
 * 1500-byte path's when clamping is off. */
static uint16_t xlb_mss(const struct xlb_snapshot *snap, const struct xlb_tcp_packet *p)
{
    uint16_t max = xlb_egress_mss_max(snap, p->family, p->port_index, p->port_index);
    if (max != 0)
        return max;
    return p->family == AF_INET ? 1460 : 1440;
}

static void cookie_tuple(const struct xlb_flow_key *key, struct xlb_syn_cookie_tuple *t)
{
    memset(t, 0, sizeof(*t));
    t->family = key->family;
    memcpy(t->client, key->src, 16);
    memcpy(t->vip, key->dst, 16);
    t->client_port = key->src_port;
    t->vip_port = key->dst_port;
}

static bool parse_options(const struct rte_tcp_hdr *tcp, struct xlb_tcp_opts *o)
{
    uint32_t len = xlb_tcp_options_len(tcp);
    return xlb_tcp_options_parse((const uint8_t *)(tcp + 1), len, o) == 0;
}

/*
 * The SYN-ACK, written over the SYN (an mbuf holds far more than the 60-byte header): the
 * addresses and ports swapped, the cookie as ISN, the options the cookie can give back.
 */
static xlb_verdict answer_syn(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                              struct xlb_frame *frame, struct xlb_tcp_packet *p,
                              const struct xlb_flow_key *key)
{
    struct rte_tcp_hdr *tcp = p->tcp;
    struct xlb_tcp_opts in;
    if (!parse_options(tcp, &in))
        return XLB_DROP_TCP_MALFORMED;
    struct xlb_syn_cookie_opts want =
                                   {
                                       .mss = in.mss != 0 ? in.mss : 536,
                                       .wscale = in.wscale,
                                       .has_wscale = in.has_wscale,
                                       .sack_ok = in.sack_ok,
                                       .has_ts = in.has_ts,
                                   },
                               got;
    struct xlb_syn_cookie_tuple t;
    cookie_tuple(key, &t);
    uint32_t client_isn = rte_be_to_cpu_32(tcp->sent_seq), tsval = 0;
    uint32_t isn = xlb_syn_cookie_make(&ctx->l7->keys, &t, client_isn, &want, xlb_l7_now_ms(ctx),
                                       &tsval, &got);
    struct xlb_tcp_opts out = {
        .mss = xlb_mss(snap, p),
        .has_wscale = got.has_wscale,
        .wscale = XLB_L7_WSCALE,
        .sack_ok = got.sack_ok,
        .has_ts = got.has_ts,
        .tsval = tsval,
        .tsecr = in.tsval,
    };
    uint8_t options[40];
    uint32_t options_len = xlb_tcp_options_write_syn(options, &out);
    uint16_t sport = tcp->src_port;
    tcp->src_port = tcp->dst_port;
    tcp->dst_port = sport;
    tcp->sent_seq = rte_cpu_to_be_32(isn);
    tcp->recv_ack = rte_cpu_to_be_32(client_isn + 1);
    tcp->tcp_flags = RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG;
    tcp->data_off = (uint8_t)(((sizeof(*tcp) + options_len) / 4) << 4);
    tcp->rx_win = rte_cpu_to_be_16(UINT16_MAX);
    tcp->tcp_urp = 0;
    memcpy(tcp + 1, options, options_len);
    if (!xlb_frame_set_l3_len(frame,
                              xlb_egress_turn_around(p, (uint32_t)sizeof(*tcp) + options_len)))
        return XLB_DROP_TCP_MALFORMED;
    xlb_frame_reply_ethernet(frame, &snap->ports[p->port_index].mac);
    ctx->stats->events[XLB_EVENT_L7_SYN_COOKIES_SENT]++;
    return XLB_VERDICT_TX;
}

static struct xlb_l7_conn *new_conn(struct xlb_burst_ctx *ctx, const struct xlb_flow_key *key,
                                    struct xlb_frame *frame, const struct xlb_tcp_packet *p,
                                    xlb_verdict *why)
{
    void *obj, *binding;
    if (rte_mempool_get(ctx->l7->conns, &obj) != 0) {
        /* Refused with a RST, the client gives up at once: the ACK becomes that RST, so the
         * refusal is an event and the packet counts once, as sent. */
        ctx->stats->events[XLB_EVENT_L7_POOL_FULL]++;
        *why = XLB_DROP_TCP_NO_FLOW;
        return NULL;
    }
    if (rte_mempool_get(ctx->l7->bindings, &binding) != 0) {
        rte_mempool_put(ctx->l7->conns, obj);
        /* The same refusal (a RST, the packet counted once as sent), told apart: the binding
         * pool is sized as a share of the connection pool (l7_worker.c). */
        ctx->stats->events[XLB_EVENT_L7_BINDING_POOL_FULL]++;
        *why = XLB_DROP_TCP_NO_FLOW;
        return NULL;
    }
    struct xlb_l7_conn *c = obj;
    /* HPACK memory comes first (both decoders' floors, the client's decoder): a refusal then
     * leaves no flow. */
    struct xlb_h2_pool *hpack = &ctx->l7->hpack_pool;
    if (!xlb_h2_quota_init(&c->quota, hpack, XLB_L7_HPACK_FLOOR, XLB_L7_HPACK_LIMIT) ||
        !xlb_h2_quota_init(&c->s2c_quota, hpack, XLB_L7_HPACK_FLOOR, XLB_L7_HPACK_LIMIT) ||
        xlb_hpack_decoder_init_quota(&c->hpack, &c->quota) != 0) {
        xlb_h2_quota_fini(&c->quota);
        xlb_h2_quota_fini(&c->s2c_quota);
        rte_mempool_put(ctx->l7->conns, obj);
        rte_mempool_put(ctx->l7->bindings, binding);
        ctx->stats->events[XLB_EVENT_L7_HPACK_POOL_FULL]++; /* refused as above */
        *why = XLB_DROP_TCP_NO_FLOW;
        return NULL;
    }
    struct xlb_addr unbound = {.family = key->family}; /* the backend comes with the request */
    enum xlb_flow_create_failure reason = XLB_FLOW_CREATE_TABLE_FULL;
    struct xlb_flow *f = xlb_flow_create(ctx->flows, key, &unbound, 0, &reason);
    if (f == NULL) {
        xlb_hpack_decoder_fini(&c->hpack);
        xlb_h2_quota_fini(&c->quota);
        xlb_h2_quota_fini(&c->s2c_quota);
        rte_mempool_put(ctx->l7->conns, obj);
        rte_mempool_put(ctx->l7->bindings, binding);
        *why = xlb_flow_create_drop(reason);
        return NULL;
    }
    /* The buffers need no clearing: lengths say what is valid. */
    uint32_t index = c->index;
    memset(c, 0, offsetof(struct xlb_l7_conn, scan));
    c->index = index;
    c->binding = binding;
    c->flow = f;
    f->kind = XLB_FLOW_KIND_L7_SPLICE;
    f->l7_conn = index;
    f->client_mac = frame->eth->src_addr;
    f->client_port_index = (uint8_t)p->port_index;
    f->endpoint_slot = XLB_ENDPOINT_SLOTS; /* none yet: nothing counted */
    f->cluster_slot = XLB_CLUSTER_SLOTS;
    f->state = XLB_FLOW_ESTABLISHED;
    xlb_flow_set_timeout(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz, XLB_L7_RECEIVING_TIMEOUT_S);
    xlb_flow_schedule(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz);
    xlb_h2_scan_init(&c->scan, true, c->block, sizeof(c->block));
    ctx->stats->events[XLB_EVENT_L7_CONNECTIONS]++;
    return c;
}

/* The ACK completing a cookie handshake: a connection, and xlb's SETTINGS at once. */
static xlb_verdict accept_ack(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                              struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len,
                              const struct xlb_flow_key *key)
{
    struct rte_tcp_hdr *tcp = p->tcp;
    struct xlb_tcp_opts o;
    if (!parse_options(tcp, &o))
        return XLB_DROP_TCP_MALFORMED;
    struct xlb_syn_cookie_tuple t;
    cookie_tuple(key, &t);
    uint32_t seq = rte_be_to_cpu_32(tcp->sent_seq), ack = rte_be_to_cpu_32(tcp->recv_ack);
    struct xlb_syn_cookie_opts opts;
    if (xlb_syn_cookie_check(&ctx->l7->keys, &t, seq, ack, o.has_ts, o.tsecr, xlb_l7_now_ms(ctx),
                             &opts) != 0) {
        ctx->stats->events[XLB_EVENT_L7_BAD_COOKIES]++;
        return XLB_DROP_TCP_NO_FLOW; /* answered with a RST by the NAT */
    }
    xlb_verdict why = XLB_DROP_TCP_NO_FLOW;
    struct xlb_l7_conn *c = new_conn(ctx, key, frame, p, &why);
    if (c == NULL)
        return why;
    c->client = opts;
    c->xlb_wscale = opts.has_wscale ? XLB_L7_WSCALE : 0;
    c->client_isn = seq - 1;
    c->rcv_nxt = seq;
    c->ts_recent = o.has_ts ? o.tsval : 0;
    c->snd_una = c->snd_nxt = ack;
    c->out_len = (uint16_t)xlb_h2_settings_frame(c->out);
    c->snd_nxt = c->snd_una + c->out_len;
    /* The ACK itself may carry the preface: receive it like any later segment. */
    xlb_verdict verdict = xlb_l7_receive(ctx, snap, p, tcp_len, c);
    return verdict;
}

xlb_verdict xlb_l7_no_flow(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                           struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len,
                           const struct xlb_flow_key *key, const struct xlb_vip_view *vip)
{
    (void)vip;
    if (ctx->l7 == NULL)
        return XLB_DROP_TCP_NO_SERVICE;
    uint8_t flags = p->tcp->tcp_flags &
                    (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG | RTE_TCP_FIN_FLAG);
    if (flags == RTE_TCP_SYN_FLAG)
        return answer_syn(ctx, snap, frame, p, key);
    if ((flags & (RTE_TCP_ACK_FLAG | RTE_TCP_SYN_FLAG | RTE_TCP_RST_FLAG)) == RTE_TCP_ACK_FLAG)
        return accept_ack(ctx, snap, frame, p, tcp_len, key);
    return XLB_DROP_TCP_NO_FLOW;
}
