/*
 * The neighbour table learns a MAC only in answer to its own solicitation
 * (control/orchestration/neighbour_table.c): a spoofed gratuitous ARP reply for a gateway is
 * ignored and counted, before and after the gateway is resolved; the answer to a solicitation
 * is learned, once; a late answer (after XLB_SOLICIT_ANSWER_MS) is not. A backend no longer
 * wanted lingers, resolved, for XLB_NEIGHBOUR_LINGER_MS.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_eal.h>

#include "neighbour_table.h"
#include "xlb_const.h"
#include "../test_eal.h"
#include "xlb_shared.h"

static void eal_init(void)
{
    assert_int_equal(test_eal_init("neighbour-solicited", 64), 0);
}

static struct xlb_msg report(const struct xlb_addr *addr, uint8_t last_mac_byte)
{
    struct xlb_msg msg;
    memset(&msg, 0, sizeof(msg));
    msg.type = XLB_MSG_NEIGHBOUR_SEEN;
    msg.port_index = 0;
    msg.addr = *addr;
    struct rte_ether_addr mac = {{0x02, 0, 0, 0, 0, last_mac_byte}};
    rte_ether_addr_copy(&mac, &msg.mac);
    return msg;
}

/* Worker 0's ring emptied of the solicitations the table sent; how many there were. */
static unsigned solicitations_sent(struct xlb_shared *shared)
{
    struct xlb_msg msg;
    unsigned n = 0;
    while (n < 64 && xlb_msg_receive(shared->to_worker[0], &msg) == 0)
        n++;
    return n;
}

static void only_answers_to_solicitations_are_learned(void **state)
{
    struct xlb_shared *shared = xlb_shared_create(1);
    assert_non_null(shared);
    struct xlb_neighbour_table table;
    xlb_neighbours_init(&table);
    struct xlb_addr gateway;
    assert_int_equal(xlb_addr_parse("198.18.0.1", &gateway), 0);
    assert_int_equal(xlb_neighbours_want(&table, &gateway, 0, true), 0);
    const struct xlb_neighbour_state *n = &table.entries[0];
    uint64_t now = 1000000;

    /* A gratuitous reply before xlb asked: ignored, counted. */
    struct xlb_msg spoof = report(&gateway, 0x66);
    assert_false(xlb_neighbours_seen(&table, &spoof, now));
    assert_false(n->resolved);
    assert_int_equal(n->unsolicited_ignored, 1);

    /* xlb asks; the answer is learned. */
    xlb_neighbours_solicit_due(&table, shared, now);
    assert_int_equal(solicitations_sent(shared), 1);
    struct xlb_msg answer = report(&gateway, 0x01);
    assert_true(xlb_neighbours_seen(&table, &answer, now + 5));
    assert_true(n->resolved);
    assert_int_equal(n->mac.addr_bytes[5], 0x01);

    /* The spoofer again, once the solicitation was answered: the MAC stays. */
    assert_false(xlb_neighbours_seen(&table, &spoof, now + 10));
    assert_int_equal(n->mac.addr_bytes[5], 0x01);
    assert_int_equal(n->unsolicited_ignored, 2);
    assert_int_equal(table.unsolicited_ignored, 2);

    /* At the refresh, an answer that comes too late is not taken either. */
    now += XLB_SOLICIT_REFRESH_MS + 100;
    xlb_neighbours_solicit_due(&table, shared, now);
    assert_int_equal(solicitations_sent(shared), 1);
    assert_false(xlb_neighbours_seen(&table, &spoof, now + XLB_SOLICIT_ANSWER_MS + 1));
    assert_int_equal(n->mac.addr_bytes[5], 0x01);
    assert_int_equal(table.unsolicited_ignored, 3);

    /* A changed MAC that answers a solicitation is learned (a replaced gateway). */
    now += XLB_SOLICIT_REFRESH_MS + 100;
    xlb_neighbours_solicit_due(&table, shared, now);
    struct xlb_msg moved = report(&gateway, 0x02);
    assert_true(xlb_neighbours_seen(&table, &moved, now + 1));
    assert_int_equal(n->mac.addr_bytes[5], 0x02);

    xlb_neighbours_free(&table);
    xlb_shared_destroy(shared);
}

/* The table a configuration change builds: the wanted addresses, then what the old one knew. */
static void rebuild(struct xlb_neighbour_table *table, const struct xlb_addr *wanted, unsigned n,
                    uint64_t now)
{
    struct xlb_neighbour_table next;
    xlb_neighbours_init(&next);
    for (unsigned i = 0; i < n; i++)
        assert_int_equal(xlb_neighbours_want(&next, &wanted[i], 0, false), 0);
    assert_int_equal(xlb_neighbours_keep_known(&next, table, now), 0);
    xlb_neighbours_free(table);
    *table = next;
}

/* A backend an EDS update removes and the next brings back keeps its MAC meanwhile (no new
 * answer needed), is not solicited while it is not wanted, and is forgotten once it has been
 * neither wanted nor answered for XLB_NEIGHBOUR_LINGER_MS. */
static void a_backend_removed_and_back_is_still_resolved(void **state)
{
    struct xlb_shared *shared = xlb_shared_create(1);
    assert_non_null(shared);
    struct xlb_neighbour_table table;
    xlb_neighbours_init(&table);
    struct xlb_addr be[2];
    assert_int_equal(xlb_addr_parse("198.18.0.21", &be[0]), 0);
    assert_int_equal(xlb_addr_parse("198.18.0.23", &be[1]), 0);
    uint64_t now = 1000000;
    rebuild(&table, be, 2, now);
    xlb_neighbours_solicit_due(&table, shared, now);
    assert_int_equal(solicitations_sent(shared), 2);
    struct xlb_msg answer = report(&be[1], 0x23);
    assert_true(xlb_neighbours_seen(&table, &answer, now + 1));

    /* .23 leaves every cluster: kept, resolved, not solicited. */
    rebuild(&table, be, 1, now + 100);
    assert_int_equal(table.n, 2);
    assert_true(table.entries[1].resolved && table.entries[1].lingering);
    xlb_neighbours_solicit_due(&table, shared, now + XLB_SOLICIT_REFRESH_MS + 200);
    assert_int_equal(solicitations_sent(shared), 1); /* .21, still unresolved */

    /* It comes back: resolved at once, wanted again, its MAC the one learned. */
    rebuild(&table, be, 2, now + 200);
    assert_int_equal(table.n, 2);
    assert_true(table.entries[1].resolved);
    assert_false(table.entries[1].lingering);
    assert_int_equal(table.entries[1].mac.addr_bytes[5], 0x23);

    /* Gone for longer than the linger time since its last answer: forgotten. */
    rebuild(&table, be, 1, now + 300);
    rebuild(&table, be, 1, now + 1 + XLB_NEIGHBOUR_LINGER_MS);
    assert_int_equal(table.n, 1);

    xlb_neighbours_free(&table);
    xlb_shared_destroy(shared);
}

int main(void)
{
    eal_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(only_answers_to_solicitations_are_learned),
        cmocka_unit_test(a_backend_removed_and_back_is_still_resolved),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
