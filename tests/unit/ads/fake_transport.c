/* See fake_transport.h. */
#include "fake_transport.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "event_loop.h"

#define FAKE_MAX_TIMERS   256
#define FAKE_MAX_CHANNELS 64

struct fake_timer {
    uint64_t id, due_ms;
    xlb_loop_timer_cb cb;
    void *arg;
    bool live;
};

static struct {
    uint64_t now_ms, next_id;
    struct fake_timer timers[FAKE_MAX_TIMERS];
    size_t n_timers;
    struct xlb_grpc_channel *channels[FAKE_MAX_CHANNELS];
    size_t n_channels;
    struct xlb_grpc_stream *streams;
} fake;

void fake_reset(uint64_t start_ms)
{
    for (size_t i = 0; i < fake.n_channels; i++)
        free(fake.channels[i]);
    while (fake.streams != NULL) {
        struct xlb_grpc_stream *s = fake.streams;
        fake.streams = s->next_freed;
        for (size_t i = 0; i < s->n_requests; i++)
            protobuf_c_message_free_unpacked(&s->requests[i]->base, NULL);
        free(s);
    }
    memset(&fake, 0, sizeof(fake));
    fake.now_ms = start_ms;
}

uint64_t fake_now(void)
{
    return fake.now_ms;
}

/* ---- the event loop's timeouts on the virtual clock ---- */

uint64_t xlb_now_ms(void)
{
    return fake.now_ms;
}

uint64_t xlb_loop_add_timeout(struct xlb_loop *loop, uint64_t delay_ms, xlb_loop_timer_cb cb,
                              void *arg)
{
    assert_true(fake.n_timers < FAKE_MAX_TIMERS);
    struct fake_timer *t = &fake.timers[fake.n_timers++];
    *t = (struct fake_timer){++fake.next_id, fake.now_ms + delay_ms, cb, arg, true};
    return t->id;
}

void xlb_loop_cancel(struct xlb_loop *loop, uint64_t id)
{
    for (size_t i = 0; i < fake.n_timers; i++)
        if (fake.timers[i].id == id)
            fake.timers[i].live = false;
}

/* The live timer due first (the oldest among equals) no later than limit, or NULL. */
static struct fake_timer *next_due(uint64_t limit)
{
    struct fake_timer *best = NULL;
    for (size_t i = 0; i < fake.n_timers; i++) {
        struct fake_timer *t = &fake.timers[i];
        if (t->live && t->due_ms <= limit && (best == NULL || t->due_ms < best->due_ms))
            best = t;
    }
    return best;
}

void fake_advance(uint64_t ms)
{
    uint64_t target = fake.now_ms + ms;
    struct fake_timer *t;
    while ((t = next_due(target)) != NULL) {
        t->live = false;
        fake.now_ms = t->due_ms;
        t->cb(t->arg);
    }
    fake.now_ms = target;
}

size_t fake_timers_due_at(uint64_t due_ms)
{
    size_t n = 0;
    for (size_t i = 0; i < fake.n_timers; i++)
        n += fake.timers[i].live && fake.timers[i].due_ms == due_ms;
    return n;
}

/* ---- gRPC channels and streams ---- */

struct xlb_grpc_channel *xlb_grpc_channel_connect(struct xlb_loop *loop,
                                                  const struct xlb_grpc_target *target,
                                                  const struct xlb_grpc_channel_callbacks *cb,
                                                  void *arg)
{
    assert_true(fake.n_channels < FAKE_MAX_CHANNELS);
    struct xlb_grpc_channel *ch = calloc(1, sizeof(*ch));
    assert_non_null(ch);
    strcpy(ch->host, target->host);
    ch->created_ms = fake.now_ms;
    ch->cb = *cb;
    ch->arg = arg;
    fake.channels[fake.n_channels++] = ch;
    return ch;
}

void xlb_grpc_channel_destroy(struct xlb_grpc_channel *ch)
{
    if (ch != NULL)
        ch->destroyed = true; /* freed by fake_reset: tests may still look at it */
}

bool xlb_grpc_channel_ready(const struct xlb_grpc_channel *ch)
{
    return ch->ready && !ch->closed;
}

struct xlb_grpc_stream *xlb_grpc_stream_open(struct xlb_grpc_channel *ch, const char *path,
                                             const struct xlb_grpc_stream_callbacks *cb, void *arg)
{
    if (!xlb_grpc_channel_ready(ch))
        return NULL;
    struct xlb_grpc_stream *s = calloc(1, sizeof(*s));
    assert_non_null(s);
    s->ch = ch;
    s->cb = *cb;
    s->arg = arg;
    s->next_freed = fake.streams;
    fake.streams = s;
    ch->stream = s;
    return s;
}

int xlb_grpc_stream_send(struct xlb_grpc_stream *s, const void *msg, size_t len)
{
    if (s == NULL || s->cancelled || s->closed || s->ch->closed)
        return -1;
    assert_true(s->n_requests < FAKE_MAX_REQUESTS);
    DiscoveryRequest *req =
        envoy__service__discovery__v3__discovery_request__unpack(NULL, len, msg);
    assert_non_null(req);
    s->requests[s->n_requests++] = req;
    return 0;
}

void xlb_grpc_stream_cancel(struct xlb_grpc_stream *s)
{
    if (s != NULL)
        s->cancelled = true;
}

size_t fake_n_channels(void)
{
    return fake.n_channels;
}

struct xlb_grpc_channel *fake_channel(size_t index)
{
    assert_true(index < fake.n_channels);
    return fake.channels[index];
}

struct xlb_grpc_channel *fake_last_channel(void)
{
    return fake_channel(fake.n_channels - 1);
}

void fake_ready(struct xlb_grpc_channel *ch)
{
    assert_false(ch->destroyed);
    ch->ready = true;
    ch->cb.on_ready(ch, ch->arg);
}

void fake_fail(struct xlb_grpc_channel *ch, const char *reason)
{
    struct xlb_grpc_stream *s = ch->stream;
    ch->closed = true;
    if (s != NULL && !s->closed && !s->cancelled) {
        s->closed = true;
        s->cb.on_close(s, XLB_GRPC_UNAVAILABLE, reason, s->arg);
    }
    ch->cb.on_closed(ch, reason, ch->arg);
}

void fake_end_stream(struct xlb_grpc_stream *s, int status, const char *message)
{
    assert_false(s->closed || s->cancelled);
    s->closed = true;
    s->cb.on_close(s, status, message, s->arg);
}

void fake_deliver(struct xlb_grpc_stream *s, const ProtobufCMessage *msg)
{
    assert_false(s->closed || s->cancelled);
    size_t len = protobuf_c_message_get_packed_size(msg);
    uint8_t *buf = malloc(len ? len : 1);
    assert_non_null(buf);
    protobuf_c_message_pack(msg, buf);
    fake_deliver_bytes(s, buf, len);
    free(buf);
}

void fake_deliver_bytes(struct xlb_grpc_stream *s, const uint8_t *data, size_t len)
{
    assert_false(s->closed || s->cancelled);
    s->cb.on_message(s, data, len, s->arg);
}

const DiscoveryRequest *fake_request(const struct xlb_grpc_stream *s, size_t i)
{
    assert_non_null(s);
    assert_true(i < s->n_requests);
    return s->requests[i];
}

const DiscoveryRequest *fake_last_request(const struct xlb_grpc_stream *s)
{
    assert_non_null(s);
    assert_true(s->n_requests > 0);
    return s->requests[s->n_requests - 1];
}
