/*
 * xlbd: read the bootstrap, start DPDK, open the ports, run the workers on their lcores and
 * the control plane on the main lcore until SIGTERM or SIGINT, then release everything.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_pdump.h>

#include "bootstrap.h"
#include "capacity.h"
#include "control_plane.h"
#include "control_socket.h"
#include "af_xdp_check.h"
#include "eal_args.h"
#include "l7/l7.h"
#include "options.h"
#include "port.h"
#include "port_offloads.h"
#include "port_steering.h"
#include "worker.h"
#include "xds_plane.h"
#include "xlb_log.h"
#include "xlb_shared.h"
#include "xlb_tls_mem.h"
#include "xlb_tls_workers.h"

/* xlbd --check --json: {"file", "valid", "errors": [{"path", "message", "suggestion"}],
 * "errors_not_shown"}, one object on stdout for tools. */
static void print_check_json(const char *file, bool valid, const struct xlb_errors *errs)
{
    cJSON *report = cJSON_CreateObject();
    cJSON *errors = xlb_errors_json(errs);
    char *text = NULL;
    if (report != NULL && errors != NULL && cJSON_AddStringToObject(report, "file", file) &&
        cJSON_AddBoolToObject(report, "valid", valid) &&
        cJSON_AddItemToObject(report, "errors", errors)) {
        errors = NULL; /* the report owns it */
        if (cJSON_AddNumberToObject(report, "errors_not_shown", errs->dropped))
            text = cJSON_PrintUnformatted(report);
    }
    if (text != NULL)
        printf("%s\n", text);
    else
        fprintf(stderr, "xlbd: out of memory\n");
    free(text);
    cJSON_Delete(errors);
    cJSON_Delete(report);
}

/* What can hold mbufs at once with this configuration (capacity.h). */
static struct xlbd_mbuf_need mbuf_need(const struct xlb_bootstrap *b)
{
    struct xlbd_mbuf_need n = {
        .workers = b->workers,
        .ports = b->n_ports,
        .rx_desc = XLB_RX_DESC,
        .tx_desc = XLB_TX_DESC,
        .redirect_ring = XLB_REDIRECT_RING_SIZE,
        .cache = XLB_MBUF_CACHE,
    };
    xlbd_mbufs_needed(&n);
    return n;
}

/* The mbuf pool: as configured, or sized to what can hold mbufs. */
static uint32_t mbuf_pool_size(const struct xlb_bootstrap *b)
{
    struct xlbd_mbuf_need n = mbuf_need(b);
    return b->mbuf_pool_size != XLB_MBUF_POOL_AUTO ? b->mbuf_pool_size : xlbd_mbuf_pool_default(&n);
}

/* A configured pool smaller than what can hold mbufs at once would run dry under load. */
static int check_mbuf_pool(const struct xlb_bootstrap *b, struct xlb_errors *errs)
{
    struct xlbd_mbuf_need n = mbuf_need(b);
    char why[256];
    if (xlbd_mbufs_explain(why, sizeof(why), mbuf_pool_size(b), &n) == 0)
        return 0;
    xlb_errors_add(errs, "xlb.mbuf_pool_size", "%s", why);
    return -1;
}

/* What the EAL arguments' af_xdp vdevs lack on this host (af_xdp_check.c): -1 after adding
 * one line per problem. */
static int check_af_xdp_ports(const struct xlb_bootstrap *bootstrap, struct xlb_errors *errs)
{
    int rc = 0;
    for (unsigned i = 0; i < bootstrap->n_eal_args; i++) {
        char why[160];
        if (xlbd_af_xdp_problem(bootstrap->eal_args[i], bootstrap->workers, why, sizeof(why)) ==
            NULL)
            continue;
        char path[32];
        snprintf(path, sizeof(path), "xlb.eal[%u]", i);
        xlb_errors_add(errs, path, "%s", why);
        rc = -1;
    }
    return rc;
}

/* 0 when the file is valid. Problems go to stderr, one per line, or with --check --json into
 * the JSON result on stdout. */
static int load_config(const struct xlbd_options *opts, struct xlb_bootstrap *bootstrap)
{
    struct xlb_errors errs = {0};
    int rc = xlb_bootstrap_load(opts->config, bootstrap, &errs);
    /* Static resources go through the very validation xDS resources get. */
    if (rc == 0)
        rc = xlb_xds_plane_check(bootstrap, &errs);
    if (rc == 0)
        rc = xlb_tls_check(bootstrap, &errs); /* the TLS VIPs' certificate files */
    if (rc == 0)
        rc = check_mbuf_pool(bootstrap, &errs);
    if (rc == 0)
        rc = check_af_xdp_ports(bootstrap, &errs);
    if (opts->json) {
        print_check_json(opts->config, rc == 0, &errs);
    } else {
        for (unsigned i = 0; i < errs.n; i++)
            fprintf(stderr, "%s\n", errs.lines[i]);
        if (errs.dropped)
            fprintf(stderr, "(%u more problems not shown)\n", errs.dropped);
        if (rc == 0 && opts->check)
            printf("%s: configuration is valid\n", opts->config);
        if (rc == 0 && opts->check) { /* a running xlbd logs them when ADS starts */
            struct xlb_errors warnings = {0};
            xlb_xds_plane_warnings(bootstrap, &warnings);
            for (unsigned i = 0; i < warnings.n; i++)
                fprintf(stderr, "warning: %s\n", warnings.lines[i]);
            xlb_errors_free(&warnings);
        }
    }
    xlb_errors_free(&errs);
    return rc;
}

/* Signals are read by the control plane through a signalfd: block them in every thread,
 * which EAL's threads inherit from this one. */
static void block_signals(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGUSR1); /* tests only: XLB_TEST_STALL (control_plane.c) */
    pthread_sigmask(SIG_BLOCK, &set, NULL);
}

static int start_eal(const struct xlbd_options *opts, const struct xlb_bootstrap *b)
{
    struct xlbd_eal_args args;
    int rc = -1;
    if (xlbd_eal_args_build(&args, b->eal_args, b->n_eal_args, opts->extra_eal, opts->n_extra_eal,
                            b->workers) == 0) {
        /* rte_eal_init permutes its argv: give it a copy so the strings can be freed. */
        char **argv = calloc((size_t)args.argc + 1, sizeof(char *));
        if (argv != NULL) {
            memcpy(argv, args.argv, (size_t)args.argc * sizeof(char *));
            rc = rte_eal_init(args.argc, argv);
            free(argv);
        }
    }
    xlbd_eal_args_free(&args);
    if (rc < 0) {
        fprintf(stderr, "xlbd: EAL initialisation failed: %s\n", rte_strerror(rte_errno));
        return -1;
    }
    if (rte_lcore_count() < b->workers + 1) {
        fprintf(stderr, "xlbd: %u workers need %u lcores, EAL has %u\n", b->workers, b->workers + 1,
                rte_lcore_count());
        rte_eal_cleanup();
        return -1;
    }
    return 0;
}

struct xlbd {
    struct xlb_bootstrap bootstrap;
    struct xlb_shared *shared;
    struct rte_mempool *pool;
    unsigned n_ports;
    struct xlb_port_info port_info[XLB_MAX_PORTS];
    struct xlb_port_view views[XLB_MAX_PORTS];
    struct xlb_worker_config workers[XLB_MAX_WORKERS];
    unsigned worker_lcores[XLB_MAX_WORKERS];
};

static int open_ports(struct xlbd *d)
{
    for (unsigned p = 0; p < d->bootstrap.n_ports; p++) {
        const struct xlb_port_config *cfg = &d->bootstrap.ports[p];
        if (xlb_port_open(cfg->name, d->bootstrap.workers, cfg->mtu, d->pool, &d->port_info[p]) !=
            0)
            return -1;
        d->n_ports++;
        struct xlb_port_view *view = &d->views[p];
        view->port_id = d->port_info[p].port_id;
        view->mac = d->port_info[p].mac;
        view->mtu = d->port_info[p].mtu;
        view->tx_multi_seg = d->port_info[p].tx_multi_seg;
        view->n_prefixes = (uint8_t)cfg->n_addresses;
        memcpy(view->prefixes, cfg->addresses, cfg->n_addresses * sizeof(cfg->addresses[0]));
    }
    return 0;
}

static void plan_workers(struct xlbd *d)
{
    unsigned w = 0, lcore;
    RTE_LCORE_FOREACH_WORKER(lcore) {
        if (w == d->bootstrap.workers)
            break;
        struct xlb_worker_config *cfg = &d->workers[w];
        cfg->id = w;
        cfg->shared = d->shared;
        cfg->pool = d->pool;
        cfg->txq = (uint16_t)w;
        cfg->idle_sleep_us = d->bootstrap.worker_idle_sleep_us;
        cfg->n_ports = (uint16_t)d->n_ports;
        cfg->tx_cksum = xlb_port_tx_cksum(d->port_info, d->n_ports);
        for (unsigned p = 0; p < d->n_ports; p++) {
            cfg->port_ids[p] = d->port_info[p].port_id;
            if (w < d->port_info[p].n_rxq)
                cfg->rxq[cfg->n_rxq++] = (struct xlb_worker_rxq){
                    .port_index = (uint16_t)p,
                    .port_id = d->port_info[p].port_id,
                    .queue_id = (uint16_t)w,
                };
        }
        d->worker_lcores[w++] = lcore;
    }
}

/* Backends' replies to the worker owning their SNAT port: in the NIC where it can. */
static void steer_replies(struct xlbd *d)
{
    if (d->bootstrap.n_snat == 0)
        return;
    for (unsigned p = 0; p < d->n_ports; p++)
        d->port_info[p].flow_rules =
            xlb_port_steer_snat(d->port_info[p].port_id, d->port_info[p].n_rxq, d->bootstrap.snat,
                                d->bootstrap.n_snat, xlb_snat_slice(d->shared->n_workers));
}

static void release(struct xlbd *d)
{
    for (unsigned w = 0; w < XLB_MAX_WORKERS; w++)
        xlb_worker_forwarding_free(&d->workers[w]);
    for (unsigned p = 0; p < d->n_ports; p++) {
        if (d->port_info[p].flow_rules > 0)
            xlb_port_steer_flush(d->port_info[p].port_id);
        xlb_port_close(d->port_info[p].port_id);
    }
    xlb_shared_destroy(d->shared);
    rte_mempool_free(d->pool);
}

/* Bytes per flow: a 64-byte entry and its rte_hash share (112-123 bytes, docs/forwarding.md),
 * counted at the upper figure. */
#define FLOW_BYTES 123

/* The EAL memory the arguments give: xlb.eal's, or the command line's after "--". */
static uint64_t eal_memory(const struct xlbd_options *opts, const struct xlb_bootstrap *b)
{
    uint64_t extra = xlbd_eal_memory_bytes(opts->extra_eal, opts->n_extra_eal);
    return extra != 0 ? extra : xlbd_eal_memory_bytes(b->eal_args, b->n_eal_args);
}

/* HTTP/2 connections per worker: as configured, or when a VIP needs them the default the EAL
 * memory gives (capacity.h). */
static uint32_t l7_connections(const struct xlb_bootstrap *b, uint64_t memory)
{
    if (b->l7_connections_per_worker != XLB_L7_CONNECTIONS_AUTO)
        return b->l7_connections_per_worker;
    for (unsigned v = 0; v < b->n_vips; v++)
        if (b->vips[v].target != NULL)
            return xlbd_l7_pool_default(memory, b->workers, xlb_l7_connection_bytes());
    return 0;
}

/* OpenSSL's heap on each worker (docs/tls.md, "Worker memory"): XLB_TLS_HEAP_PER_CONN a
 * connection, at most a sixteenth of the EAL memory shared among the workers (the memory
 * known), at least XLB_TLS_HEAP_MIN_BYTES. */
#define TLS_HEAP_SHARE_DIV 16
static uint32_t tls_heap(const struct xlb_bootstrap *b, uint64_t memory, uint32_t connections)
{
    uint64_t share = b->workers != 0 ? memory / TLS_HEAP_SHARE_DIV / b->workers : 0;
    return xlb_tls_heap_bytes(connections, share);
}

/* The stream engine's limits: client connections only when a VIP is in the stream mode. */
static struct xlb_stream_limits stream_limits(const struct xlb_bootstrap *b, uint64_t memory)
{
    bool streams = false;
    for (unsigned v = 0; v < b->n_vips; v++)
        streams |= b->vips[v].target != NULL && b->vips[v].stream;
    uint32_t connections = streams ? b->tcp_connections_per_worker : 0;
    return (struct xlb_stream_limits){
        .connections = connections,
        .heap_bytes = connections == 0
                          ? 0
                          : xlbd_stream_heap_default(memory, b->workers, connections,
                                                     XLB_STREAM_HEAP_PER_CONN,
                                                     xlb_stream_heap_floor(connections)),
        .tls_heap_bytes = connections == 0 ? 0 : tls_heap(b, memory, connections),
        .max_concurrent_streams = b->stream_max_concurrent_streams,
        .window_bytes = b->stream_window_bytes,
        .rpcs_per_connection = b->stream_rpcs_per_connection,
        .waiting_rpcs = b->stream_waiting_rpcs,
        .retry_buffers = b->stream_retry_buffers,
        .retry_buffer_bytes = b->stream_retry_buffer_bytes,
        .subchannels_per_endpoint = b->stream_subchannels_per_endpoint,
    };
}

static void print_capacity(const struct xlbd_options *opts, const struct xlb_bootstrap *b)
{
    uint64_t memory = eal_memory(opts, b);
    struct xlb_stream_limits stream = stream_limits(b, memory);
    struct xlbd_capacity c = {
        .workers = b->workers,
        .flows_per_worker = b->flows_per_worker,
        .l7_per_worker = l7_connections(b, memory),
        .flow_bytes = FLOW_BYTES,
        .l7_conn_bytes = xlb_l7_connection_bytes(),
        .memory_bytes = memory,
        .stream_per_worker = stream.connections,
        .stream_worker_bytes = stream.connections != 0 ? xlb_stream_worker_bytes(&stream) : 0,
        .stream_heap_bytes = stream.heap_bytes,
        .stream_tls_heap_bytes = stream.tls_heap_bytes,
        .stream_sessions = xlb_stream_sessions_max(&stream),
    };
    xlbd_capacity_print(stdout, &c);
    struct xlbd_mbuf_need n = mbuf_need(b);
    char line[256];
    xlbd_mbufs_explain(line, sizeof(line), mbuf_pool_size(b), &n);
    printf("capacity: %s\n", line);
}

static int run(struct xlbd *d, const char *config_path, uint64_t memory)
{
    d->shared = xlb_shared_create(d->bootstrap.workers);
    d->pool = d->shared ? xlb_port_pool_create(mbuf_pool_size(&d->bootstrap)) : NULL;
    if (d->pool == NULL || open_ports(d) != 0)
        return -1;
    plan_workers(d);
    for (unsigned w = 0; w < d->shared->n_workers; w++) {
        d->workers[w].stream_limits = stream_limits(&d->bootstrap, memory);
        if (xlb_worker_forwarding_create(&d->workers[w], d->bootstrap.snat, d->bootstrap.n_snat,
                                         d->bootstrap.flows_per_worker,
                                         l7_connections(&d->bootstrap, memory),
                                         d->bootstrap.tcp_connections_per_worker) != 0)
            return -1;
        d->shared->has_flows[w] = d->workers[w].flows != NULL;
    }
    steer_replies(d);
    /* The control plane takes the bootstrap over: SIGHUP replaces parts of it. */
    struct xlb_control_plane *cp = xlb_control_plane_create(&d->bootstrap, config_path, d->shared,
                                                            d->views, d->n_ports, d->worker_lcores);
    if (cp == NULL)
        return -1;
    for (unsigned w = 0; w < d->shared->n_workers; w++)
        rte_eal_remote_launch(xlb_worker_main, &d->workers[w], d->worker_lcores[w]);
    XLB_LOG(NOTICE, APP, "xlbd %s running: %u workers, %u ports", XLB_VERSION, d->shared->n_workers,
            d->n_ports);

    int rc = xlb_control_plane_run(cp);
    __atomic_store_n(&d->shared->stop, true, __ATOMIC_RELAXED);
    rte_eal_mp_wait_lcore();
    xlb_control_plane_destroy(cp);
    XLB_LOG(NOTICE, APP, "xlbd stopped");
    return rc;
}

int main(int argc, char **argv)
{
    /* Before any OpenSSL call (OpenSSL refuses it after its first allocation): workers then
     * allocate OpenSSL's memory from their TLS heaps, never with malloc. */
    if (xlb_tls_mem_install() != 0)
        fprintf(stderr, "xlbd: OpenSSL allocated before xlbd could route its memory: workers "
                        "will call malloc for TLS\n");
    struct xlbd_options opts;
    switch (xlbd_options_parse(argc, argv, &opts)) {
    case XLBD_OPTIONS_DONE:
        return 0;
    case XLBD_OPTIONS_USAGE:
        return 2;
    case XLBD_OPTIONS_RUN:
        break;
    }
    static struct xlbd d;
    if (load_config(&opts, &d.bootstrap) != 0) {
        xlb_bootstrap_free(&d.bootstrap);
        return 1;
    }
    if (opts.check) {
        if (!opts.json)
            print_capacity(&opts, &d.bootstrap);
        xlb_bootstrap_free(&d.bootstrap);
        return 0;
    }
    /* Before EAL touches the ports: a second xlbd must not grab a running one's devices. */
    if (xlb_control_socket_in_use(d.bootstrap.control_socket)) {
        fprintf(stderr, "xlbd: %s is served by another process (another xlbd?)\n",
                d.bootstrap.control_socket);
        xlb_bootstrap_free(&d.bootstrap);
        return 1;
    }
    /* A context per worker for each TLS server and upstream client context: before the control
     * plane builds any. */
    xlb_tls_set_workers(d.bootstrap.workers);
    block_signals();
    if (start_eal(&opts, &d.bootstrap) != 0) {
        xlb_bootstrap_free(&d.bootstrap);
        return 1;
    }
    /* dpdk-dumpcap and dpdk-pdump capture on xlb's ports through this (needs hugepages:
     * they attach as secondary processes). */
    bool pdump = rte_pdump_init() == 0;
    int rc = run(&d, opts.config, eal_memory(&opts, &d.bootstrap));
    if (pdump)
        rte_pdump_uninit();
    release(&d);
    /* OpenSSL cleans up while the workers' TLS heaps, which hold some of its state, are there. */
    xlb_tls_mem_shutdown();
    rte_eal_cleanup();
    xlb_bootstrap_free(&d.bootstrap);
    return rc == 0 ? 0 : 1;
}
