/*
 * Subchannels: per worker and endpoint, an HTTP/2 client connection over xlb's TCP from a SNAT
 * port of the worker's slice, made when a pick first needs it. Its flow's key is made up (the
 * address it connects to as source, the SNAT address as destination, the subchannel's number
 * as port): no client ever sends to a SNAT address, so it cannot clash with a client's key;
 * the backend's segments find it by the SNAT port, as a relayed connection's do. Requests are
 * submitted to its session at once: nghttp2 sends them after the connection preface, once TCP
 * is up.
 *
 * A server's SETTINGS_MAX_CONCURRENT_STREAMS bounds the RPCs one subchannel carries at a time;
 * beyond it nghttp2 would hold new streams back until one ends. So an endpoint whose listed
 * subchannels are all that full gets another (up to xlb.stream_subchannels_per_endpoint), and only
 * when that many are full do RPCs wait in nghttp2's queue.
 */
#include <string.h>
#include <sys/socket.h>

#include "stream_conn.h"
#include "xlb_siphash.h"

static struct xlb_stream_sub *sub_alloc(struct xlb_stream_worker *w)
{
    if (w->sub_free == XLB_STREAM_NONE)
        return NULL;
    struct xlb_stream_sub *s = &w->subs[w->sub_free];
    w->sub_free = s->next_free;
    memset(s, 0, sizeof(*s));
    s->side.w = w;
    s->side.is_sub = true;
    s->side.flow = XLB_STREAM_NONE;
    s->side.link.in_use = true;
    s->next_same = XLB_STREAM_NONE;
    w->subs_in_use++;
    return s;
}

static void sub_free(struct xlb_stream_worker *w, struct xlb_stream_sub *s)
{
    xlb_stream_eyeballs_stop(s); /* before its session goes: an attempt's racers go with it */
    if (s->side.h2 != NULL) {
        nghttp2_session_del(s->side.h2);
        s->side.h2 = NULL;
    }
    xlb_stream_subcalls_forget(s);
    xlb_stream_tls_close(&s->side);
    xlb_h2_quota_fini(&s->side.quota);
    rte_pktmbuf_free(s->side.pending);
    s->side.pending = NULL;
    xlb_stream_sub_unlink(s);
    s->side.link.in_use = false;
    s->next_free = w->sub_free;
    w->sub_free = (uint32_t)(s - w->subs);
    w->subs_in_use--;
}

static bool session_open(struct xlb_stream_sub *s)
{
    struct xlb_stream_worker *w = s->side.w;
    if (!xlb_h2_quota_init(&s->side.quota, &w->heap, XLB_STREAM_QUOTA_FLOOR,
                           XLB_STREAM_QUOTA_LIMIT))
        return false;
    if (nghttp2_session_client_new3(&s->side.h2, w->sub_callbacks, s, w->options,
                                    &s->side.quota.mem) != 0) {
        s->side.h2 = NULL;
        return false;
    }
    const nghttp2_settings_entry settings[] = {
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, w->limits.window_bytes},
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
    };
    return nghttp2_submit_settings(s->side.h2, NGHTTP2_FLAG_NONE, settings, 2) == 0;
}

/* The made-up client key of a subchannel's flow. */
static void sub_key(const struct xlb_stream_worker *w, const struct xlb_stream_sub *s,
                    const struct xlb_host_port *to, const struct xlb_addr *snat,
                    struct xlb_flow_key *key)
{
    memset(key, 0, sizeof(*key));
    key->family = to->addr.family;
    memcpy(key->src, to->addr.bytes, 16);
    memcpy(key->dst, snat->bytes, 16);
    key->src_port = rte_cpu_to_be_16(to->port);
    key->dst_port = rte_cpu_to_be_16((uint16_t)(s - w->subs));
}

static uint32_t sub_iss(const struct xlb_burst_ctx *ctx, const struct xlb_tcp_tuple *t)
{
    uint64_t key[2];
    xlb_siphash_key(key, ctx->flows->secret);
    return (uint32_t)xlb_siphash24(key, t, sizeof(*t)) + (uint32_t)(xlb_stream_now_ms(ctx) * 250);
}

/* The worker's first SNAT address of the family, NULL when it has none. */
static const struct xlb_addr *snat_of(const struct xlb_burst_ctx *ctx, uint8_t family)
{
    for (unsigned i = 0; i < ctx->flows->n_snat; i++)
        if (ctx->flows->snat[i].family == family)
            return &ctx->flows->snat[i];
    return NULL;
}

bool xlb_stream_sub_reachable(struct xlb_stream_worker *w, const struct xlb_snapshot *snap,
                              const struct xlb_host_port *to)
{
    struct rte_ether_addr mac;
    uint16_t out_port;
    return snat_of(w->ctx, to->addr.family) != NULL &&
           xlb_egress_next_hop(snap, &to->addr, &mac, &out_port);
}

/* The flow, the link and the TCP connection of a new subchannel to one address of its
 * endpoint; false when any fails. */
static bool connect_sub(struct xlb_stream_worker *w, const struct xlb_snapshot *snap,
                        struct xlb_stream_sub *s, const struct xlb_host_port *to)
{
    struct xlb_burst_ctx *ctx = w->ctx;
    struct rte_ether_addr mac;
    uint16_t out_port;
    if (!xlb_egress_next_hop(snap, &to->addr, &mac, &out_port))
        return false;
    const struct xlb_addr *snat = snat_of(ctx, to->addr.family);
    if (snat == NULL)
        return false;
    struct xlb_flow_key key;
    sub_key(w, s, to, snat, &key);
    enum xlb_flow_create_failure why;
    struct xlb_flow *f =
        xlb_flow_create(ctx->flows, &key, &to->addr, rte_cpu_to_be_16(to->port), &why);
    if (f == NULL)
        return false;
    f->kind = XLB_FLOW_KIND_STREAM_SUB;
    f->client_mac = mac;
    f->client_port_index = out_port;
    f->backend_mac = mac;
    f->backend_port_index = out_port;
    f->endpoint_slot = RTE_MIN(s->endpoint_slot, (uint32_t)XLB_ENDPOINT_SLOTS);
    f->cluster_slot = XLB_CLUSTER_SLOTS; /* each RPC counts for its cluster, not the link */
    f->state = XLB_FLOW_ESTABLISHED;
    f->stream = (uint32_t)(s - w->subs);
    xlb_flow_set_timeout(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz, XLB_FLOW_ESTABLISHED_TIMEOUT_S);
    xlb_flow_schedule(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz);
    s->side.flow = (uint32_t)(f - ctx->flows->flows);
    struct xlb_stream_link *l = &s->side.link;
    size_t len = to->addr.family == AF_INET ? 4 : 16;
    l->tuple.family = to->addr.family;
    memcpy(l->tuple.local, ctx->flows->snat[f->snat_index].bytes, len);
    memcpy(l->tuple.remote, to->addr.bytes, len);
    l->tuple.local_port = rte_cpu_to_be_16(f->snat_port);
    l->tuple.remote_port = rte_cpu_to_be_16(to->port);
    l->mac = mac;
    l->local = snap->ports[out_port].mac;
    l->flat = !snap->ports[out_port].tx_multi_seg;
    l->port_index = out_port;
    xlb_tcp_set_mss_limit(w->ep, l->tuple.family,
                          xlb_egress_mss_max(snap, l->tuple.family, out_port, out_port));
    s->side.tcp = xlb_tcp_connect(w->ep, &l->tuple, sub_iss(ctx, &l->tuple), xlb_stream_now_ms(ctx),
                                  &xlb_stream_client_callbacks, s);
    return s->side.tcp != NULL;
}

/* Whether new RPCs may go over it: not closing, not told GOAWAY. */
static bool takes_rpcs(const struct xlb_stream_sub *s)
{
    return !s->side.done && s->side.h2 != NULL && !s->side.shut &&
           nghttp2_session_check_request_allowed(s->side.h2);
}

/* Whether it has a stream to spare under its server's limit. Before the server's SETTINGS
 * the limit is unknown: RPCs go to it (nghttp2 holds them until the preface is through). */
static bool has_room(const struct xlb_stream_sub *s)
{
    return !s->ready || s->rpcs < nghttp2_session_get_remote_settings(
                                      s->side.h2, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
}

void xlb_stream_sub_unlink(struct xlb_stream_sub *s)
{
    struct xlb_stream_worker *w = s->side.w;
    if (!s->linked)
        return;
    s->linked = false;
    uint32_t me = (uint32_t)(s - w->subs);
    uint32_t *at = &w->sub_of_slot[s->endpoint_slot];
    bool was_first = *at == me;
    for (uint32_t n = 0; *at != XLB_STREAM_NONE && n < w->limits.subchannels_per_endpoint; n++) {
        if (*at == me) {
            *at = s->next_same;
            break;
        }
        at = &w->subs[*at].next_same;
    }
    s->next_same = XLB_STREAM_NONE;
    uint32_t first = w->sub_of_slot[s->endpoint_slot];
    if (was_first && first != XLB_STREAM_NONE) /* the next one speaks for the endpoint now */
        xlb_stream_sub_report(&w->subs[first], xlb_stream_sub_state(&w->subs[first]));
}

void xlb_stream_sub_replace(struct xlb_stream_sub *old, struct xlb_stream_sub *s)
{
    struct xlb_stream_worker *w = old->side.w;
    if (!old->linked)
        return;
    uint32_t *at = &w->sub_of_slot[old->endpoint_slot];
    for (uint32_t n = 0; *at != XLB_STREAM_NONE && n < w->limits.subchannels_per_endpoint; n++) {
        if (*at == (uint32_t)(old - w->subs)) {
            *at = (uint32_t)(s - w->subs);
            s->next_same = old->next_same;
            s->linked = true;
            old->linked = false;
            old->next_same = XLB_STREAM_NONE;
            return;
        }
        at = &w->subs[*at].next_same;
    }
}

/* A new subchannel at the end of its endpoint's list (first: the endpoint is CONNECTING). */
static void sub_link(struct xlb_stream_worker *w, struct xlb_stream_sub *s)
{
    uint32_t *at = &w->sub_of_slot[s->endpoint_slot];
    while (*at != XLB_STREAM_NONE)
        at = &w->subs[*at].next_same;
    *at = (uint32_t)(s - w->subs);
    s->linked = true;
    if (w->sub_of_slot[s->endpoint_slot] == (uint32_t)(s - w->subs))
        xlb_stream_sub_report(s, XLB_CONN_CONNECTING);
}

struct xlb_stream_sub *xlb_stream_sub_attempt(struct xlb_stream_worker *w,
                                              const struct xlb_snapshot *snap,
                                              const struct xlb_lb_endpoint *e,
                                              const struct xlb_stream_addrs *addrs, uint32_t k)
{
    struct xlb_stream_sub *s = sub_alloc(w);
    if (s == NULL)
        return NULL;
    s->endpoint_slot = e->slot;
    s->endpoint = *e;
    s->addrs = *addrs;
    s->address = (uint8_t)k;
    s->head = XLB_STREAM_NONE;
    for (uint32_t i = 0; i < XLB_MAX_ENDPOINT_ADDRESSES; i++)
        s->attempts[i] = XLB_STREAM_NONE;
    const char *health_service = xlb_snapshot_slot_health(snap, e->slot);
    if (health_service != NULL)
        xlb_stream_health_prepare(s, health_service);
    const struct xlb_wrr_config *oob = xlb_snapshot_slot_oob(snap, e->slot);
    if (oob != NULL)
        xlb_stream_oob_prepare(s, oob);
    /* A29: the cluster's TLS, or none; unknown (the snapshot could not index its slots): no
     * connection rather than cleartext to a TLS cluster. */
    struct ssl_ctx_st *tls = NULL;
    bool known = xlb_snapshot_slot_tls(snap, e->slot, &tls);
    if (!known)
        w->ctx->stats->events[XLB_EVENT_STREAM_TLS_NO_MEMORY]++;
    if (!known || !session_open(s) || (tls != NULL && !xlb_stream_tls_connect(&s->side, tls)) ||
        !connect_sub(w, snap, s, &addrs->at[k])) {
        if (s->side.flow != XLB_STREAM_NONE) {
            struct xlb_flow *f = &w->ctx->flows->flows[s->side.flow];
            f->stream = XLB_STREAM_NONE;
            s->side.flow = XLB_STREAM_NONE;
            xlb_flow_release(w->ctx, f);
        }
        sub_free(w, s);
        return NULL;
    }
    w->ctx->stats->events[XLB_EVENT_STREAM_SUBCHANNELS]++;
    return s;
}

/* The address an endpoint's subchannel connected to, when one of its listed did: another
 * subchannel to it goes there too (the endpoint's happy eyeballs are over). */
static int connected_address(const struct xlb_stream_worker *w, uint32_t slot)
{
    uint32_t i = w->sub_of_slot[slot];
    for (uint32_t n = 0; i != XLB_STREAM_NONE && n < w->limits.subchannels_per_endpoint; n++) {
        if (w->subs[i].connected)
            return w->subs[i].address;
        i = w->subs[i].next_same;
    }
    return -1;
}

/*
 * A new subchannel to the endpoint, listed: the head of its happy eyeballs (A61/A62) over the
 * addresses xlb can reach. An address whose attempt cannot even be made (no flow, no memory)
 * counts as failed: the next one is tried at once.
 */
static struct xlb_stream_sub *sub_connect(struct xlb_stream_worker *w,
                                          const struct xlb_snapshot *snap,
                                          const struct xlb_lb_endpoint *e,
                                          const struct xlb_stream_addrs *addrs)
{
    uint32_t usable = 0;
    int connected = connected_address(w, e->slot);
    for (uint32_t k = 0; k < addrs->n; k++)
        if ((connected < 0 || (uint32_t)connected == k) &&
            xlb_stream_sub_reachable(w, snap, &addrs->at[k]))
            usable |= 1u << k;
    uint64_t now = xlb_stream_now_ms(w->ctx);
    struct xlb_eyeballs eb;
    struct xlb_stream_sub *s = NULL;
    uint32_t k = xlb_eyeballs_begin(&eb, addrs->n, usable, now);
    while (k != XLB_EYEBALLS_NONE && (s = xlb_stream_sub_attempt(w, snap, e, addrs, k)) == NULL)
        k = xlb_eyeballs_failed(&eb, k, now);
    if (s == NULL)
        return NULL;
    s->eyeballs = eb;
    s->attempts[k] = (uint32_t)(s - w->subs);
    sub_link(w, s);
    xlb_stream_eyeballs_begun(s);
    return s;
}

struct xlb_stream_sub *xlb_stream_sub_for(struct xlb_stream_worker *w,
                                          const struct xlb_snapshot *snap,
                                          const struct xlb_lb_endpoint *e,
                                          const struct xlb_lb_cluster *c, uint32_t i,
                                          const struct xlb_stream_addrs *held)
{
    if (e->slot >= XLB_ENDPOINT_SLOTS || snap == NULL)
        return NULL;
    /* The slot reused by another endpoint before the prune came by: its list goes. */
    for (uint32_t n = 0; n < w->limits.subchannels_per_endpoint; n++) {
        uint32_t j = w->sub_of_slot[e->slot];
        if (j == XLB_STREAM_NONE || xlb_host_port_equal(&w->subs[j].endpoint.where, &e->where))
            break;
        xlb_stream_sub_retire(&w->subs[j]);
    }
    struct xlb_stream_sub *full = NULL; /* the first that takes RPCs, though it is full */
    uint32_t listed = 0;
    uint32_t at = w->sub_of_slot[e->slot];
    while (at != XLB_STREAM_NONE && listed < w->limits.subchannels_per_endpoint) {
        struct xlb_stream_sub *s = &w->subs[at];
        at = s->next_same;
        if (!takes_rpcs(s)) {
            xlb_stream_sub_unlink(s); /* going away: its RPCs finish, new ones go elsewhere */
            continue;
        }
        if (has_room(s))
            return s;
        if (full == NULL)
            full = s;
        listed++;
    }
    if (listed >= w->limits.subchannels_per_endpoint)
        return full; /* as many as allowed, all full: the RPC waits in nghttp2's queue */
    /* A new subchannel: the endpoint's addresses, copied now (not on every RPC's pick). */
    struct xlb_stream_addrs addrs = {.n = 1, .at = {e->where}};
    if (held != NULL && held->n > 0)
        addrs = *held;
    else if (c != NULL && i < c->n_endpoints)
        xlb_stream_addrs_of(c, i, &addrs);
    struct xlb_stream_sub *s = sub_connect(w, snap, e, &addrs);
    if (s != NULL && full != NULL)
        w->ctx->stats->events[XLB_EVENT_STREAM_SUBS_EXTRA]++;
    return s != NULL ? s : full;
}

/* The endpoint's state for the LB core (xlbctl endpoints), while this is its subchannel. */
void xlb_stream_sub_report(struct xlb_stream_sub *s, enum xlb_connectivity state)
{
    struct xlb_stream_worker *w = s->side.w;
    if (w->ctx->lb == NULL || s->endpoint_slot >= XLB_ENDPOINT_SLOTS ||
        w->sub_of_slot[s->endpoint_slot] != (uint32_t)(s - w->subs))
        return;
    xlb_lb_connectivity_set(w->ctx->lb, s->endpoint_slot, state, xlb_stream_now_ms(w->ctx));
    if (w->ctx->lb->load != NULL) /* read by the control plane, written by this worker only */
        w->ctx->lb->load->endpoints[s->endpoint_slot].connected_address =
            state == XLB_CONN_READY ? (uint8_t)(s->address + 1) : 0;
    w->repick = true; /* the waiting RPCs may go now, or elsewhere */
    if (state == XLB_CONN_READY)
        xlb_backoff_reset(&w->backoff[s->endpoint_slot]);
}

/* A connection attempt failed: the endpoint is connected again after its backoff. When the
 * list is full the endpoint waits for a pick to find it IDLE (it stays TRANSIENT_FAILURE). */
static void retry_later(struct xlb_stream_sub *s)
{
    struct xlb_stream_worker *w = s->side.w;
    if (s->endpoint_slot >= XLB_ENDPOINT_SLOTS || w->ctx->lb == NULL)
        return;
    struct xlb_stream_retry *free_entry = NULL;
    for (uint32_t i = 0; i < XLB_STREAM_RETRIES; i++) {
        if (w->retries[i].slot == s->endpoint_slot)
            return;
        if (free_entry == NULL && w->retries[i].slot == XLB_STREAM_NONE)
            free_entry = &w->retries[i];
    }
    if (free_entry == NULL)
        return;
    uint32_t delay = xlb_backoff_next(&w->backoff[s->endpoint_slot], &w->ctx->lb->rng);
    free_entry->slot = s->endpoint_slot;
    free_entry->at_ms = xlb_stream_now_ms(w->ctx) + delay;
    free_entry->endpoint = s->endpoint;
    free_entry->addrs = s->addrs;
}

void xlb_stream_sub_retry(struct xlb_stream_worker *w)
{
    if (w->in_use == 0)
        return; /* no client connection, no channel to keep up: retries wait for one */
    uint64_t now = xlb_stream_now_ms(w->ctx);
    for (uint32_t i = 0; i < XLB_STREAM_RETRIES; i++) {
        struct xlb_stream_retry *r = &w->retries[i];
        if (r->slot == XLB_STREAM_NONE || now < r->at_ms)
            continue;
        r->slot = XLB_STREAM_NONE;
        if (w->ctx->lb == NULL || w->sub_of_slot[r->endpoint.slot] != XLB_STREAM_NONE ||
            xlb_lb_connectivity_get(w->ctx->lb, r->endpoint.slot) != XLB_CONN_TRANSIENT_FAILURE)
            continue;
        /* No attempt could even be made (the subchannel pool or the flow table full: failed
         * attempts hold theirs until their flow's closed timeout): the next backoff, rather
         * than an endpoint left in TRANSIENT_FAILURE with nothing to reconnect it. */
        if (xlb_stream_sub_for(w, w->snap, &r->endpoint, NULL, 0, &r->addrs) == NULL) {
            r->slot = r->endpoint.slot;
            r->at_ms = now + xlb_backoff_next(&w->backoff[r->slot], &w->ctx->lb->rng);
        }
    }
}

/* Whether it is its endpoint's only subchannel listed. */
static bool sub_alone(const struct xlb_stream_sub *s)
{
    const struct xlb_stream_worker *w = s->side.w;
    return s->linked && w->sub_of_slot[s->endpoint_slot] == (uint32_t)(s - w->subs) &&
           s->next_same == XLB_STREAM_NONE;
}

void xlb_stream_sub_goaway(struct xlb_stream_sub *s)
{
    struct xlb_stream_worker *w = s->side.w;
    if (!s->linked)
        return; /* already replaced (a second GOAWAY) */
    w->ctx->stats->events[XLB_EVENT_STREAM_SUB_GOAWAYS]++;
    xlb_stream_subcalls_stop(s); /* A17: the Watch call is cancelled with the connection */
    bool alone = sub_alone(s);
    if (alone)
        xlb_stream_sub_report(s, XLB_CONN_IDLE);
    xlb_stream_sub_unlink(s);
    /* A shutdown notice (last stream 2^31-1) refuses nothing: sending no RPC here from now
     * on, none is refused by the final GOAWAY either. The new subchannel takes picks once
     * READY; a backend that is going away refuses it, and backoff follows. An endpoint with
     * other subchannels goes on over them. */
    if (alone && w->snap != NULL)
        xlb_stream_sub_for(w, w->snap, &s->endpoint, NULL, 0, &s->addrs);
}

void xlb_stream_sub_closed(struct xlb_stream_sub *s, enum xlb_tcp_close_reason why)
{
    struct xlb_stream_worker *w = s->side.w;
    /* An attempt abandoned, or one that failed while another address is still being tried:
     * not the endpoint's failure (no state, no backoff, no failure counted). */
    if (xlb_stream_eyeballs_closed(s)) {
        xlb_stream_sub_lost(s);
        xlb_stream_sub_unlink(s);
        return;
    }
    /* The endpoint's state changes with its last subchannel only. */
    if (sub_alone(s)) {
        xlb_stream_sub_report(s, s->ready ? XLB_CONN_IDLE : XLB_CONN_TRANSIENT_FAILURE);
        if (!s->ready)
            retry_later(s);
    }
    /* A retired subchannel's slot may belong to another endpoint by now. */
    if (!s->retired && (!s->ready || why != XLB_TCP_CLOSE_NORMAL))
        xlb_flow_count_endpoint(w->ctx, s->endpoint_slot, s->ready);
    xlb_stream_sub_lost(s);
    xlb_stream_sub_unlink(s);
}

void xlb_stream_sub_release(struct xlb_burst_ctx *ctx, struct xlb_flow *f)
{
    struct xlb_stream_worker *w = ctx->stream;
    if (w == NULL || f->stream >= w->n_subs)
        return;
    struct xlb_stream_sub *s = &w->subs[f->stream];
    f->stream = XLB_STREAM_NONE;
    if (!s->side.link.in_use)
        return;
    s->side.flow = XLB_STREAM_NONE;
    xlb_stream_enter(w, ctx, NULL, &s->side.link);
    xlb_stream_abort(&s->side);
    xlb_stream_route_output(w);
    sub_free(w, s);
}

/* Segments from a subchannel's backend. */
xlb_verdict xlb_stream_from_backend(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                    struct xlb_frame *frame, struct xlb_flow *f)
{
    struct xlb_stream_worker *w = ctx->stream;
    if (w == NULL || f->stream >= w->n_subs || !w->subs[f->stream].side.link.in_use)
        return XLB_DROP_STREAM_ENDED;
    struct xlb_stream_sub *s = &w->subs[f->stream];
    struct xlb_tcp_conn *tcp = s->side.tcp;
    if (tcp != NULL && s->side.done &&
        !(xlb_tcp_conn_state(tcp) == XLB_TCP_TIME_WAIT && xlb_tcp_conn_user(tcp) == s))
        tcp = NULL;
    if (tcp == NULL)
        return XLB_DROP_STREAM_ENDED;
    if (!s->side.done)
        xlb_flow_set_timeout(ctx->flows, f, ctx->now_tsc, ctx->tsc_hz,
                             XLB_FLOW_ESTABLISHED_TIMEOUT_S);
    rte_pktmbuf_adj(frame->m, frame->l2_len);
    xlb_stream_enter(w, ctx, snap, &s->side.link);
    xlb_tcp_receive(w->ep, tcp, frame->m, xlb_stream_now_ms(ctx));
    xlb_stream_route_output(w);
    return XLB_VERDICT_SENT;
}
