/*
 * The calls a subchannel makes for itself (A17's health Watch, A51's load reports): one
 * request, then messages in gRPC's length-prefixed framing, read into the kind's buffer one at
 * a time. A call the server does not implement is not made again on this connection (A17:
 * the subchannel is used as if unchecked; A51: no out-of-band reports); one that ends
 * otherwise is made again after gRPC's connection backoff, at once if it had answers, as
 * gRPC's clients do. Each worker counts its calls waiting for that (subcalls_failed), so that
 * an idle poll looks at no subchannel.
 */
#include <string.h>

#include "stream_conn.h"

#define GRPC_FRAME_HEADER         5 /* compressed flag, 4-byte big-endian length */
#define GRPC_STATUS_UNIMPLEMENTED 12
#define SUBMIT_RETRY_MS           1000 /* nghttp2 refused the stream: try again in a second */

#define NV(name, value)                                                                            \
    {                                                                                              \
        (uint8_t *)(uintptr_t)(name), (uint8_t *)(uintptr_t)(value), sizeof(name) - 1,             \
            sizeof(value) - 1, NGHTTP2_NV_FLAG_NONE                                                \
    }

static const struct xlb_stream_subcall_kind *const kinds[XLB_STREAM_SUBCALLS] = {
    [XLB_STREAM_SUBCALL_HEALTH] = &xlb_stream_health_watch,
    [XLB_STREAM_SUBCALL_OOB] = &xlb_stream_oob_reports,
};

static const struct xlb_stream_subcall_kind *kind_of(const struct xlb_stream_sub *s,
                                                     const struct xlb_stream_subcall *c)
{
    return kinds[c - s->calls];
}

struct xlb_stream_subcall *xlb_stream_subcall_of(struct xlb_stream_sub *s, int32_t stream_id)
{
    for (uint32_t k = 0; k < XLB_STREAM_SUBCALLS; k++)
        if (s->calls[k].stream_id != 0 && s->calls[k].stream_id == stream_id)
            return &s->calls[k];
    return NULL;
}

static void changed(struct xlb_stream_sub *s, const struct xlb_stream_subcall *c,
                    enum xlb_stream_subcall_change change)
{
    const struct xlb_stream_subcall_kind *kind = kind_of(s, c);
    if (kind->changed != NULL)
        kind->changed(s, change);
}

/* Every change of failed goes through here: the worker counts the calls waiting to start. */
static void set_failed(struct xlb_stream_sub *s, struct xlb_stream_subcall *c, bool failed)
{
    if (c->failed != failed)
        s->side.w->subcalls_failed += failed ? 1u : (uint32_t)-1;
    c->failed = failed;
}

/* POST path, the address connected to as :authority (A61: maybe not the endpoint's first). */
static int32_t submit(struct xlb_stream_sub *s, const char *path, nghttp2_data_provider *body)
{
    char authority[XLB_HOST_PORT_STRLEN];
    int authority_len =
        xlb_host_port_format(&s->addrs.at[s->address], authority, sizeof(authority));
    nghttp2_nv nva[] = {
        NV(":method", "POST"),
        NV(":scheme", "http"),
        {(uint8_t *)(uintptr_t) ":path", (uint8_t *)(uintptr_t)path, 5, strlen(path),
         NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)(uintptr_t) ":authority", (uint8_t *)authority, 10,
         authority_len > 0 ? (size_t)authority_len : 0, NGHTTP2_NV_FLAG_NONE},
        NV("content-type", "application/grpc"),
        NV("te", "trailers"),
    };
    return nghttp2_submit_request(s->side.h2, NULL, nva, RTE_DIM(nva), body, NULL);
}

/* The request as far as the session takes it, then the half-close: one request a call. */
static ssize_t request_body(nghttp2_session *session, int32_t stream_id, uint8_t *buf,
                            size_t length, uint32_t *data_flags, nghttp2_data_source *source,
                            void *user)
{
    (void)session;
    (void)stream_id;
    struct xlb_stream_sub *s = user; /* the subchannel's session */
    struct xlb_stream_subcall *c = source->ptr;
    uint8_t request[XLB_STREAM_SUBCALL_REQUEST_MAX];
    uint32_t total = kind_of(s, c)->request(s, request);
    uint32_t n = total - c->request_sent;
    if (n > length)
        n = (uint32_t)length;
    memcpy(buf, request + c->request_sent, n);
    c->request_sent = (uint16_t)(c->request_sent + n);
    if (c->request_sent == total)
        *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

static void start(struct xlb_stream_sub *s, struct xlb_stream_subcall *c)
{
    if (!c->wanted || c->stopped || c->stream_id != 0 || s->side.h2 == NULL)
        return;
    c->request_sent = 0;
    c->message = (struct xlb_stream_message){0, 0};
    c->answered = false;
    c->status = -1;
    nghttp2_data_provider body = {.source.ptr = c, .read_callback = request_body};
    int32_t id = submit(s, kind_of(s, c)->path, &body);
    if (id < 0) {
        c->retry_at_ms = xlb_stream_now_ms(s->side.w->ctx) + SUBMIT_RETRY_MS;
        set_failed(s, c, true);
        changed(s, c, XLB_STREAM_SUBCALL_FAILED);
        return;
    }
    c->stream_id = id;
    set_failed(s, c, false);
    s->side.w->ctx->stats->events[kind_of(s, c)->made]++;
    changed(s, c, XLB_STREAM_SUBCALL_OPEN);
    xlb_stream_send(&s->side);
}

void xlb_stream_subcalls_start(struct xlb_stream_sub *s)
{
    for (uint32_t k = 0; k < XLB_STREAM_SUBCALLS; k++)
        start(s, &s->calls[k]);
}

void xlb_stream_subcalls_stop(struct xlb_stream_sub *s)
{
    for (uint32_t k = 0; k < XLB_STREAM_SUBCALLS; k++) {
        struct xlb_stream_subcall *c = &s->calls[k];
        c->stopped = true;
        set_failed(s, c, false);
        changed(s, c, XLB_STREAM_SUBCALL_STOPPED);
        if (c->stream_id != 0 && s->side.h2 != NULL)
            nghttp2_submit_rst_stream(s->side.h2, NGHTTP2_FLAG_NONE, c->stream_id, NGHTTP2_CANCEL);
    }
}

void xlb_stream_subcalls_forget(struct xlb_stream_sub *s)
{
    for (uint32_t k = 0; k < XLB_STREAM_SUBCALLS; k++) {
        struct xlb_stream_subcall *c = &s->calls[k];
        set_failed(s, c, false);
        changed(s, c, XLB_STREAM_SUBCALL_STOPPED);
        c->stream_id = 0;
    }
}

/* The call's trailers (or trailers-only answer) carry its grpc-status. */
void xlb_stream_subcall_headers(struct xlb_stream_sub *s, struct xlb_stream_subcall *c)
{
    int status = xlb_stream_grpc_status(&s->side.w->response);
    if (status >= 0)
        c->status = (int16_t)status;
}

enum message_step {
    MESSAGE_MORE, /* every byte taken, the message is not whole yet */
    MESSAGE_DONE, /* the buffer holds a whole message: framing, then its body */
    MESSAGE_BAD,  /* compressed, or longer than the buffer: the call is cancelled */
};

/* Takes bytes from data[*at] on into buf (cap bytes) until a message is whole. */
static enum message_step message_feed(struct xlb_stream_message *m, uint8_t *buf, uint32_t cap,
                                      const uint8_t *data, size_t len, size_t *at)
{
    while (*at < len) {
        buf[m->len++] = data[(*at)++];
        if (m->len == GRPC_FRAME_HEADER) {
            uint32_t body =
                (uint32_t)buf[1] << 24 | (uint32_t)buf[2] << 16 | (uint32_t)buf[3] << 8 | buf[4];
            if (buf[0] != 0 || body > cap - GRPC_FRAME_HEADER)
                return MESSAGE_BAD;
            m->need = GRPC_FRAME_HEADER + body;
        }
        if (m->len >= GRPC_FRAME_HEADER && m->len == m->need) {
            m->len = m->need = 0;
            return MESSAGE_DONE;
        }
    }
    return MESSAGE_MORE;
}

void xlb_stream_subcall_data(struct xlb_stream_sub *s, struct xlb_stream_subcall *c,
                             const uint8_t *data, size_t len)
{
    struct xlb_stream_worker *w = s->side.w;
    const struct xlb_stream_subcall_kind *kind = kind_of(s, c);
    uint8_t *m = (uint8_t *)s + kind->answer_at;
    nghttp2_session_consume(s->side.h2, c->stream_id, len);
    for (size_t at = 0; at < len;) {
        enum message_step step = message_feed(&c->message, m, kind->answer_cap, data, len, &at);
        if (step == MESSAGE_BAD) {
            if (kind->unreadable != XLB_EVENT_MAX)
                w->ctx->stats->events[kind->unreadable]++;
            nghttp2_submit_rst_stream(s->side.h2, NGHTTP2_FLAG_NONE, c->stream_id, NGHTTP2_CANCEL);
            return;
        }
        if (step == MESSAGE_DONE) {
            c->answered = true;
            xlb_backoff_reset(&c->backoff);
            kind->message(s, m + GRPC_FRAME_HEADER,
                          (uint32_t)m[1] << 24 | (uint32_t)m[2] << 16 | (uint32_t)m[3] << 8 | m[4]);
        }
    }
}

/* The call ended: the server does not have the service (no more calls), or the next call
 * starts after the backoff (at once after a call that had answers). */
void xlb_stream_subcall_closed(struct xlb_stream_sub *s, struct xlb_stream_subcall *c)
{
    struct xlb_stream_worker *w = s->side.w;
    c->stream_id = 0;
    if (c->stopped)
        return;
    if (c->status == GRPC_STATUS_UNIMPLEMENTED) {
        w->ctx->stats->events[kind_of(s, c)->unimplemented]++;
        c->wanted = false;
        changed(s, c, XLB_STREAM_SUBCALL_UNIMPLEMENTED);
        return;
    }
    w->ctx->stats->events[kind_of(s, c)->failed]++;
    uint32_t delay =
        c->answered || w->ctx->lb == NULL ? 0 : xlb_backoff_next(&c->backoff, &w->ctx->lb->rng);
    c->retry_at_ms = xlb_stream_now_ms(w->ctx) + delay;
    set_failed(s, c, true);
    changed(s, c, XLB_STREAM_SUBCALL_FAILED);
}

static void restart(struct xlb_stream_sub *s, struct xlb_stream_subcall *c)
{
    struct xlb_stream_worker *w = s->side.w;
    struct xlb_stream_link *before = w->current;
    w->current = &s->side.link;
    start(s, c);
    xlb_stream_route_output(w);
    w->current = before;
}

void xlb_stream_subcalls_poll(struct xlb_stream_worker *w)
{
    if (w->subcalls_failed == 0)
        return;
    uint64_t now = xlb_stream_now_ms(w->ctx);
    for (uint32_t i = 0; i < w->n_subs && w->subcalls_failed > 0; i++) {
        struct xlb_stream_sub *s = &w->subs[i];
        if (!s->side.link.in_use || s->side.done || s->side.h2 == NULL)
            continue;
        for (uint32_t k = 0; k < XLB_STREAM_SUBCALLS; k++)
            if (s->calls[k].failed && now >= s->calls[k].retry_at_ms)
                restart(s, &s->calls[k]);
    }
}
