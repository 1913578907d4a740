/*
 * Two endpoints, one active and one passive (SYN cookie), joined by an in-process wire that
 * drops segments pseudo-randomly (fixed seed): 10 MB each way must arrive exact, both sides
 * close, and every control block and mbuf goes back to its pool.
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
#include <rte_tcp.h>

#include "packet_fixture.h"
#include "tcp_fixture.h"

#define BULK_BYTES  (10u * 1000 * 1000)
#define WRITE_CHUNK 4000u
#define MAX_STEPS   2000000u /* simulated milliseconds: the loop's bound */
#define WIRE_TX     1024

struct side {
    struct xlb_tcp_endpoint *ep;
    struct xlb_tcp_conn *c;
    struct rte_mbuf *tx[WIRE_TX];
    uint16_t n_tx;
    uint32_t written, received;
    bool connected, eof, closed, shut;
    uint32_t mismatches;
};

static struct rte_mempool *pool;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t next_random(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng >> 33);
}

static void on_connected(struct xlb_tcp_conn *c, void *user)
{
    struct side *s = user;
    s->c = c;
    s->connected = true;
}

static void on_readable(struct xlb_tcp_conn *c, void *user)
{
    struct side *s = user;
    s->eof |= tf_read_pattern(s->ep, c, &s->received, &s->mismatches);
}
static void on_writable(struct xlb_tcp_conn *c, void *user)
{
    (void)c;
    (void)user;
}
static void on_closed(struct xlb_tcp_conn *c, void *user, enum xlb_tcp_close_reason why)
{
    (void)c;
    struct side *s = user;
    s->closed = true;
    s->c = NULL;
    assert_int_equal(why, XLB_TCP_CLOSE_NORMAL);
}
static const struct xlb_tcp_callbacks cbs = {on_connected, on_readable, on_writable, on_closed};

static struct rte_mbuf *payload(uint32_t start, uint32_t len)
{
    struct rte_mbuf *head = NULL;
    for (uint32_t off = 0; off < len; off += 1000) {
        uint32_t piece = len - off < 1000 ? len - off : 1000;
        struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
        assert_non_null(m);
        uint8_t *p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)piece);
        for (uint32_t i = 0; i < piece; i++)
            p[i] = tf_pattern(start + off + i);
        if (head)
            assert_int_equal(rte_pktmbuf_chain(head, m), 0);
        else
            head = m;
    }
    return head;
}

/* The application: write while the send queue takes it, then shut down after everything. */
static void app_write(struct side *s)
{
    if (!s->c || !s->connected)
        return;
    /* Bounded: the send buffer refuses after 256 KiB. */
    while (s->written < BULK_BYTES) {
        uint32_t len = RTE_MIN(WRITE_CHUNK, BULK_BYTES - s->written);
        struct rte_mbuf *m = payload(s->written, len);
        if (xlb_tcp_write(s->ep, s->c, m) != 0) {
            rte_pktmbuf_free(m);
            break;
        }
        s->written += len;
    }
    if (s->written == BULK_BYTES && !s->shut) {
        xlb_tcp_shutdown(s->ep, s->c);
        s->shut = true;
    }
    if (s->c)
        xlb_tcp_flush(s->ep, s->c);
}

/* Carry what from sent to the other side, dropping loss_pct percent of segments. */
static void wire(struct side *from, struct side *to, const struct xlb_syn_cookie_keys *keys,
                 uint64_t now, unsigned loss_pct, uint64_t *dropped)
{
    struct rte_mbuf *batch[WIRE_TX];
    uint16_t n = from->n_tx;
    memcpy(batch, from->tx, n * sizeof(batch[0]));
    from->n_tx = 0;
    for (uint16_t i = 0; i < n; i++) {
        if (next_random() % 100 < loss_pct) {
            rte_pktmbuf_free(batch[i]);
            (*dropped)++;
            continue;
        }
        if (to->c) {
            xlb_tcp_receive(to->ep, to->c, batch[i], now);
            continue;
        }
        if (to->closed || !keys) {
            rte_pktmbuf_free(batch[i]);
            continue;
        }
        /* The passive side before its connection: the SYN gets a cookie, the ACK a block. */
        uint32_t ip_len = (rte_pktmbuf_mtod(batch[i], const uint8_t *)[0] >> 4) == 4 ? 20 : 40;
        const struct rte_tcp_hdr *th =
            rte_pktmbuf_mtod_offset(batch[i], const struct rte_tcp_hdr *, ip_len);
        if (th->tcp_flags & RTE_TCP_SYN_FLAG)
            xlb_tcp_answer_syn(to->ep, batch[i], keys, now);
        else
            xlb_tcp_accept(to->ep, batch[i], keys, now, &cbs, to);
    }
}

static void run_bulk(int family, unsigned loss_pct)
{
    fixture_eal_init();
    static unsigned serial;
    char name[32];
    snprintf(name, sizeof(name), "bulk_pool_%u", serial++);
    pool = rte_pktmbuf_pool_create(name, 16383, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
    assert_non_null(pool);
    struct xlb_tcp_config cfg;
    xlb_tcp_config_default(&cfg);
    cfg.max_connections = 4;
    uint64_t now = 5000;
    struct side a = {0}, b = {0};
    a.ep = xlb_tcp_endpoint_create(&cfg, pool, now);
    b.ep = xlb_tcp_endpoint_create(&cfg, pool, now);
    xlb_tcp_tx_set(a.ep, a.tx, WIRE_TX, &a.n_tx);
    xlb_tcp_tx_set(b.ep, b.tx, WIRE_TX, &b.n_tx);
    struct xlb_syn_cookie_keys keys;
    uint8_t seed[16] = {42};
    xlb_syn_cookie_keys_init(&keys, seed);
    struct xlb_tcp_tuple t = {
        .family = (uint8_t)family, .local_port = htons(40001), .remote_port = htons(80)};
    inet_pton(family, family == AF_INET ? "198.18.0.2" : "2001:2::2", t.local);
    inet_pton(family, family == AF_INET ? "198.18.0.100" : "2001:2::100", t.remote);
    a.c = xlb_tcp_connect(a.ep, &t, 0xfffff000u, now, &cbs, &a);
    assert_non_null(a.c);
    uint64_t dropped = 0;
    uint32_t step;
    for (step = 0; step < MAX_STEPS; step++) {
        wire(&a, &b, &keys, now, loss_pct, &dropped);
        wire(&b, &a, NULL, now, loss_pct, &dropped);
        app_write(&a);
        app_write(&b);
        if (a.closed && b.closed && !a.n_tx && !b.n_tx)
            break;
        now++;
        xlb_tcp_poll(a.ep, now, 256);
        xlb_tcp_poll(b.ep, now, 256);
    }
    print_message(
        "IPv%d, loss %u%%: %u simulated ms, %llu segments dropped, retransmits %llu + %llu, "
        "RTOs %llu + %llu, fast retransmits %llu + %llu\n",
        family == AF_INET ? 4 : 6, loss_pct, step, (unsigned long long)dropped,
        (unsigned long long)xlb_tcp_counters(a.ep)->retransmits,
        (unsigned long long)xlb_tcp_counters(b.ep)->retransmits,
        (unsigned long long)xlb_tcp_counters(a.ep)->rtos,
        (unsigned long long)xlb_tcp_counters(b.ep)->rtos,
        (unsigned long long)xlb_tcp_counters(a.ep)->recovery.fast_retransmits,
        (unsigned long long)xlb_tcp_counters(b.ep)->recovery.fast_retransmits);
    print_message("  tail loss probes %llu + %llu (losses found %llu + %llu), lost "
                  "retransmissions found %llu + %llu, out-of-order segments dropped for want of "
                  "slots %llu + %llu\n",
                  (unsigned long long)xlb_tcp_counters(a.ep)->recovery.tlp_probes,
                  (unsigned long long)xlb_tcp_counters(b.ep)->recovery.tlp_probes,
                  (unsigned long long)xlb_tcp_counters(a.ep)->recovery.tlp_recoveries,
                  (unsigned long long)xlb_tcp_counters(b.ep)->recovery.tlp_recoveries,
                  (unsigned long long)xlb_tcp_counters(a.ep)->recovery.lost_retransmits,
                  (unsigned long long)xlb_tcp_counters(b.ep)->recovery.lost_retransmits,
                  (unsigned long long)xlb_tcp_counters(a.ep)->ooo_dropped_slots,
                  (unsigned long long)xlb_tcp_counters(b.ep)->ooo_dropped_slots);
    assert_true(step < MAX_STEPS);
    assert_int_equal(a.received, BULK_BYTES);
    assert_int_equal(b.received, BULK_BYTES);
    assert_int_equal(a.mismatches, 0);
    assert_int_equal(b.mismatches, 0);
    assert_true(a.eof && b.eof);
    if (loss_pct)
        assert_true(dropped > 0);
    /* TIME-WAIT ends; then every block and mbuf is back. */
    for (uint32_t i = 0; i < cfg.timewait_ms + 1; i++) {
        now++;
        xlb_tcp_poll(a.ep, now, 256);
        xlb_tcp_poll(b.ep, now, 256);
    }
    for (uint16_t i = 0; i < a.n_tx; i++)
        rte_pktmbuf_free(a.tx[i]);
    for (uint16_t i = 0; i < b.n_tx; i++)
        rte_pktmbuf_free(b.tx[i]);
    assert_int_equal(xlb_tcp_conns_in_use(a.ep), 0);
    assert_int_equal(xlb_tcp_conns_in_use(b.ep), 0);
    assert_int_equal(rte_mempool_in_use_count(pool), 0);
    xlb_tcp_endpoint_free(a.ep);
    xlb_tcp_endpoint_free(b.ep);
    rte_mempool_free(pool);
}

static void test_bulk_lossless(void **state)
{
    (void)state;
    run_bulk(AF_INET, 0);
}
static void test_bulk_loss_1pct(void **state)
{
    (void)state;
    run_bulk(AF_INET, 1);
}
static void test_bulk_loss_5pct(void **state)
{
    (void)state;
    run_bulk(AF_INET, 5);
}
static void test_bulk_ipv6_loss_1pct(void **state)
{
    (void)state;
    run_bulk(AF_INET6, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bulk_lossless),
        cmocka_unit_test(test_bulk_loss_1pct),
        cmocka_unit_test(test_bulk_loss_5pct),
        cmocka_unit_test(test_bulk_ipv6_loss_1pct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
