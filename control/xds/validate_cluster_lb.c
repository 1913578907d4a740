/*
 * A cluster's LB policy as gRPC chooses it: the load_balancing_policy field when present (A52:
 * the first policy in the list that the client supports), else lb_policy with
 * ring_hash_lb_config (A42). xlb supports round robin, least request (A48) and client-side
 * weighted round robin (A58) under wrr_locality, ring hash and pick first (A62), and beyond
 * gRPC, lb_policy MAGLEV.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "envoy/extensions/load_balancing_policies/client_side_weighted_round_robin/v3/client_side_weighted_round_robin.pb-c.h"
#include "google/protobuf/wrappers.pb-c.h"
#include "validate_cluster_internal.h"
#include "wire.h"
#include "xlb_least_request.h"
#include "xlb_maglev.h"

typedef Envoy__Config__Cluster__V3__Cluster Cluster;
typedef Envoy__Config__Cluster__V3__LoadBalancingPolicy LbPolicyList;

#define XV_POLICY_PREFIX "envoy.extensions.load_balancing_policies."
#define XV_ROUND_ROBIN   XV_POLICY_PREFIX "round_robin.v3.RoundRobin"
#define XV_RING_HASH     XV_POLICY_PREFIX "ring_hash.v3.RingHash"
#define XV_WRR_LOCALITY  XV_POLICY_PREFIX "wrr_locality.v3.WrrLocality"
#define XV_LEAST_REQUEST XV_POLICY_PREFIX "least_request.v3.LeastRequest"
#define XV_PICK_FIRST    XV_POLICY_PREFIX "pick_first.v3.PickFirst"
#define XV_WRR           XV_POLICY_PREFIX "client_side_weighted_round_robin.v3.ClientSideWeightedRoundRobin"
#define XV_MAX_LB_DEPTH  16 /* gRPC's limit on nested policy lists: depths 0..15 */

/* RingHash.HashFunction of the load_balancing_policy extension. */
enum { XV_RH_DEFAULT_HASH = 0, XV_RH_XX_HASH = 1 };

bool xv_ring_sizes(struct xv_ctx *ctx, const char *path, bool has_min, uint64_t min, bool has_max,
                   uint64_t max, struct xlb_ring_hash_config *out)
{
    char child[XV_PATH_MAX];
    bool ok = true;
    xlb_ring_hash_config_default(out);
    if (has_min) {
        xv_key(child, path, "minimum_ring_size");
        if (min == 0 || min > XLB_RING_HASH_LIMIT) {
            xv_error(ctx, child, "%llu is not in 1..8388608", (unsigned long long)min);
            ok = false;
        }
        out->min_ring_size = min;
    }
    if (has_max) {
        xv_key(child, path, "maximum_ring_size");
        if (max == 0 || max > XLB_RING_HASH_LIMIT) {
            xv_error(ctx, child, "%llu is not in 1..8388608", (unsigned long long)max);
            ok = false;
        }
        out->max_ring_size = max;
    }
    if (ok && out->min_ring_size > out->max_ring_size) {
        xv_error(ctx, path, "minimum_ring_size %llu is greater than maximum_ring_size %llu",
                 (unsigned long long)out->min_ring_size, (unsigned long long)out->max_ring_size);
        ok = false;
    }
    return ok;
}

/*
 * lb_policy MAGLEV and its maglev_lb_config, as Envoy reads them: a table_size that must be
 * prime, at most 5000011. An xlb extension (gRPC clients refuse MAGLEV): its consistent hash
 * for L4 VIPs whose hosts should agree on a connection's backend.
 */
static bool read_maglev(struct xv_ctx *ctx, const Cluster *c, struct xlb_cluster_config *out)
{
    out->lb_policy = XLB_LB_MAGLEV;
    out->maglev_table_size = 0;
    if (c->lb_config_case != ENVOY__CONFIG__CLUSTER__V3__CLUSTER__LB_CONFIG_MAGLEV_LB_CONFIG ||
        c->maglev_lb_config->table_size == NULL)
        return true;
    uint64_t size = c->maglev_lb_config->table_size->value;
    if (size > XLB_MAGLEV_TABLE_SIZE_MAX || !xlb_maglev_is_prime((uint32_t)size)) {
        xv_error(ctx, "maglev_lb_config.table_size", "%" PRIu64 " is not a prime of at most %u",
                 size, XLB_MAGLEV_TABLE_SIZE_MAX);
        return false;
    }
    out->maglev_table_size = (uint32_t)size;
    return true;
}

/* A UInt32Value's value in wire bytes (field 1, a varint); false when malformed. */
static bool wire_uint32_value(const uint8_t *data, size_t len, uint64_t *out)
{
    struct xv_wire w = {data, data + len};
    struct xv_wire_field f;
    int r;
    *out = 0; /* a UInt32Value without its field is 0 */
    while ((r = xv_wire_next(&w, &f)) == 1)
        if (f.number == 1) {
            if (f.wire_type != 0 || f.varint > UINT32_MAX)
                return false;
            *out = f.varint;
        }
    return r == 0;
}

/* A48: absent is 2, below 2 is an error, above 10 is capped. */
static bool apply_choice_count(struct xv_ctx *ctx, const char *path, bool present, uint64_t count,
                               struct xlb_cluster_config *out)
{
    char cpath[XV_PATH_MAX];
    xv_key(cpath, path, "choice_count");
    if (xlb_least_request_choice_count(present, count, &out->choice_count) != 0) {
        xv_error(ctx, cpath, "must be greater than or equal to 2, got %" PRIu64, count);
        return false;
    }
    out->lb_policy = XLB_LB_LEAST_REQUEST;
    return true;
}

/* choice_count (field 1, a UInt32Value) of a LeastRequest policy, given as wire bytes. */
static bool read_choice_count(struct xv_ctx *ctx, const char *path, const uint8_t *data, size_t len,
                              struct xlb_cluster_config *out)
{
    struct xv_wire w = {data, data + len};
    struct xv_wire_field f;
    bool present = false, ok = true;
    uint64_t count = 0;
    int r = 0;
    while (ok && (r = xv_wire_next(&w, &f)) == 1)
        if (f.number == 1)
            ok = present = f.wire_type == 2 && wire_uint32_value(f.data, f.len, &count);
    if (!ok || r < 0) {
        xv_error(ctx, path, "could not parse LeastRequest config");
        return false;
    }
    return apply_choice_count(ctx, path, present, count, out);
}

/* lb_policy LEAST_REQUEST and its least_request_lb_config (A48). */
static bool read_least_request_enum(struct xv_ctx *ctx, const Cluster *c,
                                    struct xlb_cluster_config *out)
{
    const Envoy__Config__Cluster__V3__Cluster__LeastRequestLbConfig *config =
        c->lb_config_case == ENVOY__CONFIG__CLUSTER__V3__CLUSTER__LB_CONFIG_LEAST_REQUEST_LB_CONFIG
            ? c->least_request_lb_config
            : NULL;
    const Google__Protobuf__UInt32Value *count = config ? config->choice_count : NULL;
    return apply_choice_count(ctx, "least_request_lb_config", count != NULL,
                              count ? count->value : 0, out);
}

/* The legacy fields: lb_policy and ring_hash_lb_config (or maglev_lb_config). */
static bool read_lb_policy_enum(struct xv_ctx *ctx, const Cluster *c,
                                struct xlb_cluster_config *out)
{
    if (c->lb_policy == ENVOY__CONFIG__CLUSTER__V3__CLUSTER__LB_POLICY__ROUND_ROBIN) {
        out->lb_policy = XLB_LB_ROUND_ROBIN;
        return true;
    }
    if (c->lb_policy == ENVOY__CONFIG__CLUSTER__V3__CLUSTER__LB_POLICY__MAGLEV)
        return read_maglev(ctx, c, out);
    if (c->lb_policy == ENVOY__CONFIG__CLUSTER__V3__CLUSTER__LB_POLICY__LEAST_REQUEST)
        return read_least_request_enum(ctx, c, out);
    if (c->lb_policy != ENVOY__CONFIG__CLUSTER__V3__CLUSTER__LB_POLICY__RING_HASH) {
        const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
            &envoy__config__cluster__v3__cluster__lb_policy__descriptor, (int)c->lb_policy);
        if (v != NULL)
            xv_error(ctx, "lb_policy", "%s is not supported", v->name);
        else
            xv_error(ctx, "lb_policy", "unknown LB policy %d", (int)c->lb_policy);
        return false;
    }
    out->lb_policy = XLB_LB_RING_HASH;
    const Envoy__Config__Cluster__V3__Cluster__RingHashLbConfig *rh =
        c->lb_config_case == ENVOY__CONFIG__CLUSTER__V3__CLUSTER__LB_CONFIG_RING_HASH_LB_CONFIG
            ? c->ring_hash_lb_config
            : NULL;
    if (rh == NULL) {
        xlb_ring_hash_config_default(&out->ring_hash);
        return true;
    }
    bool ok = true;
    if (rh->hash_function !=
        ENVOY__CONFIG__CLUSTER__V3__CLUSTER__RING_HASH_LB_CONFIG__HASH_FUNCTION__XX_HASH) {
        xv_error(ctx, "ring_hash_lb_config.hash_function",
                 "invalid hash function %d (must be XX_HASH)", (int)rh->hash_function);
        ok = false;
    }
    ok = xv_ring_sizes(ctx, "ring_hash_lb_config", rh->minimum_ring_size != NULL,
                       rh->minimum_ring_size ? rh->minimum_ring_size->value : 0,
                       rh->maximum_ring_size != NULL,
                       rh->maximum_ring_size ? rh->maximum_ring_size->value : 0, &out->ring_hash) &&
         ok;
    return ok;
}

/* A UInt64Value nested in wire bytes; false when malformed. */
static bool wire_uint64_value(const struct xv_wire_field *f, uint64_t *out)
{
    if (f->wire_type != 2)
        return false;
    Google__Protobuf__UInt64Value *v =
        google__protobuf__uint64_value__unpack(NULL, f->len, f->data);
    if (v == NULL)
        return false;
    *out = v->value;
    google__protobuf__uint64_value__free_unpacked(v, NULL);
    return true;
}

/* envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash, read off the wire. */
static bool read_ring_hash_policy(struct xv_ctx *ctx, const char *path,
                                  const Google__Protobuf__Any *any, struct xlb_cluster_config *out)
{
    struct xv_wire w = {any->value.data, any->value.data + any->value.len};
    struct xv_wire_field f;
    uint64_t hash = XV_RH_DEFAULT_HASH, min = 0, max = 0;
    bool has_min = false, has_max = false, ok = true;
    int r;
    while (ok && (r = xv_wire_next(&w, &f)) == 1) {
        if (f.number == 1)
            hash = f.wire_type == 0 ? f.varint : UINT64_MAX;
        else if (f.number == 2)
            ok = has_min = wire_uint64_value(&f, &min);
        else if (f.number == 3)
            ok = has_max = wire_uint64_value(&f, &max);
    }
    if (!ok || r < 0) {
        xv_error(ctx, path, "could not parse RingHash config");
        return false;
    }
    char vpath[XV_PATH_MAX], child[XV_PATH_MAX];
    xv_key(vpath, path, "value");
    if (hash != XV_RH_DEFAULT_HASH && hash != XV_RH_XX_HASH) {
        xv_key(child, vpath, "hash_function");
        xv_error(ctx, child, "unsupported value %llu (must be XX_HASH)", (unsigned long long)hash);
        ok = false;
    }
    ok = xv_ring_sizes(ctx, vpath, has_min, min, has_max, max, &out->ring_hash) && ok;
    out->lb_policy = XLB_LB_RING_HASH;
    return ok;
}

/*
 * envoy.extensions.load_balancing_policies.pick_first.v3.PickFirst: shuffle_address_list (1).
 * Bytes that do not decode are NACKed with gRPC C-core's words; field 1 with another wire
 * type is an unknown field to C-core's parser (upb), so it is skipped here too.
 */
static bool read_pick_first_policy(struct xv_ctx *ctx, const char *path,
                                   const Google__Protobuf__Any *any, struct xlb_cluster_config *out)
{
    struct xv_wire w = {any->value.data, any->value.data + any->value.len};
    struct xv_wire_field f;
    bool shuffle = false;
    int r;
    while ((r = xv_wire_next(&w, &f)) == 1)
        if (f.number == 1 && f.wire_type == 0)
            shuffle = f.varint != 0;
    if (r < 0) {
        xv_error(ctx, path, "can't decode PickFirst LB policy config");
        return false;
    }
    out->lb_policy = XLB_LB_PICK_FIRST;
    out->shuffle_address_list = shuffle;
    return true;
}

typedef Envoy__Extensions__LoadBalancingPolicies__ClientSideWeightedRoundRobin__V3__ClientSideWeightedRoundRobin
    WrrConfig;

/* One Duration field of the WRR config into *ms when present (gRPC's range checks). */
static bool wrr_duration(struct xv_ctx *ctx, const char *path, const char *field,
                         const Google__Protobuf__Duration *in, uint64_t *ms)
{
    char fpath[XV_PATH_MAX];
    struct xlb_duration d;
    if (in == NULL)
        return true;
    xv_key(fpath, path, field);
    if (!xv_duration(ctx, fpath, in, &d))
        return false;
    *ms = xlb_duration_ms(&d);
    return true;
}

/*
 * envoy.extensions.load_balancing_policies.client_side_weighted_round_robin.v3 (A58): absent
 * fields take A58's defaults, a weight_update_period under 100 ms is raised to 100 ms, and a
 * negative error_utilization_penalty is NACKed, as gRPC validates them.
 */
static bool read_wrr_policy(struct xv_ctx *ctx, const char *path, const Google__Protobuf__Any *any,
                            struct xlb_cluster_config *out)
{
    WrrConfig *m =
        envoy__extensions__load_balancing_policies__client_side_weighted_round_robin__v3__client_side_weighted_round_robin__unpack(
            NULL, any->value.len, any->value.data);
    if (m == NULL) {
        xv_error(ctx, path, "can't decode ClientSideWeightedRoundRobin LB policy config");
        return false;
    }
    char vpath[XV_PATH_MAX], child[XV_PATH_MAX];
    xv_key(vpath, path, "value");
    struct xlb_wrr_config *cfg = &out->wrr;
    xlb_wrr_config_default(cfg);
    cfg->oob = m->enable_oob_load_report != NULL && m->enable_oob_load_report->value;
    bool ok = wrr_duration(ctx, vpath, "oob_reporting_period", m->oob_reporting_period,
                           &cfg->oob_period_ms);
    ok = wrr_duration(ctx, vpath, "blackout_period", m->blackout_period, &cfg->blackout_ms) && ok;
    ok = wrr_duration(ctx, vpath, "weight_expiration_period", m->weight_expiration_period,
                      &cfg->expiration_ms) &&
         ok;
    ok = wrr_duration(ctx, vpath, "weight_update_period", m->weight_update_period,
                      &cfg->update_ms) &&
         ok;
    if (cfg->update_ms < XLB_WRR_UPDATE_MIN_MS)
        cfg->update_ms = XLB_WRR_UPDATE_MIN_MS;
    if (m->error_utilization_penalty != NULL) {
        float penalty = m->error_utilization_penalty->value;
        if (!(penalty >= 0)) {
            xv_key(child, vpath, "error_utilization_penalty");
            xv_error(ctx, child, "value must be non-negative");
            ok = false;
        } else {
            cfg->error_penalty = penalty;
        }
    }
    protobuf_c_message_free_unpacked(&m->base, NULL);
    out->lb_policy = XLB_LB_WRR;
    return ok;
}

/*
 * One policy. Returns 1 when xlb uses it, 0 when it is unsupported (try the next), -1 on an
 * error in a policy xlb does support.
 */
static int read_policy(struct xv_ctx *ctx, const char *path, const Google__Protobuf__Any *any,
                       unsigned depth, bool leaf_only, struct xlb_cluster_config *out)
{
    const char *type = xv_any_type(ctx, path, any);
    if (type == NULL)
        return -1;
    if (strcmp(type, XV_ROUND_ROBIN) == 0) {
        out->lb_policy = XLB_LB_ROUND_ROBIN;
        return 1;
    }
    /* Least request picks inside a locality, as round robin (A48: under wrr_locality; at the
     * top, xlb weighs localities all the same). */
    if (strcmp(type, XV_LEAST_REQUEST) == 0) {
        char vpath[XV_PATH_MAX];
        xv_key(vpath, path, "value");
        return read_choice_count(ctx, vpath, any->value.data, any->value.len, out) ? 1 : -1;
    }
    /* Weighted round robin picks inside a locality too (A58: under wrr_locality). */
    if (strcmp(type, XV_WRR) == 0)
        return read_wrr_policy(ctx, path, any, out) ? 1 : -1;
    /* Ring hash and pick first pick an endpoint across localities, so they cannot sit under
     * wrr_locality. */
    if (strcmp(type, XV_RING_HASH) == 0 && !leaf_only)
        return read_ring_hash_policy(ctx, path, any, out) ? 1 : -1;
    if (strcmp(type, XV_PICK_FIRST) == 0 && !leaf_only)
        return read_pick_first_policy(ctx, path, any, out) ? 1 : -1;
    /* wrr_locality under wrr_locality weighs the same localities again: accepted, as gRPC
     * does, down to the depth limit. */
    if (strcmp(type, XV_WRR_LOCALITY) != 0)
        return 0;
    LbPolicyList *child = NULL;
    struct xv_wire w = {any->value.data, any->value.data + any->value.len};
    struct xv_wire_field f;
    int r;
    while ((r = xv_wire_next(&w, &f)) == 1)
        if (f.number == 1 && f.wire_type == 2) {
            if (child != NULL)
                protobuf_c_message_free_unpacked(&child->base, NULL);
            child = envoy__config__cluster__v3__load_balancing_policy__unpack(NULL, f.len, f.data);
            if (child == NULL)
                break;
        }
    char cpath[XV_PATH_MAX];
    xv_key(cpath, path, "value.endpoint_picking_policy");
    bool ok = r == 0 && child != NULL;
    if (!ok)
        xv_error(ctx, path, "could not parse WrrLocality config");
    else
        ok = xv_lb_policy_list(ctx, cpath, child, depth + 1, out);
    if (child != NULL)
        protobuf_c_message_free_unpacked(&child->base, NULL);
    return ok ? 1 : -1;
}

static bool policy_list(struct xv_ctx *ctx, const char *path, const LbPolicyList *list,
                        unsigned depth, bool leaf_only, struct xlb_cluster_config *out)
{
    if (depth >= XV_MAX_LB_DEPTH) {
        xv_error(ctx, path, "exceeded max recursion depth of %d", XV_MAX_LB_DEPTH);
        return false;
    }
    for (size_t i = 0; i < list->n_policies; i++) {
        char tpath[XV_PATH_MAX], ppath[XV_PATH_MAX];
        xv_pathf(tpath, "%s.policies[%zu].typed_extension_config", path, i);
        xv_key(ppath, tpath, "typed_config");
        const Envoy__Config__Core__V3__TypedExtensionConfig *tec =
            list->policies[i]->typed_extension_config;
        if (tec == NULL || tec->typed_config == NULL) {
            xv_error(ctx, tec == NULL ? tpath : ppath, "field not present");
            return false;
        }
        int r = read_policy(ctx, ppath, tec->typed_config, depth, leaf_only, out);
        if (r != 0)
            return r == 1;
    }
    xv_error(ctx, path, "no supported load balancing policy config found");
    return false;
}

bool xv_lb_policy_list(struct xv_ctx *ctx, const char *path, const LbPolicyList *list,
                       unsigned depth, struct xlb_cluster_config *out)
{
    /* Below wrr_locality only an endpoint picker fits: round robin, least request, weighted
     * round robin (or wrr_locality again). */
    return policy_list(ctx, path, list, depth, depth > 0, out);
}

bool xv_cluster_lb(struct xv_ctx *ctx, const Cluster *c, struct xlb_cluster_config *out)
{
    /* Filled for every policy so that the config never carries zero ring sizes. */
    xlb_ring_hash_config_default(&out->ring_hash);
    if (c->load_balancing_policy != NULL)
        return xv_lb_policy_list(ctx, "load_balancing_policy", c->load_balancing_policy, 0, out);
    return read_lb_policy_enum(ctx, c, out);
}
