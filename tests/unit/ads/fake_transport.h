/*
 * What the ADS client runs on, faked for unit tests: the control plane's event loop with a
 * virtual clock (one-shot timeouts fire only when the test advances time), and gRPC channels
 * and streams that connect, fail and answer only when the test says so. Every
 * DiscoveryRequest the client sends is decoded and kept for inspection.
 *
 * The fakes define the functions of event_loop.h and grpc_channel.h that control/xds's ADS
 * files call; the test executables link those files with this one instead of the real ones.
 */
#ifndef XLB_FAKE_TRANSPORT_H
#define XLB_FAKE_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "envoy/service/discovery/v3/discovery.pb-c.h"
#include "grpc_channel.h"

typedef Envoy__Service__Discovery__V3__DiscoveryRequest DiscoveryRequest;

#define FAKE_MAX_REQUESTS 64

struct xlb_grpc_channel {
    char host[XLB_GRPC_HOST_MAX + 1];
    uint64_t created_ms;
    struct xlb_grpc_channel_callbacks cb;
    void *arg;
    bool ready, closed, destroyed;
    struct xlb_grpc_stream *stream; /* the last stream opened on it */
};

struct xlb_grpc_stream {
    struct xlb_grpc_channel *ch;
    struct xlb_grpc_stream_callbacks cb;
    void *arg;
    bool cancelled, closed;
    DiscoveryRequest *requests[FAKE_MAX_REQUESTS];
    size_t n_requests;
    struct xlb_grpc_stream *next_freed; /* all streams, freed by fake_reset */
};

/* Forget (and free) every channel, stream and timer; the clock restarts at start_ms. */
void fake_reset(uint64_t start_ms);
uint64_t fake_now(void);

/* Advance the clock by ms, firing every timeout that falls due, in order. */
void fake_advance(uint64_t ms);
/* Live timeouts due exactly at this time. */
size_t fake_timers_due_at(uint64_t due_ms);

size_t fake_n_channels(void);
struct xlb_grpc_channel *fake_channel(size_t index); /* in order of creation */
struct xlb_grpc_channel *fake_last_channel(void);

/* The channel connects (its streams may open); it fails (its stream ends with UNAVAILABLE). */
void fake_ready(struct xlb_grpc_channel *ch);
void fake_fail(struct xlb_grpc_channel *ch, const char *reason);
/* The server ends the call with this status. */
void fake_end_stream(struct xlb_grpc_stream *s, int status, const char *message);
/* The server sends a message on the call; or bytes that may not decode at all. */
void fake_deliver(struct xlb_grpc_stream *s, const ProtobufCMessage *msg);
void fake_deliver_bytes(struct xlb_grpc_stream *s, const uint8_t *data, size_t len);

/* The last request of the stream, and its i-th. */
const DiscoveryRequest *fake_last_request(const struct xlb_grpc_stream *s);
const DiscoveryRequest *fake_request(const struct xlb_grpc_stream *s, size_t i);

#endif
