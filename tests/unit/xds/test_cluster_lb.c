/*
 * CDS validation, the LB policy (control/xds/validate_cluster_lb.c): lb_policy with
 * ring_hash_lb_config (A42), and load_balancing_policy (A52) whose extensions are not in
 * proto/, so their Anys are built by hand here. One test per rule.
 */
#include "cluster_test.h"
#include "xlb_const.h"

#include <stdlib.h>
#include <string.h>

static void lb_policy_unsupported(void **state)
{
    ct_expect_nack(EDS(",\"lb_policy\":\"RANDOM\""),
                   "cluster \"backend\": lb_policy: RANDOM is not supported");
}

/* A48: lb_policy LEAST_REQUEST without least_request_lb_config draws 2 candidates. */
static void least_request_default_choice_count(void **state)
{
    struct xlb_cluster_config cfg;
    ct_valid(EDS(",\"lb_policy\":\"LEAST_REQUEST\""), &cfg);
    assert_int_equal(cfg.lb_policy, XLB_LB_LEAST_REQUEST);
    assert_int_equal(cfg.choice_count, 2);
    xlb_cluster_config_free(&cfg);
}

/* lb_policy LEAST_REQUEST with least_request_lb_config (field 37) { choice_count:
 * UInt32Value(n) } appended as wire bytes, as an ADS response carries it, validated into cfg. */
static int validate_least_request_config(uint8_t n, struct xlb_cluster_config *cfg,
                                         struct xlb_errors *errs)
{
    Cluster *msg = ct_json(EDS(",\"lb_policy\":\"LEAST_REQUEST\""));
    uint8_t wire[1024];
    size_t len = protobuf_c_message_pack(&msg->base, wire);
    protobuf_c_message_free_unpacked(&msg->base, NULL);
    const uint8_t config[] = {0xaa, 0x02, 0x04, 0x0a, 0x02, 0x08, n};
    assert_true(len + sizeof(config) <= sizeof(wire));
    memcpy(wire + len, config, sizeof(config));
    msg = envoy__config__cluster__v3__cluster__unpack(NULL, len + sizeof(config), wire);
    assert_non_null(msg);
    int rc = xlb_validate_cluster(msg, cfg, errs);
    protobuf_c_message_free_unpacked(&msg->base, NULL);
    return rc;
}

static void least_request_lb_config_choice_count(void **state)
{
    struct xlb_cluster_config cfg;
    struct xlb_errors errs = {0};
    int rc = validate_least_request_config(3, &cfg, &errs);
    assert_int_equal(rc, 0);
    assert_int_equal(cfg.choice_count, 3);
    xlb_cluster_config_free(&cfg);
    assert_int_equal(validate_least_request_config(50, &cfg, &errs), 0);
    assert_int_equal(cfg.choice_count, 10); /* A48: capped */
    xlb_cluster_config_free(&cfg);
    assert_int_equal(validate_least_request_config(1, &cfg, &errs), -1);
    xv_expect_line(&errs, "cluster \"backend\": least_request_lb_config.choice_count: must be "
                          "greater than or equal to 2, got 1");
}

/* MAGLEV, an xlb extension beyond gRPC (which refuses it): the table size Envoy allows. */
static void maglev_default_and_sizes(void **state)
{
    struct xlb_cluster_config cfg;
    ct_valid(EDS(",\"lb_policy\":\"MAGLEV\""), &cfg);
    assert_int_equal(cfg.lb_policy, XLB_LB_MAGLEV);
    assert_int_equal(cfg.maglev_table_size, 0); /* the automatic size */
    xlb_cluster_config_free(&cfg);
    ct_valid(EDS(",\"lb_policy\":\"MAGLEV\",\"maglev_lb_config\":{\"table_size\":5000011}"), &cfg);
    assert_int_equal(cfg.maglev_table_size, 5000011);
    xlb_cluster_config_free(&cfg);
}

static void maglev_table_size_prime_and_bounded(void **state)
{
    ct_expect_nack(EDS(",\"lb_policy\":\"MAGLEV\",\"maglev_lb_config\":{\"table_size\":65536}"),
                   "cluster \"backend\": maglev_lb_config.table_size: 65536 is not a prime of "
                   "at most 5000011");
    ct_expect_nack(
        EDS(",\"lb_policy\":\"MAGLEV\",\"maglev_lb_config\":{\"table_size\":5000077}"),
        "cluster \"backend\": maglev_lb_config.table_size: 5000077 is not a prime of at most "
        "5000011");
    ct_expect_nack(
        EDS(",\"lb_policy\":\"MAGLEV\",\"maglev_lb_config\":{\"table_size\":4294967311}"),
        "cluster \"backend\": maglev_lb_config.table_size: 4294967311 is not a prime of at "
        "most 5000011");
}

static void ring_hash_defaults(void **state)
{
    struct xlb_cluster_config cfg;
    ct_valid(EDS(",\"lb_policy\":\"RING_HASH\""), &cfg);
    assert_int_equal(cfg.lb_policy, XLB_LB_RING_HASH);
    assert_int_equal(cfg.ring_hash.min_ring_size, 1024);
    assert_int_equal(cfg.ring_hash.max_ring_size, 8388608);
    assert_int_equal(cfg.ring_hash.ring_size_cap, XLB_RING_HASH_DEFAULT_CAP);
    xlb_cluster_config_free(&cfg);
}

static void ring_hash_sizes(void **state)
{
    struct xlb_cluster_config cfg;
    ct_valid(EDS(",\"lb_policy\":\"RING_HASH\",\"ring_hash_lb_config\":{\"minimum_ring_size\":10,"
                 "\"maximum_ring_size\":20}"),
             &cfg);
    assert_int_equal(cfg.ring_hash.min_ring_size, 10);
    assert_int_equal(cfg.ring_hash.max_ring_size, 20);
    xlb_cluster_config_free(&cfg);
}

static void ring_hash_min_zero(void **state)
{
    ct_expect_nack(
        EDS(",\"lb_policy\":\"RING_HASH\",\"ring_hash_lb_config\":{\"minimum_ring_size\":0}"),
        "cluster \"backend\": ring_hash_lb_config.minimum_ring_size: 0 is not in "
        "1..8388608");
}

static void ring_hash_max_too_large(void **state)
{
    ct_expect_nack(
        EDS(",\"lb_policy\":\"RING_HASH\",\"ring_hash_lb_config\":{\"maximum_ring_size\":"
            "8388609}"),
        "cluster \"backend\": ring_hash_lb_config.maximum_ring_size: 8388609 is not in "
        "1..8388608");
}

static void ring_hash_min_above_max(void **state)
{
    ct_expect_nack(
        EDS(",\"lb_policy\":\"RING_HASH\",\"ring_hash_lb_config\":{\"minimum_ring_size\":"
            "2000,\"maximum_ring_size\":1000}"),
        "cluster \"backend\": ring_hash_lb_config: minimum_ring_size 2000 is greater than "
        "maximum_ring_size 1000");
}

static void ring_hash_function_xx_only(void **state)
{
    ct_expect_nack(
        EDS(",\"lb_policy\":\"RING_HASH\",\"ring_hash_lb_config\":{\"hash_function\":"
            "\"MURMUR_HASH_2\"}"),
        "cluster \"backend\": ring_hash_lb_config.hash_function: invalid hash function 1 "
        "(must be XX_HASH)");
}

#define RR_URL                                                                                     \
    "type.googleapis.com/envoy.extensions.load_balancing_policies.round_robin.v3.RoundRobin"
#define RH_URL "type.googleapis.com/envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash"
#define WRR_URL                                                                                    \
    "type.googleapis.com/envoy.extensions.load_balancing_policies.wrr_locality.v3.WrrLocality"
#define PF_URL                                                                                     \
    "type.googleapis.com/envoy.extensions.load_balancing_policies.pick_first.v3.PickFirst"
/* A policy xlb does not support: skipped for the next one, or NACKed when it is last. */
#define RANDOM_URL "type.googleapis.com/envoy.extensions.load_balancing_policies.random.v3.Random"
#define CSWRR_URL                                                                                  \
    "type.googleapis.com/envoy.extensions.load_balancing_policies.client_side_weighted_round_"     \
    "robin.v3.ClientSideWeightedRoundRobin"

struct policy_list {
    Envoy__Config__Cluster__V3__LoadBalancingPolicy list;
    Envoy__Config__Cluster__V3__LoadBalancingPolicy__Policy policy[3];
    Envoy__Config__Cluster__V3__LoadBalancingPolicy__Policy *ptrs[3];
    Envoy__Config__Core__V3__TypedExtensionConfig tec[3];
    Google__Protobuf__Any any[3];
};

static void policy_list_init(struct policy_list *p, size_t n, const char *const *urls,
                             const ProtobufCBinaryData *values)
{
    envoy__config__cluster__v3__load_balancing_policy__init(&p->list);
    p->list.n_policies = n;
    p->list.policies = p->ptrs;
    for (size_t i = 0; i < n; i++) {
        envoy__config__cluster__v3__load_balancing_policy__policy__init(&p->policy[i]);
        envoy__config__core__v3__typed_extension_config__init(&p->tec[i]);
        google__protobuf__any__init(&p->any[i]);
        p->any[i].type_url = XLB_UNCONST(urls[i]);
        p->any[i].value = values[i];
        p->tec[i].typed_config = &p->any[i];
        p->policy[i].typed_extension_config = &p->tec[i];
        p->ptrs[i] = &p->policy[i];
    }
}

static int validate_with_policies(struct policy_list *p, struct xlb_cluster_config *cfg,
                                  struct xlb_errors *errs)
{
    Cluster *msg = ct_json(EDS(""));
    msg->load_balancing_policy = &p->list;
    int rc = xlb_validate_cluster(msg, cfg, errs);
    msg->load_balancing_policy = NULL;
    protobuf_c_message_free_unpacked(&msg->base, NULL);
    return rc;
}

/* A cluster whose load_balancing_policy is the one policy given by its type URL and value
 * bytes, validated into cfg. */
static int validate_one_policy(const char *url, const uint8_t *value, size_t len,
                               struct xlb_cluster_config *cfg, struct xlb_errors *errs)
{
    const char *urls[] = {url};
    ProtobufCBinaryData values[] = {{len, XLB_UNCONST(value)}};
    struct policy_list p;
    policy_list_init(&p, 1, urls, values);
    return validate_with_policies(&p, cfg, errs);
}

/* One policy; the cluster must be NACKed with line. */
static void expect_policy_nack(const char *url, const uint8_t *value, size_t len, const char *line)
{
    struct xlb_cluster_config cfg;
    struct xlb_errors errs = {0};
    assert_int_equal(validate_one_policy(url, value, len, &cfg, &errs), -1);
    xv_expect_line(&errs, line);
}

/* One policy; the cluster must be valid, with this LB policy. */
static void expect_policy_valid(const char *url, const uint8_t *value, size_t len,
                                enum xlb_lb_policy policy)
{
    struct xlb_cluster_config cfg;
    struct xlb_errors errs = {0};
    assert_int_equal(validate_one_policy(url, value, len, &cfg, &errs), 0);
    xv_expect_none(&errs);
    assert_int_equal(cfg.lb_policy, policy);
    xlb_cluster_config_free(&cfg);
}

static void lb_policy_field_ring_hash(void **state)
{
    /* hash_function XX_HASH, minimum_ring_size 10, maximum_ring_size 20 */
    static uint8_t rh[] = {0x08, 0x01, 0x12, 0x02, 0x08, 0x0a, 0x1a, 0x02, 0x08, 0x14};
    const char *urls[] = {RANDOM_URL, RH_URL};
    ProtobufCBinaryData values[] = {{0, NULL}, {sizeof(rh), rh}};
    struct policy_list p;
    policy_list_init(&p, 2, urls, values);
    struct xlb_cluster_config cfg;
    struct xlb_errors errs = {0};
    assert_int_equal(validate_with_policies(&p, &cfg, &errs), 0);
    xv_expect_none(&errs);
    assert_int_equal(cfg.lb_policy, XLB_LB_RING_HASH);
    assert_int_equal(cfg.ring_hash.min_ring_size, 10);
    assert_int_equal(cfg.ring_hash.max_ring_size, 20);
    xlb_cluster_config_free(&cfg);
}

#define LR_URL                                                                                     \
    "type.googleapis.com/envoy.extensions.load_balancing_policies.least_request.v3.LeastRequest"

/* load_balancing_policy least_request: choice_count absent is 2, 4 is 4, 1 is NACKed. */
static void lb_policy_field_least_request(void **state)
{
    expect_policy_valid(LR_URL, NULL, 0, XLB_LB_LEAST_REQUEST);
    static const uint8_t four[] = {0x0a, 0x02, 0x08, 0x04};
    struct xlb_cluster_config cfg;
    struct xlb_errors errs = {0};
    assert_int_equal(validate_one_policy(LR_URL, four, sizeof(four), &cfg, &errs), 0);
    assert_int_equal(cfg.choice_count, 4);
    xlb_cluster_config_free(&cfg);
    static const uint8_t one[] = {0x0a, 0x02, 0x08, 0x01};
    expect_policy_nack(LR_URL, one, sizeof(one),
                       "cluster \"backend\": load_balancing_policy.policies[0]."
                       "typed_extension_config.typed_config.value.choice_count: must be greater "
                       "than or equal to 2, got 1");
}

static void lb_policy_field_ring_hash_invalid(void **state)
{
    static const uint8_t rh[] = {0x12, 0x02, 0x08, 0x00}; /* minimum_ring_size 0 */
    expect_policy_nack(RH_URL, rh, sizeof(rh),
                       "cluster \"backend\": load_balancing_policy.policies[0]."
                       "typed_extension_config.typed_config.value.minimum_ring_size: 0 is not "
                       "in 1..8388608");
}

static void lb_policy_field_wrr_locality_round_robin(void **state)
{
    const char *inner_urls[] = {RR_URL};
    ProtobufCBinaryData none[] = {{0, NULL}};
    struct policy_list inner;
    policy_list_init(&inner, 1, inner_urls, none);
    uint8_t packed[256];
    size_t len = protobuf_c_message_pack(&inner.list.base, packed + 2);
    assert_true(len < 128);
    packed[0] = 0x0a; /* WrrLocality.endpoint_picking_policy, length-delimited */
    packed[1] = (uint8_t)len;
    expect_policy_valid(WRR_URL, packed, len + 2, XLB_LB_ROUND_ROBIN);
}

/* A62: pick first, shuffle_address_list off by default, on when set; bytes that do not
 * decode are NACKed; under wrr_locality it is no endpoint picker (skipped, as ring hash is there).
 */
static void lb_policy_field_pick_first(void **state)
{
    struct xlb_cluster_config cfg;
    struct xlb_errors errs = {0};
    assert_int_equal(validate_one_policy(PF_URL, NULL, 0, &cfg, &errs), 0);
    assert_int_equal(cfg.lb_policy, XLB_LB_PICK_FIRST);
    assert_false(cfg.shuffle_address_list);
    xlb_cluster_config_free(&cfg);
    static const uint8_t shuffle[] = {0x08, 0x01};
    assert_int_equal(validate_one_policy(PF_URL, shuffle, sizeof(shuffle), &cfg, &errs), 0);
    xv_expect_none(&errs);
    assert_int_equal(cfg.lb_policy, XLB_LB_PICK_FIRST);
    assert_true(cfg.shuffle_address_list);
    xlb_cluster_config_free(&cfg);
    /* Field 1 length-delimited: an unknown field to gRPC's parser, so the default. */
    static const uint8_t as_bytes[] = {0x0a, 0x01, 0x01};
    assert_int_equal(validate_one_policy(PF_URL, as_bytes, sizeof(as_bytes), &cfg, &errs), 0);
    assert_false(cfg.shuffle_address_list);
    xlb_cluster_config_free(&cfg);
    static const uint8_t cut[] = {0x08};
    expect_policy_nack(
        PF_URL, cut, sizeof(cut),
        "cluster \"backend\": load_balancing_policy.policies[0]."
        "typed_extension_config.typed_config: can't decode PickFirst LB policy config");
}

static void lb_policy_field_pick_first_not_under_wrr_locality(void **state)
{
    const char *inner_urls[] = {PF_URL};
    ProtobufCBinaryData none[] = {{0, NULL}};
    struct policy_list inner;
    policy_list_init(&inner, 1, inner_urls, none);
    uint8_t packed[256];
    size_t len = protobuf_c_message_pack(&inner.list.base, packed + 2);
    assert_true(len < 128);
    packed[0] = 0x0a; /* WrrLocality.endpoint_picking_policy, length-delimited */
    packed[1] = (uint8_t)len;
    expect_policy_nack(WRR_URL, packed, len + 2,
                       "cluster \"backend\": load_balancing_policy.policies[0]."
                       "typed_extension_config.typed_config.value.endpoint_picking_policy: no "
                       "supported load balancing policy config found");
}

static void lb_policy_field_none_supported(void **state)
{
    expect_policy_nack(RANDOM_URL, NULL, 0,
                       "cluster \"backend\": load_balancing_policy: no supported load "
                       "balancing policy config found");
}

static void lb_policy_unknown_enum(void **state)
{
    ct_expect_nack(EDS(",\"lb_policy\":77"),
                   "cluster \"backend\": lb_policy: unknown LB policy 77");
}

static void lb_policy_field_ring_hash_undecodable(void **state)
{
    static const uint8_t cut[] = {0x12, 0x05, 0x08}; /* minimum_ring_size: 5 bytes announced */
    expect_policy_nack(RH_URL, cut, sizeof(cut),
                       "cluster \"backend\": load_balancing_policy.policies[0]."
                       "typed_extension_config.typed_config: could not parse RingHash config");
    static const uint8_t varint_size[] = {0x10, 0x05}; /* minimum_ring_size as a varint */
    expect_policy_nack(RH_URL, varint_size, sizeof(varint_size),
                       "cluster \"backend\": load_balancing_policy.policies[0]."
                       "typed_extension_config.typed_config: could not parse RingHash config");
}

static void lb_policy_field_ring_hash_function(void **state)
{
    static const uint8_t murmur[] = {0x08, 0x02}; /* hash_function: 2, neither DEFAULT nor XX */
    expect_policy_nack(RH_URL, murmur, sizeof(murmur),
                       "cluster \"backend\": load_balancing_policy.policies[0]."
                       "typed_extension_config.typed_config.value.hash_function: unsupported "
                       "value 2 (must be XX_HASH)");
    /* DEFAULT_HASH (0) means xxHash in gRPC: accepted. */
    static const uint8_t default_hash[] = {0x08, 0x00};
    expect_policy_valid(RH_URL, default_hash, sizeof(default_hash), XLB_LB_RING_HASH);
}

static void lb_policy_field_wrr_locality_undecodable(void **state)
{
    static const uint8_t cut[] = {0x0a, 0x05, 0x01}; /* endpoint_picking_policy cut short */
    expect_policy_nack(WRR_URL, cut, sizeof(cut),
                       "cluster \"backend\": load_balancing_policy.policies[0]."
                       "typed_extension_config.typed_config: could not parse WrrLocality config");
    /* No endpoint_picking_policy at all. */
    expect_policy_nack(WRR_URL, NULL, 0,
                       "cluster \"backend\": load_balancing_policy.policies[0]."
                       "typed_extension_config.typed_config: could not parse WrrLocality config");
}

static void lb_policy_field_typed_extension_config_required(void **state)
{
    ct_expect_nack(EDS(",\"load_balancing_policy\":{\"policies\":[{}]}"),
                   "cluster \"backend\": load_balancing_policy.policies[0]."
                   "typed_extension_config: field not present");
    ct_expect_nack(EDS(",\"load_balancing_policy\":{\"policies\":[{\"typed_extension_config\":"
                       "{\"name\":\"rr\"}}]}"),
                   "cluster \"backend\": load_balancing_policy.policies[0]."
                   "typed_extension_config.typed_config: field not present");
}

/* A58: client_side_weighted_round_robin with A58's defaults when empty; its fields read,
 * weight_update_period raised to 100 ms; a negative error_utilization_penalty NACKed. */
static void lb_policy_field_client_side_wrr(void **state)
{
    struct xlb_cluster_config cfg;
    struct xlb_errors errs = {0};
    assert_int_equal(validate_one_policy(CSWRR_URL, NULL, 0, &cfg, &errs), 0);
    assert_int_equal(cfg.lb_policy, XLB_LB_WRR);
    assert_int_equal(cfg.wrr.blackout_ms, 10000);
    assert_int_equal(cfg.wrr.expiration_ms, 180000);
    assert_int_equal(cfg.wrr.update_ms, 1000);
    assert_false(cfg.wrr.oob);
    assert_true(cfg.wrr.error_penalty == 1.0f);
    xlb_cluster_config_free(&cfg);
    /* enable_oob_load_report true, blackout_period 2 s, weight_expiration_period 0.5 s,
     * weight_update_period 10 ms, error_utilization_penalty 0.5 */
    static const uint8_t set[] = {0x0a, 0x02, 0x08, 0x01, 0x1a, 0x02, 0x08, 0x02, 0x22, 0x06,
                                  0x10, 0x80, 0xca, 0xb5, 0xee, 0x01, 0x2a, 0x05, 0x10, 0x80,
                                  0xad, 0xe2, 0x04, 0x32, 0x05, 0x0d, 0x00, 0x00, 0x00, 0x3f};
    assert_int_equal(validate_one_policy(CSWRR_URL, set, sizeof(set), &cfg, &errs), 0);
    xv_expect_none(&errs);
    assert_true(cfg.wrr.oob);
    assert_int_equal(cfg.wrr.blackout_ms, 2000);
    assert_int_equal(cfg.wrr.expiration_ms, 500);
    assert_int_equal(cfg.wrr.update_ms, 100);
    assert_true(cfg.wrr.error_penalty == 0.5f);
    xlb_cluster_config_free(&cfg);
    static const uint8_t negative[] = {0x32, 0x05, 0x0d, 0x00, 0x00, 0x80, 0xbf};
    expect_policy_nack(CSWRR_URL, negative, sizeof(negative),
                       "cluster \"backend\": load_balancing_policy.policies[0]."
                       "typed_extension_config.typed_config.value.error_utilization_penalty: "
                       "value must be non-negative");
    static const uint8_t bad_nanos[] = {0x1a, 0x06, 0x10, 0xff, 0xff, 0xff, 0xff, 0x0f};
    expect_policy_nack(CSWRR_URL, bad_nanos, sizeof(bad_nanos),
                       "cluster \"backend\": load_balancing_policy.policies[0]."
                       "typed_extension_config.typed_config.value.blackout_period.nanos: -1 is "
                       "not in 0..999999999");
    static const uint8_t cut[] = {0x1a, 0x09, 0x08};
    expect_policy_nack(CSWRR_URL, cut, sizeof(cut),
                       "cluster \"backend\": load_balancing_policy.policies[0]."
                       "typed_extension_config.typed_config: can't decode "
                       "ClientSideWeightedRoundRobin LB policy config");
}

/* A58 under wrr_locality, as gRPC's xDS configuration carries it. */
static void lb_policy_field_wrr_locality_client_side_wrr(void **state)
{
    const char *inner_urls[] = {CSWRR_URL};
    ProtobufCBinaryData none[] = {{0, NULL}};
    struct policy_list inner;
    policy_list_init(&inner, 1, inner_urls, none);
    uint8_t packed[512];
    size_t len = protobuf_c_message_pack(&inner.list.base, packed + 3);
    assert_true(len >= 128 && len < 16384); /* the URL is long: a two-byte length */
    packed[0] = 0x0a;
    packed[1] = (uint8_t)(0x80 | (len & 0x7f));
    packed[2] = (uint8_t)(len >> 7);
    expect_policy_valid(WRR_URL, packed, len + 3, XLB_LB_WRR);
}

/* A LoadBalancingPolicy holding one WrrLocality around `list` (packed), packed into a new
 * buffer (*len set). */
static uint8_t *wrap_in_wrr_locality(const uint8_t *list, size_t list_len, size_t *len)
{
    size_t value_len = 1 + 5 + list_len;
    uint8_t *value = malloc(value_len);
    assert_non_null(value);
    value[0] = 0x0a; /* endpoint_picking_policy, then its length as a varint */
    size_t n = 1, v = list_len;
    do {
        value[n++] = (uint8_t)(v & 0x7f) | (v > 0x7f ? 0x80 : 0);
        v >>= 7;
    } while (v > 0);
    memcpy(value + n, list, list_len);
    const char *urls[] = {WRR_URL};
    ProtobufCBinaryData values[] = {{n + list_len, value}};
    struct policy_list p;
    policy_list_init(&p, 1, urls, values);
    *len = protobuf_c_message_get_packed_size(&p.list.base);
    uint8_t *out = malloc(*len);
    assert_non_null(out);
    protobuf_c_message_pack(&p.list.base, out);
    free(value);
    return out;
}

/* `levels` WrrLocality policies nested in each other around round robin. */
static int validate_nested(unsigned levels, struct xlb_cluster_config *cfg, struct xlb_errors *errs)
{
    const char *urls[] = {RR_URL};
    ProtobufCBinaryData none[] = {{0, NULL}};
    struct policy_list leaf;
    policy_list_init(&leaf, 1, urls, none);
    size_t len = protobuf_c_message_get_packed_size(&leaf.list.base);
    uint8_t *list = malloc(len);
    assert_non_null(list);
    protobuf_c_message_pack(&leaf.list.base, list);
    for (unsigned i = 0; i < levels; i++) {
        size_t wrapped_len;
        uint8_t *wrapped = wrap_in_wrr_locality(list, len, &wrapped_len);
        free(list);
        list = wrapped;
        len = wrapped_len;
    }
    Cluster *msg = ct_json(EDS(""));
    msg->load_balancing_policy =
        envoy__config__cluster__v3__load_balancing_policy__unpack(NULL, len, list);
    free(list);
    assert_non_null(msg->load_balancing_policy);
    int rc = xlb_validate_cluster(msg, cfg, errs);
    protobuf_c_message_free_unpacked(&msg->base, NULL);
    return rc;
}

/* gRPC's limit: policy lists at depths 0..15, i.e. 15 nested wrr_locality at most. */
static void lb_policy_field_depth_limit(void **state)
{
    struct xlb_cluster_config cfg;
    struct xlb_errors errs = {0};
    assert_int_equal(validate_nested(15, &cfg, &errs), 0);
    xv_expect_none(&errs);
    assert_int_equal(cfg.lb_policy, XLB_LB_ROUND_ROBIN);
    xlb_cluster_config_free(&cfg);

    assert_int_equal(validate_nested(16, &cfg, &errs), -1);
    assert_int_equal(errs.n, 1);
    /* The path is 16 levels deep and cut; the start and the rule are what an operator reads. */
    const char *line = errs.lines[0];
    const char *start = "cluster \"backend\": load_balancing_policy.policies[0].";
    const char *rule = ": exceeded max recursion depth of 16";
    assert_true(strncmp(line, start, strlen(start)) == 0);
    assert_true(strlen(line) > strlen(rule) &&
                strcmp(line + strlen(line) - strlen(rule), rule) == 0);
    xlb_errors_free(&errs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lb_policy_unsupported),
        cmocka_unit_test(least_request_default_choice_count),
        cmocka_unit_test(least_request_lb_config_choice_count),
        cmocka_unit_test(lb_policy_field_least_request),
        cmocka_unit_test(lb_policy_field_client_side_wrr),
        cmocka_unit_test(lb_policy_field_wrr_locality_client_side_wrr),
        cmocka_unit_test(lb_policy_field_pick_first),
        cmocka_unit_test(lb_policy_field_pick_first_not_under_wrr_locality),
        cmocka_unit_test(lb_policy_unknown_enum),
        cmocka_unit_test(maglev_default_and_sizes),
        cmocka_unit_test(maglev_table_size_prime_and_bounded),
        cmocka_unit_test(ring_hash_defaults),
        cmocka_unit_test(ring_hash_sizes),
        cmocka_unit_test(ring_hash_min_zero),
        cmocka_unit_test(ring_hash_max_too_large),
        cmocka_unit_test(ring_hash_min_above_max),
        cmocka_unit_test(ring_hash_function_xx_only),
        cmocka_unit_test(lb_policy_field_ring_hash),
        cmocka_unit_test(lb_policy_field_ring_hash_invalid),
        cmocka_unit_test(lb_policy_field_ring_hash_undecodable),
        cmocka_unit_test(lb_policy_field_ring_hash_function),
        cmocka_unit_test(lb_policy_field_wrr_locality_round_robin),
        cmocka_unit_test(lb_policy_field_wrr_locality_undecodable),
        cmocka_unit_test(lb_policy_field_none_supported),
        cmocka_unit_test(lb_policy_field_typed_extension_config_required),
        cmocka_unit_test(lb_policy_field_depth_limit),
    };
    return cmocka_run_group_tests_name("xds_validate_cluster_lb", tests, NULL, NULL);
}
