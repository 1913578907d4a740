/*
 * grpc-timeout on forwarded RPCs. A gRPC client ends a call when its deadline passes: it
 * cancels the stream and reports DEADLINE_EXCEEDED. xlb, a client on behalf of the clients
 * behind it, does the same for the RPCs it forwards, so a backend stops working on a call
 * nobody waits for, and a client that does not enforce its own deadline (h2load, a buggy
 * one) gets the status it asked for: a forwarded RPC whose deadline passes gets RST_STREAM
 * CANCEL towards its backend and, towards its client, xlb's trailers-only DEADLINE_EXCEEDED
 * (or RST_STREAM CANCEL once the response had begun). It counts as a failed call. The
 * deadline is taken when the request's headers arrive: time spent waiting for a subchannel
 * counts, and the backend is told only what is left (grpc-timeout rewritten).
 *
 * The deadlines sit on a per-worker timer wheel (the TCP endpoint's), at most 64 fired per
 * poll.
 */
#include <string.h>

#include "stream_conn.h"

#define DEADLINES_PER_POLL 64u

uint64_t xlb_stream_grpc_timeout_ms(const struct xlb_stream_headers *h)
{
    for (uint32_t i = 0; i < h->n_fields; i++) {
        if (h->fields[i].name_len != 12 || memcmp(h->fields[i].name, "grpc-timeout", 12) != 0)
            continue;
        const char *v = h->fields[i].value;
        uint32_t len = h->fields[i].value_len;
        if (len < 2 || len > 9)
            return 0;
        uint64_t n = 0;
        for (uint32_t k = 0; k + 1 < len; k++) {
            if (v[k] < '0' || v[k] > '9')
                return 0;
            n = n * 10 + (uint64_t)(v[k] - '0');
        }
        switch (v[len - 1]) {
        case 'H':
            return n * 3600000u;
        case 'M':
            return n * 60000u;
        case 'S':
            return n * 1000u;
        case 'm':
            return n > 0 ? n : 1;
        case 'u':
            return n / 1000u + 1;
        case 'n':
            return n / 1000000u + 1;
        default:
            return 0;
        }
    }
    return 0;
}

void xlb_stream_deadline_arm(struct xlb_stream_worker *w, struct xlb_stream_rpc *r)
{
    if (r->deadline_ms == 0)
        return;
    /* The wheel starts on the worker's clock with its first deadline (the engine is made on
     * the main lcore, before the worker's clock runs). */
    if (w->deadlines.armed == 0)
        xlb_tcp_wheel_init(&w->deadlines, xlb_stream_now_ms(w->ctx));
    xlb_tcp_wheel_arm(&w->deadlines, &r->deadline, r->deadline_ms);
}

void xlb_stream_deadline_cancel(struct xlb_stream_worker *w, struct xlb_stream_rpc *r)
{
    if (xlb_tcp_timer_armed(&r->deadline))
        xlb_tcp_wheel_cancel(&w->deadlines, &r->deadline);
}

static void deadline_passed(struct xlb_stream_worker *w, struct xlb_stream_rpc *r)
{
    if (!r->in_use || r->conn == XLB_STREAM_NONE || r->down_end)
        return; /* answered, or its client is gone (the backend stream was cancelled then) */
    struct xlb_stream_conn *c = &w->conns[r->conn];
    int32_t id = r->client_id;
    w->ctx->stats->events[XLB_EVENT_STREAM_RPCS_DEADLINE]++;
    r->outcome_known = true;
    r->ok = false;
    if (c->side.h2 != NULL && !c->side.done) {
        /* The stream's close must not find the RPC: it is ended here. */
        nghttp2_session_set_stream_user_data(c->side.h2, id, NULL);
        if (!r->response_sent)
            xlb_stream_reply_status(c, id, "4", "xlb: deadline exceeded");
        else
            nghttp2_submit_rst_stream(c->side.h2, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
    }
    xlb_stream_client_closed(c, r, NGHTTP2_CANCEL); /* the backend's stream is cancelled */
    xlb_stream_send(&c->side);
}

/*
 * A backend's answer that comes once the deadline has passed but before the wheel fired it
 * (the wheel turns on the poll; the backend's own copy of the deadline ends just after xlb's):
 * the call is over for a gRPC client already, so it ends here the same way, with xlb's status,
 * whatever the backend said. True when it ended (the RPC may be gone).
 */
bool xlb_stream_deadline_overdue(struct xlb_stream_worker *w, struct xlb_stream_rpc *r)
{
    if (r->deadline_ms == 0 || xlb_stream_now_ms(w->ctx) < r->deadline_ms || r->response_sent)
        return false;
    xlb_stream_deadline_cancel(w, r);
    deadline_passed(w, r);
    return true;
}

void xlb_stream_deadline_poll(struct xlb_stream_worker *w)
{
    if (w->deadlines.armed == 0)
        return;
    uint64_t now = xlb_stream_now_ms(w->ctx);
    for (uint32_t n = 0; n < DEADLINES_PER_POLL; n++) {
        struct xlb_tcp_timer *t = xlb_tcp_wheel_expired(&w->deadlines, now);
        if (t == NULL)
            break;
        struct xlb_stream_rpc *r =
            (struct xlb_stream_rpc *)((uint8_t *)t - offsetof(struct xlb_stream_rpc, deadline));
        w->current = NULL;
        deadline_passed(w, r);
        xlb_stream_route_output(w);
    }
}
