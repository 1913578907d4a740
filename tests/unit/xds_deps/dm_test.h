/*
 * Helpers of the dependency-manager scenario tests: a cache and a manager per test, resources
 * written as proto3 JSON and stored with xlb_xds_cache_update, as the ADS client would.
 */
#ifndef XLB_DM_TEST_H
#define XLB_DM_TEST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include "dependency_manager.h"

struct dm_fixture {
    struct xlb_xds_cache cache;
    struct xlb_dm dm;
};

int dm_setup(void **state);
int dm_teardown(void **state);

/* Stores a valid resource (the test fails if it is NACKed). */
void dm_put(struct dm_fixture *f, enum xlb_xds_type type, const char *name, const char *json);
/* Stores an invalid resource: it must be NACKed. */
void dm_put_invalid(struct dm_fixture *f, enum xlb_xds_type type, const char *name,
                    const char *json);
/* The server says the resource does not exist. */
void dm_gone(struct dm_fixture *f, enum xlb_xds_type type, const char *name);

/* Builders; `names` are space-separated. */
void dm_put_listener(struct dm_fixture *f, const char *name, const char *rds_name);
void dm_put_inline_listener(struct dm_fixture *f, const char *name, const char *clusters);
void dm_put_routes(struct dm_fixture *f, const char *name, const char *clusters);
void dm_put_eds_cluster(struct dm_fixture *f, const char *name, const char *service_name);
void dm_put_dns_cluster(struct dm_fixture *f, const char *name);
void dm_put_aggregate(struct dm_fixture *f, const char *name, const char *children);
void dm_put_endpoints(struct dm_fixture *f, const char *name);

/* Runs xlb_dm_update, which must succeed. */
void dm_step(struct dm_fixture *f);

/* The watched resources must be exactly `expected`, e.g. "lds:svc rds:r1 cds:c1 eds:c1". */
void dm_expect_watched(struct dm_fixture *f, const char *expected);

/* VIP `vip` must be in `state` with `reason` (NULL: no reason). */
void dm_expect_vip(struct dm_fixture *f, int vip, enum xlb_dm_state state, const char *reason);

/* The VIP's entry for `name`, which must exist and be in `state`. */
const struct xlb_dm_cluster *dm_expect_cluster(struct dm_fixture *f, int vip, const char *name,
                                               enum xlb_dm_state state);

/* The space-separated names of an aggregate's leaves. */
void dm_expect_leaves(struct dm_fixture *f, int vip, const char *name, const char *leaves);

/* The two groups of tests, each returning its count of failures. */
int dm_l7_tests(void);
int dm_aggregate_tests(void);

#endif
