/* xlbd's capacity figures (apps/xlbd/capacity.c): the EAL memory, the default L7 pool size
 * and the lines --check prints. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "capacity.h"
#include "xlb_const.h"

#define MIB (UINT64_C(1) << 20)

static void eal_memory_from_the_arguments(void **state)
{
    (void)state;
    char *const none[] = {XLB_STR("--no-huge"), XLB_STR("--no-pci")};
    assert_int_equal(xlbd_eal_memory_bytes(none, 2), 0);
    char *m[] = {XLB_STR("--no-huge"), XLB_STR("-m"), XLB_STR("256"), XLB_STR("--vdev=net_null0")};
    assert_int_equal(xlbd_eal_memory_bytes(m, 4), 256 * MIB);
    char *joined[] = {XLB_STR("-m1024")};
    assert_int_equal(xlbd_eal_memory_bytes(joined, 1), 1024 * MIB);
    char *sockets[] = {XLB_STR("--socket-mem=512,256")};
    assert_int_equal(xlbd_eal_memory_bytes(sockets, 1), 768 * MIB);
    char *sockets2[] = {XLB_STR("--socket-mem"), XLB_STR("64")};
    assert_int_equal(xlbd_eal_memory_bytes(sockets2, 2), 64 * MIB);
    char *last[] = {XLB_STR("-m"), XLB_STR("128"), XLB_STR("-m"), XLB_STR("512")};
    assert_int_equal(xlbd_eal_memory_bytes(last, 4), 512 * MIB);
    char *bad[] = {XLB_STR("-m"), XLB_STR("lots")};
    assert_int_equal(xlbd_eal_memory_bytes(bad, 2), 0);
    char *dangling[] = {XLB_STR("-m")};
    assert_int_equal(xlbd_eal_memory_bytes(dangling, 1), 0);
}

static void l7_pool_follows_the_memory(void **state)
{
    (void)state;
    const size_t conn = 74784;
    /* Unknown memory, or too little for the floor: today's 1,024. */
    assert_int_equal(xlbd_l7_pool_default(0, 2, conn), XLBD_L7_POOL_FLOOR);
    assert_int_equal(xlbd_l7_pool_default(256 * MIB, 1, conn), XLBD_L7_POOL_FLOOR);
    /* A quarter of the memory, shared among the workers. */
    assert_int_equal(xlbd_l7_pool_default(2048 * MIB, 2, conn), 2048 * MIB / 4 / 2 / conn);
    assert_int_equal(xlbd_l7_pool_default(8192 * MIB, 1, conn), 8192 * MIB / 4 / conn);
    assert_true(xlbd_l7_pool_default(8192 * MIB, 1, conn) >
                xlbd_l7_pool_default(8192 * MIB, 4, conn));
    /* Never beyond the key's limit. */
    assert_int_equal(xlbd_l7_pool_default(UINT64_C(1) << 50, 1, conn), XLBD_L7_POOL_CEILING);
    assert_int_equal(xlbd_l7_pool_default(1 << 30, 0, conn), XLBD_L7_POOL_FLOOR);
}

/* What xlbd --check prints for one configuration, then for it changed by change(). */
static char *printed_twice(struct xlbd_capacity *c, void (*change)(struct xlbd_capacity *))
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    xlbd_capacity_print(out, c);
    change(c);
    xlbd_capacity_print(out, c);
    fclose(out);
    return text;
}

static void forget_memory_and_l7(struct xlbd_capacity *c)
{
    c->memory_bytes = 0;
    c->l7_per_worker = 0;
}

static void check_prints_the_figures(void **state)
{
    (void)state;
    struct xlbd_capacity c = {.workers = 2,
                              .flows_per_worker = 65536,
                              .l7_per_worker = 3589,
                              .flow_bytes = 123,
                              .l7_conn_bytes = 74784,
                              .memory_bytes = 2048 * MIB};
    char *text = printed_twice(&c, forget_memory_and_l7);
    assert_string_equal(
        text, "capacity: flows 65536 per worker x 2 workers = 131072 (123 bytes each, 15.4 MiB)\n"
              "capacity: l7 connections 3589 per worker x 2 workers = 7178 (74784 bytes each, "
              "511.9 MiB)\n"
              "capacity: eal memory 2048.0 MiB\n"
              "capacity: flows 65536 per worker x 2 workers = 131072 (123 bytes each, 15.4 MiB)\n"
              "capacity: l7 connections 0 per worker x 2 workers = 0 (74784 bytes each, 0.0 MiB)\n"
              "capacity: eal memory not given (-m or --socket-mem)\n");
    free(text);
}

static void double_the_stream_engine(struct xlbd_capacity *c)
{
    c->stream_worker_bytes *= 2; /* 16 + 64 + 200 MiB > 256 MiB */
}

/* A stream VIP adds the engine's line; tables beyond the EAL memory are called out, since
 * xlbd would not start with them. */
static void check_prints_the_stream_engine_and_overcommit(void **state)
{
    (void)state;
    struct xlbd_capacity c = {.workers = 2,
                              .flows_per_worker = 65536,
                              .l7_per_worker = 1024,
                              .flow_bytes = 128,
                              .l7_conn_bytes = 32768,
                              .memory_bytes = 256 * MIB,
                              .stream_per_worker = 4096,
                              .stream_worker_bytes = 50 * MIB,
                              .stream_heap_bytes = 16 * MIB,
                              .stream_sessions = 448};
    char *text = printed_twice(&c, double_the_stream_engine);
    const char *first =
        "capacity: flows 65536 per worker x 2 workers = 131072 (128 bytes each, 16.0 MiB)\n"
        "capacity: l7 connections 1024 per worker x 2 workers = 2048 (32768 bytes each, 64.0 "
        "MiB)\n";
    char want[2048];
    snprintf(want, sizeof(want),
             "%scapacity: stream engine 4096 connections per worker x 2 workers (50.0 MiB each, "
             "100.0 MiB); its HTTP/2 heap of 16.0 MiB holds 448 sessions at once per worker\n"
             "capacity: eal memory 256.0 MiB\n"
             "%scapacity: stream engine 4096 connections per worker x 2 workers (100.0 MiB each, "
             "200.0 MiB); its HTTP/2 heap of 16.0 MiB holds 448 sessions at once per worker\n"
             "capacity: warning: these take 280.0 MiB, more than the eal memory "
             "256.0 MiB: xlbd will not start (raise -m, or lower the counts)\n"
             "capacity: eal memory 256.0 MiB\n",
             first, first);
    assert_string_equal(text, want);
    free(text);
}

/* The stream engine's heap follows the EAL memory (an eighth, shared among the workers), up to
 * 64 KiB per connection, never below what it was before (32 MiB here), also when the memory is
 * unknown. */
static void stream_heap_follows_the_memory(void **state)
{
    (void)state;
    const uint32_t per_conn = 64 * 1024, floor = 32 * MIB;
    assert_int_equal(xlbd_stream_heap_default(512 * MIB, 1, 4096, per_conn, floor), 64 * MIB);
    assert_int_equal(xlbd_stream_heap_default(512 * MIB, 2, 4096, per_conn, floor), 32 * MIB);
    assert_int_equal(xlbd_stream_heap_default(512 * MIB, 4, 4096, per_conn, floor), 32 * MIB);
    assert_int_equal(xlbd_stream_heap_default(16384ull * MIB, 1, 4096, per_conn, floor), 256 * MIB);
    assert_int_equal(xlbd_stream_heap_default(0, 1, 4096, per_conn, floor), 32 * MIB);
    assert_int_equal(xlbd_stream_heap_default(1ull << 40, 1, 1u << 20, per_conn, floor), 1u << 30);
}

/* Two workers on two ports: 4 rx and 4 tx queues of 1024, two redirect rings of 4095, three
 * lcore caches of 256 that may grow to 384 before flushing. */
static void mbuf_pool_against_what_holds_mbufs(void **state)
{
    (void)state;
    struct xlbd_mbuf_need n = {.workers = 2,
                               .ports = 2,
                               .rx_desc = 1024,
                               .tx_desc = 1024,
                               .redirect_ring = 4096,
                               .cache = 256};
    xlbd_mbufs_needed(&n);
    assert_int_equal(n.total, 4 * 1024 + 4 * 1024 + 2 * 4095 + 3 * 384);
    char line[256];
    assert_int_equal(xlbd_mbufs_explain(line, sizeof(line), 8191, &n), -1);
    assert_string_equal(line, "mbuf pool 8191 < 17534 needed: rx 4x1024 + tx 4x1024 + redirect "
                              "rings 8190 + lcore caches 3x384");
    assert_int_equal(xlbd_mbufs_explain(line, sizeof(line), 17534, &n), 0);
    /* Unset, the pool is what they need. */
    assert_int_equal(xlbd_mbuf_pool_default(&n), 17534);
    /* One worker redirects to no one, and the pool keeps its old floor. */
    struct xlbd_mbuf_need one = {.workers = 1,
                                 .ports = 1,
                                 .rx_desc = 1024,
                                 .tx_desc = 1024,
                                 .redirect_ring = 4096,
                                 .cache = 256};
    xlbd_mbufs_needed(&one);
    assert_int_equal(one.redirect, 0);
    assert_int_equal(one.total, 2048 + 2 * 384);
    assert_int_equal(xlbd_mbuf_pool_default(&one), 8191);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(eal_memory_from_the_arguments),
        cmocka_unit_test(l7_pool_follows_the_memory),
        cmocka_unit_test(check_prints_the_figures),
        cmocka_unit_test(check_prints_the_stream_engine_and_overcommit),
        cmocka_unit_test(stream_heap_follows_the_memory),
        cmocka_unit_test(mbuf_pool_against_what_holds_mbufs),
    };
    return cmocka_run_group_tests_name("capacity", tests, NULL, NULL);
}
