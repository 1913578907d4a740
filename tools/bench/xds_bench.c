/*
 * xds_bench: the control plane's cost for a large configuration, the way ADS delivers it.
 * 1,000 clusters x 100 endpoints (plus a listener and a route configuration naming every
 * cluster) arrive as packed protobuf; xlb decodes, validates and caches them, and the
 * dependency manager warms the VIP, and control/lb_compile compiles its LB tree (what the
 * workers pick from). Then one cluster's EDS changes, as happens all day long, and goes the
 * same way: decode, validate, cache, re-warm, recompile that cluster and the VIP's tree.
 * Figures are reported beside a baseline from the same run: protobuf-c merely decoding the
 * same bytes. Never passes or fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_clock.h"
#include "dependency_manager.h"
#include "lb_trees.h"
#include "proto_json.h"
#include "xds_cache.h"

#define CLUSTERS  1000
#define ENDPOINTS 100
#define REPEATS   21

struct packed {
    enum xlb_xds_type type;
    uint8_t *data;
    size_t len;
};

static long rss_kib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f != NULL && fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = 0;
    if (f != NULL)
        fclose(f);
    return resident * 4;
}

/* proto3 JSON -> message -> packed bytes, as a server would send it. */
static struct packed pack_json(enum xlb_xds_type type, const char *json)
{
    struct xlb_errors errs = {0};
    cJSON *doc = cJSON_Parse(json);
    ProtobufCMessage *m =
        xlb_proto_json_read(xlb_proto_type_by_url(xlb_xds_type_url[type]), doc, "bench", &errs);
    if (m == NULL) {
        fprintf(stderr, "xds_bench: %s\n", errs.n ? errs.lines[0] : "?");
        exit(1);
    }
    struct packed p = {.type = type, .len = protobuf_c_message_get_packed_size(m)};
    p.data = malloc(p.len);
    protobuf_c_message_pack(m, p.data);
    protobuf_c_message_free_unpacked(m, NULL);
    cJSON_Delete(doc);
    xlb_errors_free(&errs);
    return p;
}

static char *cla_json(unsigned c, unsigned weight)
{
    size_t cap = 256 + ENDPOINTS * 160;
    char *s = malloc(cap);
    size_t n = (size_t)snprintf(s, cap,
                                "{\"cluster_name\": \"c%u\", \"endpoints\": [{\"locality\": "
                                "{\"zone\": \"z\"}, \"load_balancing_weight\": %u, "
                                "\"lb_endpoints\": [",
                                c, weight);
    for (unsigned e = 0; e < ENDPOINTS; e++) {
        unsigned ip = c * ENDPOINTS + e; /* unique within 198.18.0.0/15 */
        n += (size_t)snprintf(s + n, cap - n,
                              "%s{\"endpoint\": {\"address\": {\"socket_address\": "
                              "{\"address\": \"198.%u.%u.%u\", \"port_value\": 8080}}}}",
                              e ? ", " : "", 18 + (ip >> 16), (ip >> 8) & 255, ip & 255);
    }
    snprintf(s + n, cap - n, "]}]}");
    return s;
}

static struct packed *build_config(size_t *n)
{
    struct packed *all = calloc(2 + 2 * CLUSTERS, sizeof(*all));
    size_t k = 0;
    all[k++] = pack_json(
        XLB_XDS_LDS,
        "{\"name\": \"svc\", \"api_listener\": {\"api_listener\": {\"@type\": "
        "\"type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3."
        "HttpConnectionManager\", \"rds\": {\"route_config_name\": \"routes\", "
        "\"config_source\": {\"ads\": {}}}, \"http_filters\": [{\"name\": \"router\", "
        "\"typed_config\": {\"@type\": "
        "\"type.googleapis.com/envoy.extensions.filters.http.router.v3.Router\"}}]}}}");
    size_t cap = 128 + CLUSTERS * 96;
    char *routes = malloc(cap);
    size_t n_routes = (size_t)snprintf(routes, cap,
                                       "{\"name\": \"routes\", \"virtual_hosts\": [{\"name\": "
                                       "\"vh\", \"domains\": [\"*\"], \"routes\": [");
    for (unsigned c = 0; c < CLUSTERS; c++)
        n_routes += (size_t)snprintf(routes + n_routes, cap - n_routes,
                                     "%s{\"match\": {\"prefix\": \"/s%u/\"}, \"route\": "
                                     "{\"cluster\": \"c%u\"}}",
                                     c ? ", " : "", c, c);
    snprintf(routes + n_routes, cap - n_routes, "]}]}");
    all[k++] = pack_json(XLB_XDS_RDS, routes);
    free(routes);
    for (unsigned c = 0; c < CLUSTERS; c++) {
        char cluster[160];
        snprintf(cluster, sizeof(cluster),
                 "{\"name\": \"c%u\", \"type\": \"EDS\", \"eds_cluster_config\": "
                 "{\"eds_config\": {\"ads\": {}}}}",
                 c);
        all[k++] = pack_json(XLB_XDS_CDS, cluster);
        char *cla = cla_json(c, 1);
        all[k++] = pack_json(XLB_XDS_EDS, cla);
        free(cla);
    }
    *n = k;
    return all;
}

static const ProtobufCMessageDescriptor *descriptor(enum xlb_xds_type type)
{
    return xlb_proto_type_by_url(xlb_xds_type_url[type]);
}

static const char *name_of(enum xlb_xds_type type, unsigned index)
{
    static char name[32];
    if (type == XLB_XDS_LDS)
        return "svc";
    if (type == XLB_XDS_RDS)
        return "routes";
    snprintf(name, sizeof(name), "c%u", index);
    return name;
}

/* Decode, validate and cache every resource; what ADS does on a response. */
static void apply(struct xlb_xds_cache *cache, const struct packed *p, size_t n)
{
    struct xlb_errors errs = {0};
    for (size_t i = 0; i < n; i++) {
        ProtobufCMessage *m =
            protobuf_c_message_unpack(descriptor(p[i].type), NULL, p[i].len, p[i].data);
        unsigned index = i < 2 ? 0 : (unsigned)(i - 2) / 2;
        struct xlb_xds_resource *res =
            xlb_xds_cache_get(cache, p[i].type, name_of(p[i].type, index));
        xlb_xds_cache_update(cache, res, m, "1", false, &errs);
    }
    if (errs.n)
        fprintf(stderr, "xds_bench: unexpected: %s\n", errs.lines[0]);
    xlb_errors_free(&errs);
}

/* No worker reads the trees: every grace period is over at once. */
static uint64_t grace_start(void *arg)
{
    return 1;
}

static bool grace_over(void *arg, uint64_t token)
{
    return true;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof(double), compare);
    return v[n / 2];
}

int main(void)
{
    size_t n;
    struct packed *config = build_config(&n);
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += config[i].len;

    /* Baseline: protobuf-c decoding the same bytes, nothing more. */
    double t0 = now_ms();
    for (size_t i = 0; i < n; i++)
        protobuf_c_message_free_unpacked(protobuf_c_message_unpack(descriptor(config[i].type), NULL,
                                                                   config[i].len, config[i].data),
                                         NULL);
    double decode_ms = now_ms() - t0;

    long rss_before = rss_kib();
    struct xlb_xds_cache cache;
    struct xlb_dm dm;
    xlb_xds_cache_init(&cache);
    xlb_dm_init(&dm, &cache);
    xlb_dm_add_vip(&dm, XLB_DM_VIP_L7, "svc");
    t0 = now_ms();
    apply(&cache, config, n);
    double validate_ms = now_ms() - t0;
    t0 = now_ms();
    xlb_dm_update(&dm);
    double warm_ms = now_ms() - t0;
    long rss_after = rss_kib();

    struct xlb_load_slots load_slots;
    xlb_load_slots_init(&load_slots);
    struct xlb_lb_grace grace = {grace_start, grace_over, NULL};
    struct xlb_lb_trees *lb = xlb_lb_trees_create(&load_slots, &grace, NULL, 0, 1);
    size_t vip_index = 0;
    t0 = now_ms();
    bool compiled = xlb_lb_trees_update(lb, &dm, &vip_index, 1, 0);
    double compile_ms = now_ms() - t0;

    /* One cluster's EDS changes (a weight), REPEATS times: decode, validate, re-warm, then
     * recompile the cluster and the VIP's tree. */
    double update[REPEATS], update_decode[REPEATS], update_lb[REPEATS];
    for (unsigned r = 0; r < REPEATS; r++) {
        char *cla = cla_json(CLUSTERS / 2, 2 + r);
        struct packed p = pack_json(XLB_XDS_EDS, cla);
        free(cla);
        t0 = now_ms();
        protobuf_c_message_free_unpacked(
            protobuf_c_message_unpack(descriptor(p.type), NULL, p.len, p.data), NULL);
        update_decode[r] = now_ms() - t0;
        t0 = now_ms();
        ProtobufCMessage *m = protobuf_c_message_unpack(descriptor(p.type), NULL, p.len, p.data);
        struct xlb_errors errs = {0};
        xlb_xds_cache_update(&cache, xlb_xds_cache_find(&cache, XLB_XDS_EDS, "c500"), m, "2", false,
                             &errs);
        xlb_dm_update(&dm);
        double warmed = now_ms();
        compiled &= xlb_lb_trees_update(lb, &dm, &vip_index, 1, 0);
        update[r] = now_ms() - t0;
        update_lb[r] = now_ms() - warmed;
        xlb_errors_free(&errs);
        free(p.data);
    }

    printf("xds_bench: %u clusters x %u endpoints, %zu resources, %.1f MiB of protobuf\n",
           (unsigned)CLUSTERS, (unsigned)ENDPOINTS, n, (double)bytes / (1 << 20));
    printf("  VIP state after warming: %s\n", xlb_dm_state_name(dm.vips[0].state));
    printf("  %-44s %10.1f ms\n", "baseline: protobuf-c decode only", decode_ms);
    printf("  %-44s %10.1f ms  (%.1f x baseline)\n", "decode + validate + cache", validate_ms,
           validate_ms / decode_ms);
    printf("  %-44s %10.1f ms\n", "dependency manager: warm the VIP", warm_ms);
    printf("  %-44s %10.1f ms%s\n", "lb_compile: the VIP's LB tree, every cluster", compile_ms,
           compiled ? "" : "  (a compile FAILED: see the log)");
    printf("  %-44s %10.1f MiB (%.0f bytes per endpoint)\n", "memory held (RSS growth)",
           (double)(rss_after - rss_before) / 1024,
           (double)(rss_after - rss_before) * 1024 / (CLUSTERS * ENDPOINTS));
    double u = median(update, REPEATS), d = median(update_decode, REPEATS);
    double l = median(update_lb, REPEATS);
    printf("  %-44s %10.3f ms  (median of %d; decode alone %.3f ms; target < 5 ms)\n",
           "one-cluster EDS update, decode to LB tree", u, REPEATS, d);
    printf("  %-44s %10.3f ms  (median)\n", "  of which recompiling cluster + VIP tree", l);

    xlb_lb_trees_free(lb);
    xlb_load_slots_free(&load_slots);
    xlb_dm_free(&dm);
    xlb_xds_cache_free(&cache);
    for (size_t i = 0; i < n; i++)
        free(config[i].data);
    free(config);
    return 0;
}
