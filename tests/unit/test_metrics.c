/*
 * The LB and xDS parts of the Prometheus exposition, rendered from known values: exact sample
 * lines, label escaping, the endpoint cap folding into endpoint="other", and every sample
 * after its family's HELP and TYPE.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lb_metrics.h"
#include "xds_metrics.h"
#include "xlb_lb_connectivity.h"
#include "xlb_override_map.h"

/* Two clusters: "tcp" (two localities, three endpoints, one drop category) and "w\"x" (one
 * endpoint, a name that needs escaping). */
struct sample_lb {
    struct xlb_lbm_locality loc[2], loc2[1];
    struct xlb_lbm_drop drop[1];
    struct xlb_lbm_endpoint ep[3], ep2[1];
    struct xlb_lbm_cluster clusters[2];
    struct xlb_lb_metrics m;
};

static void sample_lb(struct sample_lb *s)
{
    memset(s, 0, sizeof(*s));
    s->loc[0] = (struct xlb_lbm_locality){"demo/demo-a/", 0, 2, 7};
    s->loc[1] = (struct xlb_lbm_locality){"demo/demo-b/", 1, 1, 3};
    s->drop[0] = (struct xlb_lbm_drop){"throttle", 4};
    s->ep[0] = (struct xlb_lbm_endpoint){"198.18.0.21:9000", 0, XLB_HEALTH_HEALTHY, 0, 5, 0};
    s->ep[1] = (struct xlb_lbm_endpoint){"198.18.0.22:9000", 0, XLB_HEALTH_UNKNOWN, 1, 1, 2};
    s->ep[2] = (struct xlb_lbm_endpoint){"198.18.0.23:9000", 1, XLB_HEALTH_DRAINING, 0, 3, 0};
    s->ep[1].connectivity = XLB_CONN_READY;
    s->clusters[0] = (struct xlb_lbm_cluster){
        .name = "tcp",
        .started = 10,
        .finished = 8,
        .circuit_dropped = 6,
        .chosen_priority = 0,
        .n_localities = 2,
        .n_drops = 1,
        .n_endpoints = 3,
        .localities = s->loc,
        .drops = s->drop,
        .endpoints = s->ep,
    };
    s->loc2[0] = (struct xlb_lbm_locality){"//", 0, 1, 0};
    s->ep2[0] = (struct xlb_lbm_endpoint){"[2001:2::21]:80", 0, XLB_HEALTH_HEALTHY, 0, 9, 1};
    s->clusters[1] = (struct xlb_lbm_cluster){
        .name = "w\"x",
        .chosen_priority = XLB_LBM_NO_PRIORITY,
        .n_localities = 1,
        .n_endpoints = 1,
        .localities = s->loc2,
        .endpoints = s->ep2,
    };
    s->m = (struct xlb_lb_metrics){2, s->clusters};
}

static void assert_line(const struct xlb_text *t, const char *line)
{
    char want[512];
    snprintf(want, sizeof(want), "\n%s\n", line);
    if (strstr(t->data, want) == NULL)
        fail_msg("missing line: %s\n--- exposition ---\n%s", line, t->data);
}

static void assert_no_line(const struct xlb_text *t, const char *prefix)
{
    char want[512];
    snprintf(want, sizeof(want), "\n%s", prefix);
    if (strstr(t->data, want) != NULL)
        fail_msg("unexpected line starting %s\n--- exposition ---\n%s", prefix, t->data);
}

/* Every sample's family was announced by HELP and TYPE before it; counters end in _total. */
static void assert_well_formed(const struct xlb_text *t)
{
    char *copy = strdup(t->data), *save = NULL, typed[64][64];
    int n_typed = 0;
    assert_non_null(copy);
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[64], kind[16];
        if (sscanf(line, "# TYPE %63s %15s", name, kind) == 2) {
            if (strcmp(kind, "counter") == 0)
                assert_non_null(strstr(name, "_total"));
            assert_true(n_typed < 64);
            strcpy(typed[n_typed++], name);
            continue;
        }
        if (line[0] == '#')
            continue;
        size_t len = strcspn(line, "{ ");
        assert_true(n_typed > 0);
        assert_int_equal(strlen(typed[n_typed - 1]), len);
        assert_memory_equal(typed[n_typed - 1], line, len);
    }
    free(copy);
}

static void renders_known_values(void **state)
{
    struct sample_lb s;
    sample_lb(&s);
    struct xlb_text t = {0};
    assert_int_equal(xlb_lb_metrics_render(&s.m, 100, &t), 0);
    assert_false(t.failed);
    assert_well_formed(&t);
    assert_line(&t, "xlb_cluster_requests_started_total{cluster=\"tcp\"} 10");
    assert_line(&t, "xlb_cluster_requests_finished_total{cluster=\"tcp\"} 8");
    assert_line(&t, "xlb_cluster_requests_in_flight{cluster=\"tcp\"} 2");
    assert_line(&t, "xlb_cluster_circuit_breaker_drops_total{cluster=\"tcp\"} 6");
    assert_line(&t, "xlb_cluster_endpoints{cluster=\"tcp\"} 3");
    assert_line(&t,
                "xlb_cluster_endpoints_usable{cluster=\"tcp\"} 1"); /* .22 ejected, .23 draining */
    assert_line(&t, "xlb_cluster_endpoints_ejected{cluster=\"tcp\"} 1");
    assert_line(&t, "xlb_cluster_chosen_priority{cluster=\"tcp\"} 0");
    assert_line(&t, "xlb_cluster_chosen_priority{cluster=\"w\\\"x\"} -1");
    assert_line(&t, "xlb_drop_overload_total{cluster=\"tcp\",category=\"throttle\"} 4");
    assert_line(&t, "xlb_locality_requests_started_total{cluster=\"tcp\",priority=\"1\","
                    "locality=\"demo/demo-b/\"} 3");
    assert_line(&t,
                "xlb_locality_weight{cluster=\"tcp\",priority=\"0\",locality=\"demo/demo-a/\"} 2");
    assert_line(&t, "xlb_locality_endpoints_usable{cluster=\"tcp\",priority=\"0\","
                    "locality=\"demo/demo-a/\"} 1");
    assert_line(&t, "xlb_endpoint_requests_total{cluster=\"tcp\",locality=\"demo/demo-a/\","
                    "endpoint=\"198.18.0.22:9000\",result=\"failure\"} 2");
    assert_line(&t, "xlb_endpoint_requests_total{cluster=\"w\\\"x\",locality=\"//\","
                    "endpoint=\"[2001:2::21]:80\",result=\"success\"} 9");
    assert_line(&t, "xlb_endpoint_health{cluster=\"tcp\",locality=\"demo/demo-b/\","
                    "endpoint=\"198.18.0.23:9000\",status=\"draining\"} 1");
    assert_line(&t, "xlb_endpoint_ejected{cluster=\"tcp\",locality=\"demo/demo-a/\","
                    "endpoint=\"198.18.0.22:9000\"} 1");
    assert_line(&t, "xlb_endpoint_connectivity{cluster=\"tcp\",locality=\"demo/demo-a/\","
                    "endpoint=\"198.18.0.22:9000\",state=\"READY\"} 1");
    assert_line(&t, "xlb_endpoint_connectivity{cluster=\"tcp\",locality=\"demo/demo-a/\","
                    "endpoint=\"198.18.0.21:9000\",state=\"IDLE\"} 1");
    assert_line(&t, "xlb_metrics_endpoints_folded 0");
    assert_line(&t, "xlb_metrics_localities_folded 0");
    assert_no_line(&t, "xlb_endpoint_requests_total{cluster=\"tcp\",locality=\"other\"");
    xlb_text_free(&t);
}

/* A cap of 2: "tcp" shows .21 and .22, folds .23; "w\"x" is folded whole. */
static void folds_endpoints_beyond_the_cap(void **state)
{
    struct sample_lb s;
    sample_lb(&s);
    struct xlb_text t = {0};
    assert_int_equal(xlb_lb_metrics_render(&s.m, 2, &t), 2);
    assert_well_formed(&t);
    assert_line(&t, "xlb_endpoint_requests_total{cluster=\"tcp\",locality=\"demo/demo-a/\","
                    "endpoint=\"198.18.0.22:9000\",result=\"success\"} 1");
    assert_no_line(&t, "xlb_endpoint_requests_total{cluster=\"tcp\",locality=\"demo/demo-b/\"");
    assert_no_line(&t, "xlb_endpoint_health{cluster=\"tcp\",locality=\"demo/demo-b/\"");
    assert_line(&t, "xlb_endpoint_requests_total{cluster=\"tcp\",locality=\"other\","
                    "endpoint=\"other\",result=\"success\"} 3");
    assert_line(&t, "xlb_endpoint_requests_total{cluster=\"w\\\"x\",locality=\"other\","
                    "endpoint=\"other\",result=\"failure\"} 1");
    assert_line(&t,
                "xlb_endpoint_ejected{cluster=\"tcp\",locality=\"other\",endpoint=\"other\"} 0");
    assert_line(&t, "xlb_metrics_endpoints_folded 2");
    /* Localities too: "tcp" keeps its two, "w\"x"'s one is folded. */
    assert_line(&t,
                "xlb_locality_weight{cluster=\"tcp\",priority=\"1\",locality=\"demo/demo-b/\"} 1");
    assert_no_line(&t, "xlb_locality_weight{cluster=\"w\\\"x\",priority=\"0\"");
    assert_line(&t,
                "xlb_locality_weight{cluster=\"w\\\"x\",priority=\"other\",locality=\"other\"} 1");
    assert_line(&t, "xlb_locality_endpoints_usable{cluster=\"w\\\"x\",priority=\"other\","
                    "locality=\"other\"} 1");
    assert_line(&t, "xlb_metrics_localities_folded 1");
    /* Cluster families are not capped. */
    assert_line(&t, "xlb_cluster_endpoints{cluster=\"w\\\"x\"} 1");
    xlb_text_free(&t);
}

/* Nothing compiled: every family is announced, none has a sample, nothing is folded. */
static void renders_no_clusters(void **state)
{
    struct xlb_lb_metrics m = {0};
    struct xlb_text t = {0};
    assert_int_equal(xlb_lb_metrics_render(&m, 100, &t), 0);
    assert_well_formed(&t);
    assert_non_null(strstr(t.data, "# TYPE xlb_endpoint_requests_total counter\n"));
    assert_no_line(&t, "xlb_cluster_requests_started_total{");
    assert_line(&t, "xlb_metrics_endpoints_folded 0");
    xlb_text_free(&t);
}

static void renders_xds(void **state)
{
    struct xlb_xds_metrics m = {0};
    m.has_ads = true;
    m.ads.server = "198.18.0.5:18000";
    m.ads.connected = true;
    m.ads.acks[XLB_XDS_CDS] = 3;
    m.ads.nacks[XLB_XDS_EDS] = 2;
    m.resources[XLB_XDS_CDS][XLB_XDSM_ACKED] = 4;
    m.resources[XLB_XDS_EDS][XLB_XDSM_NACKED_BUT_CACHED] = 1;
    struct xlb_text t = {0};
    xlb_xds_metrics_render(&m, &t);
    assert_well_formed(&t);
    assert_line(&t, "xlb_xds_stream_connected{server=\"198.18.0.5:18000\"} 1");
    assert_line(&t, "xlb_xds_acks_total{type=\"cluster\"} 3");
    assert_line(&t, "xlb_xds_nacks_total{type=\"cluster_load_assignment\"} 2");
    assert_line(&t, "xlb_xds_nacks_total{type=\"listener\"} 0");
    assert_line(&t, "xlb_xds_resources{type=\"cluster\",state=\"acked\"} 4");
    assert_line(&t, "xlb_xds_resources{type=\"cluster_load_assignment\","
                    "state=\"nacked_but_cached\"} 1");
    assert_line(&t, "xlb_xds_resources{type=\"listener\",state=\"static\"} 0");
    xlb_text_free(&t);

    /* Without xds_servers: no stream or ACK/NACK series, resources still counted. */
    struct xlb_xds_metrics none = {0};
    none.resources[XLB_XDS_LDS][XLB_XDSM_STATIC] = 1;
    struct xlb_text u = {0};
    xlb_xds_metrics_render(&none, &u);
    assert_well_formed(&u);
    assert_no_line(&u, "xlb_xds_stream_connected{");
    assert_no_line(&u, "xlb_xds_nacks_total{");
    assert_line(&u, "xlb_xds_resources{type=\"listener\",state=\"static\"} 1");
    xlb_text_free(&u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(renders_known_values),
        cmocka_unit_test(folds_endpoints_beyond_the_cap),
        cmocka_unit_test(renders_no_clusters),
        cmocka_unit_test(renders_xds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
