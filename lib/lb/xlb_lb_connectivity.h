/*
 * Connectivity for picks over backend subchannels (the L7 stream mode, docs/l7.md): a worker's
 * view of its own HTTP/2 connections to each endpoint, in gRPC's connectivity states, and what
 * a pick makes of them, as a proxyless gRPC client's round robin and priority policies do
 * (A56: a priority is used while it has a READY endpoint; the next one is started when all of
 * its endpoints are in TRANSIENT_FAILURE or when it has not become READY within 10 s).
 *
 * Worker-owned, like the rest of struct xlb_lb_worker: no lock, no allocation after
 * xlb_lb_connectivity_init. L4 and splice VIPs do not use it (their picks pass no
 * connectivity and see every usable endpoint as before).
 */
#ifndef XLB_LB_CONNECTIVITY_H
#define XLB_LB_CONNECTIVITY_H

#include <stdbool.h>
#include <stdint.h>

#include "xlb_rng.h"

enum xlb_connectivity {
    XLB_CONN_IDLE = 0,          /* no connection, none being made: the default of every slot */
    XLB_CONN_CONNECTING,        /* a connection is being made (TCP, then HTTP/2 SETTINGS) */
    XLB_CONN_READY,             /* at least one connection takes new streams */
    XLB_CONN_TRANSIENT_FAILURE, /* the last attempt failed; the next waits for its backoff */
};

const char *xlb_connectivity_name(enum xlb_connectivity s);

/* gRPC's connection backoff (connection-backoff.md): 1 s initial, x1.6, +-20 % jitter, 120 s
 * at most; each attempt may take at least 20 s to connect. */
#define XLB_BACKOFF_INITIAL_MS     1000u
#define XLB_BACKOFF_MAX_MS         120000u
#define XLB_BACKOFF_MIN_CONNECT_MS 20000u
/* A56: how long a priority may stay without a READY endpoint before the next is started. */
#define XLB_PRIORITY_FAILOVER_MS 10000u

struct xlb_backoff {
    uint32_t current_ms; /* the un-jittered delay the next failure waits; 0: not started */
};

/* Back to the initial delay (after a connection became READY). */
void xlb_backoff_reset(struct xlb_backoff *b);
/* The delay before the next attempt, jittered, and grow the next one. */
uint32_t xlb_backoff_next(struct xlb_backoff *b, struct xlb_rng *rng);

struct xlb_lb_worker;
struct xlb_lb_cluster;

/* Give a worker its per-endpoint-slot states and per-(cluster, priority) failover timers
 * (control plane, once, before the worker runs). 0 or -ENOMEM. */
int xlb_lb_connectivity_init(struct xlb_lb_worker *w);
void xlb_lb_connectivity_fini(struct xlb_lb_worker *w);

/* The engine reports its subchannels' aggregate state for an endpoint slot (READY when any of
 * its connections to the endpoint is READY, CONNECTING when one is being made, ...). */
void xlb_lb_connectivity_set(struct xlb_lb_worker *w, uint32_t endpoint_slot,
                             enum xlb_connectivity s, uint64_t now_ms);
enum xlb_connectivity xlb_lb_connectivity_get(const struct xlb_lb_worker *w,
                                              uint32_t endpoint_slot);

#endif
