/* See dm_test.h. */
#include "dm_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json_read.h"
#include "proto_json.h"

#define JSON_MAX 8192

#define HCM_TYPE                                                                                   \
    "\"@type\":\"type.googleapis.com/"                                                             \
    "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager\""
#define ROUTER                                                                                     \
    "\"http_filters\":[{\"name\":\"router\",\"typed_config\":{\"@type\":\"type.googleapis.com/"    \
    "envoy.extensions.filters.http.router.v3.Router\"}}]"
#define AGG_TYPE                                                                                   \
    "\"@type\":\"type.googleapis.com/envoy.extensions.clusters.aggregate.v3.ClusterConfig\""

int dm_setup(void **state)
{
    struct dm_fixture *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return -1;
    xlb_xds_cache_init(&f->cache);
    xlb_dm_init(&f->dm, &f->cache);
    *state = f;
    return 0;
}

int dm_teardown(void **state)
{
    struct dm_fixture *f = *state;
    xlb_dm_free(&f->dm);
    xlb_xds_cache_free(&f->cache);
    free(f);
    return 0;
}

static int store(struct dm_fixture *f, enum xlb_xds_type type, const char *name, const char *json)
{
    cJSON *doc = cJSON_Parse(json);
    if (doc == NULL)
        fail_msg("test input is not JSON: %s", json);
    struct xlb_errors errs = {0};
    const ProtobufCMessageDescriptor *desc = xlb_proto_type_by_url(xlb_xds_type_url[type]);
    ProtobufCMessage *msg = xlb_proto_json_read(desc, doc, "r", &errs);
    cJSON_Delete(doc);
    for (unsigned i = 0; i < errs.n; i++)
        print_message("test input error: %s\n", errs.lines[i]);
    assert_non_null(msg);
    xlb_errors_free(&errs);
    struct xlb_xds_resource *res = xlb_xds_cache_get(&f->cache, type, name);
    assert_non_null(res);
    int rc = xlb_xds_cache_update(&f->cache, res, msg, "v", false, &errs);
    for (unsigned i = 0; rc == 0 && i < errs.n; i++)
        print_message("unexpected NACK: %s\n", errs.lines[i]);
    xlb_errors_free(&errs);
    return rc;
}

void dm_put(struct dm_fixture *f, enum xlb_xds_type type, const char *name, const char *json)
{
    assert_int_equal(store(f, type, name, json), 0);
}

void dm_put_invalid(struct dm_fixture *f, enum xlb_xds_type type, const char *name,
                    const char *json)
{
    assert_int_equal(store(f, type, name, json), -1);
}

void dm_gone(struct dm_fixture *f, enum xlb_xds_type type, const char *name)
{
    struct xlb_xds_resource *res = xlb_xds_cache_get(&f->cache, type, name);
    assert_non_null(res);
    xlb_xds_cache_does_not_exist(&f->cache, res);
}

/* Appends to a JSON buffer. */
static void add(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(char *buf, const char *fmt, ...)
{
    size_t len = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + len, JSON_MAX - len, fmt, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < JSON_MAX - len);
}

/* `"a","b"` from "a b". */
static void add_name_list(char *buf, const char *names)
{
    char copy[JSON_MAX];
    snprintf(copy, sizeof(copy), "%s", names);
    const char *sep = "";
    for (char *save, *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        add(buf, "%s\"%s\"", sep, tok);
        sep = ",";
    }
}

/* One virtual host with a route to each cluster, each under its own path prefix. */
static void add_route_config(char *buf, const char *name, const char *clusters)
{
    char copy[JSON_MAX];
    snprintf(copy, sizeof(copy), "%s", clusters);
    add(buf,
        "{\"name\":\"%s\",\"virtual_hosts\":[{\"name\":\"vh\",\"domains\":[\"*\"],"
        "\"routes\":[",
        name);
    int i = 0;
    for (char *save, *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        add(buf, "%s{\"match\":{\"prefix\":\"/s%d/\"},\"route\":{\"cluster\":\"%s\"}}",
            i ? "," : "", i, tok);
        i++;
    }
    add(buf, "]}]}");
}

void dm_put_listener(struct dm_fixture *f, const char *name, const char *rds_name)
{
    char json[JSON_MAX] = "";
    add(json,
        "{\"name\":\"%s\",\"api_listener\":{\"api_listener\":{" HCM_TYPE
        ",\"rds\":{\"config_source\":{\"ads\":{}},\"route_config_name\":\"%s\"}," ROUTER "}}}",
        name, rds_name);
    dm_put(f, XLB_XDS_LDS, name, json);
}

void dm_put_inline_listener(struct dm_fixture *f, const char *name, const char *clusters)
{
    char json[JSON_MAX] = "";
    add(json, "{\"name\":\"%s\",\"api_listener\":{\"api_listener\":{" HCM_TYPE ",\"route_config\":",
        name);
    add_route_config(json, "inline", clusters);
    add(json, "," ROUTER "}}}");
    dm_put(f, XLB_XDS_LDS, name, json);
}

void dm_put_routes(struct dm_fixture *f, const char *name, const char *clusters)
{
    char json[JSON_MAX] = "";
    add_route_config(json, name, clusters);
    dm_put(f, XLB_XDS_RDS, name, json);
}

void dm_put_eds_cluster(struct dm_fixture *f, const char *name, const char *service_name)
{
    char json[JSON_MAX] = "";
    add(json,
        "{\"name\":\"%s\",\"type\":\"EDS\",\"eds_cluster_config\":{\"eds_config\":"
        "{\"ads\":{}}",
        name);
    if (service_name != NULL)
        add(json, ",\"service_name\":\"%s\"", service_name);
    add(json, "}}");
    dm_put(f, XLB_XDS_CDS, name, json);
}

void dm_put_dns_cluster(struct dm_fixture *f, const char *name)
{
    char json[JSON_MAX] = "";
    add(json,
        "{\"name\":\"%s\",\"type\":\"LOGICAL_DNS\",\"load_assignment\":{\"endpoints\":["
        "{\"lb_endpoints\":[{\"endpoint\":{\"address\":{\"socket_address\":"
        "{\"address\":\"backend.example\",\"port_value\":443}}}}]}]}}",
        name);
    dm_put(f, XLB_XDS_CDS, name, json);
}

void dm_put_aggregate(struct dm_fixture *f, const char *name, const char *children)
{
    char json[JSON_MAX] = "";
    add(json,
        "{\"name\":\"%s\",\"cluster_type\":{\"name\":\"envoy.clusters.aggregate\","
        "\"typed_config\":{" AGG_TYPE ",\"clusters\":[",
        name);
    add_name_list(json, children);
    add(json, "]}}}");
    dm_put(f, XLB_XDS_CDS, name, json);
}

void dm_put_endpoints(struct dm_fixture *f, const char *name)
{
    char json[JSON_MAX] = "";
    add(json,
        "{\"cluster_name\":\"%s\",\"endpoints\":[{\"locality\":{\"zone\":\"z\"},"
        "\"load_balancing_weight\":1,\"lb_endpoints\":[{\"endpoint\":{\"address\":"
        "{\"socket_address\":{\"address\":\"198.18.0.10\",\"port_value\":8080}}}}]}]}",
        name);
    dm_put(f, XLB_XDS_EDS, name, json);
}

void dm_step(struct dm_fixture *f)
{
    assert_int_equal(xlb_dm_update(&f->dm), 0);
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts the space-separated words of text into out. */
static void sorted_words(const char *text, char *out, size_t size)
{
    char copy[JSON_MAX];
    char *words[512] = {0};
    size_t n = 0;
    snprintf(copy, sizeof(copy), "%s", text);
    for (char *save, *tok = strtok_r(copy, " ", &save); tok && n < 512;
         tok = strtok_r(NULL, " ", &save))
        words[n++] = tok;
    qsort(words, n, sizeof(*words), compare_strings);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        snprintf(out + strlen(out), size - strlen(out), "%s%s", i ? " " : "", words[i]);
}

void dm_expect_watched(struct dm_fixture *f, const char *expected)
{
    static const char *const prefix[XLB_XDS_TYPES] = {"lds", "rds", "cds", "eds"};
    char got[JSON_MAX] = "";
    for (int t = 0; t < XLB_XDS_TYPES; t++)
        for (const struct xlb_xds_resource *r = f->cache.list[t]; r != NULL; r = r->next)
            if (r->watched)
                add(got, "%s%s:%s", got[0] ? " " : "", prefix[t], r->name);
    char want_sorted[JSON_MAX], got_sorted[JSON_MAX];
    sorted_words(expected, want_sorted, sizeof(want_sorted));
    sorted_words(got, got_sorted, sizeof(got_sorted));
    assert_string_equal(got_sorted, want_sorted);
}

void dm_expect_vip(struct dm_fixture *f, int vip, enum xlb_dm_state state, const char *reason)
{
    const struct xlb_dm_vip *v = &f->dm.vips[vip];
    if (v->state != state)
        print_message("VIP %d is %s (%s)\n", vip, xlb_dm_state_name(v->state),
                      v->reason ? v->reason : "no reason");
    assert_int_equal(v->state, state);
    if (reason == NULL)
        assert_null(v->reason);
    else
        assert_string_equal(v->reason, reason);
}

const struct xlb_dm_cluster *dm_expect_cluster(struct dm_fixture *f, int vip, const char *name,
                                               enum xlb_dm_state state)
{
    const struct xlb_dm_cluster *c = xlb_dm_vip_cluster(&f->dm.vips[vip], name);
    if (c == NULL)
        fail_msg("VIP %d has no cluster \"%s\"", vip, name);
    if (c->state != state)
        print_message("cluster %s is %s (%s)\n", name, xlb_dm_state_name(c->state),
                      c->error ? c->error : "no error");
    assert_int_equal(c->state, state);
    return c;
}

void dm_expect_leaves(struct dm_fixture *f, int vip, const char *name, const char *leaves)
{
    const struct xlb_dm_vip *v = &f->dm.vips[vip];
    const struct xlb_dm_cluster *c = dm_expect_cluster(f, vip, name, XLB_DM_READY);
    char got[JSON_MAX] = "";
    for (size_t i = 0; i < c->n_leaves; i++)
        add(got, "%s%s", i ? " " : "", v->clusters[c->leaves[i]].name);
    assert_string_equal(got, leaves);
}
