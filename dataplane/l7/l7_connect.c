/*
 * Binding: the first request is picked like a proxyless gRPC client would (route, session
 * cookie, drop overloads, circuit breaker, priorities, localities), xlb connects to the chosen
 * backend as the client would have (the client's ISN and TCP options, from xlb's SNAT address),
 * and replays what the client sent, less the frames that were for xlb. Client sequence numbers
 * then map to the backend's by subtracting what was cut; the backend's map to the client's by
 * the difference between the two servers' ISNs plus xlb's own bytes.
 */
#include <stdio.h>
#include <string.h>

#include "l7_conn.h"
#include "xlb_lb.h"
#include "xlb_route.h"

#define SEQ_LT(a, b) ((int32_t)((a) - (b)) < 0)

/* The replay: in[] without the strip ranges, which were noted in stream order. */
static void cut_strips(struct xlb_l7_conn *c)
{
    uint32_t write = 0, read = 0;
    for (uint8_t i = 0; i < c->n_strip; i++) {
        uint32_t keep = c->strip[i].at - read;
        memmove(c->binding->in + write, c->binding->in + read, keep);
        write += keep;
        read = c->strip[i].at + c->strip[i].len;
    }
    memmove(c->binding->in + write, c->binding->in + read, c->in_len - read);
    write += c->in_len - read;
    c->stripped = c->in_len - write;
    c->replay_len = write;
    c->in_len = write; /* what the client sends while xlb connects goes on from here */
}

static void reason_of(const struct xlb_lb_trace *trace, enum xlb_lb_outcome outcome, char *out,
                      size_t cap)
{
    const char *cluster = trace->cluster != NULL ? trace->cluster->name : "";
    switch (outcome) {
    case XLB_LB_NO_ROUTE:
        snprintf(out, cap, "xlb: no route matched the request");
        break;
    case XLB_LB_NON_FORWARDING:
        snprintf(out, cap, "xlb: the matched route does not forward");
        break;
    case XLB_LB_NOT_READY:
        snprintf(out, cap, "xlb: the route's cluster is not ready");
        break;
    case XLB_LB_DROPPED:
        snprintf(out, cap, "xlb: dropped by drop overload category %s",
                 trace->drop_category != NULL ? trace->drop_category : "");
        break;
    case XLB_LB_CIRCUIT_OPEN:
        snprintf(out, cap, "xlb: circuit breaker of cluster %s is open", cluster);
        break;
    default:
        snprintf(out, cap, "xlb: no usable endpoint in cluster %s", cluster);
        break;
    }
}

static void send_syn(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                     struct xlb_l7_conn *c)
{
    /* The client's MSS, lowered to what the ports between backend and client carry. */
    const struct xlb_flow *f = c->flow;
    uint16_t max = xlb_egress_mss_max(snap, ctx->flows->snat[f->snat_index].family,
                                      f->client_port_index, f->backend_port_index);
    struct xlb_tcp_opts o = {
        .mss = max != 0 && c->client.mss > max ? max : c->client.mss,
        .has_wscale = c->client.has_wscale,
        .wscale = c->client.wscale,
        .sack_ok = c->client.sack_ok,
        .has_ts = c->client.has_ts,
        .tsval = c->ts_recent,
    };
    uint8_t options[40];
    struct xlb_l7_segment s = {
        .seq = c->client_isn,
        .flags = RTE_TCP_SYN_FLAG,
        .window = UINT16_MAX,
        .options = options,
        .options_len = xlb_tcp_options_write_syn(options, &o),
    };
    xlb_l7_send(ctx, snap, c->flow, XLB_L7_TO_BACKEND, &s);
}

/* The replay from the backend's cumulative ACK on, in segments the backend takes (its MSS, the
 * path's, less the timestamp option they carry). */
static void send_replay(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                        struct xlb_l7_conn *c)
{
    uint32_t first = c->client_isn + 1, done = c->backend_una - first;
    uint32_t mss = xlb_l7_payload_max(ctx, snap, c, XLB_L7_TO_BACKEND,
                                      c->client.has_ts ? XLB_TCPOLEN_TS + 2 : 0);
    while (done < c->replay_len) {
        uint32_t n = c->replay_len - done > mss ? mss : c->replay_len - done;
        bool last = done + n == c->replay_len;
        if (!xlb_l7_send_ts(ctx, snap, c, XLB_L7_TO_BACKEND, first + done, c->backend_isn + 1,
                            RTE_TCP_ACK_FLAG | (last ? RTE_TCP_PSH_FLAG : 0), c->client_window,
                            c->binding->in + done, n))
            return;
        done += n;
    }
}

static void set_backend(struct xlb_flow *f, const struct xlb_host_port *to)
{
    memcpy(f->backend, to->addr.bytes, sizeof(f->backend));
    f->backend_port = rte_cpu_to_be_16(to->port);
}

/*
 * Where the endpoint picked is, on the flow; its next hop is looked up by resolve_next_hop.
 * A61: its first address of the flow's SNAT family; the others of that family wait in the
 * binding for the connection to fail over to. False when it has none of the family.
 */
static bool route_to(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c,
                     const struct xlb_lb_trace *trace)
{
    const struct xlb_lb_endpoint *e = &trace->cluster->endpoints[trace->endpoint];
    struct xlb_flow *f = c->flow;
    struct xlb_l7_binding *b = c->binding;
    uint8_t family = ctx->flows->snat[f->snat_index].family;
    const struct xlb_host_port *first = NULL;
    b->n_more = b->next = 0;
    for (uint32_t k = 0; k < xlb_lb_endpoint_n_addresses(e); k++) {
        const struct xlb_host_port *a = xlb_lb_endpoint_address(trace->cluster, trace->endpoint, k);
        if (a->addr.family != family)
            continue;
        if (first == NULL)
            first = a;
        else
            b->more[b->n_more++] = *a;
    }
    if (first == NULL)
        return false;
    set_backend(f, first);
    f->endpoint_slot = e->slot;
    f->cluster_slot = (uint16_t)trace->cluster->cluster_slot;
    return true;
}

/* The backend's MAC and port from the snapshot's neighbours and gateways. False while the
 * neighbour is unresolved: an endpoint just added (an EDS update) is solicited by the control
 * plane, and the SYN waits for the retry timer, as a client's SYN would be resent (L4). */
static bool resolve_next_hop(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                             struct xlb_l7_conn *c)
{
    struct xlb_flow *f = c->flow;
    struct xlb_addr where = {.family = ctx->flows->snat[f->snat_index].family};
    memcpy(where.bytes, f->backend, sizeof(where.bytes));
    struct rte_ether_addr mac;
    uint16_t port_index;
    c->next_hop_pending = !xlb_egress_next_hop(snap, &where, &mac, &port_index);
    if (c->next_hop_pending)
        return false;
    f->backend_mac = mac;
    f->backend_port_index = (uint8_t)port_index;
    return true;
}

/* A pick counted a call issued and in flight that will never be sent: it ends, failed. */
static void unsent(struct xlb_burst_ctx *ctx, const struct xlb_lb_trace *trace)
{
    const struct xlb_lb_endpoint *e = &trace->cluster->endpoints[trace->endpoint];
    uint32_t slot = trace->cluster->priorities[e->priority].localities[e->locality].load_slot;
    xlb_flow_request_finished(ctx, trace->cluster->cluster_slot, trace->slot);
    if (ctx->lb->load != NULL && slot < XLB_LOCALITY_SLOTS)
        ctx->lb->load->localities[slot].failed++;
}

void xlb_l7_route_request(const struct xlb_h2_request *h, struct xlb_route_field *fields,
                          struct xlb_route_request *out)
{
    for (uint32_t i = 0; i < h->n_fields; i++)
        fields[i] = (struct xlb_route_field){h->fields[i].name, h->fields[i].value,
                                             h->fields[i].name_len, h->fields[i].value_len};
    *out = (struct xlb_route_request){
        .path = h->path,
        .path_len = h->path_len,
        .authority = h->authority,
        .authority_len = h->authority_len,
        .fields = fields,
        .n_fields = h->n_fields,
    };
}

void xlb_l7_bind(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap, struct xlb_l7_conn *c)
{
    struct xlb_flow_key key;
    xlb_flow_client_key(ctx->flows, c->flow, &key);
    const struct xlb_vip_view *vip = xlb_flow_vip_of(snap, &key);
    if (vip == NULL || vip->lb == NULL || ctx->lb == NULL) {
        xlb_l7_reject(ctx, snap, c, "xlb: the VIP is not configured");
        return;
    }
    if (!c->request_ok) {
        xlb_l7_reject(ctx, snap, c, "xlb: request headers too large");
        return;
    }
    struct xlb_route_field fields[XLB_H2_MAX_FIELDS];
    struct xlb_route_request http;
    xlb_l7_route_request(&c->binding->request.request, fields, &http);
    struct xlb_lb_request request = {
        .http = &http,
        .connection_id = xlb_flow_connection_hash(snap, &key),
    };
    struct xlb_lb_trace trace;
    enum xlb_lb_outcome outcome = xlb_lb_pick(vip->lb, &request, ctx->lb, &trace);
    if (outcome != XLB_LB_PICKED || !route_to(ctx, c, &trace)) {
        char reason[160];
        if (outcome == XLB_LB_PICKED) {
            snprintf(reason, sizeof(reason), "xlb: no next hop to the endpoint");
            unsent(ctx, &trace);
        } else {
            reason_of(&trace, outcome, reason, sizeof(reason));
        }
        xlb_l7_reject(ctx, snap, c, reason);
        return;
    }
    const struct xlb_lb_endpoint *e = &trace.cluster->endpoints[trace.endpoint];
    c->locality_slot = trace.cluster->priorities[e->priority].localities[e->locality].load_slot;
    xlb_l7_cookie_prepare(ctx, c, &trace, vip->lb);
    xlb_l7_streams_bind(ctx, c, trace.override != XLB_LB_OVERRIDE_USED);
    cut_strips(c);
    c->backend_una = c->client_isn + 1;
    c->phase = XLB_L7_CONNECTING;
    ctx->stats->events[XLB_EVENT_L7_BOUND]++;
    /* Acknowledge the client's bytes now: the backend acknowledges only what it has. */
    xlb_l7_send_ts(ctx, snap, c, XLB_L7_TO_CLIENT, c->snd_nxt, c->rcv_nxt, RTE_TCP_ACK_FLAG,
                   xlb_l7_receive_window(c), NULL, 0);
    if (resolve_next_hop(ctx, snap, c))
        send_syn(ctx, snap, c);
    c->tries = 0;
    xlb_l7_retry_arm(ctx, c);
}

static void connected(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                      struct xlb_l7_conn *c, const struct rte_tcp_hdr *tcp,
                      const struct xlb_tcp_opts *o)
{
    c->backend_isn = rte_be_to_cpu_32(tcp->sent_seq);
    c->backend_wscale = o->has_wscale && c->client.has_wscale ? o->wscale : 0;
    c->backend_ts = o->has_ts;
    c->backend_mss = o->mss;
    c->backend_tsval = o->tsval;
    /* Backend timestamps are moved past every one xlb sent the client (PAWS, RFC 7323). */
    c->ts_add = (uint32_t)xlb_l7_now_ms(ctx) + 1 - o->tsval;
    c->s2c_seq_add = c->snd_nxt - (c->backend_isn + 1);
    c->replay_len = c->in_len; /* with what came while connecting */
    c->phase = XLB_L7_SPLICED;
    struct xlb_flow *f = c->flow;
    f->state = XLB_FLOW_ESTABLISHED;
    xlb_flow_set_timeout(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz, XLB_FLOW_ESTABLISHED_TIMEOUT_S);
    xlb_l7_inspect_start(ctx, c);
    ctx->stats->events[XLB_EVENT_L7_SPLICED]++;
    if (c->replay_len == 0) {
        xlb_l7_send_ts(ctx, snap, c, XLB_L7_TO_BACKEND, c->client_isn + 1, c->backend_isn + 1,
                       RTE_TCP_ACK_FLAG, c->client_window, NULL, 0);
        xlb_l7_retry_disarm(ctx, c);
        xlb_l7_binding_put(ctx, c); /* nothing to replay */
        return;
    }
    send_replay(ctx, snap, c);
    c->tries = 0;
    xlb_l7_retry_arm(ctx, c);
}

/*
 * A61: the SYN goes to the endpoint's next address, if it has one left: when the address
 * being connected to refused, or did not answer within XLB_L7_RETRY_MS (A62's Connection
 * Attempt Delay). A spliced connection has one SNAT port and one sequence space for its
 * backend, so its attempts follow each other rather than race; the answer of an address left
 * behind is dropped (not from the flow's backend).
 */
static bool next_address(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                         struct xlb_l7_conn *c)
{
    struct xlb_l7_binding *b = c->binding;
    if (b == NULL || b->next >= b->n_more)
        return false;
    set_backend(c->flow, &b->more[b->next++]);
    ctx->stats->events[XLB_EVENT_L7_NEXT_ADDRESS]++;
    c->tries = 0;
    if (resolve_next_hop(ctx, snap, c))
        send_syn(ctx, snap, c);
    xlb_l7_retry_arm(ctx, c);
    return true;
}

/* Whether the segment comes from the address the flow now connects to. */
static bool from_backend(const struct xlb_tcp_packet *p, const struct xlb_flow *f)
{
    const uint8_t *src, *dst;
    size_t len = xlb_flow_addresses(p->family, p->ip, &src, &dst);
    return p->tcp->src_port == f->backend_port && memcmp(src, f->backend, len) == 0;
}

xlb_verdict xlb_l7_connecting(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                              struct xlb_tcp_packet *p, struct xlb_l7_conn *c)
{
    const struct rte_tcp_hdr *tcp = p->tcp;
    uint8_t flags = tcp->tcp_flags;
    if (!from_backend(p, c->flow))
        return XLB_DROP_L7_UNEXPECTED; /* an address tried before: too late */
    if ((flags & RTE_TCP_RST_FLAG) && rte_be_to_cpu_32(tcp->recv_ack) == c->client_isn + 1) {
        if (next_address(ctx, snap, c))
            return XLB_VERDICT_CONSUMED;
        /* The first request fails (counted for the endpoint when the connection ends). */
        xlb_l7_reject(ctx, snap, c, "xlb: the backend refused the connection");
        return XLB_VERDICT_CONSUMED;
    }
    uint32_t ack = rte_be_to_cpu_32(tcp->recv_ack);
    if ((flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG)) == RTE_TCP_ACK_FLAG &&
        ack != c->client_isn + 1) {
        /* An ACK of an older connection on this SNAT port (the backend's TIME-WAIT): reset it
         * as a client would (RFC 9293 3.10.7.3) and send the SYN again at once. */
        struct xlb_l7_segment rst = {.seq = ack, .flags = RTE_TCP_RST_FLAG};
        xlb_l7_send(ctx, snap, c->flow, XLB_L7_TO_BACKEND, &rst);
        send_syn(ctx, snap, c);
        return XLB_DROP_L7_UNEXPECTED;
    }
    if ((flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG)) !=
            (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG) ||
        ack != c->client_isn + 1)
        return XLB_DROP_L7_UNEXPECTED;
    uint32_t hlen = xlb_tcp_header_len(tcp);
    struct xlb_tcp_opts o;
    if (xlb_tcp_options_parse((const uint8_t *)(tcp + 1), hlen - sizeof(*tcp), &o) != 0)
        return XLB_DROP_TCP_MALFORMED;
    connected(ctx, snap, c, tcp, &o);
    return XLB_VERDICT_CONSUMED;
}

/* ---- retransmission ---- */

void xlb_l7_retry_arm(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c)
{
    uint64_t ms = (uint64_t)XLB_L7_RETRY_MS << c->tries;
    c->retry_tsc = ctx->now_tsc + ms * ctx->l7->tsc_per_ms;
    if (c->on_retry_list)
        return;
    c->prev_retry = NULL;
    c->next_retry = ctx->l7->retry;
    if (c->next_retry != NULL)
        c->next_retry->prev_retry = c;
    ctx->l7->retry = c;
    c->on_retry_list = true;
}

void xlb_l7_retry_disarm(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c)
{
    if (!c->on_retry_list)
        return;
    if (ctx->l7->retry_cursor == c)
        ctx->l7->retry_cursor = c->next_retry;
    if (c->prev_retry != NULL)
        c->prev_retry->next_retry = c->next_retry;
    else
        ctx->l7->retry = c->next_retry;
    if (c->next_retry != NULL)
        c->next_retry->prev_retry = c->prev_retry;
    c->on_retry_list = false;
}

void xlb_l7_retry(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap, struct xlb_l7_conn *c)
{
    if (ctx->now_tsc < c->retry_tsc)
        return;
    if (c->phase == XLB_L7_CONNECTING && next_address(ctx, snap, c))
        return;
    if (c->tries >= XLB_L7_RETRY_MAX) {
        if (c->phase == XLB_L7_CONNECTING) {
            xlb_l7_reject(ctx, snap, c,
                          c->next_hop_pending ? "xlb: no next hop to the endpoint"
                                              : "xlb: the backend did not answer");
        } else {
            xlb_l7_retry_disarm(ctx, c);
            xlb_l7_abort(ctx, snap, c);
        }
        return;
    }
    c->tries++;
    if (c->phase == XLB_L7_CONNECTING) {
        if (!c->next_hop_pending || resolve_next_hop(ctx, snap, c))
            send_syn(ctx, snap, c);
    } else if (SEQ_LT(c->backend_una, c->client_isn + 1 + c->replay_len))
        send_replay(ctx, snap, c);
    else {
        xlb_l7_retry_disarm(ctx, c);
        return;
    }
    xlb_l7_retry_arm(ctx, c);
}
