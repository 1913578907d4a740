/*
 * One timer serves both phases: it runs to the next PING, then to that PING's ACK deadline,
 * then to the next PING again, which falls XLB_GRPC_KEEPALIVE_MS after the previous one (not
 * after the deadline), so that the interval servers see is exactly the documented one.
 */
#include "grpc_keepalive.h"

uint64_t xlb_grpc_keepalive_start(struct xlb_grpc_keepalive *k)
{
    k->ping_outstanding = false;
    k->acked = false;
    return XLB_GRPC_KEEPALIVE_MS;
}

enum xlb_keepalive_action xlb_grpc_keepalive_fire(struct xlb_grpc_keepalive *k, uint64_t *next_ms)
{
    if (!k->ping_outstanding) {
        k->ping_outstanding = true;
        k->acked = false;
        *next_ms = XLB_GRPC_KEEPALIVE_ACK_MS;
        return XLB_KEEPALIVE_PING;
    }
    if (!k->acked)
        return XLB_KEEPALIVE_DEAD;
    k->ping_outstanding = false;
    *next_ms = XLB_GRPC_KEEPALIVE_MS - XLB_GRPC_KEEPALIVE_ACK_MS;
    return XLB_KEEPALIVE_WAIT;
}

void xlb_grpc_keepalive_acked(struct xlb_grpc_keepalive *k)
{
    if (k->ping_outstanding)
        k->acked = true;
}
