/*
 * A worker that stops reporting quiescent states must not hang the control plane: publishing
 * returns at once however many snapshots the stalled worker holds back, the memory they take
 * stays bounded (publishing refuses rather than grow), the stall is reported, and once the
 * worker reports again every retired snapshot is freed and publishing resumes.
 *
 * Two RCU reader threads stand for the workers: worker 0 reports after every publish as a live
 * one does, worker 1 is registered and online but never reports.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_malloc.h>

#include "xlb_const.h"
#include "../test_eal.h"
#include "xlb_shared.h"

#define PUBLISHES 300

static void eal_init(void)
{
    if (test_eal_init("unit-stall", 128) != 0)
        fail_msg("rte_eal_init failed");
}

static size_t heap_in_use(void)
{
    struct rte_malloc_socket_stats stats;
    size_t total = 0;
    for (unsigned s = 0; s < RTE_MAX_NUMA_NODES; s++)
        if (rte_malloc_get_socket_stats((int)s, &stats) == 0)
            total += stats.heap_allocsz_bytes;
    return total;
}

/* What a worker's poll loop does at its end (dataplane/worker.c). */
static void report_quiescent(struct xlb_shared *shared, unsigned w)
{
    rte_rcu_qsbr_quiescent(shared->qsbr, w);
    shared->stats[w].last_quiescent_tsc = rte_rdtsc();
}

static void test_stalled_worker_does_not_block_publishing(void **state)
{
    (void)state;
    struct xlb_shared *shared = xlb_shared_create(2);
    assert_non_null(shared);
    uint64_t hz = rte_get_tsc_hz(), start = rte_rdtsc();
    xlb_stall_watch_init(&shared->stall, 2000, hz, start);
    for (unsigned w = 0; w < 2; w++) {
        assert_int_equal(rte_rcu_qsbr_thread_register(shared->qsbr, w), 0);
        rte_rcu_qsbr_thread_online(shared->qsbr, w);
        report_quiescent(shared, w);
    }
    assert_int_equal(xlb_snapshot_publish(shared, xlb_snapshot_alloc(1, 16, 1)), 0);
    size_t baseline = heap_in_use();

    /* Worker 1 stops reporting. Every publish returns; none waits for it. */
    unsigned accepted = 0, refused = 0;
    for (unsigned i = 0; i < PUBLISHES; i++) {
        struct xlb_snapshot *snap = xlb_snapshot_alloc(2 + i, 16, 1);
        assert_non_null(snap);
        int rc = xlb_snapshot_publish(shared, snap);
        if (rc == 0) {
            accepted++;
        } else {
            assert_int_equal(rc, -EBUSY);
            xlb_snapshot_free(snap);
            refused++;
        }
        report_quiescent(shared, 0);
        xlb_snapshot_reclaim(shared);
    }
    assert_int_equal(accepted + refused, PUBLISHES);
    assert_int_equal(accepted, XLB_RETIRED_QUEUE_SIZE + XLB_RETIRED_OVERFLOW_SIZE);
    /* Every accepted publish retired a snapshot the stalled worker may still read. */
    unsigned waiting = xlb_snapshot_reclaim(shared);
    assert_int_equal(waiting, accepted);
    assert_int_equal(shared->overflow.overflowed, XLB_RETIRED_OVERFLOW_SIZE);
    assert_int_equal(shared->overflow.refused, refused);

    /* More publishes meet the bound: refused, counted, the workers' snapshot unchanged. */
    const struct xlb_snapshot *serving = xlb_snapshot_latest(shared);
    for (unsigned i = 0; i < XLB_RETIRED_QUEUE_SIZE + XLB_RETIRED_OVERFLOW_SIZE; i++) {
        struct xlb_snapshot *snap = xlb_snapshot_alloc(1000 + i, 16, 1);
        if (xlb_snapshot_publish(shared, snap) != 0)
            xlb_snapshot_free(snap);
        else
            serving = snap;
    }
    assert_false(xlb_snapshot_can_publish(shared));
    assert_ptr_equal(xlb_snapshot_latest(shared), serving);
    assert_true(shared->overflow.refused > 0);
    assert_true(xlb_snapshot_reclaim(shared) <= XLB_RETIRED_QUEUE_SIZE + XLB_RETIRED_OVERFLOW_SIZE);

    /* Past the limit, worker 1 (and only it) is reported stalled, once per episode. */
    uint64_t later = shared->stats[1].last_quiescent_tsc + 3 * hz;
    shared->stats[0].last_quiescent_tsc = later;
    assert_int_equal(xlb_stall_watch_check(&shared->stall, shared->stats, 2, later), 1);
    assert_false(shared->stall.stalled[0]);
    assert_true(shared->stall.stalled[1]);
    assert_int_equal(xlb_stall_watch_check(&shared->stall, shared->stats, 2, later + 1), 1);
    assert_int_equal(shared->stall.episodes[1], 1);

    /* Worker 1 reports again: the stall clears, everything retired is freed. */
    report_quiescent(shared, 1);
    report_quiescent(shared, 0);
    assert_int_equal(xlb_stall_watch_check(&shared->stall, shared->stats, 2, rte_rdtsc()), 0);
    assert_false(shared->stall.stalled[1]);
    assert_int_equal(xlb_snapshot_reclaim(shared), 0);
    assert_true(xlb_snapshot_can_publish(shared));
    assert_int_equal(shared->overflow.count, 0);

    /* Publishing works again, and the memory is back where it was with one snapshot current. */
    assert_int_equal(xlb_snapshot_publish(shared, xlb_snapshot_alloc(5000, 16, 1)), 0);
    report_quiescent(shared, 0);
    report_quiescent(shared, 1);
    assert_int_equal(xlb_snapshot_reclaim(shared), 0);
    assert_int_equal(heap_in_use(), baseline);

    for (unsigned w = 0; w < 2; w++) {
        rte_rcu_qsbr_thread_offline(shared->qsbr, w);
        rte_rcu_qsbr_thread_unregister(shared->qsbr, w);
    }
    xlb_shared_destroy(shared);
}

/* A worker that has never reported counts from when watching began, not from TSC 0. */
static void test_never_reported_counts_from_start(void **state)
{
    (void)state;
    struct xlb_worker_stats stats[1];
    memset(stats, 0, sizeof(stats));
    struct xlb_stall_watch watch;
    uint64_t hz = rte_get_tsc_hz(), start = rte_rdtsc();
    xlb_stall_watch_init(&watch, 2000, hz, start);
    assert_int_equal(xlb_stall_watch_check(&watch, stats, 1, start + hz), 0);
    assert_int_equal(xlb_stall_watch_check(&watch, stats, 1, start + 3 * hz), 1);
}

int main(void)
{
    eal_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stalled_worker_does_not_block_publishing),
        cmocka_unit_test(test_never_reported_counts_from_start),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
