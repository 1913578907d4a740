/*
 * A worker whose redirect ring is not drained (stalled, or slower than the others send to it):
 * replies for its SNAT ports that reach another worker fill the ring, and past its capacity
 * they are dropped and counted (`redirect_ring_full`), never leaked. Every mbuf is accounted
 * for: the ones in the ring come back to the pool when the owner takes them, the dropped ones
 * at once, so the pool's free count returns to where it started.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_tcp.h>

#include "flow/flow.h"
#include "nat_segments.h"

#define RING_SLOTS  64 /* a ring of 64 slots holds 63 */
#define RING_HOLDS  (RING_SLOTS - 1)
#define REPLIES     100
#define OTHER_SLICE (PORT_BASE + PORT_COUNT) /* worker 1's first SNAT port */

static int redirect_setup(void **state)
{
    struct nat_fixture *n = nat_fixture_two_clusters("redirect_full", FLOWS, 2, 0);
    /* Worker 1's ring, small enough to fill from the fixture's pool of 1023 mbufs. */
    rte_ring_free(n->redirect[1]);
    n->redirect[1] = rte_ring_create("redirect_full_1", RING_SLOTS, SOCKET_ID_ANY, RING_F_SC_DEQ);
    assert_non_null(n->redirect[1]);
    *state = n;
    return 0;
}

static void a_full_redirect_ring_drops_counts_and_leaks_nothing(void **state)
{
    struct nat_fixture *n = *state;
    struct fixture *f = n->f;
    unsigned start = rte_mempool_avail_count(f->pool);

    /* Worker 1 never drains its ring: replies for its ports arrive here. */
    for (unsigned i = 0; i < REPLIES; i++) {
        struct seg reply =
            from_backend4((uint16_t)(OTHER_SLICE + i % PORT_COUNT), RTE_TCP_ACK_FLAG, NULL);
        uint8_t frame[256];
        size_t len = tcp_frame(frame, &reply);
        assert_int_equal(fixture_send(f, frame, len), 0); /* nothing sent from here */
    }
    assert_int_equal(rte_ring_count(n->redirect[1]), RING_HOLDS);
    assert_int_equal(f->stats.events[XLB_EVENT_REDIRECTED_OUT], RING_HOLDS);
    assert_int_equal(fixture_drops(f, XLB_DROP_REDIRECT_FULL), REPLIES - RING_HOLDS);
    assert_int_equal(fixture_total_drops(f), REPLIES - RING_HOLDS);
    /* Only the ring holds mbufs: the dropped replies are back in the pool already. */
    assert_int_equal(rte_mempool_avail_count(f->pool), start - RING_HOLDS);

    /* Worker 1 resumes and takes them (here: frees them, as it would after sending). */
    struct rte_mbuf *m;
    unsigned taken = 0;
    while (taken <= RING_HOLDS && rte_ring_sc_dequeue(n->redirect[1], (void **)&m) == 0) {
        rte_pktmbuf_free(m);
        taken++;
    }
    assert_int_equal(taken, RING_HOLDS);
    assert_int_equal(rte_mempool_avail_count(f->pool), start);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_full_redirect_ring_drops_counts_and_leaks_nothing,
                                        redirect_setup, nat_teardown),
    };
    return cmocka_run_group_tests_name("redirect_full", tests, NULL, NULL);
}
