/*
 * RPCs waiting for a subchannel (gRPC's pick queue): a pick over subchannels says
 * XLB_LB_QUEUE when the priority it chose (or a cookie's endpoint) has no READY connection
 * yet. The RPC then waits in a fixed per-worker array with its request headers, its DATA
 * kept unconsumed (the client's window bounds it), while the engine connects the IDLE
 * endpoints the pick named (the priority's, or pick first's one). Waiting RPCs are picked again
 * when a subchannel changes state and every XLB_STREAM_REPICK_MS on the poll (A56's failover timer
 * expires with no state change). One whose grpc-timeout passes gets DEADLINE_EXCEEDED; one that
 * waits longer than gRPC's minimum connect timeout, or finds the queue full, UNAVAILABLE:
 * trailers-only, counted.
 */
#include <string.h>

#include "stream_conn.h"

#define GRPC_DEADLINE_EXCEEDED "4"

void xlb_stream_connect_idle(struct xlb_stream_worker *w, const struct xlb_lb_trace *trace)
{
    const struct xlb_lb_cluster *c = trace->cluster;
    if (c == NULL || w->ctx->lb == NULL)
        return;
    if (trace->endpoint < c->n_endpoints && trace->slot == c->endpoints[trace->endpoint].slot &&
        xlb_lb_connectivity_get(w->ctx->lb, trace->slot) == XLB_CONN_IDLE) /* the pick's */
        xlb_stream_sub_for(w, w->snap, &c->endpoints[trace->endpoint], c, trace->endpoint, NULL);
    /* Pick first connects the endpoint it holds, one at a time (A62); the other policies
     * connect every IDLE endpoint of the priority, as gRPC's round robin and ring hash do. */
    if (c->policy == XLB_LB_POLICY_PICK_FIRST)
        return;
    for (uint32_t i = 0; i < c->n_endpoints; i++) {
        const struct xlb_lb_endpoint *e = &c->endpoints[i];
        if (e->priority == trace->priority && e->slot < XLB_ENDPOINT_SLOTS &&
            xlb_lb_connectivity_get(w->ctx->lb, e->slot) == XLB_CONN_IDLE)
            xlb_stream_sub_for(w, w->snap, e, c, i, NULL);
    }
}

void xlb_stream_headers_copy(struct xlb_stream_headers *to, const struct xlb_stream_headers *from)
{
    to->stream_id = from->stream_id;
    to->overflow = false;
    to->n_fields = from->n_fields;
    to->used = from->used;
    memcpy(to->bytes, from->bytes, from->used);
    for (uint32_t i = 0; i < from->n_fields; i++) {
        to->fields[i] = from->fields[i];
        to->fields[i].name = to->bytes + (from->fields[i].name - from->bytes);
        to->fields[i].value = to->bytes + (from->fields[i].value - from->bytes);
    }
}

bool xlb_stream_enqueue(struct xlb_stream_conn *c, struct xlb_stream_rpc *r,
                        const struct xlb_stream_headers *h, const struct xlb_lb_trace *trace)
{
    struct xlb_stream_worker *w = c->side.w;
    (void)trace;
    if (w->n_waiting == w->limits.waiting_rpcs) {
        w->ctx->stats->events[XLB_EVENT_STREAM_RPCS_QUEUE_FULL]++;
        return false;
    }
    uint32_t i = 0;
    while (w->waiting[i].rpc != XLB_STREAM_NONE)
        i++;
    struct xlb_stream_waiting *q = &w->waiting[i];
    q->rpc = (uint32_t)(r - w->rpcs);
    q->since_ms = xlb_stream_now_ms(w->ctx);
    q->deadline_ms = r->deadline_ms;
    xlb_stream_headers_copy(&q->headers, h);
    r->waiting = i;
    w->n_waiting++;
    w->ctx->stats->events[XLB_EVENT_STREAM_RPCS_QUEUED]++;
    return true;
}

void xlb_stream_unqueue(struct xlb_stream_worker *w, struct xlb_stream_rpc *r)
{
    if (r->waiting == XLB_STREAM_NONE)
        return;
    w->waiting[r->waiting].rpc = XLB_STREAM_NONE;
    r->waiting = XLB_STREAM_NONE;
    w->n_waiting--;
}

/* End a waiting RPC with xlb's own answer. */
static void end_waiting(struct xlb_stream_worker *w, struct xlb_stream_rpc *r, const char *code,
                        const char *reason)
{
    struct xlb_stream_conn *c = &w->conns[r->conn];
    int32_t id = r->client_id;
    xlb_stream_unqueue(w, r);
    nghttp2_session_set_stream_user_data(c->side.h2, id, NULL);
    r->conn = XLB_STREAM_NONE;
    xlb_stream_rpc_put(w, r);
    if (code[0] == '4' && code[1] == '\0') {
        w->ctx->stats->events[XLB_EVENT_STREAM_RPCS_DEADLINE]++;
        xlb_stream_reply_status(c, id, code, reason);
    } else {
        xlb_stream_reply_unavailable(c, id, reason);
    }
    xlb_stream_send(&c->side);
}

void xlb_stream_queue_poll(struct xlb_stream_worker *w)
{
    if (w->n_waiting == 0)
        return;
    uint64_t now = xlb_stream_now_ms(w->ctx);
    bool repick = w->repick || now - w->last_repick_ms >= XLB_STREAM_REPICK_MS;
    if (repick) {
        w->repick = false;
        w->last_repick_ms = now;
    }
    for (uint32_t i = 0; i < w->limits.waiting_rpcs && w->n_waiting > 0; i++) {
        struct xlb_stream_waiting *q = &w->waiting[i];
        if (q->rpc == XLB_STREAM_NONE)
            continue;
        struct xlb_stream_rpc *r = &w->rpcs[q->rpc];
        if (q->deadline_ms != 0 && now >= q->deadline_ms) {
            end_waiting(w, r, GRPC_DEADLINE_EXCEEDED,
                        "xlb: deadline exceeded waiting for a connection");
        } else if (now - q->since_ms >= XLB_STREAM_WAIT_MAX_MS) {
            end_waiting(w, r, "14", "xlb: no connection became ready in time");
        } else if (repick) {
            struct xlb_stream_conn *c = &w->conns[r->conn];
            xlb_stream_pick(c, r, &q->headers, r->client_id, r->up_end);
            xlb_stream_send(&c->side);
        }
    }
}
