/*
 * The SYN proxy of L4 VIPs (xlb.l4_syn_proxy, docs/forwarding.md "SYN proxy"): a client's SYN
 * is answered with a SYN cookie (tcpwire's codec, as the L7 engine's) and makes no flow; the
 * ACK returning a valid cookie picks the backend, makes the flow (kind NAT_PROXY, state
 * SYN_SENT) and is itself rewritten into the SYN to the backend, carrying the client's ISN and
 * the options the cookie gave back. The backend's SYN-ACK is absorbed and ACKed by xlb; from
 * then on the backend's sequence numbers and timestamps are shifted into the client's view and
 * back (dataplane/flow/seq_shift.h). The client's ISN is the backend's, so client sequence
 * numbers and backend SACK edges need no change.
 *
 * Data that comes with or after the ACK before the backend answers is dropped (counted as
 * syn_proxy_backend_pending) and left to the client's retransmission; a retransmitted segment
 * at the client's first sequence number re-sends the backend SYN, so the client's timer drives
 * the backend's retries and xlb holds nothing.
 *
 * The flow's side word (struct xlb_flow_table side[]) holds, in SYN_SENT, the cookie ISN and
 * xlb's TSval from the cookie SYN-ACK; once established, the offsets from backend to client.
 */
#include <string.h>
#include <sys/socket.h>

#include "flow/seq_shift.h"
#include "nat_proxy.h"
#include "nat_rewrite.h"
#include "nat_window.h"

static union xlb_nat_proxy_side *side_of(const struct xlb_flow_table *t, const struct xlb_flow *f)
{
    return xlb_nat_proxy_side_of(t, f);
}

static uint64_t now_ms(const struct xlb_burst_ctx *ctx)
{
    uint64_t per_ms = ctx->tsc_hz / 1000;
    return ctx->now_tsc / (per_ms != 0 ? per_ms : 1);
}

static void cookie_keys(const struct xlb_burst_ctx *ctx, struct xlb_syn_cookie_keys *k)
{
    xlb_syn_cookie_keys_init(k, ctx->flows->secret);
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
    return xlb_tcp_options_parse((const uint8_t *)(tcp + 1), xlb_tcp_options_len(tcp), o) == 0;
}

/* Write a header without payload over the segment: its options, flags, seq and ack; the
 * lengths and checksums follow. The new TCP length. */
static uint32_t write_header(struct rte_tcp_hdr *tcp, uint8_t flags, uint32_t seq, uint32_t ack,
                             uint16_t window, const struct xlb_tcp_opts *o, bool syn_options)
{
    uint8_t options[40] = {0};
    uint32_t len = 0;
    if (syn_options)
        len = xlb_tcp_options_write_syn(options, o);
    else if (o->has_ts)
        len = xlb_tcp_options_write_ts(options, o->tsval, o->tsecr);
    tcp->sent_seq = rte_cpu_to_be_32(seq);
    tcp->recv_ack = rte_cpu_to_be_32(ack);
    tcp->tcp_flags = flags;
    tcp->data_off = (uint8_t)(((sizeof(*tcp) + len) / 4) << 4);
    tcp->rx_win = rte_cpu_to_be_16(window);
    tcp->tcp_urp = 0;
    memcpy(tcp + 1, options, len);
    return (uint32_t)sizeof(*tcp) + len;
}

/* The client's SYN answered with a cookie SYN-ACK, written over it. No flow. */
static xlb_verdict answer_syn(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                              struct xlb_frame *frame, struct xlb_tcp_packet *p,
                              const struct xlb_flow_key *key)
{
    struct rte_tcp_hdr *tcp = p->tcp;
    struct xlb_tcp_opts in;
    if (!parse_options(tcp, &in))
        return XLB_DROP_TCP_MALFORMED;
    struct xlb_syn_cookie_opts want = {.mss = in.mss != 0 ? in.mss : 536,
                                       .wscale = in.wscale,
                                       .has_wscale = in.has_wscale,
                                       .sack_ok = in.sack_ok,
                                       .has_ts = in.has_ts},
                               got;
    struct xlb_syn_cookie_keys keys;
    struct xlb_syn_cookie_tuple t;
    cookie_keys(ctx, &keys);
    cookie_tuple(key, &t);
    uint32_t client_isn = rte_be_to_cpu_32(tcp->sent_seq), tsval = 0;
    uint32_t isn = xlb_syn_cookie_make(&keys, &t, client_isn, &want, now_ms(ctx), &tsval, &got);
    uint16_t mss = xlb_egress_mss_max(snap, p->family, p->port_index, p->port_index);
    struct xlb_tcp_opts out = {
        .mss = mss != 0 ? mss : (p->family == AF_INET ? 1460 : 1440),
        .has_wscale = got.has_wscale,
        .wscale = XLB_NAT_PROXY_WSCALE,
        .sack_ok = got.sack_ok,
        .has_ts = got.has_ts,
        .tsval = tsval,
        .tsecr = in.tsval,
    };
    uint16_t sport = tcp->src_port;
    tcp->src_port = tcp->dst_port;
    tcp->dst_port = sport;
    uint32_t len = write_header(tcp, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, isn, client_isn + 1,
                                UINT16_MAX, &out, true);
    if (!xlb_frame_set_l3_len(frame, xlb_egress_turn_around(p, len)))
        return XLB_DROP_TCP_MALFORMED;
    xlb_frame_reply_ethernet(frame, &snap->ports[p->port_index].mac);
    ctx->stats->events[XLB_EVENT_SYN_PROXY_COOKIES_SENT]++;
    return XLB_VERDICT_TX;
}

/* Whether a client segment returns one of our cookies; *opts what it encoded, *o the
 * segment's own options. */
static bool cookie_valid(struct xlb_burst_ctx *ctx, const struct rte_tcp_hdr *tcp,
                         const struct xlb_flow_key *key, struct xlb_tcp_opts *o,
                         struct xlb_syn_cookie_opts *opts)
{
    if (!parse_options(tcp, o))
        return false;
    struct xlb_syn_cookie_keys keys;
    struct xlb_syn_cookie_tuple t;
    cookie_keys(ctx, &keys);
    cookie_tuple(key, &t);
    return xlb_syn_cookie_check(&keys, &t, rte_be_to_cpu_32(tcp->sent_seq),
                                rte_be_to_cpu_32(tcp->recv_ack), o->has_ts, o->tsecr, now_ms(ctx),
                                opts) == 0;
}

bool xlb_nat_proxy_cookie_opts(struct xlb_burst_ctx *ctx, struct xlb_flow *f,
                               struct xlb_syn_cookie_opts *opts)
{
    const union xlb_nat_proxy_side *side = side_of(ctx->flows, f);
    struct xlb_flow_key key;
    struct xlb_syn_cookie_keys keys;
    struct xlb_syn_cookie_tuple t;
    xlb_flow_client_key(ctx->flows, f, &key);
    cookie_keys(ctx, &keys);
    cookie_tuple(&key, &t);
    /* The client's ACK as it was: its seq (the ISN + 1), its ACK of the cookie and, when the
     * cookie SYN-ACK carried a timestamp, xlb's TSval echoed. */
    return xlb_syn_cookie_check(&keys, &t, f->window.end[XLB_FLOW_FROM_CLIENT], side->seq_add + 1,
                                side->ts_add != 0, side->ts_add, now_ms(ctx), opts) == 0;
}

/* The client's ACK (or first data segment) rewritten into the SYN to the backend: the client's
 * ISN and the options the cookie gave back; its payload dropped (the client sends it again). */
static xlb_verdict send_backend_syn(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                    struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                    struct xlb_flow *f, const struct xlb_tcp_opts *o,
                                    const struct xlb_syn_cookie_opts *opts)
{
    struct rte_tcp_hdr *tcp = p->tcp;
    uint32_t client_isn = rte_be_to_cpu_32(tcp->sent_seq) - 1;
    union xlb_nat_proxy_side *side = side_of(ctx->flows, f);
    side->seq_add = rte_be_to_cpu_32(tcp->recv_ack) - 1; /* the cookie ISN */
    side->ts_add = opts->has_ts ? o->tsecr : 0;          /* xlb's TSval, echoed */
    uint32_t client_tsval = o->tsval;
    struct xlb_tcp_opts syn = {
        .mss = opts->mss,
        .has_wscale = opts->has_wscale,
        .wscale = opts->wscale,
        .sack_ok = opts->sack_ok,
        .has_ts = opts->has_ts,
        .tsval = o->tsval,
    };
    uint32_t len = write_header(tcp, RTE_TCP_SYN_FLAG, client_isn, 0, rte_be_to_cpu_16(tcp->rx_win),
                                &syn, true);
    if (!xlb_frame_set_l3_len(frame, xlb_egress_set_tcp_len(p, len)))
        return XLB_DROP_TCP_MALFORMED;
    xlb_verdict verdict = xlb_nat_send_from_client(ctx, snap, frame, p, len, f);
    /* After the client's SYN has (re)started the window's client half: the backend half is
     * free until the backend answers. */
    *xlb_nat_proxy_client_tsval(f) = client_tsval;
    return verdict;
}

/* A valid cookie: the pick, the flow, the backend SYN; a RST to the client when the pick or
 * the flow fails. */
static xlb_verdict accept_ack(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                              struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len,
                              const struct xlb_flow_key *key, const struct xlb_vip_view *vip,
                              const struct xlb_tcp_opts *o, const struct xlb_syn_cookie_opts *opts)
{
    struct xlb_flow *f = NULL;
    xlb_verdict verdict = xlb_nat_new_flow(ctx, snap, frame, p, key, vip, 0, false, &f);
    if (verdict != XLB_VERDICT_TX) {
        /* The client believes it is connected and may wait for the server to speak: dropping
         * its ACK would leave it hanging (a pure ACK is never sent again), so it is told at
         * once with a RST. The frame leaves as that RST: it is counted as a backend failure,
         * not as a drop (each packet ends one way). */
        ctx->stats->events[XLB_EVENT_SYN_PROXY_BACKEND_FAILURES]++;
        return xlb_egress_reset_reply(ctx, snap, frame, p, tcp_len);
    }
    f->kind = XLB_FLOW_KIND_NAT_PROXY;
    verdict = send_backend_syn(ctx, snap, frame, p, f, o, opts);
    if (verdict == XLB_VERDICT_SENT)
        xlb_nat_proxy_arm_syn_timer(ctx, f);
    return verdict;
}

xlb_verdict xlb_nat_proxy_no_flow(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                  struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                  uint32_t tcp_len, const struct xlb_flow_key *key,
                                  const struct xlb_vip_view *vip)
{
    uint8_t flags = p->tcp->tcp_flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG);
    if (flags == RTE_TCP_SYN_FLAG)
        return answer_syn(ctx, snap, frame, p, key);
    if (flags != RTE_TCP_ACK_FLAG)
        return XLB_DROP_TCP_NO_FLOW;
    struct xlb_tcp_opts o;
    struct xlb_syn_cookie_opts opts;
    if (cookie_valid(ctx, p->tcp, key, &o, &opts)) {
        ctx->stats->events[XLB_EVENT_SYN_PROXY_VALID_ACKS]++;
        return accept_ack(ctx, snap, frame, p, tcp_len, key, vip, &o, &opts);
    }
    ctx->stats->events[XLB_EVENT_SYN_PROXY_INVALID_ACKS]++;
    /* Not a handshake of ours: answered with a RST, as without the proxy (and as Linux
     * answers a bad cookie): a client of a connection lost in a restart learns at once, and a
     * forged ACK gets one RST back, no more. (Proxied VIPs never pick by hash: nothing to pick
     * up.) */
    (void)tcp_len;
    return XLB_DROP_TCP_NO_FLOW;
}

/* A client RST before the backend answered: it goes on without an ACK (whose number is in the
 * cookie's space, unknown to the backend), at the client's next sequence number. */
static xlb_verdict early_reset(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                               struct xlb_frame *frame, struct xlb_tcp_packet *p,
                               struct xlb_flow *f)
{
    struct xlb_tcp_opts none = {0};
    uint32_t len = write_header(p->tcp, RTE_TCP_RST_FLAG, rte_be_to_cpu_32(p->tcp->sent_seq), 0, 0,
                                &none, false);
    if (!xlb_frame_set_l3_len(frame, xlb_egress_set_tcp_len(p, len)))
        return XLB_DROP_TCP_MALFORMED;
    return xlb_nat_send_from_client(ctx, snap, frame, p, len, f);
}

xlb_verdict xlb_nat_proxy_from_client(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                      struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                      uint32_t tcp_len, struct xlb_flow *f)
{
    struct rte_tcp_hdr *tcp = p->tcp;
    const union xlb_nat_proxy_side *side = side_of(ctx->flows, f);
    if (f->state == XLB_FLOW_SYN_SENT) {
        uint8_t flags = tcp->tcp_flags;
        if (flags & RTE_TCP_RST_FLAG)
            return early_reset(ctx, snap, frame, p, f);
        struct xlb_flow_key key;
        struct xlb_tcp_opts o;
        struct xlb_syn_cookie_opts opts;
        xlb_flow_key_of(p, &key);
        /* The client's segment at its first sequence number, sent again because the backend
         * has not answered yet: the backend gets its SYN again. */
        if ((flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG)) == RTE_TCP_ACK_FLAG &&
            rte_be_to_cpu_32(tcp->sent_seq) == f->window.end[XLB_FLOW_FROM_CLIENT] &&
            rte_be_to_cpu_32(tcp->recv_ack) == side->seq_add + 1 &&
            cookie_valid(ctx, tcp, &key, &o, &opts)) {
            ctx->stats->events[XLB_EVENT_SYN_PROXY_BACKEND_SYN_RETRANSMITS]++;
            /* The timer keeps its own pace (and its count): a client retransmitting faster
             * than it would otherwise hold it off for ever. */
            uint32_t expires_s = f->expires_s;
            uint8_t sends = *xlb_nat_proxy_syn_sends(f);
            xlb_verdict verdict = send_backend_syn(ctx, snap, frame, p, f, &o, &opts);
            f->expires_s = expires_s;
            *xlb_nat_proxy_syn_sends(f) = sends;
            return verdict;
        }
        return XLB_DROP_SYN_PROXY_BACKEND_PENDING;
    }
    struct xlb_seq_shift shift = {
        .ack = -side->seq_add, .sack = -side->seq_add, .tsecr = -side->ts_add};
    if (!xlb_seq_shift_segment(tcp, &shift))
        return XLB_DROP_TCP_MALFORMED;
    return xlb_nat_send_from_client(ctx, snap, frame, p, tcp_len, f);
}

/* The backend's SYN-ACK, absorbed: the offsets are fixed, and it is answered with the ACK the
 * client already sent xlb (written over it, back to the backend). */
static xlb_verdict absorb_syn_ack(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                  struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                  uint32_t tcp_len, struct xlb_flow *f)
{
    struct rte_tcp_hdr *tcp = p->tcp;
    struct xlb_tcp_opts o;
    if (!parse_options(tcp, &o))
        return XLB_DROP_TCP_MALFORMED;
    if (!xlb_nat_track(ctx, f, tcp, xlb_tcp_payload_len(tcp, tcp_len), XLB_FLOW_FROM_BACKEND))
        return XLB_DROP_TCP_OUT_OF_WINDOW;
    union xlb_nat_proxy_side *side = side_of(ctx->flows, f);
    uint32_t backend_isn = rte_be_to_cpu_32(tcp->sent_seq);
    side->seq_add -= backend_isn;                         /* cookie ISN - backend ISN */
    side->ts_add = o.has_ts ? side->ts_add - o.tsval : 0; /* xlb's TSval - the backend's */
    uint8_t ws = f->window.wscale[XLB_FLOW_FROM_CLIENT];
    ws = ws == XLB_FLOW_WSCALE_NONE ? 0 : ws;
    struct xlb_tcp_opts ack = {.has_ts = o.has_ts, .tsval = o.tsecr, .tsecr = o.tsval};
    uint16_t sport = tcp->src_port;
    tcp->src_port = tcp->dst_port;
    tcp->dst_port = sport;
    uint32_t len = write_header(tcp, RTE_TCP_ACK_FLAG, rte_be_to_cpu_32(tcp->recv_ack),
                                backend_isn + 1, (uint16_t)(UINT16_MAX >> ws), &ack, false);
    if (!xlb_frame_set_l3_len(frame, xlb_egress_turn_around(p, len)))
        return XLB_DROP_TCP_MALFORMED;
    xlb_frame_reply_ethernet(frame, &snap->ports[p->port_index].mac);
    return XLB_VERDICT_TX;
}

/* The backend refused (or reset) the proxy's SYN: the client, whose handshake xlb completed,
 * gets the RST at the cookie's next sequence number. */
static xlb_verdict refused(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                           struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len,
                           struct xlb_flow *f)
{
    struct rte_tcp_hdr *tcp = p->tcp;
    uint32_t cookie_isn = side_of(ctx->flows, f)->seq_add;
    if (!xlb_nat_track(ctx, f, tcp, xlb_tcp_payload_len(tcp, tcp_len), XLB_FLOW_FROM_BACKEND))
        return XLB_DROP_TCP_OUT_OF_WINDOW;
    ctx->stats->events[XLB_EVENT_SYN_PROXY_BACKEND_FAILURES]++;
    struct xlb_tcp_opts none = {0};
    uint32_t len = write_header(tcp, RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG, cookie_isn + 1,
                                f->window.end[XLB_FLOW_FROM_CLIENT], 0, &none, false);
    if (!xlb_frame_set_l3_len(frame, xlb_egress_set_tcp_len(p, len)))
        return XLB_DROP_TCP_MALFORMED;
    to_client(ctx, snap, frame->m, p, f);
    return XLB_VERDICT_SENT;
}

/*
 * The backend answered the proxy's SYN with an ACK of something else: what it has left of an
 * earlier connection on the SNAT port (a TIME-WAIT, the SNAT port being reused), which will
 * answer every SYN so until it ends. A client's TCP answers such an ACK with a RST at its
 * number (RFC 9293 3.10.7.3), which ends the TIME-WAIT (RFC 1337's hazard, which Linux
 * accepts), and its next SYN gets through; behind the proxy the client never sees that ACK,
 * so xlb sends the RST itself, written over the ACK, and its SYN timer sends the SYN again.
 */
static xlb_verdict reset_stale(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                               struct xlb_frame *frame, struct xlb_tcp_packet *p)
{
    struct rte_tcp_hdr *tcp = p->tcp;
    struct xlb_tcp_opts none = {0};
    uint16_t sport = tcp->src_port;
    tcp->src_port = tcp->dst_port;
    tcp->dst_port = sport;
    uint32_t len =
        write_header(tcp, RTE_TCP_RST_FLAG, rte_be_to_cpu_32(tcp->recv_ack), 0, 0, &none, false);
    if (!xlb_frame_set_l3_len(frame, xlb_egress_turn_around(p, len)))
        return XLB_DROP_TCP_MALFORMED;
    xlb_frame_reply_ethernet(frame, &snap->ports[p->port_index].mac);
    ctx->stats->events[XLB_EVENT_SYN_PROXY_STALE_RESETS]++;
    return XLB_VERDICT_TX;
}

/*
 * The backend's window in the client's scale: xlb told the client XLB_NAT_PROXY_WSCALE, the
 * backend scales by its own shift. Rounded down (never more than the backend offers).
 */
static void translate_window(struct rte_tcp_hdr *tcp, const struct xlb_flow *f)
{
    uint8_t backend = f->window.wscale[XLB_FLOW_FROM_BACKEND];
    uint8_t client = f->window.wscale[XLB_FLOW_FROM_CLIENT];
    backend = backend == XLB_FLOW_WSCALE_NONE ? 0 : backend;
    uint8_t told = client == 0 && backend == 0 ? 0 : XLB_NAT_PROXY_WSCALE;
    if (backend == told)
        return;
    uint64_t bytes = (uint64_t)rte_be_to_cpu_16(tcp->rx_win) << backend;
    uint64_t scaled = bytes >> told;
    uint16_t win = rte_cpu_to_be_16((uint16_t)RTE_MIN(scaled, (uint64_t)UINT16_MAX));
    uint16_t csum = tcp->cksum;
    xlb_csum_replace(&csum, &tcp->rx_win, &win, 2);
    tcp->cksum = csum;
    tcp->rx_win = win;
}

xlb_verdict xlb_nat_proxy_from_backend(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                       struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                       uint32_t tcp_len, struct xlb_flow *f)
{
    struct rte_tcp_hdr *tcp = p->tcp;
    uint8_t flags = tcp->tcp_flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG);
    if (f->state == XLB_FLOW_SYN_SENT) {
        if (flags == (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG))
            return absorb_syn_ack(ctx, snap, frame, p, tcp_len, f);
        if (flags & RTE_TCP_RST_FLAG)
            return refused(ctx, snap, frame, p, tcp_len, f);
        if (flags == RTE_TCP_ACK_FLAG &&
            rte_be_to_cpu_32(tcp->recv_ack) != f->window.end[XLB_FLOW_FROM_CLIENT])
            return reset_stale(ctx, snap, frame, p);
        return XLB_DROP_SYN_PROXY_BACKEND_PENDING;
    }
    if (!xlb_nat_track(ctx, f, tcp, xlb_tcp_payload_len(tcp, tcp_len), XLB_FLOW_FROM_BACKEND))
        return XLB_DROP_TCP_OUT_OF_WINDOW;
    const union xlb_nat_proxy_side *side = side_of(ctx->flows, f);
    translate_window(tcp, f);
    struct xlb_seq_shift shift = {.seq = side->seq_add, .tsval = side->ts_add};
    if (!xlb_seq_shift_segment(tcp, &shift))
        return XLB_DROP_TCP_MALFORMED;
    to_client(ctx, snap, frame->m, p, f);
    return XLB_VERDICT_SENT;
}
