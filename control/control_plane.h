/*
 * The control plane: everything on the main lcore. One event loop serves the control socket,
 * signals, and timers that drain worker reports, solicit neighbours, republish the snapshot
 * when its inputs change, and reclaim retired snapshots.
 */
#ifndef XLB_CONTROL_PLANE_H
#define XLB_CONTROL_PLANE_H

#include <stdbool.h>
#include <stdint.h>

#include "bootstrap.h"
#include "control_socket.h"
#include "event_loop.h"
#include "neighbour_table.h"
#include "xlb_shared.h"

struct xlb_control_plane {
    const struct xlb_bootstrap *bootstrap;
    struct xlb_shared *shared;
    unsigned n_ports;
    struct xlb_port_view ports[XLB_MAX_PORTS];
    unsigned worker_lcores[XLB_MAX_WORKERS];

    struct xlb_loop *loop;
    struct xlb_control_socket *socket;
    int signal_fd;
    struct xlb_neighbour_table neighbours;
    uint64_t generation; /* last published */
    bool republish;      /* an input of the snapshot changed */
    uint64_t started_ms;
};

/* Builds and publishes generation 1; the caller launches workers afterwards. NULL on failure. */
struct xlb_control_plane *xlb_control_plane_create(const struct xlb_bootstrap *bootstrap,
                                                   struct xlb_shared *shared,
                                                   const struct xlb_port_view *ports,
                                                   unsigned n_ports, const unsigned *worker_lcores);

/* Serve until SIGTERM or SIGINT (blocked by the caller in every thread); 0 on a clean stop. */
int xlb_control_plane_run(struct xlb_control_plane *cp);
void xlb_control_plane_destroy(struct xlb_control_plane *cp);

/* The control socket's request handler (commands.c). */
cJSON *xlb_commands_execute(const cJSON *request, void *control_plane);

#endif
