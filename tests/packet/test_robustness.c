/*
 * A million random, mutated and truncated frames through the burst function: none may crash
 * it, every one must be accounted for (sent, dropped by reason, or handled), and every mbuf
 * must come back to the pool.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rte_arp.h>
#include <rte_tcp.h>

#include "hostile_frames.h"
#include "packet_fixture.h"
#include "xlb_msg.h"

#define FRAMES 1000000

static void add_templates(struct hostile_gen *g, uint8_t frames[][256])
{
    static const struct rte_ether_addr broadcast = {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};
    static const struct rte_ether_addr peer = FIX_PEER_MAC, gw = FIX_GW_MAC;
    size_t len[7];
    len[0] = build_arp(frames[0], RTE_ARP_OP_REQUEST, FIX_PEER4, FIX_VIP4, &broadcast, &peer);
    len[1] = build_icmp4_echo(frames[1], FIX_PEER4, FIX_VIP4, 56, 0);
    len[2] = build_icmp6_echo(frames[2], FIX_PEER6, FIX_VIP6, 56);
    len[3] = build_ns(frames[3], FIX_PEER6, FIX_VIP6, true, 255);
    len[4] = build_na(frames[4], FIX_GW6, &gw);
    len[5] = build_tcp4(frames[5], FIX_PEER4, FIX_VIP4, 8080, RTE_TCP_SYN_FLAG);
    len[6] = add_vlan(frames[6], build_icmp4_echo(frames[6], FIX_PEER4, FIX_VIP4, 8, 0), 7);
    for (int i = 0; i < 7; i++)
        hostile_add_template(g, frames[i], len[i]);
}

static void million_hostile_frames(void **state)
{
    struct fixture *f = fixture_create();
    static const struct rte_ether_addr port = FIX_PORT_MAC;
    static uint8_t templates[7][256];
    struct hostile_gen gen;
    hostile_init(&gen, 42, port.addr_bytes);
    add_templates(&gen, templates);
    uint8_t frame[HOSTILE_MAX_FRAME];
    struct rte_mbuf *burst[XLB_RX_BURST];
    uint64_t sent = 0;

    for (unsigned done = 0; done < FRAMES; done += XLB_RX_BURST) {
        for (unsigned i = 0; i < XLB_RX_BURST; i++) {
            size_t len = hostile_next(&gen, frame);
            burst[i] = rte_pktmbuf_alloc(f->pool);
            assert_non_null(burst[i]);
            memcpy(rte_pktmbuf_append(burst[i], (uint16_t)len), frame, len);
        }
        xlb_burst_process(&f->ctx, f->snap, 0, burst, XLB_RX_BURST);
        sent += f->ctx.tx[0].n;
        fixture_clear_tx(f);
        struct xlb_msg msg;
        while (xlb_msg_receive(f->to_control, &msg) == 0)
            ;
    }

    uint64_t rx = f->stats.rx_packets;
    uint64_t drops = fixture_total_drops(f);
    uint64_t handled = f->stats.events[XLB_EVENT_CONSUMED];
    print_message("%" PRIu64 " frames: %" PRIu64 " answered, %" PRIu64 " dropped, %" PRIu64
                  " handled silently\n",
                  rx, sent, drops, handled);
    assert_true(rx >= FRAMES);
    assert_int_equal(rx, sent + drops + handled);
    /* Mutations keep some frames valid: the answering paths were exercised too. */
    assert_true(sent > 0);
    assert_true(drops > rx / 2);
    fixture_destroy(f); /* asserts every mbuf is back in the pool */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(million_hostile_frames),
    };
    return cmocka_run_group_tests_name("robustness", tests, NULL, NULL);
}
