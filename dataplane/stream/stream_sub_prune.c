/*
 * Subchannels to endpoints that left the configuration. gRPC drops the subchannel of an
 * address its resolver no longer lists and closes its connection gracefully: the RPCs on it
 * finish, no new one starts. Here each new snapshot is checked against the worker's
 * subchannels (a bounded slice per poll): one whose endpoint slot is gone from every stream
 * VIP's tree, or whose slot now names another address (a slot is reused once its RCU grace
 * period is over), is retired: its slot goes back to IDLE for this worker, it takes no new RPC,
 * and its session says GOAWAY, so that xlb_stream_pump shuts its connection once its streams
 * have ended. An endpoint waiting to be connected again after a failure is forgotten likewise.
 */
#include "stream_conn.h"

/* Subchannels and retry entries looked at per poll. */
#define PRUNE_PER_POLL 64u

static void slot_forget(struct xlb_stream_worker *w, uint32_t slot)
{
    if (w->ctx->lb != NULL)
        xlb_lb_connectivity_set(w->ctx->lb, slot, XLB_CONN_IDLE, xlb_stream_now_ms(w->ctx));
    xlb_backoff_reset(&w->backoff[slot]);
    w->repick = true; /* RPCs waiting for it pick again */
}

void xlb_stream_sub_retire(struct xlb_stream_sub *s)
{
    struct xlb_stream_worker *w = s->side.w;
    if (s->retired)
        return;
    s->retired = true;
    xlb_stream_eyeballs_stop(s); /* its endpoint's other attempts go with it */
    w->ctx->stats->events[XLB_EVENT_STREAM_SUBS_RETIRED]++;
    if (s->linked) {
        xlb_stream_sub_unlink(s);
        if (w->sub_of_slot[s->endpoint_slot] == XLB_STREAM_NONE)
            slot_forget(w, s->endpoint_slot);
    }
    xlb_stream_subcalls_stop(s); /* its Watch or load reporting call would keep it open */
    if (s->side.h2 == NULL || s->side.done || s->side.tcp == NULL)
        return;
    nghttp2_submit_goaway(s->side.h2, NGHTTP2_FLAG_NONE,
                          nghttp2_session_get_last_proc_stream_id(s->side.h2), NGHTTP2_NO_ERROR,
                          NULL, 0);
    struct xlb_stream_link *before = w->current;
    w->current = &s->side.link;
    xlb_stream_pump(&s->side);
    xlb_stream_route_output(w);
    w->current = before;
}

static bool sub_listed(const struct xlb_snapshot *snap, const struct xlb_stream_sub *s)
{
    return xlb_snapshot_has_endpoint(snap, s->endpoint_slot, &s->endpoint.where);
}

static void prune_sub(struct xlb_stream_worker *w, const struct xlb_snapshot *snap, uint32_t i)
{
    struct xlb_stream_sub *s = &w->subs[i];
    if (s->side.link.in_use && !s->retired && s->linked && !sub_listed(snap, s))
        xlb_stream_sub_retire(s);
}

static void prune_retry(struct xlb_stream_worker *w, const struct xlb_snapshot *snap, uint32_t i)
{
    struct xlb_stream_retry *r = &w->retries[i];
    if (r->slot == XLB_STREAM_NONE || w->sub_of_slot[r->slot] != XLB_STREAM_NONE ||
        xlb_snapshot_has_endpoint(snap, r->slot, &r->endpoint.where))
        return;
    uint32_t slot = r->slot;
    r->slot = XLB_STREAM_NONE;
    slot_forget(w, slot);
}

void xlb_stream_sub_prune(struct xlb_stream_worker *w, const struct xlb_snapshot *snap)
{
    if (snap == NULL)
        return;
    if (snap->generation != w->pruned_generation) {
        w->pruned_generation = snap->generation;
        w->prune_cursor = 0;
    }
    uint32_t total = w->n_subs + XLB_STREAM_RETRIES;
    for (uint32_t n = 0; n < PRUNE_PER_POLL && w->prune_cursor < total; n++, w->prune_cursor++) {
        if (w->prune_cursor < w->n_subs)
            prune_sub(w, snap, w->prune_cursor);
        else
            prune_retry(w, snap, w->prune_cursor - w->n_subs);
    }
}
