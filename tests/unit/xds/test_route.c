/* RDS validation (control/xds/route_config.h): one test per rule. */
#include "route_test.h"

#include <stdio.h>
#include <string.h>

/* The only route matches every path and has a route action with these fields. */
#define ACTION(fields) RC(R("{\"prefix\":\"\"}", "\"route\":{" fields "}"))
/* The same, to cluster "c" with these hash policies. */
#define HASHING(policies) ACTION("\"cluster\":\"c\",\"hash_policy\":[" policies "]")

static void valid_with_defaults(void **state)
{
    struct xlb_route_config cfg;
    rt_valid("{\"name\":\"r\",\"virtual_hosts\":[{\"name\":\"vh\",\"domains\":[\"a.example\","
             "\"*.example\",\"api.*\",\"*\"],\"routes\":[{\"name\":\"first\",\"match\":{\"prefix\":"
             "\"\"},\"route\":{\"cluster\":\"c\"}}]}]}",
             &cfg);
    assert_string_equal(cfg.name, "r");
    const struct xlb_virtual_host *vh = &cfg.vhosts[0];
    assert_string_equal(vh->name, "vh");
    assert_int_equal(vh->n_domains, 4);
    assert_int_equal(vh->domains[0].type, XLB_DOMAIN_EXACT);
    assert_int_equal(vh->domains[1].type, XLB_DOMAIN_SUFFIX);
    assert_string_equal(vh->domains[1].pattern, "*.example");
    assert_int_equal(vh->domains[2].type, XLB_DOMAIN_PREFIX);
    assert_int_equal(vh->domains[3].type, XLB_DOMAIN_UNIVERSE);
    assert_int_equal(vh->overrides.n, 0);
    const struct xlb_route *r = &vh->routes[0];
    assert_string_equal(r->name, "first");
    assert_int_equal(r->match.path_type, XLB_PATH_PREFIX);
    assert_string_equal(r->match.path, "");
    assert_true(r->match.case_sensitive);
    assert_int_equal(r->match.n_headers, 0);
    assert_false(r->match.has_fraction);
    assert_int_equal(r->action, XLB_ROUTE_CLUSTER);
    assert_string_equal(r->cluster, "c");
    assert_int_equal(r->n_hash_policies, 0);
    assert_false(r->has_max_stream_duration);
    assert_int_equal(r->overrides.n, 0);
    xlb_route_config_free(&cfg);
}

static void domains_required(void **state)
{
    rt_expect_nack("{\"name\":\"r\",\"virtual_hosts\":[{\"name\":\"vh\"}]}",
                   "route_configuration \"r\": virtual_hosts[0].domains: must be non-empty");
}

static void domain_wildcard_in_middle(void **state)
{
    rt_expect_nack("{\"name\":\"r\",\"virtual_hosts\":[{\"domains\":[\"ok\",\"a*b\"]}]}",
                   "route_configuration \"r\": virtual_hosts[0].domains[1]: invalid domain pattern "
                   "\"a*b\"");
}

static void domain_two_wildcards(void **state)
{
    rt_expect_nack("{\"name\":\"r\",\"virtual_hosts\":[{\"domains\":[\"*.a.*\"]}]}",
                   "route_configuration \"r\": virtual_hosts[0].domains[0]: invalid domain pattern "
                   "\"*.a.*\"");
}

static void domain_empty(void **state)
{
    rt_expect_nack("{\"name\":\"r\",\"virtual_hosts\":[{\"domains\":[\"\"]}]}",
                   "route_configuration \"r\": virtual_hosts[0].domains[0]: invalid domain pattern "
                   "\"\"");
}

static void match_required(void **state)
{
    rt_expect_nack(RC("{" TO_C "}"), "route_configuration \"r\": virtual_hosts[0].routes[0].match: "
                                     "field not present");
}

static void path_exact_and_case(void **state)
{
    struct xlb_route_config cfg;
    const struct xlb_route *r =
        rt_one_route(RC(R("{\"path\":\"/pkg.Svc/Method\",\"case_sensitive\":false}", TO_C)), &cfg);
    assert_int_equal(r->match.path_type, XLB_PATH_EXACT);
    assert_string_equal(r->match.path, "/pkg.Svc/Method");
    assert_false(r->match.case_sensitive);
    xlb_route_config_free(&cfg);
}

static void unusable_paths_ignore_route(void **state)
{
    struct xlb_route_config cfg;
    rt_valid(
        RC(R("{\"prefix\":\"abc\"}", TO_C) "," R("{\"prefix\":\"//x\"}", TO_C) "," R(
            "{\"prefix\":\"/a/b/c\"}",
            TO_C) "," R("{\"path\":\"\"}",
                        TO_C) "," R("{\"path\":\"/svc\"}",
                                    TO_C) "," R("{\"path\":\"/svc/\"}",
                                                TO_C) "," R("{\"path\":\"/a/b/c\"}",
                                                            TO_C) "," R("{\"prefix\":\"/svc/\"}",
                                                                        TO_C)),
        &cfg);
    assert_int_equal(cfg.vhosts[0].n_routes, 1);
    assert_string_equal(cfg.vhosts[0].routes[0].match.path, "/svc/");
    xlb_route_config_free(&cfg);
}

static void query_parameters_ignore_route(void **state)
{
    struct xlb_route_config cfg;
    rt_valid(RC(R("{\"prefix\":\"\",\"query_parameters\":[{}]}", TO_C)), &cfg);
    assert_int_equal(cfg.vhosts[0].n_routes, 0);
    xlb_route_config_free(&cfg);
}

static void safe_regex_path(void **state)
{
    struct xlb_route_config cfg;
    const struct xlb_route *r =
        rt_one_route(RC(R("{\"safe_regex\":{\"regex\":\"/svc/.*\"}}", TO_C)), &cfg);
    assert_int_equal(r->match.path_type, XLB_PATH_REGEX);
    assert_string_equal(r->match.path, "/svc/.*");
    xlb_route_config_free(&cfg);
}

static void safe_regex_invalid(void **state)
{
    rt_expect_nack(
        "{\"name\":\"r\",\"virtual_hosts\":[{\"domains\":[\"a\"]},{\"domains\":[\"*\"],"
        "\"routes\":[{\"match\":{\"safe_regex\":{\"regex\":\"(\"}}," TO_C "}]}]}",
        "route_configuration \"r\": virtual_hosts[1].routes[0].match.safe_regex: invalid "
        "regex \"(\" (missing closing parenthesis)");
}

static void safe_regex_backreference(void **state)
{
    rt_expect_nack(
        RC(R("{\"safe_regex\":{\"regex\":\"(a)\\\\1\"}}", TO_C)),
        "route_configuration \"r\": virtual_hosts[0].routes[0].match.safe_regex: invalid "
        "regex \"(a)\\1\" (backreferences are not supported)");
}

static void safe_regex_lookbehind(void **state)
{
    rt_expect_nack(
        RC(R("{\"safe_regex\":{\"regex\":\"(?<=a)b\"}}", TO_C)),
        "route_configuration \"r\": virtual_hosts[0].routes[0].match.safe_regex: invalid "
        "regex \"(?<=a)b\" (lookbehind assertions are not supported)");
}

/* What PCRE2 compiles but RE2 has not: each NACKed as gRPC would, with what is missing. */
static void safe_regex_pcre2_only_syntax(void **state)
{
    static const char *const cases[][2] = {
        {"a(?=b)", "lookahead assertions are not supported"},
        {"a(?!b)", "lookahead assertions are not supported"},
        {"(?>ab)c", "atomic groups are not supported"},
        {"a*+b", "possessive quantifiers are not supported"},
        {"a{2}+", "possessive quantifiers are not supported"},
        {"(a|(?R))", "recursion and subroutine calls are not supported"},
        {"(a)(?1)", "recursion and subroutine calls are not supported"},
        {"(?(?=a)ab|cd)", "conditional groups are not supported"},
        {"ab\\\\Kc", "\\K is not supported"},
        {"a\\\\Z", "\\Z is not supported (RE2 has \\z)"},
        {"(?x)a b", "flags other than i, m, s and U are not supported"},
        {"(?J:a)", "flags other than i, m, s and U are not supported"},
        {"a\\\\hb", "\\h and \\H are not supported"},
        {"\\\\cA", "\\c (control characters) is not supported"},
        {"(*UTF)a", "PCRE2 verbs and pattern options (*...) are not supported"},
        {"a(*SKIP)b", "PCRE2 verbs and pattern options (*...) are not supported"},
        {"a{1001}", "repeat counts over 1000 are not supported"},
        {"a{2,1001}", "repeat counts over 1000 are not supported"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char doc[512], want[512];
        snprintf(doc, sizeof(doc), RC(R("{\"safe_regex\":{\"regex\":\"%s\"}}", TO_C)), cases[i][0]);
        /* The pattern as the error quotes it: JSON's \\ is one backslash. */
        char shown[64];
        size_t k = 0;
        for (const char *c = cases[i][0]; *c != '\0' && k + 1 < sizeof(shown); c++)
            if (!(c[0] == '\\' && c[1] == '\\'))
                shown[k++] = *c;
        shown[k] = '\0';
        snprintf(want, sizeof(want),
                 "route_configuration \"r\": virtual_hosts[0].routes[0].match.safe_regex: invalid "
                 "regex \"%s\" (%s)",
                 shown, cases[i][1]);
        rt_expect_nack(doc, want);
    }
}

/* RE2 syntax that looks like those: lazy quantifiers, classes and quotes holding the bytes. */
static void safe_regex_re2_lookalikes_accepted(void **state)
{
    static const char *const ok[] = {
        "a+?b",
        "a*?",
        "[(?=]x",
        "[a+]+",
        "\\\\Q(?=a++\\\\E",
        "a{2,3}?",
        "(?i)abc",
        "(?P<n>a)",
        "x\\\\z",
        "[[:alpha:]]+",
        ".*\\\\bv1\\\\b.*",
        "\\\\Aa\\\\B",
        "(?i:a)(?s-m)b",
        "a{1000}",
        "a{1,1000}?",
        "[{1001}]",
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        char doc[512];
        snprintf(doc, sizeof(doc), RC(R("{\"safe_regex\":{\"regex\":\"%s\"}}", TO_C)), ok[i]);
        struct xlb_route_config cfg;
        rt_one_route(doc, &cfg);
        xlb_route_config_free(&cfg);
    }
}

static void other_path_specifier(void **state)
{
    rt_expect_nack(RC(R("{\"connect_matcher\":{}}", TO_C)),
                   "route_configuration \"r\": virtual_hosts[0].routes[0].match: invalid path "
                   "specifier");
}

static void header_matchers(void **state)
{
    struct xlb_route_config cfg;
    const struct xlb_route *r = rt_one_route(
        RC(R("{\"prefix\":\"\",\"headers\":["
             "{\"name\":\"a\",\"exact_match\":\"x\",\"invert_match\":true},"
             "{\"name\":\"b\",\"safe_regex_match\":{\"regex\":\"v[0-9]+\"}},"
             "{\"name\":\"c\",\"range_match\":{\"start\":-5,\"end\":10}},"
             "{\"name\":\"d\",\"present_match\":false},"
             "{\"name\":\"e\",\"prefix_match\":\"pre\"},"
             "{\"name\":\"f\",\"suffix_match\":\"suf\"},"
             "{\"name\":\"g\",\"contains_match\":\"mid\"},"
             "{\"name\":\"h\",\"string_match\":{\"suffix\":\"S\",\"ignore_case\":true}},"
             "{\"name\":\"i\",\"string_match\":{\"safe_regex\":{\"regex\":\"z\"},"
             "\"ignore_case\":true}}]}",
             TO_C)),
        &cfg);
    const struct xlb_header_matcher *h = r->match.headers;
    assert_int_equal(r->match.n_headers, 9);
    assert_string_equal(h[0].name, "a");
    assert_int_equal(h[0].type, XLB_HEADER_EXACT);
    assert_string_equal(h[0].value, "x");
    assert_true(h[0].invert);
    assert_int_equal(h[1].type, XLB_HEADER_REGEX);
    assert_string_equal(h[1].value, "v[0-9]+");
    assert_false(h[1].invert);
    assert_int_equal(h[2].type, XLB_HEADER_RANGE);
    assert_int_equal(h[2].range_start, -5);
    assert_int_equal(h[2].range_end, 10);
    assert_int_equal(h[3].type, XLB_HEADER_PRESENT);
    assert_false(h[3].present);
    assert_int_equal(h[4].type, XLB_HEADER_PREFIX);
    assert_string_equal(h[4].value, "pre");
    assert_int_equal(h[5].type, XLB_HEADER_SUFFIX);
    assert_int_equal(h[6].type, XLB_HEADER_CONTAINS);
    assert_string_equal(h[6].value, "mid");
    assert_int_equal(h[7].type, XLB_HEADER_SUFFIX);
    assert_string_equal(h[7].value, "S");
    assert_true(h[7].ignore_case);
    assert_int_equal(h[8].type, XLB_HEADER_REGEX);
    assert_false(h[8].ignore_case); /* gRPC's regexes ignore ignore_case */
    xlb_route_config_free(&cfg);
}

static void header_regex_invalid(void **state)
{
    rt_expect_nack(RC(R("{\"prefix\":\"\",\"headers\":[{\"name\":\"a\",\"safe_regex_match\":"
                        "{\"regex\":\"[a\"}}]}",
                        TO_C)),
                   "route_configuration \"r\": virtual_hosts[0].routes[0].match.headers[0]."
                   "safe_regex_match: invalid regex \"[a\" (missing terminating ] for character "
                   "class)");
}

static void header_string_match_regex_invalid(void **state)
{
    rt_expect_nack(RC(R("{\"prefix\":\"\",\"headers\":[{\"name\":\"a\",\"string_match\":"
                        "{\"safe_regex\":{\"regex\":\"*\"}}}]}",
                        TO_C)),
                   "route_configuration \"r\": virtual_hosts[0].routes[0].match.headers[0]."
                   "string_match.safe_regex: invalid regex \"*\" (quantifier does not follow a "
                   "repeatable item)");
}

static void header_range_end_before_start(void **state)
{
    rt_expect_nack(RC(R("{\"prefix\":\"\",\"headers\":[{\"name\":\"a\",\"range_match\":"
                        "{\"start\":5,\"end\":4}}]}",
                        TO_C)),
                   "route_configuration \"r\": virtual_hosts[0].routes[0].match.headers[0]."
                   "range_match: end 4 is smaller than start 5");
}

static void header_matcher_kind_required(void **state)
{
    rt_expect_nack(
        RC(R("{\"prefix\":\"\",\"headers\":[{\"name\":\"a\"}]}", TO_C)),
        "route_configuration \"r\": virtual_hosts[0].routes[0].match.headers[0]: invalid "
        "header matcher");
}

static void header_string_match_pattern_required(void **state)
{
    rt_expect_nack(RC(R("{\"prefix\":\"\",\"headers\":[{\"name\":\"a\",\"string_match\":{"
                        "\"ignore_case\":true}}]}",
                        TO_C)),
                   "route_configuration \"r\": virtual_hosts[0].routes[0].match.headers[0]."
                   "string_match: invalid string matcher");
}

static void runtime_fraction(void **state)
{
    struct xlb_route_config cfg;
    const struct xlb_route *r = rt_one_route(
        RC(R("{\"prefix\":\"\",\"runtime_fraction\":{\"default_value\":{\"numerator\":25,"
             "\"denominator\":\"TEN_THOUSAND\"}}}",
             TO_C)),
        &cfg);
    assert_true(r->match.has_fraction);
    assert_int_equal(r->match.fraction_per_million, 2500);
    xlb_route_config_free(&cfg);
}

static void runtime_fraction_bad_denominator(void **state)
{
    rt_expect_nack(RC(R("{\"prefix\":\"\",\"runtime_fraction\":{\"default_value\":{\"numerator\":1,"
                        "\"denominator\":9}}}",
                        TO_C)),
                   "route_configuration \"r\": virtual_hosts[0].routes[0].match.runtime_fraction."
                   "default_value.denominator: unknown denominator type 9");
}

static void cluster_name_required(void **state)
{
    rt_expect_nack(ACTION("\"cluster\":\"\""),
                   "route_configuration \"r\": virtual_hosts[0].routes[0].route.cluster: must be "
                   "non-empty");
}

static void weighted_clusters(void **state)
{
    struct xlb_route_config cfg;
    const struct xlb_route *r = rt_one_route(
        ACTION("\"weighted_clusters\":{\"total_weight\":7,\"clusters\":[{\"name\":\"a\",\"weight\":"
               "3},{\"name\":\"z\",\"weight\":0},{\"name\":\"b\",\"weight\":4294967292}]}"),
        &cfg);
    assert_int_equal(r->action, XLB_ROUTE_WEIGHTED_CLUSTERS);
    assert_int_equal(r->n_weighted, 2);
    assert_string_equal(r->weighted[0].name, "a");
    assert_int_equal(r->weighted[0].weight, 3);
    assert_string_equal(r->weighted[1].name, "b");
    assert_int_equal(r->total_weight, 4294967295ull);
    xlb_route_config_free(&cfg);
}

static void weighted_sum_exceeds_uint32(void **state)
{
    rt_expect_nack(ACTION("\"weighted_clusters\":{\"clusters\":[{\"name\":\"a\",\"weight\":"
                          "4294967295},{\"name\":\"b\",\"weight\":1}]}"),
                   "route_configuration \"r\": virtual_hosts[0].routes[0].route.weighted_clusters: "
                   "sum of cluster weights 4294967296 exceeds uint32 max");
}

static void weighted_all_zero(void **state)
{
    rt_expect_nack(ACTION("\"weighted_clusters\":{\"clusters\":[{\"name\":\"a\",\"weight\":0}]}"),
                   "route_configuration \"r\": virtual_hosts[0].routes[0].route.weighted_clusters: "
                   "no valid clusters specified");
}

static void weighted_name_required(void **state)
{
    rt_expect_nack(ACTION("\"weighted_clusters\":{\"clusters\":[{\"weight\":1}]}"),
                   "route_configuration \"r\": virtual_hosts[0].routes[0].route.weighted_clusters."
                   "clusters[0].name: must be non-empty");
}

static void weighted_weight_required(void **state)
{
    rt_expect_nack(ACTION("\"weighted_clusters\":{\"clusters\":[{\"name\":\"a\"}]}"),
                   "route_configuration \"r\": virtual_hosts[0].routes[0].route.weighted_clusters."
                   "clusters[0].weight: field not present");
}

static void cluster_header_ignores_route(void **state)
{
    struct xlb_route_config cfg;
    rt_valid(ACTION("\"cluster_header\":\"x-cluster\""), &cfg);
    assert_int_equal(cfg.vhosts[0].n_routes, 0);
    xlb_route_config_free(&cfg);
}

static void cluster_specifier_plugin_unknown(void **state)
{
    rt_expect_nack(ACTION("\"cluster_specifier_plugin\":\"rls\""),
                   "route_configuration \"r\": virtual_hosts[0].routes[0].route."
                   "cluster_specifier_plugin: unknown cluster specifier plugin name \"rls\"");
}

static void cluster_specifier_plugin_name_required(void **state)
{
    rt_expect_nack(ACTION("\"cluster_specifier_plugin\":\"\""),
                   "route_configuration \"r\": virtual_hosts[0].routes[0].route."
                   "cluster_specifier_plugin: must be non-empty");
}

/* cluster_specifier_plugins: xlb implements no plugin type, RLS's included. */
#define RLS_CONFIG                                                                                 \
    "\"typed_config\":{\"@type\":\"type.googleapis.com/xds.type.v3.TypedStruct\","                 \
    "\"type_url\":\"type.googleapis.com/grpc.lookup.v1.RouteLookupClusterSpecifier\"}"
#define PLUGINS(list) "\"cluster_specifier_plugins\":[" list "],"
#define RC_PLUGINS(plugins, routes)                                                                \
    "{\"name\":\"r\"," plugins "\"virtual_hosts\":[{\"name\":\"vh\",\"domains\":[\"*\"],"          \
    "\"routes\":[" routes "]}]}"
#define TO_RLS "\"route\":{\"cluster_specifier_plugin\":\"rls\"}"

static void optional_unsupported_plugin_ignores_its_routes(void **state)
{
    struct xlb_route_config cfg;
    rt_valid(RC_PLUGINS(
                 PLUGINS("{\"extension\":{\"name\":\"rls\"," RLS_CONFIG "},\"is_optional\":true}"),
                 R("{\"prefix\":\"/a/\"}", TO_RLS) "," R("{\"prefix\":\"\"}", TO_C)),
             &cfg);
    assert_int_equal(cfg.vhosts[0].n_routes, 1);
    assert_string_equal(cfg.vhosts[0].routes[0].cluster, "c");
    xlb_route_config_free(&cfg);
}

static void required_unsupported_plugin_rejected(void **state)
{
    rt_expect_nack(RC_PLUGINS(PLUGINS("{\"extension\":{\"name\":\"rls\"," RLS_CONFIG "}}"),
                              R("{\"prefix\":\"\"}", TO_RLS)),
                   "route_configuration \"r\": cluster_specifier_plugins[0].extension."
                   "typed_config: unsupported ClusterSpecifierPlugin type");
}

static void plugin_extension_required(void **state)
{
    rt_expect_nack(RC_PLUGINS(PLUGINS("{\"is_optional\":true}"), ANY_ROUTE),
                   "route_configuration \"r\": cluster_specifier_plugins[0].extension: field "
                   "not present");
}

static void plugin_typed_config_required(void **state)
{
    rt_expect_nack(
        RC_PLUGINS(PLUGINS("{\"extension\":{\"name\":\"rls\"},\"is_optional\":true}"), ANY_ROUTE),
        "route_configuration \"r\": cluster_specifier_plugins[0].extension."
        "typed_config: field not present");
}

static void plugin_names_unique(void **state)
{
    rt_expect_nack(RC_PLUGINS(PLUGINS("{\"extension\":{\"name\":\"rls\"," RLS_CONFIG
                                      "},\"is_optional\":true},{\"extension\":{\"name\":"
                                      "\"rls\"," RLS_CONFIG "},\"is_optional\":true}"),
                              ANY_ROUTE),
                   "route_configuration \"r\": cluster_specifier_plugins[1].extension.name: "
                   "duplicate name \"rls\"");
}

static void non_forwarding_and_unsupported_actions(void **state)
{
    struct xlb_route_config cfg;
    rt_valid(
        RC(R("{\"prefix\":\"\"}", "\"non_forwarding_action\":{}") "," R(
            "{\"prefix\":\"\"}",
            "\"redirect\":{}") "," R("{\"prefix\":\"\"}",
                                     "\"direct_response\":{}") ","
                                                               "{\"match\":{\"prefix\":\"\"}}"),
        &cfg);
    assert_int_equal(cfg.vhosts[0].n_routes, 4);
    assert_int_equal(cfg.vhosts[0].routes[0].action, XLB_ROUTE_NON_FORWARDING);
    assert_int_equal(cfg.vhosts[0].routes[1].action, XLB_ROUTE_UNSUPPORTED);
    assert_int_equal(cfg.vhosts[0].routes[2].action, XLB_ROUTE_UNSUPPORTED);
    assert_int_equal(cfg.vhosts[0].routes[3].action, XLB_ROUTE_UNSUPPORTED);
    xlb_route_config_free(&cfg);
}

static void hash_policies(void **state)
{
    struct xlb_route_config cfg;
    const struct xlb_route *r = rt_one_route(
        HASHING("{\"header\":{\"header_name\":\"x-user\",\"regex_rewrite\":{\"pattern\":{"
                "\"regex\":\"^u-(.*)$\"},\"substitution\":\"\\\\1\"}},\"terminal\":true},"
                "{\"cookie\":{\"name\":\"k\"}},"
                "{\"filter_state\":{\"key\":\"other\"}},"
                "{\"connection_properties\":{\"source_ip\":true}},"
                "{\"filter_state\":{\"key\":\"io.grpc.channel_id\"}},"
                "{\"header\":{\"header_name\":\"x-plain\"}}"),
        &cfg);
    assert_int_equal(r->n_hash_policies, 3);
    assert_int_equal(r->hash_policies[0].kind, XLB_HASH_HEADER);
    assert_true(r->hash_policies[0].terminal);
    assert_string_equal(r->hash_policies[0].header_name, "x-user");
    assert_string_equal(r->hash_policies[0].regex, "^u-(.*)$");
    assert_string_equal(r->hash_policies[0].substitution, "\\1");
    assert_int_equal(r->hash_policies[1].kind, XLB_HASH_CHANNEL_ID);
    assert_false(r->hash_policies[1].terminal);
    assert_string_equal(r->hash_policies[2].header_name, "x-plain");
    assert_null(r->hash_policies[2].regex);
    xlb_route_config_free(&cfg);
}

static void hash_header_name_required(void **state)
{
    rt_expect_nack(HASHING("{\"header\":{}}"),
                   "route_configuration \"r\": virtual_hosts[0].routes[0].route.hash_policy[0]."
                   "header.header_name: must be non-empty");
}

static void hash_regex_rewrite_pattern_required(void **state)
{
    rt_expect_nack(HASHING("{\"header\":{\"header_name\":\"h\",\"regex_rewrite\":{}}}"),
                   "route_configuration \"r\": virtual_hosts[0].routes[0].route.hash_policy[0]."
                   "header.regex_rewrite.pattern: field not present");
}

static void hash_regex_rewrite_regex_required(void **state)
{
    rt_expect_nack(
        HASHING("{\"header\":{\"header_name\":\"h\",\"regex_rewrite\":{\"pattern\":{}}}}"),
        "route_configuration \"r\": virtual_hosts[0].routes[0].route.hash_policy[0]."
        "header.regex_rewrite.pattern.regex: field not present");
}

static void hash_regex_rewrite_invalid(void **state)
{
    rt_expect_nack(HASHING("{\"header\":{\"header_name\":\"h\",\"regex_rewrite\":{\"pattern\":{"
                           "\"regex\":\"a)\"}}}}"),
                   "route_configuration \"r\": virtual_hosts[0].routes[0].route.hash_policy[0]."
                   "header.regex_rewrite.pattern.regex: invalid regex \"a)\" (unmatched closing "
                   "parenthesis)");
}

/* RE2 refuses a rewrite with "\\x" for x not a digit or '\\': NACKed, naming the place. */
static void hash_regex_rewrite_bad_substitution(void **state)
{
    rt_expect_nack(HASHING("{\"header\":{\"header_name\":\"h\",\"regex_rewrite\":{\"pattern\":{"
                           "\"regex\":\"(a)\"},\"substitution\":\"x\\\\n\"}}}"),
                   "route_configuration \"r\": virtual_hosts[0].routes[0].route.hash_policy[0]."
                   "header.regex_rewrite.substitution: invalid rewrite: '\\' must be followed by "
                   "a digit or '\\' (at offset 1)");
}

static void max_stream_duration_prefers_header_max(void **state)
{
    struct xlb_route_config cfg;
    const struct xlb_route *r =
        rt_one_route(ACTION("\"cluster\":\"c\",\"max_stream_duration\":{\"max_stream_duration\":"
                            "\"5s\",\"grpc_timeout_header_max\":\"2.25s\"}"),
                     &cfg);
    assert_true(r->has_max_stream_duration);
    assert_int_equal(r->max_stream_duration.seconds, 2);
    assert_int_equal(r->max_stream_duration.nanos, 250000000);
    xlb_route_config_free(&cfg);
}

static void max_stream_duration_plain(void **state)
{
    struct xlb_route_config cfg;
    const struct xlb_route *r = rt_one_route(
        ACTION("\"cluster\":\"c\",\"max_stream_duration\":{\"max_stream_duration\":\"5s\"}"), &cfg);
    assert_int_equal(r->max_stream_duration.seconds, 5);
    xlb_route_config_free(&cfg);
}

static void max_stream_duration_invalid(void **state)
{
    rt_expect_nack(
        ACTION("\"cluster\":\"c\",\"max_stream_duration\":{\"grpc_timeout_header_max\":\"-1s\"}"),
        "route_configuration \"r\": virtual_hosts[0].routes[0].route.max_stream_duration."
        "grpc_timeout_header_max.seconds: -1 is not in 0..315576000000");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(valid_with_defaults),
        cmocka_unit_test(domains_required),
        cmocka_unit_test(domain_wildcard_in_middle),
        cmocka_unit_test(domain_two_wildcards),
        cmocka_unit_test(domain_empty),
        cmocka_unit_test(match_required),
        cmocka_unit_test(path_exact_and_case),
        cmocka_unit_test(unusable_paths_ignore_route),
        cmocka_unit_test(query_parameters_ignore_route),
        cmocka_unit_test(safe_regex_path),
        cmocka_unit_test(safe_regex_invalid),
        cmocka_unit_test(safe_regex_backreference),
        cmocka_unit_test(safe_regex_lookbehind),
        cmocka_unit_test(safe_regex_pcre2_only_syntax),
        cmocka_unit_test(safe_regex_re2_lookalikes_accepted),
        cmocka_unit_test(other_path_specifier),
        cmocka_unit_test(header_matchers),
        cmocka_unit_test(header_regex_invalid),
        cmocka_unit_test(header_string_match_regex_invalid),
        cmocka_unit_test(header_range_end_before_start),
        cmocka_unit_test(header_matcher_kind_required),
        cmocka_unit_test(header_string_match_pattern_required),
        cmocka_unit_test(runtime_fraction),
        cmocka_unit_test(runtime_fraction_bad_denominator),
        cmocka_unit_test(cluster_name_required),
        cmocka_unit_test(weighted_clusters),
        cmocka_unit_test(weighted_sum_exceeds_uint32),
        cmocka_unit_test(weighted_all_zero),
        cmocka_unit_test(weighted_name_required),
        cmocka_unit_test(weighted_weight_required),
        cmocka_unit_test(cluster_header_ignores_route),
        cmocka_unit_test(cluster_specifier_plugin_unknown),
        cmocka_unit_test(cluster_specifier_plugin_name_required),
        cmocka_unit_test(optional_unsupported_plugin_ignores_its_routes),
        cmocka_unit_test(required_unsupported_plugin_rejected),
        cmocka_unit_test(plugin_extension_required),
        cmocka_unit_test(plugin_typed_config_required),
        cmocka_unit_test(plugin_names_unique),
        cmocka_unit_test(non_forwarding_and_unsupported_actions),
        cmocka_unit_test(hash_policies),
        cmocka_unit_test(hash_header_name_required),
        cmocka_unit_test(hash_regex_rewrite_pattern_required),
        cmocka_unit_test(hash_regex_rewrite_regex_required),
        cmocka_unit_test(hash_regex_rewrite_invalid),
        cmocka_unit_test(hash_regex_rewrite_bad_substitution),
        cmocka_unit_test(max_stream_duration_prefers_header_max),
        cmocka_unit_test(max_stream_duration_plain),
        cmocka_unit_test(max_stream_duration_invalid),
    };
    return cmocka_run_group_tests_name("xds_validate_route", tests, NULL, NULL);
}
