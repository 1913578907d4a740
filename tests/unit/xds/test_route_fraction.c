/*
 * A28's runtime_fraction above 100 % (docs/conformance.md): the fraction is capped at 1000000
 * parts per million, computed in 64 bits so that a large numerator cannot wrap as it does in
 * C-core's 32-bit product. Kept apart from test_route.c.
 */
#include "route_test.h"

#include <stdio.h>

/* The per-million fraction of the only route, whose runtime_fraction is numerator/denominator. */
static uint32_t fraction_ppm(unsigned long long numerator, const char *denominator)
{
    char json[512];
    snprintf(json, sizeof(json),
             RC(R("{\"prefix\":\"\",\"runtime_fraction\":{\"default_value\":{\"numerator\":%llu,"
                  "\"denominator\":\"%s\"}}}",
                  TO_C)),
             numerator, denominator);
    struct xlb_route_config cfg;
    const struct xlb_route *r = rt_one_route(json, &cfg);
    assert_true(r->match.has_fraction);
    uint32_t ppm = r->match.fraction_per_million;
    xlb_route_config_free(&cfg);
    return ppm;
}

static void exactly_100_percent(void **state)
{
    assert_int_equal(fraction_ppm(100, "HUNDRED"), 1000000);
    assert_int_equal(fraction_ppm(10000, "TEN_THOUSAND"), 1000000);
    assert_int_equal(fraction_ppm(1000000, "MILLION"), 1000000);
}

static void above_100_percent_is_capped(void **state)
{
    assert_int_equal(fraction_ppm(101, "HUNDRED"), 1000000);
    assert_int_equal(fraction_ppm(2000000, "MILLION"), 1000000);
}

/* 500000 of HUNDRED is 5e9 parts per million: past 2^32, where a 32-bit product wraps. */
static void large_numerator_does_not_wrap(void **state)
{
    assert_int_equal(fraction_ppm(500000, "HUNDRED"), 1000000);
    assert_int_equal(fraction_ppm(4294967295ULL, "HUNDRED"), 1000000);
    assert_int_equal(fraction_ppm(4294967295ULL, "TEN_THOUSAND"), 1000000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exactly_100_percent),
        cmocka_unit_test(above_100_percent_is_capped),
        cmocka_unit_test(large_numerator_does_not_wrap),
    };
    return cmocka_run_group_tests_name("xds_validate_route_fraction", tests, NULL, NULL);
}
