/*
 * Pick first (A62) through the LB tree: a cluster compiled from PICK_FIRST sends every pick of
 * a worker to the first usable endpoint of its priority (localities in order), stays there,
 * and moves on only when that endpoint fails; with connectivity (the L7 stream mode) a
 * TRANSIENT_FAILURE endpoint is passed over and one still connecting is waited for. Each
 * worker holds its own choice. shuffle_address_list shuffles the list at compile time.
 */
#include "lb_test.h"
#include "xlb_lb_connectivity.h"

#define T0 1000000u

static struct xlb_cluster_config pick_first(bool shuffle)
{
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_PICK_FIRST);
    cfg.shuffle_address_list = shuffle;
    return cfg;
}

/* Two localities (the second has the higher weight: pick first ignores weights). */
static struct eds *two_localities(void)
{
    struct eds *e = eds_one_locality(1);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.2:80", 1, XLB_HEALTH_HEALTHY);
    eds_locality(e, 100);
    eds_endpoint(e, "198.18.0.3:80", 1, XLB_HEALTH_HEALTHY);
    return e;
}

static void test_all_on_first(void **state)
{
    (void)state;
    struct xlb_cluster_config cfg = pick_first(false);
    struct fixture f;
    fixture_start(&f, two_localities(), &cfg, NULL, 1, true);
    assert_int_equal(f.v.leaves[0]->policy, XLB_LB_POLICY_PICK_FIRST);
    for (uint32_t i = 0; i < 50; i++)
        assert_int_equal(pick_ok(&f, i, NULL).endpoint, 0);
    assert_int_equal(f.load->clusters[1].started, 50);
    fixture_done(&f);
}

/* Outlier detection ejected the first endpoint (and a draining one is no candidate). */
static void test_ejected_and_draining_passed_over(void **state)
{
    (void)state;
    struct eds *e = eds_one_locality(1);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.2:80", 1, XLB_HEALTH_DRAINING);
    eds_endpoint(e, "198.18.0.3:80", 1, XLB_HEALTH_HEALTHY);
    const bool ejected[] = {true, false, false};
    struct xlb_cluster_config cfg = pick_first(false);
    struct fixture f;
    fixture_start(&f, e, &cfg, ejected, 1, false);
    for (uint32_t i = 0; i < 10; i++)
        assert_int_equal(pick_ok(&f, i, NULL).endpoint, 2);
    fixture_done(&f);
}

static enum xlb_lb_outcome pick_conn(struct fixture *f, struct xlb_lb_worker *w,
                                     struct xlb_lb_trace *t)
{
    struct xlb_lb_request req = {.connection_id = 1, .connectivity = true, .now_ms = T0};
    return xlb_lb_pick(&f->v.vip, &req, w, t);
}

static uint32_t picked(struct fixture *f, struct xlb_lb_worker *w)
{
    struct xlb_lb_trace t;
    assert_int_equal(pick_conn(f, w, &t), XLB_LB_PICKED);
    return t.endpoint;
}

static void set(struct xlb_lb_worker *w, uint32_t endpoint, enum xlb_connectivity s)
{
    xlb_lb_connectivity_set(w, ENDPOINT_SLOT_BASE + endpoint, s, T0);
}

/* Over subchannels: the first endpoint is waited for while it connects although the others
 * are READY; its failure moves the worker on, and its recovery does not move it back. */
static void test_connectivity_sticky(void **state)
{
    (void)state;
    struct xlb_cluster_config cfg = pick_first(false);
    struct fixture f;
    fixture_start(&f, two_localities(), &cfg, NULL, 1, false);
    assert_int_equal(xlb_lb_connectivity_init(&f.w), 0);
    set(&f.w, 0, XLB_CONN_CONNECTING);
    set(&f.w, 1, XLB_CONN_READY);
    set(&f.w, 2, XLB_CONN_READY);
    struct xlb_lb_trace t;
    assert_int_equal(pick_conn(&f, &f.w, &t), XLB_LB_QUEUE);
    assert_int_equal(t.endpoint, 0); /* the engine connects it */
    set(&f.w, 0, XLB_CONN_READY);
    for (int i = 0; i < 5; i++)
        assert_int_equal(picked(&f, &f.w), 0);
    set(&f.w, 0, XLB_CONN_TRANSIENT_FAILURE);
    assert_int_equal(picked(&f, &f.w), 1);
    set(&f.w, 0, XLB_CONN_READY);
    assert_int_equal(picked(&f, &f.w), 1);
    set(&f.w, 1, XLB_CONN_TRANSIENT_FAILURE);
    assert_int_equal(picked(&f, &f.w), 2); /* the next in order, across localities */
    set(&f.w, 2, XLB_CONN_TRANSIENT_FAILURE);
    assert_int_equal(picked(&f, &f.w), 0); /* wraps */
    fixture_done(&f);
}

/* Nothing READY yet: the priority waits, and the trace still names the one endpoint pick first
 * tries, so that the engine connects that one alone (A62), not the whole priority. */
static void test_connects_one_at_a_time(void **state)
{
    (void)state;
    struct xlb_cluster_config cfg = pick_first(false);
    struct fixture f;
    fixture_start(&f, two_localities(), &cfg, NULL, 1, false);
    assert_int_equal(xlb_lb_connectivity_init(&f.w), 0);
    struct xlb_lb_trace t;
    assert_int_equal(pick_conn(&f, &f.w, &t), XLB_LB_QUEUE); /* all IDLE */
    assert_int_equal(t.endpoint, 0);
    set(&f.w, 0, XLB_CONN_CONNECTING);
    assert_int_equal(pick_conn(&f, &f.w, &t), XLB_LB_QUEUE);
    assert_int_equal(t.endpoint, 0); /* waited for, the IDLE ones behind it untouched */
    set(&f.w, 0, XLB_CONN_TRANSIENT_FAILURE);
    assert_int_equal(pick_conn(&f, &f.w, &t), XLB_LB_QUEUE);
    assert_int_equal(t.endpoint, 1); /* the next in order, once the first failed */
    fixture_done(&f);
}

/* Each worker holds its own endpoint: one that saw the first fail stays on the second while
 * another, which did not, stays on the first. */
static void test_per_worker(void **state)
{
    (void)state;
    struct xlb_cluster_config cfg = pick_first(false);
    struct fixture f;
    fixture_start(&f, two_localities(), &cfg, NULL, 1, false);
    struct xlb_lb_worker *other = malloc(sizeof(*other));
    assert_non_null(other);
    worker(other, NULL, NULL, 0);
    assert_int_equal(xlb_lb_connectivity_init(&f.w), 0);
    assert_int_equal(xlb_lb_connectivity_init(other), 0);
    for (uint32_t e = 0; e < 3; e++) {
        set(&f.w, e, XLB_CONN_READY);
        set(other, e, XLB_CONN_READY);
    }
    set(&f.w, 0, XLB_CONN_TRANSIENT_FAILURE);
    assert_int_equal(picked(&f, &f.w), 1);
    set(&f.w, 0, XLB_CONN_READY);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(picked(&f, &f.w), 1);
        assert_int_equal(picked(&f, other), 0);
    }
    xlb_lb_worker_fini(other);
    free(other);
    fixture_done(&f);
}

/* The list order of priority 0, as endpoint indexes. */
static void list_of(const struct xlb_lb_cluster *c, uint32_t *out, uint32_t n)
{
    assert_non_null(c->priorities[0].pick_first);
    assert_int_equal(c->priorities[0].pick_first->n_entries, n);
    for (uint32_t i = 0; i < n; i++)
        out[i] = c->priorities[0].pick_first->entries[i].index;
}

/* shuffle_address_list: a permutation, the same for the same endpoints (a recompile after an
 * ejection does not reshuffle), the EDS order without it; the first pick is the list's head. */
static void test_compile_shuffle(void **state)
{
    (void)state;
    enum { EPS = 16 };
    struct eds *e = eds_one_locality(1);
    for (uint32_t i = 0; i < EPS; i++) {
        char addr[32];
        snprintf(addr, sizeof(addr), "198.18.1.%u:80", i + 1);
        eds_endpoint(e, addr, 1, XLB_HEALTH_HEALTHY);
    }
    struct xlb_cluster_config plain = pick_first(false), shuffled = pick_first(true);
    struct xlb_lb_cluster *a = compile("a", &shuffled, e, NULL, 1);
    struct xlb_lb_cluster *b = compile("b", &shuffled, e, NULL, 2);
    struct xlb_lb_cluster *p = compile("p", &plain, e, NULL, 3);
    uint32_t la[EPS], lb[EPS], lp[EPS], seen = 0;
    bool moved = false;
    list_of(a, la, EPS);
    list_of(b, lb, EPS);
    list_of(p, lp, EPS);
    for (uint32_t i = 0; i < EPS; i++) {
        assert_int_equal(la[i], lb[i]);
        assert_int_equal(lp[i], i);
        seen |= 1u << la[i];
        moved |= la[i] != i;
    }
    assert_int_equal(seen, (1u << EPS) - 1);
    assert_true(moved); /* 1 in 16! to fail */
    struct vip1 v;
    vip_one(&v, a);
    struct xlb_lb_worker w;
    worker(&w, NULL, NULL, 0);
    struct xlb_lb_trace t;
    assert_int_equal(pick(&v, &w, 1, NULL, &t), XLB_LB_PICKED);
    assert_int_equal(t.endpoint, la[0]);
    xlb_lb_worker_fini(&w);
    vip_done(&v);
    xlb_lb_cluster_release(b);
    xlb_lb_cluster_release(p);
    free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_on_first),
        cmocka_unit_test(test_ejected_and_draining_passed_over),
        cmocka_unit_test(test_connectivity_sticky),
        cmocka_unit_test(test_connects_one_at_a_time),
        cmocka_unit_test(test_per_worker),
        cmocka_unit_test(test_compile_shuffle),
    };
    return cmocka_run_group_tests_name("lb_pick_pick_first", tests, NULL, NULL);
}
