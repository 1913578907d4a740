/*
 * `xlbctl tcp`: the connections of the workers' TCP endpoints, like `ss -ti`, which each worker
 * records into a buffer of the control plane's when asked by message (the dump protocol,
 * lib/xlb_tcp_dump.h). The control plane never reads an endpoint.
 *
 * As `xlbctl flows`, through worker_dumps.h: a listing asks every worker for a dump and answers
 * once all are done, from timers of the event loop, which goes on serving meanwhile; a worker
 * that has not answered after XLB_TCP_LISTING_TIMEOUT_MS makes the reply an error naming it,
 * and its dump is freed once it answers (or when xlbd stops).
 */
#ifndef XLB_TCP_LISTING_H
#define XLB_TCP_LISTING_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "control_socket.h"
#include "event_loop.h"
#include "xlb_shared.h"

/* The most connections one listing returns, and the default. */
#define XLB_TCP_LISTING_MAX     10000
#define XLB_TCP_LISTING_DEFAULT 100
/* How often the workers' dumps are checked, and how long they may take. */
#define XLB_TCP_LISTING_POLL_MS    1
#define XLB_TCP_LISTING_TIMEOUT_MS 2000

struct xlb_tcp_listing;

struct xlb_tcp_listing *xlb_tcp_listing_create(struct xlb_shared *shared, struct xlb_loop *loop);
/* Call only after the workers have stopped: it frees dumps a worker may still have. Listings
 * still waiting are answered with an error. */
void xlb_tcp_listing_destroy(struct xlb_tcp_listing *tl);

/*
 * args: {"limit": N} (optional). Returns XLB_REPLY_LATER (the reply, {"connections": [...],
 * "total": n, "shown": n}, goes to the request being handled on sock), or NULL + error.
 */
cJSON *xlb_tcp_listing_list(struct xlb_tcp_listing *tl, struct xlb_control_socket *sock,
                            const cJSON *args, char *error, size_t len);

#endif
