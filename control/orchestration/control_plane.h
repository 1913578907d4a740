/*
 * The control plane: everything on the main lcore. One event loop serves the control socket,
 * the metrics listener, signals, and timers that drain worker reports, solicit neighbours,
 * republish the snapshot when its inputs change, and reclaim retired snapshots.
 *
 * Only this thread changes the state below. DPDK's telemetry thread reads it for its
 * callbacks; `lock` makes those reads consistent (the workers never take it).
 */
#ifndef XLB_CONTROL_PLANE_H
#define XLB_CONTROL_PLANE_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "bootstrap.h"
#include "capacity_watch.h"
#include "event_loop.h"
#include "neighbour_table.h"
#include "tls_watch.h"
#include "xds_plane.h"
#include "xlb_shared.h"

struct xlb_control_socket;
struct xlb_metrics_http;

/* What the last SIGHUP did, for status, metrics and telemetry. */
struct xlb_reload_report {
    uint64_t applied, rejected; /* counts since start */
    uint64_t last_ms;           /* 0: never */
    cJSON *last;                /* {"result", "applied": [...], "needs_restart": [...], "errors"} */
};

struct xlb_control_plane {
    struct xlb_bootstrap bootstrap; /* owned; SIGHUP replaces what can change live */
    char config_path[PATH_MAX];
    struct xlb_shared *shared;
    unsigned n_ports;
    struct xlb_port_view ports[XLB_MAX_PORTS];
    unsigned worker_lcores[XLB_MAX_WORKERS];

    struct xlb_loop *loop;
    struct xlb_control_socket *socket;
    struct xlb_flows *flows;             /* `xlbctl flows` listings waiting for the workers */
    struct xlb_tcp_listing *tcp_listing; /* `xlbctl tcp` listings, likewise */
    struct xlb_metrics_http *metrics_http;
    int signal_fd;
    struct xlb_neighbour_table neighbours;
    uint64_t generation; /* last published */
    bool republish;      /* an input of the snapshot changed */
    uint64_t started_ms;
    struct xlb_reload_report reload;
    struct xlb_xds_plane xds;
    struct xlb_capacity_watch capacity; /* the L7 pools' log line */
    struct xlb_tls_watch tls;           /* the TLS VIPs' servers (tls_watch.c) */
    uint64_t tls_files_seen;            /* tls.files_epoch the LB trees were told of */
    bool draining;                      /* drain.c: stopping once the clients have gone */
    uint64_t drain_deadline_ms;
    pthread_mutex_t lock;
};

/*
 * Takes over *bootstrap (left zeroed), builds and publishes generation 1; the caller launches
 * the workers afterwards. NULL on failure (the bootstrap is then freed).
 */
struct xlb_control_plane *xlb_control_plane_create(struct xlb_bootstrap *bootstrap,
                                                   const char *config_path,
                                                   struct xlb_shared *shared,
                                                   const struct xlb_port_view *ports,
                                                   unsigned n_ports, const unsigned *worker_lcores);

/* Serve until SIGTERM or SIGINT (blocked by the caller in every thread); 0 on a clean stop. */
int xlb_control_plane_run(struct xlb_control_plane *cp);
void xlb_control_plane_destroy(struct xlb_control_plane *cp);

/* drain.c: SIGTERM or SIGINT. The loop stops at once unless stream-mode clients are
 * connected: then the workers tell them GOAWAY and the loop stops when none is left or
 * xlb.drain_seconds have passed. A second signal stops at once. */
void xlb_control_plane_stop(struct xlb_control_plane *cp, unsigned signo);

/* Build a new snapshot from the current inputs and publish it; 0 or -1 (old one serves). */
int xlb_control_plane_publish(struct xlb_control_plane *cp);

/* The neighbours to resolve: each port's gateways (the table keeps what it already knows). */
int xlb_control_plane_want_neighbours(struct xlb_control_plane *cp);

/* SIGHUP: re-read the bootstrap and apply what can change without a restart (reload.c). */
void xlb_control_plane_reload(struct xlb_control_plane *cp);

/* The control socket's request handler (commands.c). */
cJSON *xlb_commands_execute(const cJSON *request, void *control_plane);

/* DPDK telemetry commands under /xlb/ (telemetry.c); they read cp under its lock. */
int xlb_telemetry_register(struct xlb_control_plane *cp);
/* Detach cp from the telemetry commands (registered commands cannot be removed); waits for a
 * callback in progress to finish. */
void xlb_telemetry_unregister(struct xlb_control_plane *cp);

#endif
