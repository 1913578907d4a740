#include "control_plane.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "snapshot_builder.h"
#include "xlb_log.h"

#define XLB_REPORT_POLL_MS   10
#define XLB_SOLICIT_TICK_MS  200
#define XLB_RECLAIM_TICK_MS  100
#define XLB_REPORTS_PER_TICK 256 /* per worker: bounded work per tick */

static int publish(struct xlb_control_plane *cp)
{
    struct xlb_snapshot *snap = xlb_snapshot_build(cp->bootstrap, cp->ports, cp->n_ports,
                                                   &cp->neighbours, cp->generation + 1);
    if (snap == NULL)
        return -1;
    xlb_snapshot_publish(cp->shared, snap);
    cp->generation = snap->generation;
    cp->republish = false;
    XLB_LOG(DEBUG, SNAPSHOT, "published generation %" PRIu64, cp->generation);
    return 0;
}

static void on_report_tick(void *arg)
{
    struct xlb_control_plane *cp = arg;
    uint64_t now = xlb_now_ms();
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
        publish(cp);
}

static void on_solicit_tick(void *arg)
{
    struct xlb_control_plane *cp = arg;
    xlb_neighbours_solicit_due(&cp->neighbours, cp->shared, xlb_now_ms());
}

static void on_reclaim_tick(void *arg)
{
    struct xlb_control_plane *cp = arg;
    xlb_snapshot_reclaim(cp->shared);
}

static void on_signal(int fd, uint32_t events, void *arg)
{
    struct xlb_control_plane *cp = arg;
    struct signalfd_siginfo info;
    while (read(fd, &info, sizeof(info)) == sizeof(info)) {
        if (info.ssi_signo == SIGHUP) {
            XLB_LOG(WARNING, CONTROL, "SIGHUP ignored: this version reads its bootstrap once");
            continue;
        }
        XLB_LOG(NOTICE, CONTROL, "signal %u: stopping", info.ssi_signo);
        xlb_loop_stop(cp->loop);
    }
}

static int watch_signals(struct xlb_control_plane *cp)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    cp->signal_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (cp->signal_fd < 0)
        return -1;
    return xlb_loop_add_fd(cp->loop, cp->signal_fd, EPOLLIN, on_signal, cp);
}

static int want_gateways(struct xlb_control_plane *cp)
{
    for (unsigned p = 0; p < cp->n_ports; p++) {
        const struct xlb_port_config *port = &cp->bootstrap->ports[p];
        for (unsigned g = 0; g < port->n_gateways; g++)
            if (xlb_neighbours_want(&cp->neighbours, &port->gateways[g], (uint16_t)p, true) != 0)
                return -1;
    }
    return 0;
}

struct xlb_control_plane *xlb_control_plane_create(const struct xlb_bootstrap *bootstrap,
                                                   struct xlb_shared *shared,
                                                   const struct xlb_port_view *ports,
                                                   unsigned n_ports, const unsigned *worker_lcores)
{
    struct xlb_control_plane *cp = calloc(1, sizeof(*cp));
    if (cp == NULL)
        return NULL;
    cp->bootstrap = bootstrap;
    cp->shared = shared;
    cp->n_ports = n_ports;
    memcpy(cp->ports, ports, n_ports * sizeof(*ports));
    memcpy(cp->worker_lcores, worker_lcores, shared->n_workers * sizeof(*worker_lcores));
    cp->signal_fd = -1;
    cp->started_ms = xlb_now_ms();
    xlb_neighbours_init(&cp->neighbours);

    cp->loop = xlb_loop_create();
    if (cp->loop == NULL || want_gateways(cp) != 0 || publish(cp) != 0 || watch_signals(cp) != 0 ||
        xlb_loop_add_timer(cp->loop, XLB_REPORT_POLL_MS, on_report_tick, cp) != 0 ||
        xlb_loop_add_timer(cp->loop, XLB_SOLICIT_TICK_MS, on_solicit_tick, cp) != 0 ||
        xlb_loop_add_timer(cp->loop, XLB_RECLAIM_TICK_MS, on_reclaim_tick, cp) != 0) {
        XLB_LOG(ERR, CONTROL, "cannot start the control plane: %s", strerror(errno));
        xlb_control_plane_destroy(cp);
        return NULL;
    }
    cp->socket =
        xlb_control_socket_open(cp->loop, bootstrap->control_socket, xlb_commands_execute, cp);
    if (cp->socket == NULL) {
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
    xlb_control_socket_close(cp->socket);
    if (cp->signal_fd >= 0)
        close(cp->signal_fd);
    xlb_loop_destroy(cp->loop);
    xlb_neighbours_free(&cp->neighbours);
    free(cp);
}
