/*
 * Moving bytes: what one side has received in order is written to the other, as the received
 * mbufs themselves, as far as the other's send queue has room; the rest waits in the first's
 * receive queue, whose window closes, so a slow reader slows the sender instead of growing
 * memory. A FIN passes on once everything before it has; a reset, a refusal or a timeout on
 * one side resets the other.
 */
#include "relay_pair.h"

/* Writes per side and pump: each moves up to a send queue's room, so a few suffice. */
#define PASSES_PER_PUMP 8

static enum xlb_relay_side_index side_of(const struct xlb_relay_pair *pr,
                                         const struct xlb_tcp_conn *c)
{
    return pr->side[XLB_RELAY_BACKEND].conn == c ? XLB_RELAY_BACKEND : XLB_RELAY_CLIENT;
}

static struct xlb_flow *flow_of(const struct xlb_relay_worker *w, const struct xlb_relay_pair *pr)
{
    return pr->flow == XLB_RELAY_NONE ? NULL : &w->ctx->flows->flows[pr->flow];
}

/* Whether a side's connection can still be written: open and not closed under us. */
static bool live(const struct xlb_relay_side *s)
{
    return s->conn != NULL && !s->done;
}

static void pass(struct xlb_relay_worker *w, struct xlb_relay_pair *pr,
                 enum xlb_relay_side_index from, enum xlb_relay_side_index to)
{
    struct xlb_relay_side *a = &pr->side[from], *b = &pr->side[to];
    if (!live(a) || !live(b))
        return;
    for (int i = 0; i < PASSES_PER_PUMP; i++) {
        const uint8_t *data;
        uint32_t piece;
        bool eof;
        if (xlb_tcp_peek(a->conn, &data, &piece, &eof) == 0)
            break;
        /* Room for at least the first piece, or b tells when it has some. */
        struct rte_mbuf *chain =
            xlb_tcp_read(w->ep, a->conn, xlb_tcp_send_space(w->ep, b->conn, piece));
        if (chain == NULL)
            break;
        if (xlb_tcp_write(w->ep, b->conn, chain) != 0) {
            rte_pktmbuf_free(chain); /* cannot happen: the room was asked for */
            break;
        }
    }
    const uint8_t *data;
    uint32_t len;
    bool eof;
    xlb_tcp_peek(a->conn, &data, &len, &eof);
    if (eof && !b->shut && live(b)) {
        b->shut = true;
        xlb_tcp_shutdown(w->ep, b->conn);
    }
    if (live(b))
        xlb_tcp_flush(w->ep, b->conn);
}

void xlb_relay_pump(struct xlb_relay_worker *w, struct xlb_relay_pair *pr)
{
    /* A write or a shutdown may call back into the pair: that call only asks for one more
     * round here. */
    if (pr->pumping) {
        pr->again = true;
        return;
    }
    pr->pumping = true;
    for (int round = 0; round < 4; round++) {
        pr->again = false;
        pass(w, pr, XLB_RELAY_CLIENT, XLB_RELAY_BACKEND);
        pass(w, pr, XLB_RELAY_BACKEND, XLB_RELAY_CLIENT);
        if (!pr->again)
            break;
    }
    pr->pumping = false;
}

void xlb_relay_abort(struct xlb_relay_worker *w, struct xlb_relay_pair *pr)
{
    for (int s = XLB_RELAY_CLIENT; s <= XLB_RELAY_BACKEND; s++)
        if (live(&pr->side[s]))
            xlb_tcp_abort(w->ep, pr->side[s].conn); /* on_closed marks it done */
}

static void on_connected(struct xlb_tcp_conn *c, void *user)
{
    struct xlb_relay_pair *pr = user;
    struct xlb_relay_worker *w = pr->w;
    if (pr->side[XLB_RELAY_BACKEND].conn == c) {
        pr->side[XLB_RELAY_BACKEND].connected = true;
        xlb_flow_count_endpoint(w->ctx, pr->endpoint_slot, true);
    } else {
        pr->side[XLB_RELAY_CLIENT].connected = true;
        /* The client's, accepted: its controller is the VIP's before anything is sent. */
        pr->side[XLB_RELAY_CLIENT].conn = c;
        if (pr->newreno)
            xlb_tcp_set_cc(w->ep, c, XLB_TCP_CC_NEWRENO);
    }
    xlb_relay_pump(w, pr);
}

static void on_data(struct xlb_tcp_conn *c, void *user)
{
    struct xlb_relay_pair *pr = user;
    (void)c;
    xlb_relay_pump(pr->w, pr);
}

/* Both sides are over: the connection's request ends for the LB core, and its flow stays a
 * little for the last segments a TIME-WAIT side may still have to answer. */
static void end_pair(struct xlb_relay_worker *w, struct xlb_relay_pair *pr)
{
    pr->ended = true;
    w->ctx->stats->events[XLB_EVENT_RELAY_CLOSED]++;
    struct xlb_flow *f = flow_of(w, pr);
    if (f == NULL)
        return;
    xlb_flow_request_finished(w->ctx, f->cluster_slot, f->endpoint_slot);
    f->cluster_slot = XLB_CLUSTER_SLOTS; /* finished: the flow's end counts nothing more */
    f->state = XLB_FLOW_CLOSED;
    xlb_flow_set_timeout(w->ctx->flows, f, w->ctx->now_tsc, w->ctx->tsc_hz,
                         XLB_FLOW_CLOSED_TIMEOUT_S + 1);
    xlb_flow_schedule(w->ctx->flows, f, w->ctx->now_tsc, w->ctx->tsc_hz);
}

static void on_closed(struct xlb_tcp_conn *c, void *user, enum xlb_tcp_close_reason why)
{
    struct xlb_relay_pair *pr = user;
    struct xlb_relay_worker *w = pr->w;
    enum xlb_relay_side_index s = side_of(pr, c);
    struct xlb_relay_side *side = &pr->side[s], *other = &pr->side[!s];
    side->done = true;
    /* A side in TIME-WAIT stays reachable through the flow; a closed one is gone (its block
     * may be another connection's at once). */
    if (xlb_tcp_conn_state(c) != XLB_TCP_TIME_WAIT)
        side->conn = NULL;
    /* What it sent last (its RST) goes out by this pair. */
    struct xlb_relay_pair *was = w->current;
    w->current = pr;
    xlb_relay_route_output(w);
    w->current = was;
    if (s == XLB_RELAY_BACKEND &&
        (why == XLB_TCP_CLOSE_REFUSED || (why == XLB_TCP_CLOSE_TIMEOUT && !side->connected))) {
        w->ctx->stats->events[XLB_EVENT_RELAY_BACKEND_FAILURES]++;
        xlb_flow_count_endpoint(w->ctx, pr->endpoint_slot, false);
    }
    if (why != XLB_TCP_CLOSE_NORMAL && live(other)) {
        w->ctx->stats->events[XLB_EVENT_RELAY_RESETS_PASSED]++;
        xlb_tcp_abort(w->ep, other->conn);
        return; /* its on_closed ends the pair */
    }
    if (!live(other) && !pr->ended)
        end_pair(w, pr);
    else
        xlb_relay_pump(w, pr); /* a FIN may still have to pass */
}

const struct xlb_tcp_callbacks xlb_relay_callbacks = {
    .on_connected = on_connected,
    .on_readable = on_data,
    .on_writable = on_data,
    .on_closed = on_closed,
};
