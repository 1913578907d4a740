/* Address and prefix parsing and matching. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "xlb_addr.h"

static void parses_both_families(void **state)
{
    struct xlb_addr a;
    char text[XLB_ADDR_STRLEN];
    assert_int_equal(xlb_addr_parse("198.18.0.1", &a), 0);
    assert_int_equal(a.family, AF_INET);
    assert_string_equal(xlb_addr_format(&a, text, sizeof(text)), "198.18.0.1");
    assert_int_equal(xlb_addr_parse("2001:2::1", &a), 0);
    assert_int_equal(a.family, AF_INET6);
    assert_string_equal(xlb_addr_format(&a, text, sizeof(text)), "2001:2::1");
    assert_int_equal(xlb_addr_parse("198.18.0.256", &a), -1);
    assert_int_equal(xlb_addr_parse("", &a), -1);
    assert_int_equal(xlb_addr_parse(NULL, &a), -1);
}

static void prefixes_contain_what_they_should(void **state)
{
    struct xlb_prefix p;
    struct xlb_addr in, out, v6;
    assert_int_equal(xlb_prefix_parse("198.18.0.10/23", &p), 0);
    xlb_addr_parse("198.18.1.200", &in);
    xlb_addr_parse("198.18.2.1", &out);
    xlb_addr_parse("2001:2::1", &v6);
    assert_true(xlb_prefix_contains(&p, &in));
    assert_false(xlb_prefix_contains(&p, &out));
    assert_false(xlb_prefix_contains(&p, &v6));
    assert_int_equal(xlb_prefix_parse("2001:2::/48", &p), 0);
    assert_true(xlb_prefix_contains(&p, &v6));
    assert_int_equal(xlb_prefix_parse("0.0.0.0/0", &p), 0);
    assert_true(xlb_prefix_contains(&p, &out));
    assert_int_equal(xlb_prefix_parse("198.18.0.1/", &p), -1);
    assert_int_equal(xlb_prefix_parse("198.18.0.1/2x", &p), -1);
    assert_int_equal(xlb_prefix_parse("198.18.0.1/-1", &p), -1);
}

static void addresses_are_usable_as_hash_keys(void **state)
{
    struct xlb_addr a, b;
    xlb_addr_parse("2001:2::1", &a);
    xlb_addr_from_ipv6(a.bytes, &b);
    assert_memory_equal(&a, &b, sizeof(a));
    xlb_addr_parse("198.18.0.1", &a);
    xlb_addr_from_ipv4(xlb_addr_ipv4(&a), &b);
    assert_memory_equal(&a, &b, sizeof(a));
    assert_true(xlb_addr_equal(&a, &b));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_both_families),
        cmocka_unit_test(prefixes_contain_what_they_should),
        cmocka_unit_test(addresses_are_usable_as_hash_keys),
    };
    return cmocka_run_group_tests_name("addr", tests, NULL, NULL);
}
