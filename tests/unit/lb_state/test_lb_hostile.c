/*
 * Hostile but valid configurations fed through the whole LB compile path (xDS resources as ADS
 * stores them -> dependency manager -> compiled trees): weights at and past 2^32, thousands of
 * endpoints and localities over many priorities, ring sizes at their bounds, aggregate clusters
 * at and past the depth limit. Each is compiled (and picks), or refused with the precise
 * reason, and a refused update leaves the previous configuration serving. Compiling the large
 * ones and replacing them, round after round, does not grow the heap (a compiled tree kept
 * per update fails that). An aggregate graph past the depth limit is the cluster's error (A37),
 * not a NACK: there picks say "not ready" until the graph is back within the limit.
 */
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_state_fixture.h"
#include "json_read.h"
#include "proto_json.h"
#include "xds_cache.h"

#define CLUSTER_EDS(name, extra)                                                                   \
    "{\"name\":\"" name                                                                            \
    "\",\"type\":\"EDS\",\"eds_cluster_config\":{\"eds_config\":{\"ads\":{}}}" extra "}"
#define ONE_ENDPOINT(name)                                                                         \
    "{\"cluster_name\":\"" name "\",\"endpoints\":[{\"locality\":{\"zone\":\"a\"},"                \
    "\"load_balancing_weight\":1,\"lb_endpoints\":[{\"endpoint\":{\"address\":{"                   \
    "\"socket_address\":{\"address\":\"198.18.0.21\",\"port_value\":8080}}}}]}]}"

static int setup(void **state)
{
    return lbs_setup(state, 1);
}

/* Store a resource as the ADS client would; NULL if taken, else the NACK's reason (owned by
 * the cache). */
static const char *store(struct lbs_fixture *f, enum xlb_xds_type type, const char *name,
                         const char *json)
{
    cJSON *doc = cJSON_Parse(json);
    assert_non_null(doc);
    struct xlb_errors errs = {0};
    ProtobufCMessage *msg =
        xlb_proto_json_read(xlb_proto_type_by_url(xlb_xds_type_url[type]), doc, "r", &errs);
    cJSON_Delete(doc);
    assert_non_null(msg);
    xlb_errors_free(&errs);
    struct xlb_xds_resource *res = xlb_xds_cache_get(&f->dm->cache, type, name);
    assert_non_null(res);
    int rc = xlb_xds_cache_update(&f->dm->cache, res, msg, "v", false, &errs);
    xlb_errors_free(&errs);
    if (rc == 0)
        return NULL;
    assert_non_null(res->error);
    return res->error;
}

/* n picks on VIP 0 must all succeed; returns how many went to endpoint index `which`. */
static uint32_t picks_ok(struct lbs_fixture *f, uint32_t n, uint32_t which)
{
    uint32_t hits = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct xlb_lb_request req = {.connection_id = i};
        struct xlb_lb_trace t;
        assert_int_equal(xlb_lb_pick(xlb_lb_trees_vip(f->lb, 0), &req, &f->w, &t), XLB_LB_PICKED);
        hits += t.endpoint == which;
    }
    return hits;
}

/* An L4 VIP on cluster c1 with one endpoint, published. */
static void start(struct lbs_fixture *f, const char *cluster_json)
{
    assert_true(xlb_dm_add_vip(&f->dm->dm, XLB_DM_VIP_L4, "c1") == 0);
    assert_null(store(f, XLB_XDS_CDS, "c1", cluster_json));
    assert_null(store(f, XLB_XDS_EDS, "c1", ONE_ENDPOINT("c1")));
    assert_true(lbs_update(f));
    assert_int_equal(picks_ok(f, 10, 0), 10);
}

/* A growable JSON text. */
struct text {
    char *s;
    size_t len, cap;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct text *t, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
        assert_true(n >= 0);
        if ((size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        t->cap = t->cap * 2 + (size_t)n + 1;
        t->s = realloc(t->s, t->cap);
        assert_non_null(t->s);
    }
}

/* An assignment of n_prio priorities x n_loc localities x n_ep endpoints, distinct addresses
 * in 198.18.0.0/15 and 2001:2::/48 alternately, locality weight lw, endpoint weight ew. */
static char *big_assignment(uint32_t n_prio, uint32_t n_loc, uint32_t n_ep, uint64_t lw,
                            uint64_t ew)
{
    struct text t = {.cap = 4096};
    t.s = malloc(t.cap);
    assert_non_null(t.s);
    t.s[0] = '\0';
    put(&t, "{\"cluster_name\":\"c1\",\"endpoints\":[");
    uint32_t i = 0;
    for (uint32_t p = 0; p < n_prio; p++)
        for (uint32_t l = 0; l < n_loc; l++) {
            put(&t,
                "%s{\"locality\":{\"zone\":\"z%u-%u\"},\"load_balancing_weight\":%llu,"
                "\"priority\":%u,\"lb_endpoints\":[",
                p + l ? "," : "", p, l, (unsigned long long)lw, p);
            for (uint32_t e = 0; e < n_ep; e++, i++) {
                char addr[64];
                if (i % 2)
                    snprintf(addr, sizeof(addr), "2001:2::%x", i);
                else
                    snprintf(addr, sizeof(addr), "198.18.%u.%u", 1 + (i >> 8) % 254, i & 255);
                put(&t,
                    "%s{\"endpoint\":{\"address\":{\"socket_address\":{\"address\":\"%s\","
                    "\"port_value\":%u}}},\"load_balancing_weight\":%llu}",
                    e ? "," : "", addr, 8000 + i / 65000, (unsigned long long)ew);
            }
            put(&t, "]}");
        }
    put(&t, "]}");
    return t.s;
}

static size_t heap_in_use(void)
{
    return mallinfo2().uordblks;
}

static void weights_past_2_32_are_refused_and_the_old_tree_serves(void **state)
{
    struct lbs_fixture *f = *state;
    start(f, CLUSTER_EDS("c1", ""));

    /* Three localities of 2^31 in one priority: their sum passes 2^32. */
    char *json = big_assignment(1, 3, 1, 1ull << 31, 1);
    assert_string_equal(
        store(f, XLB_XDS_EDS, "c1", json),
        "cluster_load_assignment \"c1\": endpoints: sum of locality weights for priority 0 "
        "exceeds uint32 max");
    free(json);
    /* Endpoints of 2^31 in one locality: likewise, with the sum. */
    json = big_assignment(1, 1, 3, 1, 1ull << 31);
    const char *why = store(f, XLB_XDS_EDS, "c1", json);
    assert_non_null(strstr(why, "sum of endpoint weights 6442450944 exceeds uint32 max"));
    free(json);
    /* The previous assignment is the one that serves. */
    lbs_update(f);
    assert_int_equal(xlb_lb_trees_cluster(f->lb, "c1")->n_endpoints, 1);
    assert_int_equal(picks_ok(f, 100, 0), 100);

    /* Exactly 2^32 - 1 in total is valid: compiled, and every pick lands. */
    json = big_assignment(1, 1, 1, UINT32_MAX, UINT32_MAX);
    assert_null(store(f, XLB_XDS_EDS, "c1", json));
    free(json);
    assert_true(lbs_update(f));
    assert_int_equal(picks_ok(f, 100, 0), 100);
}

static void thousands_of_endpoints_compile_and_free(void **state)
{
    struct lbs_fixture *f = *state;
    start(f, CLUSTER_EDS("c1", ""));
    /* Rounds of 100 priorities x 40 localities x 2 endpoints (8,000 endpoints, 4,000
     * localities, both families), then back to one endpoint. The first round leaves what is
     * kept at its high-water mark (slot tables); the heap is measured from there. */
    size_t heap = 0;
    for (int round = 0; round < 6; round++) {
        char *json = big_assignment(100, 40, 2, 1000, 1000);
        assert_null(store(f, XLB_XDS_EDS, "c1", json));
        free(json);
        assert_true(lbs_update(f));
        const struct xlb_lb_cluster *c = xlb_lb_trees_cluster(f->lb, "c1");
        assert_int_equal(c->n_endpoints, 8000);
        assert_int_equal(c->n_priorities, 100);
        picks_ok(f, 1000, 0);
        assert_null(store(f, XLB_XDS_EDS, "c1", ONE_ENDPOINT("c1")));
        assert_true(lbs_update(f));
        f->grace_over = true; /* freed slots may go back */
        xlb_lb_trees_tick(f->lb, f->now += 1000);
        assert_int_equal(picks_ok(f, 10, 0), 10);
        if (round == 0)
            heap = heap_in_use();
    }
    /* One compiled 8,000-endpoint cluster kept per round would be well over 64 KiB a round
     * (its endpoint array alone); 64 KiB in all covers the allocator's noise (about 1 KiB a
     * round, levelling off, was measured). */
    size_t after = heap_in_use();
    if (after > heap + 64 * 1024)
        fail_msg("heap grew from %zu to %zu bytes over 5 rounds", heap, after);
}

static void ring_sizes_at_their_bounds(void **state)
{
    struct lbs_fixture *f = *state;
    start(f, CLUSTER_EDS("c1", ",\"lb_policy\":\"RING_HASH\",\"ring_hash_lb_config\":{"
                               "\"minimum_ring_size\":8388608,\"maximum_ring_size\":8388608}"));
    const void *before = xlb_lb_trees_vip(f->lb, 0);
    assert_string_equal(
        store(f, XLB_XDS_CDS, "c1",
              CLUSTER_EDS("c1", ",\"lb_policy\":\"RING_HASH\",\"ring_hash_lb_config\":{"
                                "\"maximum_ring_size\":8388609}")),
        "cluster \"c1\": ring_hash_lb_config.maximum_ring_size: 8388609 is not in 1..8388608");
    /* The refused update left the 8M-entry ring serving; the smallest ring is valid too. */
    assert_int_equal(picks_ok(f, 100, 0), 100);
    assert_null(store(f, XLB_XDS_CDS, "c1",
                      CLUSTER_EDS("c1", ",\"lb_policy\":\"RING_HASH\",\"ring_hash_lb_config\":{"
                                        "\"minimum_ring_size\":1,\"maximum_ring_size\":1}")));
    assert_true(lbs_update(f));
    assert_ptr_not_equal(xlb_lb_trees_vip(f->lb, 0), before);
    assert_int_equal(picks_ok(f, 100, 0), 100);
}

/* c1 -> a1 -> ... -> a<depth - 1> -> leaf: an aggregate chain of `depth` levels. */
static void aggregate_chain(struct lbs_fixture *f, int depth)
{
    char name[16], child[16], json[512];
    for (int i = 0; i < depth; i++) {
        snprintf(name, sizeof(name), i ? "a%d" : "c1", i);
        snprintf(child, sizeof(child), i + 1 < depth ? "a%d" : "leaf", i + 1);
        snprintf(json, sizeof(json),
                 "{\"name\":\"%s\",\"cluster_type\":{\"name\":\"aggregate\",\"typed_config\":{"
                 "\"@type\":\"type.googleapis.com/"
                 "envoy.extensions.clusters.aggregate.v3.ClusterConfig\",\"clusters\":[\"%s\"]}}}",
                 name, child);
        assert_null(store(f, XLB_XDS_CDS, name, json));
    }
}

static void aggregates_at_and_past_the_depth_limit(void **state)
{
    struct lbs_fixture *f = *state;
    assert_true(xlb_dm_add_vip(&f->dm->dm, XLB_DM_VIP_L4, "c1") == 0);
    assert_null(store(f, XLB_XDS_CDS, "leaf", CLUSTER_EDS("leaf", "")));
    assert_null(store(f, XLB_XDS_EDS, "leaf", ONE_ENDPOINT("leaf")));
    aggregate_chain(f, XLB_DM_MAX_AGGREGATE_DEPTH - 1); /* 16 levels with the leaf */
    assert_true(lbs_update(f));
    assert_int_equal(picks_ok(f, 10, 0), 10);

    aggregate_chain(f, XLB_DM_MAX_AGGREGATE_DEPTH); /* 17 */
    lbs_update(f);
    const struct xlb_dm_cluster *c1 = xlb_dm_vip_cluster(&f->dm->dm.vips[0], "c1");
    assert_non_null(c1);
    assert_int_equal(c1->state, XLB_DM_ERROR);
    assert_string_equal(c1->error, "cluster \"c1\": aggregate cluster graph exceeds the depth "
                                   "limit of 16 (\"c1\" has 17 levels)");
    /* A valid CDS update that makes the graph too deep is the cluster's error, as gRPC has it
     * (A37): picks say the cluster is not ready, they do not go on to the old graph. */
    struct xlb_lb_request req = {.connection_id = 1};
    struct xlb_lb_trace t;
    assert_int_equal(xlb_lb_pick(xlb_lb_trees_vip(f->lb, 0), &req, &f->w, &t), XLB_LB_NOT_READY);
    /* Back within the limit, it serves again. */
    aggregate_chain(f, XLB_DM_MAX_AGGREGATE_DEPTH - 1);
    assert_true(lbs_update(f));
    assert_int_equal(picks_ok(f, 10, 0), 10);
}

/* RDS r1: n routes, route i matching safe_regex "^/r<i>/<tail>" to c1, then "/" to c2. */
static char *regex_routes(uint32_t n, const char *tail)
{
    struct text t = {.cap = 4096};
    t.s = malloc(t.cap);
    assert_non_null(t.s);
    t.s[0] = '\0';
    put(&t, "{\"name\":\"r1\",\"virtual_hosts\":[{\"name\":\"vh\",\"domains\":[\"*\"],"
            "\"routes\":[");
    for (uint32_t i = 0; i < n; i++)
        put(&t,
            "{\"match\":{\"safe_regex\":{\"regex\":\"^/r%u/%s\"}},"
            "\"route\":{\"cluster\":\"c1\"}},",
            i, tail);
    put(&t, "{\"match\":{\"prefix\":\"/\"},\"route\":{\"cluster\":\"c2\"}}]}]}");
    return t.s;
}

/* The leaf cluster an L7 request for path goes to on VIP 0. */
static const char *cluster_for(struct lbs_fixture *f, const char *path)
{
    struct xlb_route_request http = {.path = path, .path_len = (uint32_t)strlen(path)};
    struct xlb_lb_request req = {.http = &http, .connection_id = 1};
    struct xlb_lb_trace t;
    assert_int_equal(xlb_lb_pick(xlb_lb_trees_vip(f->lb, 0), &req, &f->w, &t), XLB_LB_PICKED);
    return t.cluster->name;
}

static void many_regex_routes_and_a_hostile_subject(void **state)
{
    struct lbs_fixture *f = *state;
    assert_true(xlb_dm_add_vip(&f->dm->dm, XLB_DM_VIP_L7, "svc") == 0);
    dm_put_listener(f->dm, "svc", "r1");
    dm_put_eds_cluster(f->dm, "c1", NULL);
    dm_put_eds_cluster(f->dm, "c2", NULL);
    dm_put_endpoints(f->dm, "c1");
    dm_put_endpoints(f->dm, "c2");
    /* 2,000 routes of a pattern that backtracks exponentially in PCRE2 (RE2 would not). */
    char *json = regex_routes(2000, "(a|aa)*b$");
    assert_null(store(f, XLB_XDS_RDS, "r1", json));
    free(json);
    assert_true(lbs_update(f));
    assert_string_equal(cluster_for(f, "/r1999/aab"), "c1");
    /* 4,000 a's and no b: the match limit ends the backtracking, the route does not match,
     * and the catch-all takes the request. */
    char path[4200];
    int n = snprintf(path, sizeof(path), "/r1999/");
    memset(path + n, 'a', 4000);
    path[n + 4000] = '\0';
    assert_string_equal(cluster_for(f, path), "c2");

    /* A backreference (no RE2 has one) anywhere NACKs the whole update; the routes serve. */
    json = regex_routes(2000, "(a)\\\\1$");
    const char *why = store(f, XLB_XDS_RDS, "r1", json);
    free(json);
    assert_non_null(why);
    assert_non_null(strstr(why, "backreferences are not supported"));
    lbs_update(f);
    assert_string_equal(cluster_for(f, "/r0/aab"), "c1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(weights_past_2_32_are_refused_and_the_old_tree_serves,
                                        setup, lbs_teardown),
        cmocka_unit_test_setup_teardown(thousands_of_endpoints_compile_and_free, setup,
                                        lbs_teardown),
        cmocka_unit_test_setup_teardown(ring_sizes_at_their_bounds, setup, lbs_teardown),
        cmocka_unit_test_setup_teardown(aggregates_at_and_past_the_depth_limit, setup,
                                        lbs_teardown),
        cmocka_unit_test_setup_teardown(many_regex_routes_and_a_hostile_subject, setup,
                                        lbs_teardown),
    };
    return cmocka_run_group_tests_name("lb_hostile", tests, NULL, NULL);
}
