/*
 * RouteAction as gRPC reads it: the cluster specifier (A28), hash policies (A42) and
 * max_stream_duration (A31). A specifier gRPC cannot use (cluster_header) makes it ignore the
 * route; cluster_specifier_plugin names one of the route configuration's plugins.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "regex_substitution.h"
#include "validate_route_internal.h"

typedef Envoy__Config__Route__V3__RouteAction RouteAction;
typedef Envoy__Config__Route__V3__RouteAction__HashPolicy HashPolicy;
typedef Envoy__Config__Route__V3__WeightedCluster__ClusterWeight ClusterWeight;

#define XV_CHANNEL_ID_KEY "io.grpc.channel_id"

static bool read_max_stream_duration(struct xv_ctx *ctx, const char *path, const RouteAction *a,
                                     struct xlb_route *out)
{
    const Envoy__Config__Route__V3__RouteAction__MaxStreamDuration *msd = a->max_stream_duration;
    if (msd == NULL)
        return true;
    char mpath[XV_PATH_MAX], child[XV_PATH_MAX];
    xv_key(mpath, path, "max_stream_duration");
    /* grpc_timeout_header_max wins over max_stream_duration when both are set. */
    const Google__Protobuf__Duration *d = msd->grpc_timeout_header_max;
    xv_key(child, mpath, "grpc_timeout_header_max");
    if (d == NULL) {
        d = msd->max_stream_duration;
        xv_key(child, mpath, "max_stream_duration");
    }
    if (d == NULL)
        return true;
    out->has_max_stream_duration = xv_duration(ctx, child, d, &out->max_stream_duration);
    return out->has_max_stream_duration;
}

static int read_header_policy(struct xv_ctx *ctx, const char *path,
                              const Envoy__Config__Route__V3__RouteAction__HashPolicy__Header *h,
                              struct xlb_hash_policy *out)
{
    char hpath[XV_PATH_MAX], child[XV_PATH_MAX];
    xv_key(hpath, path, "header");
    if (h->header_name[0] == '\0') {
        xv_key(child, hpath, "header_name");
        xv_error(ctx, child, "must be non-empty");
        return -1;
    }
    out->kind = XLB_HASH_HEADER;
    out->header_name = xv_strdup(ctx, hpath, h->header_name);
    if (out->header_name == NULL)
        return -1;
    if (h->regex_rewrite == NULL)
        return 1;
    xv_key(child, hpath, "regex_rewrite.pattern");
    const Envoy__Type__Matcher__V3__RegexMatcher *pattern = h->regex_rewrite->pattern;
    if (pattern == NULL) {
        xv_error(ctx, child, "field not present");
        return -1;
    }
    xv_key(child, child, "regex");
    if (pattern->regex[0] == '\0') {
        xv_error(ctx, child, "field not present");
        return -1;
    }
    if (!xv_regex_check(ctx, child, pattern->regex, false))
        return -1;
    /* Stored as written (RE2); checked here so that what is ACKed translates when compiled. */
    char reason[128];
    char *pcre2_sub =
        xlb_regex_substitution_from_re2(h->regex_rewrite->substitution, reason, sizeof(reason));
    if (pcre2_sub == NULL) {
        xv_key(child, hpath, "regex_rewrite.substitution");
        xv_error(ctx, child, "%s", reason);
        return -1;
    }
    free(pcre2_sub);
    out->regex = xv_strdup(ctx, child, pattern->regex);
    out->substitution = xv_strdup(ctx, child, h->regex_rewrite->substitution);
    return out->regex != NULL && out->substitution != NULL ? 1 : -1;
}

/* Returns 1 when kept, 0 for a policy gRPC ignores (cookie, connection, query, other keys). */
static int read_hash_policy(struct xv_ctx *ctx, const char *path, const HashPolicy *p,
                            struct xlb_hash_policy *out)
{
    out->terminal = p->terminal;
    switch (p->policy_specifier_case) {
    case ENVOY__CONFIG__ROUTE__V3__ROUTE_ACTION__HASH_POLICY__POLICY_SPECIFIER_HEADER:
        return read_header_policy(ctx, path, p->header, out);
    case ENVOY__CONFIG__ROUTE__V3__ROUTE_ACTION__HASH_POLICY__POLICY_SPECIFIER_FILTER_STATE:
        if (strcmp(p->filter_state->key, XV_CHANNEL_ID_KEY) != 0)
            return 0;
        out->kind = XLB_HASH_CHANNEL_ID;
        return 1;
    default:
        return 0;
    }
}

static bool read_hash_policies(struct xv_ctx *ctx, const char *path, const RouteAction *a,
                               struct xlb_route *out)
{
    char hpath[XV_PATH_MAX];
    xv_key(hpath, path, "hash_policy");
    out->hash_policies = xv_calloc(ctx, hpath, a->n_hash_policy, sizeof(*out->hash_policies));
    if (out->hash_policies == NULL)
        return false;
    bool ok = true;
    for (size_t i = 0; i < a->n_hash_policy; i++) {
        char ipath[XV_PATH_MAX];
        xv_idx(ipath, hpath, i);
        struct xlb_hash_policy *slot = &out->hash_policies[out->n_hash_policies];
        int kept = read_hash_policy(ctx, ipath, a->hash_policy[i], slot);
        /* Counted when it failed too, so that route_free sees what was allocated. */
        if (kept != 0)
            out->n_hash_policies++;
        ok = ok && kept >= 0;
    }
    return ok;
}

static const char *weight_key(const void *map, size_t i)
{
    return ((const ClusterWeight *)map)->typed_per_filter_config[i]->key;
}

static const Google__Protobuf__Any *weight_value(const void *map, size_t i)
{
    return ((const ClusterWeight *)map)->typed_per_filter_config[i]->value;
}

/* Returns 1 when kept, 0 for weight 0 (gRPC leaves such clusters out), -1 on an error. */
static int read_cluster_weight(struct xv_ctx *ctx, const char *path, const ClusterWeight *cw,
                               struct xlb_weighted_cluster *out)
{
    char child[XV_PATH_MAX];
    bool ok = true;
    xv_key(child, path, "typed_per_filter_config");
    ok = xv_filter_override_map(ctx, child, cw->n_typed_per_filter_config, weight_key, weight_value,
                                cw, &out->overrides);
    if (cw->name[0] == '\0') {
        xv_key(child, path, "name");
        xv_error(ctx, child, "must be non-empty");
        ok = false;
    }
    if (cw->weight == NULL) {
        xv_key(child, path, "weight");
        xv_error(ctx, child, "field not present");
        return -1;
    }
    if (!ok)
        return -1;
    if (cw->weight->value == 0)
        return 0;
    out->weight = cw->weight->value;
    out->name = xv_strdup(ctx, path, cw->name);
    return out->name != NULL ? 1 : -1;
}

static bool read_weighted(struct xv_ctx *ctx, const char *path,
                          const Envoy__Config__Route__V3__WeightedCluster *wc,
                          struct xlb_route *out)
{
    char wpath[XV_PATH_MAX];
    xv_key(wpath, path, "weighted_clusters");
    out->action = XLB_ROUTE_WEIGHTED_CLUSTERS;
    out->weighted = xv_calloc(ctx, wpath, wc->n_clusters, sizeof(*out->weighted));
    if (out->weighted == NULL)
        return false;
    bool ok = true;
    for (size_t i = 0; i < wc->n_clusters; i++) {
        char ipath[XV_PATH_MAX];
        xv_pathf(ipath, "%s.clusters[%zu]", wpath, i);
        struct xlb_weighted_cluster *slot = &out->weighted[out->n_weighted];
        int kept = read_cluster_weight(ctx, ipath, wc->clusters[i], slot);
        /* Counted unless skipped, so that route_free releases partial entries. */
        if (kept == 0)
            xv_filter_overrides_free(&slot->overrides);
        else
            out->n_weighted++;
        if (kept == 1)
            out->total_weight += slot->weight;
        ok = ok && kept >= 0;
    }
    if (!ok)
        return false;
    /* total_weight is ignored, as gRPC does since A28 was updated: the sum is what counts. */
    if (out->n_weighted == 0) {
        xv_error(ctx, wpath, "no valid clusters specified");
        return false;
    }
    if (out->total_weight > UINT32_MAX) {
        xv_error(ctx, wpath, "sum of cluster weights %llu exceeds uint32 max",
                 (unsigned long long)out->total_weight);
        return false;
    }
    return true;
}

static int read_plugin_name(struct xv_ctx *ctx, const char *path,
                            const struct xv_cs_plugins *plugins, const RouteAction *a)
{
    char child[XV_PATH_MAX];
    xv_key(child, path, "cluster_specifier_plugin");
    if (a->cluster_specifier_plugin[0] == '\0') {
        xv_error(ctx, child, "must be non-empty");
        return -1;
    }
    switch (xv_cs_plugins_lookup(plugins, a->cluster_specifier_plugin)) {
    case XV_PLUGIN_UNKNOWN:
        xv_error(ctx, child, "unknown cluster specifier plugin name \"%.96s\"",
                 a->cluster_specifier_plugin);
        return -1;
    case XV_PLUGIN_SKIPPED:
        return 0;
    default:
        return -1;
    }
}

static int read_specifier(struct xv_ctx *ctx, const char *path, const struct xv_cs_plugins *plugins,
                          const RouteAction *a, struct xlb_route *out)
{
    char child[XV_PATH_MAX];
    switch (a->cluster_specifier_case) {
    case ENVOY__CONFIG__ROUTE__V3__ROUTE_ACTION__CLUSTER_SPECIFIER_CLUSTER:
        xv_key(child, path, "cluster");
        if (a->cluster[0] == '\0') {
            xv_error(ctx, child, "must be non-empty");
            return -1;
        }
        out->action = XLB_ROUTE_CLUSTER;
        out->cluster = xv_strdup(ctx, child, a->cluster);
        return out->cluster != NULL ? 1 : -1;
    case ENVOY__CONFIG__ROUTE__V3__ROUTE_ACTION__CLUSTER_SPECIFIER_WEIGHTED_CLUSTERS:
        return read_weighted(ctx, path, a->weighted_clusters, out) ? 1 : -1;
    case ENVOY__CONFIG__ROUTE__V3__ROUTE_ACTION__CLUSTER_SPECIFIER_CLUSTER_SPECIFIER_PLUGIN:
        /* xlb implements no plugin: such a route is ignored or NACKs, never kept. */
        return read_plugin_name(ctx, path, plugins, a);
    default: /* cluster_header or nothing: gRPC ignores the route */
        return 0;
    }
}

int xv_route_action(struct xv_ctx *ctx, const char *path, const struct xv_cs_plugins *plugins,
                    const RouteAction *a, struct xlb_route *out)
{
    bool ok = read_max_stream_duration(ctx, path, a, out);
    ok = read_hash_policies(ctx, path, a, out) && ok;
    int kept = read_specifier(ctx, path, plugins, a, out);
    if (!ok)
        return -1;
    return kept;
}
