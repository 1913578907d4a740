/* Helpers shared by the CDS validation tests (test_cluster.c, test_cluster_lb.c). */
#ifndef XLB_CLUSTER_TEST_H
#define XLB_CLUSTER_TEST_H

#include "cluster_config.h"
#include "xv_test.h"

typedef Envoy__Config__Cluster__V3__Cluster Cluster;

/* An EDS cluster "backend" fed by ADS, with more fields appended by `rest`. */
#define EDS_HEAD                                                                                   \
    "{\"name\":\"backend\",\"type\":\"EDS\",\"eds_cluster_config\":{\"eds_config\":{\"ads\":{}}}"
#define EDS(rest) EDS_HEAD rest "}"

Cluster *ct_json(const char *json);
/* Validates the JSON cluster; the message is freed. */
int ct_validate(const char *json, struct xlb_cluster_config *cfg, struct xlb_errors *errs);
/* The JSON cluster must be valid; cfg holds it (free with xlb_cluster_config_free). */
void ct_valid(const char *json, struct xlb_cluster_config *cfg);
/* The JSON cluster must be NACKed with exactly this line. */
void ct_expect_nack(const char *json, const char *line);
/* The cluster message (edited by the test) must be NACKed with exactly this line; it is freed. */
void ct_expect_nack_msg(Cluster *msg, const char *line);

#endif
