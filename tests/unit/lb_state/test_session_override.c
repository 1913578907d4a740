/*
 * A39 filter overrides of the stateful session filter (A55), compiled into a VIP and read by
 * its picks: the most specific level wins, weighted cluster entry > route > virtual host >
 * the listener's filter, and the cookie an RPC reads and sets is the one of the weighted
 * entry it was routed to. xDS resources in, as ADS would validate them; picks out.
 */
#include <stdio.h>
#include <string.h>

#include "lb_state_fixture.h"

#define HCM_TYPE                                                                                   \
    "\"@type\":\"type.googleapis.com/"                                                             \
    "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager\""
#define ROUTER                                                                                     \
    "{\"name\":\"router\",\"typed_config\":{\"@type\":\"type.googleapis.com/"                      \
    "envoy.extensions.filters.http.router.v3.Router\"}}"
#define COOKIE(name, extra)                                                                        \
    "\"session_state\":{\"name\":\"c\",\"typed_config\":{\"@type\":\"type.googleapis.com/"         \
    "envoy.extensions.http.stateful_session.cookie.v3.CookieBasedSessionState\","                  \
    "\"cookie\":{\"name\":\"" name "\"" extra "}}}"
#define SESSION_FILTER(cookie)                                                                     \
    "{\"name\":\"ssa\",\"typed_config\":{\"@type\":\"type.googleapis.com/"                         \
    "envoy.extensions.filters.http.stateful_session.v3.StatefulSession\"," cookie "}}"
#define PER_ROUTE                                                                                  \
    "\"@type\":\"type.googleapis.com/"                                                             \
    "envoy.extensions.filters.http.stateful_session.v3.StatefulSessionPerRoute\""
/* typed_per_filter_config for the filter "ssa": another cookie, or disabled. */
#define USE(cookie)                                                                                \
    ",\"typed_per_filter_config\":{\"ssa\":{" PER_ROUTE ",\"stateful_session\":{" cookie "}}}"
#define DISABLED     ",\"typed_per_filter_config\":{\"ssa\":{" PER_ROUTE ",\"disabled\":true}}"
#define ENTRY(c, tp) "{\"name\":\"" c "\",\"weight\":1" tp "}"
#define WEIGHTED(prefix, route_tp, e1, e2)                                                         \
    "{\"match\":{\"prefix\":\"" prefix "\"},\"route\":{\"weighted_clusters\":{\"clusters\":[" e1   \
    "," e2 "]}}" route_tp "}"

/* 0: an entry's cookie E (path /w/a, 30 s) beats the virtual host's; the other inherits V. */
#define ROUTE_W                                                                                    \
    WEIGHTED("/w/", "", ENTRY("c1", USE(COOKIE("E", ",\"path\":\"/w/a\",\"ttl\":\"30s\""))),       \
             ENTRY("c2", ""))
/* 1: an entry disables the filter under a route cookie R; the other entry inherits R. */
#define ROUTE_R WEIGHTED("/r/", USE(COOKIE("R", "")), ENTRY("c1", DISABLED), ENTRY("c2", ""))
/* 2: an entry's cookie E2 under a route that disables the filter. */
#define ROUTE_D WEIGHTED("/d/", DISABLED, ENTRY("c1", USE(COOKIE("E2", ""))), ENTRY("c2", ""))
/* 3: no entry overrides: the route's cookie (V) whichever is drawn. */
#define ROUTE_ANY WEIGHTED("/", "", ENTRY("c1", ""), ENTRY("c2", ""))
/* 4 (host l.example, no override): an entry's cookie E3; the other inherits the listener's L. */
#define ROUTE_L WEIGHTED("/", "", ENTRY("c1", USE(COOKIE("E3", ""))), ENTRY("c2", ""))
/* Virtual host "*" overrides the listener's cookie L with V; host "l.example" does not. */
#define ROUTES                                                                                     \
    "{\"name\":\"inline\",\"virtual_hosts\":[{\"name\":\"vh\",\"domains\":[\"*\"]" USE(COOKIE(     \
        "V", "")) ",\"routes\":[" ROUTE_W "," ROUTE_R "," ROUTE_D "," ROUTE_ANY "]},"              \
                  "{\"name\":\"lh\",\"domains\":[\"l.example\"],\"routes\":[" ROUTE_L "]}]}"

static int setup(void **state)
{
    return lbs_setup(state, 1);
}

/* An L7 VIP "svc" over the EDS clusters c1 and c2, with `filters` before the router. */
static void vip(struct lbs_fixture *f, const char *filters)
{
    char json[8192];
    snprintf(json, sizeof(json),
             "{\"name\":\"svc\",\"api_listener\":{\"api_listener\":{" HCM_TYPE
             ",\"route_config\":" ROUTES ",\"http_filters\":[%s" ROUTER "]}}}",
             filters);
    assert_true(xlb_dm_add_vip(&f->dm->dm, XLB_DM_VIP_L7, "svc") == 0);
    dm_put(f->dm, XLB_XDS_LDS, "svc", json);
    dm_put_eds_cluster(f->dm, "c1", NULL);
    dm_put_eds_cluster(f->dm, "c2", NULL);
    dm_put_endpoints(f->dm, "c1");
    dm_put_endpoints(f->dm, "c2");
    assert_true(lbs_update(f));
    assert_non_null(xlb_lb_trees_vip(f->lb, 0));
}

/* What the picks of requests to authority/path did, per route cluster (c1, c2). */
struct seen {
    uint32_t picks;
    const char *cookie; /* the session cookie that applied, "-" for none */
    const struct xlb_lb_cookie_attrs *attrs;
    uint32_t entry;
    uint32_t overrides_used;
};

static void pick_many(struct lbs_fixture *f, const char *authority, const char *path,
                      const char *cookie_field, struct seen seen[2])
{
    const struct xlb_lb_vip *v = xlb_lb_trees_vip(f->lb, 0);
    struct xlb_route_field field = {"cookie", cookie_field, 6, 0};
    struct xlb_route_request http = {.path = path,
                                     .path_len = (uint32_t)strlen(path),
                                     .authority = authority,
                                     .authority_len = (uint32_t)strlen(authority),
                                     .fields = &field,
                                     .n_fields = cookie_field != NULL};
    if (cookie_field != NULL)
        field.value_len = (uint32_t)strlen(cookie_field);
    memset(seen, 0, 2 * sizeof(*seen));
    for (uint32_t i = 0; i < 200; i++) {
        struct xlb_lb_request req = {.http = &http, .connection_id = i};
        struct xlb_lb_trace t;
        assert_int_equal(xlb_lb_pick(v, &req, &f->w, &t), XLB_LB_PICKED);
        struct seen *s = &seen[strcmp(v->targets[t.target].name, "c1") == 0 ? 0 : 1];
        const char *cookie = t.session_cookie != NULL ? t.session_cookie : "-";
        if (s->picks++ == 0) {
            s->cookie = cookie;
            s->attrs = t.session_attrs;
            s->entry = t.entry;
        }
        /* Every RPC routed to the same entry gets the same cookie. */
        assert_string_equal(cookie, s->cookie);
        s->overrides_used += t.override == XLB_LB_OVERRIDE_USED;
    }
    /* Both entries drawn (weights 1:1, 200 draws). */
    assert_true(seen[0].picks > 0 && seen[1].picks > 0);
}

static void entry_beats_virtual_host_and_other_entry_inherits(void **state)
{
    struct lbs_fixture *f = *state;
    vip(f, SESSION_FILTER(COOKIE("L", "")) ",");
    struct seen seen[2];
    pick_many(f, "a.example", "/w/a/m", NULL, seen);
    assert_string_equal(seen[0].cookie, "E");
    assert_string_equal(seen[1].cookie, "V");
    assert_int_equal(seen[0].entry, 0);
    assert_int_equal(seen[1].entry, 1);
    /* Set-Cookie carries the entry's attributes. */
    assert_non_null(seen[0].attrs);
    assert_string_equal(seen[0].attrs->path, "/w/a");
    assert_true(seen[0].attrs->has_max_age);
    assert_int_equal(seen[0].attrs->max_age_s, 30);
    assert_null(seen[1].attrs->path);
    assert_false(seen[1].attrs->has_max_age);
    /* Outside E's path the c1 entry's filter does nothing (A55); c2's V still applies. */
    pick_many(f, "a.example", "/w/b", NULL, seen);
    assert_string_equal(seen[0].cookie, "-");
    assert_string_equal(seen[1].cookie, "V");
}

static void entry_disables_under_route_cookie(void **state)
{
    struct lbs_fixture *f = *state;
    vip(f, SESSION_FILTER(COOKIE("L", "")) ",");
    struct seen seen[2];
    pick_many(f, "a.example", "/r/m", NULL, seen);
    assert_string_equal(seen[0].cookie, "-");
    assert_string_equal(seen[1].cookie, "R");
}

static void entry_enables_under_disabled_route(void **state)
{
    struct lbs_fixture *f = *state;
    vip(f, SESSION_FILTER(COOKIE("L", "")) ",");
    struct seen seen[2];
    pick_many(f, "a.example", "/d/m", NULL, seen);
    assert_string_equal(seen[0].cookie, "E2");
    assert_string_equal(seen[1].cookie, "-");
}

static void entries_without_overrides_share_the_route_cookie(void **state)
{
    struct lbs_fixture *f = *state;
    vip(f, SESSION_FILTER(COOKIE("L", "")) ",");
    struct seen seen[2];
    pick_many(f, "a.example", "/m", NULL, seen);
    assert_string_equal(seen[0].cookie, "V");
    assert_string_equal(seen[1].cookie, "V");
    /* The route does not tell its entries apart: no per-entry lookup. */
    assert_int_equal(seen[0].entry, XLB_ROUTE_NONE);
    assert_int_equal(seen[1].entry, XLB_ROUTE_NONE);
}

static void entry_inherits_the_listener_filter(void **state)
{
    struct lbs_fixture *f = *state;
    vip(f, SESSION_FILTER(COOKIE("L", "")) ",");
    struct seen seen[2];
    pick_many(f, "l.example", "/m", NULL, seen);
    assert_string_equal(seen[0].cookie, "E3");
    assert_string_equal(seen[1].cookie, "L");
}

/* The cookie an RPC reads is its entry's: E steers the RPCs drawn to c1 only. */
static void rpc_reads_its_entry_cookie(void **state)
{
    struct lbs_fixture *f = *state;
    vip(f, SESSION_FILTER(COOKIE("L", "")) ",");
    struct seen seen[2];
    pick_many(f, "a.example", "/w/a/m", "E=MTk4LjE4LjAuMTA6ODA4MA==", seen);
    assert_int_equal(seen[0].overrides_used, seen[0].picks);
    assert_int_equal(seen[1].overrides_used, 0);
    pick_many(f, "a.example", "/w/a/m", "V=MTk4LjE4LjAuMTA6ODA4MA==", seen);
    assert_int_equal(seen[0].overrides_used, 0);
    assert_int_equal(seen[1].overrides_used, seen[1].picks);
}

/* A60: a cookie naming one of the route's weighted clusters sends every RPC there, whatever
 * the draw; one naming a cluster the route does not reach steers nothing. */
static void cookie_cluster_overrides_the_weighted_draw(void **state)
{
    struct lbs_fixture *f = *state;
    vip(f, SESSION_FILTER(COOKIE("L", "")) ",");
    const struct xlb_lb_vip *v = xlb_lb_trees_vip(f->lb, 0);
    /* "198.18.0.10:8080;c2" and "198.18.0.10:8080;c3", base64 */
    const char *const cookies[] = {"V=MTk4LjE4LjAuMTA6ODA4MDtjMg==",
                                   "V=MTk4LjE4LjAuMTA6ODA4MDtjMw=="};
    for (int k = 0; k < 2; k++) {
        struct xlb_route_field field = {"cookie", cookies[k], 6, (uint32_t)strlen(cookies[k])};
        struct xlb_route_request http = {.path = "/m",
                                         .path_len = 2,
                                         .authority = "a.example",
                                         .authority_len = 9,
                                         .fields = &field,
                                         .n_fields = 1};
        uint32_t to_c2 = 0, used = 0;
        for (uint32_t i = 0; i < 200; i++) {
            struct xlb_lb_request req = {.http = &http, .connection_id = i};
            struct xlb_lb_trace t;
            assert_int_equal(xlb_lb_pick(v, &req, &f->w, &t), XLB_LB_PICKED);
            to_c2 += strcmp(v->targets[t.target].name, "c2") == 0;
            used += t.override == XLB_LB_OVERRIDE_USED;
        }
        if (k == 0) {
            assert_int_equal(to_c2, 200);
            assert_int_equal(used, 200);
        } else { /* c3 is no cluster of the route: the draw stands, the cookie is ignored */
            assert_true(to_c2 > 0 && to_c2 < 200);
            assert_int_equal(used, 0);
        }
    }
}

/* A39: an override configures a filter of the listener's chain; without the filter, none. */
static void overrides_without_the_filter_do_nothing(void **state)
{
    struct lbs_fixture *f = *state;
    vip(f, "");
    struct seen seen[2];
    pick_many(f, "a.example", "/w/m", NULL, seen);
    assert_string_equal(seen[0].cookie, "-");
    assert_string_equal(seen[1].cookie, "-");
}

int main(void)
{
#define T(test) cmocka_unit_test_setup_teardown(test, setup, lbs_teardown)
    const struct CMUnitTest tests[] = {
        T(entry_beats_virtual_host_and_other_entry_inherits),
        T(entry_disables_under_route_cookie),
        T(entry_enables_under_disabled_route),
        T(entries_without_overrides_share_the_route_cookie),
        T(entry_inherits_the_listener_filter),
        T(rpc_reads_its_entry_cookie),
        T(cookie_cluster_overrides_the_weighted_draw),
        T(overrides_without_the_filter_do_nothing),
    };
    return cmocka_run_group_tests_name("lb_session_override", tests, NULL, NULL);
}
