/*
 * The keepalive schedule of a gRPC channel, apart from the channel so that it can be tested
 * on a virtual clock: a PING every XLB_GRPC_KEEPALIVE_MS, and the connection declared dead
 * when a PING is not acknowledged within XLB_GRPC_KEEPALIVE_ACK_MS.
 *
 * Why 5 minutes: gRPC servers (C-core, Go, Java) count a PING received less than 5 minutes
 * after the previous one, while they have sent no data, as a "ping strike", and after two
 * strikes end the connection with GOAWAY ENHANCE_YOUR_CALM ("too_many_pings"). An ADS stream
 * whose configuration does not change carries no data from the server for hours, so any
 * shorter interval would get xlb disconnected by the very servers it talks to. The 20 s
 * acknowledgement timeout is gRPC's default keepalive timeout.
 */
#ifndef XLB_GRPC_KEEPALIVE_H
#define XLB_GRPC_KEEPALIVE_H

#include <stdbool.h>
#include <stdint.h>

#define XLB_GRPC_KEEPALIVE_MS     300000 /* PING interval, measured from PING to PING */
#define XLB_GRPC_KEEPALIVE_ACK_MS 20000  /* ... and how long its ACK may take */

enum xlb_keepalive_action {
    XLB_KEEPALIVE_WAIT, /* nothing to do: re-arm the timer */
    XLB_KEEPALIVE_PING, /* send a PING, then re-arm the timer */
    XLB_KEEPALIVE_DEAD, /* the last PING went unacknowledged: end the connection */
};

struct xlb_grpc_keepalive {
    bool ping_outstanding; /* the timer runs to the ACK deadline of a sent PING */
    bool acked;            /* ... and its ACK arrived */
};

/* The connection is ready: returns the delay to the first firing. */
uint64_t xlb_grpc_keepalive_start(struct xlb_grpc_keepalive *k);

/* The timer fired: what to do, and in *next_ms when to fire again (unless DEAD). */
enum xlb_keepalive_action xlb_grpc_keepalive_fire(struct xlb_grpc_keepalive *k, uint64_t *next_ms);

/* A PING ACK arrived. */
void xlb_grpc_keepalive_acked(struct xlb_grpc_keepalive *k);

#endif
