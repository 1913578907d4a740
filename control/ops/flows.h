/*
 * `xlbctl flows`: the workers' flows, which each worker records into a buffer of the control
 * plane's when asked by message (the dump protocol, lib/xlb_flow_dump.h), and `xlbctl flows
 * flush --endpoint ADDR[:PORT]`, which asks every worker to end the flows to a backend. The
 * control plane never reads a worker's flow table.
 *
 * A listing asks every worker that forwards for a dump and answers once all are done, from
 * timers of the event loop (worker_dumps.h): the request's reply comes later, and the loop
 * goes on serving meanwhile. A worker that has not answered after XLB_FLOWS_TIMEOUT_MS makes
 * the reply an error naming it.
 */
#ifndef XLB_FLOWS_H
#define XLB_FLOWS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "control_socket.h"
#include "event_loop.h"
#include "xlb_shared.h"

/* The most flows one listing returns. */
#define XLB_FLOWS_MAX_LIST 10000
/* How often the workers' dumps are checked, and how long they may take. */
#define XLB_FLOWS_POLL_MS    1
#define XLB_FLOWS_TIMEOUT_MS 2000

struct xlb_flows;

struct xlb_flows *xlb_flows_create(struct xlb_shared *shared, struct xlb_loop *loop);
/* Call only after the workers have stopped: it frees dumps a worker may still have. Listings
 * still waiting are answered with an error. */
void xlb_flows_destroy(struct xlb_flows *flows);

/*
 * args: {"vip": "ADDR[:PORT]", "endpoint": "ADDR[:PORT]", "limit": N}. Returns
 * XLB_REPLY_LATER (the reply, {"flows": [...], "matching": n, "shown": n}, goes to the request
 * being handled on sock), the result itself when no worker forwards, or NULL + error.
 */
cJSON *xlb_flows_list(struct xlb_flows *flows, struct xlb_control_socket *sock, const cJSON *args,
                      char *error, size_t len);

/* args: {"endpoint": "ADDR[:PORT]"}; returns {"workers": n} or NULL + error. */
cJSON *xlb_flows_flush(struct xlb_shared *shared, const cJSON *args, char *error, size_t len);

#endif
