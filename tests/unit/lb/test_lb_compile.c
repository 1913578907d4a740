/*
 * control/lb_compile/cluster_compile: a hand-built Cluster + ClusterLoadAssignment into the
 * workers' struct xlb_lb_cluster. What a user would notice: rejected assignments, which
 * endpoints can take picks, which priority is chosen, ring contents, drop thresholds.
 */
#include "lb_test.h"

static void assert_rejected(const struct eds *e, const char *what)
{
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    struct xlb_lb_cluster *c = (struct xlb_lb_cluster *)(uintptr_t)1;
    char err[128] = "";
    if (try_compile("web", &cfg, e, NULL, 1, &c, err, sizeof(err)) != -1)
        fail_msg("accepted: %s", what);
    assert_null(c);
    assert_non_null(strstr(err, "twice"));
}

static void test_duplicate_address_across_priorities(void **state)
{
    (void)state;
    struct eds *e = eds_one_locality(1);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.2:80", 1, XLB_HEALTH_HEALTHY);
    eds_priority(e);
    eds_locality(e, 1);
    eds_endpoint(e, "198.18.0.3:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    assert_rejected(e, "198.18.0.1:80 in priorities 0 and 1");
    free(e);
}

static void test_duplicate_address_other_forms(void **state)
{
    (void)state;
    /* Twice in one locality. */
    struct eds *e = eds_one_locality(1);
    eds_endpoint(e, "[2001:2::1]:443", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "[2001:2:0::1]:443", 1, XLB_HEALTH_HEALTHY);
    assert_rejected(e, "the same IPv6 address twice");
    free(e);

    /* One endpoint's additional address (A61) is another endpoint's address. */
    e = eds_one_locality(1);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_locality(e, 1);
    eds_endpoint(e, "198.18.0.2:80", 1, XLB_HEALTH_HEALTHY);
    eds_address(e, "198.18.0.1:80");
    assert_rejected(e, "an additional address that is another endpoint's");
    free(e);

    /* The same IP on another port is another endpoint: accepted. */
    e = eds_one_locality(1);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.1:81", 1, XLB_HEALTH_HEALTHY);
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    struct xlb_lb_cluster *c = compile("web", &cfg, e, NULL, 1);
    assert_int_equal(c->n_endpoints, 2);
    xlb_lb_cluster_release(c);
    free(e);
}

/* A61: an endpoint keeps its addresses in order, the first XLB_MAX_ENDPOINT_ADDRESSES of
 * them, outside the endpoints array; a cluster whose endpoints have one address has none. */
static void test_additional_addresses(void **state)
{
    (void)state;
    struct eds *e = eds_one_locality(1);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "[2001:2::2]:81", 1, XLB_HEALTH_HEALTHY);
    eds_address(e, "198.18.0.2:82");
    for (int i = 3; i <= 6; i++) {
        char a[32];
        snprintf(a, sizeof(a), "198.18.1.%d:80", i);
        eds_address(e, a);
    }
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    struct xlb_lb_cluster *c = compile("dual", &cfg, e, NULL, 1);
    assert_int_equal(xlb_lb_endpoint_n_addresses(&c->endpoints[0]), 1);
    assert_int_equal(c->endpoints[1].n_addresses, XLB_MAX_ENDPOINT_ADDRESSES);
    static const char *const want[] = {"[2001:2::2]:81", "198.18.0.2:82", "198.18.1.3:80",
                                       "198.18.1.4:80"};
    for (uint32_t k = 0; k < XLB_MAX_ENDPOINT_ADDRESSES; k++) {
        char got[XLB_HOST_PORT_STRLEN];
        xlb_host_port_format(xlb_lb_endpoint_address(c, 1, k), got, sizeof(got));
        assert_string_equal(got, want[k]);
    }
    /* Every address still finds the endpoint for a session (A55), kept or not. */
    struct xlb_host_port last;
    assert_int_equal(xlb_host_port_parse("198.18.1.6:80", 13, &last), 0);
    const struct xlb_override_bucket *b = xlb_override_map_find(c->override, &last);
    assert_non_null(b);
    assert_int_equal(b->slot, 1);
    xlb_lb_cluster_release(c);
    free(e);

    e = eds_one_locality(1);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    c = compile("single", &cfg, e, NULL, 1);
    assert_null(c->more_addresses);
    assert_int_equal(xlb_lb_endpoint_n_addresses(&c->endpoints[0]), 1);
    xlb_lb_cluster_release(c);
    free(e);
}

/* What the compiled cluster says about each endpoint, locality and priority. */
static void test_compiled_shape(void **state)
{
    (void)state;
    struct eds *e = eds_one_locality(3);
    eds_endpoint(e, "198.18.0.1:80", 7, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.2:80", 1, XLB_HEALTH_DRAINING);
    eds_locality(e, 5);
    eds_endpoint(e, "198.18.0.3:80", 2, XLB_HEALTH_UNKNOWN);
    eds_priority(e);
    eds_locality(e, 1);
    eds_endpoint(e, "[2001:2::4]:8443", 1, XLB_HEALTH_HEALTHY);
    eds_address(e, "198.18.0.4:8443");
    eds_drop(e, "throttle", 250000);
    const bool ejected[4] = {false, false, true, false};
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    cfg.max_requests = 17;
    struct xlb_lb_cluster *c = compile("web", &cfg, e, ejected, 9);

    assert_string_equal(c->name, "web");
    assert_int_equal(c->refs, 1);
    assert_int_equal(c->cluster_slot, 9);
    assert_int_equal(c->policy, XLB_LB_POLICY_ROUND_ROBIN);
    assert_int_equal(c->max_requests, 17);
    assert_int_equal(c->override_status, XLB_OVERRIDE_STATUS_DEFAULT);
    assert_int_equal(c->n_endpoints, 4);
    assert_int_equal(c->n_priorities, 2);

    static const struct {
        const char *where;
        uint32_t weight, priority, locality, health;
        bool ejected, usable;
    } want[4] = {
        {"198.18.0.1:80", 7, 0, 0, XLB_HEALTH_HEALTHY, false, true},
        {"198.18.0.2:80", 1, 0, 0, XLB_HEALTH_DRAINING, false, true},
        {"198.18.0.3:80", 2, 0, 1, XLB_HEALTH_UNKNOWN, true, false},
        {"[2001:2::4]:8443", 1, 1, 0, XLB_HEALTH_HEALTHY, false, true},
    };
    for (uint32_t i = 0; i < 4; i++) {
        const struct xlb_lb_endpoint *ep = &c->endpoints[i];
        assert_hp(&ep->where, want[i].where);
        assert_int_equal(ep->slot, ENDPOINT_SLOT_BASE + i);
        assert_int_equal(ep->weight, want[i].weight);
        assert_int_equal(ep->priority, want[i].priority);
        assert_int_equal(ep->locality, want[i].locality);
        assert_int_equal(ep->health, want[i].health);
        assert_int_equal(ep->ejected, want[i].ejected);
        assert_int_equal(xlb_slot_usable(c->usable, i), want[i].usable);
    }

    /* Priority 0: only .1 can take a normal pick (.2 drains, .3 is ejected). */
    assert_int_equal(c->priorities[0].n_localities, 2);
    assert_int_equal(c->priorities[0].n_usable, 1);
    assert_int_equal(c->priorities[1].n_usable, 1);
    assert_int_equal(c->chosen_priority, 0);
    assert_true(xlb_cluster_priority_usable(c, 0));
    assert_true(xlb_cluster_priority_usable(c, 1));
    assert_false(xlb_cluster_priority_usable(c, 2));
    assert_string_equal(c->priorities[0].localities[0].name, "r/z00/");
    assert_string_equal(c->priorities[0].localities[1].name, "r/z01/");
    assert_string_equal(c->priorities[1].localities[0].name, "r/z10/");
    assert_int_equal(c->priorities[0].localities[0].weight, 3);
    assert_int_equal(c->priorities[0].localities[1].weight, 5);
    assert_non_null(c->priorities[0].localities[0].rr);
    assert_int_equal(c->priorities[0].localities[0].rr->n_slots, 1);
    assert_null(c->priorities[0].localities[1].rr); /* nothing usable there */
    assert_int_not_equal(c->priorities[0].localities[0].load_slot,
                         c->priorities[0].localities[1].load_slot);
    assert_null(c->priorities[0].ring);

    /* Drops: 25% of 2^32, with a load slot. */
    assert_int_equal(c->n_drops, 1);
    assert_string_equal(c->drops[0].category, "throttle");
    assert_true(c->drops[0].threshold == (UINT64_C(1) << 32) / 4);
    assert_int_equal(c->drops[0].load_slot, drop_slot_of("throttle"));

    /* The override map knows every address of every endpoint, with its status. */
    assert_non_null(c->override);
    static const struct {
        const char *where;
        uint32_t index, status;
    } known[] = {
        {"198.18.0.1:80", 0, XLB_HEALTH_HEALTHY},   {"198.18.0.2:80", 1, XLB_HEALTH_DRAINING},
        {"198.18.0.3:80", 2, XLB_HEALTH_UNKNOWN},   {"[2001:2::4]:8443", 3, XLB_HEALTH_HEALTHY},
        {"198.18.0.4:8443", 3, XLB_HEALTH_HEALTHY},
    };
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
        struct xlb_host_port where = hp(known[i].where);
        const struct xlb_override_bucket *b = xlb_override_map_find(c->override, &where);
        assert_non_null(b);
        assert_int_equal(b->slot, known[i].index);
        assert_int_equal(b->status, known[i].status);
    }
    struct xlb_host_port nowhere = hp("198.18.0.9:80");
    assert_null(xlb_override_map_find(c->override, &nowhere));

    /* The caller may hold and release; the last release frees (checked under ASan/valgrind). */
    xlb_lb_cluster_hold(c);
    assert_int_equal(c->refs, 2);
    xlb_lb_cluster_release(c);
    xlb_lb_cluster_release(c);
    free(e);
}

/* Without a load slot callback and endpoint slots, everything is "not counted". */
static void test_no_slots(void **state)
{
    (void)state;
    struct eds *e = eds_one_locality(1);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_drop(e, "x", 1);
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    struct xlb_cluster_compile_input in = {.name = "web", .config = &cfg, .endpoints = &e->cfg};
    struct xlb_lb_cluster *c;
    char err[64];
    assert_int_equal(xlb_cluster_compile(&in, &c, err, sizeof(err)), 0);
    assert_int_equal(c->endpoints[0].slot, XLB_LB_NO_SLOT);
    assert_int_equal(c->priorities[0].localities[0].load_slot, XLB_LB_NO_SLOT);
    assert_int_equal(c->drops[0].load_slot, XLB_LB_NO_SLOT);
    /* A counted pick with such a cluster writes nothing out of range. */
    struct xlb_worker_load *load = loads_new(1);
    struct xlb_lb_worker w;
    worker(&w, load, NULL, 0);
    struct vip1 v;
    vip_one(&v, c);
    struct xlb_lb_trace t;
    assert_int_equal(pick(&v, &w, 0, NULL, &t), XLB_LB_PICKED);
    assert_int_equal(t.slot, XLB_LB_NO_SLOT);
    xlb_lb_worker_fini(&w);
    free(load);
    vip_done(&v);
    free(e);
}

static void test_no_endpoints(void **state)
{
    (void)state;
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_RING_HASH);
    struct xlb_lb_cluster *c = compile("web", &cfg, NULL, NULL, 1);
    assert_int_equal(c->n_endpoints, 0);
    assert_int_equal(c->n_priorities, 0);
    assert_int_equal(c->chosen_priority, XLB_PICK_NONE);
    assert_null(c->override);
    assert_int_equal(c->n_drops, 0);
    assert_false(xlb_cluster_priority_usable(c, 0));
    xlb_lb_cluster_release(c);
}

/* The first priority with a normal-pickable endpoint is chosen; none -> XLB_PICK_NONE. */
static void test_chosen_priority(void **state)
{
    (void)state;
    struct eds *e = eds_new();
    for (uint32_t p = 0; p < 3; p++) {
        eds_priority(e);
        eds_locality(e, 1);
        char addr[32];
        snprintf(addr, sizeof(addr), "198.18.3.%u:80", p + 1);
        eds_endpoint(e, addr, 1, p == 1 ? XLB_HEALTH_DRAINING : XLB_HEALTH_HEALTHY);
    }
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    static const struct {
        bool ejected[3];
        uint32_t chosen;
    } cases[] = {
        {{false, false, false}, 0},
        {{true, false, false}, 2}, /* priority 1 only drains */
        {{true, false, true}, XLB_PICK_NONE},
        {{false, true, true}, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct xlb_lb_cluster *c = compile("web", &cfg, e, cases[i].ejected, 1);
        assert_int_equal(c->chosen_priority, cases[i].chosen);
        xlb_lb_cluster_release(c);
    }
    free(e);
}

/* A locality with no usable endpoint gets no share, whatever its weight. */
static void test_locality_without_usable_endpoint(void **state)
{
    (void)state;
    struct eds *e = eds_one_locality(1000);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.2:80", 1, XLB_HEALTH_DRAINING);
    eds_locality(e, 1);
    eds_endpoint(e, "198.18.0.3:80", 1, XLB_HEALTH_HEALTHY);
    const bool ejected[3] = {true, false, false};
    struct fixture f;
    fixture_rr(&f, e, ejected);
    for (uint32_t i = 0; i < 1000; i++) {
        struct xlb_lb_trace t = pick_ok(&f, i, NULL);
        assert_int_equal(t.endpoint, 2);
        assert_int_equal(t.locality, 1);
    }
    fixture_done(&f);
}

/* How many of a ring's points or a Maglev table's entries are the endpoint's. */
static uint32_t count_of(const uint32_t *slots, uint32_t n, uint32_t index)
{
    uint32_t count = 0;
    for (uint32_t i = 0; i < n; i++)
        count += slots[i] == index;
    return count;
}

static uint32_t entries_of(const struct xlb_maglev *m, uint32_t index)
{
    return count_of(m->table, m->size, index);
}

static uint32_t points_of(const struct xlb_ring_hash *ring, uint32_t index)
{
    return count_of(ring->slots, ring->n_points, index);
}

/* Priority 0: weights 1 and 3 in a locality of weight 1, 1 and a DRAINING 5 in one of weight
 * 2; priority 1: one endpoint. */
static struct eds *weighted_two_priorities(void)
{
    struct eds *e = eds_one_locality(1);
    eds_endpoint(e, "198.18.4.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.4.2:80", 3, XLB_HEALTH_HEALTHY);
    eds_locality(e, 2);
    eds_endpoint(e, "198.18.4.3:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.4.4:80", 5, XLB_HEALTH_DRAINING);
    eds_priority(e);
    eds_locality(e, 1);
    eds_endpoint(e, "198.18.4.5:80", 1, XLB_HEALTH_HEALTHY);
    return e;
}

/* MAGLEV: each priority's table shares follow endpoint x locality weight; DRAINING gets none;
 * a configured table size is the table's. */
static void test_maglev_contents(void **state)
{
    (void)state;
    struct eds *e = weighted_two_priorities();
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_MAGLEV);
    struct xlb_lb_cluster *c = compile("web", &cfg, e, NULL, 1);
    assert_int_equal(c->policy, XLB_LB_POLICY_MAGLEV);
    assert_null(c->priorities[0].ring);
    const struct xlb_maglev *m0 = c->priorities[0].maglev, *m1 = c->priorities[1].maglev;
    assert_non_null(m0);
    assert_non_null(m1);
    assert_int_equal(m0->size, XLB_MAGLEV_DEFAULT_SIZE);
    uint32_t a = entries_of(m0, 0), b = entries_of(m0, 1), d = entries_of(m0, 2);
    assert_int_equal(entries_of(m0, 3), 0);
    assert_int_equal(a + b + d, m0->size);
    /* Weights 1, 3 and 1 x 2: shares of 1/6, 1/2 and 1/3 within a percent of the table. */
    assert_true(a > m0->size / 6 - m0->size / 100 && a < m0->size / 6 + m0->size / 100);
    assert_true(b > m0->size / 2 - m0->size / 100 && b < m0->size / 2 + m0->size / 100);
    assert_int_equal(entries_of(m1, 4), m1->size);
    xlb_lb_cluster_release(c);

    cfg.maglev_table_size = 101;
    c = compile("web", &cfg, e, NULL, 1);
    assert_int_equal(c->priorities[0].maglev->size, 101);
    xlb_lb_cluster_release(c);
    free(e);
}

/* A42: ring points per endpoint follow endpoint x locality weight; DRAINING gets none. */
static void test_ring_contents(void **state)
{
    (void)state;
    struct eds *e = weighted_two_priorities();
    const bool ejected[5] = {false, false, true, false, false};
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_RING_HASH);
    struct xlb_lb_cluster *c = compile("web", &cfg, e, ejected, 1);
    assert_int_equal(c->policy, XLB_LB_POLICY_RING_HASH);
    const struct xlb_ring_hash *r0 = c->priorities[0].ring, *r1 = c->priorities[1].ring;
    assert_non_null(r0);
    assert_non_null(r1);
    /* Weights 1, 3, 1 x 2 = 2 (ejected endpoints keep their points), DRAINING none. */
    uint32_t a = points_of(r0, 0), b = points_of(r0, 1), d = points_of(r0, 2);
    assert_int_equal(points_of(r0, 3), 0);
    assert_int_equal(a + b + d, r0->n_points);
    assert_true(a > 0);
    assert_true(b >= 3 * a - 3 && b <= 3 * a + 3);
    assert_true(d >= 2 * a - 2 && d <= 2 * a + 2);
    /* Priority 1's ring holds priority 1's endpoint only. */
    assert_int_equal(points_of(r1, 4), r1->n_points);
    assert_int_equal(c->priorities[0].n_usable, 2);
    xlb_lb_cluster_release(c);
    free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duplicate_address_across_priorities),
        cmocka_unit_test(test_duplicate_address_other_forms),
        cmocka_unit_test(test_compiled_shape),
        cmocka_unit_test(test_additional_addresses),
        cmocka_unit_test(test_no_slots),
        cmocka_unit_test(test_no_endpoints),
        cmocka_unit_test(test_chosen_priority),
        cmocka_unit_test(test_locality_without_usable_endpoint),
        cmocka_unit_test(test_ring_contents),
        cmocka_unit_test(test_maglev_contents),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
