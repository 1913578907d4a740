/*
 * The pick over compiled clusters (lib/lb), driven from hand-built configs compiled by
 * control/lb_compile: weighted localities and round robin (A27), priorities (A56), DRAINING
 * and override host (A55, A60, A61, A75), aggregates (A75), drop overloads, circuit breaking,
 * ring hash (A42) and session cookies. Seeded randomness, distributions at 5 sigma.
 */
#include <errno.h>

#include <openssl/evp.h>

#include "lb_test.h"

/* ---- A27: weighted localities, round robin inside ---- */

/* Localities 2:1, two endpoints each: A's endpoints get 1/3 each, B's 1/6 each. */
static void test_weighted_localities(void **state)
{
    (void)state;
    struct eds *e = eds_new();
    eds_priority(e);
    eds_locality(e, 2);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.2:80", 1, XLB_HEALTH_HEALTHY);
    eds_locality(e, 1);
    eds_endpoint(e, "198.18.0.3:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.4:80", 1, XLB_HEALTH_HEALTHY);
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    struct vip1 v;
    vip_one(&v, compile("web", &cfg, e, NULL, 1));
    struct xlb_worker_load *load = calloc(1, sizeof(*load));
    assert_non_null(load);
    struct xlb_lb_worker w;
    worker(&w, load, NULL, 0);

    const uint32_t n = 60000;
    uint64_t count[4] = {0}, per_locality[2] = {0};
    for (uint32_t i = 0; i < n; i++) {
        struct xlb_lb_trace t;
        assert_int_equal(pick(&v, &w, i, NULL, &t), XLB_LB_PICKED);
        assert_int_equal(t.priority, 0);
        assert_true(t.endpoint < 4);
        assert_int_equal(t.slot, ENDPOINT_SLOT_BASE + t.endpoint);
        assert_int_equal(t.locality, t.endpoint / 2);
        assert_int_equal(t.override, XLB_LB_OVERRIDE_NONE);
        count[t.endpoint]++;
        per_locality[t.locality]++;
    }
    assert_binomial(per_locality[0], n, 2.0 / 3.0);
    assert_binomial(count[0], n, 1.0 / 3.0);
    assert_binomial(count[1], n, 1.0 / 3.0);
    assert_binomial(count[2], n, 1.0 / 6.0);
    assert_binomial(count[3], n, 1.0 / 6.0);
    /* Round robin splits each locality's share evenly, to within one pick. */
    assert_true(llabs((long long)count[0] - (long long)count[1]) <= 1);
    assert_true(llabs((long long)count[2] - (long long)count[3]) <= 1);
    /* Each locality's issued counter saw exactly its picks. */
    const struct xlb_lb_priority *p = &v.leaves[0]->priorities[0];
    assert_int_equal(load->localities[p->localities[0].load_slot].issued, per_locality[0]);
    assert_int_equal(load->localities[p->localities[1].load_slot].issued, per_locality[1]);
    assert_int_equal(load->clusters[1].started, n);

    xlb_lb_worker_fini(&w);
    free(load);
    vip_done(&v);
    free(e);
}

/* One locality, endpoint weights 1, 5, 10, 1: round robin visits each in EDS order, evenly. */
static void test_round_robin_in_turn_ignores_weights(void **state)
{
    (void)state;
    struct eds *e = eds_new();
    eds_priority(e);
    eds_locality(e, 1);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.2:80", 5, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.3:80", 10, XLB_HEALTH_UNKNOWN);
    eds_endpoint(e, "198.18.0.4:80", 1, XLB_HEALTH_HEALTHY);
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    struct vip1 v;
    vip_one(&v, compile("web", &cfg, e, NULL, 1));
    struct xlb_lb_worker w;
    worker(&w, NULL, NULL, 0);

    uint32_t prev = XLB_PICK_NONE, count[4] = {0};
    for (uint32_t i = 0; i < 400; i++) {
        struct xlb_lb_trace t;
        assert_int_equal(pick(&v, &w, i, NULL, &t), XLB_LB_PICKED);
        if (prev != XLB_PICK_NONE)
            assert_int_equal(t.endpoint, (prev + 1) % 4);
        prev = t.endpoint;
        count[t.endpoint]++;
    }
    for (uint32_t i = 0; i < 4; i++)
        assert_int_equal(count[i], 100);

    xlb_lb_worker_fini(&w);
    vip_done(&v);
    free(e);
}

/* An ejected endpoint leaves the cycle; the others keep their turn. */
static void test_round_robin_skips_ejected(void **state)
{
    (void)state;
    struct eds *e = eds_new();
    eds_priority(e);
    eds_locality(e, 1);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.2:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.3:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.4:80", 1, XLB_HEALTH_HEALTHY);
    const bool ejected[4] = {false, true, false, false};
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    struct vip1 v;
    vip_one(&v, compile("web", &cfg, e, ejected, 1));
    struct xlb_lb_worker w;
    worker(&w, NULL, NULL, 0);

    static const uint32_t next[4] = {2, XLB_PICK_NONE, 3, 0};
    uint32_t prev = XLB_PICK_NONE, count[4] = {0};
    for (uint32_t i = 0; i < 300; i++) {
        struct xlb_lb_trace t;
        assert_int_equal(pick(&v, &w, i, NULL, &t), XLB_LB_PICKED);
        assert_int_not_equal(t.endpoint, 1);
        if (prev != XLB_PICK_NONE)
            assert_int_equal(t.endpoint, next[prev]);
        prev = t.endpoint;
        count[t.endpoint]++;
    }
    assert_int_equal(count[0], 100);
    assert_int_equal(count[2], 100);
    assert_int_equal(count[3], 100);

    xlb_lb_worker_fini(&w);
    vip_done(&v);
    free(e);
}

/* ---- A56: priorities ---- */

/* Priority 0: .1 and .2; priority 1: .3 and .4 (one locality each). */
static struct eds *two_priorities(enum xlb_health_status p0_health)
{
    struct eds *e = eds_new();
    eds_priority(e);
    eds_locality(e, 1);
    eds_endpoint(e, "198.18.0.1:80", 1, p0_health);
    eds_endpoint(e, "198.18.0.2:80", 1, p0_health);
    eds_priority(e);
    eds_locality(e, 1);
    eds_endpoint(e, "198.18.0.3:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.4:80", 1, XLB_HEALTH_HEALTHY);
    return e;
}

/* Picks all land in `priority`, spread evenly over its two endpoints. */
static void assert_all_in_priority(struct vip1 *v, uint32_t priority)
{
    struct xlb_lb_worker w;
    worker(&w, NULL, NULL, 0);
    uint32_t count[4] = {0};
    for (uint32_t i = 0; i < 1000; i++) {
        struct xlb_lb_trace t;
        assert_int_equal(pick(v, &w, i, NULL, &t), XLB_LB_PICKED);
        assert_int_equal(t.priority, priority);
        assert_int_equal(v->leaves[0]->endpoints[t.endpoint].priority, priority);
        count[t.endpoint]++;
    }
    assert_int_equal(count[2 * priority], 500);
    assert_int_equal(count[2 * priority + 1], 500);
    xlb_lb_worker_fini(&w);
}

static void test_priority_0_preferred(void **state)
{
    (void)state;
    struct eds *e = two_priorities(XLB_HEALTH_HEALTHY);
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    struct vip1 v;
    vip_one(&v, compile("web", &cfg, e, NULL, 1));
    assert_int_equal(v.leaves[0]->chosen_priority, 0);
    assert_all_in_priority(&v, 0);
    vip_done(&v);

    /* One priority-0 endpoint ejected: priority 0 still takes everything, on the other one. */
    const bool one_ejected[4] = {true, false, false, false};
    vip_one(&v, compile("web", &cfg, e, one_ejected, 1));
    struct xlb_lb_worker w;
    worker(&w, NULL, NULL, 0);
    for (uint32_t i = 0; i < 100; i++) {
        struct xlb_lb_trace t;
        assert_int_equal(pick(&v, &w, i, NULL, &t), XLB_LB_PICKED);
        assert_int_equal(t.endpoint, 1);
    }
    xlb_lb_worker_fini(&w);
    vip_done(&v);
    free(e);
}

static void test_priority_failover_when_all_ejected(void **state)
{
    (void)state;
    struct eds *e = two_priorities(XLB_HEALTH_HEALTHY);
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    const bool ejected[4] = {true, true, false, false};
    struct vip1 v;
    vip_one(&v, compile("web", &cfg, e, ejected, 1));
    assert_int_equal(v.leaves[0]->chosen_priority, 1);
    assert_all_in_priority(&v, 1);
    vip_done(&v);
    free(e);
}

/* Draining endpoints cannot take new picks, so an all-DRAINING priority 0 fails over too. */
static void test_priority_failover_when_all_draining(void **state)
{
    (void)state;
    struct eds *e = two_priorities(XLB_HEALTH_DRAINING);
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    struct vip1 v;
    vip_one(&v, compile("web", &cfg, e, NULL, 1));
    assert_int_equal(v.leaves[0]->chosen_priority, 1);
    assert_all_in_priority(&v, 1);
    vip_done(&v);
    free(e);
}

static void test_no_usable_endpoint(void **state)
{
    (void)state;
    struct eds *e = two_priorities(XLB_HEALTH_HEALTHY);
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    const bool ejected[4] = {true, true, true, true};
    struct vip1 v;
    vip_one(&v, compile("web", &cfg, e, ejected, 1));
    struct xlb_worker_load *load = calloc(1, sizeof(*load));
    assert_non_null(load);
    struct xlb_lb_worker w;
    worker(&w, load, NULL, 0);
    for (uint32_t i = 0; i < 10; i++) {
        struct xlb_lb_trace t;
        assert_int_equal(pick(&v, &w, i, NULL, &t), XLB_LB_NO_ENDPOINT);
        assert_int_equal(t.outcome, XLB_LB_NO_ENDPOINT);
        assert_int_equal(t.endpoint, XLB_PICK_NONE);
        assert_int_equal(t.priority, XLB_PICK_NONE);
        assert_ptr_equal(t.cluster, v.leaves[0]);
    }
    assert_int_equal(load->clusters[1].started, 0); /* nothing was started */
    xlb_lb_worker_fini(&w);
    free(load);
    vip_done(&v);

    /* No assignment at all behaves the same. */
    vip_one(&v, compile("web", &cfg, NULL, NULL, 1));
    worker(&w, NULL, NULL, 0);
    struct xlb_lb_trace t;
    assert_int_equal(pick(&v, &w, 1, NULL, &t), XLB_LB_NO_ENDPOINT);
    xlb_lb_worker_fini(&w);
    vip_done(&v);
    free(e);
}

/* ---- A55: DRAINING ---- */

/* One locality: .1 HEALTHY, .2 DRAINING, .3 UNKNOWN. */
static struct eds *with_draining(void)
{
    struct eds *e = eds_new();
    eds_priority(e);
    eds_locality(e, 1);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.2:80", 1, XLB_HEALTH_DRAINING);
    eds_endpoint(e, "198.18.0.3:80", 1, XLB_HEALTH_UNKNOWN);
    return e;
}

static void test_draining_never_picked(void **state)
{
    (void)state;
    struct eds *e = with_draining();
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    struct vip1 v;
    vip_one(&v, compile("web", &cfg, e, NULL, 1));
    struct xlb_lb_worker w;
    worker(&w, NULL, NULL, 0);
    uint32_t count[3] = {0};
    for (uint32_t i = 0; i < 3000; i++) {
        struct xlb_lb_trace t;
        assert_int_equal(pick(&v, &w, i, NULL, &t), XLB_LB_PICKED);
        count[t.endpoint]++;
    }
    assert_int_equal(count[1], 0);
    assert_int_equal(count[0], 1500);
    assert_int_equal(count[2], 1500);
    xlb_lb_worker_fini(&w);
    vip_done(&v);
    free(e);
}

static void test_draining_session_default_status_falls_back(void **state)
{
    (void)state;
    struct eds *e = with_draining();
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    struct vip1 v;
    vip_one(&v, compile("web", &cfg, e, NULL, 1));
    struct xlb_lb_worker w;
    worker(&w, NULL, NULL, 0);
    struct xlb_lb_session s = session_of(NULL, "198.18.0.2:80", NULL);
    for (uint32_t i = 0; i < 100; i++) {
        struct xlb_lb_trace t;
        assert_int_equal(pick(&v, &w, i, &s, &t), XLB_LB_PICKED);
        assert_int_equal(t.override, XLB_LB_OVERRIDE_STATUS);
        assert_int_not_equal(t.endpoint, 1);
    }
    xlb_lb_worker_fini(&w);
    vip_done(&v);
    free(e);
}

static void test_draining_session_used_when_allowed(void **state)
{
    (void)state;
    struct eds *e = with_draining();
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    cfg.override_host_status |= XLB_HEALTH_BIT(XLB_HEALTH_DRAINING);
    struct vip1 v;
    vip_one(&v, compile("web", &cfg, e, NULL, 1));
    struct xlb_worker_load *load = calloc(1, sizeof(*load));
    assert_non_null(load);
    struct xlb_lb_worker w;
    worker(&w, load, NULL, 0);
    struct xlb_lb_session s = session_of(NULL, "198.18.0.2:80", NULL);
    for (uint32_t i = 0; i < 100; i++) {
        struct xlb_lb_trace t;
        assert_int_equal(pick(&v, &w, i, &s, &t), XLB_LB_PICKED);
        assert_int_equal(t.override, XLB_LB_OVERRIDE_USED);
        assert_int_equal(t.endpoint, 1);
        assert_int_equal(t.slot, ENDPOINT_SLOT_BASE + 1);
    }
    assert_int_equal(load->endpoints[ENDPOINT_SLOT_BASE + 1].session_picks, 100);
    /* Normal picks still never reach it. */
    for (uint32_t i = 0; i < 100; i++) {
        struct xlb_lb_trace t;
        assert_int_equal(pick(&v, &w, i, NULL, &t), XLB_LB_PICKED);
        assert_int_not_equal(t.endpoint, 1);
    }
    assert_int_equal(load->endpoints[ENDPOINT_SLOT_BASE].session_picks, 0);
    xlb_lb_worker_fini(&w);
    free(load);
    vip_done(&v);
    free(e);
}

/* ---- A55/A60/A61/A75: override host across priorities ---- */

/*
 * Priority 0: .1, .2; priority 1: .3 (also [2001:2::3]:80) and .4. Endpoint .1 ejected when
 * eject_first.
 */
static struct eds *override_vip(struct vip1 *v, bool eject_first)
{
    struct eds *e = eds_new();
    eds_priority(e);
    eds_locality(e, 1);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.2:80", 1, XLB_HEALTH_HEALTHY);
    eds_priority(e);
    eds_locality(e, 1);
    eds_endpoint(e, "198.18.0.3:80", 1, XLB_HEALTH_HEALTHY);
    eds_address(e, "[2001:2::3]:80");
    eds_endpoint(e, "198.18.0.4:80", 1, XLB_HEALTH_UNKNOWN);
    const bool ejected[4] = {eject_first, false, false, false};
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    vip_one(v, compile("web", &cfg, e, ejected, 1));
    return e;
}

static void test_override_other_priority_used(void **state)
{
    (void)state;
    struct vip1 v;
    struct eds *e = override_vip(&v, false);
    struct xlb_lb_worker w;
    worker(&w, NULL, NULL, 0);
    struct xlb_lb_session s = session_of(NULL, "198.18.0.4:80", NULL);
    for (uint32_t i = 0; i < 50; i++) {
        struct xlb_lb_trace t;
        assert_int_equal(pick(&v, &w, i, &s, &t), XLB_LB_PICKED);
        assert_int_equal(t.override, XLB_LB_OVERRIDE_USED);
        assert_int_equal(t.endpoint, 3);
        assert_int_equal(t.priority, 1);
        /* ... while a request without the session goes to priority 0. */
        assert_int_equal(pick(&v, &w, i, NULL, &t), XLB_LB_PICKED);
        assert_int_equal(t.override, XLB_LB_OVERRIDE_NONE);
        assert_int_equal(t.priority, 0);
    }
    xlb_lb_worker_fini(&w);
    vip_done(&v);
    free(e);
}

static void test_override_ejected_falls_back(void **state)
{
    (void)state;
    struct vip1 v;
    struct eds *e = override_vip(&v, true);
    struct xlb_lb_worker w;
    worker(&w, NULL, NULL, 0);
    struct xlb_lb_session s = session_of(NULL, "198.18.0.1:80", NULL);
    for (uint32_t i = 0; i < 50; i++) {
        struct xlb_lb_trace t;
        assert_int_equal(pick(&v, &w, i, &s, &t), XLB_LB_PICKED);
        assert_int_equal(t.override, XLB_LB_OVERRIDE_UNUSABLE);
        assert_int_equal(t.endpoint, 1); /* the only usable one of priority 0 */
    }
    xlb_lb_worker_fini(&w);
    vip_done(&v);
    free(e);
}

static void test_override_unknown_address(void **state)
{
    (void)state;
    struct vip1 v;
    struct eds *e = override_vip(&v, false);
    struct xlb_lb_worker w;
    worker(&w, NULL, NULL, 0);
    /* Same IP as an endpoint but another port, and an address nobody has. */
    const char *unknown[] = {"198.18.0.1:81", "198.18.9.9:80", "[2001:2::9]:80"};
    for (uint32_t i = 0; i < 3; i++) {
        struct xlb_lb_session s = session_of(NULL, unknown[i], NULL);
        struct xlb_lb_trace t;
        assert_int_equal(pick(&v, &w, i, &s, &t), XLB_LB_PICKED);
        assert_int_equal(t.override, XLB_LB_OVERRIDE_UNKNOWN);
        assert_int_equal(t.priority, 0);
    }
    /* An empty session is no session. */
    struct xlb_lb_session none = {0};
    struct xlb_lb_trace t;
    assert_int_equal(pick(&v, &w, 0, &none, &t), XLB_LB_PICKED);
    assert_int_equal(t.override, XLB_LB_OVERRIDE_NONE);
    xlb_lb_worker_fini(&w);
    vip_done(&v);
    free(e);
}

static void test_override_cookie_cluster(void **state)
{
    (void)state;
    struct vip1 v;
    struct eds *e = override_vip(&v, false);
    struct xlb_lb_worker w;
    worker(&w, NULL, NULL, 0);
    struct xlb_lb_trace t;
    struct xlb_lb_session other = session_of("api", "198.18.0.4:80", NULL);
    for (uint32_t i = 0; i < 20; i++) {
        assert_int_equal(pick(&v, &w, i, &other, &t), XLB_LB_PICKED);
        assert_int_equal(t.override, XLB_LB_OVERRIDE_OTHER_CLUSTER);
        assert_int_equal(t.priority, 0);
    }
    /* A prefix of the name is another cluster too. */
    struct xlb_lb_session prefix = session_of("we", "198.18.0.4:80", NULL);
    assert_int_equal(pick(&v, &w, 0, &prefix, &t), XLB_LB_PICKED);
    assert_int_equal(t.override, XLB_LB_OVERRIDE_OTHER_CLUSTER);
    struct xlb_lb_session same = session_of("web", "198.18.0.4:80", NULL);
    assert_int_equal(pick(&v, &w, 0, &same, &t), XLB_LB_PICKED);
    assert_int_equal(t.override, XLB_LB_OVERRIDE_USED);
    assert_int_equal(t.endpoint, 3);
    xlb_lb_worker_fini(&w);
    vip_done(&v);
    free(e);
}

static void test_override_second_address(void **state)
{
    (void)state;
    struct vip1 v;
    struct eds *e = override_vip(&v, false);
    struct xlb_lb_worker w;
    worker(&w, NULL, NULL, 0);
    struct xlb_lb_trace t;
    struct xlb_lb_session v6 = session_of(NULL, "[2001:2::3]:80", NULL);
    assert_int_equal(pick(&v, &w, 0, &v6, &t), XLB_LB_PICKED);
    assert_int_equal(t.override, XLB_LB_OVERRIDE_USED);
    assert_int_equal(t.endpoint, 2);
    assert_int_equal(t.priority, 1);
    /* An address the cluster does not know is skipped; the next one decides. */
    struct xlb_lb_session list = session_of(NULL, "198.18.9.9:80", "[2001:2::3]:80", NULL);
    assert_int_equal(pick(&v, &w, 0, &list, &t), XLB_LB_PICKED);
    assert_int_equal(t.override, XLB_LB_OVERRIDE_USED);
    assert_int_equal(t.endpoint, 2);
    /* The endpoint's address for connecting stays its first one. */
    char text[XLB_HOST_PORT_STRLEN];
    assert_true(xlb_host_port_format(&v.leaves[0]->endpoints[2].where, text, sizeof(text)) > 0);
    assert_string_equal(text, "198.18.0.3:80");
    xlb_lb_worker_fini(&w);
    vip_done(&v);
    free(e);
}

/* ---- A75: aggregate ---- */

static struct xlb_lb_cluster *leaf(const char *name, const char *a, const char *b, bool down)
{
    struct eds *e = eds_new();
    eds_priority(e);
    eds_locality(e, 1);
    eds_endpoint(e, a, 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, b, 1, XLB_HEALTH_HEALTHY);
    const bool ejected[2] = {down, down};
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    cfg.name = (char *)name;
    struct xlb_lb_cluster *c = compile(name, &cfg, e, ejected, 2);
    free(e);
    return c;
}

static void assert_leaf_takes_all(struct vip1 *v, uint32_t leaf_index)
{
    struct xlb_lb_worker w;
    worker(&w, NULL, NULL, 0);
    for (uint32_t i = 0; i < 500; i++) {
        struct xlb_lb_trace t;
        assert_int_equal(pick(v, &w, i, NULL, &t), XLB_LB_PICKED);
        assert_ptr_equal(t.cluster, v->leaves[leaf_index]);
        assert_int_equal(t.target, 0);
    }
    xlb_lb_worker_fini(&w);
}

static void test_aggregate_failover_and_recovery(void **state)
{
    (void)state;
    struct vip1 v;
    struct xlb_lb_cluster *leaves[2] = {
        leaf("primary", "198.18.0.1:80", "198.18.0.2:80", false),
        leaf("secondary", "198.18.1.1:80", "198.18.1.2:80", false),
    };
    vip_init(&v, "agg", leaves, 2);
    assert_leaf_takes_all(&v, 0);

    /* The first leaf loses every usable endpoint: the second takes every pick. */
    xlb_lb_cluster_release(v.leaves[0]);
    v.leaves[0] = leaf("primary", "198.18.0.1:80", "198.18.0.2:80", true);
    assert_leaf_takes_all(&v, 1);

    /* It recovers: it takes them again. */
    xlb_lb_cluster_release(v.leaves[0]);
    v.leaves[0] = leaf("primary", "198.18.0.1:80", "198.18.0.2:80", false);
    assert_leaf_takes_all(&v, 0);

    /* Both down: the last leaf decides, and has nothing. */
    xlb_lb_cluster_release(v.leaves[0]);
    xlb_lb_cluster_release(v.leaves[1]);
    v.leaves[0] = leaf("primary", "198.18.0.1:80", "198.18.0.2:80", true);
    v.leaves[1] = leaf("secondary", "198.18.1.1:80", "198.18.1.2:80", true);
    struct xlb_lb_worker w;
    worker(&w, NULL, NULL, 0);
    struct xlb_lb_trace t;
    assert_int_equal(pick(&v, &w, 0, NULL, &t), XLB_LB_NO_ENDPOINT);
    assert_ptr_equal(t.cluster, v.leaves[1]);
    xlb_lb_worker_fini(&w);

    /* A target that is not ready fails every pick. */
    v.target.ready = false;
    assert_int_equal(pick(&v, &w, 0, NULL, &t), XLB_LB_NOT_READY);
    v.target.ready = true;
    vip_done(&v);
}

/* ---- drop overloads ---- */

static struct eds *one_locality(void)
{
    struct eds *e = eds_new();
    eds_priority(e);
    eds_locality(e, 1);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.2:80", 1, XLB_HEALTH_HEALTHY);
    return e;
}

static void test_drop_ten_percent(void **state)
{
    (void)state;
    struct eds *e = one_locality();
    eds_drop(e, "lb", 100000);
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    struct vip1 v;
    vip_one(&v, compile("web", &cfg, e, NULL, 3));
    uint32_t slot = drop_slot_of("lb");
    struct xlb_worker_load *load = calloc(1, sizeof(*load));
    assert_non_null(load);
    struct xlb_lb_worker w;
    worker(&w, load, NULL, 0);
    const uint32_t n = 100000;
    uint64_t dropped = 0, picked = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct xlb_lb_trace t;
        enum xlb_lb_outcome o = pick(&v, &w, i, NULL, &t);
        if (o == XLB_LB_DROPPED) {
            dropped++;
            assert_non_null(t.drop_category);
            assert_string_equal(t.drop_category, "lb");
            assert_int_equal(t.endpoint, XLB_PICK_NONE);
        } else {
            assert_int_equal(o, XLB_LB_PICKED);
            assert_null(t.drop_category);
            picked++;
        }
    }
    assert_binomial(dropped, n, 0.1);
    assert_int_equal(load->drops[slot], dropped);
    assert_int_equal(load->clusters[3].started, picked);
    assert_int_equal(load->clusters[3].circuit_dropped, 0);
    xlb_lb_worker_fini(&w);
    free(load);
    vip_done(&v);
    free(e);
}

/* Categories draw in order: 10% "a", then 20% of the rest "b". */
static void test_drop_two_categories_in_order(void **state)
{
    (void)state;
    struct eds *e = one_locality();
    eds_drop(e, "a", 100000);
    eds_drop(e, "b", 200000);
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    struct vip1 v;
    vip_one(&v, compile("web", &cfg, e, NULL, 3));
    uint32_t slot_a = drop_slot_of("a"), slot_b = drop_slot_of("b");
    assert_int_not_equal(slot_a, slot_b);
    struct xlb_worker_load *load = calloc(1, sizeof(*load));
    assert_non_null(load);
    struct xlb_lb_worker w;
    worker(&w, load, NULL, 0);
    const uint32_t n = 100000;
    uint64_t a = 0, b = 0, picked = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct xlb_lb_trace t;
        if (pick(&v, &w, i, NULL, &t) == XLB_LB_PICKED) {
            picked++;
            continue;
        }
        assert_int_equal(t.outcome, XLB_LB_DROPPED);
        if (strcmp(t.drop_category, "a") == 0)
            a++;
        else if (strcmp(t.drop_category, "b") == 0)
            b++;
        else
            fail_msg("category %s", t.drop_category);
    }
    assert_binomial(a, n, 0.1);
    assert_binomial(b, n, 0.9 * 0.2);
    assert_binomial(picked, n, 0.9 * 0.8);
    assert_int_equal(load->drops[slot_a], a);
    assert_int_equal(load->drops[slot_b], b);
    xlb_lb_worker_fini(&w);
    free(load);
    vip_done(&v);
    free(e);
}

static void test_drop_everything(void **state)
{
    (void)state;
    struct eds *e = one_locality();
    eds_drop(e, "all", 1000000);
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    struct vip1 v;
    vip_one(&v, compile("web", &cfg, e, NULL, 3));
    uint32_t slot = drop_slot_of("all");
    struct xlb_worker_load *load = calloc(1, sizeof(*load));
    assert_non_null(load);
    struct xlb_lb_worker w;
    worker(&w, load, NULL, 0);
    /* Even a session to a healthy endpoint is dropped: drops come first. */
    struct xlb_lb_session s = session_of(NULL, "198.18.0.1:80", NULL);
    for (uint32_t i = 0; i < 10000; i++) {
        struct xlb_lb_trace t;
        assert_int_equal(pick(&v, &w, i, i % 2 ? &s : NULL, &t), XLB_LB_DROPPED);
        assert_string_equal(t.drop_category, "all");
    }
    assert_int_equal(load->drops[slot], 10000);
    assert_int_equal(load->clusters[3].started, 0);
    xlb_lb_worker_fini(&w);
    free(load);
    vip_done(&v);
    free(e);
}

/* ---- circuit breaker ---- */

static void test_circuit_breaker(void **state)
{
    (void)state;
    struct eds *e = one_locality();
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    cfg.max_requests = 2;
    const uint32_t cs = 5;
    struct vip1 v;
    vip_one(&v, compile("web", &cfg, e, NULL, cs));
    struct xlb_worker_load *loads = calloc(2, sizeof(*loads));
    assert_non_null(loads);
    struct xlb_lb_worker w;
    worker(&w, &loads[0], loads, 2);
    struct xlb_lb_trace t;

    loads[0].clusters[cs].started = 2;
    assert_int_equal(pick(&v, &w, 0, NULL, &t), XLB_LB_CIRCUIT_OPEN);
    assert_int_equal(t.endpoint, XLB_PICK_NONE);
    assert_int_equal(loads[0].clusters[cs].circuit_dropped, 1);

    /* One finishes: one more fits, and that pick fills the breaker again. */
    loads[0].clusters[cs].finished = 1;
    assert_int_equal(pick(&v, &w, 1, NULL, &t), XLB_LB_PICKED);
    assert_int_equal(loads[0].clusters[cs].started, 3);
    assert_int_equal(pick(&v, &w, 2, NULL, &t), XLB_LB_CIRCUIT_OPEN);

    /* One in flight: picked. */
    loads[0].clusters[cs].started = 1;
    loads[0].clusters[cs].finished = 0;
    assert_int_equal(pick(&v, &w, 3, NULL, &t), XLB_LB_PICKED);

    /* In flight is summed over every worker. */
    loads[0].clusters[cs].started = 1;
    loads[1].clusters[cs].started = 1;
    assert_int_equal(pick(&v, &w, 4, NULL, &t), XLB_LB_CIRCUIT_OPEN);
    /* A session does not get past an open breaker either. */
    struct xlb_lb_session s = session_of(NULL, "198.18.0.1:80", NULL);
    assert_int_equal(pick(&v, &w, 5, &s, &t), XLB_LB_CIRCUIT_OPEN);
    assert_int_equal(loads[0].clusters[cs].circuit_dropped, 4);
    assert_int_equal(loads[1].clusters[cs].circuit_dropped, 0); /* counted by the picker only */
    xlb_lb_worker_fini(&w);

    /* Another cluster slot's requests do not count. */
    memset(loads, 0, 2 * sizeof(*loads));
    loads[1].clusters[cs + 1].started = 100;
    worker(&w, &loads[0], loads, 2);
    assert_int_equal(pick(&v, &w, 6, NULL, &t), XLB_LB_PICKED);
    xlb_lb_worker_fini(&w);
    vip_done(&v);

    /* max_requests 0: no limit. */
    cfg.max_requests = 0;
    vip_one(&v, compile("web", &cfg, e, NULL, cs));
    loads[0].clusters[cs].started = 1000000;
    worker(&w, &loads[0], loads, 2);
    assert_int_equal(pick(&v, &w, 7, NULL, &t), XLB_LB_PICKED);
    xlb_lb_worker_fini(&w);
    vip_done(&v);
    free(loads);
    free(e);
}

/* ---- A42: ring hash ---- */

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
    struct eds *e = eds_new();
    eds_priority(e);
    eds_locality(e, 1);
    for (uint32_t i = 0; i < n; i++) {
        char addr[32];
        snprintf(addr, sizeof(addr), "198.18.2.%u:443", i + 1);
        eds_endpoint(e, addr, 1, i == draining ? XLB_HEALTH_DRAINING : XLB_HEALTH_HEALTHY);
    }
    return e;
}

static void test_ring_hash_same_hash_same_endpoint(void **state)
{
    (void)state;
    struct eds *e = ring_eds(5, UINT32_MAX);
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_RING_HASH);
    struct vip1 v;
    vip_one(&v, compile("web", &cfg, e, NULL, 1));
    struct xlb_lb_worker w;
    worker(&w, NULL, NULL, 0);
    struct xlb_rng rng;
    xlb_rng_seed(&rng, SEED);
    uint32_t first[200], seen[5] = {0};
    uint64_t ids[200];
    for (uint32_t i = 0; i < 200; i++) {
        ids[i] = xlb_rng_next(&rng);
        struct xlb_lb_trace t;
        assert_int_equal(pick(&v, &w, ids[i], NULL, &t), XLB_LB_PICKED);
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
            struct xlb_lb_trace t;
            assert_int_equal(pick(&v, &w, xlb_rng_next(&rng), NULL, &t), XLB_LB_PICKED);
            assert_int_equal(pick(&v, &w, ids[i], NULL, &t), XLB_LB_PICKED);
            assert_int_equal(t.endpoint, first[i]);
        }
    /* Another worker (other seed, own cursors) agrees. */
    struct xlb_lb_worker w2;
    assert_int_equal(xlb_lb_worker_init(&w2, SEED + 1, NULL, NULL, 0), 0);
    for (uint32_t i = 0; i < 200; i++) {
        struct xlb_lb_trace t;
        assert_int_equal(pick(&v, &w2, ids[i], NULL, &t), XLB_LB_PICKED);
        assert_int_equal(t.endpoint, first[i]);
    }
    xlb_lb_worker_fini(&w2);
    xlb_lb_worker_fini(&w);
    vip_done(&v);
    free(e);
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
    struct eds *e = ring_eds(4, 1);
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_RING_HASH);
    struct vip1 v;
    vip_one(&v, compile("web", &cfg, e, NULL, 1));
    const struct xlb_lb_cluster *c = v.leaves[0];
    struct xlb_lb_worker w;
    worker(&w, NULL, NULL, 0);
    struct xlb_rng rng;
    xlb_rng_seed(&rng, SEED ^ 7);
    uint32_t count[4] = {0};
    const uint32_t n = 6000;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t id = xlb_rng_next(&rng);
        struct xlb_lb_trace t;
        assert_int_equal(pick(&v, &w, id, NULL, &t), XLB_LB_PICKED);
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
    xlb_lb_worker_fini(&w);
    vip_done(&v);
    free(e);
}

/* A session overrides the ring too. */
static void test_ring_hash_session_override(void **state)
{
    (void)state;
    struct eds *e = ring_eds(4, UINT32_MAX);
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_RING_HASH);
    struct vip1 v;
    vip_one(&v, compile("web", &cfg, e, NULL, 1));
    struct xlb_lb_worker w;
    worker(&w, NULL, NULL, 0);
    struct xlb_lb_session s = session_of(NULL, "198.18.2.3:443", NULL);
    for (uint64_t id = 0; id < 200; id++) {
        struct xlb_lb_trace t;
        assert_int_equal(pick(&v, &w, id * 0x9e3779b97f4a7c15u, &s, &t), XLB_LB_PICKED);
        assert_int_equal(t.override, XLB_LB_OVERRIDE_USED);
        assert_int_equal(t.endpoint, 2);
    }
    xlb_lb_worker_fini(&w);
    vip_done(&v);
    free(e);
}

/* ---- session cookie decode ---- */

static int decode(const char *value, struct xlb_lb_session *out, char *scratch)
{
    return xlb_lb_session_decode(value, (uint32_t)strlen(value), scratch, XLB_LB_COOKIE_MAX, out);
}

/* base64 of text, as a cookie value. */
static void b64(const char *text, char *out, size_t cap)
{
    assert_true(4 * ((strlen(text) + 2) / 3) + 1 <= cap);
    EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)text, (int)strlen(text));
}

static void assert_hp(const struct xlb_host_port *got, const char *want)
{
    char text[XLB_HOST_PORT_STRLEN];
    assert_true(xlb_host_port_format(got, text, sizeof(text)) > 0);
    assert_string_equal(text, want);
}

static void test_session_decode_valid(void **state)
{
    (void)state;
    char scratch[XLB_LB_COOKIE_MAX], value[256];
    struct xlb_lb_session s;

    assert_int_equal(decode("MTk4LjE4LjAuMjE6ODA4MA==", &s, scratch), 0); /* 198.18.0.21:8080 */
    assert_int_equal(s.n_addresses, 1);
    assert_hp(&s.addresses[0], "198.18.0.21:8080");
    assert_null(s.cluster);
    assert_int_equal(s.cluster_len, 0);

    b64("198.18.0.21:8080;web", value, sizeof(value));
    assert_string_equal(value, "MTk4LjE4LjAuMjE6ODA4MDt3ZWI=");
    assert_int_equal(decode(value, &s, scratch), 0);
    assert_int_equal(s.n_addresses, 1);
    assert_hp(&s.addresses[0], "198.18.0.21:8080");
    assert_non_null(s.cluster);
    assert_int_equal(s.cluster_len, 3);
    assert_memory_equal(s.cluster, "web", 3);

    b64("198.18.0.21:8080,[2001:2::21]:8080", value, sizeof(value));
    assert_int_equal(decode(value, &s, scratch), 0);
    assert_int_equal(s.n_addresses, 2);
    assert_hp(&s.addresses[0], "198.18.0.21:8080");
    assert_hp(&s.addresses[1], "[2001:2::21]:8080");
    assert_null(s.cluster);

    /* No padding needed (a multiple of three bytes), IPv6 only, with a cluster. */
    b64("[2001:2::7]:443;backend-v2", value, sizeof(value));
    assert_int_equal(decode(value, &s, scratch), 0);
    assert_int_equal(s.n_addresses, 1);
    assert_hp(&s.addresses[0], "[2001:2::7]:443");
    assert_int_equal(s.cluster_len, strlen("backend-v2"));
    assert_memory_equal(s.cluster, "backend-v2", s.cluster_len);

    /* A decoded session finds its endpoint through a pick. */
    struct eds *e = eds_new();
    eds_priority(e);
    eds_locality(e, 1);
    eds_endpoint(e, "198.18.0.20:8080", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.21:8080", 1, XLB_HEALTH_HEALTHY);
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    struct vip1 v;
    vip_one(&v, compile("web", &cfg, e, NULL, 1));
    struct xlb_lb_worker w;
    worker(&w, NULL, NULL, 0);
    b64("198.18.0.21:8080;web", value, sizeof(value));
    assert_int_equal(decode(value, &s, scratch), 0);
    for (uint32_t i = 0; i < 10; i++) {
        struct xlb_lb_trace t;
        assert_int_equal(pick(&v, &w, i, &s, &t), XLB_LB_PICKED);
        assert_int_equal(t.override, XLB_LB_OVERRIDE_USED);
        assert_int_equal(t.endpoint, 1);
    }
    xlb_lb_worker_fini(&w);
    vip_done(&v);
    free(e);
}

static void test_session_decode_malformed(void **state)
{
    (void)state;
    char scratch[XLB_LB_COOKIE_MAX], value[256];
    struct xlb_lb_session s;

    /* Not base64 / wrong length / empty. */
    assert_int_equal(decode("!!!!", &s, scratch), -EINVAL);
    assert_int_equal(decode("MTk4LjE4LjAuMjE6ODA4MA=", &s, scratch), -EINVAL);
    assert_int_equal(decode("MTk4LjE4LjAuMjE6ODA4MA", &s, scratch), -EINVAL);
    assert_int_equal(decode("MTk4LjE4Lj@uMjE6ODA4MA==", &s, scratch), -EINVAL);
    assert_int_equal(xlb_lb_session_decode("", 0, scratch, sizeof(scratch), &s), -EINVAL);
    assert_int_equal(decode("====", &s, scratch), -EINVAL);

    static const char *const bad[] = {
        "198.18.0.21:0",     /* port 0 */
        "198.18.0.21:8080,", /* trailing comma */
        "198.18.0.21:8080;", /* ';' with an empty cluster */
        ";web",              /* no address */
        ",198.18.0.21:8080", /* leading comma */
        "198.18.0.21",       /* no port */
        "198.18.0.21:65536", /* port out of range */
        "198.18.0.21:080",   /* leading zero */
        "2001:2::21:8080",   /* IPv6 without brackets */
        "198.18.0.21:8080 ", /* trailing space */
        "web",               /* not an address */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        b64(bad[i], value, sizeof(value));
        s.n_addresses = 77;
        if (decode(value, &s, scratch) != -EINVAL)
            fail_msg("accepted base64(\"%s\")", bad[i]);
        assert_int_equal(s.n_addresses, 0);
        assert_null(s.cluster);
    }
    /* A NUL inside the cluster name. */
    static const char nul_cluster[] = "198.18.0.21:8080;w\0b";
    EVP_EncodeBlock((unsigned char *)value, (const unsigned char *)nul_cluster,
                    (int)sizeof(nul_cluster) - 1);
    assert_int_equal(decode(value, &s, scratch), -EINVAL);
    assert_int_equal(s.n_addresses, 0);

    /* More addresses than a cookie may carry. */
    char many[512] = "";
    for (uint32_t i = 0; i <= XLB_HOST_PORT_LIST_MAX; i++) {
        char one[32];
        snprintf(one, sizeof(one), "%s198.18.0.%u:80", i ? "," : "", i + 1);
        strcat(many, one);
    }
    char many64[1024];
    EVP_EncodeBlock((unsigned char *)many64, (const unsigned char *)many, (int)strlen(many));
    assert_int_equal(
        xlb_lb_session_decode(many64, (uint32_t)strlen(many64), scratch, sizeof(scratch), &s),
        -EINVAL);

    /* A scratch buffer shorter than the value is refused, not overrun. */
    char small[8];
    assert_int_equal(
        xlb_lb_session_decode("MTk4LjE4LjAuMjE6ODA4MA==", 24, small, sizeof(small), &s), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weighted_localities),
        cmocka_unit_test(test_round_robin_in_turn_ignores_weights),
        cmocka_unit_test(test_round_robin_skips_ejected),
        cmocka_unit_test(test_priority_0_preferred),
        cmocka_unit_test(test_priority_failover_when_all_ejected),
        cmocka_unit_test(test_priority_failover_when_all_draining),
        cmocka_unit_test(test_no_usable_endpoint),
        cmocka_unit_test(test_draining_never_picked),
        cmocka_unit_test(test_draining_session_default_status_falls_back),
        cmocka_unit_test(test_draining_session_used_when_allowed),
        cmocka_unit_test(test_override_other_priority_used),
        cmocka_unit_test(test_override_ejected_falls_back),
        cmocka_unit_test(test_override_unknown_address),
        cmocka_unit_test(test_override_cookie_cluster),
        cmocka_unit_test(test_override_second_address),
        cmocka_unit_test(test_aggregate_failover_and_recovery),
        cmocka_unit_test(test_drop_ten_percent),
        cmocka_unit_test(test_drop_two_categories_in_order),
        cmocka_unit_test(test_drop_everything),
        cmocka_unit_test(test_circuit_breaker),
        cmocka_unit_test(test_ring_hash_same_hash_same_endpoint),
        cmocka_unit_test(test_ring_hash_ejected_walks_to_next),
        cmocka_unit_test(test_ring_hash_l4_connection_id),
        cmocka_unit_test(test_ring_hash_session_override),
        cmocka_unit_test(test_session_decode_valid),
        cmocka_unit_test(test_session_decode_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
