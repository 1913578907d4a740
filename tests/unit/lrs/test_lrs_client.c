/*
 * The LRS client without a network: a fake stats source whose counters the tests advance, a
 * virtual clock, and reports built and decoded back with protobuf-c. The other messages of
 * the call are test_lrs_messages.c's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "envoy/service/load_stats/v3/lrs.pb-c.h"
#include "lrs_internal.h"
#include "lrs_test.h"
#include "xlb_const.h"

typedef Envoy__Service__LoadStats__V3__LoadStatsRequest lrs_request;
typedef Envoy__Config__Endpoint__V3__ClusterStats cluster_stats;
typedef Envoy__Config__Endpoint__V3__UpstreamLocalityStats locality_stats;

/* ---- the fake stats source ---- */

struct fake_cluster {
    const char *name, *service;
    bool enabled, unknown;
    struct xlb_lrs_locality_load loc[4];
    size_t n_loc;
    struct xlb_lrs_drop_load drops[4];
    size_t n_drops;
    uint64_t uncategorized;
};

struct fake_source {
    struct fake_cluster c[4];
    size_t n;
    const char *names[8];
    const char *extra_name; /* listed a second time, to test duplicates */
};

static size_t fake_enabled(void *arg, const char *const **names)
{
    struct fake_source *f = arg;
    size_t n = 0;
    for (size_t i = 0; i < f->n; i++)
        if (f->c[i].enabled)
            f->names[n++] = f->c[i].name;
    if (f->extra_name != NULL)
        f->names[n++] = f->extra_name;
    *names = f->names;
    return n;
}

static int fake_load(void *arg, const char *cluster, struct xlb_lrs_cluster_load *out)
{
    struct fake_source *f = arg;
    for (size_t i = 0; i < f->n; i++) {
        struct fake_cluster *c = &f->c[i];
        if (strcmp(c->name, cluster) != 0 || c->unknown)
            continue;
        out->service_name = c->service;
        out->localities = c->loc;
        out->n_localities = c->n_loc;
        out->drops = c->drops;
        out->n_drops = c->n_drops;
        out->uncategorized_drops = c->uncategorized;
        return 0;
    }
    return -1;
}

static struct fake_source fake;
static struct xlb_lrs_source source = {fake_enabled, fake_load, &fake};
static struct xlb_lrs_settings send_all = {.send_all = true, .interval_ms = 1000};

/* cluster-a (EDS service "svc-a"): two localities, a drop category; cluster-b: one locality. */
static int setup(void **state)
{
    memset(&fake, 0, sizeof(fake));
    fake.n = 3;
    fake.c[0] = (struct fake_cluster){.name = "cluster-a", .service = "svc-a", .enabled = true};
    fake.c[0].loc[0] = (struct xlb_lrs_locality_load){.region = "r1", .zone = "z1"};
    fake.c[0].loc[1] = (struct xlb_lrs_locality_load){
        .region = "r2", .zone = "z2", .sub_zone = "s2", .priority = 1};
    fake.c[0].n_loc = 2;
    fake.c[0].drops[0] = (struct xlb_lrs_drop_load){.category = "throttle"};
    fake.c[0].n_drops = 1;
    fake.c[1] = (struct fake_cluster){.name = "cluster-b", .enabled = true};
    fake.c[1].loc[0] = (struct xlb_lrs_locality_load){.region = "r1"};
    fake.c[1].n_loc = 1;
    fake.c[2] = (struct fake_cluster){.name = "cluster-off"}; /* no lrs_server */
    fake.c[2].loc[0] = (struct xlb_lrs_locality_load){.region = "r9", .issued = 5};
    fake.c[2].n_loc = 1;
    return 0;
}

/* Traffic: n calls issued on a locality, ok of them succeeded, err failed, gauge in flight. */
static void traffic(struct xlb_lrs_locality_load *l, uint64_t n, uint64_t ok, uint64_t err,
                    uint64_t in_progress)
{
    l->issued += n;
    l->successful += ok;
    l->errors += err;
    l->in_progress = in_progress;
}

/* ---- decoding helpers ---- */

static lrs_request *build(struct xlb_lrs_baseline *b, const struct xlb_lrs_settings *settings,
                          uint64_t now_ms, struct xlb_lrs_report *report)
{
    assert_int_equal(xlb_lrs_report_build(b, &source, settings, now_ms, report), 0);
    if (report->n_clusters == 0) {
        assert_null(report->buf);
        return NULL;
    }
    lrs_request *req =
        envoy__service__load_stats__v3__load_stats_request__unpack(NULL, report->len, report->buf);
    assert_non_null(req);
    assert_null(req->node); /* the node goes only in a stream's first request */
    assert_int_equal(req->n_cluster_stats, report->n_clusters);
    return req;
}

/* Build, decode and commit (the report was queued). */
static lrs_request *report_now(struct xlb_lrs_baseline *b, const struct xlb_lrs_settings *s,
                               uint64_t now_ms)
{
    struct xlb_lrs_report report;
    lrs_request *req = build(b, s, now_ms, &report);
    xlb_lrs_report_commit(b, &report);
    return req;
}

static void free_request(lrs_request *req)
{
    envoy__service__load_stats__v3__load_stats_request__free_unpacked(req, NULL);
}

static const cluster_stats *find_cluster(const lrs_request *req, const char *name)
{
    for (size_t i = 0; req != NULL && i < req->n_cluster_stats; i++)
        if (strcmp(req->cluster_stats[i]->cluster_name, name) == 0)
            return req->cluster_stats[i];
    return NULL;
}

static const locality_stats *find_locality(const cluster_stats *cs, const char *region)
{
    for (size_t i = 0; i < cs->n_upstream_locality_stats; i++)
        if (strcmp(cs->upstream_locality_stats[i]->locality->region, region) == 0)
            return cs->upstream_locality_stats[i];
    return NULL;
}

static uint64_t interval_ms(const cluster_stats *cs)
{
    assert_non_null(cs->load_report_interval);
    return (uint64_t)cs->load_report_interval->seconds * 1000 +
           (uint64_t)cs->load_report_interval->nanos / 1000000;
}

static void expect_locality(const cluster_stats *cs, const char *region, uint64_t issued,
                            uint64_t ok, uint64_t err, uint64_t in_progress)
{
    const locality_stats *l = find_locality(cs, region);
    assert_non_null(l);
    assert_int_equal(l->total_issued_requests, issued);
    assert_int_equal(l->total_successful_requests, ok);
    assert_int_equal(l->total_error_requests, err);
    assert_int_equal(l->total_requests_in_progress, in_progress);
}

/* ---- reports ---- */

static void test_first_report_carries_totals(void **state)
{
    struct xlb_lrs_baseline b;
    xlb_lrs_baseline_init(&b, 1000);
    traffic(&fake.c[0].loc[0], 10, 7, 2, 1);
    traffic(&fake.c[0].loc[1], 4, 4, 0, 0);
    fake.c[0].drops[0].dropped = 3;
    fake.c[0].uncategorized = 2;
    traffic(&fake.c[1].loc[0], 1, 1, 0, 0);

    lrs_request *req = report_now(&b, &send_all, 1250);
    assert_int_equal(req->n_cluster_stats, 2); /* not cluster-off */
    const cluster_stats *a = find_cluster(req, "cluster-a");
    assert_non_null(a);
    assert_string_equal(a->cluster_service_name, "svc-a");
    assert_int_equal(interval_ms(a), 250); /* since the baseline started */
    assert_int_equal(a->n_upstream_locality_stats, 2);
    expect_locality(a, "r1", 10, 7, 2, 1);
    expect_locality(a, "r2", 4, 4, 0, 0);
    const locality_stats *r2 = find_locality(a, "r2");
    assert_string_equal(r2->locality->zone, "z2");
    assert_string_equal(r2->locality->sub_zone, "s2");
    assert_int_equal(r2->priority, 1);
    assert_int_equal(a->total_dropped_requests, 5); /* 3 categorized + 2 uncategorized */
    assert_int_equal(a->n_dropped_requests, 1);
    assert_string_equal(a->dropped_requests[0]->category, "throttle");
    assert_int_equal(a->dropped_requests[0]->dropped_count, 3);
    const cluster_stats *cb = find_cluster(req, "cluster-b");
    assert_string_equal(cb->cluster_service_name, "");
    free_request(req);
    xlb_lrs_baseline_free(&b);
}

static void test_next_report_carries_deltas(void **state)
{
    struct xlb_lrs_baseline b;
    xlb_lrs_baseline_init(&b, 0);
    traffic(&fake.c[0].loc[0], 10, 7, 2, 5);
    fake.c[0].drops[0].dropped = 3;
    free_request(report_now(&b, &send_all, 1000));

    traffic(&fake.c[0].loc[0], 6, 5, 1, 2); /* the gauge went down: reported as is */
    fake.c[0].drops[0].dropped = 4;
    fake.c[0].uncategorized = 1;
    lrs_request *req = report_now(&b, &send_all, 1337);
    const cluster_stats *a = find_cluster(req, "cluster-a");
    assert_int_equal(interval_ms(a), 337); /* measured, whatever the configured interval */
    expect_locality(a, "r1", 6, 5, 1, 2);
    assert_int_equal(a->total_dropped_requests, 2);
    assert_int_equal(a->dropped_requests[0]->dropped_count, 1);
    free_request(req);
    xlb_lrs_baseline_free(&b);
}

static void test_unqueued_report_folds_into_next(void **state)
{
    struct xlb_lrs_baseline b;
    xlb_lrs_baseline_init(&b, 0);
    traffic(&fake.c[0].loc[0], 10, 10, 0, 0);
    free_request(report_now(&b, &send_all, 1000));

    traffic(&fake.c[0].loc[0], 5, 5, 0, 0);
    struct xlb_lrs_report lost;
    free_request(build(&b, &send_all, 2000, &lost));
    xlb_lrs_report_discard(&lost); /* the stream died before it could be queued */

    traffic(&fake.c[0].loc[0], 3, 2, 1, 0);
    lrs_request *req = report_now(&b, &send_all, 3000);
    const cluster_stats *a = find_cluster(req, "cluster-a");
    expect_locality(a, "r1", 8, 7, 1, 0);
    assert_int_equal(interval_ms(a), 2000);
    free_request(req);

    /* Nothing new: no count repeated. */
    req = report_now(&b, &send_all, 4000);
    a = find_cluster(req, "cluster-a");
    assert_non_null(a);
    assert_int_equal(a->n_upstream_locality_stats, 0);
    assert_int_equal(a->total_dropped_requests, 0);
    assert_int_equal(interval_ms(a), 1000);
    free_request(req);
    xlb_lrs_baseline_free(&b);
}

static void test_explicit_cluster_list(void **state)
{
    struct xlb_lrs_baseline b;
    xlb_lrs_baseline_init(&b, 0);
    char *names[] = {XLB_STR("cluster-b"), XLB_STR("cluster-off"), XLB_STR("nobody")};
    struct xlb_lrs_settings only_b = {.clusters = names, .n_clusters = 3, .interval_ms = 1000};
    traffic(&fake.c[0].loc[0], 9, 9, 0, 0);
    traffic(&fake.c[1].loc[0], 4, 3, 1, 0);
    lrs_request *req = report_now(&b, &only_b, 500);
    assert_int_equal(req->n_cluster_stats, 1);
    expect_locality(find_cluster(req, "cluster-b"), "r1", 4, 3, 1, 0);
    free_request(req);

    /* cluster-a was not asked for until now: its first report covers everything since start. */
    traffic(&fake.c[0].loc[0], 1, 1, 0, 0);
    req = report_now(&b, &send_all, 800);
    const cluster_stats *a = find_cluster(req, "cluster-a");
    expect_locality(a, "r1", 10, 10, 0, 0);
    assert_int_equal(interval_ms(a), 800);
    assert_int_equal(interval_ms(find_cluster(req, "cluster-b")), 300);
    assert_int_equal(find_cluster(req, "cluster-b")->n_upstream_locality_stats, 0);
    free_request(req);
    xlb_lrs_baseline_free(&b);
}

static void test_nothing_to_report(void **state)
{
    struct xlb_lrs_baseline b;
    xlb_lrs_baseline_init(&b, 0);
    struct xlb_lrs_settings none = {.interval_ms = 1000};
    struct xlb_lrs_report report;
    assert_null(build(&b, &none, 100, &report));
    assert_int_equal(report.n_clusters, 0);
    xlb_lrs_report_commit(&b, &report);
    assert_int_equal(b.n_clusters, 0);

    fake.c[0].unknown = true; /* enabled, but the source has no figures for it */
    fake.c[1].enabled = false;
    assert_null(build(&b, &send_all, 200, &report));
    xlb_lrs_report_discard(&report);
    xlb_lrs_baseline_free(&b);
}

static void test_zero_entries_left_out(void **state)
{
    struct xlb_lrs_baseline b;
    xlb_lrs_baseline_init(&b, 0);
    fake.c[0].drops[1] = (struct xlb_lrs_drop_load){.category = "lb"};
    fake.c[0].n_drops = 2;
    traffic(&fake.c[0].loc[0], 1, 1, 0, 0);
    traffic(&fake.c[0].loc[1], 0, 0, 0, 3); /* nothing finished, but calls in flight */
    fake.c[0].drops[1].dropped = 2;
    lrs_request *req = report_now(&b, &send_all, 100);
    const cluster_stats *a = find_cluster(req, "cluster-a");
    assert_int_equal(a->n_upstream_locality_stats, 2);
    expect_locality(a, "r2", 0, 0, 0, 3);
    assert_int_equal(a->n_dropped_requests, 1); /* "throttle" had none */
    assert_string_equal(a->dropped_requests[0]->category, "lb");
    free_request(req);

    traffic(&fake.c[0].loc[1], 0, 0, 0, 0);
    req = report_now(&b, &send_all, 200);
    a = find_cluster(req, "cluster-a");
    assert_int_equal(a->n_upstream_locality_stats, 0);
    assert_int_equal(a->n_dropped_requests, 0);
    free_request(req);
    xlb_lrs_baseline_free(&b);
}

static void test_forgotten_cluster_and_restarted_counter(void **state)
{
    struct xlb_lrs_baseline b;
    xlb_lrs_baseline_init(&b, 0);
    traffic(&fake.c[1].loc[0], 50, 50, 0, 0);
    free_request(report_now(&b, &send_all, 100));
    assert_non_null(xlb_lrs_baseline_find(&b, "cluster-b"));

    fake.c[1].enabled = false; /* lrs_server removed: the baseline goes with it */
    free_request(report_now(&b, &send_all, 200));
    assert_null(xlb_lrs_baseline_find(&b, "cluster-b"));

    /* Back, counting from zero as the source contract says. */
    fake.c[1].enabled = true;
    fake.c[1].loc[0] = (struct xlb_lrs_locality_load){.region = "r1"};
    traffic(&fake.c[1].loc[0], 2, 2, 0, 0);
    lrs_request *req = report_now(&b, &send_all, 300);
    expect_locality(find_cluster(req, "cluster-b"), "r1", 2, 2, 0, 0);
    assert_int_equal(interval_ms(find_cluster(req, "cluster-b")), 300);
    free_request(req);

    /* A counter that goes backwards restarted: its whole value is new. */
    fake.c[1].loc[0].issued = 1;
    fake.c[1].loc[0].successful = 1;
    req = report_now(&b, &send_all, 400);
    expect_locality(find_cluster(req, "cluster-b"), "r1", 1, 1, 0, 0);
    free_request(req);
    xlb_lrs_baseline_free(&b);
}

static void test_duplicates_reported_once(void **state)
{
    struct xlb_lrs_baseline b;
    xlb_lrs_baseline_init(&b, 0);
    fake.extra_name = "cluster-a";
    fake.c[0].loc[2] = fake.c[0].loc[0]; /* the same locality listed twice */
    fake.c[0].loc[2].issued = 99;
    fake.c[0].n_loc = 3;
    traffic(&fake.c[0].loc[0], 4, 4, 0, 0);
    lrs_request *req = report_now(&b, &send_all, 100);
    assert_int_equal(req->n_cluster_stats, 2);
    const cluster_stats *a = find_cluster(req, "cluster-a");
    assert_int_equal(a->n_upstream_locality_stats, 1);
    expect_locality(a, "r1", 4, 4, 0, 0); /* the first one wins */
    free_request(req);
    xlb_lrs_baseline_free(&b);
}

static void test_baseline_stays_sorted(void **state)
{
    struct xlb_lrs_baseline b;
    xlb_lrs_baseline_init(&b, 0);
    const char *names[] = {"m", "c", "x", "a", "q", "c"};
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(xlb_lrs_baseline_reserve(&b, 1), 0);
        struct xlb_lrs_cluster_mark mark = {.name = strdup(names[i]), .reported_ms = i};
        xlb_lrs_baseline_put(&b, &mark);
    }
    assert_int_equal(b.n_clusters, 5);
    for (size_t i = 1; i < b.n_clusters; i++)
        assert_true(strcmp(b.clusters[i - 1].name, b.clusters[i].name) < 0);
    assert_int_equal(xlb_lrs_baseline_find(&b, "c")->reported_ms, 5); /* replaced */
    assert_null(xlb_lrs_baseline_find(&b, "b"));
    const char *keep[] = {"x", "a"};
    xlb_lrs_baseline_prune(&b, keep, 2);
    assert_int_equal(b.n_clusters, 2);
    assert_string_equal(b.clusters[0].name, "a");
    assert_string_equal(b.clusters[1].name, "x");
    xlb_lrs_baseline_free(&b);
}

static size_t no_clusters(void *arg, const char *const **names)
{
    *names = NULL; /* allowed for an empty list */
    return 0;
}

static void test_empty_source(void **state)
{
    struct xlb_lrs_baseline b;
    xlb_lrs_baseline_init(&b, 0);
    free_request(report_now(&b, &send_all, 100));
    assert_int_equal(b.n_clusters, 2);
    struct xlb_lrs_source empty = {no_clusters, fake_load, &fake};
    struct xlb_lrs_report report;
    assert_int_equal(xlb_lrs_report_build(&b, &empty, &send_all, 200, &report), 0);
    assert_int_equal(report.n_clusters, 0);
    assert_int_equal(b.n_clusters, 0); /* every baseline went with its cluster */
    xlb_lrs_report_discard(&report);
    xlb_lrs_baseline_free(&b);
}

/* ---- the client object (its network side is the interop test's) ---- */

static uint64_t virtual_now;

static uint64_t virtual_clock(void)
{
    return virtual_now;
}

static void test_client_lifecycle(void **state)
{
    struct xlb_loop *loop = xlb_loop_create();
    assert_non_null(loop);
    Envoy__Config__Core__V3__Node node;
    envoy__config__core__v3__node__init(&node);
    node.id = XLB_STR("xlb-1");
    struct xlb_lrs_client_config config = {.source = source, .now_ms = virtual_clock};
    assert_null(xlb_lrs_client_create(loop, &config)); /* no node */
    config.node = &node;
    config.source.cluster_load = NULL;
    assert_null(xlb_lrs_client_create(loop, &config)); /* no source */
    config.source = source;
    virtual_now = 5000;
    struct xlb_lrs_client *c = xlb_lrs_client_create(loop, &config);
    assert_non_null(c);
    node.id = XLB_STR("changed"); /* the client kept its own copy */
    assert_false(xlb_lrs_client_running(c));
    assert_int_equal(xlb_lrs_client_interval_ms(c), 0);
    assert_int_equal(xlb_lrs_client_reports(c), 0);
    xlb_lrs_client_stop(c); /* idle: nothing to stop */
    xlb_lrs_client_destroy(c);
    xlb_lrs_client_destroy(NULL);
    xlb_loop_destroy(loop);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_first_report_carries_totals, setup),
        cmocka_unit_test_setup(test_next_report_carries_deltas, setup),
        cmocka_unit_test_setup(test_unqueued_report_folds_into_next, setup),
        cmocka_unit_test_setup(test_explicit_cluster_list, setup),
        cmocka_unit_test_setup(test_nothing_to_report, setup),
        cmocka_unit_test_setup(test_zero_entries_left_out, setup),
        cmocka_unit_test_setup(test_forgotten_cluster_and_restarted_counter, setup),
        cmocka_unit_test_setup(test_duplicates_reported_once, setup),
        cmocka_unit_test_setup(test_empty_source, setup),
        cmocka_unit_test(test_baseline_stays_sorted),
        cmocka_unit_test_setup(test_client_lifecycle, setup),
    };
    int failed = cmocka_run_group_tests_name("lrs reports", tests, NULL, NULL);
    return failed + lrs_message_tests();
}
