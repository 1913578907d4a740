/*
 * The end of a client connection whose client said GOAWAY: xlb waits for the client's FIN
 * before sending its own, so that the client, the side that chose to close, is the one that
 * keeps the connection in TIME-WAIT (RFC 9293 3.6). Sent first, xlb's FIN would put xlb's end
 * in TIME-WAIT, holding a pool entry and a TCP block for its two seconds: at a few thousand
 * short connections a second (a gRPC client opening a channel per RPC, h2load -c), that is the
 * whole pool, and new connections are refused.
 *
 * A client that said GOAWAY and does not close is waited for XLB_STREAM_LINGER_MS at most;
 * then xlb closes as before. A client that closes without GOAWAY gets xlb's FIN in answer to
 * its own, and xlb's own GOAWAYs (draining) close at once: neither lingers.
 */
#include "stream_conn.h"

#define XLB_STREAM_LINGER_MS   2000u
#define LINGERS_ENDED_PER_POLL 64u

bool xlb_stream_linger(struct xlb_stream_side *d)
{
    if (d->is_sub || !d->peer_goaway || d->linger_over)
        return false;
    if (!xlb_tcp_timer_armed(&d->linger)) {
        struct xlb_stream_worker *w = d->w;
        uint64_t now = xlb_stream_now_ms(w->ctx);
        if (w->lingers.armed == 0)
            xlb_tcp_wheel_init(&w->lingers, now);
        xlb_tcp_wheel_arm(&w->lingers, &d->linger, now + XLB_STREAM_LINGER_MS);
    }
    return true;
}

void xlb_stream_linger_cancel(struct xlb_stream_side *d)
{
    if (xlb_tcp_timer_armed(&d->linger))
        xlb_tcp_wheel_cancel(&d->w->lingers, &d->linger);
}

void xlb_stream_linger_poll(struct xlb_stream_worker *w)
{
    if (w->lingers.armed == 0)
        return;
    uint64_t now = xlb_stream_now_ms(w->ctx);
    for (uint32_t n = 0; n < LINGERS_ENDED_PER_POLL; n++) {
        struct xlb_tcp_timer *t = xlb_tcp_wheel_expired(&w->lingers, now);
        if (t == NULL)
            break;
        struct xlb_stream_side *d =
            (struct xlb_stream_side *)((uint8_t *)t - offsetof(struct xlb_stream_side, linger));
        d->linger_over = true;
        w->ctx->stats->events[XLB_EVENT_STREAM_LINGER_TIMEOUTS]++;
        w->current = &d->link;
        xlb_stream_pump(d); /* the session is over: its FIN goes now */
        xlb_stream_route_output(w);
    }
    w->current = NULL;
}
