/*
 * The pick over compiled clusters (lib/lb) for requests that carry a session: DRAINING (A55),
 * override host across priorities and addresses (A55, A60, A61, A75), and the session cookie
 * decode that produces the session.
 */
#include <errno.h>

#include <openssl/evp.h>

#include "lb_test.h"

/* ---- A55: DRAINING ---- */

/* One locality: .1 HEALTHY, .2 DRAINING, .3 UNKNOWN. */
static struct eds *with_draining(void)
{
    struct eds *e = eds_one_locality(1);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.2:80", 1, XLB_HEALTH_DRAINING);
    eds_endpoint(e, "198.18.0.3:80", 1, XLB_HEALTH_UNKNOWN);
    return e;
}

static void test_draining_never_picked(void **state)
{
    (void)state;
    struct fixture f;
    fixture_rr(&f, with_draining(), NULL);
    uint32_t count[3] = {0};
    for (uint32_t i = 0; i < 3000; i++)
        count[pick_ok(&f, i, NULL).endpoint]++;
    assert_int_equal(count[1], 0);
    assert_int_equal(count[0], 1500);
    assert_int_equal(count[2], 1500);
    fixture_done(&f);
}

static void test_draining_session_default_status_falls_back(void **state)
{
    (void)state;
    struct fixture f;
    fixture_rr(&f, with_draining(), NULL);
    struct xlb_lb_session s = session_of(NULL, "198.18.0.2:80", NULL);
    for (uint32_t i = 0; i < 100; i++) {
        struct xlb_lb_trace t = pick_ok(&f, i, &s);
        assert_int_equal(t.override, XLB_LB_OVERRIDE_STATUS);
        assert_int_not_equal(t.endpoint, 1);
    }
    fixture_done(&f);
}

static void test_draining_session_used_when_allowed(void **state)
{
    (void)state;
    struct xlb_cluster_config cfg = cluster_config(XLB_LB_ROUND_ROBIN);
    cfg.override_host_status |= XLB_HEALTH_BIT(XLB_HEALTH_DRAINING);
    struct fixture f;
    fixture_start(&f, with_draining(), &cfg, NULL, 1, true);
    struct xlb_lb_session s = session_of(NULL, "198.18.0.2:80", NULL);
    for (uint32_t i = 0; i < 100; i++) {
        struct xlb_lb_trace t = pick_ok(&f, i, &s);
        assert_int_equal(t.override, XLB_LB_OVERRIDE_USED);
        assert_int_equal(t.endpoint, 1);
        assert_int_equal(t.slot, ENDPOINT_SLOT_BASE + 1);
    }
    assert_int_equal(f.load->endpoints[ENDPOINT_SLOT_BASE + 1].session_picks, 100);
    /* Normal picks still never reach it. */
    for (uint32_t i = 0; i < 100; i++)
        assert_int_not_equal(pick_ok(&f, i, NULL).endpoint, 1);
    assert_int_equal(f.load->endpoints[ENDPOINT_SLOT_BASE].session_picks, 0);
    fixture_done(&f);
}

/* ---- A55/A60/A61/A75: override host across priorities ---- */

/*
 * Priority 0: .1, .2; priority 1: .3 (also [2001:2::3]:80) and .4. Endpoint .1 ejected when
 * eject_first.
 */
static void override_fixture(struct fixture *f, bool eject_first)
{
    struct eds *e = eds_one_locality(1);
    eds_endpoint(e, "198.18.0.1:80", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.2:80", 1, XLB_HEALTH_HEALTHY);
    eds_priority(e);
    eds_locality(e, 1);
    eds_endpoint(e, "198.18.0.3:80", 1, XLB_HEALTH_HEALTHY);
    eds_address(e, "[2001:2::3]:80");
    eds_endpoint(e, "198.18.0.4:80", 1, XLB_HEALTH_UNKNOWN);
    const bool ejected[4] = {eject_first, false, false, false};
    fixture_rr(f, e, ejected);
}

static void test_override_other_priority_used(void **state)
{
    (void)state;
    struct fixture f;
    override_fixture(&f, false);
    struct xlb_lb_session s = session_of(NULL, "198.18.0.4:80", NULL);
    for (uint32_t i = 0; i < 50; i++) {
        struct xlb_lb_trace t = pick_ok(&f, i, &s);
        assert_int_equal(t.override, XLB_LB_OVERRIDE_USED);
        assert_int_equal(t.endpoint, 3);
        assert_int_equal(t.priority, 1);
        /* ... while a request without the session goes to priority 0. */
        t = pick_ok(&f, i, NULL);
        assert_int_equal(t.override, XLB_LB_OVERRIDE_NONE);
        assert_int_equal(t.priority, 0);
    }
    fixture_done(&f);
}

static void test_override_ejected_falls_back(void **state)
{
    (void)state;
    struct fixture f;
    override_fixture(&f, true);
    struct xlb_lb_session s = session_of(NULL, "198.18.0.1:80", NULL);
    for (uint32_t i = 0; i < 50; i++) {
        struct xlb_lb_trace t = pick_ok(&f, i, &s);
        assert_int_equal(t.override, XLB_LB_OVERRIDE_UNUSABLE);
        assert_int_equal(t.endpoint, 1); /* the only usable one of priority 0 */
    }
    fixture_done(&f);
}

static void test_override_unknown_address(void **state)
{
    (void)state;
    struct fixture f;
    override_fixture(&f, false);
    /* Same IP as an endpoint but another port, and an address nobody has. */
    const char *unknown[] = {"198.18.0.1:81", "198.18.9.9:80", "[2001:2::9]:80"};
    for (uint32_t i = 0; i < 3; i++) {
        struct xlb_lb_session s = session_of(NULL, unknown[i], NULL);
        struct xlb_lb_trace t = pick_ok(&f, i, &s);
        assert_int_equal(t.override, XLB_LB_OVERRIDE_UNKNOWN);
        assert_int_equal(t.priority, 0);
    }
    /* An empty session is no session. */
    struct xlb_lb_session none = {0};
    assert_int_equal(pick_ok(&f, 0, &none).override, XLB_LB_OVERRIDE_NONE);
    fixture_done(&f);
}

static void test_override_cookie_cluster(void **state)
{
    (void)state;
    struct fixture f;
    override_fixture(&f, false);
    struct xlb_lb_trace t;
    struct xlb_lb_session other = session_of("api", "198.18.0.4:80", NULL);
    for (uint32_t i = 0; i < 20; i++) {
        t = pick_ok(&f, i, &other);
        assert_int_equal(t.override, XLB_LB_OVERRIDE_OTHER_CLUSTER);
        assert_int_equal(t.priority, 0);
    }
    /* A prefix of the name is another cluster too. */
    struct xlb_lb_session prefix = session_of("we", "198.18.0.4:80", NULL);
    assert_int_equal(pick_ok(&f, 0, &prefix).override, XLB_LB_OVERRIDE_OTHER_CLUSTER);
    struct xlb_lb_session same = session_of("web", "198.18.0.4:80", NULL);
    t = pick_ok(&f, 0, &same);
    assert_int_equal(t.override, XLB_LB_OVERRIDE_USED);
    assert_int_equal(t.endpoint, 3);
    fixture_done(&f);
}

static void test_override_second_address(void **state)
{
    (void)state;
    struct fixture f;
    override_fixture(&f, false);
    struct xlb_lb_session v6 = session_of(NULL, "[2001:2::3]:80", NULL);
    struct xlb_lb_trace t = pick_ok(&f, 0, &v6);
    assert_int_equal(t.override, XLB_LB_OVERRIDE_USED);
    assert_int_equal(t.endpoint, 2);
    assert_int_equal(t.priority, 1);
    /* An address the cluster does not know is skipped; the next one decides. */
    struct xlb_lb_session list = session_of(NULL, "198.18.9.9:80", "[2001:2::3]:80", NULL);
    t = pick_ok(&f, 0, &list);
    assert_int_equal(t.override, XLB_LB_OVERRIDE_USED);
    assert_int_equal(t.endpoint, 2);
    /* The endpoint's address for connecting stays its first one. */
    assert_hp(&f.v.leaves[0]->endpoints[2].where, "198.18.0.3:80");
    fixture_done(&f);
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
    struct eds *e = eds_one_locality(1);
    eds_endpoint(e, "198.18.0.20:8080", 1, XLB_HEALTH_HEALTHY);
    eds_endpoint(e, "198.18.0.21:8080", 1, XLB_HEALTH_HEALTHY);
    struct fixture f;
    fixture_rr(&f, e, NULL);
    b64("198.18.0.21:8080;web", value, sizeof(value));
    assert_int_equal(decode(value, &s, scratch), 0);
    for (uint32_t i = 0; i < 10; i++) {
        struct xlb_lb_trace t = pick_ok(&f, i, &s);
        assert_int_equal(t.override, XLB_LB_OVERRIDE_USED);
        assert_int_equal(t.endpoint, 1);
    }
    fixture_done(&f);
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

/* ---- A55: the cookie's path scopes the filter (RFC 6265 5.1.4) ---- */

static bool path_matches(const char *request, const char *cookie)
{
    return xlb_lb_cookie_path_match(request, (uint32_t)strlen(request), cookie);
}

static void test_cookie_path_match(void **state)
{
    (void)state;
    assert_true(path_matches("/", "/"));
    assert_true(path_matches("/xlb.test.Echo/Who", "/"));
    assert_true(path_matches("/xlb.test.Echo", "/xlb.test.Echo"));
    assert_true(path_matches("/xlb.test.Echo/Who", "/xlb.test.Echo"));
    assert_false(path_matches("/xlb.test.EchoX/Who", "/xlb.test.Echo"));
    assert_false(path_matches("/xlb", "/xlb.test.Echo"));
    assert_true(path_matches("/a/b", "/a/"));
    assert_false(path_matches("/a", "/a/"));
    assert_true(path_matches("/a?x=/b", "/a"));
    assert_false(path_matches("/b?/a", "/a"));
}

static void test_find_cookie(void **state)
{
    (void)state;
    struct xlb_route_field fields[] = {
        {.name = "cookie", .name_len = 6, .value = "a=1; xlb=abc", .value_len = 12},
        {.name = "cookie", .name_len = 6, .value = "xlb=second", .value_len = 10},
    };
    struct xlb_route_request r = {.path = "/", .path_len = 1, .fields = fields, .n_fields = 2};
    uint32_t len = 0;
    const char *v = xlb_lb_find_cookie(&r, "xlb", &len);
    assert_non_null(v);
    assert_int_equal(len, 3); /* the first cookie of that name */
    assert_memory_equal(v, "abc", 3);
    assert_null(xlb_lb_find_cookie(&r, "xl", &len));
    assert_null(xlb_lb_find_cookie(&r, "b", &len));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_draining_never_picked),
        cmocka_unit_test(test_draining_session_default_status_falls_back),
        cmocka_unit_test(test_draining_session_used_when_allowed),
        cmocka_unit_test(test_override_other_priority_used),
        cmocka_unit_test(test_override_ejected_falls_back),
        cmocka_unit_test(test_override_unknown_address),
        cmocka_unit_test(test_override_cookie_cluster),
        cmocka_unit_test(test_override_second_address),
        cmocka_unit_test(test_session_decode_valid),
        cmocka_unit_test(test_session_decode_malformed),
        cmocka_unit_test(test_cookie_path_match),
        cmocka_unit_test(test_find_cookie),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
