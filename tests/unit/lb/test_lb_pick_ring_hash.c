/*
 * The pick over compiled ring hash clusters (lib/lb, A42): the same hash lands on the same
 * endpoint, an ejected endpoint's share walks on to the next point, the L4 flow hash is the
 * connection id, and a session overrides the ring. Seeded randomness, distributions at 5 sigma.
 */
#include "lb_test.h"

/* The fraction of the 64-bit hash space whose requests land on points owned by slot. */
static double ring_share(const struct xlb_ring_hash *ring, uint32_t slot)
{
    double owned = 0;
    for (uint32_t i = 0; i < ring->n_points; i++) {
        if (ring->slots[i] != slot)
            continue;
        /* Point i takes the hashes after the previous point, up to and including its own. */
        if (i > 0)
            owned += (double)(ring->hashes[i] - ring->hashes[i - 1]);
        else
            owned += (double)ring->hashes[0] + 1.0 +
                     (double)(UINT64_MAX - ring->hashes[ring->n_points - 1]);
    }
    return owned / 18446744073709551616.0;
}

/* One locality of n endpoints .1 .. .n; endpoint `draining` (if < n) is DRAINING. */
static struct eds *ring_eds(uint32_t n, uint32_t draining)
{
    struct eds *e = eds_one_locality(1);
    for (uint32_t i = 0; i < n; i++) {
        char addr[32];
        snprintf(addr, sizeof(addr), "198.18.2.%u:443", i + 1);
        eds_endpoint(e, addr, 1, i == draining ? XLB_HEALTH_DRAINING : XLB_HEALTH_HEALTHY);
    }
    return e;
}

/* ring_eds(n, draining) as a ring hash cluster in slot 1, behind f. */
static void ring_fixture(struct fixture *f, uint32_t n, uint32_t draining)
{
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_RING_HASH);
    fixture_start(f, ring_eds(n, draining), &cfg, NULL, 1, false);
}

/*
 * Five endpoints, the i-th at 198.18.2.(first + i * step) (mod 5, from 1); with keys, the i-th is
 * named pod-i by its EDS hash_key (A76). A ring hash or Maglev cluster behind f.
 */
static void keyed_fixture(struct fixture *f, enum xlb_lb_policy policy, bool keyed, uint32_t shift)
{
    static char keys[5][8] = {"pod-0", "pod-1", "pod-2", "pod-3", "pod-4"};
    struct eds *e = eds_one_locality(1);
    for (uint32_t i = 0; i < 5; i++) {
        char addr[32];
        snprintf(addr, sizeof(addr), "198.18.2.%u:443", (i + shift) % 5 + 1);
        uint32_t at = eds_endpoint(e, addr, 1, XLB_HEALTH_HEALTHY);
        if (keyed)
            e->eps[0][0][at].hash_key = keys[i];
    }
    struct xlb_cluster_config cfg = cluster_config(policy);
    fixture_start(f, e, &cfg, NULL, 1, false);
}

/* How many of 400 hashes pick endpoints of the same index (the same pod) in both fixtures. */
static uint32_t same_picks(struct fixture *a, struct fixture *b)
{
    struct xlb_rng rng;
    xlb_rng_seed(&rng, SEED);
    uint32_t same = 0;
    for (uint32_t i = 0; i < 400; i++) {
        uint64_t id = xlb_rng_next(&rng);
        same += pick_ok(a, id, NULL).endpoint == pick_ok(b, id, NULL).endpoint;
    }
    return same;
}

/*
 * A76: an endpoint placed by its EDS hash_key keeps its place on the ring (and in a Maglev
 * table) when its address changes: every hash still lands on the same pod. Placed by their
 * addresses, the same move sends most hashes elsewhere.
 */
static void test_endpoint_hash_key_survives_new_addresses(void **state)
{
    (void)state;
    enum xlb_lb_policy policies[2] = {XLB_LB_RING_HASH, XLB_LB_MAGLEV};
    for (int k = 0; k < 2; k++) {
        struct fixture before, after;
        keyed_fixture(&before, policies[k], true, 0);
        keyed_fixture(&after, policies[k], true, 2);
        assert_int_equal(same_picks(&before, &after), 400);
        fixture_done(&before);
        fixture_done(&after);
        keyed_fixture(&before, policies[k], false, 0);
        keyed_fixture(&after, policies[k], false, 2);
        assert_true(same_picks(&before, &after) < 200);
        fixture_done(&before);
        fixture_done(&after);
    }
}

/* Two endpoints naming one hash_key: the first keeps it, the second is placed by its address,
 * so both are on the ring and the cluster compiles. */
static void test_shared_hash_key_falls_back_to_address(void **state)
{
    (void)state;
    static char pod[] = "pod";
    struct eds *e = eds_one_locality(1);
    uint32_t a = eds_endpoint(e, "198.18.2.1:443", 1, XLB_HEALTH_HEALTHY);
    uint32_t b = eds_endpoint(e, "198.18.2.2:443", 1, XLB_HEALTH_HEALTHY);
    e->eps[0][0][a].hash_key = pod;
    e->eps[0][0][b].hash_key = pod;
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_RING_HASH);
    struct fixture f;
    fixture_start(&f, e, &cfg, NULL, 1, false);
    struct xlb_rng rng;
    xlb_rng_seed(&rng, SEED);
    uint32_t seen[2] = {0};
    for (uint32_t i = 0; i < 400; i++)
        seen[pick_ok(&f, xlb_rng_next(&rng), NULL).endpoint]++;
    assert_true(seen[0] > 0 && seen[1] > 0);
    fixture_done(&f);
}

static void test_ring_hash_same_hash_same_endpoint(void **state)
{
    (void)state;
    struct fixture f;
    ring_fixture(&f, 5, UINT32_MAX);
    struct xlb_rng rng;
    xlb_rng_seed(&rng, SEED);
    uint32_t first[200], seen[5] = {0};
    uint64_t ids[200];
    for (uint32_t i = 0; i < 200; i++) {
        ids[i] = xlb_rng_next(&rng);
        struct xlb_lb_trace t = pick_ok(&f, ids[i], NULL);
        assert_true(t.hashed);
        assert_true(t.hash == ids[i]);
        first[i] = t.endpoint;
        seen[t.endpoint]++;
    }
    for (uint32_t i = 0; i < 5; i++)
        assert_true(seen[i] > 0);
    /* Later, interleaved with other requests: the same hashes land on the same endpoints. */
    for (uint32_t round = 0; round < 5; round++)
        for (uint32_t i = 0; i < 200; i++) {
            pick_ok(&f, xlb_rng_next(&rng), NULL);
            assert_int_equal(pick_ok(&f, ids[i], NULL).endpoint, first[i]);
        }
    /* Another worker (other seed, own cursors) agrees. */
    struct xlb_lb_worker w2;
    assert_int_equal(xlb_lb_worker_init(&w2, SEED + 1, NULL, NULL, 0), 0);
    for (uint32_t i = 0; i < 200; i++) {
        struct xlb_lb_trace t;
        assert_int_equal(pick(&f.v, &w2, ids[i], NULL, &t), XLB_LB_PICKED);
        assert_int_equal(t.endpoint, first[i]);
    }
    xlb_lb_worker_fini(&w2);
    fixture_done(&f);
}

static void test_ring_hash_ejected_walks_to_next(void **state)
{
    (void)state;
    struct eds *e = ring_eds(5, UINT32_MAX);
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_RING_HASH);
    const bool ejected[5] = {false, false, true, false, false};
    struct vip1 all, some;
    vip_one(&all, compile("web", &cfg, e, NULL, 1));
    vip_one(&some, compile("web", &cfg, e, ejected, 1));
    const struct xlb_ring_hash *ring = some.leaves[0]->priorities[0].ring;
    assert_non_null(ring);
    struct xlb_lb_worker w;
    worker(&w, NULL, NULL, 0);
    struct xlb_rng rng;
    xlb_rng_seed(&rng, SEED ^ 42);
    const uint32_t n = 5000;
    uint32_t landed = 0, moved = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t h = xlb_rng_next(&rng);
        struct xlb_lb_trace before, after;
        assert_int_equal(pick(&all, &w, h, NULL, &before), XLB_LB_PICKED);
        assert_int_equal(pick(&some, &w, h, NULL, &after), XLB_LB_PICKED);
        assert_int_not_equal(after.endpoint, 2);
        if (before.endpoint != 2) {
            assert_int_equal(after.endpoint, before.endpoint);
            continue;
        }
        landed++;
        moved += after.endpoint != before.endpoint;
        /* It went to the owner of the next point, in ring order, that is not endpoint 2. */
        uint32_t at = xlb_ring_hash_point_for(ring, h);
        while (ring->slots[at] == 2)
            at = (at + 1) % ring->n_points;
        assert_int_equal(after.endpoint, ring->slots[at]);
    }
    assert_binomial(landed, n, ring_share(ring, 2));
    assert_true(landed > 0);
    assert_int_equal(moved, landed);
    xlb_lb_worker_fini(&w);
    vip_done(&all);
    vip_done(&some);
    free(e);
}

/* L4: the flow hash is request.connection_id, used as is; DRAINING endpoints have no points. */
static void test_ring_hash_l4_connection_id(void **state)
{
    (void)state;
    struct fixture f;
    ring_fixture(&f, 4, 1);
    const struct xlb_lb_cluster *c = f.v.leaves[0];
    struct xlb_rng rng;
    xlb_rng_seed(&rng, SEED ^ 7);
    uint32_t count[4] = {0};
    const uint32_t n = 6000;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t id = xlb_rng_next(&rng);
        struct xlb_lb_trace t = pick_ok(&f, id, NULL);
        assert_true(t.hashed);
        assert_true(t.hash == id);
        assert_int_equal(t.endpoint, xlb_ring_hash_pick(c->priorities[0].ring, id, c->usable));
        count[t.endpoint]++;
    }
    assert_int_equal(count[1], 0);
    assert_true(ring_share(c->priorities[0].ring, 1) == 0.0);
    /* Each of the three others takes its share of the ring, about a third. */
    for (uint32_t i = 0; i < 4; i++)
        if (i != 1) {
            double share = ring_share(c->priorities[0].ring, i);
            assert_true(share > 0.25 && share < 0.42);
            assert_binomial(count[i], n, share);
        }
    fixture_done(&f);
}

/* A session overrides the ring too. */
static void test_ring_hash_session_override(void **state)
{
    (void)state;
    struct fixture f;
    ring_fixture(&f, 4, UINT32_MAX);
    struct xlb_lb_session s = session_of(NULL, "198.18.2.3:443", NULL);
    for (uint64_t id = 0; id < 200; id++) {
        struct xlb_lb_trace t = pick_ok(&f, id * 0x9e3779b97f4a7c15u, &s);
        assert_int_equal(t.override, XLB_LB_OVERRIDE_USED);
        assert_int_equal(t.endpoint, 2);
    }
    fixture_done(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_hash_same_hash_same_endpoint),
        cmocka_unit_test(test_endpoint_hash_key_survives_new_addresses),
        cmocka_unit_test(test_shared_hash_key_falls_back_to_address),
        cmocka_unit_test(test_ring_hash_ejected_walks_to_next),
        cmocka_unit_test(test_ring_hash_l4_connection_id),
        cmocka_unit_test(test_ring_hash_session_override),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
