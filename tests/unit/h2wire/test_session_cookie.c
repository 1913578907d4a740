/*
 * Session cookies (A55/A60/A61): what xlb writes reads back through the LB core's own decoder,
 * for IPv4 and IPv6 endpoints, with and without a cluster; and the Set-Cookie value.
 */
#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

#include "h2_test.h"
#include "xlb_lb.h"
#include "xlb_session_cookie.h"

static struct xlb_host_port hp(const char *addr, uint16_t port)
{
    struct xlb_host_port out = {.port = port};
    assert_int_equal(xlb_addr_parse(addr, &out.addr), 0);
    return out;
}

static void assert_round_trip(const struct xlb_host_port *where, uint32_t n, const char *cluster)
{
    char value[XLB_LB_COOKIE_MAX + 1], scratch[XLB_LB_COOKIE_MAX];
    uint32_t len = xlb_session_cookie_encode_list(value, sizeof(value), where, n, cluster,
                                                  cluster ? (uint32_t)strlen(cluster) : 0);
    assert_true(len > 0);
    assert_int_equal(strlen(value), len);
    struct xlb_lb_session s;
    assert_int_equal(xlb_lb_session_decode(value, len, scratch, sizeof(scratch), &s), 0);
    assert_int_equal(s.n_addresses, n);
    for (uint32_t i = 0; i < n; i++) {
        assert_true(xlb_addr_equal(&s.addresses[i].addr, &where[i].addr));
        assert_int_equal(s.addresses[i].port, where[i].port);
    }
    if (cluster == NULL) {
        assert_null(s.cluster);
    } else {
        assert_int_equal(s.cluster_len, strlen(cluster));
        assert_memory_equal(s.cluster, cluster, s.cluster_len);
    }
}

static void test_ipv4(void **state)
{
    struct xlb_host_port w = hp("10.0.0.1", 80);
    char value[64];
    /* base64 of gRPC's text form, as a gRPC server would set it */
    assert_int_equal(xlb_session_cookie_encode(value, sizeof(value), &w, NULL), 16);
    assert_string_equal(value, "MTAuMC4wLjE6ODA=");
    assert_round_trip(&w, 1, NULL);
    assert_int_equal(xlb_session_cookie_encode(value, sizeof(value), &w, "c1"), 20);
    assert_string_equal(value, "MTAuMC4wLjE6ODA7YzE="); /* "10.0.0.1:80;c1" */
    assert_round_trip(&w, 1, "c1");
    assert_round_trip(&w, 1, "cluster_with.dots-and:colons;and;semicolons");
}

static void test_ipv6(void **state)
{
    struct xlb_host_port w = hp("2001:db8::1", 443);
    char value[64];
    assert_true(xlb_session_cookie_encode(value, sizeof(value), &w, NULL) > 0);
    assert_string_equal(value, "WzIwMDE6ZGI4OjoxXTo0NDM="); /* "[2001:db8::1]:443" */
    assert_round_trip(&w, 1, NULL);
    assert_round_trip(&w, 1, "outbound|443||svc.ns.svc.cluster.local");
    struct xlb_host_port mapped = hp("::ffff:10.1.2.3", 65535);
    assert_round_trip(&mapped, 1, "c");
}

static void test_address_list(void **state)
{
    struct xlb_host_port w[3] = {hp("10.0.0.1", 80), hp("2001:db8::2", 8080), hp("192.168.1.1", 1)};
    assert_round_trip(w, 3, NULL);
    assert_round_trip(w, 3, "c");
}

static void test_limits(void **state)
{
    struct xlb_host_port w = hp("10.0.0.1", 80);
    char value[XLB_LB_COOKIE_MAX + 64];
    /* exactly enough room for the 16 characters and the NUL, then one byte less */
    assert_int_equal(xlb_session_cookie_encode(value, 17, &w, NULL), 16);
    assert_int_equal(xlb_session_cookie_encode(value, 16, &w, NULL), 0);
    assert_int_equal(xlb_session_cookie_encode(value, 0, &w, NULL), 0);
    /* an empty cluster cannot be read back: written as none */
    assert_int_equal(xlb_session_cookie_encode(value, sizeof(value), &w, ""), 16);
    /* a value longer than a pick reads is not written */
    char cluster[400];
    memset(cluster, 'c', sizeof(cluster) - 1);
    cluster[sizeof(cluster) - 1] = '\0';
    assert_int_equal(xlb_session_cookie_encode(value, sizeof(value), &w, cluster), 0);
    cluster[373] = '\0'; /* "10.0.0.1:80;" + 373 = 385 bytes: 516 base64 characters */
    assert_int_equal(xlb_session_cookie_encode(value, sizeof(value), &w, cluster), 0);
    cluster[372] = '\0'; /* 384 bytes: 512 characters, the most a pick reads */
    assert_int_equal(xlb_session_cookie_encode(value, sizeof(value), &w, cluster), 512);
    assert_round_trip(&w, 1, cluster);
    /* not an address */
    struct xlb_host_port bad = {.port = 80};
    assert_int_equal(xlb_session_cookie_encode(value, sizeof(value), &bad, NULL), 0);
    assert_int_equal(xlb_session_cookie_encode_list(value, sizeof(value), &w, 0, NULL, 0), 0);
}

static void test_set_cookie_value(void **state)
{
    char out[128];
    assert_int_equal(xlb_set_cookie_value(out, sizeof(out), "xlb", "MTA=", NULL, 0, false),
                     strlen("xlb=MTA=; HttpOnly"));
    assert_string_equal(out, "xlb=MTA=; HttpOnly");
    xlb_set_cookie_value(out, sizeof(out), "xlb", "MTA=", "/api", 0, false);
    assert_string_equal(out, "xlb=MTA=; HttpOnly; Path=/api");
    xlb_set_cookie_value(out, sizeof(out), "xlb", "MTA=", NULL, 3600, true);
    assert_string_equal(out, "xlb=MTA=; HttpOnly; Max-Age=3600");
    xlb_set_cookie_value(out, sizeof(out), "xlb", "MTA=", "/", 0, true);
    assert_string_equal(out, "xlb=MTA=; HttpOnly; Path=/; Max-Age=0");
    xlb_set_cookie_value(out, sizeof(out), "s", "v", NULL, 4294967295u, true);
    assert_string_equal(out, "s=v; HttpOnly; Max-Age=4294967295");
    /* room for exactly the text and its NUL, then one byte less */
    uint32_t n = (uint32_t)strlen("xlb=MTA=; HttpOnly; Path=/; Max-Age=0");
    assert_int_equal(xlb_set_cookie_value(out, n + 1, "xlb", "MTA=", "/", 0, true), n);
    assert_int_equal(xlb_set_cookie_value(out, n, "xlb", "MTA=", "/", 0, true), 0);
    assert_int_equal(xlb_set_cookie_value(out, 0, "xlb", "MTA=", "/", 0, true), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ipv4),
        cmocka_unit_test(test_ipv6),
        cmocka_unit_test(test_address_list),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_set_cookie_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
