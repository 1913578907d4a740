/*
 * The pick over a worker's subchannels (lib/lb/xlb_lb_connectivity.h, the L7 stream mode):
 * round robin and localities over READY endpoints only, QUEUE while the chosen priority has
 * none, A56 failover on TRANSIENT_FAILURE and after the 10 s timer (a clock passed in the
 * request, no sleeping), override host by connectivity (A55/A60), ring hash walking to a READY
 * endpoint (A42), gRPC's connection backoff, and picks without connectivity as before.
 */
#include "lb_test.h"
#include "xlb_lb_connectivity.h"

#define T0 1000000u /* an arbitrary start for the clock the requests carry */

/* A pick with connectivity at now_ms through the fixture. */
static enum xlb_lb_outcome cpick(struct fixture *f, uint64_t id, const struct xlb_lb_session *s,
                                 uint64_t now_ms, struct xlb_lb_trace *t)
{
    struct xlb_lb_request req = {
        .connection_id = id, .session = s, .connectivity = true, .now_ms = now_ms};
    return xlb_lb_pick(&f->v.vip, &req, &f->w, t);
}

static void set_state(struct fixture *f, uint32_t endpoint, enum xlb_connectivity s)
{
    xlb_lb_connectivity_set(&f->w, ENDPOINT_SLOT_BASE + endpoint, s, 0);
}

static void start(struct fixture *f, struct eds *e, enum xlb_lb_policy policy)
{
    struct xlb_cluster_config cfg = cluster_config(policy);
    fixture_start(f, e, &cfg, NULL, 1, true);
    assert_int_equal(xlb_lb_connectivity_init(&f->w), 0);
}

/* Priority 0: .1 .2 .3 (one locality); priority 1: .4 .5. Endpoint indexes 0..4. */
static struct eds *two_priorities(void)
{
    struct eds *e = eds_one_locality(1);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.2:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.3:80", 1, XLB_HEALTH_HEALTHY);
    eds_priority(e);
    eds_locality(e, 1);
    eds_endpoint(e, "198.18.1.4:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.1.5:80", 1, XLB_HEALTH_HEALTHY);
    return e;
}

static void test_round_robin_over_ready_only(void **state)
{
    (void)state;
    struct fixture f;
    start(&f, two_priorities(), XLB_LB_ROUND_ROBIN);
    set_state(&f, 0, XLB_CONN_READY);
    set_state(&f, 1, XLB_CONN_CONNECTING);
    set_state(&f, 2, XLB_CONN_READY);
    uint32_t count[5] = {0};
    for (uint32_t i = 0; i < 1000; i++) {
        struct xlb_lb_trace t;
        assert_int_equal(cpick(&f, i, NULL, T0, &t), XLB_LB_PICKED);
        count[t.endpoint]++;
    }
    assert_int_equal(count[0], 500);
    assert_int_equal(count[2], 500);
    assert_int_equal(count[1] + count[3] + count[4], 0);
    assert_int_equal(f.load->endpoints[ENDPOINT_SLOT_BASE + 1].connectivity, XLB_CONN_CONNECTING);
    fixture_done(&f);
}

/* Localities share by weight among those with a READY endpoint, exactly. */
static void test_locality_choice_over_ready_only(void **state)
{
    (void)state;
    struct eds *e = eds_one_locality(1);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_locality(e, 3);
    eds_endpoint(e, "198.18.0.2:80", 1, XLB_HEALTH_HEALTHY);
    eds_locality(e, 6);
    eds_endpoint(e, "198.18.0.3:80", 1, XLB_HEALTH_HEALTHY);
    struct fixture f;
    start(&f, e, XLB_LB_ROUND_ROBIN);
    set_state(&f, 0, XLB_CONN_READY);
    set_state(&f, 1, XLB_CONN_READY);
    set_state(&f, 2, XLB_CONN_CONNECTING); /* weight 6 of 10, not READY */
    uint32_t count[3] = {0};
    for (uint32_t i = 0; i < 40000; i++) {
        struct xlb_lb_trace t;
        assert_int_equal(cpick(&f, i, NULL, T0, &t), XLB_LB_PICKED);
        count[t.endpoint]++;
    }
    assert_int_equal(count[2], 0);
    assert_binomial(count[0], 40000, 0.25);
    assert_binomial(count[1], 40000, 0.75);
    fixture_done(&f);
}

static void test_queue_names_priority_without_ready(void **state)
{
    (void)state;
    struct fixture f;
    start(&f, two_priorities(), XLB_LB_ROUND_ROBIN);
    /* Nothing connected yet: every slot IDLE. */
    struct xlb_lb_trace t;
    assert_int_equal(cpick(&f, 1, NULL, T0, &t), XLB_LB_QUEUE);
    assert_ptr_equal(t.cluster, f.v.leaves[0]);
    assert_int_equal(t.priority, 0);
    assert_int_equal(t.endpoint, XLB_PICK_NONE);
    set_state(&f, 0, XLB_CONN_CONNECTING);
    assert_int_equal(cpick(&f, 2, NULL, T0 + 5000, &t), XLB_LB_QUEUE);
    assert_int_equal(t.priority, 0);
    /* A queued pick starts nothing in flight and counts no locality. */
    assert_int_equal(f.load->clusters[1].started, 0);
    assert_string_equal(xlb_lb_outcome_name(XLB_LB_QUEUE), "queue");
    fixture_done(&f);
}

static void test_all_failed_priority_fails_over_at_once(void **state)
{
    (void)state;
    struct fixture f;
    start(&f, two_priorities(), XLB_LB_ROUND_ROBIN);
    for (uint32_t i = 0; i < 3; i++)
        set_state(&f, i, XLB_CONN_TRANSIENT_FAILURE);
    struct xlb_lb_trace t;
    /* Priority 1 is IDLE: the RPC waits on it, at once, not after 10 s. */
    assert_int_equal(cpick(&f, 1, NULL, T0, &t), XLB_LB_QUEUE);
    assert_int_equal(t.priority, 1);
    set_state(&f, 4, XLB_CONN_READY);
    for (uint32_t i = 0; i < 10; i++) {
        assert_int_equal(cpick(&f, i, NULL, T0, &t), XLB_LB_PICKED);
        assert_int_equal(t.endpoint, 4);
        assert_int_equal(t.priority, 1);
    }
    /* Everything failed: no endpoint (the engine answers UNAVAILABLE). */
    set_state(&f, 3, XLB_CONN_TRANSIENT_FAILURE);
    set_state(&f, 4, XLB_CONN_TRANSIENT_FAILURE);
    assert_int_equal(cpick(&f, 1, NULL, T0, &t), XLB_LB_NO_ENDPOINT);
    fixture_done(&f);
}

static void test_connecting_priority_fails_over_after_timer(void **state)
{
    (void)state;
    struct fixture f;
    start(&f, two_priorities(), XLB_LB_ROUND_ROBIN);
    for (uint32_t i = 0; i < 3; i++)
        set_state(&f, i, XLB_CONN_CONNECTING);
    set_state(&f, 3, XLB_CONN_READY);
    struct xlb_lb_trace t;
    /* The timer starts with the first pick that needs priority 0. */
    assert_int_equal(cpick(&f, 1, NULL, T0, &t), XLB_LB_QUEUE);
    assert_int_equal(t.priority, 0);
    assert_int_equal(cpick(&f, 2, NULL, T0 + XLB_PRIORITY_FAILOVER_MS - 1, &t), XLB_LB_QUEUE);
    assert_int_equal(t.priority, 0);
    assert_int_equal(cpick(&f, 3, NULL, T0 + XLB_PRIORITY_FAILOVER_MS, &t), XLB_LB_PICKED);
    assert_int_equal(t.priority, 1);
    assert_int_equal(t.endpoint, 3);
    /* Once given up, priority 0 stays skipped while it only connects. */
    assert_int_equal(cpick(&f, 4, NULL, T0 + XLB_PRIORITY_FAILOVER_MS + 1, &t), XLB_LB_PICKED);
    assert_int_equal(t.priority, 1);
    /* Priority 0 READY again takes over again. */
    set_state(&f, 1, XLB_CONN_READY);
    for (uint32_t i = 0; i < 10; i++) {
        assert_int_equal(cpick(&f, i, NULL, T0 + 20000, &t), XLB_LB_PICKED);
        assert_int_equal(t.priority, 0);
        assert_int_equal(t.endpoint, 1);
    }
    /* It loses its connection: a fresh 10 s, the timer having been cleared while READY. */
    set_state(&f, 1, XLB_CONN_CONNECTING);
    assert_int_equal(cpick(&f, 5, NULL, T0 + 30000, &t), XLB_LB_QUEUE);
    assert_int_equal(t.priority, 0);
    assert_int_equal(cpick(&f, 6, NULL, T0 + 30000 + XLB_PRIORITY_FAILOVER_MS, &t), XLB_LB_PICKED);
    assert_int_equal(t.priority, 1);
    fixture_done(&f);
}

/* Every priority timed out and still connecting: the RPC waits on the highest one (A56). */
static void test_all_timed_out_waits_on_highest(void **state)
{
    (void)state;
    struct fixture f;
    start(&f, two_priorities(), XLB_LB_ROUND_ROBIN);
    struct xlb_lb_trace t;
    assert_int_equal(cpick(&f, 1, NULL, T0, &t), XLB_LB_QUEUE);
    assert_int_equal(t.priority, 0);
    assert_int_equal(cpick(&f, 1, NULL, T0 + XLB_PRIORITY_FAILOVER_MS, &t), XLB_LB_QUEUE);
    assert_int_equal(t.priority, 1);
    assert_int_equal(cpick(&f, 1, NULL, T0 + 2 * XLB_PRIORITY_FAILOVER_MS, &t), XLB_LB_QUEUE);
    assert_int_equal(t.priority, 0);
    fixture_done(&f);
}

static void test_override_by_connectivity(void **state)
{
    (void)state;
    struct fixture f;
    start(&f, two_priorities(), XLB_LB_ROUND_ROBIN);
    set_state(&f, 0, XLB_CONN_READY);
    struct xlb_lb_session s = session_of(NULL, "198.18.1.5:80", NULL); /* endpoint 4 */
    struct xlb_lb_trace t;
    /* IDLE, then CONNECTING: the RPC waits on the session's endpoint, which the trace names. */
    for (int k = 0; k < 2; k++) {
        assert_int_equal(cpick(&f, 1, &s, T0, &t), XLB_LB_QUEUE);
        assert_int_equal(t.endpoint, 4);
        assert_int_equal(t.slot, ENDPOINT_SLOT_BASE + 4);
        assert_int_equal(t.priority, 1);
        set_state(&f, 4, XLB_CONN_CONNECTING);
    }
    set_state(&f, 4, XLB_CONN_READY);
    assert_int_equal(cpick(&f, 1, &s, T0, &t), XLB_LB_PICKED);
    assert_int_equal(t.endpoint, 4);
    assert_int_equal(t.override, XLB_LB_OVERRIDE_USED);
    assert_int_equal(f.load->endpoints[ENDPOINT_SLOT_BASE + 4].session_picks, 1);
    /* TRANSIENT_FAILURE: the normal pick takes it. */
    set_state(&f, 4, XLB_CONN_TRANSIENT_FAILURE);
    assert_int_equal(cpick(&f, 1, &s, T0, &t), XLB_LB_PICKED);
    assert_int_equal(t.endpoint, 0);
    assert_int_equal(t.override, XLB_LB_OVERRIDE_UNUSABLE);
    fixture_done(&f);
}

/* One locality .1 .. .5 hashed on a ring (or a Maglev table). */
static struct eds *five(void)
{
    struct eds *e = eds_one_locality(1);
    for (uint32_t i = 0; i < 5; i++) {
        char addr[32];
        snprintf(addr, sizeof(addr), "198.18.2.%u:443", i + 1);
        eds_endpoint(e, addr, 1, XLB_HEALTH_HEALTHY);
    }
    return e;
}

/* The first endpoint in the ring's order from a hash's point whose state is READY. */
static uint32_t first_ready_on_ring(const struct xlb_ring_hash *ring, uint64_t hash,
                                    const bool *ready)
{
    uint32_t at = xlb_ring_hash_point_for(ring, hash);
    for (uint32_t step = 0; step < ring->n_points; step++, at = (at + 1) % ring->n_points)
        if (ready[ring->slots[at]])
            return ring->slots[at];
    return XLB_PICK_NONE;
}

static void hash_walks_to_ready(enum xlb_lb_policy policy)
{
    struct fixture f;
    start(&f, five(), policy);
    bool ready[5] = {false, true, false, true, false};
    set_state(&f, 0, XLB_CONN_CONNECTING);
    set_state(&f, 1, XLB_CONN_READY);
    set_state(&f, 2, XLB_CONN_TRANSIENT_FAILURE);
    set_state(&f, 3, XLB_CONN_READY);
    struct xlb_rng rng;
    xlb_rng_seed(&rng, SEED);
    uint32_t count[5] = {0};
    const struct xlb_lb_priority *p = &f.v.leaves[0]->priorities[0];
    for (uint32_t i = 0; i < 500; i++) {
        uint64_t id = xlb_rng_next(&rng);
        struct xlb_lb_trace t, again;
        assert_int_equal(cpick(&f, id, NULL, T0, &t), XLB_LB_PICKED);
        assert_true(ready[t.endpoint]);
        if (policy == XLB_LB_RING_HASH)
            assert_int_equal(t.endpoint, first_ready_on_ring(p->ring, id, ready));
        assert_int_equal(cpick(&f, id, NULL, T0, &again), XLB_LB_PICKED);
        assert_int_equal(again.endpoint, t.endpoint);
        count[t.endpoint]++;
    }
    assert_true(count[1] > 0 && count[3] > 0);
    /* Without connectivity the same hashes still reach every endpoint. */
    uint32_t plain[5] = {0};
    for (uint32_t i = 0; i < 500; i++) {
        struct xlb_lb_trace t;
        assert_int_equal(pick(&f.v, &f.w, xlb_rng_next(&rng), NULL, &t), XLB_LB_PICKED);
        plain[t.endpoint]++;
    }
    for (uint32_t i = 0; i < 5; i++)
        assert_true(plain[i] > 0);
    fixture_done(&f);
}

static void test_ring_hash_walks_to_ready(void **state)
{
    (void)state;
    hash_walks_to_ready(XLB_LB_RING_HASH);
}

static void test_maglev_walks_to_ready(void **state)
{
    (void)state;
    hash_walks_to_ready(XLB_LB_MAGLEV);
}

static void test_ring_hash_queues_while_connecting(void **state)
{
    (void)state;
    struct fixture f;
    start(&f, five(), XLB_LB_RING_HASH);
    set_state(&f, 2, XLB_CONN_CONNECTING);
    struct xlb_lb_trace t;
    assert_int_equal(cpick(&f, 42, NULL, T0, &t), XLB_LB_QUEUE);
    assert_int_equal(t.priority, 0);
    fixture_done(&f);
}

/* Without connectivity (L4, splice, simulate) nothing changes, states or not. */
static void test_without_connectivity_unchanged(void **state)
{
    (void)state;
    struct fixture plain, with;
    start(&plain, two_priorities(), XLB_LB_ROUND_ROBIN);
    xlb_lb_connectivity_fini(&plain.w);
    start(&with, two_priorities(), XLB_LB_ROUND_ROBIN);
    for (uint32_t i = 0; i < 3; i++)
        set_state(&with, i, XLB_CONN_TRANSIENT_FAILURE);
    /* Priority 0's TRANSIENT_FAILURE states do not matter to picks without connectivity. */
    uint32_t count[5] = {0};
    for (uint32_t i = 0; i < 300; i++) {
        struct xlb_lb_trace t;
        assert_int_equal(pick(&with.v, &with.w, i, NULL, &t), XLB_LB_PICKED);
        assert_int_equal(t.priority, 0);
        count[t.endpoint]++;
    }
    assert_int_equal(count[0], 100);
    assert_int_equal(count[1], 100);
    assert_int_equal(count[2], 100);
    /* A worker without connectivity state picks as before even when asked for it. */
    struct xlb_lb_trace t;
    assert_int_equal(cpick(&plain, 7, NULL, T0, &t), XLB_LB_PICKED);
    assert_int_equal(t.priority, 0);
    assert_int_equal(xlb_lb_connectivity_get(&plain.w, ENDPOINT_SLOT_BASE), XLB_CONN_IDLE);
    fixture_done(&plain);
    fixture_done(&with);
}

/* A75 aggregate over two leaves with connectivity: the first leaf while it can serve or is
 * within its timer, the second once the first's endpoints all failed, the first again when
 * READY. Leaf "a" has endpoint .1 (slot 1000), leaf "b" endpoint .2 (slot 1001). */
static void test_aggregate_fails_over_by_connectivity(void **state)
{
    (void)state;
    struct eds *ea = eds_one_locality(1), *eb = eds_one_locality(1);
    eds_endpoint(ea, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    /* The test compile numbers slots by index: a DRAINING first endpoint (never picked) gives
     * b's endpoint a slot of its own. */
    eds_endpoint(eb, "198.18.0.9:80", 1, XLB_HEALTH_DRAINING);
    eds_endpoint(eb, "198.18.0.2:80", 1, XLB_HEALTH_HEALTHY);
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    struct xlb_lb_cluster *leaves[2] = {compile("a", &cfg, ea, NULL, 2),
                                        compile("b", &cfg, eb, NULL, 3)};
    struct fixture f = {0};
    vip_init(&f.v, "agg", leaves, 2);
    worker(&f.w, NULL, NULL, 0);
    assert_int_equal(xlb_lb_connectivity_init(&f.w), 0);
    uint32_t slot_a = leaves[0]->endpoints[0].slot, slot_b = leaves[1]->endpoints[1].slot;
    assert_int_not_equal(slot_a, slot_b);
    xlb_lb_connectivity_set(&f.w, slot_b, XLB_CONN_READY, 0);
    struct xlb_lb_trace t;
    /* Leaf a IDLE: within its timer the RPC waits on it, not on b. */
    assert_int_equal(cpick(&f, 1, NULL, T0, &t), XLB_LB_QUEUE);
    assert_ptr_equal(t.cluster, leaves[0]);
    xlb_lb_connectivity_set(&f.w, slot_a, XLB_CONN_TRANSIENT_FAILURE, 0);
    assert_int_equal(cpick(&f, 1, NULL, T0, &t), XLB_LB_PICKED);
    assert_ptr_equal(t.cluster, leaves[1]);
    xlb_lb_connectivity_set(&f.w, slot_a, XLB_CONN_READY, 0);
    assert_int_equal(cpick(&f, 1, NULL, T0, &t), XLB_LB_PICKED);
    assert_ptr_equal(t.cluster, leaves[0]);
    /* Both failed: no endpoint. */
    xlb_lb_connectivity_set(&f.w, slot_a, XLB_CONN_TRANSIENT_FAILURE, 0);
    xlb_lb_connectivity_set(&f.w, slot_b, XLB_CONN_TRANSIENT_FAILURE, 0);
    assert_int_equal(cpick(&f, 1, NULL, T0, &t), XLB_LB_NO_ENDPOINT);
    xlb_lb_worker_fini(&f.w);
    vip_done(&f.v);
    free(ea);
    free(eb);
}

/* The cached READY counts belong to one compile: a recompile in the same cluster slot with no
 * state change in between is counted afresh. */
static void test_recompile_recounts(void **state)
{
    (void)state;
    struct eds *two = eds_one_locality(1); /* priority 0: slot 1000; priority 1: slot 1001 */
    eds_endpoint(two, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_priority(two);
    eds_locality(two, 1);
    eds_endpoint(two, "198.18.0.2:80", 1, XLB_HEALTH_HEALTHY);
    struct fixture f;
    start(&f, two, XLB_LB_ROUND_ROBIN);
    set_state(&f, 0, XLB_CONN_TRANSIENT_FAILURE);
    set_state(&f, 1, XLB_CONN_READY);
    struct xlb_lb_trace t;
    assert_int_equal(cpick(&f, 1, NULL, T0, &t), XLB_LB_PICKED);
    assert_int_equal(t.priority, 1);
    /* EDS moves both into priority 0 (same slots, same cluster slot): the READY one there. */
    struct eds *one = eds_one_locality(1);
    eds_endpoint(one, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(one, "198.18.0.2:80", 1, XLB_HEALTH_HEALTHY);
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    struct xlb_lb_cluster *c = compile("web", &cfg, one, NULL, 1);
    xlb_lb_cluster_release(f.v.leaves[0]);
    f.v.leaves[0] = c;
    for (uint32_t i = 0; i < 10; i++) {
        assert_int_equal(cpick(&f, i, NULL, T0, &t), XLB_LB_PICKED);
        assert_int_equal(t.priority, 0);
        assert_int_equal(t.endpoint, 1);
    }
    free(one);
    fixture_done(&f);
}

static void test_backoff_sequence(void **state)
{
    (void)state;
    struct xlb_rng rng;
    xlb_rng_seed(&rng, SEED);
    struct xlb_backoff b;
    xlb_backoff_reset(&b);
    double base = XLB_BACKOFF_INITIAL_MS;
    for (uint32_t i = 0; i < 30; i++) {
        uint32_t d = xlb_backoff_next(&b, &rng);
        assert_true(d >= 0.8 * base - 1 && d <= 1.2 * base + 1);
        base = base * 1.6 > XLB_BACKOFF_MAX_MS ? XLB_BACKOFF_MAX_MS : base * 1.6;
    }
    assert_int_equal(b.current_ms, XLB_BACKOFF_MAX_MS);
    /* The jitter spreads: not every draw at the cap is the same. */
    uint32_t lo = UINT32_MAX, hi = 0;
    for (uint32_t i = 0; i < 100; i++) {
        uint32_t d = xlb_backoff_next(&b, &rng);
        lo = d < lo ? d : lo;
        hi = d > hi ? d : hi;
    }
    assert_true(lo >= XLB_BACKOFF_MAX_MS * 4 / 5 && hi <= XLB_BACKOFF_MAX_MS * 6 / 5);
    assert_true(hi - lo > XLB_BACKOFF_MAX_MS / 5);
    xlb_backoff_reset(&b);
    uint32_t d = xlb_backoff_next(&b, &rng);
    assert_true(d >= 800 && d <= 1200);
    assert_string_equal(xlb_connectivity_name(XLB_CONN_TRANSIENT_FAILURE), "TRANSIENT_FAILURE");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_robin_over_ready_only),
        cmocka_unit_test(test_locality_choice_over_ready_only),
        cmocka_unit_test(test_queue_names_priority_without_ready),
        cmocka_unit_test(test_all_failed_priority_fails_over_at_once),
        cmocka_unit_test(test_connecting_priority_fails_over_after_timer),
        cmocka_unit_test(test_all_timed_out_waits_on_highest),
        cmocka_unit_test(test_override_by_connectivity),
        cmocka_unit_test(test_ring_hash_walks_to_ready),
        cmocka_unit_test(test_maglev_walks_to_ready),
        cmocka_unit_test(test_ring_hash_queues_while_connecting),
        cmocka_unit_test(test_without_connectivity_unchanged),
        cmocka_unit_test(test_aggregate_fails_over_by_connectivity),
        cmocka_unit_test(test_recompile_recounts),
        cmocka_unit_test(test_backoff_sequence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
