#include "control_plane.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "capacity_watch.h"
#include "control_socket.h"
#include "flows.h"
#include "tcp_listing.h"
#include "metrics_http.h"
#include "snapshot_builder.h"
#include "xlb_log.h"

#define XLB_REPORT_POLL_MS   10
#define XLB_SOLICIT_TICK_MS  200
#define XLB_RECLAIM_TICK_MS  100
#define XLB_LB_TICK_MS       250 /* outlier counters, A56 timers, idle draining */
#define XLB_REPORTS_PER_TICK 256 /* per worker: bounded work per tick */

int xlb_control_plane_publish(struct xlb_control_plane *cp)
{
    if (!xlb_snapshot_can_publish(cp->shared)) {
        /* A stalled worker holds all the retired snapshots it may: the report tick retries
         * once the reclaim tick has freed some, and the workers keep the current one. */
        cp->republish = true;
        return -1;
    }
    struct xlb_snapshot *snap =
        xlb_snapshot_build(&cp->bootstrap, cp->ports, cp->n_ports, &cp->neighbours, cp->xds.lb,
                           &cp->tls, cp->generation + 1);
    if (snap == NULL)
        return -1;
    cp->xds.lb_changed = false;
    if (xlb_snapshot_publish(cp->shared, snap) != 0) {
        xlb_snapshot_free(snap);
        cp->republish = true;
        return -1;
    }
    cp->generation = snap->generation;
    cp->republish = false;
    XLB_LOG(DEBUG, SNAPSHOT, "published generation %" PRIu64, cp->generation);
    return 0;
}

static void on_report_tick(void *arg)
{
    struct xlb_control_plane *cp = arg;
    uint64_t now = xlb_now_ms();
    pthread_mutex_lock(&cp->lock);
    for (unsigned w = 0; w < cp->shared->n_workers; w++) {
        struct xlb_msg msg;
        for (int i = 0; i < XLB_REPORTS_PER_TICK; i++) {
            if (xlb_msg_receive(cp->shared->to_control[w], &msg) != 0)
                break;
            if (msg.type == XLB_MSG_NEIGHBOUR_SEEN &&
                xlb_neighbours_seen(&cp->neighbours, &msg, now))
                cp->republish = true;
        }
    }
    /* A failed build is retried on the next tick; the old generation keeps serving. */
    if (cp->republish)
        xlb_control_plane_publish(cp);
    pthread_mutex_unlock(&cp->lock);
}

static void on_solicit_tick(void *arg)
{
    struct xlb_control_plane *cp = arg;
    xlb_neighbours_solicit_due(&cp->neighbours, cp->shared, xlb_now_ms());
}

/* Never waits for the workers: a stalled one is reported, and what it holds waits for it. */
static void on_reclaim_tick(void *arg)
{
    struct xlb_control_plane *cp = arg;
    xlb_snapshot_reclaim(cp->shared);
    xlb_stall_watch_check(&cp->shared->stall, cp->shared->stats, cp->shared->n_workers,
                          rte_rdtsc());
}

/* Tests only: with XLB_TEST_STALL=W in its environment, SIGUSR1 stalls worker W (it stops
 * reporting quiescent states, lib/xlb_shared.h) and the next one releases it. Without it,
 * SIGUSR1 is ignored. */
static int test_stall_worker(const struct xlb_control_plane *cp)
{
    const char *spec = getenv("XLB_TEST_STALL");
    char *end = NULL;
    unsigned long w = spec != NULL ? strtoul(spec, &end, 10) : ULONG_MAX;
    if (spec == NULL || end == spec || *end != '\0' || w >= cp->shared->n_workers)
        return -1;
    return (int)w;
}

static void toggle_test_stall(struct xlb_control_plane *cp)
{
    int w = test_stall_worker(cp);
    if (w < 0)
        return;
    bool stall = !cp->shared->test_stall[w];
    XLB_LOG(WARNING, CONTROL, "XLB_TEST_STALL: worker %d %s (tests only)", w,
            stall ? "stalls" : "released");
    cp->shared->test_stall[w] = stall;
}

static void on_signal(int fd, uint32_t events, void *arg)
{
    struct xlb_control_plane *cp = arg;
    struct signalfd_siginfo info;
    while (read(fd, &info, sizeof(info)) == sizeof(info)) {
        if (info.ssi_signo == SIGHUP) {
            xlb_control_plane_reload(cp);
            continue;
        }
        if (info.ssi_signo == SIGUSR1) {
            toggle_test_stall(cp);
            continue;
        }
        xlb_control_plane_stop(cp, info.ssi_signo);
    }
}

static int watch_signals(struct xlb_control_plane *cp)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGUSR1);
    cp->signal_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (cp->signal_fd < 0)
        return -1;
    return xlb_loop_add_fd(cp->loop, cp->signal_fd, EPOLLIN, on_signal, cp);
}

/* An endpoint's addresses (A61: each may be connected to) that are on a port's link. */
static int want_endpoint(struct xlb_control_plane *cp, struct xlb_neighbour_table *wanted,
                         const struct xlb_lb_cluster *c, uint32_t e)
{
    for (uint32_t k = 0; k < xlb_lb_endpoint_n_addresses(&c->endpoints[e]); k++) {
        const struct xlb_addr *addr = &xlb_lb_endpoint_address(c, e, k)->addr;
        for (unsigned p = 0; p < cp->n_ports; p++)
            if (xlb_port_prefix_for(&cp->ports[p], addr) &&
                xlb_neighbours_want(wanted, addr, (uint16_t)p, false) != 0)
                return -1;
    }
    return 0;
}

/* On-link backends of every VIP (L4 flows and spliced L7 connections go straight to them), so
 * their MACs are resolved like gateways'. Off-link backends go through the gateway. */
static int want_backends(struct xlb_control_plane *cp, struct xlb_neighbour_table *wanted)
{
    for (unsigned v = 0; cp->xds.lb != NULL && v < cp->bootstrap.n_vips; v++) {
        const struct xlb_lb_vip *vip = xlb_lb_trees_vip(cp->xds.lb, v);
        if (vip == NULL)
            continue;
        for (uint32_t t = 0; t < vip->n_targets; t++)
            for (uint32_t l = 0; l < vip->targets[t].n_leaves; l++) {
                const struct xlb_lb_cluster *c = vip->targets[t].leaves[l];
                for (uint32_t e = 0; e < c->n_endpoints; e++)
                    if (want_endpoint(cp, wanted, c, e) != 0)
                        return -1;
            }
    }
    return 0;
}

int xlb_control_plane_want_neighbours(struct xlb_control_plane *cp)
{
    struct xlb_neighbour_table wanted;
    xlb_neighbours_init(&wanted);
    for (unsigned p = 0; p < cp->n_ports; p++) {
        const struct xlb_port_config *port = &cp->bootstrap.ports[p];
        for (unsigned g = 0; g < port->n_gateways; g++)
            if (xlb_neighbours_want(&wanted, &port->gateways[g], (uint16_t)p, true) != 0) {
                xlb_neighbours_free(&wanted);
                return -1;
            }
    }
    if (want_backends(cp, &wanted) != 0) {
        xlb_neighbours_free(&wanted);
        return -1;
    }
    if (xlb_neighbours_keep_known(&wanted, &cp->neighbours, xlb_now_ms()) != 0) {
        xlb_neighbours_free(&wanted);
        return -1;
    }
    xlb_neighbours_free(&cp->neighbours);
    cp->neighbours = wanted;
    return 0;
}

/* A changed LB tree goes to the workers in a new snapshot. */
static void publish_lb_changes(struct xlb_control_plane *cp)
{
    if (!cp->xds.lb_changed)
        return;
    cp->xds.lb_changed = false;
    xlb_control_plane_want_neighbours(cp); /* new backends to resolve */
    xlb_control_plane_publish(cp);
}

static void on_xds_change(void *arg)
{
    struct xlb_control_plane *cp = arg;
    pthread_mutex_lock(&cp->lock);
    xlb_xds_plane_update(&cp->xds);
    publish_lb_changes(cp);
    pthread_mutex_unlock(&cp->lock);
}

static void on_lb_tick(void *arg)
{
    struct xlb_control_plane *cp = arg;
    pthread_mutex_lock(&cp->lock);
    xlb_xds_plane_tick(&cp->xds);
    if (xlb_tls_watch_tick(&cp->tls, &cp->bootstrap, xlb_now_ms()))
        cp->republish = true;
    if (cp->tls.files_epoch != cp->tls_files_seen) {
        cp->tls_files_seen = cp->tls.files_epoch;
        xlb_xds_plane_tls_files_changed(&cp->xds);
    }
    publish_lb_changes(cp);
    pthread_mutex_unlock(&cp->lock);
}

/* Once per interval: L7 connection pools nearly full or refusing, from the workers' counters
 * (the workers never log). */
static void on_capacity_tick(void *arg)
{
    struct xlb_control_plane *cp = arg;
    char line[512];
    if (xlb_capacity_watch_check(&cp->capacity, cp->shared->stats, cp->shared->n_workers, line,
                                 sizeof(line)))
        XLB_LOG(WARNING, WORKER, "L7 connection pools: %s in the last %d s", line,
                XLB_CAPACITY_WATCH_MS / 1000);
}

/* Endpoint slots are reused only once every worker is past the snapshots that named them. */
static uint64_t grace_start(void *arg)
{
    struct xlb_control_plane *cp = arg;
    return rte_rcu_qsbr_start(cp->shared->qsbr);
}

static bool grace_over(void *arg, uint64_t token)
{
    struct xlb_control_plane *cp = arg;
    return rte_rcu_qsbr_check(cp->shared->qsbr, token, false) == 1;
}

static int start_xds(struct xlb_control_plane *cp)
{
    struct xlb_errors errs = {0};
    struct xlb_lb_grace grace = {grace_start, grace_over, cp};
    int rc = xlb_xds_plane_init(&cp->xds, cp->loop, &cp->bootstrap, cp->shared->load,
                                cp->shared->n_workers, &grace, on_xds_change, cp, &errs);
    for (unsigned i = 0; i < errs.n; i++)
        XLB_LOG(ERR, CONTROL, "%s", errs.lines[i]);
    xlb_errors_free(&errs);
    return rc;
}

/* The TLS VIPs' servers, before the first snapshot names them. */
static int start_tls(struct xlb_control_plane *cp)
{
    struct xlb_errors errs = {0};
    int rc = xlb_tls_watch_init(&cp->tls, &cp->bootstrap, xlb_now_ms(), &errs);
    for (unsigned i = 0; i < errs.n; i++)
        XLB_LOG(ERR, CONTROL, "%s", errs.lines[i]);
    xlb_errors_free(&errs);
    return rc;
}

static int start_services(struct xlb_control_plane *cp)
{
    if (start_tls(cp) != 0)
        return -1;
    cp->loop = xlb_loop_create();
    if (cp->loop == NULL || xlb_control_plane_want_neighbours(cp) != 0 ||
        xlb_control_plane_publish(cp) != 0 || watch_signals(cp) != 0 ||
        xlb_loop_add_timer(cp->loop, XLB_REPORT_POLL_MS, on_report_tick, cp) != 0 ||
        xlb_loop_add_timer(cp->loop, XLB_SOLICIT_TICK_MS, on_solicit_tick, cp) != 0 ||
        xlb_loop_add_timer(cp->loop, XLB_RECLAIM_TICK_MS, on_reclaim_tick, cp) != 0 ||
        xlb_loop_add_timer(cp->loop, XLB_CAPACITY_WATCH_MS, on_capacity_tick, cp) != 0) {
        XLB_LOG(ERR, CONTROL, "cannot start the control plane: %s", strerror(errno));
        return -1;
    }
    cp->flows = xlb_flows_create(cp->shared, cp->loop);
    cp->tcp_listing = xlb_tcp_listing_create(cp->shared, cp->loop);
    cp->socket =
        xlb_control_socket_open(cp->loop, cp->bootstrap.control_socket, xlb_commands_execute, cp);
    if (cp->socket != NULL && cp->bootstrap.control_socket_has_group &&
        xlb_control_socket_allow_group(cp->socket, cp->bootstrap.control_socket_group) != 0)
        return -1;
    if (cp->socket != NULL)
        xlb_stream_server_set_idle_timeout(xlb_control_socket_server(cp->socket),
                                           cp->bootstrap.control_idle_timeout_ms);
    if (cp->flows == NULL || cp->tcp_listing == NULL || cp->socket == NULL || start_xds(cp) != 0 ||
        xlb_loop_add_timer(cp->loop, XLB_LB_TICK_MS, on_lb_tick, cp) != 0)
        return -1;
    publish_lb_changes(cp);
    if (cp->bootstrap.metrics_enabled) {
        cp->metrics_http = xlb_metrics_http_open(cp, &cp->bootstrap.metrics_listen);
        if (cp->metrics_http == NULL)
            return -1;
        xlb_stream_server_set_idle_timeout(xlb_metrics_http_server(cp->metrics_http),
                                           cp->bootstrap.control_idle_timeout_ms);
    }
    if (xlb_telemetry_register(cp) != 0)
        XLB_LOG(WARNING, CONTROL, "DPDK telemetry commands not registered");
    return 0;
}

struct xlb_control_plane *xlb_control_plane_create(struct xlb_bootstrap *bootstrap,
                                                   const char *config_path,
                                                   struct xlb_shared *shared,
                                                   const struct xlb_port_view *ports,
                                                   unsigned n_ports, const unsigned *worker_lcores)
{
    struct xlb_control_plane *cp = calloc(1, sizeof(*cp));
    if (cp == NULL) {
        xlb_bootstrap_free(bootstrap);
        return NULL;
    }
    cp->bootstrap = *bootstrap;
    memset(bootstrap, 0, sizeof(*bootstrap));
    snprintf(cp->config_path, sizeof(cp->config_path), "%s", config_path);
    cp->shared = shared;
    cp->n_ports = n_ports;
    memcpy(cp->ports, ports, n_ports * sizeof(*ports));
    memcpy(cp->worker_lcores, worker_lcores, shared->n_workers * sizeof(*worker_lcores));
    cp->signal_fd = -1;
    cp->started_ms = xlb_now_ms();
    xlb_stall_watch_init(&shared->stall, cp->bootstrap.worker_stall_ms, rte_get_tsc_hz(),
                         rte_rdtsc());
    pthread_mutex_init(&cp->lock, NULL);
    xlb_neighbours_init(&cp->neighbours);
    if (start_services(cp) != 0) {
        xlb_control_plane_destroy(cp);
        return NULL;
    }
    return cp;
}

int xlb_control_plane_run(struct xlb_control_plane *cp)
{
    return xlb_loop_run(cp->loop);
}

void xlb_control_plane_destroy(struct xlb_control_plane *cp)
{
    if (cp == NULL)
        return;
    xlb_telemetry_unregister(cp);
    xlb_metrics_http_close(cp->metrics_http);
    xlb_control_socket_close(cp->socket);
    xlb_flows_destroy(cp->flows); /* the workers have stopped */
    xlb_tcp_listing_destroy(cp->tcp_listing);
    xlb_xds_plane_free(&cp->xds);
    if (cp->signal_fd >= 0)
        close(cp->signal_fd);
    xlb_loop_destroy(cp->loop);
    xlb_neighbours_free(&cp->neighbours);
    xlb_tls_watch_fini(&cp->tls);
    cJSON_Delete(cp->reload.last);
    xlb_bootstrap_free(&cp->bootstrap);
    pthread_mutex_destroy(&cp->lock);
    free(cp);
}
