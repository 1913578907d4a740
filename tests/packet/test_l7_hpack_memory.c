/*
 * Packet fixtures for the L7 connections' HPACK memory (dataplane/l7/h2wire/xlb_h2_quota.h,
 * docs/l7.md "Capacity and memory"): each connection's two decoders take memory from the
 * worker's HPACK heap as their dynamic tables grow, up to what a peer within the default
 * 4,096-byte table can need, and give it back when the connection ends. A connection that finds
 * the heap empty is refused (a RST, events.l7_hpack_pool_full); the others go on.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <rte_tcp.h>

#include "l7/l7_conn.h"
#include "l7_fixture.h"
#include "xlb_const.h"

/* Response fields that fill the backend's 4,096-byte table with its smallest entries (32 bytes
 * of overhead each, RFC 7541 4.1): what costs a decoder the most memory per table byte. */
#define TINY_FIELDS 100

struct spliced {
    struct l7_conn c;
    struct h2_peer client, backend;
};

static void establish(struct l7_fixture *x, struct spliced *s, uint16_t port)
{
    l7_conn_init(&s->c, false);
    s->c.port = port;
    h2_peer_init(&s->client);
    h2_peer_init(&s->backend);
    l7_establish(x, &s->c, &s->client, "/svc/M", NULL);
}

static void finish(struct spliced *s)
{
    h2_peer_fini(&s->client);
    h2_peer_fini(&s->backend);
}

static uint32_t heap_in_use(const struct l7_fixture *x)
{
    uint32_t in_use, high_water, capacity;
    xlb_l7_hpack_heap_use(x->l7, &in_use, &high_water, &capacity);
    return in_use;
}

/* The response to stream 1 with TINY_FIELDS more fields, each a new table entry ("x-000" .. ,
 * empty values), from the backend's deflater. */
static void big_response_block(struct spliced *s, struct h2_bytes *block)
{
    static char names[TINY_FIELDS][8];
    nghttp2_nv nva[TINY_FIELDS + 2] = {
        {XLB_UNCONST(":status"), XLB_UNCONST("200"), 7, 3, NGHTTP2_NV_FLAG_NONE},
        {XLB_UNCONST("content-type"), XLB_UNCONST("application/grpc"), 12, 16,
         NGHTTP2_NV_FLAG_NONE},
    };
    static char empty[] = "";
    for (unsigned i = 0; i < TINY_FIELDS; i++) {
        snprintf(names[i], sizeof(names[i]), "x-%03u", i);
        nva[i + 2] =
            (nghttp2_nv){(uint8_t *)names[i], (uint8_t *)empty, 5, 0, NGHTTP2_NV_FLAG_NONE};
    }
    ssize_t n = nghttp2_hd_deflate_hd(s->backend.deflater, block->b, sizeof(block->b), nva,
                                      TINY_FIELDS + 2);
    assert_true(n > 0);
    block->len = (uint32_t)n;
}

/* Stream 1 answered: the response block `block`, a message, trailers with grpc-status 0. */
static void answer_with(struct l7_fixture *x, struct spliced *s, const struct h2_bytes *block,
                        bool settings)
{
    struct h2_bytes b = {.len = 0}, trailers = {.len = 0};
    if (settings)
        h2_backend_settings(&b);
    h2_headers(&b, 1, false, block);
    h2_message(&b, 1, false, 8);
    h2_trailers_block(&s->backend, &trailers, "0");
    h2_headers(&b, 1, true, &trailers);
    l7_pass_to_client(x, &s->c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, b.b, b.len);
}

/* The client resets the connection: its entry and its decoders' memory go back. */
static void reset_by_client(struct l7_fixture *x, struct l7_conn *c)
{
    l7_pass_to_backend(x, c, RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG, NULL, 0);
}

/* Takes what the pool has not committed, as other connections' growing tables would. */
static unsigned take_the_rest(struct l7_fixture *x, struct xlb_h2_quota *others, void **taken,
                              unsigned max)
{
    assert_true(xlb_h2_quota_init(others, &x->l7->hpack_pool, 0, UINT32_MAX));
    unsigned n = 0;
    for (uint32_t size = 4096; size >= 16; size /= 2)
        while (n < max && (taken[n] = xlb_h2_quota_alloc(others, size)) != NULL)
            n++;
    assert_true(n < max);
    assert_true(others->pool_empty);
    return n;
}

/*
 * A backend whose response fills its table with the smallest entries makes the backend-side
 * decoder grow far past its share of the heap (and past the 24 KiB each decoder had in the
 * connection entry before, where this response was not followed and the RPC was counted as
 * failed): the response passes untouched, the RPC counts as a success, nothing is an inspection
 * error, and when the connection ends the heap is back to empty.
 */
static void big_table_grows_the_decoder_and_the_rpc_succeeds(void **state)
{
    struct l7_fixture *x = *state;
    assert_int_equal(heap_in_use(x), 0);
    struct spliced s;
    establish(x, &s, L7_CLIENT_PORT);
    uint32_t bound = heap_in_use(x);
    assert_true(bound > 0 && bound < XLB_L7_HPACK_SHARE);

    struct h2_bytes block = {.len = 0};
    big_response_block(&s, &block);
    answer_with(x, &s, &block, true);
    assert_true(heap_in_use(x) > 24576u);
    struct xlb_worker_load *load = x->n->load;
    assert_int_equal(load->endpoints[L7_SLOT4].succeeded, 1);
    assert_int_equal(load->endpoints[L7_SLOT4].failed, 0);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_INSPECT_ERRORS), 0);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_HPACK_POOL_FULL), 0);

    reset_by_client(x, &s.c);
    assert_int_equal(heap_in_use(x), 0);
    finish(&s);
}

/*
 * With the pool taken (as by other connections' growing tables), a new client's ACK is refused
 * with a RST and counted as events.l7_hpack_pool_full, and no flow is left; a connection
 * already bound goes on within the memory committed to it: its next RPC passes, is inspected
 * and counts as a success. Once memory is back, a new connection is served again.
 */
static void empty_heap_refuses_the_new_connection_only(void **state)
{
    struct l7_fixture *x = *state;
    struct spliced a;
    establish(x, &a, L7_CLIENT_PORT);
    struct h2_bytes block = {.len = 0};
    h2_response_block(&a.backend, &block);
    answer_with(x, &a, &block, true);

    /* Everything the pool has left, taken as other connections' growing tables would. */
    struct xlb_h2_quota others;
    static void *taken[4096];
    unsigned n_taken = take_the_rest(x, &others, taken, 4096);
    uint32_t flows = x->n->flows->n_used;

    struct l7_conn b;
    l7_conn_init(&b, false);
    b.port = L7_CLIENT_PORT + 1;
    l7_syn(x, &b); /* a SYN cookie needs no memory */
    struct l7_seg ack = l7_from_client(&b, RTE_TCP_ACK_FLAG, b.c_seq, b.x_seq, NULL, 0);
    assert_int_equal(l7_send(x, &ack), 1);
    struct l7_out o;
    l7_read(x, 0, &o);
    assert_int_equal(o.flags, RTE_TCP_RST_FLAG);
    assert_int_equal(o.seq, b.x_seq);
    assert_int_equal(o.dport, b.port);
    l7_clear(x);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_HPACK_POOL_FULL), 1);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_CONNECTIONS), 1);
    assert_int_equal(x->n->flows->n_used, flows);
    assert_int_equal(fixture_total_drops(x->n->f), 0);

    /* The bound connection's next RPC on stream 3: request and answer as indexed fields. */
    struct h2_bytes r = {.len = 0}, req = {.len = 0};
    h2_request_block(&a.client, &req, "/svc/M", NULL);
    h2_headers(&r, 3, false, &req);
    h2_message(&r, 3, true, 8);
    l7_pass_to_backend(x, &a.c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, r.b, r.len);
    struct h2_bytes b3 = {.len = 0}, resp = {.len = 0}, trailers = {.len = 0};
    h2_response_block(&a.backend, &resp);
    h2_headers(&b3, 3, false, &resp);
    h2_message(&b3, 3, false, 8);
    h2_trailers_block(&a.backend, &trailers, "0");
    h2_headers(&b3, 3, true, &trailers);
    l7_pass_to_client(x, &a.c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, b3.b, b3.len);
    struct xlb_worker_load *load = x->n->load;
    assert_int_equal(load->endpoints[L7_SLOT4].succeeded, 2);
    assert_int_equal(load->endpoints[L7_SLOT4].failed, 0);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_INSPECT_ERRORS), 0);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_HPACK_POOL_FULL), 1);

    /* Memory back: the next client is served. */
    for (unsigned i = 0; i < n_taken; i++)
        xlb_h2_quota_free(&others, taken[i]);
    xlb_h2_quota_fini(&others);
    struct spliced c;
    establish(x, &c, L7_CLIENT_PORT + 2);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_CONNECTIONS), 2);
    finish(&c);
    finish(&a);
}

/*
 * A client whose first request needs more than the memory committed to its decoder (48 fields
 * of 40 bytes, 3.5 KiB of table) while the rest of the pool is taken: that connection alone
 * ends with a RST, counted as events.l7_hpack_pool_full and not as a protocol error, its flow
 * and its memory gone; a bound connection is untouched.
 */
static void request_outgrowing_its_floor_ends_that_connection(void **state)
{
    struct l7_fixture *x = *state;
    struct spliced a;
    establish(x, &a, L7_CLIENT_PORT);
    struct l7_conn c;
    l7_conn_init(&c, false);
    c.port = L7_CLIENT_PORT + 1;
    l7_syn(x, &c);
    struct h2_bytes hello = {.len = 0};
    h2_client_hello(&hello);
    l7_hello(x, &c, hello.b, hello.len);
    uint32_t in_use = heap_in_use(x);

    struct xlb_h2_quota others;
    static void *taken[4096];
    unsigned n_taken = take_the_rest(x, &others, taken, 4096);

    enum { FIELDS = 48 };
    static char names[FIELDS][8], value[] = "0123456789012345678901234567890";
    nghttp2_nv nva[FIELDS + 4] = {
        {XLB_UNCONST(":method"), XLB_UNCONST("POST"), 7, 4, NGHTTP2_NV_FLAG_NONE},
        {XLB_UNCONST(":scheme"), XLB_UNCONST("http"), 7, 4, NGHTTP2_NV_FLAG_NONE},
        {XLB_UNCONST(":path"), XLB_UNCONST("/svc/M"), 5, 6, NGHTTP2_NV_FLAG_NONE},
        {XLB_UNCONST(":authority"), XLB_UNCONST("l7.test"), 10, 7, NGHTTP2_NV_FLAG_NONE},
    };
    for (unsigned i = 0; i < FIELDS; i++) {
        snprintf(names[i], sizeof(names[i]), "x-%03u", i);
        nva[i + 4] = (nghttp2_nv){(uint8_t *)names[i], (uint8_t *)value, 5, sizeof(value) - 1,
                                  NGHTTP2_NV_FLAG_NONE};
    }
    struct h2_peer client;
    h2_peer_init(&client);
    struct h2_bytes block = {.len = 0}, req = {.len = 0};
    ssize_t len = nghttp2_hd_deflate_hd(client.deflater, block.b, sizeof(block.b), nva, FIELDS + 4);
    assert_true(len > 0);
    block.len = (uint32_t)len;
    h2_settings_ack(&req);
    h2_headers(&req, 1, true, &block);
    struct l7_seg seg =
        l7_from_client(&c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, c.c_seq, c.x_seq, req.b, req.len);
    assert_int_equal(l7_send(x, &seg), 1);
    struct l7_out o;
    l7_read(x, 0, &o);
    assert_int_equal(o.flags, RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG);
    assert_int_equal(o.dport, c.port);
    l7_clear(x);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_HPACK_POOL_FULL), 1);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_PROTOCOL_ERRORS), 0);
    assert_null(l7_flow(x, &c));
    for (unsigned i = 0; i < n_taken; i++)
        xlb_h2_quota_free(&others, taken[i]);
    xlb_h2_quota_fini(&others);
    assert_true(heap_in_use(x) < in_use); /* the failed connection's decoder gave its memory back */

    /* The bound connection answers its first RPC, inspected, a success. */
    struct h2_bytes resp = {.len = 0};
    h2_response_block(&a.backend, &resp);
    answer_with(x, &a, &resp, true);
    assert_int_equal(x->n->load->endpoints[L7_SLOT4].succeeded, 1);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_INSPECT_ERRORS), 0);
    h2_peer_fini(&client);
    finish(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(big_table_grows_the_decoder_and_the_rpc_succeeds, l7_setup,
                                        l7_teardown),
        cmocka_unit_test_setup_teardown(empty_heap_refuses_the_new_connection_only, l7_setup,
                                        l7_teardown),
        cmocka_unit_test_setup_teardown(request_outgrowing_its_floor_ends_that_connection, l7_setup,
                                        l7_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
