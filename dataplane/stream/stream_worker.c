/*
 * A worker's stream engine: its TCP endpoint, connection pool and HTTP/2 heap, and the
 * endpoint's output on its way out. As the relay's: the endpoint writes packets that start at
 * the IP header into one array, each tagged with its connection (xlb_tcp_user_of); after every
 * call into the endpoint they get the Ethernet header of their client's next hop and are
 * queued.
 */
#include <string.h>
#include <sys/socket.h>

#include <rte_ip.h>
#include <rte_malloc.h>

#include "tcp_accept.h"
#include "stream_conn.h"
#include "xlb_log.h"

/* The heap all sessions of a worker share: as configured (xlbd sizes it from the EAL memory),
 * or room for every connection's floor up to a cap; beyond it, connections are refused
 * (counted stream_heap_full) rather than memory grown. */
uint32_t xlb_stream_heap_floor(uint32_t connections)
{
    uint64_t heap = (uint64_t)connections * XLB_STREAM_HEAP_PER_CONN;
    return heap > XLB_STREAM_HEAP_DEFAULT_MAX ? XLB_STREAM_HEAP_DEFAULT_MAX : (uint32_t)heap;
}

static uint32_t heap_bytes(const struct xlb_stream_limits *l)
{
    return l->heap_bytes != 0 ? l->heap_bytes : xlb_stream_heap_floor(l->connections);
}

uint32_t xlb_stream_sessions_max(const struct xlb_stream_limits *limits)
{
    uint64_t sessions = (uint64_t)heap_bytes(limits) / 8 * 7 / XLB_STREAM_QUOTA_FLOOR;
    return sessions < limits->connections ? (uint32_t)sessions : limits->connections;
}

static uint32_t or_default(uint32_t value, uint32_t fallback)
{
    return value != 0 ? value : fallback;
}

void xlb_stream_limits_complete(struct xlb_stream_limits *l)
{
    l->max_concurrent_streams =
        or_default(l->max_concurrent_streams, XLB_STREAM_DEFAULT_MAX_CONCURRENT_STREAMS);
    l->window_bytes = or_default(l->window_bytes, XLB_STREAM_DEFAULT_WINDOW_BYTES);
    l->rpcs_per_connection =
        or_default(l->rpcs_per_connection, XLB_STREAM_DEFAULT_RPCS_PER_CONNECTION);
    l->waiting_rpcs = or_default(l->waiting_rpcs, XLB_STREAM_DEFAULT_WAITING_RPCS);
    l->retry_buffer_bytes =
        or_default(l->retry_buffer_bytes, XLB_STREAM_DEFAULT_RETRY_BUFFER_BYTES);
    l->subchannels_per_endpoint =
        or_default(l->subchannels_per_endpoint, XLB_STREAM_DEFAULT_SUBCHANNELS_PER_ENDPOINT);
}

/* What xlb_stream_worker_create allocates: a subchannel per connection, the RPC pool, the
 * waiting and retry entries. */
uint64_t xlb_stream_worker_bytes(const struct xlb_stream_limits *limits)
{
    struct xlb_stream_limits l = *limits;
    xlb_stream_limits_complete(&l);
    uint64_t n = l.connections;
    return sizeof(struct xlb_stream_worker) + xlb_tcp_endpoint_bytes(l.connections) +
           heap_bytes(&l) + xlb_stream_tls_heap_bytes(&l) + n * sizeof(struct xlb_stream_conn) +
           n * sizeof(struct xlb_stream_sub) +
           n * l.rpcs_per_connection * sizeof(struct xlb_stream_rpc) +
           4 * n * sizeof(struct xlb_stream_side *) +
           (uint64_t)l.waiting_rpcs * sizeof(struct xlb_stream_waiting) +
           XLB_STREAM_RETRIES * sizeof(struct xlb_stream_retry) +
           (uint64_t)l.retry_buffers * (sizeof(struct xlb_stream_replay) + l.retry_buffer_bytes) +
           XLB_ENDPOINT_SLOTS * (sizeof(struct xlb_backoff) + sizeof(uint32_t));
}

struct xlb_stream_worker *xlb_stream_worker_create(unsigned worker_id,
                                                   const struct xlb_stream_limits *limits,
                                                   struct rte_mempool *pool, uint32_t pool_share,
                                                   int socket)
{
    struct xlb_stream_worker *w =
        rte_zmalloc_socket("xlb_stream", sizeof(*w), RTE_CACHE_LINE_SIZE, socket);
    if (w == NULL)
        return NULL;
    w->limits = *limits;
    xlb_stream_limits_complete(&w->limits);
    struct xlb_tcp_config cfg;
    xlb_tcp_config_default(&cfg);
    cfg.max_connections = limits->connections;
    cfg.held_max_segs = pool_share;
    w->n_conns = limits->connections;
    uint32_t heap_size = heap_bytes(limits);
    w->ep = xlb_tcp_endpoint_create(&cfg, pool, xlb_tcp_clock_ms());
    w->conns = rte_zmalloc_socket("xlb_stream_conns", (size_t)w->n_conns * sizeof(*w->conns),
                                  RTE_CACHE_LINE_SIZE, socket);
    w->heap_block = rte_malloc_socket("xlb_stream_heap", heap_size, RTE_CACHE_LINE_SIZE, socket);
    w->n_subs = w->n_conns;
    w->n_rpcs = w->n_conns * w->limits.rpcs_per_connection;
    w->subs = rte_zmalloc_socket("xlb_stream_subs", (size_t)w->n_subs * sizeof(*w->subs),
                                 RTE_CACHE_LINE_SIZE, socket);
    w->rpcs = rte_zmalloc_socket("xlb_stream_rpcs", (size_t)w->n_rpcs * sizeof(*w->rpcs),
                                 RTE_CACHE_LINE_SIZE, socket);
    w->deferred = rte_zmalloc_socket("xlb_stream_deferred",
                                     (size_t)(w->n_conns + w->n_subs) * sizeof(*w->deferred),
                                     RTE_CACHE_LINE_SIZE, socket);
    w->corked = rte_zmalloc_socket("xlb_stream_corked",
                                   (size_t)(w->n_conns + w->n_subs) * sizeof(*w->corked),
                                   RTE_CACHE_LINE_SIZE, socket);
    w->waiting = rte_zmalloc_socket("xlb_stream_waiting",
                                    (size_t)w->limits.waiting_rpcs * sizeof(*w->waiting),
                                    RTE_CACHE_LINE_SIZE, socket);
    w->retries = rte_zmalloc_socket("xlb_stream_retries", XLB_STREAM_RETRIES * sizeof(*w->retries),
                                    RTE_CACHE_LINE_SIZE, socket);
    /* One entry more than asked: none (retry off) still allocates. */
    w->replays = rte_zmalloc_socket("xlb_stream_replays",
                                    ((size_t)w->limits.retry_buffers + 1) * sizeof(*w->replays),
                                    RTE_CACHE_LINE_SIZE, socket);
    w->replay_data =
        rte_malloc_socket("xlb_stream_replay_data",
                          ((size_t)w->limits.retry_buffers + 1) * w->limits.retry_buffer_bytes,
                          RTE_CACHE_LINE_SIZE, socket);
    w->backoff = rte_zmalloc_socket("xlb_stream_backoff", XLB_ENDPOINT_SLOTS * sizeof(*w->backoff),
                                    RTE_CACHE_LINE_SIZE, socket);
    w->sub_of_slot = rte_malloc_socket("xlb_stream_slots", XLB_ENDPOINT_SLOTS * sizeof(uint32_t),
                                       RTE_CACHE_LINE_SIZE, socket);
    if (nghttp2_session_callbacks_new(&w->callbacks) == 0)
        xlb_stream_rpc_callbacks(w->callbacks);
    if (nghttp2_session_callbacks_new(&w->sub_callbacks) == 0)
        xlb_stream_sub_callbacks(w->sub_callbacks);
    if (nghttp2_option_new(&w->options) == 0) {
        nghttp2_option_set_no_auto_window_update(w->options, 1);
        nghttp2_option_set_max_send_header_block_length(w->options, 16384);
    }
    if (w->ep == NULL || w->conns == NULL || w->heap_block == NULL || w->n_conns == 0 ||
        w->callbacks == NULL || w->options == NULL || w->sub_callbacks == NULL || w->subs == NULL ||
        w->rpcs == NULL || w->sub_of_slot == NULL || w->deferred == NULL || w->waiting == NULL ||
        w->replays == NULL || w->replay_data == NULL || w->corked == NULL ||
        !xlb_stream_tls_heap_create(w, worker_id, socket)) {
        XLB_LOG(ERR, WORKER, "worker %u: cannot allocate %u stream connections", worker_id,
                limits->connections);
        xlb_stream_worker_free(w);
        return NULL;
    }
    xlb_h2_pool_init(&w->heap, w->heap_block, heap_size);
    for (uint32_t i = 0; i < w->n_conns; i++)
        w->conns[i].next_free = i + 1 < w->n_conns ? i + 1 : XLB_STREAM_NONE;
    w->free_head = 0;
    for (uint32_t i = 0; i < w->n_subs; i++)
        w->subs[i].next_free = i + 1 < w->n_subs ? i + 1 : XLB_STREAM_NONE;
    w->sub_free = 0;
    w->pruned_generation = UINT64_MAX; /* no snapshot checked yet */
    for (uint32_t i = 0; i < w->n_rpcs; i++)
        w->rpcs[i].next_free = i + 1 < w->n_rpcs ? i + 1 : XLB_STREAM_NONE;
    w->rpc_free = 0;
    for (uint32_t i = 0; i < w->limits.waiting_rpcs; i++)
        w->waiting[i].rpc = XLB_STREAM_NONE;
    for (uint32_t i = 0; i < XLB_STREAM_RETRIES; i++)
        w->retries[i].slot = XLB_STREAM_NONE;
    for (uint32_t i = 0; i < XLB_STREAM_EYEBALL_TIMERS; i++)
        w->eyeball_timers[i] = XLB_STREAM_NONE;
    for (uint32_t i = 0; i < w->limits.retry_buffers; i++) {
        w->replays[i].rpc = XLB_STREAM_NONE;
        w->replays[i].data = w->replay_data + (size_t)i * w->limits.retry_buffer_bytes;
    }
    for (uint32_t i = 0; i < XLB_ENDPOINT_SLOTS; i++)
        w->sub_of_slot[i] = XLB_STREAM_NONE;
    xlb_tcp_tx_set(w->ep, w->tx, XLB_STREAM_TX_CAP, &w->n_tx);
    return w;
}

void xlb_stream_worker_free(struct xlb_stream_worker *w)
{
    if (w == NULL)
        return;
    for (uint32_t i = 0; w->conns != NULL && i < w->n_conns; i++) {
        if (w->conns[i].side.h2 != NULL)
            nghttp2_session_del(w->conns[i].side.h2);
        if (w->conns[i].side.tls.ssl != NULL)
            xlb_tls_conn_free(&w->conns[i].side.tls);
    }
    for (uint32_t i = 0; w->subs != NULL && i < w->n_subs; i++) {
        if (w->subs[i].side.h2 != NULL)
            nghttp2_session_del(w->subs[i].side.h2);
        if (w->subs[i].side.tls.ssl != NULL)
            xlb_tls_conn_free(&w->subs[i].side.tls);
    }
    for (uint32_t i = 0; w->rpcs != NULL && i < w->n_rpcs; i++) {
        xlb_stream_bytes_clear(&w->rpcs[i].up);
        xlb_stream_bytes_clear(&w->rpcs[i].down);
    }
    nghttp2_session_callbacks_del(w->sub_callbacks);
    rte_free(w->subs);
    rte_free(w->rpcs);
    rte_free(w->sub_of_slot);
    rte_free(w->deferred);
    rte_free(w->waiting);
    rte_free(w->retries);
    rte_free(w->replays);
    rte_free(w->replay_data);
    rte_free(w->corked);
    rte_free(w->backoff);
    xlb_tcp_endpoint_free(w->ep);
    nghttp2_session_callbacks_del(w->callbacks);
    nghttp2_option_del(w->options);
    rte_free(w->conns);
    rte_free(w->heap_block);
    xlb_stream_tls_heap_free(w);
    rte_free(w);
}

struct xlb_tcp_endpoint *xlb_stream_endpoint(struct xlb_stream_worker *w)
{
    return w->ep;
}

void xlb_stream_live(const struct xlb_stream_worker *w, uint32_t *sessions, uint32_t *rpcs)
{
    *sessions = w->sessions_live;
    *rpcs = w->rpcs_in_use;
}

void xlb_stream_use(const struct xlb_stream_worker *w, uint32_t *in_use, uint32_t *capacity)
{
    *in_use = w->in_use;
    *capacity = w->n_conns;
}

uint32_t xlb_stream_session_bytes(const struct xlb_stream_worker *w)
{
    return w->session_bytes;
}

uint32_t xlb_stream_heap_in_use(const struct xlb_stream_worker *w)
{
    return xlb_h2_arena_in_use(&w->heap.heap);
}

uint32_t xlb_stream_heap_committed(const struct xlb_stream_worker *w)
{
    return w->heap.committed;
}

uint32_t xlb_stream_rpc_size(void)
{
    return (uint32_t)sizeof(struct xlb_stream_rpc);
}

uint64_t xlb_stream_now_ms(const struct xlb_burst_ctx *ctx)
{
    return xlb_accept_now_ms(ctx);
}

struct xlb_stream_conn *xlb_stream_conn_alloc(struct xlb_stream_worker *w)
{
    if (w->free_head == XLB_STREAM_NONE)
        return NULL;
    struct xlb_stream_conn *c = &w->conns[w->free_head];
    w->free_head = c->next_free;
    memset(c, 0, sizeof(*c));
    c->side.w = w;
    c->side.flow = XLB_STREAM_NONE;
    c->side.link.in_use = true;
    w->in_use++;
    return c;
}

void xlb_stream_conn_free(struct xlb_stream_worker *w, struct xlb_stream_conn *c)
{
    if (c->side.h2 != NULL) {
        xlb_stream_session_over(&c->side);
        xlb_stream_conn_lost(c);
        nghttp2_session_del(c->side.h2);
        c->side.h2 = NULL;
    }
    xlb_stream_tls_close(&c->side);
    xlb_h2_quota_fini(&c->side.quota);
    rte_pktmbuf_free(c->side.pending);
    c->side.pending = NULL;
    c->side.link.in_use = false;
    c->next_free = w->free_head;
    w->free_head = (uint32_t)(c - w->conns);
    w->in_use--;
}

void xlb_stream_enter(struct xlb_stream_worker *w, struct xlb_burst_ctx *ctx,
                      const struct xlb_snapshot *snap, struct xlb_stream_link *current)
{
    w->ctx = ctx;
    w->snap = snap;
    w->current = current;
}

/* Whether a packet of ours (IP header first) is addressed to a link's peer. */
static bool addressed_to(const struct rte_mbuf *m, const struct xlb_stream_link *l)
{
    if (l == NULL || !l->in_use)
        return false;
    const uint8_t *ip = rte_pktmbuf_mtod(m, const uint8_t *);
    const struct rte_tcp_hdr *tcp = (const struct rte_tcp_hdr *)(ip + m->l3_len);
    if (tcp->dst_port != l->tuple.remote_port)
        return false;
    if (l->tuple.family == AF_INET)
        return (ip[0] >> 4) == 4 &&
               memcmp(&((const struct rte_ipv4_hdr *)ip)->dst_addr, l->tuple.remote, 4) == 0;
    return (ip[0] >> 4) == 6 &&
           memcmp(((const struct rte_ipv6_hdr *)ip)->dst_addr, l->tuple.remote, 16) == 0;
}

static void send_out(struct xlb_stream_worker *w, struct rte_mbuf *m,
                     const struct rte_ether_addr *dst, const struct rte_ether_addr *src,
                     uint16_t port_index, bool flat)
{
    if (flat && m->nb_segs > 1 && rte_pktmbuf_linearize(m) != 0) {
        w->ctx->stats->drops[XLB_DROP_MULTI_SEGMENT]++;
        rte_pktmbuf_free(m);
        return;
    }
    struct rte_ether_hdr *eth =
        (struct rte_ether_hdr *)rte_pktmbuf_prepend(m, sizeof(struct rte_ether_hdr));
    if (eth == NULL) {
        w->ctx->stats->drops[XLB_DROP_NO_MBUF]++;
        rte_pktmbuf_free(m);
        return;
    }
    uint8_t version = rte_pktmbuf_mtod_offset(m, const uint8_t *, sizeof(*eth))[0] >> 4;
    eth->dst_addr = *dst;
    eth->src_addr = *src;
    eth->ether_type = rte_cpu_to_be_16(version == 4 ? RTE_ETHER_TYPE_IPV4 : RTE_ETHER_TYPE_IPV6);
    m->l2_len = sizeof(*eth);
    xlb_tx_enqueue(w->ctx, port_index, m);
}

void xlb_stream_route_output(struct xlb_stream_worker *w)
{
    uint16_t n = w->n_tx;
    w->n_tx = 0;
    for (uint16_t i = 0; i < n; i++) {
        struct rte_mbuf *m = w->tx[i];
        const struct xlb_stream_link *l = xlb_tcp_user_of(w->ep, m);
        if (!addressed_to(m, l)) /* its connection closed since: the one the call is about */
            l = addressed_to(m, w->current) ? w->current : NULL;
        if (l != NULL)
            send_out(w, m, &l->mac, &l->local, l->port_index, l->flat);
        else if (m->hash.usr == 0 && w->current == NULL) /* a SYN-ACK with a cookie */
            send_out(w, m, &w->reply_mac, &w->snap->ports[w->reply_port].mac, w->reply_port, false);
        else {
            w->ctx->stats->drops[XLB_DROP_STREAM_NO_ROUTE]++;
            rte_pktmbuf_free(m);
        }
    }
}

void xlb_stream_cork(struct xlb_stream_side *d)
{
    struct xlb_stream_worker *w = d->w;
    if (d->corked)
        return;
    if (w->n_corked == w->n_conns + w->n_subs) { /* a side listed twice (freed, reused) */
        xlb_tcp_flush(w->ep, d->tcp);
        return;
    }
    d->corked = true;
    w->corked[w->n_corked++] = d;
}

bool xlb_stream_send_later(struct xlb_stream_side *d)
{
    struct xlb_stream_worker *w = d->w;
    if (!d->corked && w->n_corked == w->n_conns + w->n_subs)
        return false;
    d->send_due = true;
    xlb_stream_cork(d);
    return true;
}

/* The pumps owed to corked sides. A pump may owe another side one (a WINDOW_UPDATE for the bytes
 * it took): passes until none is owed, bounded; what is left goes on the deferred list. */
static void pump_due(struct xlb_stream_worker *w)
{
    bool owed = true;
    for (int pass = 0; pass < XLB_STREAM_FLUSH_PASSES && owed; pass++) {
        owed = false;
        for (uint32_t i = 0; i < w->n_corked; i++) {
            struct xlb_stream_side *d = w->corked[i];
            if (!d->send_due)
                continue;
            d->send_due = false;
            owed = true;
            w->current = &d->link;
            xlb_stream_pump(d);
            xlb_stream_route_output(w);
        }
    }
    for (uint32_t i = 0; i < w->n_corked; i++) {
        if (w->corked[i]->send_due) {
            w->corked[i]->send_due = false;
            xlb_stream_defer(w->corked[i]);
        }
    }
}

void xlb_stream_flush(struct xlb_burst_ctx *ctx)
{
    struct xlb_stream_worker *w = ctx->stream;
    if (w == NULL || w->n_corked == 0)
        return;
    struct xlb_stream_link *was = w->current;
    pump_due(w);
    for (uint32_t i = 0; i < w->n_corked; i++) {
        struct xlb_stream_side *d = w->corked[i];
        d->corked = false;
        if (d->tcp == NULL || d->done)
            continue;
        w->current = &d->link;
        xlb_tcp_flush(w->ep, d->tcp);
        xlb_stream_route_output(w);
    }
    w->n_corked = 0;
    w->current = was;
}

void xlb_stream_defer(struct xlb_stream_side *d)
{
    struct xlb_stream_worker *w = d->w;
    uint32_t cap = w->n_conns + w->n_subs;
    if (d->deferred || w->n_deferred == cap) /* cap: every side, so never full */
        return;
    d->deferred = true;
    w->deferred[(w->deferred_head + w->n_deferred) % cap] = d;
    w->n_deferred++;
}

/* Pump the sides deferred before this poll (those deferred again while pumping wait for the
 * next one): bounded work, and no wakeup lost. */
static void resume_deferred(struct xlb_stream_worker *w)
{
    uint32_t cap = w->n_conns + w->n_subs;
    for (uint32_t n = w->n_deferred; n > 0; n--) {
        struct xlb_stream_side *d = w->deferred[w->deferred_head];
        w->deferred_head = (w->deferred_head + 1) % cap;
        w->n_deferred--;
        d->deferred = false;
        w->current = &d->link;
        xlb_stream_pump(d);
        xlb_stream_route_output(w);
    }
    w->current = NULL;
}

void xlb_stream_poll(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap)
{
    struct xlb_stream_worker *w = ctx->stream;
    if (w == NULL)
        return;
    xlb_stream_enter(w, ctx, snap, NULL);
    if (unlikely(ctx->draining))
        xlb_stream_drain_step(w);
    xlb_stream_tls_poll(w); /* the handshake budget first: deferred handshakes use it */
    xlb_stream_linger_poll(w);
    resume_deferred(w);
    xlb_stream_sub_prune(w, snap);
    xlb_stream_deadline_poll(w);
    xlb_stream_sub_retry(w);
    xlb_stream_eyeballs_poll(w);
    xlb_stream_subcalls_poll(w);
    xlb_stream_queue_poll(w);
    for (int slice = 0; slice < XLB_STREAM_POLL_SLICES; slice++) {
        uint32_t fired = xlb_tcp_poll(w->ep, xlb_stream_now_ms(ctx), XLB_STREAM_TIMERS_PER_SLICE);
        xlb_stream_route_output(w);
        if (fired < XLB_STREAM_TIMERS_PER_SLICE)
            break;
    }
    xlb_stream_flush(ctx);
}

void xlb_stream_icmp_error(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                           struct xlb_flow *f, uint32_t mtu, uint32_t seq)
{
    struct xlb_stream_worker *w = ctx->stream;
    if (w == NULL || mtu == 0)
        return;
    struct xlb_stream_side *d = NULL;
    if (f->kind == XLB_FLOW_KIND_STREAM_CLIENT && f->stream < w->n_conns)
        d = &w->conns[f->stream].side;
    else if (f->kind == XLB_FLOW_KIND_STREAM_SUB && f->stream < w->n_subs)
        d = &w->subs[f->stream].side;
    if (d == NULL || !d->link.in_use || d->done || d->tcp == NULL)
        return;
    xlb_stream_enter(w, ctx, snap, &d->link);
    xlb_tcp_pmtu(w->ep, d->tcp, mtu, seq); /* checks seq against what is in flight */
    xlb_stream_route_output(w);
}

void xlb_stream_release(struct xlb_burst_ctx *ctx, struct xlb_flow *f)
{
    struct xlb_stream_worker *w = ctx->stream;
    if (w == NULL || f->stream >= w->n_conns)
        return;
    struct xlb_stream_conn *c = &w->conns[f->stream];
    f->stream = XLB_STREAM_NONE;
    if (!c->side.link.in_use)
        return;
    c->side.flow = XLB_STREAM_NONE; /* the flow is going: nothing may release it again */
    xlb_stream_enter(w, ctx, NULL, &c->side.link);
    xlb_stream_abort(&c->side); /* on_closed frees the connection unless it was over already */
    xlb_stream_route_output(w);
    if (c->side.link.in_use)
        xlb_stream_conn_free(w, c);
}
