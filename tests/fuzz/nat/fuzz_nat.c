/*
 * Fuzz target for the full NAT: the input is up to eight frames (each a 2-byte big-endian
 * length and the bytes), sent through the worker's burst function in order with the clock
 * moving on and expiry running between them, so that the fuzzer can open a flow with one frame
 * and drive it with the next (reply, reset, ICMP error, garbage). After each input every flow is
 * removed again; no mbuf may leak and the table's accounting must hold.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_eal.h"
#include "burst.h"
#include "cluster_compile.h"
#include "nat/nat.h"
#include "xlb_flow_table.h"
#include "xlb_msg.h"

/* The clusters' name, in the char * a parsed configuration holds. */
static char cluster_name[] = "fuzz";

#define POOL_SIZE 255
#define FLOWS     64

static struct xlb_burst_ctx ctx;
static struct xlb_worker_stats stats;
static struct xlb_snapshot *snap;
static struct rte_mempool *pool;
static struct xlb_lb_worker lb;
static struct xlb_worker_load *load;
static struct xlb_lb_vip vips[2];
static struct xlb_lb_target targets[2];
static struct xlb_lb_cluster *clusters[2];

static void add(const char *text, uint8_t role, bool resolved)
{
    struct xlb_addr_entry e = {.role = role, .port_mask = 1, .resolved = resolved};
    e.mac = (struct rte_ether_addr){{0x02, 0, 0, 0, 0, 0x21}};
    if (xlb_addr_parse(text, &e.addr) != 0 || xlb_snapshot_add_address(snap, &e) != 0)
        abort();
}

/* A one-endpoint round-robin cluster behind VIP v. */
static void l4_vip(int v, const char *vip, const char *endpoint)
{
    static struct xlb_host_port where[2];
    static struct xlb_eds_endpoint eps[2];
    static struct xlb_eds_locality locs[2];
    static struct xlb_eds_priority prios[2];
    static struct xlb_endpoint_config eds[2];
    static struct xlb_cluster_config config[2];
    if (xlb_host_port_parse(endpoint, strlen(endpoint), &where[v]) != 0)
        abort();
    eps[v] = (struct xlb_eds_endpoint){&where[v], 1, XLB_HEALTH_HEALTHY, 1};
    locs[v] = (struct xlb_eds_locality){.weight = 1, .endpoints = &eps[v], .n_endpoints = 1};
    prios[v] = (struct xlb_eds_priority){&locs[v], 1};
    eds[v] = (struct xlb_endpoint_config){.priorities = &prios[v], .n_priorities = 1};
    config[v] = (struct xlb_cluster_config){.name = cluster_name,
                                            .max_requests = 1024,
                                            .override_host_status = XLB_OVERRIDE_STATUS_DEFAULT};
    struct xlb_cluster_compile_input in = {
        .name = "fuzz", .config = &config[v], .endpoints = &eds[v], .cluster_slot = (uint32_t)v};
    char err[64];
    if (xlb_cluster_compile(&in, &clusters[v], err, sizeof(err)) != 0)
        abort();
    targets[v] = (struct xlb_lb_target){
        .name = cluster_name, .ready = true, .n_leaves = 1, .leaves = &clusters[v]};
    vips[v] = (struct xlb_lb_vip){.n_targets = 1, .targets = &targets[v]};
    struct xlb_vip_view *view = &snap->vips[snap->n_vips++];
    if (xlb_addr_parse(vip, &view->addr) != 0)
        abort();
    view->l4_port = 9001;
    view->lb = &vips[v];
    add(vip, XLB_ROLE_VIP, false);
}

int LLVMFuzzerInitialize(int *argc, char ***argv); /* libFuzzer calls it; no header declares it */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_eal_init("xlb-fuzz-nat");
    pool = rte_pktmbuf_pool_create("fuzz_nat_pool", POOL_SIZE, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
    struct rte_ring *to_control = xlb_msg_ring_create("fuzz_nat_ring", 0);
    snap = xlb_snapshot_alloc(1, 16, 2);
    load = calloc(1, sizeof(*load));
    struct xlb_addr snat[2];
    if (pool == NULL || to_control == NULL || snap == NULL || load == NULL ||
        xlb_addr_parse("198.18.0.11", &snat[0]) != 0 || xlb_addr_parse("2001:2::11", &snat[1]))
        abort();
    snap->n_ports = 1;
    snap->ports[0].mac = (struct rte_ether_addr){{0x02, 0, 0, 0, 0, 0x10}};
    /* A low MSS limit, so that most SYNs and SYN-ACKs go through the clamp. */
    snap->ports[0].mss_max_ipv4 = 600;
    snap->ports[0].mss_max_ipv6 = 580;
    snap->ports[0].n_prefixes = 2;
    xlb_prefix_parse("198.18.0.10/24", &snap->ports[0].prefixes[0]);
    xlb_prefix_parse("2001:2::10/64", &snap->ports[0].prefixes[1]);
    add("198.18.0.10", XLB_ROLE_PORT_ADDRESS, false);
    add("198.18.0.11", XLB_ROLE_SNAT, false);
    add("2001:2::11", XLB_ROLE_SNAT, false);
    add("198.18.0.21", XLB_ROLE_NEIGHBOUR, true);
    add("2001:2::21", XLB_ROLE_NEIGHBOUR, true);
    l4_vip(0, "198.18.0.100", "198.18.0.21:9001");
    l4_vip(1, "2001:2::100", "[2001:2::21]:9001");
    /* Worker 0's slice of 128 ports from 1024, as xlbd makes its slices. */
    uint16_t first, count;
    xlb_snat_worker_ports(1024, 128, 0, &first, &count);
    struct xlb_flow_table *flows =
        xlb_flow_table_create("fuzz_nat_flows", FLOWS, 0, snat, 2, first, count);
    if (flows == NULL || xlb_lb_worker_init(&lb, 1, load, load, 1) != 0)
        abort();
    xlb_burst_ctx_init(&ctx, &(struct xlb_burst_params){
                                 .stats = &stats,
                                 .to_control = to_control,
                                 .pool = pool,
                                 .flows = flows,
                                 .lb = &lb,
                                 .n_workers = 1,
                                 .snat_port_base = 1024,
                                 .snat_slice = 128,
                                 .tsc_hz = 1000,
                             });
    return 0;
}

static void send_frame(const uint8_t *data, size_t size)
{
    struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
    if (m == NULL)
        abort();
    if (size > 0)
        memcpy(rte_pktmbuf_append(m, (uint16_t)size), data, size);
    xlb_burst_process(&ctx, snap, 0, &m, 1);
    rte_pktmbuf_free_bulk(ctx.tx[0].pkts, ctx.tx[0].n);
    ctx.tx[0].n = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data,
                           size_t size); /* libFuzzer calls it; no header declares it */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (int frame = 0; frame < 8 && size >= 2; frame++) {
        size_t len = (size_t)data[0] << 8 | data[1];
        data += 2;
        size -= 2;
        if (len > size || len > RTE_MBUF_DEFAULT_DATAROOM)
            len = size < RTE_MBUF_DEFAULT_DATAROOM ? size : RTE_MBUF_DEFAULT_DATAROOM;
        ctx.now_tsc += 1500; /* 1.5 s: states time out across a few frames */
        xlb_flow_expire(&ctx, snap);
        send_frame(data, len);
        data += len;
        size -= len;
    }
    struct xlb_msg msg;
    while (xlb_msg_receive(ctx.to_control, &msg) == 0)
        ;
    /* Leave nothing behind for the next input. */
    uint32_t used = 0;
    for (uint32_t i = 0; i < ctx.flows->capacity; i++)
        if (ctx.flows->flows[i].used) {
            used++;
            xlb_flow_remove(ctx.flows, &ctx.flows->flows[i]);
        }
    if (used > FLOWS || ctx.flows->n_used != 0 || ctx.flows->n_syn != 0 ||
        ctx.flows->n_free_ports[0] != 128 || ctx.flows->n_free_ports[1] != 128 ||
        rte_mempool_avail_count(pool) != POOL_SIZE)
        abort(); /* leaked entry, port or mbuf */
    return 0;
}
