/*
 * Client-side health checking of the stream mode's subchannels, as gRPC A17 does it. A
 * subchannel whose cluster names a health-check service (Envoy's grpc_health_check in the
 * cluster's health_checks, docs/l7.md) opens grpc.health.v1.Health/Watch on its connection as
 * soon as the server's SETTINGS arrive, and gives its endpoint the state the answers say: still
 * CONNECTING until the first answer, READY while the service is SERVING, TRANSIENT_FAILURE
 * otherwise, without closing the connection. A server that does not implement the service
 * (UNIMPLEMENTED) is used as if nothing were checked. A call that ends otherwise leaves the
 * endpoint in TRANSIENT_FAILURE and is made again after gRPC's connection backoff, at once if
 * it had an answer. GOAWAY and retirement cancel the call.
 *
 * The call itself (its request, its messages, its ending and its backoff) is a subchannel call
 * (stream_subcall.c); this file says what it asks and what the answers and endings mean. The
 * request and the answers are a few bytes of protobuf (HealthCheckRequest.service, field 1;
 * HealthCheckResponse.status, field 1), written and read here rather than through a generated
 * codec: the worker allocates nothing for them.
 */
#include <string.h>

#include "stream_conn.h"

#define HEALTH_SERVING    1 /* grpc.health.v1.HealthCheckResponse.ServingStatus */
#define GRPC_FRAME_HEADER 5 /* compressed flag, 4-byte big-endian length */

/* Every change of state goes through here: the endpoint hears of it. */
static void set_state(struct xlb_stream_sub *s, enum xlb_stream_health_state state)
{
    s->health.state = (uint8_t)state;
    xlb_stream_sub_report(s, xlb_stream_sub_state(s));
}

enum xlb_connectivity xlb_stream_sub_state(const struct xlb_stream_sub *s)
{
    if (!s->ready)
        return XLB_CONN_CONNECTING;
    switch (s->health.state) {
    case XLB_STREAM_HEALTH_WAITING:
        return XLB_CONN_CONNECTING;
    case XLB_STREAM_HEALTH_NOT_SERVING:
    case XLB_STREAM_HEALTH_FAILED:
        return XLB_CONN_TRANSIENT_FAILURE;
    default: /* OFF, SERVING */
        return XLB_CONN_READY;
    }
}

/* HealthCheckResponse: the status (field 1, a varint); anything but SERVING is not serving. */
static bool serving(const uint8_t *m, uint32_t len)
{
    uint32_t status = 0;
    for (uint32_t at = 0; at < len;) {
        uint8_t tag = m[at++];
        if (tag != 0x08)
            return false; /* only the status is expected in so few bytes */
        status = 0;
        for (uint32_t shift = 0; at < len && shift < 32; shift += 7) {
            status |= (uint32_t)(m[at] & 0x7f) << shift;
            if (!(m[at++] & 0x80))
                break;
        }
    }
    return status == HEALTH_SERVING;
}

static void answer(struct xlb_stream_sub *s, const uint8_t *body, uint32_t len)
{
    bool up = serving(body, len);
    if (!up && s->health.state != XLB_STREAM_HEALTH_NOT_SERVING)
        s->side.w->ctx->stats->events[XLB_EVENT_STREAM_HEALTH_NOT_SERVING]++;
    set_state(s, up ? XLB_STREAM_HEALTH_SERVING : XLB_STREAM_HEALTH_NOT_SERVING);
}

/* The call open waits for its first answer (CONNECTING); one that failed leaves the endpoint
 * in TRANSIENT_FAILURE until the next; a server without the service is not checked. */
static void changed(struct xlb_stream_sub *s, enum xlb_stream_subcall_change change)
{
    switch (change) {
    case XLB_STREAM_SUBCALL_OPEN:
        set_state(s, XLB_STREAM_HEALTH_WAITING);
        break;
    case XLB_STREAM_SUBCALL_FAILED:
        set_state(s, XLB_STREAM_HEALTH_FAILED);
        break;
    case XLB_STREAM_SUBCALL_UNIMPLEMENTED:
        set_state(s, XLB_STREAM_HEALTH_OFF);
        break;
    case XLB_STREAM_SUBCALL_STOPPED: /* the connection is going: its state no longer counts */
        if (s->health.state == XLB_STREAM_HEALTH_FAILED)
            s->health.state = XLB_STREAM_HEALTH_OFF;
        break;
    }
}

/* The request's gRPC message: the framing, then HealthCheckRequest{service} (nothing for ""). */
static uint32_t request_bytes(const struct xlb_stream_sub *s, uint8_t *out)
{
    uint32_t len = s->health.service_len;
    uint32_t body = len == 0 ? 0 : 1 + (len < 128 ? 1 : 2) + len;
    out[0] = 0;
    out[1] = out[2] = 0;
    out[3] = (uint8_t)(body >> 8);
    out[4] = (uint8_t)body;
    uint32_t at = GRPC_FRAME_HEADER;
    if (len > 0) {
        out[at++] = 0x0a; /* field 1, length-delimited */
        if (len < 128) {
            out[at++] = (uint8_t)len;
        } else {
            out[at++] = (uint8_t)(0x80 | (len & 0x7f));
            out[at++] = (uint8_t)(len >> 7);
        }
        memcpy(out + at, s->health.service, len);
        at += len;
    }
    return at;
}

const struct xlb_stream_subcall_kind xlb_stream_health_watch = {
    .path = "/grpc.health.v1.Health/Watch",
    .made = XLB_EVENT_STREAM_HEALTH_WATCHES,
    .failed = XLB_EVENT_STREAM_HEALTH_FAILED,
    .unimplemented = XLB_EVENT_STREAM_HEALTH_UNIMPLEMENTED,
    .unreadable = XLB_EVENT_MAX, /* compressed or too long for a status: the call is cancelled */
    .answer_at = offsetof(struct xlb_stream_sub, health.answer),
    .answer_cap = RTE_SIZEOF_FIELD(struct xlb_stream_sub, health.answer),
    .request = request_bytes,
    .message = answer,
    .changed = changed,
};

void xlb_stream_health_prepare(struct xlb_stream_sub *s, const char *service)
{
    size_t len = strnlen(service, sizeof(s->health.service));
    if (len == sizeof(s->health.service))
        return; /* validated shorter: never refused */
    s->health.service_len = (uint8_t)len;
    memcpy(s->health.service, service, len);
    s->calls[XLB_STREAM_SUBCALL_HEALTH].wanted = true;
}
