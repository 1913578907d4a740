/* The stream mode's packet-test peers: see stream_peers.h. */
#include "stream_peers.h"

#include <rte_cycles.h>

static const struct rte_ether_addr port_mac = FIX_PORT_MAC, peer_mac = FIX_PEER_MAC,
                                   backend_mac = NAT_BACKEND_MAC;

static struct stream_test *the_test;
struct stream_xlb_cycles stream_xlb_cycles;

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

static int on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data, size_t len,
                   void *user)
{
    (void)s;
    (void)flags;
    struct rpc *r = rpc_of(user, id);
    if (r != NULL)
        snprintf(r->body + strlen(r->body), sizeof(r->body) - strlen(r->body), "%.*s", (int)len,
                 (const char *)data);
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
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
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
void submit_rpc(struct stream_test *t)
{
    static const nghttp2_nv nva[] = {
        NV(":method", "POST"),
        NV(":scheme", "http"),
        NV(":path", "/echo.Echo/Say"),
        NV(":authority", "svc"),
        NV("content-type", "application/grpc"),
        NV("te", "trailers"),
    };
    nghttp2_nv with_timeout[RTE_DIM(nva) + 1];
    memcpy(with_timeout, nva, sizeof(nva));
    size_t n = RTE_DIM(nva);
    if (t->timeout != NULL)
        with_timeout[n++] =
            (nghttp2_nv){(uint8_t *)(uintptr_t) "grpc-timeout", (uint8_t *)(uintptr_t)t->timeout,
                         12, strlen(t->timeout), NGHTTP2_NV_FLAG_NONE};
    int32_t id = nghttp2_submit_request(t->h2, NULL, with_timeout, n, NULL, NULL);
    assert_true(id > 0);
    assert_true(t->n_rpcs < RPCS_MAX);
    t->rpcs[t->n_rpcs++] = (struct rpc){.stream_id = id};
}

static ssize_t client_body(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len,
                           uint32_t *flags, nghttp2_data_source *source, void *user)
{
    struct stream_test *t = user;
    (void)s;
    (void)id;
    (void)source;
    uint32_t n = t->body_total - t->body_sent;
    if (n > len)
        n = (uint32_t)len;
    memset(buf, 'x', n);
    t->body_sent += n;
    if (t->body_sent == t->body_total)
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    return n;
}

/* An RPC whose request carries body_total bytes. */
void submit_rpc_with_body(struct stream_test *t, uint32_t bytes)
{
    static const nghttp2_nv nva[] = {
        NV(":method", "POST"),
        NV(":scheme", "http"),
        NV(":path", "/echo.Echo/Upload"),
        NV(":authority", "svc"),
        NV("content-type", "application/grpc"),
        NV("te", "trailers"),
    };
    t->body_total = bytes;
    nghttp2_data_provider body = {.read_callback = client_body};
    int32_t id = nghttp2_submit_request(t->h2, NULL, nva, RTE_DIM(nva), &body, NULL);
    assert_true(id > 0);
    t->rpcs[t->n_rpcs++] = (struct rpc){.stream_id = id};
}

/* The message of submit_rpc_message's request: a 16-byte protobuf behind gRPC's 5-byte
 * prefix, once per stream (its rpc's message_sent). */
static ssize_t client_message(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len,
                              uint32_t *flags, nghttp2_data_source *source, void *user)
{
    (void)s;
    (void)id;
    (void)user;
    static const char message[] = "\0\0\0\0\x10\x0a\x0ehello from xlb";
    const size_t n = sizeof(message) - 1;
    struct rpc *r = source->ptr;
    assert_true(len >= n);
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    if (r->message_sent)
        return 0;
    r->message_sent = true;
    memcpy(buf, message, n);
    return (ssize_t)n;
}

void submit_rpc_message(struct stream_test *t)
{
    static const nghttp2_nv nva[] = {
        NV(":method", "POST"),
        NV(":scheme", "http"),
        NV(":path", "/echo.Echo/Say"),
        NV(":authority", "svc"),
        NV("content-type", "application/grpc"),
        NV("te", "trailers"),
    };
    assert_true(t->n_rpcs < RPCS_MAX);
    struct rpc *r = &t->rpcs[t->n_rpcs];
    *r = (struct rpc){0};
    nghttp2_data_provider body = {.source.ptr = r, .read_callback = client_message};
    int32_t id = nghttp2_submit_request(t->h2, NULL, nva, RTE_DIM(nva), &body, NULL);
    assert_true(id > 0);
    r->stream_id = id;
    t->n_rpcs++;
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

/* Bytes into a chain of the peer pool's mbufs. */
static struct rte_mbuf *chain_of(struct stream_test *t, const uint8_t *data, size_t n)
{
    struct rte_mbuf *head = NULL, *tail = NULL;
    while (n > 0) {
        struct rte_mbuf *m = rte_pktmbuf_alloc(t->peer_pool);
        assert_non_null(m);
        size_t piece = RTE_MIN(n, (size_t)rte_pktmbuf_tailroom(m));
        memcpy(rte_pktmbuf_append(m, (uint16_t)piece), data, piece);
        data += piece;
        n -= piece;
        if (head == NULL)
            head = m;
        else
            assert_int_equal(rte_pktmbuf_chain(head, m), 0);
        tail = m;
    }
    (void)tail;
    return head;
}

static void client_write(struct stream_test *t)
{
    if (t->c == NULL || xlb_tcp_conn_state(t->c) != XLB_TCP_ESTABLISHED)
        return;
    const uint8_t *data;
    ssize_t n;
    /* A frame at a time, while the send queue has room for the largest. */
    while (xlb_tcp_send_space(t->ep, t->c, 20000) >= 20000 &&
           (n = nghttp2_session_mem_send(t->h2, &data)) > 0)
        assert_int_equal(xlb_tcp_write(t->ep, t->c, chain_of(t, data, (size_t)n)), 0);
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

/* ---- the backends' HTTP/2 ---- */

/* The message: 5 bytes "from " then the backend's name, in one DATA frame. */
static ssize_t backend_body(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len,
                            uint32_t *flags, nghttp2_data_source *source, void *user)
{
    struct backend *b = user;
    (void)source;
    assert_true(len >= 6);
    memcpy(buf, "from ", 5);
    buf[5] = (uint8_t)b->name;
    *flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
    static const nghttp2_nv trailers[] = {NV("grpc-status", "0")};
    assert_int_equal(nghttp2_submit_trailer(s, id, trailers, 1), 0);
    return 6;
}

/* A request complete (its END_STREAM): the response, its message and trailers. */
static int backend_frame_recv(nghttp2_session *s, const nghttp2_frame *frame, void *user)
{
    struct backend *b = user;
    if (frame->hd.type == NGHTTP2_GOAWAY)
        b->goaway = true;
    if (frame->hd.type == NGHTTP2_RST_STREAM && frame->rst_stream.error_code == NGHTTP2_CANCEL)
        b->cancels++;
    if (b->t->mute)
        return 0;
    if (!(frame->hd.flags & NGHTTP2_FLAG_END_STREAM) ||
        (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA))
        return 0;
    static const nghttp2_nv nva[] = {NV(":status", "200"), NV("content-type", "application/grpc")};
    nghttp2_data_provider body = {.read_callback = backend_body};
    assert_int_equal(nghttp2_submit_response(s, frame->hd.stream_id, nva, 2, &body), 0);
    b->rpcs++;
    return 0;
}

static int backend_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data,
                        size_t len, void *user)
{
    struct backend *b = user;
    (void)flags;
    (void)data;
    b->t->backend_body += len;
    if (b->t->stall)
        b->t->backend_unconsumed += len;
    else
        nghttp2_session_consume(s, id, len);
    return 0;
}

static void backend_pump(struct backend *b)
{
    struct stream_test *t = b->t;
    const uint8_t *d;
    uint32_t len;
    bool eof;
    while (b->c != NULL && xlb_tcp_peek(b->c, &d, &len, &eof) && len) {
        assert_int_equal(nghttp2_session_mem_recv(b->h2, d, len), (ssize_t)len);
        xlb_tcp_consume(t->backend_ep, b->c, len);
    }
    if (b->c != NULL && eof && !b->shut) {
        b->shut = true;
        xlb_tcp_shutdown(t->backend_ep, b->c);
    }
    if (b->c == NULL || xlb_tcp_conn_state(b->c) != XLB_TCP_ESTABLISHED)
        return;
    ssize_t n;
    while ((n = nghttp2_session_mem_send(b->h2, &d)) > 0) {
        struct rte_mbuf *m = rte_pktmbuf_alloc(t->peer_pool);
        assert_non_null(m);
        memcpy(rte_pktmbuf_append(m, (uint16_t)n), d, (size_t)n);
        assert_int_equal(xlb_tcp_write(t->backend_ep, b->c, m), 0);
    }
    xlb_tcp_flush(t->backend_ep, b->c);
}

static void backend_connected(struct xlb_tcp_conn *c, void *user)
{
    struct backend *b = user;
    b->c = c;
    nghttp2_session_callbacks *cb;
    assert_int_equal(nghttp2_session_callbacks_new(&cb), 0);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, backend_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, backend_data);
    nghttp2_option *opt;
    assert_int_equal(nghttp2_option_new(&opt), 0);
    nghttp2_option_set_no_auto_window_update(opt, 1);
    assert_int_equal(nghttp2_session_server_new2(&b->h2, cb, b, opt), 0);
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cb);
    const nghttp2_settings_entry limit = {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS,
                                          b->t->backend_max_streams};
    assert_int_equal(nghttp2_submit_settings(b->h2, NGHTTP2_FLAG_NONE, &limit,
                                             b->t->backend_max_streams != 0 ? 1 : 0),
                     0);
}
static void backend_event(struct xlb_tcp_conn *c, void *user)
{
    (void)c;
    (void)user;
}
static void backend_closed(struct xlb_tcp_conn *c, void *user, enum xlb_tcp_close_reason why)
{
    (void)c;
    (void)why;
    ((struct backend *)user)->c = NULL;
}
static const struct xlb_tcp_callbacks backend_cbs = {backend_connected, backend_event,
                                                     backend_event, backend_closed};

/* Whether the IPv4 address is the one named (NULL: none). */
static bool is_at(const char *name, const uint8_t *addr)
{
    uint8_t a[4];
    return name != NULL && inet_pton(AF_INET, name, a) == 1 && memcmp(a, addr, 4) == 0;
}

/* A segment (IP first) to the backends: to its connection, or a SYN answered with a cookie
 * (or a RST when refusing), or the handshake's ACK accepted into a new backend. */
static void to_backends(struct stream_test *t, struct rte_mbuf *m)
{
    const uint8_t *ip = rte_pktmbuf_mtod(m, const uint8_t *);
    const struct rte_tcp_hdr *th = (const struct rte_tcp_hdr *)(ip + 20);
    for (unsigned i = 0; i < t->n_backends; i++) {
        struct backend *b = &t->backends[i];
        struct xlb_tcp_conn_info info;
        if (b->c == NULL)
            continue;
        xlb_tcp_conn_info(b->c, &info);
        if (info.tuple.remote_port == th->src_port && memcmp(info.tuple.local, ip + 16, 4) == 0) {
            xlb_tcp_receive(t->backend_ep, b->c, m, now_ms(t));
            backend_pump(b);
            return;
        }
    }
    if ((t->black_hole || is_at(t->silent_at, ip + 16)) && (th->tcp_flags & RTE_TCP_SYN_FLAG)) {
        rte_pktmbuf_free(m);
        return;
    }
    if ((t->refuse || is_at(t->refuse_at, ip + 16)) && (th->tcp_flags & RTE_TCP_SYN_FLAG)) {
        /* A RST for the SYN: addresses and ports swapped, ACK of its sequence number + 1. */
        uint8_t d[40] = {0};
        struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)d;
        h->version_ihl = 0x45;
        h->total_length = rte_cpu_to_be_16(40);
        h->time_to_live = 64;
        h->next_proto_id = IPPROTO_TCP;
        memcpy(&h->src_addr, ip + 16, 4);
        memcpy(&h->dst_addr, ip + 12, 4);
        struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)(d + 20);
        tcp->src_port = th->dst_port;
        tcp->dst_port = th->src_port;
        tcp->recv_ack = rte_cpu_to_be_32(rte_be_to_cpu_32(th->sent_seq) + 1);
        tcp->data_off = 5 << 4;
        tcp->tcp_flags = RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG;
        h->hdr_checksum = rte_ipv4_cksum(h);
        tcp->cksum = rte_ipv4_udptcp_cksum(h, tcp);
        struct rte_mbuf *r = rte_pktmbuf_alloc(t->peer_pool);
        assert_non_null(r);
        rte_memcpy(rte_pktmbuf_append(r, sizeof(d)), d, sizeof(d));
        t->backend_tx[t->n_backend_tx++] = r;
        rte_pktmbuf_free(m);
        return;
    }
    if (th->tcp_flags & RTE_TCP_SYN_FLAG) {
        xlb_tcp_answer_syn(t->backend_ep, m, &t->backend_keys, now_ms(t));
        return;
    }
    assert_true(t->n_backends < RTE_DIM(t->backends));
    struct backend *b = &t->backends[t->n_backends];
    *b = (struct backend){.t = t};
    memcpy(b->addr, ip + 16, 4);
    char text[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, b->addr, text, sizeof(text));
    b->name = strcmp(text, BACKEND_A) == 0 ? 'A' : 'B';
    if (xlb_tcp_accept(t->backend_ep, m, &t->backend_keys, now_ms(t), &backend_cbs, b) != NULL) {
        t->n_backends++;
        backend_pump(b);
    }
}

/* ---- the wire ---- */

static void take_batch(struct xlb_burst_ctx *ctx, uint16_t port_index)
{
    struct xlb_tx_batch *b = &ctx->tx[port_index];
    stream_xlb_cycles.tx += b->n;
    for (uint16_t i = 0; i < b->n; i++) {
        assert_true(the_test->n_sent < RTE_DIM(the_test->sent));
        the_test->sent[the_test->n_sent++] = b->pkts[i];
    }
    b->n = 0;
}

/* What xlb sent, to the client or to the backends, by next hop. */
/* Whether an IPv4 TCP segment carries data. */
static bool carries_data(const uint8_t *ip, uint32_t len)
{
    uint32_t ip_len = (ip[0] & 0xfu) * 4u;
    return len > ip_len + 20 && len > ip_len + (uint32_t)(ip[ip_len + 12] >> 4) * 4u;
}

static void xlb_to_client(struct stream_test *t)
{
    take_batch(&t->n->f->ctx, 0);
    uint32_t n = t->n_sent;
    t->n_sent = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct rte_mbuf *frame = t->sent[i];
        const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(frame, const struct rte_ether_hdr *);
        assert_memory_equal(&eth->src_addr, &port_mac, sizeof(port_mac));
        bool to_backend = rte_is_same_ether_addr(&eth->dst_addr, &backend_mac);
        if (!to_backend)
            assert_memory_equal(&eth->dst_addr, &peer_mac, sizeof(peer_mac));
        uint32_t len = rte_pktmbuf_pkt_len(frame) - (uint32_t)sizeof(*eth);
        struct rte_mbuf *m = rte_pktmbuf_alloc(t->peer_pool);
        assert_non_null(m);
        uint8_t *d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
        const void *src = rte_pktmbuf_read(frame, sizeof(*eth), len, d);
        if (src != d)
            memcpy(d, src, len);
        rte_pktmbuf_free(frame);
        if (!to_backend && t->drop_to_client > 0 && carries_data(d, len)) {
            t->drop_to_client--;
            if (t->dropped_len == 0) {
                t->dropped_len = len < sizeof(t->dropped) ? len : (uint32_t)sizeof(t->dropped);
                memcpy(t->dropped, d, t->dropped_len);
            }
            rte_pktmbuf_free(m);
            continue;
        }
        if (to_backend)
            to_backends(t, m);
        else if (t->c != NULL)
            xlb_tcp_receive(t->ep, t->c, m, now_ms(t));
        else
            rte_pktmbuf_free(m);
    }
}

/* fixture_send, with the burst function's cycles counted. */
static void send_to_xlb(struct fixture *f, const void *frame, size_t len)
{
    struct rte_mbuf *m = rte_pktmbuf_alloc(f->pool);
    assert_non_null(m);
    memcpy(rte_pktmbuf_append(m, (uint16_t)len), frame, len);
    const uint8_t *ip = (const uint8_t *)frame + sizeof(struct rte_ether_hdr);
    uint8_t tcp_flags = ip[(ip[0] & 0xfu) * 4u + 13];
    uint64_t start = rte_rdtsc();
    xlb_burst_process(&f->ctx, f->snap, 0, &m, 1);
    uint64_t cycles = rte_rdtsc() - start;
    struct stream_xlb_cycles *c = &stream_xlb_cycles;
    c->burst += cycles;
    c->rx++;
    if (c->log != NULL && c->n_log < c->cap_log)
        c->log[c->n_log++] = (struct stream_xlb_packet){cycles, (uint32_t)len, tcp_flags};
}

static void peer_to_xlb(struct stream_test *t, struct rte_mbuf **tx, uint16_t *n_tx,
                        const struct rte_ether_addr *src)
{
    uint8_t frame[2048];
    for (uint16_t i = 0; i < *n_tx; i++) {
        struct rte_mbuf *m = tx[i];
        uint32_t len = rte_pktmbuf_pkt_len(m);
        assert_true(len + sizeof(struct rte_ether_hdr) <= sizeof(frame));
        struct rte_ether_hdr *eth = (struct rte_ether_hdr *)frame;
        eth->src_addr = *src;
        eth->dst_addr = port_mac;
        eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
        const void *ip = rte_pktmbuf_read(m, 0, len, frame + sizeof(*eth));
        if (ip != frame + sizeof(*eth))
            memcpy(frame + sizeof(*eth), ip, len);
        rte_pktmbuf_free(m);
        send_to_xlb(t->n->f, frame, sizeof(*eth) + len);
        xlb_to_client(t);
    }
    *n_tx = 0;
}

void step(struct stream_test *t)
{
    struct fixture *f = t->n->f;
    client_write(t);
    peer_to_xlb(t, t->tx, &t->n_tx, &peer_mac);
    for (unsigned i = 0; i < t->n_backends; i++)
        backend_pump(&t->backends[i]);
    peer_to_xlb(t, t->backend_tx, &t->n_backend_tx, &backend_mac);
    xlb_to_client(t);
    client_read(t);
    f->ctx.now_tsc += MS;
    xlb_tcp_poll(t->ep, now_ms(t), 256);
    xlb_tcp_poll(t->backend_ep, now_ms(t), 256);
    uint64_t start = rte_rdtsc();
    xlb_stream_poll(&f->ctx, f->snap);
    uint64_t polled = rte_rdtsc();
    xlb_flow_expire(&f->ctx, f->snap);
    stream_xlb_cycles.expire += rte_rdtsc() - polled;
    stream_xlb_cycles.poll += polled - start;
}

/* ---- set-up ---- */

struct stream_test *stream_test_create(void)
{
    return stream_test_create_at(BACKEND_A ":50051", 4);
}

struct stream_test *stream_test_create_at(const char *endpoint_a, uint32_t connections)
{
    static struct stream_test t;
    static unsigned serial;
    char name[32];
    snprintf(name, sizeof(name), "stream%u", serial);
    memset(&t, 0, sizeof(t));
    t.goaway_error = UINT32_MAX;
    const char *const endpoints[] = {endpoint_a, BACKEND_B ":50051"};
    static const uint32_t slots[] = {7, 8}, slots6[] = {9};
    static const char *const endpoints6[] = {"[" BACKEND6 "]:50051"};
    const struct nat_cluster clusters[] = {
        {"grpc", XLB_LB_ROUND_ROBIN, endpoints, 2, slots, CLUSTER4, 1, 0},
        {"grpc6", XLB_LB_ROUND_ROBIN, endpoints6, 1, slots6, CLUSTER6, 2, 0},
    };
    static const struct nat_backend backends[] = {
        {BACKEND_A, NAT_BACKEND_MAC},
        {BACKEND_B, NAT_BACKEND_MAC},
        {BACKEND6, NAT_BACKEND6_MAC},
        {BACKEND_DEAD, NAT_BACKEND_MAC},
    };
    const struct nat_config nat = {
        .name = name,
        .flows = 64,
        .port_count = PORT_COUNT,
        .start_tsc = START_TSC,
        .lb_seed = 42,
        .backends = backends,
        .n_backends = 4,
        .clusters = clusters,
        .n_clusters = 2,
    };
    t.n = nat_fixture_create(&nat);
    struct fixture *f = t.n->f;
    for (uint32_t v = 0; v < f->snap->n_vips; v++)
        f->snap->vips[v].l7 = f->snap->vips[v].stream = true;
    /* As the snapshot builder does: each endpoint slot's address and upstream TLS (none here),
     * without which no subchannel connects. */
    assert_int_equal(xlb_snapshot_index_endpoints(f->snap), 0);
    const struct xlb_stream_limits limits = {
        .connections = connections,
        .max_concurrent_streams = XLB_STREAM_DEFAULT_MAX_CONCURRENT_STREAMS,
        .window_bytes = XLB_STREAM_DEFAULT_WINDOW_BYTES,
    };
    assert_int_equal(xlb_lb_connectivity_init(&t.n->lb), 0);
    f->ctx.stream = xlb_stream_worker_create(0, &limits, f->pool, f->pool->size / 2, SOCKET_ID_ANY);
    assert_non_null(f->ctx.stream);
    xlb_tcp_endpoint_set_clock(xlb_stream_endpoint(f->ctx.stream), now_ms(&t));
    f->ctx.tx_flush = take_batch;
    the_test = &t;
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
    cfg.max_connections = 16;
    t.backend_ep = xlb_tcp_endpoint_create(&cfg, t.peer_pool, now_ms(&t));
    assert_non_null(t.backend_ep);
    xlb_tcp_tx_set(t.backend_ep, t.backend_tx, PEER_TX, &t.n_backend_tx);
    uint8_t seed[16] = {7};
    xlb_syn_cookie_keys_init(&t.backend_keys, seed);
    stream_client_connect(&t, 40000);
    return &t;
}

void stream_client_connect(struct stream_test *t, uint16_t port)
{
    assert_null(t->c);
    if (t->h2 != NULL)
        nghttp2_session_del(t->h2);
    t->h2 = NULL;
    t->closed = t->settings_acked = t->eof = false;
    t->n_rpcs = 0;
    t->goaway_error = UINT32_MAX;
    struct xlb_tcp_tuple tuple = {
        .family = AF_INET, .local_port = htons(port), .remote_port = htons(VIP_PORT)};
    inet_pton(AF_INET, FIX_PEER4, tuple.local);
    inet_pton(AF_INET, FIX_VIP4, tuple.remote);
    t->c = xlb_tcp_connect(t->ep, &tuple, 0x7ffff000u, now_ms(t), &cbs, t);
    assert_non_null(t->c);
    h2_client(t);
}

/* The client closes; everything is back: the flow (after its linger), xlb's connection, both
 * endpoints' control blocks, every mbuf. */
void stream_test_destroy(struct stream_test *t)
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
    for (unsigned i = 0; i < t->n_backends; i++)
        nghttp2_session_del(t->backends[i].h2);
    xlb_tcp_endpoint_free(t->backend_ep);
    assert_int_equal(rte_mempool_in_use_count(t->peer_pool), 0);
    rte_mempool_free(t->peer_pool);
    xlb_stream_worker_free(f->ctx.stream);
    f->ctx.stream = NULL;
    nat_fixture_destroy(t->n);
}
