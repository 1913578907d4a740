/* SPDX-License-Identifier: BSD-3-Clause */
/* OpenSSL on a worker's own memory and contexts (docs/tls.md, "Worker memory", "Per-worker
 * contexts"): the server side of a handshake runs as a worker would (its TLS heap entered),
 * the client side as any other thread (malloc). A worker's handshake calls malloc nowhere, a
 * full heap fails the connection and leaves nothing behind, a ticket resumes on any worker,
 * and each worker's SSLs hang on contexts of its own. */
#include <malloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "tls_test_certs.h"
#include "xlb_tls_conn.h"
#include "xlb_tls_mem.h"

#define WORKERS 2

static struct tls_test_certs certs;
static struct xlb_tls_ticket_keys keys;
static struct xlb_tls_server *server;
static struct xlb_tls_heap heaps[WORKERS];
static void *blocks[WORKERS];

/* What a worker's call did beyond its heap: OpenSSL's calls to malloc, and the C library's
 * bytes in use (a call around OpenSSL's functions). */
struct outside {
    uint64_t system_calls;
    size_t libc_bytes;
};

static struct outside outside_now(void)
{
    return (struct outside){xlb_tls_mem_system_calls(), mallinfo2().uordblks};
}

struct pair {
    SSL_CTX *client_ctx;
    SSL *client;
    BIO *in, *out;
    struct xlb_tls_conn conn;
    struct xlb_tls_counters counters;
    struct xlb_tls_heap *heap; /* the server side's worker */
    int opened;                /* xlb_tls_conn_open's result */
};

static void worker_enter(struct pair *p, struct outside *mark)
{
    xlb_tls_heap_enter(p->heap);
    *mark = outside_now();
}

static void worker_leave(struct pair *p, const struct outside *mark)
{
    struct outside after = outside_now();

    xlb_tls_heap_enter(NULL);
    /* A worker's call: nothing from malloc, neither through OpenSSL nor around it. */
    if (p->heap != NULL) {
        assert_int_equal(after.system_calls, mark->system_calls);
        assert_int_equal(after.libc_bytes, mark->libc_bytes);
    }
}

static void pair_open(struct pair *p, struct xlb_tls_heap *heap, SSL_SESSION *session)
{
    static const unsigned char h2[] = "\x02h2";
    struct outside mark;

    memset(p, 0, sizeof(*p));
    p->heap = heap;
    worker_enter(p, &mark);
    p->opened = xlb_tls_conn_open(&p->conn, server, &p->counters);
    worker_leave(p, &mark);
    p->client_ctx = SSL_CTX_new(TLS_client_method());
    assert_int_equal(SSL_CTX_load_verify_locations(p->client_ctx, certs.ca, NULL), 1);
    SSL_CTX_set_verify(p->client_ctx, SSL_VERIFY_PEER, NULL);
    p->client = SSL_new(p->client_ctx);
    p->in = BIO_new(BIO_s_mem());
    p->out = BIO_new(BIO_s_mem());
    BIO_set_mem_eof_return(p->in, -1);
    SSL_set_bio(p->client, p->in, p->out);
    SSL_set_connect_state(p->client);
    static char sni[] = "other.test"; /* not const: OpenSSL's macro takes it as char * */
    SSL_set_tlsext_host_name(p->client, sni);
    assert_int_equal(SSL_set_alpn_protos(p->client, h2, 3), 0);
    if (session != NULL)
        SSL_set_session(p->client, session);
}

/* Ciphertext both ways until nothing moves; the server side as its worker. */
static void pump(struct pair *p)
{
    static uint8_t buf[1 << 16];

    for (int round = 0; round < 1000; round++) {
        struct xlb_tls_budget budget = {.handshake_steps = 1};
        struct outside mark;
        uint32_t fed = 0, took = 0, got;

        if (!SSL_is_init_finished(p->client))
            SSL_do_handshake(p->client);
        int n = BIO_read(p->out, buf, sizeof(buf));
        worker_enter(p, &mark);
        if (n > 0)
            fed = xlb_tls_conn_feed(&p->conn, buf, (uint32_t)n);
        xlb_tls_conn_advance(&p->conn, &budget);
        while ((got = xlb_tls_conn_take(&p->conn, buf + took, sizeof(buf) - took)) > 0)
            took += got;
        worker_leave(p, &mark);
        if (took > 0)
            BIO_write(p->in, buf, (int)took);
        if (fed == 0 && took == 0)
            return;
    }
    fail_msg("pump did not settle");
}

/* The client's bytes read by the worker and echoed back. */
static void echo(struct pair *p)
{
    uint8_t got[64];
    size_t n = 0;
    uint32_t r, w;
    struct outside mark;

    assert_int_equal(SSL_write_ex(p->client, "PRI * HTTP/2.0", 14, &n), 1);
    pump(p);
    worker_enter(p, &mark);
    r = xlb_tls_conn_read(&p->conn, got, sizeof(got));
    w = xlb_tls_conn_write(&p->conn, got, r);
    worker_leave(p, &mark);
    assert_int_equal(r, 14);
    assert_int_equal(w, 14);
    pump(p);
    assert_int_equal(SSL_read_ex(p->client, got, sizeof(got), &n), 1);
    assert_memory_equal(got, "PRI * HTTP/2.0", 14);
}

static void pair_close(struct pair *p)
{
    struct outside mark;

    if (SSL_is_init_finished(p->client))
        SSL_shutdown(p->client);
    worker_enter(p, &mark);
    if (p->opened == 0)
        xlb_tls_conn_free(&p->conn);
    worker_leave(p, &mark);
    SSL_free(p->client);
    SSL_CTX_free(p->client_ctx);
    ERR_clear_error();
}

/* A full handshake, with data both ways; the client's session for a resumption. */
static SSL_SESSION *handshake(struct xlb_tls_heap *heap, SSL_SESSION *resume, bool *reused)
{
    struct pair p;

    pair_open(&p, heap, resume);
    assert_int_equal(p.opened, 0);
    pump(&p);
    assert_int_equal(p.conn.state, XLB_TLS_OPEN);
    echo(&p);
    SSL_SESSION *session = SSL_get1_session(p.client);
    *reused = SSL_session_reused(p.client);
    pair_close(&p);
    return session;
}

static void worker_handshake_never_calls_malloc(void **state)
{
    bool reused;

    (void)state;
    /* The first handshake fills OpenSSL's lazy caches (some from this heap, for good). */
    SSL_SESSION_free(handshake(&heaps[1], NULL, &reused));
    uint32_t settled = xlb_tls_heap_in_use(&heaps[1]);
    SSL_SESSION_free(handshake(&heaps[1], NULL, &reused));
    assert_false(reused);
    /* It all came from the heap, and went back to it. */
    assert_true(xlb_tls_heap_high_water(&heaps[1]) > settled);
    assert_int_equal(xlb_tls_heap_in_use(&heaps[1]), settled);
    assert_int_equal(heaps[1].failed, 0);
}

static void each_worker_has_its_contexts(void **state)
{
    struct pair a, b;

    (void)state;
    pair_open(&a, &heaps[0], NULL);
    pair_open(&b, &heaps[1], NULL);
    assert_ptr_equal(SSL_get_SSL_CTX(a.conn.ssl), server->rows[0].certs[0]);
    assert_ptr_equal(SSL_get_SSL_CTX(b.conn.ssl), server->rows[1].certs[0]);
    assert_ptr_not_equal(SSL_CTX_get0_certificate(server->rows[0].certs[0]),
                         SSL_CTX_get0_certificate(server->rows[1].certs[0]));
    /* SNI switches to the worker's own context of the second certificate. */
    pump(&a);
    pump(&b);
    assert_ptr_equal(SSL_get_SSL_CTX(a.conn.ssl), server->rows[0].certs[1]);
    assert_ptr_equal(SSL_get_SSL_CTX(b.conn.ssl), server->rows[1].certs[1]);
    assert_int_equal(b.conn.state, XLB_TLS_OPEN);
    pair_close(&a);
    pair_close(&b);
}

static void ticket_resumes_on_another_worker(void **state)
{
    bool reused;

    (void)state;
    SSL_SESSION *s = handshake(&heaps[1], NULL, &reused);
    SSL_SESSION *again = handshake(&heaps[0], s, &reused);
    assert_true(reused);
    SSL_SESSION_free(again);
    SSL_SESSION_free(s);
}

/* Heaps too small for a handshake fail it (or refuse the connection) and keep nothing; one
 * large enough serves it. */
static void full_heap_fails_cleanly(void **state)
{
    static uint8_t block[256 * 1024];
    bool failed_once = false, served = false;

    (void)state;
    for (uint32_t size = 2048; size <= sizeof(block) && !served; size *= 2) {
        struct xlb_tls_heap heap;
        struct pair p;

        assert_true(xlb_tls_heap_init(&heap, block, size, 1));
        pair_open(&p, &heap, NULL);
        if (p.opened == 0)
            pump(&p);
        if (p.opened != 0 || p.conn.state == XLB_TLS_FAILED) {
            failed_once = true;
            assert_true(heap.failed > 0);
            assert_true(p.opened != 0 || p.counters.failures[XLB_TLS_FAIL_HANDSHAKE] == 1);
        } else {
            assert_int_equal(p.conn.state, XLB_TLS_OPEN);
            echo(&p);
            served = true;
        }
        pair_close(&p);
        xlb_tls_heap_enter(&heap);
        (void)OPENSSL_malloc(1); /* takes back what other threads gave back */
        xlb_tls_heap_enter(NULL);
        /* The one byte just taken, nothing else. */
        assert_int_equal(xlb_tls_heap_in_use(&heap), 32);
        xlb_tls_heap_retire(&heap, NULL, NULL);
    }
    assert_true(failed_once);
    assert_true(served);
}

static void *free_elsewhere(void *ptr)
{
    OPENSSL_free(ptr);
    return NULL;
}

/* A block freed by another thread goes back to its heap through the owner. */
static void free_from_another_thread(void **state)
{
    pthread_t t;

    (void)state;
    xlb_tls_heap_enter(&heaps[0]);
    uint32_t before = xlb_tls_heap_in_use(&heaps[0]);
    void *p = OPENSSL_malloc(1000);
    xlb_tls_heap_enter(NULL);
    assert_non_null(p);
    assert_int_equal(pthread_create(&t, NULL, free_elsewhere, p), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_true(xlb_tls_heap_in_use(&heaps[0]) > before); /* not the other thread's to touch */
    xlb_tls_heap_enter(&heaps[0]);
    OPENSSL_free(OPENSSL_malloc(16));
    xlb_tls_heap_enter(NULL);
    assert_int_equal(xlb_tls_heap_in_use(&heaps[0]), before);
    assert_true(heaps[0].taken_back >= 1);
}

static void upstream_context_per_worker(void **state)
{
    struct xlb_tls_client_config cfg = {.ca_certificate_file = certs.ca};
    char err[256] = "";

    (void)state;
    SSL_CTX *ctx = xlb_tls_client_create(&cfg, err, sizeof(err));
    assert_non_null(ctx);
    SSL *mine = xlb_tls_client_new_ssl(ctx, 0), *other = xlb_tls_client_new_ssl(ctx, 1);
    assert_ptr_equal(SSL_get_SSL_CTX(mine), ctx);
    assert_ptr_not_equal(SSL_get_SSL_CTX(other), ctx);
    /* The compiled cluster let go first: the subchannel's SSL keeps its context. */
    SSL_CTX_free(ctx);
    SSL_free(mine);
    SSL_free(other);
}

static int setup(void **state)
{
    char err[256] = "";

    (void)state;
    if (tls_test_certs_make(&certs) != 0 || xlb_tls_ticket_keys_rotate(&keys) != 0)
        return -1;
    xlb_tls_set_workers(WORKERS);
    struct xlb_tls_server_config cfg = {
        .certs = {{certs.server_cert, certs.server_key}, {certs.other_cert, certs.other_key}},
        .n_certs = 2,
        .alpn = {"h2"},
        .n_alpn = 1,
        .ticket_keys = keys,
    };
    server = xlb_tls_server_create(&cfg, err, sizeof(err));
    if (server == NULL) {
        fprintf(stderr, "server: %s\n", err);
        return -1;
    }
    for (unsigned w = 0; w < WORKERS; w++) {
        blocks[w] = malloc(4u << 20);
        if (blocks[w] == NULL || !xlb_tls_heap_init(&heaps[w], blocks[w], 4u << 20, w))
            return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    xlb_tls_server_unref(server);
    for (unsigned w = 0; w < WORKERS; w++)
        xlb_tls_heap_retire(&heaps[w], free, blocks[w]);
    tls_test_certs_remove(&certs);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(worker_handshake_never_calls_malloc),
        cmocka_unit_test(each_worker_has_its_contexts),
        cmocka_unit_test(ticket_resumes_on_another_worker),
        cmocka_unit_test(full_heap_fails_cleanly),
        cmocka_unit_test(free_from_another_thread),
        cmocka_unit_test(upstream_context_per_worker),
    };

    /* As xlbd: before any other OpenSSL call. */
    if (xlb_tls_mem_install() != 0) {
        fprintf(stderr, "OpenSSL refused xlb's memory functions\n");
        return 1;
    }
    int failed = cmocka_run_group_tests(tests, setup, teardown);
    /* As xlbd at exit: OpenSSL cleans up before the heaps go (it reads its state there). */
    xlb_tls_mem_shutdown();
    return failed;
}
