/*
 * A subchannel's calls of its own (stream_subcall.c): the long-lived gRPC calls xlb makes on a
 * backend connection for itself rather than for a client, A17's health Watch and A51's
 * out-of-band load reports. Both send one request, read a stream of answers, stop for good on
 * UNIMPLEMENTED and are made again after gRPC's connection backoff when they end otherwise; a
 * kind (stream_health.c, stream_orca.c) says only what it asks and what it makes of the
 * answers. Included by stream_conn.h: a subchannel holds its calls.
 */
#ifndef XLB_STREAM_SUBCALL_H
#define XLB_STREAM_SUBCALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xlb_counters.h"
#include "xlb_lb_connectivity.h"
#include "xlb_limits.h"

struct xlb_stream_sub;
struct xlb_stream_worker;

/* A subchannel's calls, in the order they start once the server's SETTINGS arrive. */
enum xlb_stream_subcall_id {
    XLB_STREAM_SUBCALL_HEALTH, /* grpc.health.v1.Health/Watch (A17) */
    XLB_STREAM_SUBCALL_OOB,    /* xds.service.orca.v3.OpenRcaService/StreamCoreMetrics (A51) */
    XLB_STREAM_SUBCALLS
};

/* The largest request, in gRPC's framing: a HealthCheckRequest naming the longest service. */
#define XLB_STREAM_SUBCALL_REQUEST_MAX (5u + 3u + XLB_HEALTH_SERVICE_MAX)

/* What a kind hears of its call's course. */
enum xlb_stream_subcall_change {
    XLB_STREAM_SUBCALL_OPEN,          /* the call was submitted */
    XLB_STREAM_SUBCALL_FAILED,        /* it could not be, or it ended: again at retry_at_ms */
    XLB_STREAM_SUBCALL_UNIMPLEMENTED, /* the server has no such service: no call again */
    XLB_STREAM_SUBCALL_STOPPED,       /* cancelled or forgotten with its connection */
};

/* One kind of call: its method, its counters, its request and what it does with its answers. */
struct xlb_stream_subcall_kind {
    const char *path;
    enum xlb_event_counter made, failed, unimplemented;
    enum xlb_event_counter unreadable; /* a compressed or too long message; XLB_EVENT_MAX: none */
    /* Where in the subchannel a message of its answers is kept (offsetof), framing first; the
     * kind's own field, sized for what it reads. */
    uint32_t answer_at;
    uint16_t answer_cap;
    /* Its request in gRPC's framing, at most XLB_STREAM_SUBCALL_REQUEST_MAX bytes. */
    uint32_t (*request)(const struct xlb_stream_sub *s, uint8_t *out);
    /* A whole message of the call: its body, without gRPC's framing. */
    void (*message)(struct xlb_stream_sub *s, const uint8_t *body, uint32_t len);
    /* The call's course changed (NULL: the kind keeps no state of it). */
    void (*changed)(struct xlb_stream_sub *s, enum xlb_stream_subcall_change change);
};

/* A message being received, whatever DATA frame boundaries the server chose. */
struct xlb_stream_message {
    uint32_t len, need; /* bytes so far, and its whole length once its framing is in */
};

/* The kinds, by enum xlb_stream_subcall_id. */
extern const struct xlb_stream_subcall_kind xlb_stream_health_watch; /* stream_health.c */
extern const struct xlb_stream_subcall_kind xlb_stream_oob_reports;  /* stream_orca.c */

/* One of a subchannel's calls (sub->calls[id]): its kind is its id's. */
struct xlb_stream_subcall {
    uint64_t retry_at_ms; /* failed: when the next call starts */
    int32_t stream_id;    /* the call, 0: none */
    struct xlb_backoff backoff;
    struct xlb_stream_message message; /* the answer being received */
    int16_t status;                    /* the call's grpc-status, -1: none yet */
    uint16_t request_sent;
    bool wanted;   /* its cluster asks for it: a call once the connection is up */
    bool answered; /* the current call had a message: the next one starts at once */
    bool stopped;  /* cancelled (GOAWAY, retired): no call again */
    bool failed;   /* it could not be made or it ended: the next starts at retry_at_ms */
};

/* The subchannel's call on that stream, NULL when the stream is an RPC's. */
struct xlb_stream_subcall *xlb_stream_subcall_of(struct xlb_stream_sub *s, int32_t stream_id);
/* Its header blocks (the response's in the worker's), its DATA, its stream closed. */
void xlb_stream_subcall_headers(struct xlb_stream_sub *s, struct xlb_stream_subcall *c);
void xlb_stream_subcall_data(struct xlb_stream_sub *s, struct xlb_stream_subcall *c,
                             const uint8_t *data, size_t len);
void xlb_stream_subcall_closed(struct xlb_stream_sub *s, struct xlb_stream_subcall *c);

/* The server's SETTINGS came: the wanted calls start. */
void xlb_stream_subcalls_start(struct xlb_stream_sub *s);
/* GOAWAY or retirement: the calls are cancelled, none is made again. */
void xlb_stream_subcalls_stop(struct xlb_stream_sub *s);
/* The subchannel is freed (its session gone). */
void xlb_stream_subcalls_forget(struct xlb_stream_sub *s);
/* On the poll: the failed calls whose backoff passed are made again. */
void xlb_stream_subcalls_poll(struct xlb_stream_worker *w);

#endif
