/*
 * The L7 stream mode's client side (dataplane/stream/), driven through the burst function by a
 * client that is a real nghttp2 client session over an xlb TCP endpoint: xlb terminates its
 * TCP and HTTP/2, answers its SETTINGS, and gives each request stream its own pick and answer.
 * With no forwarding yet, every RPC gets xlb's trailers-only UNAVAILABLE with the reason, on
 * its own stream, and the connection stays open for the next RPCs. In the end the flow, the
 * connection and every mbuf are back.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>
#include <nghttp2/nghttp2.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "flow/flow.h"
#include "nat_segments.h"
#include "stream/stream.h"
#include "tcp_fixture.h"
#include "xlb_tcp.h"

#define PEER_TX   1024
#define MAX_STEPS 20000u /* simulated milliseconds: every loop's bound */
#define MS        (TSC_HZ / 1000)
#define RPCS      3

static const struct rte_ether_addr port_mac = FIX_PORT_MAC, peer_mac = FIX_PEER_MAC;

/* What the client learned of one RPC. */
struct rpc {
    int32_t stream_id;
    char grpc_status[8];
    char grpc_message[128];
    bool closed;
    uint32_t error_code;
};

struct stream_test {
    struct nat_fixture *n;
    struct rte_mbuf *sent[4096];
    uint32_t n_sent;
    struct rte_mempool *peer_pool;
    struct xlb_tcp_endpoint *ep;
    struct xlb_tcp_conn *c;
    struct rte_mbuf *tx[PEER_TX];
    uint16_t n_tx;
    bool closed;
    nghttp2_session *h2;
    struct rpc rpcs[RPCS];
    unsigned n_rpcs;
    bool settings_acked;
    uint32_t goaway_error; /* UINT32_MAX: none received */
    bool eof;              /* xlb's FIN */
};

static struct stream_test *the_test;

static uint64_t now_ms(const struct stream_test *t)
{
    return t->n->f->ctx.now_tsc / MS;
}

static struct rpc *rpc_of(struct stream_test *t, int32_t id)
{
    for (unsigned i = 0; i < t->n_rpcs; i++)
        if (t->rpcs[i].stream_id == id)
            return &t->rpcs[i];
    return NULL;
}

/* ---- the client's HTTP/2 ---- */

static int on_header(nghttp2_session *s, const nghttp2_frame *frame, const uint8_t *name,
                     size_t name_len, const uint8_t *value, size_t value_len, uint8_t flags,
                     void *user)
{
    (void)s;
    (void)flags;
    struct rpc *r = rpc_of(user, frame->hd.stream_id);
    if (r == NULL)
        return 0;
    char *to = NULL;
    size_t cap = 0;
    if (name_len == 11 && memcmp(name, "grpc-status", 11) == 0) {
        to = r->grpc_status;
        cap = sizeof(r->grpc_status);
    } else if (name_len == 12 && memcmp(name, "grpc-message", 12) == 0) {
        to = r->grpc_message;
        cap = sizeof(r->grpc_message);
    }
    if (to != NULL)
        snprintf(to, cap, "%.*s", (int)value_len, (const char *)value);
    return 0;
}

static int on_stream_close(nghttp2_session *s, int32_t id, uint32_t error_code, void *user)
{
    (void)s;
    struct rpc *r = rpc_of(user, id);
    if (r != NULL) {
        r->closed = true;
        r->error_code = error_code;
    }
    return 0;
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *frame, void *user)
{
    (void)s;
    if (frame->hd.type == NGHTTP2_SETTINGS && (frame->hd.flags & NGHTTP2_FLAG_ACK))
        ((struct stream_test *)user)->settings_acked = true;
    if (frame->hd.type == NGHTTP2_GOAWAY)
        ((struct stream_test *)user)->goaway_error = frame->goaway.error_code;
    return 0;
}

static void h2_client(struct stream_test *t)
{
    nghttp2_session_callbacks *cb;
    assert_int_equal(nghttp2_session_callbacks_new(&cb), 0);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
    assert_int_equal(nghttp2_session_client_new(&t->h2, cb, t), 0);
    nghttp2_session_callbacks_del(cb);
    assert_int_equal(nghttp2_submit_settings(t->h2, NGHTTP2_FLAG_NONE, NULL, 0), 0);
}

#define NV(n, v)                                                                                   \
    {                                                                                              \
        (uint8_t *)(uintptr_t)(n), (uint8_t *)(uintptr_t)(v), sizeof(n) - 1, sizeof(v) - 1, 0      \
    }

/* A unary gRPC call's headers, the request ended with them (an empty message is not needed
 * for xlb's answer). */
static void submit_rpc(struct stream_test *t)
{
    static const nghttp2_nv nva[] = {
        NV(":method", "POST"),
        NV(":scheme", "http"),
        NV(":path", "/echo.Echo/Say"),
        NV(":authority", "svc"),
        NV("content-type", "application/grpc"),
        NV("te", "trailers"),
    };
    int32_t id = nghttp2_submit_request(t->h2, NULL, nva, RTE_DIM(nva), NULL, NULL);
    assert_true(id > 0);
    assert_true(t->n_rpcs < RPCS);
    t->rpcs[t->n_rpcs++] = (struct rpc){.stream_id = id};
}

/* ---- the client's TCP ---- */

static void client_read(struct stream_test *t)
{
    const uint8_t *d;
    uint32_t len;
    bool eof;
    while (t->c != NULL && xlb_tcp_peek(t->c, &d, &len, &eof) && len) {
        assert_int_equal(nghttp2_session_mem_recv(t->h2, d, len), (ssize_t)len);
        xlb_tcp_consume(t->ep, t->c, len);
    }
    if (t->c != NULL && xlb_tcp_peek(t->c, &d, &len, &eof) == 0 && eof)
        t->eof = true;
}

static void client_write(struct stream_test *t)
{
    if (t->c == NULL || xlb_tcp_conn_state(t->c) != XLB_TCP_ESTABLISHED)
        return;
    const uint8_t *data;
    ssize_t n;
    while ((n = nghttp2_session_mem_send(t->h2, &data)) > 0) {
        struct rte_mbuf *m = rte_pktmbuf_alloc(t->peer_pool);
        assert_non_null(m);
        assert_true(n <= rte_pktmbuf_tailroom(m));
        memcpy(rte_pktmbuf_append(m, (uint16_t)n), data, (size_t)n);
        assert_int_equal(xlb_tcp_write(t->ep, t->c, m), 0);
    }
    xlb_tcp_flush(t->ep, t->c);
}

static void on_connected(struct xlb_tcp_conn *c, void *user)
{
    ((struct stream_test *)user)->c = c;
}
static void on_readable(struct xlb_tcp_conn *c, void *user)
{
    (void)c;
    client_read(user);
}
static void on_writable(struct xlb_tcp_conn *c, void *user)
{
    (void)c;
    (void)user;
}
static void on_closed(struct xlb_tcp_conn *c, void *user, enum xlb_tcp_close_reason why)
{
    (void)c;
    (void)why;
    struct stream_test *t = user;
    t->closed = true;
    t->c = NULL;
}
static const struct xlb_tcp_callbacks cbs = {on_connected, on_readable, on_writable, on_closed};

/* ---- the wire ---- */

static void take_batch(struct xlb_burst_ctx *ctx, uint16_t port_index)
{
    struct xlb_tx_batch *b = &ctx->tx[port_index];
    for (uint16_t i = 0; i < b->n; i++) {
        assert_true(the_test->n_sent < RTE_DIM(the_test->sent));
        the_test->sent[the_test->n_sent++] = b->pkts[i];
    }
    b->n = 0;
}

/* What xlb sent, to the client (all of it must be addressed to the client's next hop). */
static void xlb_to_client(struct stream_test *t)
{
    take_batch(&t->n->f->ctx, 0);
    uint32_t n = t->n_sent;
    t->n_sent = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct rte_mbuf *frame = t->sent[i];
        const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(frame, const struct rte_ether_hdr *);
        assert_memory_equal(&eth->src_addr, &port_mac, sizeof(port_mac));
        assert_memory_equal(&eth->dst_addr, &peer_mac, sizeof(peer_mac));
        uint32_t len = rte_pktmbuf_pkt_len(frame) - (uint32_t)sizeof(*eth);
        struct rte_mbuf *m = rte_pktmbuf_alloc(t->peer_pool);
        assert_non_null(m);
        uint8_t *d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
        const void *src = rte_pktmbuf_read(frame, sizeof(*eth), len, d);
        if (src != d)
            memcpy(d, src, len);
        rte_pktmbuf_free(frame);
        if (t->c != NULL)
            xlb_tcp_receive(t->ep, t->c, m, now_ms(t));
        else
            rte_pktmbuf_free(m);
    }
}

static void client_to_xlb(struct stream_test *t)
{
    uint8_t frame[2048];
    for (uint16_t i = 0; i < t->n_tx; i++) {
        struct rte_mbuf *m = t->tx[i];
        uint32_t len = rte_pktmbuf_pkt_len(m);
        assert_true(len + sizeof(struct rte_ether_hdr) <= sizeof(frame));
        struct rte_ether_hdr *eth = (struct rte_ether_hdr *)frame;
        eth->src_addr = peer_mac;
        eth->dst_addr = port_mac;
        eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
        const void *ip = rte_pktmbuf_read(m, 0, len, frame + sizeof(*eth));
        if (ip != frame + sizeof(*eth))
            memcpy(frame + sizeof(*eth), ip, len);
        rte_pktmbuf_free(m);
        fixture_send(t->n->f, frame, sizeof(*eth) + len);
        xlb_to_client(t);
    }
    t->n_tx = 0;
}

static void step(struct stream_test *t)
{
    struct fixture *f = t->n->f;
    client_write(t);
    client_to_xlb(t);
    xlb_to_client(t);
    client_read(t);
    f->ctx.now_tsc += MS;
    xlb_tcp_poll(t->ep, now_ms(t), 256);
    xlb_stream_poll(&f->ctx, f->snap);
    xlb_flow_expire(&f->ctx, f->snap);
}

/* ---- set-up ---- */

static struct stream_test *stream_test_create(void)
{
    static struct stream_test t;
    memset(&t, 0, sizeof(t));
    t.goaway_error = UINT32_MAX;
    t.n = nat_fixture_two_clusters("stream", 64, 0, 0);
    struct fixture *f = t.n->f;
    for (uint32_t v = 0; v < f->snap->n_vips; v++)
        f->snap->vips[v].l7 = f->snap->vips[v].stream = true;
    const struct xlb_stream_limits limits = {
        .connections = 4,
        .max_concurrent_streams = XLB_STREAM_DEFAULT_MAX_CONCURRENT_STREAMS,
        .window_bytes = XLB_STREAM_DEFAULT_WINDOW_BYTES,
    };
    f->ctx.stream = xlb_stream_worker_create(0, &limits, f->pool, f->pool->size / 2, SOCKET_ID_ANY);
    assert_non_null(f->ctx.stream);
    f->ctx.tx_flush = take_batch;
    the_test = &t;
    static unsigned serial;
    char name[32];
    snprintf(name, sizeof(name), "stream_peer%u", serial++);
    t.peer_pool =
        rte_pktmbuf_pool_create(name, 4095, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
    assert_non_null(t.peer_pool);
    struct xlb_tcp_config cfg;
    xlb_tcp_config_default(&cfg);
    cfg.max_connections = 4;
    t.ep = xlb_tcp_endpoint_create(&cfg, t.peer_pool, now_ms(&t));
    assert_non_null(t.ep);
    xlb_tcp_tx_set(t.ep, t.tx, PEER_TX, &t.n_tx);
    struct xlb_tcp_tuple tuple = {
        .family = AF_INET, .local_port = htons(40000), .remote_port = htons(VIP_PORT)};
    inet_pton(AF_INET, FIX_PEER4, tuple.local);
    inet_pton(AF_INET, FIX_VIP4, tuple.remote);
    t.c = xlb_tcp_connect(t.ep, &tuple, 0x7ffff000u, now_ms(&t), &cbs, &t);
    assert_non_null(t.c);
    h2_client(&t);
    return &t;
}

/* The client closes; everything is back: the flow (after its linger), xlb's connection, both
 * endpoints' control blocks, every mbuf. */
static void stream_test_destroy(struct stream_test *t)
{
    struct fixture *f = t->n->f;
    if (t->c != NULL)
        xlb_tcp_shutdown(t->ep, t->c);
    for (uint32_t i = 0; i < 400000 && t->n->flows->n_used > 0; i++)
        step(t);
    assert_int_equal(t->n->flows->n_used, 0);
    uint32_t in_use, capacity;
    xlb_stream_use(f->ctx.stream, &in_use, &capacity);
    assert_int_equal(in_use, 0);
    for (uint32_t i = 0; i < 3000; i++) /* TIME-WAIT: 2 s */
        step(t);
    assert_int_equal(xlb_tcp_conns_in_use(xlb_stream_endpoint(f->ctx.stream)), 0);
    assert_int_equal(xlb_tcp_conns_in_use(t->ep), 0);
    nghttp2_session_del(t->h2);
    xlb_tcp_endpoint_free(t->ep);
    assert_int_equal(rte_mempool_in_use_count(t->peer_pool), 0);
    rte_mempool_free(t->peer_pool);
    xlb_stream_worker_free(f->ctx.stream);
    f->ctx.stream = NULL;
    nat_fixture_destroy(t->n);
}

/* ---- tests ---- */

/* Each RPC gets its own answer on its own stream, the connection lives on between them. */
static void each_rpc_answered_on_its_stream(void **state)
{
    (void)state;
    struct stream_test *t = stream_test_create();
    uint32_t ms = 0;
    for (; ms < MAX_STEPS && !t->settings_acked; ms++)
        step(t);
    assert_true(t->settings_acked); /* xlb's HTTP/2 server took our SETTINGS */
    print_message("an idle client session holds %u heap bytes\n",
                  xlb_stream_session_bytes(t->n->f->ctx.stream));
    for (unsigned i = 0; i < RPCS; i++) {
        submit_rpc(t);
        struct rpc *r = &t->rpcs[i];
        for (ms = 0; ms < MAX_STEPS && !r->closed; ms++)
            step(t);
        assert_true(r->closed);
        assert_int_equal(r->error_code, NGHTTP2_NO_ERROR);
        assert_string_equal(r->grpc_status, "14");
        assert_string_equal(r->grpc_message, "xlb: stream mode does not forward yet");
        assert_non_null(t->c); /* the connection stays for the next RPC */
        assert_false(t->closed);
    }
    const struct xlb_worker_stats *st = &t->n->f->stats;
    assert_int_equal(st->events[XLB_EVENT_STREAM_OPENED], 1);
    assert_int_equal(st->events[XLB_EVENT_STREAM_RPCS], RPCS);
    assert_int_equal(st->events[XLB_EVENT_STREAM_RPCS_UNAVAILABLE], RPCS);
    assert_int_equal(st->events[XLB_EVENT_STREAM_SESSION_ERRORS], 0);
    stream_test_destroy(t);
}

/* Bytes that are not HTTP/2 frames after the preface: xlb's session ends the connection as
 * RFC 9113 says (GOAWAY with the error, then FIN), nothing is left. */
static void garbage_ends_the_connection(void **state)
{
    (void)state;
    struct stream_test *t = stream_test_create();
    for (uint32_t ms = 0; ms < MAX_STEPS && !t->settings_acked; ms++)
        step(t);
    struct rte_mbuf *m = rte_pktmbuf_alloc(t->peer_pool);
    assert_non_null(m);
    memcpy(rte_pktmbuf_append(m, 16), "GET / HTTP/1.1\r\n", 16);
    assert_int_equal(xlb_tcp_write(t->ep, t->c, m), 0);
    xlb_tcp_flush(t->ep, t->c);
    for (uint32_t ms = 0; ms < MAX_STEPS && !t->eof; ms++)
        step(t);
    assert_int_equal(t->goaway_error, NGHTTP2_FRAME_SIZE_ERROR);
    assert_true(t->eof);
    stream_test_destroy(t);
}

int main(void)
{
    fixture_eal_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_rpc_answered_on_its_stream),
        cmocka_unit_test(garbage_ends_the_connection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
