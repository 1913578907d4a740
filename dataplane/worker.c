#include "worker.h"

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include <stdio.h>
#include <stdlib.h>

#include "burst.h"
#include "xlb_flow_table.h"
#include "flow/flow.h"
#include "l7/l7.h"
#include "relay/relay.h"
#include "stream/stream.h"
#include "xlb_tcp.h"
#include "xlb_tcp_report.h"
#include "xlb_lb.h"
#include "xlb_lb_connectivity.h"
#include "xlb_log.h"
#include "xlb_tls_mem.h"

/* The mbufs a worker's relayed connections may hold in their queues: half the pool, shared by
 * the workers (the other half is the ports' rings, caches and packets in flight). */
static uint32_t relay_pool_share(const struct rte_mempool *pool, unsigned n_workers)
{
    return pool->size / 2 / (n_workers != 0 ? n_workers : 1);
}

int xlb_worker_forwarding_create(struct xlb_worker_config *cfg, const struct xlb_addr *snat,
                                 unsigned n_snat, uint32_t flows_per_worker,
                                 uint32_t l7_connections, uint32_t tcp_connections)
{
    struct xlb_shared *shared = cfg->shared;
    if (n_snat == 0)
        return 0;
    /* Aligned power-of-two slices, so that a NIC can steer a slice with one masked rule. */
    uint32_t slice = xlb_snat_slice(shared->n_workers);
    uint16_t first, count;
    xlb_snat_worker_ports(0, slice, cfg->id, &first, &count);
    char name[32];
    snprintf(name, sizeof(name), "xlb_flows_%u", cfg->id);
    cfg->snat_port_base = 0;
    cfg->snat_slice = slice;
    cfg->flows = xlb_flow_table_create(name, flows_per_worker, (int)rte_socket_id(), snat, n_snat,
                                       first, count);
    cfg->lb = calloc(1, sizeof(*cfg->lb));
    if (cfg->flows == NULL || cfg->lb == NULL ||
        xlb_lb_worker_init(cfg->lb, rte_rdtsc() ^ ((uint64_t)cfg->id << 32), &shared->load[cfg->id],
                           shared->load, shared->n_workers) != 0) {
        XLB_LOG(ERR, WORKER, "worker %u: cannot allocate %u flows", cfg->id, flows_per_worker);
        xlb_worker_forwarding_free(cfg);
        return -1;
    }
    if (l7_connections > 0 &&
        (cfg->l7 = xlb_l7_worker_create(cfg->id, l7_connections, (int)rte_socket_id())) == NULL) {
        xlb_worker_forwarding_free(cfg);
        return -1;
    }
    if (tcp_connections > 0 &&
        (cfg->relay = xlb_relay_worker_create(cfg->id, tcp_connections, cfg->pool,
                                              relay_pool_share(cfg->pool, shared->n_workers),
                                              (int)rte_socket_id())) == NULL) {
        xlb_worker_forwarding_free(cfg);
        return -1;
    }
    /* The stream engine's queues share the relay's half of the pool; its subchannels' states
     * are the LB core's (xlbctl endpoints). */
    if (cfg->stream_limits.connections > 0 &&
        (xlb_lb_connectivity_init(cfg->lb) != 0 ||
         (cfg->stream = xlb_stream_worker_create(cfg->id, &cfg->stream_limits, cfg->pool,
                                                 relay_pool_share(cfg->pool, shared->n_workers) / 2,
                                                 (int)rte_socket_id())) == NULL)) {
        xlb_worker_forwarding_free(cfg);
        return -1;
    }
    if (cfg->relay != NULL)
        xlb_tcp_set_tx_offloads(xlb_relay_endpoint(cfg->relay), cfg->tx_cksum.tcp,
                                cfg->tx_cksum.ip);
    if (cfg->stream != NULL)
        xlb_tcp_set_tx_offloads(xlb_stream_endpoint(cfg->stream), cfg->tx_cksum.tcp,
                                cfg->tx_cksum.ip);
    return 0;
}

void xlb_worker_forwarding_free(struct xlb_worker_config *cfg)
{
    xlb_flow_table_free(cfg->flows);
    if (cfg->lb != NULL)
        xlb_lb_worker_fini(cfg->lb);
    free(cfg->lb);
    xlb_l7_worker_free(cfg->l7);
    xlb_relay_worker_free(cfg->relay);
    xlb_stream_worker_free(cfg->stream);
    cfg->stream = NULL;
    cfg->l7 = NULL;
    cfg->relay = NULL;
    cfg->flows = NULL;
    cfg->lb = NULL;
}

static void flush_port(struct xlb_burst_ctx *ctx, const struct xlb_worker_config *cfg, uint16_t p)
{
    struct xlb_tx_batch *batch = &ctx->tx[p];
    if (batch->n == 0)
        return;
    uint16_t sent = rte_eth_tx_burst(cfg->port_ids[p], cfg->txq, batch->pkts, batch->n);
    ctx->stats->tx_packets += sent;
    if (sent < batch->n) {
        XLB_LOG_RATELIMITED(WARNING, WORKER, "port %u tx queue %u full: %u packets dropped",
                            cfg->port_ids[p], cfg->txq, batch->n - sent);
        ctx->stats->drops[XLB_DROP_TX_FULL] += batch->n - sent;
        rte_pktmbuf_free_bulk(&batch->pkts[sent], batch->n - sent);
    }
    batch->n = 0;
}

/* The context's tx_flush: a batch that filled within a burst goes out at once. */
static void flush_full_batch(struct xlb_burst_ctx *ctx, uint16_t port_index)
{
    flush_port(ctx, ctx->tx_flush_arg, port_index);
}

static void flush_tx(struct xlb_burst_ctx *ctx, const struct xlb_worker_config *cfg)
{
    for (uint16_t p = 0; p < cfg->n_ports; p++)
        flush_port(ctx, cfg, p);
}

/* Bounded: a flood of control messages cannot starve packet processing. */
static void drain_messages(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                           struct rte_ring *ring)
{
    struct xlb_msg msg;
    for (int i = 0; i < XLB_MSGS_PER_LOOP && xlb_msg_receive(ring, &msg) == 0; i++)
        xlb_burst_handle_message(ctx, snap, &msg);
}

/* The flow table's and the L7 pool's use, and the TCP endpoint's counters, for the control
 * plane (struct xlb_worker_stats). */
static void note_use(struct xlb_worker_stats *stats, const struct xlb_burst_ctx *ctx)
{
    if (ctx->flows != NULL) {
        stats->flows_in_use = ctx->flows->n_used;
        stats->flows_capacity = ctx->flows->capacity;
        if (stats->flows_in_use > stats->flows_high_water)
            stats->flows_high_water = stats->flows_in_use;
    }
    if (ctx->l7 != NULL) {
        uint32_t in_use, capacity;
        xlb_l7_pool_use(ctx->l7, &in_use, &capacity);
        stats->l7_in_use = in_use;
        stats->l7_capacity = capacity;
        if (in_use > stats->l7_high_water)
            stats->l7_high_water = in_use;
        uint32_t heap, heap_high, heap_size;
        xlb_l7_hpack_heap_use(ctx->l7, &heap, &heap_high, &heap_size);
        stats->l7_hpack_in_use = heap;
        stats->l7_hpack_high_water = heap_high;
        stats->l7_hpack_capacity = heap_size;
    }
    /* The relay's and the stream engine's endpoints, as one. */
    const struct xlb_tcp_endpoint *eps[] = {
        ctx->relay != NULL ? xlb_relay_endpoint(ctx->relay) : NULL,
        ctx->stream != NULL ? xlb_stream_endpoint(ctx->stream) : NULL,
    };
    xlb_tcp_stats_publish(eps, 2, &stats->tcp);
    if (ctx->stream != NULL) {
        uint32_t sessions, rpcs;
        xlb_stream_live(ctx->stream, &sessions, &rpcs);
        stats->stream_sessions = sessions;
        stats->stream_rpcs = rpcs;
    }
}

/* Tests only (xlb_shared.h's test_stall): a stuck worker, holding its snapshot, reporting no
 * quiescent state and serving nothing until released or stopped. */
static void hold_for_test(const struct xlb_shared *shared, unsigned w)
{
    while (shared->test_stall[w] && !__atomic_load_n(&shared->stop, __ATOMIC_RELAXED))
        rte_pause();
}

int xlb_worker_main(void *arg)
{
    const struct xlb_worker_config *cfg = arg;
    struct xlb_shared *shared = cfg->shared;
    struct xlb_worker_stats *stats = &shared->stats[cfg->id];
    struct xlb_burst_ctx ctx;
    xlb_burst_ctx_init(&ctx, &(struct xlb_burst_params){
                                 .stats = stats,
                                 .to_control = shared->to_control[cfg->id],
                                 .pool = cfg->pool,
                                 .flows = cfg->flows,
                                 .lb = cfg->lb,
                                 .l7 = cfg->l7,
                                 .relay = cfg->relay,
                                 .stream = cfg->stream,
                                 .redirect = cfg->flows != NULL ? shared->redirect : NULL,
                                 .worker_id = cfg->id,
                                 .n_workers = shared->n_workers,
                                 .snat_port_base = cfg->snat_port_base,
                                 .snat_slice = cfg->snat_slice,
                                 .tsc_hz = rte_get_tsc_hz(),
                             });
    struct rte_mbuf *pkts[XLB_RX_BURST];
    ctx.tx_flush = flush_full_batch;
    ctx.tx_flush_arg = (void *)(uintptr_t)cfg; /* read only by flush_port */

    rte_rcu_qsbr_thread_register(shared->qsbr, cfg->id);
    rte_rcu_qsbr_thread_online(shared->qsbr, cfg->id);
    XLB_LOG(INFO, WORKER, "worker %u on lcore %u polls %u rx queues", cfg->id, rte_lcore_id(),
            cfg->n_rxq);

    uint64_t loop_start = rte_rdtsc();
    while (!__atomic_load_n(&shared->stop, __ATOMIC_RELAXED)) {
        const struct xlb_snapshot *snap = xlb_snapshot_acquire(shared);
        if (unlikely(shared->test_stall[cfg->id]))
            hold_for_test(shared, cfg->id);
        uint32_t received = 0;
        ctx.now_tsc = rte_rdtsc();
        ctx.draining = __atomic_load_n(&shared->drain, __ATOMIC_RELAXED);
        xlb_flow_expire(&ctx, snap);
        xlb_flow_flush_step(&ctx);
        xlb_burst_dump_step(&ctx);
        xlb_l7_poll(&ctx, snap);
        xlb_relay_poll(&ctx, snap);
        xlb_stream_poll(&ctx, snap);
        drain_messages(&ctx, snap, shared->to_worker[cfg->id]);
        for (unsigned q = 0; q < cfg->n_rxq; q++) {
            const struct xlb_worker_rxq *rxq = &cfg->rxq[q];
            uint16_t n = rte_eth_rx_burst(rxq->port_id, rxq->queue_id, pkts, XLB_RX_BURST);
            if (n == 0)
                continue;
            received += n;
            xlb_burst_process(&ctx, snap, rxq->port_index, pkts, n);
            flush_tx(&ctx, cfg);
        }
        uint16_t n = (uint16_t)rte_ring_sc_dequeue_burst(shared->redirect[cfg->id], (void **)pkts,
                                                         XLB_RX_BURST, NULL);
        if (n > 0) {
            received += n;
            xlb_burst_process_redirected(&ctx, snap, pkts, n);
        }
        flush_tx(&ctx, cfg);
        note_use(stats, &ctx);

        stats->observed_generation = snap->generation;
        /* The snapshot pointer is not used past this point in the loop. */
        rte_rcu_qsbr_quiescent(shared->qsbr, cfg->id);
        if (received == 0 && cfg->idle_sleep_us != 0)
            rte_delay_us_sleep(cfg->idle_sleep_us);

        uint64_t now = rte_rdtsc();
        stats->last_quiescent_tsc = now;
        stats->loops++;
        if (received != 0) {
            stats->busy_loops++;
            stats->busy_cycles += now - loop_start;
        } else {
            stats->idle_cycles += now - loop_start;
        }
        loop_start = now;
    }

    rte_rcu_qsbr_thread_offline(shared->qsbr, cfg->id);
    rte_rcu_qsbr_thread_unregister(shared->qsbr, cfg->id);
    xlb_tls_thread_stop(); /* lcore threads outlive the loop: OpenSSL's state of this one goes */
    return 0;
}
