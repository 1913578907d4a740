/*
 * Fuzz target: any bytes as a received frame, through the worker's burst function with a
 * snapshot like the demo's. Every mbuf must return to the pool.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_eal.h"
#include "burst.h"
#include "xlb_msg.h"

static struct xlb_burst_ctx ctx;
static struct xlb_worker_stats stats;
static struct xlb_snapshot *snap;
static struct rte_mempool *pool;

static void add(const char *text, uint8_t role)
{
    struct xlb_addr_entry e = {.role = role, .port_mask = 1};
    xlb_addr_parse(text, &e.addr);
    xlb_snapshot_add_address(snap, &e);
}

int LLVMFuzzerInitialize(int *argc, char ***argv); /* libFuzzer calls it; no header declares it */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_eal_init("xlb-fuzz");
    pool = rte_pktmbuf_pool_create("fuzz_pool", 255, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
    struct rte_ring *to_control = xlb_msg_ring_create("fuzz_ring", 0);
    snap = xlb_snapshot_alloc(1, 16, 1);
    if (pool == NULL || to_control == NULL || snap == NULL)
        abort();
    xlb_burst_ctx_init(&ctx, &(struct xlb_burst_params){
                                 .stats = &stats,
                                 .to_control = to_control,
                                 .pool = pool,
                             });
    snap->n_ports = 1;
    snap->ports[0].mac = (struct rte_ether_addr){{0x02, 0, 0, 0, 0, 0x10}};
    snap->ports[0].n_prefixes = 2;
    xlb_prefix_parse("198.18.0.10/24", &snap->ports[0].prefixes[0]);
    xlb_prefix_parse("2001:2::10/64", &snap->ports[0].prefixes[1]);
    add("198.18.0.10", XLB_ROLE_PORT_ADDRESS);
    add("2001:2::10", XLB_ROLE_PORT_ADDRESS);
    add("198.18.0.100", XLB_ROLE_VIP);
    add("2001:2::100", XLB_ROLE_VIP);
    add("198.18.0.1", XLB_ROLE_NEIGHBOUR);
    add("2001:2::1", XLB_ROLE_NEIGHBOUR);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data,
                           size_t size); /* libFuzzer calls it; no header declares it */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > RTE_MBUF_DEFAULT_DATAROOM)
        return 0;
    struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
    if (m == NULL)
        abort();
    if (size > 0)
        memcpy(rte_pktmbuf_append(m, (uint16_t)size), data, size);
    xlb_burst_process(&ctx, snap, 0, &m, 1);
    rte_pktmbuf_free_bulk(ctx.tx[0].pkts, ctx.tx[0].n);
    ctx.tx[0].n = 0;
    struct xlb_msg msg;
    while (xlb_msg_receive(ctx.to_control, &msg) == 0)
        ;
    if (rte_mempool_avail_count(pool) != 255)
        abort(); /* a leaked mbuf */
    return 0;
}
