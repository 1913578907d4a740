/*
 * The pick, top to bottom. Every loop is bounded by a compiled array's length; nothing here
 * allocates, locks or calls the kernel.
 */
#include <string.h>

#include "xlb_lb.h"
#include "xlb_lb_connectivity_state.h"

uint64_t xlb_lb_in_flight(const struct xlb_lb_worker *w, uint32_t cluster_slot)
{
    uint64_t started = 0, finished = 0;
    if (w->loads == NULL || cluster_slot >= XLB_CLUSTER_SLOTS)
        return 0;
    for (unsigned i = 0; i < w->n_workers; i++) {
        const struct xlb_cluster_load *c = &w->loads[i].clusters[cluster_slot];
        started += __atomic_load_n(&c->started, __ATOMIC_RELAXED);
        finished += __atomic_load_n(&c->finished, __ATOMIC_RELAXED);
    }
    return started > finished ? started - finished : 0;
}

/* A27 drop overloads: each category in order draws once; the first hit drops the request. */
static const struct xlb_lb_drop *drawn_drop(const struct xlb_lb_cluster *c, struct xlb_rng *rng)
{
    for (uint32_t i = 0; i < c->n_drops; i++)
        if ((uint32_t)xlb_rng_next(rng) < c->drops[i].threshold)
            return &c->drops[i];
    return NULL;
}

static bool endpoint_usable(const struct xlb_lb_cluster *c, uint32_t index)
{
    return xlb_slot_usable(c->usable, index);
}

/*
 * A55/A61 override host: the session's endpoint when it may take the request, else
 * XLB_PICK_NONE with the reason in the trace. Any priority of the cluster (A75); a DRAINING
 * endpoint only when the cluster lists DRAINING in override_host_status.
 */
static uint32_t session_endpoint(const struct xlb_lb_cluster *c, const struct xlb_lb_session *s,
                                 struct xlb_lb_trace *trace)
{
    if (s == NULL || s->n_addresses == 0)
        return XLB_PICK_NONE;
    trace->override = XLB_LB_OVERRIDE_UNKNOWN;
    /* A61: the addresses of one endpoint; the first one the cluster knows decides. */
    for (uint32_t i = 0; i < s->n_addresses && c->override != NULL; i++) {
        const struct xlb_override_bucket *b = xlb_override_map_find(c->override, &s->addresses[i]);
        if (b == NULL)
            continue;
        if (!(c->override_status & XLB_HEALTH_BIT(b->status))) {
            trace->override = XLB_LB_OVERRIDE_STATUS;
            return XLB_PICK_NONE;
        }
        /* The compiler stores endpoint indexes in the map's slot field. */
        if (!endpoint_usable(c, b->slot)) {
            trace->override = XLB_LB_OVERRIDE_UNUSABLE;
            return XLB_PICK_NONE;
        }
        trace->override = XLB_LB_OVERRIDE_USED;
        return b->slot;
    }
    return XLB_PICK_NONE;
}

/* A27 weighted locality, then round robin inside it (arrays hold usable endpoints only). */
static uint32_t round_robin_endpoint(const struct xlb_lb_priority *p, struct xlb_lb_worker *w)
{
    uint32_t loc = xlb_wchoice_pick(p->locality_choice, &w->rng);
    if (loc == XLB_PICK_NONE)
        return XLB_PICK_NONE;
    const struct xlb_lb_locality *l = &p->localities[loc];
    return xlb_rr_pick(l->rr, &w->cursors[l->load_slot % XLB_LOCALITY_SLOTS]);
}

/*
 * xlbctl simulate's weighted round robin (A58): the shares the workers use now, by the same
 * stride walk; round robin when no worker has shares for the locality (no stream traffic).
 */
static uint32_t wrr_endpoint(const struct xlb_lb_cluster *c, const struct xlb_lb_priority *p,
                             struct xlb_lb_worker *w)
{
    uint32_t loc = xlb_wchoice_pick(p->locality_choice, &w->rng);
    if (loc == XLB_PICK_NONE)
        return XLB_PICK_NONE;
    const struct xlb_lb_locality *l = &p->localities[loc];
    struct xlb_rr_cursor *cursor = &w->cursors[l->load_slot % XLB_LOCALITY_SLOTS];
    const struct xlb_rr *rr = l->rr;
    uint32_t n = rr != NULL ? rr->n_slots : 0;
    bool any = false;
    for (uint32_t step = 0; step < n * XLB_WRR_MAX_ROUNDS; step++) {
        uint32_t seq = cursor->next++, at = seq % n, slot = c->endpoints[rr->slots[at]].slot;
        uint32_t share = slot < XLB_ENDPOINT_SLOTS ? w->wrr_shares[slot] : 0;
        if (xlb_wrr_takes(share, at, n, seq))
            return rr->slots[at];
        any = any || share > 0;
        if (step + 1 == n && !any)
            break; /* a whole round without a share: no worker weighs this locality */
    }
    return xlb_rr_pick(rr, cursor);
}

/* A27 weighted locality, then least request inside it (A48). */
static uint32_t least_request_endpoint(const struct xlb_lb_cluster *c,
                                       const struct xlb_lb_priority *p, struct xlb_lb_worker *w)
{
    uint32_t loc = xlb_wchoice_pick(p->locality_choice, &w->rng);
    if (loc == XLB_PICK_NONE)
        return XLB_PICK_NONE;
    struct xlb_in_flight_view view = xlb_lb_in_flight_view(c, w->load, w->in_flight_sums);
    return xlb_least_request_pick_view(p->localities[loc].lr, &view, c->usable, &w->rng,
                                       w->least_request_trace);
}

static bool usable_at(const void *ctx, uint32_t index)
{
    return xlb_slot_usable(((const struct xlb_lb_cluster *)ctx)->usable, index);
}

/* A62 without connectivity (L4, splice, simulate): the first usable endpoint, kept. */
static uint32_t pick_first_endpoint(const struct xlb_lb_cluster *c, const struct xlb_lb_priority *p,
                                    struct xlb_lb_worker *w)
{
    struct xlb_pick_first_state none = {0};
    return xlb_pick_first_pick(p->pick_first, xlb_lb_pick_first_state(c, w, &none), usable_at, c);
}

static void count_pick(const struct xlb_lb_cluster *c, const struct xlb_lb_endpoint *e,
                       struct xlb_lb_worker *w, bool via_session)
{
    if (w->load == NULL)
        return;
    const struct xlb_lb_locality *l = &c->priorities[e->priority].localities[e->locality];
    if (l->load_slot < XLB_LOCALITY_SLOTS)
        w->load->localities[l->load_slot].issued++;
    /* The endpoint's in flight counts with the cluster's, as the data plane finishes both
     * (dataplane/flow/flow.h xlb_flow_request_finished). */
    if (c->cluster_slot < XLB_CLUSTER_SLOTS) {
        w->load->clusters[c->cluster_slot].started++;
        if (e->slot < XLB_ENDPOINT_SLOTS)
            w->load->endpoints[e->slot].in_flight++;
    }
    if (via_session && e->slot < XLB_ENDPOINT_SLOTS)
        w->load->endpoints[e->slot].session_picks++;
}

/* The normal pick in the chosen priority (A56): ring hash, Maglev, or locality + round robin. */
static uint32_t policy_endpoint(const struct xlb_lb_cluster *c, uint64_t hash, bool hashed,
                                struct xlb_lb_worker *w, struct xlb_lb_trace *trace)
{
    if (c->chosen_priority == XLB_PICK_NONE)
        return XLB_PICK_NONE;
    const struct xlb_lb_priority *p = &c->priorities[c->chosen_priority];
    if (c->policy == XLB_LB_POLICY_LEAST_REQUEST)
        return least_request_endpoint(c, p, w);
    if (c->policy == XLB_LB_POLICY_PICK_FIRST)
        return pick_first_endpoint(c, p, w);
    if (c->policy == XLB_LB_POLICY_WRR && w->wrr_shares != NULL)
        return wrr_endpoint(c, p, w);
    if (!xlb_lb_policy_hashes(c->policy))
        return round_robin_endpoint(p, w);
    /* A42: without a hash from the route's policies the picker draws a random one. */
    trace->hashed = hashed;
    trace->hash = hashed ? hash : xlb_rng_next(&w->rng);
    if (c->policy == XLB_LB_POLICY_MAGLEV)
        return xlb_maglev_pick_usable(p->maglev, trace->hash, c->usable);
    return xlb_ring_hash_pick(p->ring, trace->hash, c->usable);
}

/* The clock of a pick over subchannels; NULL for a pick over every usable endpoint. */
struct connectivity_clock {
    uint64_t now_ms;
};

/*
 * A55/A60 with connectivity: the session's endpoint takes the RPC when READY and makes it wait
 * while IDLE or CONNECTING; in TRANSIENT_FAILURE the normal pick takes over, as gRPC's
 * override_host does for a failing subchannel. true: the RPC waits on it (trace names it).
 */
static bool session_endpoint_waits(const struct xlb_lb_cluster *c, uint32_t *index,
                                   const struct xlb_lb_worker *w, struct xlb_lb_trace *trace)
{
    const struct xlb_lb_endpoint *e = &c->endpoints[*index];
    enum xlb_connectivity s = xlb_lb_connectivity_get(w, e->slot);
    if (s == XLB_CONN_READY)
        return false;
    if (s == XLB_CONN_TRANSIENT_FAILURE) {
        trace->override = XLB_LB_OVERRIDE_UNUSABLE;
        *index = XLB_PICK_NONE;
        return false;
    }
    trace->endpoint = *index;
    trace->slot = e->slot;
    trace->priority = e->priority;
    trace->locality = e->locality;
    return true;
}

static enum xlb_lb_outcome pick_leaf(const struct xlb_lb_cluster *c,
                                     const struct xlb_lb_session *session, uint64_t hash,
                                     bool hashed, const struct connectivity_clock *clock,
                                     struct xlb_lb_worker *w, struct xlb_lb_trace *trace)
{
    trace->cluster = c;
    const struct xlb_lb_drop *drop = drawn_drop(c, &w->rng);
    if (drop != NULL) {
        trace->drop_category = drop->category;
        if (w->load != NULL && drop->load_slot < XLB_DROP_SLOTS)
            w->load->drops[drop->load_slot]++;
        return trace->outcome = XLB_LB_DROPPED;
    }
    if (c->max_requests != 0 && xlb_lb_in_flight(w, c->cluster_slot) >= c->max_requests) {
        if (w->load != NULL && c->cluster_slot < XLB_CLUSTER_SLOTS)
            w->load->clusters[c->cluster_slot].circuit_dropped++;
        return trace->outcome = XLB_LB_CIRCUIT_OPEN;
    }
    uint32_t index = session_endpoint(c, session, trace);
    if (clock != NULL && index != XLB_PICK_NONE && session_endpoint_waits(c, &index, w, trace))
        return trace->outcome = XLB_LB_QUEUE;
    bool via_session = index != XLB_PICK_NONE;
    if (!via_session && clock != NULL) {
        enum xlb_lb_outcome o = xlb_lb_pick_ready(c, hash, hashed, clock->now_ms, w, trace, &index);
        if (o != XLB_LB_PICKED)
            return trace->outcome = o;
    } else if (!via_session) {
        index = policy_endpoint(c, hash, hashed, w, trace);
    }
    if (index == XLB_PICK_NONE) {
        trace->priority = c->chosen_priority;
        return trace->outcome = XLB_LB_NO_ENDPOINT;
    }
    const struct xlb_lb_endpoint *e = &c->endpoints[index];
    trace->endpoint = index;
    trace->slot = e->slot;
    trace->priority = e->priority;
    trace->locality = e->locality;
    count_pick(c, e, w, via_session);
    return trace->outcome = XLB_LB_PICKED;
}

enum xlb_lb_outcome xlb_lb_pick_cluster(const struct xlb_lb_cluster *c,
                                        const struct xlb_lb_session *session, uint64_t hash,
                                        bool hashed, struct xlb_lb_worker *w,
                                        struct xlb_lb_trace *trace)
{
    return pick_leaf(c, session, hash, hashed, NULL, w, trace);
}

static void trace_init(struct xlb_lb_trace *t)
{
    memset(t, 0, sizeof(*t));
    t->vhost = t->route = t->target = t->entry = XLB_ROUTE_NONE;
    t->priority = t->locality = t->endpoint = t->slot = XLB_PICK_NONE;
}

/* Route matching for an L7 VIP: the target index, or an outcome that ends the pick. */
static enum xlb_lb_outcome route_request(const struct xlb_lb_vip *vip,
                                         const struct xlb_lb_request *request,
                                         struct xlb_lb_worker *w, struct xlb_lb_trace *trace)
{
    const struct xlb_route_request *http = request->http;
    trace->vhost = xlb_route_select_vhost(vip->routes, http->authority, http->authority_len);
    if (trace->vhost == XLB_ROUTE_NONE)
        return XLB_LB_NO_ROUTE;
    struct xlb_route_result result;
    enum xlb_route_verdict verdict =
        xlb_route_match(vip->routes, trace->vhost, http, &w->rng, w->scratch, &result);
    trace->route = result.route;
    if (verdict == XLB_ROUTE_RESULT_NO_ROUTE)
        return XLB_LB_NO_ROUTE;
    if (verdict != XLB_ROUTE_RESULT_CLUSTER)
        return XLB_LB_NON_FORWARDING;
    trace->target = result.cluster;
    trace->entry = result.entry;
    return XLB_LB_PICKED;
}

/* The value of cookie `name` in the request's "cookie" fields ("a=1; b=2"), or NULL. */
const char *xlb_lb_find_cookie(const struct xlb_route_request *http, const char *name,
                               uint32_t *len)
{
    size_t name_len = strlen(name);
    for (uint32_t i = 0; i < http->n_fields; i++) {
        const struct xlb_route_field *f = &http->fields[i];
        if (f->name_len != 6 || memcmp(f->name, "cookie", 6) != 0)
            continue;
        const char *p = f->value, *end = f->value + f->value_len;
        while (p < end) {
            const char *semi = memchr(p, ';', (size_t)(end - p));
            const char *stop = semi ? semi : end;
            if ((size_t)(stop - p) > name_len && memcmp(p, name, name_len) == 0 &&
                p[name_len] == '=') {
                *len = (uint32_t)(stop - p - (ptrdiff_t)name_len - 1);
                return p + name_len + 1;
            }
            p = stop + 1;
            while (p < end && *p == ' ')
                p++;
        }
    }
    return NULL;
}

bool xlb_lb_cookie_path_match(const char *request_path, uint32_t request_len,
                              const char *cookie_path)
{
    /* The request's path without its query. */
    const char *query = memchr(request_path, '?', request_len);
    uint32_t len = query != NULL ? (uint32_t)(query - request_path) : request_len;
    size_t cookie_len = strlen(cookie_path);
    if (len < cookie_len || memcmp(request_path, cookie_path, cookie_len) != 0)
        return false;
    return len == cookie_len || cookie_path[cookie_len - 1] == '/' ||
           request_path[cookie_len] == '/';
}

/* A55: the session cookie of the route or of its weighted entry drawn (A39), decoded into *out;
 * NULL when absent or malformed. */
static const struct xlb_lb_session *route_session(const struct xlb_lb_vip *vip,
                                                  const struct xlb_lb_request *request,
                                                  struct xlb_lb_trace *trace, char *scratch,
                                                  struct xlb_lb_session *out)
{
    if (request->session != NULL || vip->route_cookie == NULL)
        return request->session;
    const struct xlb_lb_cookie_attrs *attrs;
    const char *name = xlb_lb_session_cookie(vip, trace->route, trace->entry, &attrs);
    if (name == NULL ||
        (attrs != NULL && attrs->path != NULL &&
         !xlb_lb_cookie_path_match(request->http->path, request->http->path_len, attrs->path)))
        return NULL; /* A55: the filter does nothing for a path outside the cookie's */
    trace->session_cookie = name;
    trace->session_attrs = attrs;
    uint32_t len;
    const char *value = xlb_lb_find_cookie(request->http, name, &len);
    if (value == NULL || len > XLB_LB_COOKIE_MAX ||
        xlb_lb_session_decode(value, len, scratch, XLB_LB_COOKIE_MAX, out) != 0)
        return NULL;
    return out;
}

static bool names_cluster(const struct xlb_lb_session *s, const char *name)
{
    return strlen(name) == s->cluster_len && memcmp(name, s->cluster, s->cluster_len) == 0;
}

/*
 * A60: a session cookie that names another cluster the route may send to (one of its
 * weighted clusters) sends the RPC there, as gRPC's stateful session filter overrides the
 * cluster the config selector drew. Only a cookie naming another cluster pays the search.
 */
static void follow_session_cluster(const struct xlb_lb_vip *vip, const struct xlb_lb_session *s,
                                   struct xlb_lb_trace *trace)
{
    if (s == NULL || s->n_addresses == 0 || s->cluster == NULL ||
        names_cluster(s, vip->targets[trace->target].name))
        return;
    for (uint32_t t = 0; t < vip->n_targets; t++)
        if (t != trace->target && names_cluster(s, vip->targets[t].name) &&
            xlb_route_reaches(vip->routes, trace->route, t)) {
            trace->target = t;
            return;
        }
}

/* A60: a cookie that names a cluster is honoured only for that cluster (the route's). */
static const struct xlb_lb_session *session_for(const struct xlb_lb_target *target,
                                                const struct xlb_lb_session *s,
                                                struct xlb_lb_trace *trace)
{
    if (s == NULL || s->n_addresses == 0)
        return NULL;
    if (s->cluster != NULL && !names_cluster(s, target->name)) {
        trace->override = XLB_LB_OVERRIDE_OTHER_CLUSTER;
        return NULL;
    }
    return s;
}

/* Pre-A75 aggregates: one override host above every leaf, so the leaf that knows the session's
 * address takes the pick; `fallback` when none does. */
static uint32_t leaf_with_session(const struct xlb_lb_target *target,
                                  const struct xlb_lb_session *s, uint32_t fallback)
{
    for (uint32_t l = 0; l < target->n_leaves; l++)
        for (uint32_t i = 0; i < s->n_addresses; i++)
            if (target->leaves[l]->override != NULL &&
                xlb_override_map_find(target->leaves[l]->override, &s->addresses[i]) != NULL)
                return l;
    return fallback;
}

enum xlb_lb_outcome xlb_lb_pick(const struct xlb_lb_vip *vip, const struct xlb_lb_request *request,
                                struct xlb_lb_worker *w, struct xlb_lb_trace *trace)
{
    trace_init(trace);
    if (vip == NULL)
        return trace->outcome = XLB_LB_NOT_READY;
    bool hashed = true;
    uint64_t hash = request->connection_id; /* L4: the flow's hash */
    const struct xlb_lb_session *cookie_session = request->session;
    struct xlb_lb_session decoded;
    char scratch[XLB_LB_COOKIE_MAX];
    if (vip->routes != NULL) {
        if (request->http == NULL)
            return trace->outcome = XLB_LB_NO_ROUTE;
        enum xlb_lb_outcome routed = route_request(vip, request, w, trace);
        if (routed != XLB_LB_PICKED)
            return trace->outcome = routed;
        hash = xlb_lb_request_hash(vip, trace->route, request, w, &hashed);
        cookie_session = route_session(vip, request, trace, scratch, &decoded);
        if (trace->target < vip->n_targets)
            follow_session_cluster(vip, cookie_session, trace);
    } else {
        trace->target = 0;
    }
    if (trace->target >= vip->n_targets || !vip->targets[trace->target].ready ||
        vip->targets[trace->target].n_leaves == 0)
        return trace->outcome = XLB_LB_NOT_READY;
    const struct xlb_lb_target *target = &vip->targets[trace->target];
    const struct xlb_lb_session *session = session_for(target, cookie_session, trace);
    /* A75 aggregate: a priority policy over the leaves picks the first leaf that has a
     * priority able to take requests, the last leaf when none has; with connectivity, by the
     * worker's subchannel states (xlb_lb_ready_leaf). */
    bool connectivity = request->connectivity && w->connectivity != NULL;
    uint32_t leaf = 0;
    if (connectivity && target->n_leaves > 1)
        leaf = xlb_lb_ready_leaf(target, w, request->now_ms);
    while (!connectivity && leaf + 1 < target->n_leaves &&
           target->leaves[leaf]->chosen_priority == XLB_PICK_NONE)
        leaf++;
    if (target->session_any_leaf && session != NULL)
        leaf = leaf_with_session(target, session, leaf);
    struct connectivity_clock clock = {request->now_ms};
    return pick_leaf(target->leaves[leaf], session, hash, hashed, connectivity ? &clock : NULL, w,
                     trace);
}
