/*
 * Transparent retry (gRPC A6): a stream the backend refused (RST_STREAM REFUSED_STREAM, or
 * above the last stream of its GOAWAY, which nghttp2 closes with the same code) was never seen
 * by the server's application, and a gRPC client sends such an RPC again once. So does xlb:
 * while an RPC waits for its backend's first answer it keeps its request headers and the DATA
 * it has sent (in one of a few entries per worker, up to xlb.stream_retry_buffer_bytes); when the
 * stream is refused the kept bytes go back in front of what still waits, the RPC is picked
 * again and sent anew, once. The client's window is not given back twice for them: the first
 * send consumed them, `replayed` says how many the second send must not consume again.
 */
#include <string.h>

#include "stream_conn.h"

void xlb_stream_replay_keep(struct xlb_stream_rpc *r, struct xlb_stream_worker *w,
                            const struct xlb_stream_headers *h)
{
    if (r->retried || r->replay != XLB_STREAM_NONE || w->n_replays == w->limits.retry_buffers)
        return;
    uint32_t i = 0;
    while (w->replays[i].rpc != XLB_STREAM_NONE)
        i++;
    struct xlb_stream_replay *p = &w->replays[i];
    p->rpc = (uint32_t)(r - w->rpcs);
    p->len = 0;
    xlb_stream_headers_copy(&p->headers, h);
    r->replay = i;
    w->n_replays++;
}

void xlb_stream_replay_drop(struct xlb_stream_worker *w, struct xlb_stream_rpc *r)
{
    if (r->replay == XLB_STREAM_NONE)
        return;
    w->replays[r->replay].rpc = XLB_STREAM_NONE;
    r->replay = XLB_STREAM_NONE;
    w->n_replays--;
}

void xlb_stream_replay_note(struct xlb_stream_worker *w, struct xlb_stream_rpc *r,
                            const uint8_t *data, uint32_t n)
{
    if (r->replay == XLB_STREAM_NONE)
        return;
    struct xlb_stream_replay *p = &w->replays[r->replay];
    if (n > w->limits.retry_buffer_bytes - p->len) {
        xlb_stream_replay_drop(w, r); /* too long to send again */
        return;
    }
    memcpy(p->data + p->len, data, n);
    p->len += n;
}

/* The kept bytes in front of those still waiting; false when the pool has too few mbufs. */
static bool put_back(struct xlb_stream_worker *w, struct xlb_stream_rpc *r,
                     const struct xlb_stream_replay *p)
{
    struct xlb_stream_bytes again = {0};
    if (!xlb_stream_bytes_put(&again, w->ctx->pool, p->data, p->len)) {
        xlb_stream_bytes_clear(&again);
        return false;
    }
    if (again.head == NULL)
        return true;
    again.tail->next = r->up.head;
    if (r->up.tail != NULL)
        again.tail = r->up.tail;
    again.len += r->up.len;
    r->up = again;
    r->replayed = p->len;
    return true;
}

bool xlb_stream_retry(struct xlb_stream_worker *w, struct xlb_stream_rpc *r)
{
    if (r->replay == XLB_STREAM_NONE || r->response_sent || r->conn == XLB_STREAM_NONE)
        return false;
    struct xlb_stream_conn *c = &w->conns[r->conn];
    if (c->side.h2 == NULL || c->side.done)
        return false;
    struct xlb_stream_replay *p = &w->replays[r->replay];
    if (!put_back(w, r, p))
        return false;
    /* The first attempt ends unanswered: its call leaves the cluster's count (the new pick
     * counts its own). */
    xlb_flow_request_finished(w->ctx, r->cluster_slot, r->endpoint_slot);
    r->cluster_slot = XLB_CLUSTER_SLOTS;
    xlb_stream_rpc_off_sub(w, r);
    r->retried = true;
    uint32_t entry = r->replay;
    r->replay = XLB_STREAM_NONE; /* held until the pick is done with its headers */
    w->ctx->stats->events[XLB_EVENT_STREAM_RPCS_RETRIED]++;
    xlb_stream_pick(c, r, &p->headers, r->client_id, r->up_end);
    w->replays[entry].rpc = XLB_STREAM_NONE;
    w->n_replays--;
    xlb_stream_send(&c->side);
    return true;
}
