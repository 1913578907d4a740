/*
 * A worker's relay: its TCP endpoint and pair pool, and the endpoint's output on its way out.
 * The endpoint writes packets that start at the IP header into one array (xlb_tcp_tx_set),
 * whichever connection they are for, each tagged with it (xlb_tcp_user_of); after every call
 * into the endpoint they get the Ethernet header of their side's next hop and are queued.
 */
#include <string.h>
#include <sys/socket.h>

#include <rte_ip.h>
#include <rte_malloc.h>

#include "tcp_accept.h"
#include "relay_pair.h"
#include "xlb_log.h"

struct xlb_relay_worker *xlb_relay_worker_create(unsigned worker_id, uint32_t connections,
                                                 struct rte_mempool *pool, uint32_t pool_share,
                                                 int socket)
{
    struct xlb_relay_worker *w =
        rte_zmalloc_socket("xlb_relay", sizeof(*w), RTE_CACHE_LINE_SIZE, socket);
    if (w == NULL)
        return NULL;
    struct xlb_tcp_config cfg;
    xlb_tcp_config_default(&cfg);
    cfg.max_connections = connections;
    cfg.held_max_segs = pool_share;
    w->n_pairs = connections / 2;
    w->ep = xlb_tcp_endpoint_create(&cfg, pool, xlb_tcp_clock_ms());
    w->pairs = rte_zmalloc_socket("xlb_relay_pairs", (size_t)w->n_pairs * sizeof(*w->pairs),
                                  RTE_CACHE_LINE_SIZE, socket);
    if (w->ep == NULL || w->pairs == NULL || w->n_pairs == 0) {
        XLB_LOG(ERR, WORKER, "worker %u: cannot allocate %u TCP connections", worker_id,
                connections);
        xlb_relay_worker_free(w);
        return NULL;
    }
    for (uint32_t i = 0; i < w->n_pairs; i++)
        w->pairs[i].next_free = i + 1 < w->n_pairs ? i + 1 : XLB_RELAY_NONE;
    w->free_head = 0;
    xlb_tcp_tx_set(w->ep, w->tx, XLB_RELAY_TX_CAP, &w->n_tx);
    return w;
}

void xlb_relay_worker_free(struct xlb_relay_worker *w)
{
    if (w == NULL)
        return;
    xlb_tcp_endpoint_free(w->ep);
    rte_free(w->pairs);
    rte_free(w);
}

struct xlb_tcp_endpoint *xlb_relay_endpoint(struct xlb_relay_worker *w)
{
    return w->ep;
}

void xlb_relay_use(const struct xlb_relay_worker *w, uint32_t *in_use, uint32_t *capacity)
{
    *in_use = w->in_use;
    *capacity = w->n_pairs;
}

uint64_t xlb_relay_now_ms(const struct xlb_burst_ctx *ctx)
{
    return xlb_accept_now_ms(ctx);
}

struct xlb_relay_pair *xlb_relay_pair_alloc(struct xlb_relay_worker *w)
{
    if (w->free_head == XLB_RELAY_NONE)
        return NULL;
    struct xlb_relay_pair *pr = &w->pairs[w->free_head];
    w->free_head = pr->next_free;
    memset(pr, 0, sizeof(*pr));
    pr->w = w;
    pr->flow = XLB_RELAY_NONE;
    pr->in_use = true;
    w->in_use++;
    return pr;
}

void xlb_relay_pair_free(struct xlb_relay_worker *w, struct xlb_relay_pair *pr)
{
    pr->in_use = false;
    pr->next_free = w->free_head;
    w->free_head = (uint32_t)(pr - w->pairs);
    w->in_use--;
}

void xlb_relay_enter(struct xlb_relay_worker *w, struct xlb_burst_ctx *ctx,
                     const struct xlb_snapshot *snap, struct xlb_relay_pair *current)
{
    w->ctx = ctx;
    w->snap = snap;
    w->current = current;
}

/* Whether a packet of ours (IP header first) is addressed to a side's peer. */
static bool addressed_to(const struct rte_mbuf *m, const struct xlb_relay_side *s)
{
    const uint8_t *ip = rte_pktmbuf_mtod(m, const uint8_t *);
    const struct rte_tcp_hdr *tcp = (const struct rte_tcp_hdr *)(ip + m->l3_len);
    if (tcp->dst_port != s->tuple.remote_port)
        return false;
    if (s->tuple.family == AF_INET)
        return (ip[0] >> 4) == 4 &&
               memcmp(&((const struct rte_ipv4_hdr *)ip)->dst_addr, s->tuple.remote, 4) == 0;
    return (ip[0] >> 4) == 6 &&
           memcmp(((const struct rte_ipv6_hdr *)ip)->dst_addr, s->tuple.remote, 16) == 0;
}

/* The side of pr a packet goes to, or NULL. */
static const struct xlb_relay_side *side_for(const struct xlb_relay_pair *pr,
                                             const struct rte_mbuf *m)
{
    if (pr == NULL || !pr->in_use)
        return NULL;
    for (int s = XLB_RELAY_CLIENT; s <= XLB_RELAY_BACKEND; s++)
        if (addressed_to(m, &pr->side[s]))
            return &pr->side[s];
    return NULL;
}

/* Give a packet its Ethernet header and queue it on a port. */
static void send_out(struct xlb_relay_worker *w, struct rte_mbuf *m,
                     const struct rte_ether_addr *dst, const struct rte_ether_addr *src,
                     uint16_t port_index, bool flat)
{
    /* A segment's payload sits in the mbufs it was received in, attached behind its headers;
     * a driver that sends no chains (net_af_xdp) gets one buffer: the headers' mbuf has room
     * for a full-size segment. */
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

void xlb_relay_route_output(struct xlb_relay_worker *w)
{
    uint16_t n = w->n_tx;
    w->n_tx = 0;
    for (uint16_t i = 0; i < n; i++) {
        struct rte_mbuf *m = w->tx[i];
        const struct xlb_relay_pair *pr = xlb_tcp_user_of(w->ep, m);
        const struct xlb_relay_side *s = side_for(pr, m);
        if (s == NULL) /* its connection closed since: the pair the call is about */
            s = side_for(w->current, m);
        if (s != NULL)
            send_out(w, m, &s->mac, &s->local, s->port_index, s->flat);
        else if (m->hash.usr == 0 && w->current == NULL) /* a SYN-ACK with a cookie */
            send_out(w, m, &w->reply_mac, &w->snap->ports[w->reply_port].mac, w->reply_port, false);
        else {
            w->ctx->stats->drops[XLB_DROP_RELAY_NO_ROUTE]++;
            rte_pktmbuf_free(m);
        }
    }
}

void xlb_relay_poll(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap)
{
    struct xlb_relay_worker *w = ctx->relay;
    if (w == NULL)
        return;
    xlb_relay_enter(w, ctx, snap, NULL);
    /* In slices, the output routed after each, so that the tx array never fills. */
    for (int slice = 0; slice < XLB_RELAY_POLL_SLICES; slice++) {
        uint32_t fired = xlb_tcp_poll(w->ep, xlb_relay_now_ms(ctx), XLB_RELAY_TIMERS_PER_SLICE);
        xlb_relay_route_output(w);
        if (fired < XLB_RELAY_TIMERS_PER_SLICE)
            break;
    }
}

void xlb_relay_release(struct xlb_burst_ctx *ctx, struct xlb_flow *f)
{
    struct xlb_relay_worker *w = ctx->relay;
    if (w == NULL || f->relay >= w->n_pairs)
        return;
    struct xlb_relay_pair *pr = &w->pairs[f->relay];
    f->relay = XLB_RELAY_NONE;
    if (!pr->in_use)
        return;
    pr->flow = XLB_RELAY_NONE;         /* the flow is going: nothing may release it again */
    xlb_relay_enter(w, ctx, NULL, pr); /* no snapshot here: the sides know their ports */
    xlb_relay_abort(w, pr);
    xlb_relay_route_output(w);
    xlb_relay_pair_free(w, pr);
}
