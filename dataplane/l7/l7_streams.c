/*
 * Per-RPC outcomes of a spliced connection. Every request stream counts as a call started on
 * the endpoint's locality (load reports) and in the cluster's requests in flight (circuit
 * breaking); its end counts as succeeded or failed there and in the endpoint's outlier counters
 * (A50): grpc-status 0 is a success, any other status, a RST_STREAM, a stream the backend's
 * GOAWAY cut off or one still open when the connection ends is a failure. A response without
 * grpc-status (plain HTTP/2) succeeds when its :status is 2xx.
 */
#include <string.h>

#include "l7_conn.h"

static struct xlb_worker_load *load_of(struct xlb_burst_ctx *ctx)
{
    return ctx->lb != NULL ? ctx->lb->load : NULL;
}

static void count_start(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c)
{
    struct xlb_worker_load *load = load_of(ctx);
    if (load == NULL)
        return;
    if (c->locality_slot < XLB_LOCALITY_SLOTS)
        load->localities[c->locality_slot].issued++;
    xlb_flow_request_started(ctx, c->flow->cluster_slot, c->flow->endpoint_slot);
}

static void count_end(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c, bool ok)
{
    struct xlb_worker_load *load = load_of(ctx);
    if (load == NULL)
        return;
    if (c->locality_slot < XLB_LOCALITY_SLOTS) {
        if (ok)
            load->localities[c->locality_slot].succeeded++;
        else
            load->localities[c->locality_slot].failed++;
    }
    xlb_flow_request_finished(ctx, c->flow->cluster_slot, c->flow->endpoint_slot);
    xlb_flow_count_endpoint(ctx, c->flow->endpoint_slot, ok);
}

static struct xlb_l7_stream *add(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c, uint32_t id)
{
    if (c->n_streams == XLB_L7_STREAMS) {
        ctx->stats->events[XLB_EVENT_L7_STREAMS_UNTRACKED]++;
        return NULL;
    }
    struct xlb_l7_stream *s = &c->streams[c->n_streams++];
    *s = (struct xlb_l7_stream){.id = id};
    ctx->stats->events[XLB_EVENT_L7_STREAMS]++;
    return s;
}

static bool is_grpc(const struct xlb_h2_headers *h)
{
    for (uint32_t i = 0; i < h->request.n_fields; i++) {
        const struct xlb_h2_field *f = &h->request.fields[i];
        if (f->name_len == 12 && memcmp(f->name, "content-type", 12) == 0)
            return f->value_len >= 16 && memcmp(f->value, "application/grpc", 16) == 0;
    }
    return false;
}

void xlb_l7_streams_bind(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c, bool needs_cookie)
{
    struct xlb_l7_stream *s = add(ctx, c, c->first_stream);
    if (s != NULL) {
        s->needs_cookie = needs_cookie && c->cookie_field_len != 0;
        s->grpc = is_grpc(&c->binding->request);
    }
    /* Requests the client sent before the binding: started now, with the first one's cookie
     * decision (their own cookies were not kept). */
    for (uint8_t i = 0; i < c->n_early; i++) {
        struct xlb_l7_stream *e = add(ctx, c, c->early_streams[i]);
        if (e == NULL)
            break;
        count_start(ctx, c);
        e->needs_cookie = s != NULL && s->needs_cookie;
        e->grpc = s != NULL && s->grpc;
    }
    c->n_early = 0;
}

struct xlb_l7_stream *xlb_l7_stream_find(struct xlb_l7_conn *c, uint32_t id)
{
    for (uint8_t i = 0; i < c->n_streams; i++)
        if (c->streams[i].id == id)
            return &c->streams[i];
    return NULL;
}

/* Whether the request's session cookie names this connection's endpoint and cluster (A60). */
static bool cookie_is_ours(const struct xlb_l7_conn *c, const struct xlb_route_request *http)
{
    uint32_t len;
    const char *value = xlb_lb_find_cookie(http, c->cookie_name, &len);
    char scratch[XLB_LB_COOKIE_MAX];
    struct xlb_lb_session s;
    if (value == NULL || len > XLB_LB_COOKIE_MAX ||
        xlb_lb_session_decode(value, len, scratch, sizeof(scratch), &s) != 0)
        return false;
    if (s.cluster != NULL && (s.cluster_len != strlen(c->cluster_name) ||
                              memcmp(s.cluster, c->cluster_name, s.cluster_len) != 0))
        return false;
    for (uint32_t i = 0; i < s.n_addresses; i++)
        if (s.addresses[i].port == c->endpoint.port &&
            xlb_addr_equal(&s.addresses[i].addr, &c->endpoint.addr))
            return true;
    return false;
}

struct xlb_l7_stream *xlb_l7_stream_request(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c,
                                            uint32_t id, const struct xlb_h2_headers *h)
{
    struct xlb_l7_stream *s = xlb_l7_stream_find(c, id);
    if (s != NULL)
        return s; /* trailers of a client-streaming request */
    s = add(ctx, c, id);
    if (s == NULL)
        return NULL;
    count_start(ctx, c);
    s->grpc = is_grpc(h);
    if (c->cookie_field_len == 0)
        return s;
    struct xlb_route_field fields[XLB_H2_MAX_FIELDS];
    struct xlb_route_request http;
    xlb_l7_route_request(&h->request, fields, &http);
    if (!cookie_is_ours(c, &http)) {
        /* Binding is per connection: a cookie naming another endpoint cannot be honoured. */
        uint32_t len;
        if (xlb_lb_find_cookie(&http, c->cookie_name, &len) != NULL)
            ctx->stats->events[XLB_EVENT_L7_COOKIE_OTHER_ENDPOINT]++;
        s->needs_cookie = true;
    }
    return s;
}

void xlb_l7_stream_end(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c, struct xlb_l7_stream *s,
                       bool ok)
{
    count_end(ctx, c, ok);
    *s = c->streams[--c->n_streams];
}

static bool status_ok(const struct xlb_h2_headers *h)
{
    if (h->grpc_status != NULL)
        return h->grpc_status_len == 1 && h->grpc_status[0] == '0';
    return h->status != NULL && h->status_len == 3 && h->status[0] == '2';
}

void xlb_l7_stream_response(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c,
                            struct xlb_l7_stream *s, const struct xlb_h2_headers *h,
                            bool end_stream)
{
    if (!s->responded)
        s->http_ok = h->status != NULL && h->status_len == 3 && h->status[0] == '2';
    s->responded = true;
    if (end_stream)
        xlb_l7_stream_end(ctx, c, s, status_ok(h));
}

void xlb_l7_stream_data_end(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c,
                            struct xlb_l7_stream *s)
{
    /* A gRPC response must end with trailers (grpc-status): without, the call failed. */
    xlb_l7_stream_end(ctx, c, s, s->http_ok && !s->grpc);
}

void xlb_l7_streams_goaway(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c, uint32_t last_id)
{
    for (uint8_t i = 0; i < c->n_streams;)
        if (c->streams[i].id > last_id)
            xlb_l7_stream_end(ctx, c, &c->streams[i], false);
        else
            i++;
}

void xlb_l7_streams_end_all(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c)
{
    while (c->n_streams > 0)
        xlb_l7_stream_end(ctx, c, &c->streams[0], false);
}
