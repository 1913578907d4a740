/* Load figures for LRS from the per-worker counters of lib/xlb_load.h: a test writes them as
 * the data plane will, and the source sums them per locality and drop category. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lrs_source.h"
#include "proto_json.h"

static void put(struct xlb_xds_cache *cache, enum xlb_xds_type type, const char *name,
                const char *json)
{
    struct xlb_errors errs = {0};
    cJSON *doc = cJSON_Parse(json);
    assert_non_null(doc);
    ProtobufCMessage *m =
        xlb_proto_json_read(xlb_proto_type_by_url(xlb_xds_type_url[type]), doc, "t", &errs);
    assert_non_null(m);
    assert_int_equal(
        xlb_xds_cache_update(cache, xlb_xds_cache_get(cache, type, name), m, "1", false, &errs), 0);
    cJSON_Delete(doc);
    xlb_errors_free(&errs);
}

static const struct xlb_lrs_locality_load *find(const struct xlb_lrs_cluster_load *l,
                                                const char *zone, uint32_t priority)
{
    for (size_t i = 0; i < l->n_localities; i++)
        if (strcmp(l->localities[i].zone, zone) == 0 && l->localities[i].priority == priority)
            return &l->localities[i];
    return NULL;
}

static void sums_workers_per_locality(void **state)
{
    struct xlb_xds_cache cache;
    xlb_xds_cache_init(&cache);
    put(&cache, XLB_XDS_CDS, "c",
        "{\"name\": \"c\", \"type\": \"EDS\", \"eds_cluster_config\": {\"eds_config\": {\"ads\": "
        "{}}, \"service_name\": \"svc-c\"}, \"lrs_server\": {\"self\": {}}}");
    put(&cache, XLB_XDS_CDS, "quiet",
        "{\"name\": \"quiet\", \"type\": \"EDS\", \"eds_cluster_config\": {\"eds_config\": "
        "{\"ads\": {}}}}");
    put(&cache, XLB_XDS_EDS, "svc-c",
        "{\"cluster_name\": \"svc-c\", \"endpoints\": ["
        "{\"locality\": {\"zone\": \"a\"}, \"load_balancing_weight\": 1, \"lb_endpoints\": "
        "[{\"endpoint\": {\"address\": {\"socket_address\": {\"address\": \"198.18.0.21\", "
        "\"port_value\": 80}}}}]},"
        "{\"locality\": {\"zone\": \"b\"}, \"load_balancing_weight\": 1, \"priority\": 1, "
        "\"lb_endpoints\": [{\"endpoint\": {\"address\": {\"socket_address\": {\"address\": "
        "\"198.18.0.22\", \"port_value\": 80}}}}]}],"
        "\"policy\": {\"drop_overloads\": [{\"category\": \"lb\", \"drop_percentage\": "
        "{\"numerator\": 10}}]}}");

    struct xlb_worker_load *load = calloc(2, sizeof(*load));
    struct xlb_lrs_source_state s;
    xlb_lrs_source_init(&s, &cache, load, 2);
    struct xlb_lrs_source source = xlb_lrs_source_of(&s);

    const char *const *names;
    assert_int_equal(source.enabled_clusters(source.arg, &names), 1);
    assert_string_equal(names[0], "c");
    struct xlb_lrs_cluster_load out;
    assert_int_equal(source.cluster_load(source.arg, "quiet", &out), -1);

    /* Nothing counted yet: both localities listed with zeros. */
    assert_int_equal(source.cluster_load(source.arg, "c", &out), 0);
    assert_string_equal(out.service_name, "svc-c");
    assert_int_equal(out.n_localities, 2);
    assert_int_equal(find(&out, "a", 0)->issued, 0);

    /* Two workers count, as the data plane will, in the slots the source assigned. */
    int a = xlb_load_slots_locality(&s.slots, "c", 0, "", "a", "");
    int b = xlb_load_slots_locality(&s.slots, "c", 1, "", "b", "");
    int drop = xlb_load_slots_drop(&s.slots, "c", "lb");
    assert_true(a >= 0 && b >= 0 && a != b && drop >= 0);
    load[0].localities[a] = (struct xlb_locality_load){.issued = 5, .succeeded = 3, .failed = 1};
    load[1].localities[a] = (struct xlb_locality_load){.issued = 2, .succeeded = 2};
    load[1].localities[b] = (struct xlb_locality_load){.issued = 9, .succeeded = 9};
    load[0].drops[drop] = 4;
    load[1].drops[drop] = 1;

    assert_int_equal(source.cluster_load(source.arg, "c", &out), 0);
    const struct xlb_lrs_locality_load *la = find(&out, "a", 0), *lb = find(&out, "b", 1);
    assert_non_null(la);
    assert_non_null(lb);
    assert_int_equal(la->issued, 7);
    assert_int_equal(la->successful, 5);
    assert_int_equal(la->errors, 1);
    assert_int_equal(la->in_progress, 1); /* issued and not finished */
    assert_int_equal(lb->issued, 9);
    assert_int_equal(lb->in_progress, 0);
    assert_int_equal(out.n_drops, 1);
    assert_string_equal(out.drops[0].category, "lb");
    assert_int_equal(out.drops[0].dropped, 5);

    /* Slots are stable: asking again gives the same ones. */
    assert_int_equal(xlb_load_slots_locality(&s.slots, "c", 0, NULL, "a", NULL), a);

    xlb_lrs_source_free(&s);
    free(load);
    xlb_xds_cache_free(&cache);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sums_workers_per_locality),
    };
    return cmocka_run_group_tests_name("lrs_source", tests, NULL, NULL);
}
