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
 * The request and the answers are a few bytes of protobuf (HealthCheckRequest.service, field 1;
 * HealthCheckResponse.status, field 1), written and read here rather than through a generated
 * codec: the worker allocates nothing for them.
 */
#include <string.h>

#include "stream_conn.h"

#define HEALTH_SERVING            1 /* grpc.health.v1.HealthCheckResponse.ServingStatus */
#define GRPC_STATUS_UNIMPLEMENTED 12
#define GRPC_FRAME_HEADER         5 /* compressed flag, 4-byte big-endian length */

static bool failed(const struct xlb_stream_sub *s)
{
    return s->health.state == XLB_STREAM_HEALTH_FAILED;
}

/* Every change of state goes through here: the worker counts the calls waiting to start again,
 * and the endpoint hears of it. */
static void set_state(struct xlb_stream_sub *s, enum xlb_stream_health_state state)
{
    struct xlb_stream_worker *w = s->side.w;
    if (failed(s))
        w->health_failed--;
    s->health.state = (uint8_t)state;
    if (failed(s))
        w->health_failed++;
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

void xlb_stream_health_prepare(struct xlb_stream_sub *s, const char *service)
{
    size_t len = strnlen(service, sizeof(s->health.service));
    s->health.wanted = len < sizeof(s->health.service); /* validated shorter: never refused */
    s->health.service_len = (uint8_t)len;
    memcpy(s->health.service, service, s->health.wanted ? len : 0);
}

bool xlb_stream_health_owns(const struct xlb_stream_sub *s, int32_t stream_id)
{
    return s->health.stream_id != 0 && s->health.stream_id == stream_id;
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

static ssize_t request_body(nghttp2_session *session, int32_t stream_id, uint8_t *buf,
                            size_t length, uint32_t *data_flags, nghttp2_data_source *source,
                            void *user)
{
    (void)session;
    (void)stream_id;
    (void)user;
    struct xlb_stream_sub *s = source->ptr;
    uint8_t request[GRPC_FRAME_HEADER + 3 + XLB_HEALTH_SERVICE_MAX];
    uint32_t total = request_bytes(s, request);
    uint32_t n = total - s->health.request_sent;
    if (n > length)
        n = (uint32_t)length;
    memcpy(buf, request + s->health.request_sent, n);
    s->health.request_sent = (uint16_t)(s->health.request_sent + n);
    if (s->health.request_sent == total)
        *data_flags |= NGHTTP2_DATA_FLAG_EOF; /* Watch takes one request, then half-closes */
    return (ssize_t)n;
}

#define NV(name, value)                                                                            \
    {                                                                                              \
        (uint8_t *)(uintptr_t)(name), (uint8_t *)(uintptr_t)(value), sizeof(name) - 1,             \
            sizeof(value) - 1, NGHTTP2_NV_FLAG_NONE                                                \
    }

void xlb_stream_health_start(struct xlb_stream_sub *s)
{
    struct xlb_stream_health *h = &s->health;
    if (!h->wanted || h->stopped || h->stream_id != 0 || s->side.h2 == NULL)
        return;
    char authority[XLB_HOST_PORT_STRLEN];
    int authority_len =
        xlb_host_port_format(&s->addrs.at[s->address], authority, sizeof(authority));
    nghttp2_nv nva[] = {
        NV(":method", "POST"),
        NV(":scheme", "http"),
        NV(":path", "/grpc.health.v1.Health/Watch"),
        {(uint8_t *)(uintptr_t) ":authority", (uint8_t *)authority, 10,
         authority_len > 0 ? (size_t)authority_len : 0, NGHTTP2_NV_FLAG_NONE},
        NV("content-type", "application/grpc"),
        NV("te", "trailers"),
    };
    h->request_sent = 0;
    h->message_len = h->message_need = 0;
    h->answered = false;
    h->status = -1;
    nghttp2_data_provider body = {.source.ptr = s, .read_callback = request_body};
    int32_t id = nghttp2_submit_request(s->side.h2, NULL, nva, RTE_DIM(nva), &body, NULL);
    if (id < 0) {
        h->retry_at_ms = xlb_stream_now_ms(s->side.w->ctx) + 1000;
        set_state(s, XLB_STREAM_HEALTH_FAILED);
        return;
    }
    h->stream_id = id;
    s->side.w->ctx->stats->events[XLB_EVENT_STREAM_HEALTH_WATCHES]++;
    set_state(s, XLB_STREAM_HEALTH_WAITING);
    xlb_stream_send(&s->side);
}

void xlb_stream_health_stop(struct xlb_stream_sub *s)
{
    struct xlb_stream_health *h = &s->health;
    h->stopped = true;
    if (failed(s)) {
        s->side.w->health_failed--;
        h->state = XLB_STREAM_HEALTH_OFF;
    }
    if (h->stream_id != 0 && s->side.h2 != NULL)
        nghttp2_submit_rst_stream(s->side.h2, NGHTTP2_FLAG_NONE, h->stream_id, NGHTTP2_CANCEL);
}

void xlb_stream_health_forget(struct xlb_stream_sub *s)
{
    if (failed(s))
        s->side.w->health_failed--;
    s->health.state = XLB_STREAM_HEALTH_OFF;
    s->health.stream_id = 0;
}

/* The call's trailers (or trailers-only answer) carry its grpc-status. */
void xlb_stream_health_headers(struct xlb_stream_sub *s)
{
    const struct xlb_stream_headers *h = &s->side.w->response;
    for (uint32_t i = 0; i < h->n_fields; i++)
        if (h->fields[i].name_len == 11 && memcmp(h->fields[i].name, "grpc-status", 11) == 0) {
            int status = 0;
            for (uint32_t k = 0; k < h->fields[i].value_len && k < 4; k++)
                status = status * 10 + (h->fields[i].value[k] - '0');
            s->health.status = (int16_t)status;
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

static void answer(struct xlb_stream_sub *s)
{
    struct xlb_stream_health *h = &s->health;
    bool up = serving(h->message + GRPC_FRAME_HEADER, h->message_len - GRPC_FRAME_HEADER);
    h->answered = true;
    xlb_backoff_reset(&h->backoff);
    if (!up && h->state != XLB_STREAM_HEALTH_NOT_SERVING)
        s->side.w->ctx->stats->events[XLB_EVENT_STREAM_HEALTH_NOT_SERVING]++;
    set_state(s, up ? XLB_STREAM_HEALTH_SERVING : XLB_STREAM_HEALTH_NOT_SERVING);
    h->message_len = h->message_need = 0;
}

void xlb_stream_health_data(struct xlb_stream_sub *s, const uint8_t *data, size_t len)
{
    struct xlb_stream_health *h = &s->health;
    nghttp2_session_consume(s->side.h2, h->stream_id, len);
    for (size_t at = 0; at < len;) {
        if (h->message_len < GRPC_FRAME_HEADER) {
            h->message[h->message_len++] = data[at++];
            if (h->message_len == GRPC_FRAME_HEADER) {
                uint32_t body = (uint32_t)h->message[1] << 24 | (uint32_t)h->message[2] << 16 |
                                (uint32_t)h->message[3] << 8 | h->message[4];
                if (h->message[0] != 0 || body > sizeof(h->message) - GRPC_FRAME_HEADER) {
                    /* compressed or too long for a status: not an answer xlb can read */
                    nghttp2_submit_rst_stream(s->side.h2, NGHTTP2_FLAG_NONE, h->stream_id,
                                              NGHTTP2_CANCEL);
                    return;
                }
                h->message_need = GRPC_FRAME_HEADER + body;
            }
        } else {
            h->message[h->message_len++] = data[at++];
        }
        if (h->message_len >= GRPC_FRAME_HEADER && h->message_len == h->message_need)
            answer(s);
    }
}

/* The call ended: the server does not have the service (healthy, no more calls), or the next
 * call starts after the backoff (at once after a call that had answers). */
void xlb_stream_health_closed(struct xlb_stream_sub *s)
{
    struct xlb_stream_worker *w = s->side.w;
    struct xlb_stream_health *h = &s->health;
    h->stream_id = 0;
    if (h->stopped)
        return;
    if (h->status == GRPC_STATUS_UNIMPLEMENTED) {
        w->ctx->stats->events[XLB_EVENT_STREAM_HEALTH_UNIMPLEMENTED]++;
        h->wanted = false;
        set_state(s, XLB_STREAM_HEALTH_OFF);
        return;
    }
    w->ctx->stats->events[XLB_EVENT_STREAM_HEALTH_FAILED]++;
    uint32_t delay =
        h->answered || w->ctx->lb == NULL ? 0 : xlb_backoff_next(&h->backoff, &w->ctx->lb->rng);
    h->retry_at_ms = xlb_stream_now_ms(w->ctx) + delay;
    set_state(s, XLB_STREAM_HEALTH_FAILED);
}

void xlb_stream_health_poll(struct xlb_stream_worker *w)
{
    if (w->health_failed == 0)
        return;
    uint64_t now = xlb_stream_now_ms(w->ctx);
    for (uint32_t i = 0; i < w->n_subs && w->health_failed > 0; i++) {
        struct xlb_stream_sub *s = &w->subs[i];
        if (s->side.link.in_use && failed(s) && now >= s->health.retry_at_ms && !s->side.done &&
            s->side.h2 != NULL) {
            struct xlb_stream_link *before = w->current;
            w->current = &s->side.link;
            xlb_stream_health_start(s);
            xlb_stream_route_output(w);
            w->current = before;
        }
    }
}
