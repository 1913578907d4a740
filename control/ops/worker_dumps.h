/*
 * Asking every worker for a dump and answering a control request once all are done: the
 * reply-later logic `xlbctl flows` (flows.c) and `xlbctl tcp` (tcp_listing.c) share. Each
 * worker records into a buffer of the control plane's when asked by message; the control plane
 * never reads a worker's tables.
 *
 * A request's dumps (one per worker, or none for a worker not asked) are sent as each worker
 * becomes free (a worker works on at most one dump at a time) and polled from timers of the
 * event loop, which goes on serving meanwhile. A worker that has not answered within the
 * kind's timeout makes the reply an error naming it; its dump stays with it and is freed once
 * it answers (or when xlbd stops).
 */
#ifndef XLB_WORKER_DUMPS_H
#define XLB_WORKER_DUMPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "control_socket.h"
#include "event_loop.h"
#include "xlb_shared.h"

/* What differs between kinds of dump: how one is handed to a worker and read back. */
struct xlb_worker_dump_kind {
    const char *command; /* for errors: "flows", "tcp" */
    unsigned poll_ms, timeout_ms;
    /* 0 once the message carrying dump is on the ring. */
    int (*send)(struct rte_ring *to_worker, void *dump);
    bool (*done)(const void *dump);
    /* The reply's result from every worker's finished dump (NULL: not asked). */
    cJSON *(*result)(void *const *dumps, unsigned n_workers, uint32_t limit);
};

struct xlb_worker_dumps;

struct xlb_worker_dumps *xlb_worker_dumps_create(struct xlb_shared *shared, struct xlb_loop *loop,
                                                 const struct xlb_worker_dump_kind *kind);
/* Call only after the workers have stopped: it frees dumps a worker may still have. Requests
 * still waiting are answered with an error. */
void xlb_worker_dumps_destroy(struct xlb_worker_dumps *wd);

/*
 * Takes dumps[0..XLB_MAX_WORKERS) (freed here in every case) and answers the request being
 * handled on sock later, with the kind's result. Returns XLB_REPLY_LATER, or NULL + error.
 */
cJSON *xlb_worker_dumps_ask(struct xlb_worker_dumps *wd, struct xlb_control_socket *sock,
                            void *dumps[XLB_MAX_WORKERS], uint32_t limit, char *error, size_t len);

/* A record's address and port (host order) as every listing shows it: "ADDR:PORT",
 * "[ADDR6]:PORT", or "?" when it cannot be formatted. */
void xlb_worker_dump_add_address(cJSON *o, const char *name, uint8_t family, const uint8_t *bytes,
                                 uint16_t port);

#endif
