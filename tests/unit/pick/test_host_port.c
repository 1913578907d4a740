/* "ip:port" text: gRPC's format and the bounded cookie address-list parser. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "pick_test.h"
#include "xlb_host_port.h"

/* Parse from an exact-size heap copy, so ASan catches any read past the input. */
static int parse_exact(const char *text, struct xlb_host_port *out)
{
    size_t len = strlen(text);
    char *copy = malloc(len ? len : 1);
    memcpy(copy, text, len);
    int rc = xlb_host_port_parse(copy, len, out);
    free(copy);
    return rc;
}

static int parse_list_exact(const char *text, struct xlb_host_port *out, uint32_t max)
{
    size_t len = strlen(text);
    char *copy = malloc(len ? len : 1);
    memcpy(copy, text, len);
    int rc = xlb_host_port_list_parse(copy, len, out, max);
    free(copy);
    return rc;
}

static void assert_round_trip(const char *text, int family, uint16_t port)
{
    struct xlb_host_port hp;
    assert_int_equal(parse_exact(text, &hp), 0);
    assert_int_equal(hp.addr.family, family);
    assert_int_equal(hp.port, port);
    char buf[XLB_HOST_PORT_STRLEN];
    assert_int_equal(xlb_host_port_format(&hp, buf, sizeof(buf)), (int)strlen(text));
    assert_string_equal(buf, text);
}

static void test_good(void **state)
{
    assert_round_trip("10.0.0.1:8080", AF_INET, 8080);
    assert_round_trip("1.2.3.4:65535", AF_INET, 65535);
    assert_round_trip("198.18.0.1:1", AF_INET, 1);
    assert_round_trip("[2001:db8::1]:443", AF_INET6, 443);
    assert_round_trip("[::1]:80", AF_INET6, 80);
    assert_round_trip("[2001:db8:1:2:3:4:5:6]:65535", AF_INET6, 65535);

    /* Non-canonical IPv6 text parses; formatting gives the canonical form gRPC hashes. */
    struct xlb_host_port hp;
    assert_int_equal(parse_exact("[2001:DB8:0:0:0:0:0:1]:443", &hp), 0);
    char buf[XLB_HOST_PORT_STRLEN];
    assert_true(xlb_host_port_format(&hp, buf, sizeof(buf)) > 0);
    assert_string_equal(buf, "[2001:db8::1]:443");
}

static void test_bad(void **state)
{
    const char *bad[] = {
        "",
        ":80",
        "1.2.3.4",
        "1.2.3.4:",
        "1.2.3.4:0",
        "1.2.3.4:65536",
        "1.2.3.4:123456",
        "1.2.3.4:8a",
        "1.2.3.4: 80",
        " 1.2.3.4:80",
        "1.2.3.4:+80",
        "1.2.3.4:-1",
        "1.2.3:80",
        "1.2.3.256:80",
        "[2001:db8::1]",
        "[2001:db8::1]80",
        "[2001:db8::1]:",
        "2001:db8::1:80",
        "[1.2.3.4]:80",
        "[2001:db8::1:80",
        "]:80",
        "[]:80",
        "[:80",
        "garbage",
        "a:b:c",
        "[fe80::1%eth0]:80",
        "1.2.3.4:80,",
        "localhost:80",
        "1.2.3.4:00080",
    };
    struct xlb_host_port hp;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (parse_exact(bad[i], &hp) != -EINVAL)
            fail_msg("accepted \"%s\"", bad[i]);
    assert_int_equal(xlb_host_port_parse(NULL, 3, &hp), -EINVAL);
}

/* Overlong host parts are refused before anything is copied. */
static void test_overlong(void **state)
{
    char text[300];
    text[0] = '[';
    memset(text + 1, '1', 200);
    memcpy(text + 201, "]:80", 5);
    struct xlb_host_port hp;
    assert_int_equal(parse_exact(text, &hp), -EINVAL);
    memset(text, '9', 200);
    memcpy(text + 200, ":80", 4);
    assert_int_equal(parse_exact(text, &hp), -EINVAL);
}

/* The parser honours len, not a terminator: a truncated view parses as what it shows. */
static void test_truncated_view(void **state)
{
    const char full[] = "10.0.0.1:8080";
    struct xlb_host_port hp;
    assert_int_equal(xlb_host_port_parse(full, 11, &hp), 0); /* "10.0.0.1:80" */
    assert_int_equal(hp.port, 80);
    assert_int_equal(xlb_host_port_parse(full, 9, &hp), -EINVAL);       /* "10.0.0.1:" */
    assert_int_equal(xlb_host_port_parse("[::1]:80", 5, &hp), -EINVAL); /* "[::1]" */
}

static void test_list(void **state)
{
    struct xlb_host_port out[XLB_HOST_PORT_LIST_MAX];
    assert_int_equal(parse_list_exact("1.2.3.4:80", out, XLB_HOST_PORT_LIST_MAX), 1);
    assert_int_equal(parse_list_exact("1.2.3.4:80,[2001:2::7]:443", out, XLB_HOST_PORT_LIST_MAX),
                     2);
    assert_int_equal(out[0].addr.family, AF_INET);
    assert_int_equal(out[1].addr.family, AF_INET6);
    assert_int_equal(out[1].port, 443);
    assert_int_equal(parse_list_exact("1.2.3.4:80,5.6.7.8:81", out, 1), -E2BIG);

    const char *bad[] = {"",
                         ",",
                         "1.2.3.4:80,",
                         ",1.2.3.4:80",
                         "1.2.3.4:80,,5.6.7.8:80",
                         "1.2.3.4:80, 5.6.7.8:80",
                         "1.2.3.4:80;5.6.7.8:80",
                         "1.2.3.4:80,x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (parse_list_exact(bad[i], out, XLB_HOST_PORT_LIST_MAX) != -EINVAL)
            fail_msg("accepted list \"%s\"", bad[i]);
}

static void test_format_errors(void **state)
{
    struct xlb_host_port hp = {0};
    char buf[XLB_HOST_PORT_STRLEN];
    assert_int_equal(xlb_host_port_format(&hp, buf, sizeof(buf)), -1);
    assert_int_equal(parse_exact("10.0.0.1:8080", &hp), 0);
    assert_int_equal(xlb_host_port_format(&hp, buf, 5), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),     cmocka_unit_test(test_bad),
        cmocka_unit_test(test_overlong), cmocka_unit_test(test_truncated_view),
        cmocka_unit_test(test_list),     cmocka_unit_test(test_format_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
