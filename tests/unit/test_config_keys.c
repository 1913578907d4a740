/* Unknown keys in the xlb section: at every level, with the nearest known key suggested when
 * one is close, all of them at once, and as JSON for tools. gRPC's part ignores them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bootstrap.h"

#define PORT_OK          "{\"name\": \"p0\", \"addresses\": [\"198.18.0.10/24\"]}"
#define VIP_OK           "{\"address\": \"198.18.0.100\", \"port\": 80, \"cluster\": \"c\"}"
#define DOC(xlb_members) "{\"xlb\": {\"ports\": [" PORT_OK "]" xlb_members "}}"

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

static void expect_valid(const char *text)
{
    struct xlb_bootstrap b;
    struct xlb_errors errs = {0};
    int rc = xlb_bootstrap_parse(text, &b, &errs);
    for (unsigned i = 0; i < errs.n; i++)
        print_error("unexpected: %s\n", errs.lines[i]);
    assert_int_equal(rc, 0);
    xlb_errors_free(&errs);
    xlb_bootstrap_free(&b);
}

static void the_issue_example_is_rejected(void **state)
{
    (void)state;
    /* Both were silently defaults before: 1 worker and an L4 VIP. */
    expect_errors("{\"xlb\": {\"wrokers_typo\": 2, \"ports\": [" PORT_OK "], \"vips\": "
                  "[{\"address\": \"198.18.0.100\", \"port\": 80, \"cluster\": \"c\", "
                  "\"l7mode\": \"stream\"}]}}",
                  "xlb.wrokers_typo: unknown key; did you mean \"workers\"?",
                  "xlb.vips[0].l7mode: unknown key; did you mean \"l7_mode\"?", NULL);
}

static void section_keys_are_checked(void **state)
{
    (void)state;
    expect_errors(DOC(", \"worker\": 2"), "xlb.worker: unknown key; did you mean \"workers\"?",
                  NULL);
    expect_errors(DOC(", \"mbuf_pool\": 4095"),
                  "xlb.mbuf_pool: unknown key; did you mean \"mbuf_pool_size\"?", NULL);
    expect_errors(DOC(", \"tcp_mss_clmap\": \"off\""),
                  "xlb.tcp_mss_clmap: unknown key; did you mean \"tcp_mss_clamp\"?", NULL);
    expect_errors(DOC(", \"metrics_max_serie\": 100"),
                  "xlb.metrics_max_serie: unknown key; did you mean \"metrics_max_series\"?", NULL);
    expect_errors(DOC(", \"snats\": []"), "xlb.snats: unknown key; did you mean \"snat\"?", NULL);
    expect_errors(DOC(", \"vip\": []"), "xlb.vip: unknown key; did you mean \"vips\"?", NULL);
    /* A value of any type, even null, is still a key the file gives. */
    expect_errors(DOC(", \"colour\": null"), "xlb.colour: unknown key", NULL);
}

static void port_keys_are_checked(void **state)
{
    (void)state;
    expect_errors("{\"xlb\": {\"ports\": [" PORT_OK ", {\"name\": \"p1\", \"addresses\": "
                  "[\"198.18.1.10/24\"], \"mut\": 1450, \"gateways\": \"198.18.1.1\"}]}}",
                  "xlb.ports[1].mut: unknown key; did you mean \"mtu\"?",
                  "xlb.ports[1].gateways: unknown key; did you mean \"gateway\"?", NULL);
    /* A misspelt required key: the typo and the missing key, in that order. */
    expect_errors("{\"xlb\": {\"ports\": [{\"name\": \"p0\", \"address\": [\"198.18.0.10/24\"]}]}}",
                  "xlb.ports[0].address: unknown key; did you mean \"addresses\"?",
                  "xlb.ports[0].addresses: is required", NULL);
}

static void vip_keys_are_checked(void **state)
{
    (void)state;
    expect_errors(DOC(", \"vips\": [" VIP_OK ", {\"address\": \"198.18.0.101\", \"port\": 80, "
                      "\"tagret\": \"xds:///s\"}]"),
                  "xlb.vips[1].tagret: unknown key; did you mean \"target\"?",
                  "xlb.vips[1]: needs exactly one of \"target\" (L7) or \"cluster\" (L4)", NULL);
    expect_errors(DOC(", \"vips\": [{\"adress\": \"198.18.0.101\", \"prot\": 80, \"cluster\": "
                      "\"c\"}]"),
                  "xlb.vips[0].adress: unknown key; did you mean \"address\"?",
                  "xlb.vips[0].prot: unknown key; did you mean \"port\"?",
                  "xlb.vips[0].address: is required", "xlb.vips[0].port: is required", NULL);
}

/* "l7_mode" picks the L7 engine of a VIP with a target; anywhere else it is an error. */
static void l7_mode_is_checked(void **state)
{
    (void)state;
    expect_valid(DOC(", \"vips\": [{\"address\": \"198.18.0.101\", \"port\": 80, "
                     "\"target\": \"xds:///s\", \"l7_mode\": \"stream\"}]"));
    expect_valid(DOC(", \"vips\": [{\"address\": \"198.18.0.101\", \"port\": 80, "
                     "\"target\": \"xds:///s\", \"l7_mode\": \"splice\"}]"));
    expect_errors(DOC(", \"vips\": [{\"address\": \"198.18.0.101\", \"port\": 80, "
                      "\"target\": \"xds:///s\", \"l7_mode\": \"streams\"}]"),
                  "xlb.vips[0].l7_mode: must be \"splice\" or \"stream\"", NULL);
    expect_errors(DOC(", \"vips\": [{\"address\": \"198.18.0.101\", \"port\": 80, "
                      "\"cluster\": \"c\", \"l7_mode\": \"stream\"}]"),
                  "xlb.vips[0]: \"l7_mode\" is for L7 VIPs (with a \"target\")", NULL);
}

static void static_resources_keys_are_checked(void **state)
{
    (void)state;
    expect_errors(DOC(", \"static_resources\": {\"cluster\": [], \"secrets\": []}"),
                  "xlb.static_resources.cluster: unknown key; did you mean \"clusters\"?",
                  "xlb.static_resources.secrets: unknown key", NULL);
    /* The resources themselves are proto3 JSON: their fields are the xDS layer's to judge. */
    expect_valid(DOC(", \"static_resources\": {\"clusters\": [{\"name\": \"c\", "
                     "\"future_field\": 1}]}"));
}

static void every_unknown_key_is_reported(void **state)
{
    (void)state;
    expect_errors("{\"xlb\": {\"wrokers\": 2, \"ports\": [{\"name\": \"p0\", \"addresses\": "
                  "[\"198.18.0.10/24\"], \"mtu\": 1, \"nmae\": \"x\"}], \"vips\": [{\"address\": "
                  "\"198.18.0.100\", \"port\": 80, \"cluster\": \"c\", \"weight\": 1}], "
                  "\"static_resources\": {\"listener\": []}, \"workers\": 0}}",
                  "xlb.wrokers: unknown key; did you mean \"workers\"?",
                  "xlb.workers: must be 1..64",
                  "xlb.ports[0].nmae: unknown key; did you mean \"name\"?",
                  "xlb.ports[0].mtu: must be 576..2026", "xlb.vips[0].weight: unknown key",
                  "xlb.static_resources.listener: unknown key; did you mean \"listeners\"?", NULL);
}

static void repeated_keys_are_rejected(void **state)
{
    (void)state;
    expect_errors(DOC(", \"workers\": 1, \"workers\": 2"), "xlb.workers: is given more than once",
                  NULL);
    expect_errors(DOC(", \"vips\": [{\"address\": \"198.18.0.100\", \"port\": 80, \"port\": 81, "
                      "\"port\": 82, \"cluster\": \"c\"}]"),
                  "xlb.vips[0].port: is given more than once", NULL);
}

static void odd_keys_are_quoted_in_the_path(void **state)
{
    (void)state;
    expect_errors(DOC(", \"\": 1"), "xlb[\"\"]: unknown key", NULL);
    expect_errors(DOC(", \"a \\\"b\\\"\\n\": 1"), "xlb[\"a \\\"b\\\"\\u000a\"]: unknown key", NULL);
    expect_errors(DOC(", \"flows per worker\": 1"),
                  "xlb[\"flows per worker\"]: unknown key; did you mean \"flows_per_worker\"?",
                  NULL);
    char path[XLB_PATH_MAX];
    xlb_config_member_path(path, "xlb.vips[0]",
                           "a very long key with spaces that goes on and on and on and on");
    assert_string_equal(path, "xlb.vips[0][\"a very long key with spaces that...\"]");
}

static void grpc_part_ignores_unknown_fields(void **state)
{
    (void)state;
    expect_valid("{\"certificate_providers\": {}, \"server_listener_resource_name_template\": "
                 "\"x\", \"xds_servers\": [{\"server_uri\": \"xds.example:443\", "
                 "\"channel_creds\": [{\"type\": \"insecure\", \"extra\": 1}], \"future\": 1}], "
                 "\"node\": {\"id\": \"n\", \"user_agent_name\": \"u\", \"locality\": "
                 "{\"zone\": \"z\", \"other\": 1}}, \"xlb\": {\"ports\": [" PORT_OK "]}}");
}

static void edit_distance_counts_typos(void **state)
{
    (void)state;
    assert_int_equal(xlb_config_edit_distance("target", "target"), 0);
    assert_int_equal(xlb_config_edit_distance("tagret", "target"), 1); /* a swap */
    assert_int_equal(xlb_config_edit_distance("targe", "target"), 1);
    assert_int_equal(xlb_config_edit_distance("targets", "target"), 1);
    assert_int_equal(xlb_config_edit_distance("tarxet", "target"), 1);
    assert_int_equal(xlb_config_edit_distance("Flows-Per-Worker", "flows_per_worker"), 0);
    assert_int_equal(xlb_config_edit_distance("", "eal"), 3);
    assert_int_equal(xlb_config_edit_distance("kitten", "sitting"), 3);
    char long_word[80];
    memset(long_word, 'a', sizeof(long_word) - 1);
    long_word[sizeof(long_word) - 1] = '\0';
    assert_int_equal(xlb_config_edit_distance(long_word, "eal"), UINT32_MAX);
}

static void suggestions_are_near_or_none(void **state)
{
    (void)state;
    const struct xlb_config_object *section = &xlb_bootstrap_section_object;
    const struct xlb_config_object *vip = &xlb_bootstrap_vip_object;
    /* Close: one or two edits, or a known key with something after it. */
    assert_string_equal(xlb_config_nearest_key(vip, "tagret"), "target");
    assert_string_equal(xlb_config_nearest_key(vip, "clutser"), "cluster");
    assert_string_equal(xlb_config_nearest_key(vip, "PORT"), "port");
    assert_string_equal(xlb_config_nearest_key(vip, "port_range"), "port");
    assert_string_equal(xlb_config_nearest_key(section, "workres"), "workers");
    assert_string_equal(xlb_config_nearest_key(section, "l7_connection_per_worker"),
                        "l7_connections_per_worker");
    assert_string_equal(xlb_config_nearest_key(section, "aggregate_cluster_backwards_compat"),
                        "aggregate_cluster_backward_compat");
    assert_string_equal(xlb_config_nearest_key(section, "ports"), "ports");
    assert_string_equal(xlb_config_nearest_key(vip, "l4mode"), "l4_mode");
    /* Far: no suggestion rather than a wrong one. */
    assert_null(xlb_config_nearest_key(vip, "mode"));
    assert_null(xlb_config_nearest_key(vip, "backend"));
    assert_null(xlb_config_nearest_key(vip, "prt_x"));
    assert_null(xlb_config_nearest_key(section, "threads"));
    assert_string_equal(xlb_config_nearest_key(section, "ea"), "eal");
    assert_null(xlb_config_nearest_key(section, ""));
    assert_null(xlb_config_nearest_key(section, "listen"));
    /* Short keys take one edit, not two. */
    assert_string_equal(xlb_config_nearest_key(section, "snta"), "snat");
    assert_null(xlb_config_nearest_key(section, "sn"));
}

/* The JSON tools get from xlbd --check --json: path, message, suggestion (or null). */
static void errors_as_json(void **state)
{
    (void)state;
    struct xlb_bootstrap b;
    struct xlb_errors errs = {0};
    assert_int_equal(xlb_bootstrap_parse(DOC(", \"vips\": [{\"address\": \"198.18.0.100\", "
                                             "\"port\": 0, \"cluster\": \"c\", \"tagret\": 1, "
                                             "\"l7mode\": 1}]"),
                                         &b, &errs),
                     -1);
    /* Another layer may prefix a line with where it came from: split at its first ": ". */
    xlb_errors_add(&errs, "cluster \"c\"", "type: STATIC is not supported");
    char *rewritten = strdup("xlb.static_resources.clusters[0]: cluster \"c\": type: STATIC is "
                             "not supported");
    free(errs.lines[errs.n - 1]);
    errs.lines[errs.n - 1] = rewritten;

    cJSON *json = xlb_errors_json(&errs);
    assert_non_null(json);
    char *text = cJSON_PrintUnformatted(json);
    assert_string_equal(
        text, "[{\"path\":\"xlb.vips[0].tagret\",\"message\":\"unknown key\",\"suggestion\":"
              "\"target\"},{\"path\":\"xlb.vips[0].l7mode\",\"message\":\"unknown key\","
              "\"suggestion\":\"l7_mode\"},{\"path\":\"xlb.vips[0].port\",\"message\":\"must be "
              "1..65535\",\"suggestion\":null},{\"path\":\"xlb.static_resources.clusters[0]\","
              "\"message\":\"cluster \\\"c\\\": type: STATIC is not supported\",\"suggestion\":"
              "null}]");
    assert_string_equal(errs.lines[0], "xlb.vips[0].tagret: unknown key; did you mean \"target\"?");
    free(text);
    cJSON_Delete(json);

    struct xlb_errors none = {0};
    json = xlb_errors_json(&none);
    assert_true(cJSON_IsArray(json));
    assert_int_equal(cJSON_GetArraySize(json), 0);
    cJSON_Delete(json);
    xlb_errors_free(&errs);
    xlb_bootstrap_free(&b);
}

/* More unknown keys than lines: counted, and the first 64 shown. */
static void many_unknown_keys_are_counted(void **state)
{
    (void)state;
    size_t cap = 100 * 16 + 256;
    char *text = malloc(cap);
    size_t n = (size_t)snprintf(text, cap, "{\"xlb\": {\"ports\": [" PORT_OK "]");
    for (int i = 0; i < 100; i++)
        n += (size_t)snprintf(text + n, cap - n, ", \"k%d\": 1", i);
    snprintf(text + n, cap - n, "}}");
    struct xlb_bootstrap b;
    struct xlb_errors errs = {0};
    assert_int_equal(xlb_bootstrap_parse(text, &b, &errs), -1);
    assert_int_equal(errs.n, XLB_ERRORS_MAX);
    assert_int_equal(errs.dropped, 100 - XLB_ERRORS_MAX);
    assert_string_equal(errs.lines[0], "xlb.k0: unknown key");
    free(text);
    xlb_errors_free(&errs);
    xlb_bootstrap_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_issue_example_is_rejected),
        cmocka_unit_test(section_keys_are_checked),
        cmocka_unit_test(port_keys_are_checked),
        cmocka_unit_test(vip_keys_are_checked),
        cmocka_unit_test(l7_mode_is_checked),
        cmocka_unit_test(static_resources_keys_are_checked),
        cmocka_unit_test(every_unknown_key_is_reported),
        cmocka_unit_test(repeated_keys_are_rejected),
        cmocka_unit_test(odd_keys_are_quoted_in_the_path),
        cmocka_unit_test(grpc_part_ignores_unknown_fields),
        cmocka_unit_test(edit_distance_counts_typos),
        cmocka_unit_test(suggestions_are_near_or_none),
        cmocka_unit_test(errors_as_json),
        cmocka_unit_test(many_unknown_keys_are_counted),
    };
    return cmocka_run_group_tests_name("config_keys", tests, NULL, NULL);
}
