#include "bench_fwd_memif.h"

#include <stdio.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "nat/nat.h"

#define LINK_WAIT_MS 5000
#define DESCRIPTORS  1024

static uint16_t server_port, client_port;

void memif_eal_args(char server[128], char client[128])
{
    /* Abstract sockets (the 22.11 default): nothing is left in the file system. */
    snprintf(server, 128, "--vdev=net_memif0,role=server,socket=/xlb-bench-fwd-%d,id=0",
             (int)getpid());
    snprintf(client, 128, "--vdev=net_memif1,role=client,socket=/xlb-bench-fwd-%d,id=0",
             (int)getpid());
}

static uint16_t start_port(const char *name)
{
    uint16_t port;
    struct rte_eth_conf conf = {0};
    if (rte_eth_dev_get_port_by_name(name, &port) != 0 ||
        rte_eth_dev_configure(port, 1, 1, &conf) != 0 ||
        rte_eth_rx_queue_setup(port, 0, DESCRIPTORS, (unsigned)rte_socket_id(), NULL, b.pool) !=
            0 ||
        rte_eth_tx_queue_setup(port, 0, DESCRIPTORS, (unsigned)rte_socket_id(), NULL) != 0 ||
        rte_eth_dev_start(port) != 0)
        die("cannot start a memif port");
    return port;
}

static bool link_up(uint16_t port)
{
    struct rte_eth_link link;
    return rte_eth_link_get_nowait(port, &link) == 0 && link.link_status == RTE_ETH_LINK_UP;
}

void memif_open(void)
{
    server_port = start_port("net_memif0");
    client_port = start_port("net_memif1");
    /* The client connects from EAL's interrupt thread: wait for it, bounded. */
    for (int ms = 0; !(link_up(server_port) && link_up(client_port)); ms++) {
        if (ms == LINK_WAIT_MS)
            die("the memif link did not come up");
        rte_delay_ms(1);
    }
    /* The client hands the server its receive buffers when it polls: poll once, so that the
     * server's first transmit finds room. */
    struct rte_mbuf *none[BURST];
    rte_pktmbuf_free_bulk(none, rte_eth_rx_burst(client_port, 0, none, BURST));
}

void memif_close(void)
{
    rte_eth_dev_stop(client_port);
    rte_eth_dev_close(client_port);
    /* The server learns of the disconnect on EAL's interrupt thread; closing it meanwhile
     * made DPDK 22.11's memif free a region twice ("EAL: Error: Invalid memory"). */
    rte_delay_ms(100);
    rte_eth_dev_stop(server_port);
    rte_eth_dev_close(server_port);
}

/* The generator: a burst of the template over random flows, into the link. */
static void generate(const struct tmpl *t, const struct tuple *tuples, uint32_t n, uint64_t *rng)
{
    struct rte_mbuf *pkts[BURST];
    fill_burst(pkts, t, tuples, n, rng);
    uint16_t sent = rte_eth_tx_burst(client_port, 0, pkts, BURST);
    if (sent != BURST)
        die("the memif client did not take a whole burst");
}

/* The sink: everything the worker sent back; returns how many. */
static unsigned drain(void)
{
    struct rte_mbuf *pkts[BURST];
    unsigned total = 0;
    for (int i = 0; i < 4; i++) { /* at most a few bursts are in flight */
        uint16_t got = rte_eth_rx_burst(client_port, 0, pkts, BURST);
        rte_pktmbuf_free_bulk(pkts, got);
        total += got;
        if (got < BURST)
            break;
    }
    return total;
}

/* The worker's part of a burst: receive, [forward,] transmit. Returns its cycles. */
static uint64_t worker_burst(bool forward)
{
    struct rte_mbuf *pkts[BURST];
    uint64_t t0 = rte_rdtsc();
    uint16_t got = rte_eth_rx_burst(server_port, 0, pkts, BURST);
    struct rte_mbuf **out = pkts;
    uint16_t n = got;
    if (forward) {
        b.ctx.now_tsc = t0;
        xlb_flow_expire(&b.ctx, b.snap);
        xlb_burst_process(&b.ctx, b.snap, 0, pkts, got);
        out = b.ctx.tx[0].pkts;
        n = (uint16_t)b.ctx.tx[0].n;
        b.ctx.tx[0].n = 0;
    }
    uint16_t sent = rte_eth_tx_burst(server_port, 0, out, n);
    uint64_t cycles = rte_rdtsc() - t0;
    if (got != BURST || sent != BURST) {
        fprintf(stderr, "memif: received %u of %u, transmitted %u of %u\n", got, (unsigned)BURST,
                sent, n);
        die_dropped(forward ? "memif forwarding" : "memif bare loop");
    }
    return cycles;
}

static uint64_t loop(const struct tmpl *t, const struct tuple *tuples, uint32_t n, uint32_t packets,
                     uint64_t seed, bool forward)
{
    uint64_t rng = seed, cycles = 0, back = 0;
    for (uint32_t k = 0; k < packets / BURST; k++) {
        generate(t, tuples, n, &rng);
        cycles += worker_burst(forward);
        back += drain();
    }
    if (back != packets)
        die("the memif link lost packets");
    return cycles;
}

void memif_run(const struct flows *f, uint32_t packets, uint64_t seed, struct memif_cycles *out)
{
    out->bare = loop(&b.data, f->client, f->n, packets, seed, false);
    out->c2b = loop(&b.data, f->client, f->n, packets, seed, true);
    out->b2c = loop(&b.back_data, f->backend, f->n, packets, seed, true);
}
