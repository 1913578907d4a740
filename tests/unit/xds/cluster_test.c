/* See cluster_test.h. */
#include "cluster_test.h"

Cluster *ct_json(const char *json)
{
    return (Cluster *)xv_json(&envoy__config__cluster__v3__cluster__descriptor, json);
}

int ct_validate(const char *json, struct xlb_cluster_config *cfg, struct xlb_errors *errs)
{
    Cluster *msg = ct_json(json);
    int rc = xlb_validate_cluster(msg, cfg, errs);
    protobuf_c_message_free_unpacked(&msg->base, NULL);
    return rc;
}

void ct_valid(const char *json, struct xlb_cluster_config *cfg)
{
    struct xlb_errors errs = {0};
    int rc = ct_validate(json, cfg, &errs);
    xv_expect_none(&errs);
    assert_int_equal(rc, 0);
}

void ct_expect_nack(const char *json, const char *line)
{
    ct_expect_nack_msg(ct_json(json), line);
}

void ct_expect_nack_msg(Cluster *msg, const char *line)
{
    struct xlb_cluster_config cfg;
    struct xlb_errors errs = {0};
    int rc = xlb_validate_cluster(msg, &cfg, &errs);
    protobuf_c_message_free_unpacked(&msg->base, NULL);
    assert_int_equal(rc, -1);
    assert_null(cfg.name);
    xv_expect_line(&errs, line);
}
