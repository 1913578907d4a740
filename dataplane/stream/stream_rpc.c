/*
 * Requests on a client connection: each stream's request headers become a route request and
 * get their own pick from the LB core, as a proxyless gRPC client picks each RPC. A request xlb
 * cannot forward gets the answer such a client would have made itself: a trailers-only
 * response with grpc-status 14 (UNAVAILABLE) and the reason in grpc-message, on its stream
 * only; the connection and its other streams go on.
 */
#include <stdio.h>
#include <string.h>

#include "stream_conn.h"
#include "xlb_route.h"
#include "xlb_session_cookie.h"

#define GRPC_UNAVAILABLE "14"

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

/* xlb's own answer on one stream (its client half, if still open, is reset once the answer
 * has gone: on_frame_send). */
/* grpc-message is percent-encoded (gRPC's PROTOCOL-HTTP2: bytes outside 0x20-0x7E and '%');
 * a reason names configured things (clusters, drop categories), which may hold any byte. */
static uint32_t percent_encode(const char *in, char *out, uint32_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    uint32_t n = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p != '\0'; p++) {
        bool plain = *p >= 0x20 && *p <= 0x7e && *p != '%';
        if (n + (plain ? 1u : 3u) > cap)
            break;
        if (plain) {
            out[n++] = (char)*p;
        } else {
            out[n++] = '%';
            out[n++] = hex[*p >> 4];
            out[n++] = hex[*p & 15];
        }
    }
    return n;
}

void xlb_stream_reply_unavailable(struct xlb_stream_conn *c, int32_t stream_id, const char *reason)
{
    c->side.w->ctx->stats->events[XLB_EVENT_STREAM_RPCS_UNAVAILABLE]++;
    xlb_stream_reply_status(c, stream_id, GRPC_UNAVAILABLE, reason);
}

void xlb_stream_reply_status(struct xlb_stream_conn *c, int32_t stream_id, const char *code,
                             const char *reason)
{
    char status[] = ":status", ok[] = "200", type[] = "content-type";
    char grpc[] = "application/grpc", gs[] = "grpc-status";
    char gm[] = "grpc-message", message[480];
    uint32_t message_len = percent_encode(reason, message, sizeof(message));
    const nghttp2_nv nva[] = {
        {(uint8_t *)status, (uint8_t *)ok, sizeof(status) - 1, sizeof(ok) - 1, 0},
        {(uint8_t *)type, (uint8_t *)grpc, sizeof(type) - 1, sizeof(grpc) - 1, 0},
        {(uint8_t *)gs, (uint8_t *)(uintptr_t)code, sizeof(gs) - 1, strlen(code), 0},
        {(uint8_t *)gm, (uint8_t *)message, sizeof(gm) - 1, message_len, 0},
    };
    if (nghttp2_submit_response(c->side.h2, stream_id, nva, 4, NULL) != 0)
        nghttp2_submit_rst_stream(c->side.h2, NGHTTP2_FLAG_NONE, stream_id, NGHTTP2_INTERNAL_ERROR);
}

/* The request headers kept as the route matcher takes them. */
static void route_request(const struct xlb_stream_headers *h, struct xlb_route_field *fields,
                          struct xlb_route_request *out)
{
    *out = (struct xlb_route_request){.fields = fields};
    for (uint32_t i = 0; i < h->n_fields; i++) {
        const char *name = h->fields[i].name;
        uint32_t len = h->fields[i].name_len;
        if (len == 5 && memcmp(name, ":path", 5) == 0) {
            out->path = h->fields[i].value;
            out->path_len = h->fields[i].value_len;
        } else if (len == 10 && memcmp(name, ":authority", 10) == 0) {
            out->authority = h->fields[i].value;
            out->authority_len = h->fields[i].value_len;
        } else if (len > 0 && name[0] != ':') {
            fields[out->n_fields++] =
                (struct xlb_route_field){name, h->fields[i].value, len, h->fields[i].value_len};
        }
    }
}

/* A pick that counted a call issued and in flight that will not be sent: it ends, failed. */
static void unsent(struct xlb_stream_worker *w, const struct xlb_lb_trace *trace)
{
    struct xlb_burst_ctx *ctx = w->ctx;
    const struct xlb_lb_endpoint *e = &trace->cluster->endpoints[trace->endpoint];
    uint32_t slot = trace->cluster->priorities[e->priority].localities[e->locality].load_slot;
    xlb_flow_request_finished(ctx, trace->cluster->cluster_slot, trace->slot);
    if (ctx->lb->load != NULL && slot < XLB_LOCALITY_SLOTS)
        ctx->lb->load->localities[slot].failed++;
}

/* An answer instead of a pick: the RPC a waiting request had is unbound and freed first. */
static void refuse(struct xlb_stream_conn *c, struct xlb_stream_rpc *r, int32_t stream_id,
                   const char *reason)
{
    if (r != NULL) {
        nghttp2_session_set_stream_user_data(c->side.h2, stream_id, NULL);
        r->conn = XLB_STREAM_NONE;
        xlb_stream_rpc_put(c->side.w, r);
    }
    xlb_stream_reply_unavailable(c, stream_id, reason);
}

/* A pick that did not follow the request's session cookie (none, or one naming an endpoint
 * that cannot take it) gets a cookie naming the endpoint chosen (A55/A60); kept in the RPC
 * until its response's first header block. */
static void prepare_cookie(struct xlb_stream_worker *w, struct xlb_stream_rpc *r,
                           const struct xlb_lb_trace *trace, const struct xlb_lb_vip *vip)
{
    if (trace->session_cookie == NULL)
        return;
    char value[XLB_STREAM_TRAILER_BYTES + 1];
    uint32_t n = xlb_set_cookie_of_pick(value, sizeof(value), trace, vip);
    if (n == 0) {
        w->ctx->stats->events[XLB_EVENT_L7_SET_COOKIE_MISSED]++;
        return;
    }
    memcpy(r->trailer_bytes, value, n);
    r->cookie_len = (uint16_t)n;
}

void xlb_stream_pick(struct xlb_stream_conn *c, struct xlb_stream_rpc *r,
                     const struct xlb_stream_headers *h, int32_t stream_id, bool ended)
{
    struct xlb_stream_worker *w = c->side.w;
    struct xlb_burst_ctx *ctx = w->ctx;
    const struct xlb_vip_view *vip = w->snap != NULL ? xlb_flow_vip_of(w->snap, &c->key) : NULL;
    if (vip == NULL || vip->lb == NULL || ctx->lb == NULL) {
        refuse(c, r, stream_id, "xlb: the VIP is not configured");
        return;
    }
    struct xlb_route_field fields[XLB_STREAM_MAX_FIELDS];
    struct xlb_route_request http;
    route_request(h, fields, &http);
    struct xlb_lb_request lb_request = {
        .http = &http,
        .connection_id = xlb_flow_connection_hash(w->snap, &c->key),
        .connectivity = true,
        .now_ms = xlb_stream_now_ms(ctx),
    };
    struct xlb_lb_trace trace;
    enum xlb_lb_outcome outcome = xlb_lb_pick(vip->lb, &lb_request, ctx->lb, &trace);
    if (outcome == XLB_LB_QUEUE) {
        xlb_stream_connect_idle(w, &trace);
        if (r == NULL)
            r = xlb_stream_rpc_open(c, stream_id, ended, h);
        if (r == NULL || r->waiting != XLB_STREAM_NONE || xlb_stream_enqueue(c, r, h, &trace))
            return; /* answered (no RPC), still waiting, or queued */
        refuse(c, r, stream_id, "xlb: too many RPCs waiting for a connection");
        return;
    }
    if (outcome != XLB_LB_PICKED) {
        char reason[160];
        reason_of(&trace, outcome, reason, sizeof(reason));
        refuse(c, r, stream_id, reason);
        return;
    }
    const struct xlb_lb_endpoint *e = &trace.cluster->endpoints[trace.endpoint];
    struct xlb_stream_sub *sub =
        xlb_stream_sub_for(w, w->snap, e, trace.cluster, trace.endpoint, NULL);
    if (sub == NULL) {
        unsent(w, &trace);
        refuse(c, r, stream_id, "xlb: no connection to the endpoint");
        return;
    }
    if (r == NULL) {
        r = xlb_stream_rpc_open(c, stream_id, ended, h);
        if (r == NULL) {
            xlb_flow_request_finished(ctx, trace.cluster->cluster_slot, trace.slot);
            return;
        }
    } else {
        xlb_stream_unqueue(w, r);
    }
    if (trace.override != XLB_LB_OVERRIDE_USED)
        prepare_cookie(w, r, &trace, vip->lb);
    xlb_stream_forward_rpc(c, r, sub, &trace, h);
}

static void request(struct xlb_stream_conn *c, int32_t stream_id, bool ended)
{
    struct xlb_stream_worker *w = c->side.w;
    w->ctx->stats->events[XLB_EVENT_STREAM_RPCS]++;
    if (w->headers.overflow || w->headers.stream_id != stream_id) {
        xlb_stream_reply_unavailable(c, stream_id, "xlb: request headers too large");
        return;
    }
    xlb_stream_pick(c, NULL, &w->headers, stream_id, ended);
}

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *frame, void *user)
{
    struct xlb_stream_conn *c = user;
    (void)s;
    if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
        struct xlb_stream_headers *h = &c->side.w->headers;
        h->stream_id = frame->hd.stream_id;
        h->overflow = false;
        h->n_fields = 0;
        h->used = 0;
    }
    return 0;
}

static const char *keep(struct xlb_stream_headers *h, const uint8_t *bytes, size_t len)
{
    if (len > sizeof(h->bytes) - h->used)
        return NULL;
    char *at = h->bytes + h->used;
    memcpy(at, bytes, len);
    h->used += (uint32_t)len;
    return at;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *frame, const uint8_t *name,
                     size_t name_len, const uint8_t *value, size_t value_len, uint8_t flags,
                     void *user)
{
    struct xlb_stream_conn *c = user;
    struct xlb_stream_headers *h = &c->side.w->headers;
    (void)s;
    (void)flags;
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST ||
        frame->hd.stream_id != h->stream_id || h->overflow)
        return 0;
    if (h->n_fields == XLB_STREAM_MAX_FIELDS) {
        h->overflow = true;
        return 0;
    }
    const char *n = keep(h, name, name_len), *v = keep(h, value, value_len);
    if (n == NULL || v == NULL) {
        h->overflow = true;
        return 0;
    }
    h->fields[h->n_fields].name = n;
    h->fields[h->n_fields].name_len = (uint32_t)name_len;
    h->fields[h->n_fields].value = v;
    h->fields[h->n_fields].value_len = (uint32_t)value_len;
    h->n_fields++;
    return 0;
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *frame, void *user)
{
    (void)s;
    struct xlb_stream_conn *c = user;
    bool ended = (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
    if (frame->hd.type == NGHTTP2_GOAWAY) {
        c->side.peer_goaway = true; /* it closes next: xlb_stream_linger */
        return 0;
    }
    if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
        request(c, frame->hd.stream_id, ended);
        return 0;
    }
    struct xlb_stream_rpc *r = xlb_stream_rpc_of_client(c, frame->hd.stream_id);
    if (r != NULL && ended && (frame->hd.type == NGHTTP2_DATA || frame->hd.type == NGHTTP2_HEADERS))
        xlb_stream_client_end(c, r);
    return 0;
}

/* An answer that ended a stream the client still sends on: the rest of its request is not
 * wanted (RFC 9113 8.1: RST_STREAM NO_ERROR after a complete response). A stream beyond
 * SETTINGS_MAX_CONCURRENT_STREAMS is refused by nghttp2 itself: counted here. */
static int on_frame_send(nghttp2_session *s, const nghttp2_frame *frame, void *user)
{
    struct xlb_stream_conn *c = user;
    if (frame->hd.type == NGHTTP2_RST_STREAM &&
        frame->rst_stream.error_code == NGHTTP2_REFUSED_STREAM)
        c->side.w->ctx->stats->events[XLB_EVENT_STREAM_STREAMS_REFUSED]++;
    if (frame->hd.type == NGHTTP2_HEADERS && (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) &&
        !nghttp2_session_get_stream_remote_close(s, frame->hd.stream_id))
        nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, frame->hd.stream_id, NGHTTP2_NO_ERROR);
    return 0;
}

/* Request DATA: to its RPC's backend stream, consumed when taken; for a stream xlb answered
 * itself, taken and its window given back at once. */
static int on_data_chunk_recv(nghttp2_session *s, uint8_t flags, int32_t stream_id,
                              const uint8_t *data, size_t len, void *user)
{
    (void)flags;
    struct xlb_stream_rpc *r = xlb_stream_rpc_of_client(user, stream_id);
    if (r != NULL) {
        xlb_stream_client_data(user, r, data, len);
        return 0;
    }
    if (nghttp2_session_consume(s, stream_id, len) != 0)
        nghttp2_session_consume_connection(s, len);
    return 0;
}

static int on_stream_close(nghttp2_session *s, int32_t stream_id, uint32_t error_code, void *user)
{
    struct xlb_stream_rpc *r = xlb_stream_rpc_of_client(user, stream_id);
    if (r != NULL) {
        nghttp2_session_set_stream_user_data(s, stream_id, NULL);
        xlb_stream_client_closed(user, r, error_code);
    }
    return 0;
}

void xlb_stream_rpc_callbacks(nghttp2_session_callbacks *cb)
{
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data_chunk_recv);
    nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_send);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
}
