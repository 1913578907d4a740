/*
 * A worker's L7 state: its connection pool, SYN cookie secrets and the encoder for xlb's own
 * responses; and the dispatch of an L7 flow's segments by phase.
 */
#include <string.h>
#include <sys/random.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "l7_conn.h"
#include "xlb_log.h"
#include "xlb_siphash.h"

/* SYN cookie secrets change this often; a cookie stays valid across one change. */
#define SECRET_ROTATION_S 60
/* Connections with a retransmission due examined per poll loop. */
#define RETRY_BUDGET 16

/* The binding pool that goes with a connection pool of `connections` entries. */
static uint32_t bindings_for(uint32_t connections)
{
    uint32_t n = connections / XLB_L7_BINDING_SHARE;
    n = n < XLB_L7_BINDING_MIN ? XLB_L7_BINDING_MIN : n;
    return n > connections ? connections : n;
}

size_t xlb_l7_connection_bytes(void)
{
    /* A connection entry, its share of the binding pool (exact for pools of 256 or more) and its
     * share of the HPACK heap. */
    return sizeof(struct xlb_l7_conn) + sizeof(struct xlb_l7_binding) / XLB_L7_BINDING_SHARE +
           XLB_L7_HPACK_SHARE;
}

size_t xlb_l7_bound_bytes(void)
{
    return sizeof(struct xlb_l7_conn);
}

void xlb_l7_hpack_heap_use(const struct xlb_l7_worker *w, uint32_t *in_use, uint32_t *high_water,
                           uint32_t *capacity)
{
    *in_use = xlb_h2_arena_in_use(&w->hpack_pool.heap);
    *high_water = xlb_h2_arena_high_water(&w->hpack_pool.heap);
    *capacity = w->hpack_pool.heap.size;
}

size_t xlb_l7_binding_bytes(void)
{
    return sizeof(struct xlb_l7_binding);
}

void xlb_l7_binding_use(const struct xlb_l7_worker *w, uint32_t *in_use, uint32_t *capacity)
{
    *capacity = w->bindings->size;
    *in_use = w->bindings->size - rte_mempool_avail_count(w->bindings);
}

void xlb_l7_binding_put(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c)
{
    if (c->binding == NULL)
        return;
    rte_mempool_put(ctx->l7->bindings, c->binding);
    c->binding = NULL;
}

void xlb_l7_pool_use(const struct xlb_l7_worker *w, uint32_t *in_use, uint32_t *capacity)
{
    /* No per-lcore cache (see create): the free count is the pool's ring. */
    *capacity = w->n_conns;
    *in_use = w->n_conns - rte_mempool_avail_count(w->conns);
}

/* The HPACK heap of a pool of `connections` entries: their shares (what pool sizing counts) and
 * room for one connection at its limit, so that a small pool still follows a peer that fills its
 * table. At most XLB_H2_ARENA_MAX (a gigabyte: 150,000 connections a worker). */
static size_t hpack_heap_bytes(uint32_t connections)
{
    size_t bytes = (size_t)connections * XLB_L7_HPACK_SHARE + XLB_L7_HPACK_LIMIT;
    return bytes < XLB_H2_ARENA_MAX ? bytes : XLB_H2_ARENA_MAX;
}

/* Fresh cookie keys from the master secret and the generation: the worker makes no system
 * call for randomness, and the keys cannot be guessed without the master. */
static void derive_keys(struct xlb_l7_worker *w, uint8_t fresh[16])
{
    uint64_t g = w->keys.generation;
    uint64_t a = xlb_siphash24(w->master, &g, sizeof(g));
    g ^= UINT64_C(0x5bd1e9955bd1e995);
    uint64_t b = xlb_siphash24(w->master, &g, sizeof(g));
    memcpy(fresh, &a, 8);
    memcpy(fresh + 8, &b, 8);
}

/* The flow entry has 32 bits for its connection: an index, not a pointer. */
static void number_entry(struct rte_mempool *mp, void *arg, void *obj, unsigned index)
{
    (void)mp;
    struct xlb_l7_worker *w = arg;
    struct xlb_l7_conn *c = obj;
    c->index = index;
    w->by_index[index] = c;
    w->n_conns = index + 1;
}

struct xlb_l7_worker *xlb_l7_worker_create(unsigned worker_id, uint32_t connections, int socket)
{
    char name[RTE_MEMPOOL_NAMESIZE];
    snprintf(name, sizeof(name), "xlb_l7_%u", worker_id);
    struct xlb_l7_worker *w = rte_zmalloc_socket(name, sizeof(*w), RTE_CACHE_LINE_SIZE, socket);
    if (w == NULL)
        return NULL;
    uint8_t seed[16];
    if (getrandom(w->master, sizeof(w->master), 0) != sizeof(w->master) ||
        getrandom(seed, sizeof(seed), 0) != sizeof(seed)) {
        rte_free(w);
        return NULL;
    }
    xlb_syn_cookie_keys_init(&w->keys, seed);
    w->tsc_per_ms = rte_get_tsc_hz() / 1000;
    w->rotate_tsc = rte_get_tsc_cycles() + SECRET_ROTATION_S * rte_get_tsc_hz();
    w->conns = rte_mempool_create(name, connections, sizeof(struct xlb_l7_conn), 0, 0, NULL, NULL,
                                  NULL, NULL, socket, RTE_MEMPOOL_F_SP_PUT | RTE_MEMPOOL_F_SC_GET);
    snprintf(name, sizeof(name), "xlb_l7b_%u", worker_id);
    w->bindings = rte_mempool_create(name, bindings_for(connections), sizeof(struct xlb_l7_binding),
                                     0, 0, NULL, NULL, NULL, NULL, socket,
                                     RTE_MEMPOOL_F_SP_PUT | RTE_MEMPOOL_F_SC_GET);
    xlb_h2_arena_init(&w->encoder_arena, w->encoder_mem, sizeof(w->encoder_mem));
    w->by_index = rte_zmalloc_socket(name, connections * sizeof(*w->by_index), 0, socket);
    if (w->conns != NULL && w->by_index != NULL)
        rte_mempool_obj_iter(w->conns, number_entry, w);
    size_t heap = hpack_heap_bytes(connections);
    w->hpack_heap_mem = rte_malloc_socket(name, heap, RTE_CACHE_LINE_SIZE, socket);
    if (w->hpack_heap_mem != NULL)
        xlb_h2_pool_init(&w->hpack_pool, w->hpack_heap_mem, (uint32_t)heap);
    if (w->conns == NULL || w->by_index == NULL || w->bindings == NULL ||
        w->hpack_heap_mem == NULL || xlb_hpack_encoder_init(&w->encoder, &w->encoder_arena) != 0) {
        XLB_LOG(ERR, WORKER, "worker %u: cannot allocate %u L7 connections (%zu bytes each)",
                worker_id, connections, sizeof(struct xlb_l7_conn));
        rte_mempool_free(w->conns);
        rte_mempool_free(w->bindings);
        rte_free(w->by_index);
        rte_free(w->hpack_heap_mem);
        rte_free(w);
        return NULL;
    }
    return w;
}

void xlb_l7_worker_free(struct xlb_l7_worker *w)
{
    if (w == NULL)
        return;
    xlb_hpack_encoder_fini(&w->encoder);
    rte_mempool_free(w->conns);
    rte_mempool_free(w->bindings);
    rte_free(w->by_index);
    rte_free(w->hpack_heap_mem);
    rte_free(w);
}

void xlb_l7_release(struct xlb_burst_ctx *ctx, struct xlb_flow *f)
{
    if (f->kind != XLB_FLOW_KIND_L7_SPLICE || ctx->l7 == NULL)
        return;
    struct xlb_l7_conn *c = xlb_l7_conn_of(ctx, f);
    if (c->phase == XLB_L7_RECEIVING) {
        /* Expired (or flushed, or evicted) before its first request was complete. */
        xlb_l7_send_ts(ctx, NULL, c, XLB_L7_TO_CLIENT, c->snd_nxt, c->rcv_nxt,
                       RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG, 0, NULL, 0);
        ctx->stats->events[XLB_EVENT_L7_RECEIVE_TIMEOUTS]++;
    }
    xlb_l7_streams_end_all(ctx, c); /* open streams failed; each counted its own end */
    f->cluster_slot = XLB_CLUSTER_SLOTS;
    xlb_l7_retry_disarm(ctx, c);
    xlb_l7_binding_put(ctx, c);
    xlb_hpack_decoder_fini(&c->hpack);
    xlb_hpack_decoder_fini(&c->s2c_hpack);
    xlb_h2_quota_fini(&c->quota);
    xlb_h2_quota_fini(&c->s2c_quota);
    f->kind = XLB_FLOW_KIND_NAT;
    rte_mempool_put(ctx->l7->conns, c);
}

/* xlb ended the connection (GOAWAY and FIN sent): acknowledge the client's FIN and give the
 * entry back, end on RST. */
static xlb_verdict closing(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                           struct xlb_tcp_packet *p, uint32_t tcp_len, struct xlb_l7_conn *c)
{
    const struct rte_tcp_hdr *tcp = p->tcp;
    if (tcp->tcp_flags & RTE_TCP_RST_FLAG) {
        xlb_l7_close(ctx, c);
    } else if (tcp->tcp_flags & RTE_TCP_FIN_FLAG) {
        uint32_t len = xlb_tcp_payload_len(tcp, tcp_len);
        struct xlb_tcp_opts o;
        if (xlb_tcp_options_parse((const uint8_t *)(tcp + 1), xlb_tcp_options_len(tcp), &o) == 0 &&
            o.has_ts)
            c->ts_recent = o.tsval; /* echoed by the ACK (RFC 7323 4.3) */
        xlb_l7_send_ts(ctx, snap, c, XLB_L7_TO_CLIENT, c->snd_nxt,
                       rte_be_to_cpu_32(tcp->sent_seq) + len + 1, RTE_TCP_ACK_FLAG, 0, NULL, 0);
        xlb_l7_retire(ctx, c); /* its FIN acknowledged: the flow answers the rest */
    }
    return XLB_VERDICT_CONSUMED;
}

xlb_verdict xlb_l7_from_client(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                               struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len,
                               struct xlb_flow *f)
{
    struct xlb_l7_conn *c = xlb_l7_conn_of(ctx, f);
    switch (c->phase) {
    case XLB_L7_RECEIVING:
    case XLB_L7_CONNECTING: /* kept for the replay */
        return xlb_l7_receive(ctx, snap, p, tcp_len, c);
    case XLB_L7_SPLICED:
        return xlb_l7_splice_from_client(ctx, snap, frame, p, tcp_len, c);
    default:
        return closing(ctx, snap, p, tcp_len, c);
    }
}

xlb_verdict xlb_l7_from_backend(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                struct xlb_frame *frame, struct xlb_tcp_packet *p, uint32_t tcp_len,
                                struct xlb_flow *f)
{
    struct xlb_l7_conn *c = xlb_l7_conn_of(ctx, f);
    switch (c->phase) {
    case XLB_L7_CONNECTING:
        return xlb_l7_connecting(ctx, snap, p, c);
    case XLB_L7_SPLICED:
        return xlb_l7_splice_from_backend(ctx, snap, frame, p, tcp_len, c);
    default:
        return XLB_DROP_L7_UNEXPECTED;
    }
}

void xlb_l7_poll(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap)
{
    struct xlb_l7_worker *w = ctx->l7;
    if (w == NULL)
        return;
    if (w->port_mac_generation != snap->generation) {
        for (uint16_t p = 0; p < snap->n_ports && p < XLB_MAX_PORTS; p++)
            w->port_mac[p] = snap->ports[p].mac;
        w->port_mac_generation = snap->generation;
    }
    if (ctx->now_tsc >= w->rotate_tsc) {
        uint8_t fresh[16];
        derive_keys(w, fresh);
        xlb_syn_cookie_rotate(&w->keys, fresh);
        w->rotate_tsc = ctx->now_tsc + SECRET_ROTATION_S * ctx->tsc_hz;
    }
    /* A cursor walks the list across loops, so every connection on it is seen in turn. */
    for (unsigned i = 0; i < RETRY_BUDGET && w->retry != NULL; i++) {
        struct xlb_l7_conn *c = w->retry_cursor != NULL ? w->retry_cursor : w->retry;
        w->retry_cursor = c->next_retry;
        xlb_l7_retry(ctx, snap, c);
        if (w->retry_cursor == NULL)
            break; /* the end of the list: start over next loop */
    }
}
