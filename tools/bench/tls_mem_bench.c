/* SPDX-License-Identifier: BSD-3-Clause */
/* In-process figures of OpenSSL on a worker's memory (docs/tls.md, "Worker memory"): full
 * TLS 1.3 handshakes (X25519, ECDSA P-256, ALPN h2, a few bytes echoed) between an OpenSSL
 * client and the glue (dataplane/tls/), in memory, one thread. The glue's side allocates from
 * malloc (as before: no heap entered) or from a TLS heap (as a worker now), in turns, so both
 * see the same machine state. Also: the heap a handshake and an open connection take, and the
 * memory one more per-worker context of a server costs. Then two threads, each a worker with
 * its heap and its client, handshake at once on one server whose contexts they share (as
 * before: one row) or have one each (now: a row per worker). Figures only, no pass/fail.
 *
 *   tls_mem_bench [SECONDS_PER_ROUND [ROUNDS]]     (default 1 s, 6 rounds: 3 each way)
 */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "tls_test_certs.h"
#include "xlb_tls_conn.h"
#include "xlb_tls_mem.h"

static struct tls_test_certs certs;
static struct xlb_tls_ticket_keys keys;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct xlb_tls_server *make_server(void)
{
    struct xlb_tls_server_config cfg = {
        .certs = {{certs.server_cert, certs.server_key}, {certs.other_cert, certs.other_key}},
        .n_certs = 2,
        .alpn = {"h2"},
        .n_alpn = 1,
        .ticket_keys = keys,
    };
    char err[256] = "";
    struct xlb_tls_server *srv = xlb_tls_server_create(&cfg, err, sizeof(err));
    if (srv == NULL) {
        fprintf(stderr, "server: %s\n", err);
        exit(1);
    }
    return srv;
}

/* One handshake and an echo; the glue's calls inside `heap` (NULL: malloc). With `open_in_use`
 * set: the heap bytes the open connection holds. 0, or -1 when it failed. */
static int one(struct xlb_tls_server *srv, struct xlb_tls_heap *heap, SSL_CTX *client_ctx,
               uint32_t *open_in_use)
{
    static const unsigned char h2[] = "\x02h2";
    static __thread uint8_t buf[1 << 16]; /* each thread its own */
    struct xlb_tls_conn t;
    struct xlb_tls_counters counters = {0};
    SSL *c = SSL_new(client_ctx);
    BIO *in = BIO_new(BIO_s_mem()), *out = BIO_new(BIO_s_mem());
    int rc = -1;

    BIO_set_mem_eof_return(in, -1);
    SSL_set_bio(c, in, out);
    SSL_set_connect_state(c);
    SSL_set_alpn_protos(c, h2, 3);
    xlb_tls_heap_enter(heap);
    int opened = xlb_tls_conn_open(&t, srv, &counters);
    xlb_tls_heap_enter(NULL);
    for (int round = 0; opened == 0 && round < 16; round++) {
        struct xlb_tls_budget budget = {.handshake_steps = 1};
        if (!SSL_is_init_finished(c))
            SSL_do_handshake(c);
        else if (round < 8)
            SSL_write(c, "ping", 4);
        int n = BIO_read(out, buf, sizeof(buf));
        uint32_t took = 0, got;
        xlb_tls_heap_enter(heap);
        if (n > 0)
            xlb_tls_conn_feed(&t, buf, (uint32_t)n);
        xlb_tls_conn_advance(&t, &budget);
        got = xlb_tls_conn_read(&t, buf, sizeof(buf));
        if (got > 0)
            xlb_tls_conn_write(&t, buf, got);
        while ((got = xlb_tls_conn_take(&t, buf + took, sizeof(buf) - took)) > 0)
            took += got;
        xlb_tls_heap_enter(NULL);
        if (took > 0)
            BIO_write(in, buf, (int)took);
        if (t.state == XLB_TLS_OPEN && SSL_is_init_finished(c) && SSL_read(c, buf, 64) == 4) {
            rc = 0;
            break;
        }
    }
    if (rc == 0 && open_in_use != NULL && heap != NULL)
        *open_in_use = xlb_tls_heap_in_use(heap);
    xlb_tls_heap_enter(heap);
    if (opened == 0)
        xlb_tls_conn_free(&t);
    xlb_tls_heap_enter(NULL);
    SSL_free(c);
    ERR_clear_error();
    return rc;
}

static SSL_CTX *new_client_ctx(void)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
    static char groups[] = "X25519"; /* not const: OpenSSL's macro takes it as char * */
    SSL_CTX_set1_groups_list(ctx, groups);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    return ctx;
}

static double rate(struct xlb_tls_server *srv, struct xlb_tls_heap *heap, SSL_CTX *client_ctx,
                   double seconds)
{
    double start = now_s(), t;
    unsigned n = 0;
    do {
        if (one(srv, heap, client_ctx, NULL) != 0) {
            fprintf(stderr, "a handshake failed after %u (heap: %u bytes in use, %lu refused)\n", n,
                    heap ? xlb_tls_heap_in_use(heap) : 0, heap ? (unsigned long)heap->failed : 0ul);
            exit(1);
        }
        n++;
    } while ((t = now_s()) - start < seconds);
    return n / (t - start);
}

/* One of the two threads: a worker with its heap and its own client. */
struct runner {
    pthread_t thread;
    struct xlb_tls_server *srv;
    struct xlb_tls_heap heap;
    SSL_CTX *client_ctx;
    double seconds, rate;
};

static void *run(void *arg)
{
    struct runner *r = arg;
    r->rate = rate(r->srv, &r->heap, r->client_ctx, r->seconds);
    return NULL;
}

/* Both threads at once on srv: the sum of their rates. */
static double together(struct runner *rs, struct xlb_tls_server *srv, double seconds)
{
    for (int i = 0; i < 2; i++) {
        rs[i].srv = srv;
        rs[i].seconds = seconds;
        pthread_create(&rs[i].thread, NULL, run, &rs[i]);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(rs[i].thread, NULL);
    return rs[0].rate + rs[1].rate;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    int rounds = argc > 2 ? atoi(argv[2]) : 6;
    static uint8_t block[4u << 20];
    struct xlb_tls_heap heap;

    if (xlb_tls_mem_install() != 0 || tls_test_certs_make(&certs) != 0 ||
        xlb_tls_ticket_keys_rotate(&keys) != 0)
        return 1;
    SSL_CTX *client_ctx = new_client_ctx();

    /* What one more worker's contexts cost: the C library's bytes for servers of 1 and 2 rows. */
    size_t before = mallinfo2().uordblks;
    struct xlb_tls_server *one_row = make_server();
    size_t after_one = mallinfo2().uordblks;
    xlb_tls_set_workers(2);
    struct xlb_tls_server *two_rows = make_server();
    size_t after_two = mallinfo2().uordblks;
    printf("server of 2 certificates (ECDSA P-256): %zu bytes with 1 worker context, %zu with 2: "
           "%zu bytes a worker (%zu a certificate's context)\n",
           after_one - before, after_two - after_one, after_two - after_one - (after_one - before),
           (after_two - after_one - (after_one - before)) / 2);

    if (!xlb_tls_heap_init(&heap, block, sizeof(block), 1))
        return 1;
    one(two_rows, &heap, client_ctx, NULL); /* OpenSSL's lazy state and caches */
    uint32_t settled = xlb_tls_heap_in_use(&heap), open_in_use = 0;
    uint32_t water_before = xlb_tls_heap_high_water(&heap);
    one(two_rows, &heap, client_ctx, &open_in_use);
    printf("heap: %u bytes kept by OpenSSL after the first handshake; a handshake peaks at %u "
           "bytes more (high water %u); an open connection (idle, buffers released) holds %u\n",
           settled, xlb_tls_heap_high_water(&heap) - settled, water_before, open_in_use - settled);

    double sum[2] = {0, 0};
    for (int r = 0; r < rounds; r++) {
        struct xlb_tls_heap *h = r % 2 ? &heap : NULL;
        double v = rate(two_rows, h, client_ctx, seconds);
        sum[r % 2] += v;
        printf("round %d: %s %.0f handshakes/s\n", r, h ? "heap  " : "malloc", v);
    }
    int per = rounds / 2 > 0 ? rounds / 2 : 1;
    printf("mean: malloc %.0f handshakes/s, heap %.0f handshakes/s (%+.1f%%); heap failures %lu\n",
           sum[0] / per, sum[1] / per, 100.0 * (sum[1] - sum[0]) / sum[0],
           (unsigned long)heap.failed);

    static uint8_t blocks[2][4u << 20];
    struct runner rs[2];
    memset(rs, 0, sizeof(rs));
    for (unsigned i = 0; i < 2; i++) {
        if (!xlb_tls_heap_init(&rs[i].heap, blocks[i], sizeof(blocks[i]), i))
            return 1;
        rs[i].client_ctx = new_client_ctx();
    }
    double both[2] = {0, 0};
    for (int r = 0; r < rounds; r++) {
        double v = together(rs, r % 2 ? two_rows : one_row, seconds);
        both[r % 2] += v;
        printf("round %d, 2 threads: %s %.0f handshakes/s\n", r,
               r % 2 ? "a context each " : "shared contexts", v);
    }
    printf("mean, 2 threads: shared contexts %.0f handshakes/s, a context each %.0f (%+.1f%%)\n",
           both[0] / per, both[1] / per, 100.0 * (both[1] - both[0]) / both[0]);
    printf("2 threads: heaps refused %lu and %lu requests, took back %lu and %lu blocks the other "
           "thread freed\n",
           (unsigned long)rs[0].heap.failed, (unsigned long)rs[1].heap.failed,
           (unsigned long)rs[0].heap.taken_back, (unsigned long)rs[1].heap.taken_back);
    for (unsigned i = 0; i < 2; i++) {
        SSL_CTX_free(rs[i].client_ctx);
        xlb_tls_heap_retire(&rs[i].heap, NULL, NULL);
    }
    xlb_tls_server_unref(one_row);
    xlb_tls_server_unref(two_rows);
    SSL_CTX_free(client_ctx);
    tls_test_certs_remove(&certs);
    xlb_tls_heap_retire(&heap, NULL, NULL);
    xlb_tls_mem_shutdown();
    return 0;
}
