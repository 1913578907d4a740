/* The bootstrap reader: every key, good and bad values, and the exact lines operators see. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "bootstrap.h"

/* A valid xlb section's pieces, so each test changes one thing. */
#define PORT_OK          "{\"name\": \"p0\", \"addresses\": [\"198.18.0.10/24\"]}"
#define DOC(xlb_members) "{\"xlb\": {\"ports\": [" PORT_OK "]" xlb_members "}}"

static struct xlb_bootstrap parse_ok(const char *text)
{
    struct xlb_bootstrap b;
    struct xlb_errors errs = {0};
    int rc = xlb_bootstrap_parse(text, &b, &errs);
    for (unsigned i = 0; i < errs.n; i++)
        print_error("unexpected: %s\n", errs.lines[i]);
    assert_int_equal(rc, 0);
    assert_int_equal(errs.n, 0);
    return b;
}

/* The document is rejected with exactly these lines, in order. */
static void expect_errors(const char *text, ...)
{
    struct xlb_bootstrap b;
    struct xlb_errors errs = {0};
    assert_int_equal(xlb_bootstrap_parse(text, &b, &errs), -1);
    va_list ap;
    va_start(ap, text);
    unsigned i = 0;
    for (const char *want = va_arg(ap, const char *); want != NULL;
         want = va_arg(ap, const char *), i++) {
        if (i >= errs.n)
            fail_msg("missing error line \"%s\"", want);
        assert_string_equal(errs.lines[i], want);
    }
    va_end(ap);
    for (unsigned extra = i; extra < errs.n; extra++)
        print_error("extra: %s\n", errs.lines[extra]);
    assert_int_equal(errs.n, i);
    xlb_errors_free(&errs);
    xlb_bootstrap_free(&b);
}

static void minimal_document_gets_defaults(void **state)
{
    struct xlb_bootstrap b = parse_ok(DOC(""));
    assert_int_equal(b.workers, 1);
    assert_string_equal(b.control_socket, XLB_DEFAULT_CONTROL_SOCKET);
    assert_int_equal(b.mbuf_pool_size, XLB_MBUF_POOL_AUTO);
    assert_int_equal(b.worker_idle_sleep_us, 0);
    assert_int_equal(b.worker_stall_ms, 2000);
    assert_int_equal(b.flows_per_worker, XLB_DEFAULT_FLOWS_PER_WORKER);
    assert_int_equal(b.l7_connections_per_worker, XLB_L7_CONNECTIONS_AUTO);
    assert_int_equal(b.tcp_mss_clamp, XLB_MSS_CLAMP_AUTO);
    assert_false(b.aggregate_cluster_backward_compat);
    assert_int_equal(b.n_ports, 1);
    assert_string_equal(b.ports[0].name, "p0");
    assert_int_equal(b.ports[0].n_addresses, 1);
    assert_int_equal(b.ports[0].addresses[0].len, 24);
    assert_int_equal(b.n_vips, 0);
    assert_int_equal(b.n_snat, 0);
    assert_int_equal(b.n_xds_servers, 0);
    assert_null(b.static_resources);
    assert_false(b.metrics_enabled);
    xlb_bootstrap_free(&b);
}

static void full_document_is_read(void **state)
{
    const char *text =
        "{\"xds_servers\": [{\"server_uri\": \"xds.example:443\","
        "   \"channel_creds\": [{\"type\": \"google_default\"}, {\"type\": \"tls\", \"config\": "
        "     {\"ca_certificate_file\": \"/ca.pem\", \"certificate_file\": \"/c.pem\","
        "      \"private_key_file\": \"/k.pem\"}}],"
        "   \"server_features\": [\"xds_v3\", \"ignore_resource_deletion\"]},"
        "  {\"server_uri\": \"[2001:2::5]:18000\", \"channel_creds\": [{\"type\": \"insecure\"}]}],"
        " \"node\": {\"id\": \"gw-1\", \"cluster\": \"edge\", \"metadata\": {\"k\": 1},"
        "   \"locality\": {\"region\": \"r\", \"zone\": \"z\", \"sub_zone\": \"s\"}},"
        " \"unknown_top_level\": true,"
        " \"xlb\": {\"eal\": [\"--no-huge\", \"-m\", \"256\"], \"workers\": 2,"
        "   \"control_socket\": \"/tmp/x.sock\", \"worker_idle_sleep_us\": 10,"
        "   \"mbuf_pool_size\": 4095,"
        "   \"ports\": [{\"name\": \"net_af_packet0\", "
        "     \"addresses\": [\"198.18.0.10/24\", \"2001:2::10/64\"],"
        "     \"gateway\": [\"198.18.0.1\", \"2001:2::1\"]},"
        "    {\"name\": \"0000:01:00.0\", \"addresses\": [\"198.19.0.10/16\"], "
        "     \"gateway\": \"198.19.0.1\"}],"
        "   \"snat\": [\"198.18.0.11\", \"2001:2::11\"],"
        "   \"vips\": [{\"address\": \"198.18.0.100\", \"port\": 8080, \"target\": \"xds:///svc\"},"
        "     {\"address\": \"2001:2::100\", \"port\": 443, \"cluster\": \"tcp-pool\"},"
        "     {\"address\": \"198.18.0.100\", \"port\": 8081, \"target\": \"xds://auth/svc\"}],"
        "   \"static_resources\": {\"listeners\": [{\"name\": \"l\"}], \"clusters\": []}}}";
    struct xlb_bootstrap b = parse_ok(text);
    assert_int_equal(b.n_xds_servers, 2);
    assert_string_equal(b.xds_servers[0].server_uri, "xds.example:443");
    assert_int_equal(b.xds_servers[0].creds, XLB_CREDS_TLS);
    assert_string_equal(b.xds_servers[0].ca_certificate_file, "/ca.pem");
    assert_string_equal(b.xds_servers[0].private_key_file, "/k.pem");
    assert_true(b.xds_servers[0].ignore_resource_deletion);
    assert_int_equal(b.xds_servers[1].creds, XLB_CREDS_INSECURE);
    assert_false(b.xds_servers[1].ignore_resource_deletion);
    assert_string_equal(b.node.id, "gw-1");
    assert_string_equal(b.node.cluster, "edge");
    assert_string_equal(b.node.sub_zone, "s");
    assert_non_null(b.node.metadata);
    assert_int_equal(b.n_eal_args, 3);
    assert_string_equal(b.eal_args[2], "256");
    assert_int_equal(b.workers, 2);
    assert_string_equal(b.control_socket, "/tmp/x.sock");
    assert_int_equal(b.worker_idle_sleep_us, 10);
    assert_int_equal(b.mbuf_pool_size, 4095);
    assert_int_equal(b.n_ports, 2);
    assert_int_equal(b.ports[0].n_gateways, 2);
    assert_int_equal(b.ports[0].gateways[1].family, AF_INET6);
    assert_int_equal(b.ports[1].n_gateways, 1);
    assert_int_equal(b.n_snat, 2);
    assert_int_equal(b.n_vips, 3);
    assert_string_equal(b.vips[0].target, "xds:///svc");
    assert_null(b.vips[0].cluster);
    assert_string_equal(b.vips[1].cluster, "tcp-pool");
    assert_int_equal(b.vips[1].port, 443);
    assert_non_null(b.static_resources);
    xlb_bootstrap_free(&b);
}

static void syntax_and_shape_errors(void **state)
{
    expect_errors("{\n  \"xlb\": {,}\n}", "(json): syntax error near line 2, column 12", NULL);
    expect_errors("[1]", "(root): must be an object", NULL);
    expect_errors("{}", "xlb: is required", NULL);
    expect_errors("{\"xlb\": []}", "xlb: must be an object", NULL);
    expect_errors("{\"xlb\": {}}", "xlb.ports: is required", NULL);
    expect_errors("{\"xlb\": {\"ports\": []}}", "xlb.ports: must hold 1..16 ports", NULL);
}

static void scalar_keys_are_checked(void **state)
{
    expect_errors(DOC(", \"workers\": 0"), "xlb.workers: must be 1..64", NULL);
    expect_errors(DOC(", \"workers\": 65"), "xlb.workers: must be 1..64", NULL);
    expect_errors(DOC(", \"workers\": 1.5"), "xlb.workers: must be an integer", NULL);
    expect_errors(DOC(", \"workers\": \"2\""), "xlb.workers: must be an integer", NULL);
    expect_errors(DOC(", \"control_socket\": \"\""), "xlb.control_socket: must not be empty", NULL);
    expect_errors(DOC(", \"control_socket\": 5"), "xlb.control_socket: must be a string", NULL);
    char long_path[200];
    memset(long_path, 'a', sizeof(long_path));
    long_path[sizeof(long_path) - 1] = '\0';
    char doc[512];
    snprintf(doc, sizeof(doc), DOC(", \"control_socket\": \"/%s\""), long_path);
    expect_errors(doc, "xlb.control_socket: must be at most 107 bytes", NULL);
    expect_errors(DOC(", \"worker_idle_sleep_us\": -1"),
                  "xlb.worker_idle_sleep_us: must be 0..100000", NULL);
    expect_errors(DOC(", \"worker_stall_ms\": 10"), "xlb.worker_stall_ms: must be 100..600000",
                  NULL);
    expect_errors(DOC(", \"mbuf_pool_size\": 10"), "xlb.mbuf_pool_size: must be 1023..16777216",
                  NULL);
    expect_errors(DOC(", \"eal\": \"--no-huge\""), "xlb.eal: must be an array", NULL);
    expect_errors(DOC(", \"eal\": [\"-m\", 256, \"\"]"), "xlb.eal[1]: must be a non-empty string",
                  "xlb.eal[2]: must be a non-empty string", NULL);
    /* xlbd puts its --lcores after the list: "--" would hide it, --help would exit. */
    expect_errors(DOC(", \"eal\": [\"--no-huge\", \"--\", \"-h\", \"--help\"]"),
                  "xlb.eal[1]: \"--\" would end EAL's options",
                  "xlb.eal[2]: makes EAL print its usage and exit",
                  "xlb.eal[3]: makes EAL print its usage and exit", NULL);
}

static void forwarding_keys_are_checked(void **state)
{
    struct xlb_bootstrap b =
        parse_ok(DOC(", \"flows_per_worker\": 2048, \"aggregate_cluster_backward_compat\": true"));
    assert_int_equal(b.flows_per_worker, 2048);
    assert_int_equal(b.l7_connections_per_worker, XLB_L7_CONNECTIONS_AUTO); /* not given */
    assert_true(b.aggregate_cluster_backward_compat);
    xlb_bootstrap_free(&b);
    b = parse_ok(DOC(", \"aggregate_cluster_backward_compat\": false"));
    assert_false(b.aggregate_cluster_backward_compat);
    xlb_bootstrap_free(&b);
    expect_errors(DOC(", \"flows_per_worker\": 1000"),
                  "xlb.flows_per_worker: must be 1024..16777216", NULL);
    expect_errors(DOC(", \"flows_per_worker\": 16777217"),
                  "xlb.flows_per_worker: must be 1024..16777216", NULL);
    expect_errors(DOC(", \"flows_per_worker\": \"64k\""),
                  "xlb.flows_per_worker: must be an integer", NULL);
    expect_errors(DOC(", \"l7_connections_per_worker\": 1048577"),
                  "xlb.l7_connections_per_worker: must be 0..1048576", NULL);
    expect_errors(DOC(", \"l7_connections_per_worker\": -1"),
                  "xlb.l7_connections_per_worker: must be 0..1048576", NULL);
    expect_errors(DOC(", \"aggregate_cluster_backward_compat\": \"yes\""),
                  "xlb.aggregate_cluster_backward_compat: must be true or false", NULL);
    expect_errors(DOC(", \"aggregate_cluster_backward_compat\": 1"),
                  "xlb.aggregate_cluster_backward_compat: must be true or false", NULL);
}

static void port_mtu_is_optional_and_bounded(void **state)
{
    (void)state;
#define MTU_DOC(mtu)                                                                               \
    "{\"xlb\": {\"ports\": [{\"name\": \"p0\", \"addresses\": [\"198.18.0.10/24\"], \"mtu\": " mtu \
    "}]}}"
    struct xlb_bootstrap b = parse_ok(DOC(""));
    assert_int_equal(b.ports[0].mtu, 0); /* the device's default */
    xlb_bootstrap_free(&b);
    b = parse_ok(MTU_DOC("1400"));
    assert_int_equal(b.ports[0].mtu, 1400);
    xlb_bootstrap_free(&b);
    expect_errors(MTU_DOC("575"), "xlb.ports[0].mtu: must be 576..2026", NULL);
    expect_errors(MTU_DOC("9000"), "xlb.ports[0].mtu: must be 576..2026", NULL);
#undef MTU_DOC
}

static void mss_clamp_is_auto_off_or_a_size(void **state)
{
    (void)state;
    struct xlb_bootstrap b = parse_ok(DOC(", \"tcp_mss_clamp\": \"off\""));
    assert_int_equal(b.tcp_mss_clamp, XLB_MSS_CLAMP_OFF);
    xlb_bootstrap_free(&b);
    b = parse_ok(DOC(", \"tcp_mss_clamp\": \"auto\""));
    assert_int_equal(b.tcp_mss_clamp, XLB_MSS_CLAMP_AUTO);
    xlb_bootstrap_free(&b);
    b = parse_ok(DOC(", \"tcp_mss_clamp\": 1360"));
    assert_int_equal(b.tcp_mss_clamp, 1360);
    xlb_bootstrap_free(&b);
    const char *want = "xlb.tcp_mss_clamp: must be \"auto\", \"off\" or an integer in 536..65495";
    expect_errors(DOC(", \"tcp_mss_clamp\": 535"), want, NULL);
    expect_errors(DOC(", \"tcp_mss_clamp\": 65496"), want, NULL);
    expect_errors(DOC(", \"tcp_mss_clamp\": 1360.5"), want, NULL);
    expect_errors(DOC(", \"tcp_mss_clamp\": 1e300"), want, NULL);
    expect_errors(DOC(", \"tcp_mss_clamp\": \"1360\""), want, NULL);
    expect_errors(DOC(", \"tcp_mss_clamp\": true"), want, NULL);
}

/* l4_syn_proxy: "auto" by default (half the SYN pool), true, false or "auto"; its percent. */
static void syn_proxy_is_auto_by_default(void **state)
{
    (void)state;
    struct xlb_bootstrap b = parse_ok(DOC(""));
    assert_int_equal(b.l4_syn_proxy, XLB_SYN_PROXY_AUTO);
    assert_int_equal(b.l4_syn_proxy_percent, 50);
    xlb_bootstrap_free(&b);
    b = parse_ok(DOC(", \"l4_syn_proxy\": true"));
    assert_int_equal(b.l4_syn_proxy, XLB_SYN_PROXY_ON);
    xlb_bootstrap_free(&b);
    b = parse_ok(DOC(", \"l4_syn_proxy\": false"));
    assert_int_equal(b.l4_syn_proxy, XLB_SYN_PROXY_OFF);
    xlb_bootstrap_free(&b);
    b = parse_ok(DOC(", \"l4_syn_proxy\": \"auto\", \"l4_syn_proxy_percent\": 80"));
    assert_int_equal(b.l4_syn_proxy, XLB_SYN_PROXY_AUTO);
    assert_int_equal(b.l4_syn_proxy_percent, 80);
    xlb_bootstrap_free(&b);
    expect_errors(DOC(", \"l4_syn_proxy\": \"on\""),
                  "xlb.l4_syn_proxy: must be true, false or \"auto\"", NULL);
    expect_errors(DOC(", \"l4_syn_proxy_percent\": 0"), "xlb.l4_syn_proxy_percent: must be 1..100",
                  NULL);
}

static void connection_hash_key_is_128_bits_of_hex(void **state)
{
    (void)state;
    struct xlb_bootstrap b = parse_ok(DOC(""));
    assert_false(b.connection_hash_keyed);
    xlb_bootstrap_free(&b);
    b = parse_ok(DOC(", \"connection_hash_key\": \"00112233445566778899aAbBcCdDeEfF\""));
    assert_true(b.connection_hash_keyed);
    assert_true(b.connection_hash_key[0] == UINT64_C(0x0011223344556677));
    assert_true(b.connection_hash_key[1] == UINT64_C(0x8899aabbccddeeff));
    xlb_bootstrap_free(&b);
    const char *want = "xlb.connection_hash_key: must be 32 hexadecimal digits (a 128-bit key)";
    expect_errors(DOC(", \"connection_hash_key\": \"00112233445566778899aabbccddeef\""), want,
                  NULL);
    expect_errors(DOC(", \"connection_hash_key\": \"00112233445566778899aabbccddeeff0\""), want,
                  NULL);
    expect_errors(DOC(", \"connection_hash_key\": \"0011223344556677 899aabbccddeeff\""), want,
                  NULL);
    expect_errors(DOC(", \"connection_hash_key\": 42"), want, NULL);
}

/* cJSON keeps a double: an integral value is accepted however it is spelt, a fraction is not. */
static void integers_must_be_exact(void **state)
{
#define PORT_VIP(port)                                                                             \
    DOC(", \"vips\": [{\"address\": \"198.18.0.100\", \"port\": " port ", \"cluster\": \"c\"}]")
    struct xlb_bootstrap b = parse_ok(PORT_VIP("80.0"));
    assert_int_equal(b.vips[0].port, 80);
    xlb_bootstrap_free(&b);
    b = parse_ok(DOC(", \"workers\": 2.0, \"mbuf_pool_size\": 4.095e3"));
    assert_int_equal(b.workers, 2);
    assert_int_equal(b.mbuf_pool_size, 4095);
    xlb_bootstrap_free(&b);
    expect_errors(PORT_VIP("80.5"), "xlb.vips[0].port: must be an integer", NULL);
    expect_errors(PORT_VIP("80.000001"), "xlb.vips[0].port: must be an integer", NULL);
    expect_errors(PORT_VIP("true"), "xlb.vips[0].port: must be an integer", NULL);
    expect_errors(PORT_VIP("\"80\""), "xlb.vips[0].port: must be an integer", NULL);
    expect_errors(PORT_VIP("1e300"), "xlb.vips[0].port: must be 1..65535", NULL);
    expect_errors(DOC(", \"mbuf_pool_size\": 4095.5"), "xlb.mbuf_pool_size: must be an integer",
                  NULL);
#undef PORT_VIP
}

static void ports_are_checked(void **state)
{
    expect_errors("{\"xlb\": {\"ports\": [7]}}", "xlb.ports[0]: must be an object", NULL);
    expect_errors("{\"xlb\": {\"ports\": [{\"addresses\": [\"198.18.0.1/24\"]}]}}",
                  "xlb.ports[0].name: is required", NULL);
    expect_errors("{\"xlb\": {\"ports\": [{\"name\": \"p\"}]}}",
                  "xlb.ports[0].addresses: is required", NULL);
    expect_errors("{\"xlb\": {\"ports\": [{\"name\": \"p\", \"addresses\": []}]}}",
                  "xlb.ports[0].addresses: must hold 1..8 addresses", NULL);
    expect_errors("{\"xlb\": {\"ports\": [{\"name\": \"p\", \"addresses\": "
                  "[\"198.18.0.1\", \"198.18.0.1/33\", \"2001:2::1/129\", 4, \"x/1\"]}]}}",
                  "xlb.ports[0].addresses[0]: \"198.18.0.1\" is not ADDRESS/PREFIXLEN",
                  "xlb.ports[0].addresses[1]: \"198.18.0.1/33\" is not ADDRESS/PREFIXLEN",
                  "xlb.ports[0].addresses[2]: \"2001:2::1/129\" is not ADDRESS/PREFIXLEN",
                  "xlb.ports[0].addresses[3]: must be a string",
                  "xlb.ports[0].addresses[4]: \"x/1\" is not ADDRESS/PREFIXLEN", NULL);
    expect_errors("{\"xlb\": {\"ports\": [" PORT_OK ", " PORT_OK "]}}",
                  "xlb.ports[1]: name \"p0\" is used by xlb.ports[0] too",
                  "xlb.ports[1].addresses[0]: 198.18.0.10 is already xlb.ports[0].addresses[0]",
                  NULL);
}

/* One address, one owner: twice in a port (any prefix length, any spelling) or on two ports. */
static void port_addresses_are_unique(void **state)
{
#define TWO_PORTS(second)                                                                          \
    "{\"xlb\": {\"ports\": [" PORT_OK ", {\"name\": \"p1\", \"addresses\": " second "}]}}"
    struct xlb_bootstrap b = parse_ok(TWO_PORTS("[\"198.18.0.11/24\", \"2001:2::10/64\"]"));
    assert_int_equal(b.ports[1].n_addresses, 2);
    xlb_bootstrap_free(&b);
    expect_errors(TWO_PORTS("[\"198.19.0.1/24\", \"198.18.0.10/16\"]"),
                  "xlb.ports[1].addresses[1]: 198.18.0.10 is already xlb.ports[0].addresses[0]",
                  NULL);
    expect_errors(TWO_PORTS("[\"2001:2::10/64\", \"198.19.0.1/24\", \"2001:2:0::10/120\"]"),
                  "xlb.ports[1].addresses[2]: 2001:2::10 is already xlb.ports[1].addresses[0]",
                  NULL);
    expect_errors("{\"xlb\": {\"ports\": [{\"name\": \"p\", \"addresses\": "
                  "[\"198.18.0.10/24\", \"198.18.0.10/25\"]}]}}",
                  "xlb.ports[0].addresses[1]: 198.18.0.10 is already xlb.ports[0].addresses[0]",
                  NULL);
#undef TWO_PORTS
}

static void gateways_are_checked(void **state)
{
#define GW_DOC(gw)                                                                                 \
    "{\"xlb\": {\"ports\": [{\"name\": \"p\", \"addresses\": [\"198.18.0.10/24\", "                \
    "\"2001:2::10/64\"], \"gateway\": " gw "}]}}"
    struct xlb_bootstrap b = parse_ok(GW_DOC("\"198.18.0.1\""));
    assert_int_equal(b.ports[0].n_gateways, 1);
    xlb_bootstrap_free(&b);
    expect_errors(GW_DOC("\"198.19.0.1\""),
                  "xlb.ports[0].gateway: 198.19.0.1 is not on-link for any address of this port",
                  NULL);
    expect_errors(GW_DOC("[\"198.18.0.1\", \"198.18.0.2\"]"),
                  "xlb.ports[0].gateway[1]: a second gateway of the same address family", NULL);
    expect_errors(GW_DOC("[\"198.18.0.1\", \"2001:2::1\", \"2001:2::2\"]"),
                  "xlb.ports[0].gateway: at most 2 gateways (one per address family)", NULL);
    expect_errors(GW_DOC("\"gw\""), "xlb.ports[0].gateway: \"gw\" is not an IPv4 or IPv6 address",
                  NULL);
    expect_errors(GW_DOC("{}"), "xlb.ports[0].gateway: must be a string", NULL);
#undef GW_DOC
}

static void snat_is_checked(void **state)
{
    expect_errors(DOC(", \"snat\": {}"), "xlb.snat: must be an array", NULL);
    expect_errors(DOC(", \"snat\": [\"198.18.0.11\", \"nope\", \"198.18.0.10\", \"198.18.0.11\"]"),
                  "xlb.snat[1]: \"nope\" is not an IPv4 or IPv6 address",
                  "xlb.snat[2]: 198.18.0.10 is already a port address",
                  "xlb.snat[3]: 198.18.0.11 is already an snat address", NULL);

    /* 256 SNAT addresses (198.19.0.0 - 198.19.0.255) are taken; a 257th is refused. */
    char text[16384], list[12288] = "";
    size_t used = 0;
    for (int i = 0; i <= XLB_MAX_SNAT; i++)
        used += (size_t)snprintf(list + used, sizeof(list) - used, "%s\"198.19.%d.%d\"",
                                 i > 0 ? ", " : "", i / 256, i % 256);
    snprintf(text, sizeof(text), DOC(", \"snat\": [%s]"), list);
    expect_errors(text, "xlb.snat[256]: at most 256 snat addresses", NULL);
    list[strlen(list) - strlen(", \"198.19.1.0\"")] = '\0';
    snprintf(text, sizeof(text), DOC(", \"snat\": [%s]"), list);
    struct xlb_bootstrap ok = parse_ok(text);
    assert_int_equal(ok.n_snat, XLB_MAX_SNAT);
    xlb_bootstrap_free(&ok);
}

static void vips_are_checked(void **state)
{
#define VIP(body) DOC(", \"vips\": [" body "]")
    expect_errors(VIP("1"), "xlb.vips[0]: must be an object", NULL);
    expect_errors(VIP("{\"port\": 80, \"cluster\": \"c\"}"), "xlb.vips[0].address: is required",
                  NULL);
    expect_errors(VIP("{\"address\": \"198.18.0.100\", \"cluster\": \"c\"}"),
                  "xlb.vips[0].port: is required", NULL);
    expect_errors(VIP("{\"address\": \"198.18.0.100\", \"port\": 0, \"cluster\": \"c\"}"),
                  "xlb.vips[0].port: must be 1..65535", NULL);
    expect_errors(VIP("{\"address\": \"198.18.0.100\", \"port\": 65536, \"cluster\": \"c\"}"),
                  "xlb.vips[0].port: must be 1..65535", NULL);
    expect_errors(VIP("{\"address\": \"198.18.0.100\", \"port\": 80}"),
                  "xlb.vips[0]: needs exactly one of \"target\" (L7) or \"cluster\" (L4)", NULL);
    expect_errors(
        VIP("{\"address\": \"198.18.0.100\", \"port\": 80, \"cluster\": \"c\", \"target\": "
            "\"xds:///s\"}"),
        "xlb.vips[0]: needs exactly one of \"target\" (L7) or \"cluster\" (L4)", NULL);
    expect_errors(VIP("{\"address\": \"198.18.0.100\", \"port\": 80, \"target\": \"http://s\"}"),
                  "xlb.vips[0].target: \"http://s\" is not an xds: URI (xds:///NAME)", NULL);
    expect_errors(VIP("{\"address\": \"198.18.0.100\", \"port\": 80, \"target\": \"xds://a/\"}"),
                  "xlb.vips[0].target: \"xds://a/\" is not an xds: URI (xds:///NAME)", NULL);
    expect_errors(VIP("{\"address\": \"198.18.0.100\", \"port\": 80, \"cluster\": \"\"}"),
                  "xlb.vips[0].cluster: must not be empty", NULL);
    expect_errors(VIP("{\"address\": \"198.18.0.10\", \"port\": 80, \"cluster\": \"c\"}"),
                  "xlb.vips[0].address: 198.18.0.10 is already a port address", NULL);
    expect_errors(VIP("{\"address\": \"198.18.0.100\", \"port\": 80, \"cluster\": \"c\"},"
                      "{\"address\": \"198.18.0.100\", \"port\": 80, \"target\": \"xds:///x\"}"),
                  "xlb.vips[1]: duplicates xlb.vips[0] (same address and port)", NULL);
    expect_errors(VIP("{\"address\": \"198.18.0.100\", \"port\": 80, \"cluster\": \"c\"},"
                      "{\"address\": \"198.18.0.101\", \"port\": 70000, "
                      "\"cluster\": \"c\"}, {\"address\": \"2001:2::zz\", \"port\": 80, "
                      "\"cluster\": \"c\"}"),
                  "xlb.vips[1].port: must be 1..65535",
                  "xlb.vips[2].address: \"2001:2::zz\" is not an IPv4 or IPv6 address", NULL);
    expect_errors(VIP("{\"address\": 5, \"port\": 80, \"cluster\": \"c\"}"),
                  "xlb.vips[0].address: must be a string", NULL);
    expect_errors(VIP("{\"address\": \"198.18.0.100\", \"port\": 80, \"target\": 5}"),
                  "xlb.vips[0].target: must be a string", NULL);
    expect_errors(VIP("{\"address\": \"198.18.0.100\", \"port\": 80, \"cluster\": [\"c\"]}"),
                  "xlb.vips[0].cluster: must be a string", NULL);
#undef VIP
    struct xlb_bootstrap b = parse_ok(DOC(
        ", \"snat\": [\"198.18.0.11\"], \"vips\": [{\"address\": \"198.18.0.12\", \"port\": 80, "
        "\"cluster\": \"c\"}]"));
    assert_int_equal(b.n_vips, 1);
    xlb_bootstrap_free(&b);
    expect_errors(DOC(", \"snat\": [\"2001:2::11\"], \"vips\": [{\"address\": \"2001:2:0::11\", "
                      "\"port\": 80, \"cluster\": \"c\"}]"),
                  "xlb.vips[0].address: 2001:2:0::11 is already an snat address", NULL);
}

/* certificate_providers (A29's file_watcher) and a stream VIP's "tls" naming one. */
#define PROVIDERS(body) "\"certificate_providers\": {" body "}, "
#define WATCHER(config) "{\"plugin_name\": \"file_watcher\", \"config\": {" config "}}"
#define TLS_DOC(providers, tls)                                                                    \
    "{" providers "\"xlb\": {\"ports\": [" PORT_OK "], \"vips\": [{\"address\": "                  \
    "\"198.18.0.100\", \"port\": 443, \"target\": \"xds:///svc\", \"l7_mode\": \"stream\", "       \
    "\"tls\": " tls "}]}}"
#define PAIR "\"certificate_file\": \"/c.pem\", \"private_key_file\": \"/k.pem\""

static void tls_is_checked(void **state)
{
    (void)state;
    struct xlb_bootstrap b = parse_ok(
        TLS_DOC(PROVIDERS("\"web\": " WATCHER(PAIR ", \"ca_certificate_file\": \"/ca.pem\", "
                                                   "\"refresh_interval\": \"2.5s\"")),
                "{\"certificate_provider\": \"web\", \"require_client_certificate\": true}"));
    assert_int_equal(b.n_cert_providers, 1);
    assert_string_equal(b.cert_providers[0].name, "web");
    assert_string_equal(b.cert_providers[0].certificate_file, "/c.pem");
    assert_string_equal(b.cert_providers[0].ca_certificate_file, "/ca.pem");
    assert_int_equal(b.cert_providers[0].refresh_interval_ms, 2500);
    assert_string_equal(b.vips[0].tls.certificate_provider, "web");
    assert_true(b.vips[0].tls.require_client_certificate);
    assert_int_equal(b.vips[0].tls.index, 0);
    xlb_bootstrap_free(&b);
    b = parse_ok(
        TLS_DOC(PROVIDERS("\"web\": " WATCHER(PAIR)), "{\"certificate_provider\": \"web\"}"));
    assert_int_equal(b.cert_providers[0].refresh_interval_ms, XLB_DEFAULT_CERT_REFRESH_MS);
    xlb_bootstrap_free(&b);

    expect_errors(
        TLS_DOC(PROVIDERS("\"web\": " WATCHER(PAIR)), "{\"certificate_provider\": \"api\"}"),
        "xlb.vips[0].tls.certificate_provider: \"api\" is not an instance of "
        "certificate_providers",
        NULL);
    expect_errors(
        TLS_DOC(PROVIDERS("\"web\": " WATCHER(PAIR)),
                "{\"certificate_provider\": \"web\", \"require_client_certificate\": true}"),
        "xlb.vips[0].tls.require_client_certificate: needs a ca_certificate_file in "
        "\"web\"",
        NULL);
    expect_errors(TLS_DOC(PROVIDERS("\"ca\": " WATCHER("\"ca_certificate_file\": \"/ca.pem\"")),
                          "{\"certificate_provider\": \"ca\"}"),
                  "xlb.vips[0].tls.certificate_provider: \"ca\" has no certificate_file for a "
                  "server",
                  NULL);
    b = parse_ok(TLS_DOC(PROVIDERS("\"web\": " WATCHER(PAIR) ", \"alt\": " WATCHER(PAIR)),
                         "{\"certificate_provider\": \"web\", "
                         "\"sni_certificate_providers\": [\"alt\"]}"));
    assert_int_equal(b.vips[0].tls.n_sni, 1);
    assert_string_equal(b.vips[0].tls.sni_certificate_providers[0], "alt");
    xlb_bootstrap_free(&b);
    expect_errors(TLS_DOC(PROVIDERS("\"web\": " WATCHER(PAIR)),
                          "{\"certificate_provider\": \"web\", "
                          "\"sni_certificate_providers\": [\"gone\"]}"),
                  "xlb.vips[0].tls.sni_certificate_providers: \"gone\" is not an instance of "
                  "certificate_providers",
                  NULL);
    expect_errors(TLS_DOC(PROVIDERS("\"web\": " WATCHER(PAIR)),
                          "{\"certificate_provider\": \"web\", \"alpn\": [\"h2\"]}"),
                  "xlb.vips[0].tls.alpn: unknown key", NULL);
    expect_errors(TLS_DOC(PROVIDERS("\"web\": {\"plugin_name\": \"vault\", \"config\": {}}"),
                          "{\"certificate_provider\": \"web\"}"),
                  "certificate_providers.web.plugin_name: \"vault\" is not supported (only "
                  "\"file_watcher\")",
                  "xlb.vips[0].tls.certificate_provider: \"web\" is not an instance of "
                  "certificate_providers",
                  NULL);
    expect_errors(TLS_DOC(PROVIDERS("\"web\": " WATCHER("\"certificate_file\": \"/c.pem\"")), "{}"),
                  "certificate_providers.web.config: certificate_file and private_key_file go "
                  "together",
                  "xlb.vips[0].tls.certificate_provider: is required", NULL);
    expect_errors(TLS_DOC(PROVIDERS("\"web\": " WATCHER(PAIR ", \"refresh_interval\": \"10\"")),
                          "{\"certificate_provider\": \"web\"}"),
                  "certificate_providers.web.config.refresh_interval: must be a duration from "
                  "\"1s\" to \"86400s\"",
                  "xlb.vips[0].tls.certificate_provider: \"web\" is not an instance of "
                  "certificate_providers",
                  NULL);
    expect_errors(DOC(", \"vips\": [{\"address\": \"198.18.0.100\", \"port\": 443, \"cluster\": "
                      "\"c\", \"tls\": {}}]"),
                  "xlb.vips[0].tls.certificate_provider: is required",
                  "xlb.vips[0]: \"tls\" needs \"l7_mode\": \"stream\"", NULL);
}

static void vip_addresses_are_unicast(void **state)
{
#define VIP_AT(a) DOC(", \"vips\": [{\"address\": \"" a "\", \"port\": 80, \"cluster\": \"c\"}]")
    expect_errors(VIP_AT("0.0.0.0"),
                  "xlb.vips[0].address: 0.0.0.0 is in 0.0.0.0/8, not a VIP address", NULL);
    expect_errors(VIP_AT("127.0.0.1"),
                  "xlb.vips[0].address: 127.0.0.1 is a loopback address, not a VIP address", NULL);
    expect_errors(VIP_AT("224.0.0.1"),
                  "xlb.vips[0].address: 224.0.0.1 is multicast, reserved or broadcast, not a VIP "
                  "address",
                  NULL);
    expect_errors(VIP_AT("255.255.255.0"),
                  "xlb.vips[0].address: 255.255.255.0 is multicast, reserved or broadcast, not a "
                  "VIP address",
                  NULL);
    expect_errors(VIP_AT("::"),
                  "xlb.vips[0].address: :: is the unspecified address, not a VIP address", NULL);
    expect_errors(VIP_AT("::1"),
                  "xlb.vips[0].address: ::1 is the loopback address, not a VIP address", NULL);
    expect_errors(VIP_AT("ff02::1"), "xlb.vips[0].address: ff02::1 is multicast, not a VIP address",
                  NULL);
    struct xlb_bootstrap ok = parse_ok(VIP_AT("223.255.255.254"));
    xlb_bootstrap_free(&ok);
#undef VIP_AT

    /* 256 distinct IPv6 VIP addresses (two ports on the first) are taken; a 257th is refused. */
    static char text[65536], list[61440];
    size_t used = 0;
    for (int i = 0; i <= XLB_MAX_VIP6_ADDRESSES; i++)
        used +=
            (size_t)snprintf(list + used, sizeof(list) - used,
                             "%s{\"address\": \"2001:2:1::%x\", \"port\": 80, \"cluster\": \"c\"}",
                             i > 0 ? ", " : "", i);
    used += (size_t)snprintf(list + used, sizeof(list) - used,
                             ", {\"address\": \"2001:2:1::0\", \"port\": 81, \"cluster\": \"c\"}");
    snprintf(text, sizeof(text), DOC(", \"vips\": [%s]"), list);
    expect_errors(text, "xlb.vips[256].address: at most 256 IPv6 VIP addresses", NULL);
}

static void xds_servers_are_checked(void **state)
{
#define XDS(servers) "{\"xds_servers\": " servers ", \"xlb\": {\"ports\": [" PORT_OK "]}}"
    expect_errors(XDS("[]"), "xds_servers: must not be empty when present", NULL);
    expect_errors(XDS("{}"), "xds_servers: must be an array", NULL);
    expect_errors(XDS("[1]"), "xds_servers[0]: must be an object", NULL);
    expect_errors(XDS("[{\"channel_creds\": [{\"type\": \"insecure\"}]}]"),
                  "xds_servers[0].server_uri: is required", NULL);
    expect_errors(XDS("[{\"server_uri\": \"a:1\"}]"), "xds_servers[0].channel_creds: is required",
                  NULL);
    expect_errors(XDS("[{\"server_uri\": \"a:1\", \"channel_creds\": [{\"type\": \"alts\"}]}]"),
                  "xds_servers[0].channel_creds: no supported type (insecure, tls)", NULL);
    expect_errors(XDS("[{\"server_uri\": \"a:1\", \"channel_creds\": [{\"config\": {}}]}]"),
                  "xds_servers[0].channel_creds[0].type: is required", NULL);
    expect_errors(XDS("[{\"server_uri\": \"a:1\", \"channel_creds\": [{\"type\": \"tls\", "
                      "\"config\": {\"certificate_file\": \"/c.pem\"}}]}]"),
                  "xds_servers[0].channel_creds[0].config: certificate_file and private_key_file "
                  "must be given together",
                  NULL);
    expect_errors(XDS("[{\"server_uri\": \"a:1\", \"channel_creds\": [{\"type\": \"insecure\"}], "
                      "\"server_features\": [1]}]"),
                  "xds_servers[0].server_features[0]: must be a string", NULL);
    expect_errors(XDS("[{\"server_uri\": \"a:1\", \"channel_creds\": [{\"type\": \"insecure\"}], "
                      "\"server_features\": \"ignore_resource_deletion\"}]"),
                  "xds_servers[0].server_features: must be an array", NULL);
    expect_errors(XDS("[{\"server_uri\": 1, \"channel_creds\": [{\"type\": \"insecure\"}]}]"),
                  "xds_servers[0].server_uri: must be a string", NULL);
#undef XDS
}

static void channel_creds_are_checked(void **state)
{
#define CREDS(creds)                                                                               \
    "{\"xds_servers\": [{\"server_uri\": \"a:1\", \"channel_creds\": " creds "}], "                \
    "\"xlb\": {\"ports\": [" PORT_OK "]}}"
    struct xlb_bootstrap b = parse_ok(CREDS("[{\"type\": \"tls\"}]"));
    assert_int_equal(b.xds_servers[0].creds, XLB_CREDS_TLS);
    assert_null(b.xds_servers[0].ca_certificate_file);
    xlb_bootstrap_free(&b);
    b = parse_ok(
        CREDS("[{\"type\": \"tls\", \"config\": {\"ca_certificate_file\": \"/ca.pem\"}}]"));
    assert_string_equal(b.xds_servers[0].ca_certificate_file, "/ca.pem");
    assert_null(b.xds_servers[0].certificate_file);
    xlb_bootstrap_free(&b);
    expect_errors(CREDS("{\"type\": \"insecure\"}"),
                  "xds_servers[0].channel_creds: must be an array", NULL);
    expect_errors(CREDS("[\"insecure\"]"), "xds_servers[0].channel_creds[0]: must be an object",
                  NULL);
    expect_errors(CREDS("[{\"type\": 1}]"),
                  "xds_servers[0].channel_creds[0].type: must be a string", NULL);
    expect_errors(CREDS("[{\"type\": \"tls\", \"config\": []}]"),
                  "xds_servers[0].channel_creds[0].config: must be an object", NULL);
    expect_errors(CREDS("[{\"type\": \"tls\", \"config\": {\"ca_certificate_file\": 7}}]"),
                  "xds_servers[0].channel_creds[0].config.ca_certificate_file: must be a string",
                  NULL);
    expect_errors(CREDS("[{\"type\": \"tls\", \"config\": {\"ca_certificate_file\": \"\"}}]"),
                  "xds_servers[0].channel_creds[0].config.ca_certificate_file: must not be empty",
                  NULL);
    expect_errors(CREDS("[{\"type\": \"tls\", \"config\": {\"private_key_file\": \"/k.pem\"}}]"),
                  "xds_servers[0].channel_creds[0].config: certificate_file and private_key_file "
                  "must be given together",
                  NULL);
#undef CREDS
}

static void node_is_checked(void **state)
{
#define NODE(node) "{\"node\": " node ", \"xlb\": {\"ports\": [" PORT_OK "]}}"
    struct xlb_bootstrap b =
        parse_ok(NODE("{\"cluster\": \"edge\", \"metadata\": {\"a\": {\"b\": [1]}}}"));
    assert_string_equal(b.node.cluster, "edge");
    assert_null(b.node.id);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(b.node.metadata, "a");
    assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(a, "b")));
    xlb_bootstrap_free(&b);
    expect_errors(NODE("{\"id\": 5, \"locality\": {\"zone\": []}}"), "node.id: must be a string",
                  "node.locality.zone: must be a string", NULL);
    expect_errors(NODE("[]"), "node: must be an object", NULL);
    expect_errors(NODE("{\"id\": \"\"}"), "node.id: must not be empty", NULL);
    expect_errors(NODE("{\"cluster\": 5}"), "node.cluster: must be a string", NULL);
    expect_errors(NODE("{\"metadata\": [\"k\"]}"), "node.metadata: must be an object", NULL);
    expect_errors(NODE("{\"metadata\": \"k=v\"}"), "node.metadata: must be an object", NULL);
    expect_errors(NODE("{\"locality\": \"eu\"}"), "node.locality: must be an object", NULL);
    expect_errors(NODE("{\"locality\": {\"region\": 1, \"sub_zone\": \"\"}}"),
                  "node.locality.region: must be a string",
                  "node.locality.sub_zone: must not be empty", NULL);
#undef NODE
}

static void static_resources_are_checked(void **state)
{
    expect_errors(DOC(", \"static_resources\": []"), "xlb.static_resources: must be an object",
                  NULL);
    expect_errors(DOC(", \"static_resources\": {\"clusters\": {}, \"routes\": [3]}"),
                  "xlb.static_resources.routes[0]: must be an object",
                  "xlb.static_resources.clusters: must be an array", NULL);
    expect_errors(DOC(", \"static_resources\": {\"listeners\": {\"name\": \"l\"}}"),
                  "xlb.static_resources.listeners: must be an array", NULL);
    expect_errors(DOC(", \"static_resources\": {\"endpoints\": [{}, \"e\"]}"),
                  "xlb.static_resources.endpoints[1]: must be an object", NULL);
    /* Their contents are the xDS validators' business (xds_plane), not the reader's. */
    struct xlb_bootstrap b =
        parse_ok(DOC(", \"static_resources\": {\"routes\": [{}], \"endpoints\": [{}]}"));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(b.static_resources, "endpoints")), 1);
    xlb_bootstrap_free(&b);
}

static void metrics_settings_are_checked(void **state)
{
    struct xlb_bootstrap b = parse_ok(DOC(", \"metrics_listen\": \"[::1]:9100\""));
    assert_true(b.metrics_enabled);
    assert_int_equal(b.metrics_listen.port, 9100);
    assert_int_equal(b.metrics_listen.addr.family, AF_INET6);
    assert_int_equal(b.metrics_max_series, XLB_DEFAULT_MAX_SERIES);
    xlb_bootstrap_free(&b);
    b = parse_ok(DOC(", \"metrics_listen\": \"127.0.0.2:80\", \"metrics_max_series\": 500"));
    assert_int_equal(b.metrics_max_series, 500);
    xlb_bootstrap_free(&b);
    expect_errors(DOC(", \"metrics_listen\": \"198.18.0.10:9100\""),
                  "xlb.metrics_listen: \"198.18.0.10:9100\" is not a loopback ADDRESS:PORT "
                  "(127.0.0.1:9109 or [::1]:9109)",
                  NULL);
    expect_errors(DOC(", \"metrics_listen\": \"127.0.0.1\""),
                  "xlb.metrics_listen: \"127.0.0.1\" is not a loopback ADDRESS:PORT "
                  "(127.0.0.1:9109 or [::1]:9109)",
                  NULL);
    expect_errors(DOC(", \"metrics_max_series\": 5"),
                  "xlb.metrics_max_series: must be 100..1000000", NULL);
}

static void every_problem_is_reported_at_once(void **state)
{
    expect_errors("{\"xlb\": {\"workers\": 0, \"ports\": [{\"name\": \"p\", \"addresses\": "
                  "[\"1.2.3.4/24\"]}], \"vips\": [{\"address\": \"1.2.3.9\", \"port\": -4, "
                  "\"cluster\": \"c\"}]}}",
                  "xlb.workers: must be 1..64", "xlb.vips[0].port: must be 1..65535", NULL);
}

static void expect_load_error(const char *path, const char *want)
{
    struct xlb_bootstrap b;
    struct xlb_errors errs = {0};
    assert_int_equal(xlb_bootstrap_load(path, &b, &errs), -1);
    assert_int_equal(errs.n, 1);
    assert_string_equal(errs.lines[0], want);
    xlb_errors_free(&errs);
    xlb_bootstrap_free(&b);
}

static void load_reports_file_problems(void **state)
{
    struct xlb_bootstrap b;
    struct xlb_errors errs = {0};
    assert_int_equal(xlb_bootstrap_load("/nonexistent/xlb.json", &b, &errs), -1);
    assert_int_equal(errs.n, 1);
    assert_string_equal(errs.lines[0], "/nonexistent/xlb.json: No such file or directory");
    xlb_errors_free(&errs);

    char path[] = "/tmp/xlb-bootstrap-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(DOC(", \"workers\": 3"), f);
    fclose(f);
    assert_int_equal(xlb_bootstrap_load(path, &b, &errs), 0);
    assert_int_equal(b.workers, 3);
    xlb_bootstrap_free(&b);

    /* A NUL would make the parser see a shorter document than the file holds. */
    f = fopen(path, "w");
    fwrite("{\"xlb\": {}}\0{}", 1, 14, f);
    fclose(f);
    char want[128];
    snprintf(want, sizeof(want), "%s: contains a NUL byte", path);
    expect_load_error(path, want);

    /* One byte over the limit, as a sparse file: nothing is parsed. */
    assert_int_equal(truncate(path, (64 << 20) + 1), 0);
    snprintf(want, sizeof(want), "%s: larger than 67108864 bytes", path);
    expect_load_error(path, want);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(minimal_document_gets_defaults),
        cmocka_unit_test(full_document_is_read),
        cmocka_unit_test(syntax_and_shape_errors),
        cmocka_unit_test(scalar_keys_are_checked),
        cmocka_unit_test(forwarding_keys_are_checked),
        cmocka_unit_test(integers_must_be_exact),
        cmocka_unit_test(ports_are_checked),
        cmocka_unit_test(port_addresses_are_unique),
        cmocka_unit_test(gateways_are_checked),
        cmocka_unit_test(snat_is_checked),
        cmocka_unit_test(vip_addresses_are_unicast),
        cmocka_unit_test(vips_are_checked),
        cmocka_unit_test(tls_is_checked),
        cmocka_unit_test(syn_proxy_is_auto_by_default),
        cmocka_unit_test(xds_servers_are_checked),
        cmocka_unit_test(channel_creds_are_checked),
        cmocka_unit_test(node_is_checked),
        cmocka_unit_test(static_resources_are_checked),
        cmocka_unit_test(metrics_settings_are_checked),
        cmocka_unit_test(mss_clamp_is_auto_off_or_a_size),
        cmocka_unit_test(connection_hash_key_is_128_bits_of_hex),
        cmocka_unit_test(port_mtu_is_optional_and_bounded),
        cmocka_unit_test(every_problem_is_reported_at_once),
        cmocka_unit_test(load_reports_file_problems),
    };
    return cmocka_run_group_tests_name("bootstrap", tests, NULL, NULL);
}
