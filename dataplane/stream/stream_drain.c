/*
 * Draining the stream mode's clients while xlbd stops (SIGTERM, xlb.drain_seconds): as an
 * HTTP/2 server shuts down gracefully (RFC 9113 6.8), each client session first gets a GOAWAY
 * with the largest stream identifier (the shutdown notice: streams it is opening still count),
 * then, a second later, the GOAWAY with the last stream the session took. A gRPC client sends
 * its next RPCs on a new connection and retries those above that stream; the RPCs the session
 * took finish, and a session with none left closes (xlb_stream_pump shuts its connection once
 * nghttp2 wants neither to read nor to write). The control plane stops the workers when no
 * session is left, or when the drain time is over.
 */
#include "stream_conn.h"

/* Time between the notice and the final GOAWAY: a round trip for the streams the client was
 * opening when the notice left, as nghttp2's documentation advises. */
#define DRAIN_NOTICE_MS 1000u

static void tell(struct xlb_stream_conn *c, uint8_t phase)
{
    nghttp2_session *h2 = c->side.h2;
    if (phase == 1)
        nghttp2_submit_shutdown_notice(h2);
    else
        nghttp2_submit_goaway(h2, NGHTTP2_FLAG_NONE, nghttp2_session_get_last_proc_stream_id(h2),
                              NGHTTP2_NO_ERROR, NULL, 0);
}

void xlb_stream_drain_session(struct xlb_stream_conn *c)
{
    struct xlb_stream_worker *w = c->side.w;
    for (uint8_t phase = 1; phase <= w->drain_phase; phase++)
        tell(c, phase);
}

/* Every live client session gets this phase's GOAWAY, sent at once. */
static void tell_all(struct xlb_stream_worker *w, uint8_t phase)
{
    for (uint32_t i = 0; i < w->n_conns; i++) {
        struct xlb_stream_conn *c = &w->conns[i];
        if (!c->side.link.in_use || c->side.h2 == NULL || c->side.done)
            continue;
        tell(c, phase);
        w->current = &c->side.link;
        xlb_stream_pump(&c->side);
        xlb_stream_route_output(w);
    }
    w->current = NULL;
}

void xlb_stream_drain_step(struct xlb_stream_worker *w)
{
    uint64_t now = xlb_stream_now_ms(w->ctx);
    if (w->drain_phase == 0) {
        w->drain_phase = 1;
        w->drain_notice_ms = now;
        tell_all(w, 1);
    } else if (w->drain_phase == 1 && now - w->drain_notice_ms >= DRAIN_NOTICE_MS) {
        w->drain_phase = 2;
        tell_all(w, 2);
    }
}
