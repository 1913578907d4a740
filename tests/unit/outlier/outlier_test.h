/* Helpers shared by the A50 outlier detection tests: configs, fixtures, virtual sweeps. */
#ifndef OUTLIER_TEST_H
#define OUTLIER_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "outlier_detector.h"

#define INTERVAL_MS 10000u

struct fixture {
    struct xlb_rng rng;
    struct xlb_outlier_detector *od;
};

static inline struct xlb_duration ms(uint64_t v)
{
    return (struct xlb_duration){.seconds = (int64_t)(v / 1000),
                                 .nanos = (int32_t)(v % 1000) * 1000000};
}

/* The validator's defaults, with neither algorithm on. */
static inline struct xlb_outlier_detection defaults(void)
{
    struct xlb_outlier_detection c = {
        .enabled = true,
        .interval = ms(INTERVAL_MS),
        .base_ejection_time = ms(30000),
        .max_ejection_time = ms(300000),
        .max_ejection_percent = 10,
        .success_rate = {.stdev_factor = 1900,
                         .enforcement_percentage = 100,
                         .minimum_hosts = 5,
                         .request_volume = 100},
        .failure_percentage = {.threshold = 85,
                               .enforcement_percentage = 100,
                               .minimum_hosts = 5,
                               .request_volume = 50},
    };
    return c;
}

static inline struct xlb_outlier_detection sr_config(void)
{
    struct xlb_outlier_detection c = defaults();
    c.success_rate_enabled = true;
    return c;
}

static inline struct xlb_outlier_detection fp_config(void)
{
    struct xlb_outlier_detection c = defaults();
    c.failure_percentage_enabled = true;
    return c;
}

static inline struct xlb_outlier_key key(uint32_t i)
{
    struct xlb_outlier_key k;
    memset(&k, 0, sizeof(k));
    xlb_addr_from_ipv4(__builtin_bswap32(0x0a000000u + i), &k.addr);
    k.port = 8080;
    return k;
}

static inline void setup(struct fixture *f, uint32_t n, const struct xlb_outlier_detection *c,
                         uint64_t seed)
{
    struct xlb_outlier_key keys[1024];
    assert_true(n <= 1024);
    xlb_rng_seed(&f->rng, seed);
    f->od = xlb_outlier_create(&f->rng);
    assert_non_null(f->od);
    for (uint32_t i = 0; i < n; i++)
        keys[i] = key(i);
    assert_int_equal(xlb_outlier_set_endpoints(f->od, keys, n), 0);
    xlb_outlier_set_config(f->od, c, 0);
}

/* Every endpoint gets `ok` successes and `fail` failures this interval. */
static inline void feed_all(struct fixture *f, uint64_t ok, uint64_t fail)
{
    for (uint32_t i = 0; i < xlb_outlier_size(f->od); i++)
        xlb_outlier_add_calls(f->od, i, ok, fail);
}

static inline void sweep(struct fixture *f, uint64_t now_ms)
{
    assert_true(xlb_outlier_poll(f->od, now_ms));
}

static inline bool ejected(struct fixture *f, uint32_t i)
{
    struct xlb_outlier_endpoint_info info;
    assert_int_equal(xlb_outlier_endpoint_info(f->od, i, &info), 0);
    bool bit = (xlb_outlier_ejected_bitmap(f->od)[i / 64] >> (i % 64)) & 1;
    assert_int_equal(bit, info.ejected);
    return info.ejected;
}

static inline uint32_t multiplier(struct fixture *f, uint32_t i)
{
    struct xlb_outlier_endpoint_info info;
    assert_int_equal(xlb_outlier_endpoint_info(f->od, i, &info), 0);
    return info.multiplier;
}

/* Lifecycle tests (test_outlier_lifecycle.c). */
void test_ejection_time_multiplier_and_cap(void **state);
void test_ejection_cap_never_below_base(void **state);
void test_uneject_after_time(void **state);
void test_multiplier_decay(void **state);
void test_both_disabled_unejects_all(void **state);
void test_endpoints_added_and_removed(void **state);
void test_config_change_timer(void **state);
void test_first_config_resets_counters(void **state);
void test_both_algorithms_one_ejection(void **state);

#endif
