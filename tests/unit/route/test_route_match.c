/* Route matching (lib/route, gRPC A28): one test per rule, tables built from proto3 JSON. */
#include "xv_test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "route_compile.h"
#include "xlb_route.h"

static const char *const clusters[] = {"a", "b", "c"};

/* Validate and compile json; the test fails on any error. */
static struct xlb_route_table *table_of(const char *json)
{
    ProtobufCMessage *msg =
        xv_json(&envoy__config__route__v3__route_configuration__descriptor, json);
    struct xlb_route_config cfg;
    struct xlb_errors errs = {0};
    int rc =
        xlb_validate_route_config((Envoy__Config__Route__V3__RouteConfiguration *)msg, &cfg, &errs);
    protobuf_c_message_free_unpacked(msg, NULL);
    xv_expect_none(&errs);
    assert_int_equal(rc, 0);
    struct xlb_route_table *t = NULL;
    assert_int_equal(xlb_route_compile(&cfg, clusters, 3, &t), 0);
    xlb_route_config_free(&cfg);
    return t;
}

struct fixture {
    struct xlb_route_table *t;
    struct xlb_route_scratch *s;
    struct xlb_rng rng;
};

static void setup(struct fixture *f, const char *json)
{
    f->t = table_of(json);
    f->s = xlb_route_scratch_create();
    assert_non_null(f->s);
    xlb_rng_seed(&f->rng, 42);
}

static void teardown(struct fixture *f)
{
    xlb_route_table_free(f->t);
    xlb_route_scratch_free(f->s);
}

#define F(n, v)                                                                                    \
    {                                                                                              \
        (n), (v), (uint32_t)strlen(n), (uint32_t)strlen(v)                                         \
    }

/* The cluster index chosen for path and fields in vhost 0, XLB_ROUTE_NONE otherwise. */
static uint32_t pick(struct fixture *f, const char *path, const struct xlb_route_field *fields,
                     uint32_t n)
{
    struct xlb_route_request req = {path, (uint32_t)strlen(path), "x", 1, fields, n};
    struct xlb_route_result res;
    xlb_route_match(f->t, 0, &req, &f->rng, f->s, &res);
    return res.cluster;
}

/* One virtual host "*" holding the given routes. */
#define RC(routes)                                                                                 \
    "{\"name\":\"r\",\"virtual_hosts\":[{\"name\":\"vh\",\"domains\":[\"*\"],\"routes\":[" routes  \
    "]}]}"
#define TO(c)            "\"route\":{\"cluster\":\"" c "\"}"
#define R(match, action) "{\"match\":" match "," action "}"
#define ANY_TO(c)        R("{\"prefix\":\"\"}", TO(c))
/* A route to "a" with one header matcher, then a fallback to "b". */
#define HDR(h) RC(R("{\"prefix\":\"\",\"headers\":[" h "]}", TO("a")) "," ANY_TO("b"))

static uint32_t vhost(const struct xlb_route_table *t, const char *authority)
{
    return xlb_route_select_vhost(t, authority, (uint32_t)strlen(authority));
}

static void domain_precedence(void **state)
{
    (void)state;
    struct xlb_route_table *t =
        table_of("{\"name\":\"r\",\"virtual_hosts\":["
                 "{\"name\":\"any\",\"domains\":[\"*\"],\"routes\":[]},"
                 "{\"name\":\"pre\",\"domains\":[\"foo.*\",\"foo.bar.*\"],\"routes\":[]},"
                 "{\"name\":\"suf\",\"domains\":[\"*.com\",\"*.bar.com\"],\"routes\":[]},"
                 "{\"name\":\"exact\",\"domains\":[\"Foo.Bar.com\"],\"routes\":[]},"
                 "{\"name\":\"suf2\",\"domains\":[\"*.bar.com\"],\"routes\":[]}]}");
    assert_int_equal(vhost(t, "foo.bar.com"), 3);      /* exact beats every wildcard */
    assert_int_equal(vhost(t, "FOO.BAR.COM"), 3);      /* case-insensitive */
    assert_int_equal(vhost(t, "x.bar.com"), 2);        /* longest suffix; first host on a tie */
    assert_int_equal(vhost(t, "foo.bar.org"), 1);      /* prefix when no suffix matches */
    assert_int_equal(vhost(t, "foo.bar.com:8080"), 1); /* the port is part of the name */
    assert_int_equal(vhost(t, "elsewhere"), 0);        /* "*" last */
    assert_int_equal(vhost(t, ".com"), 0);             /* a wildcard needs one character */
    xlb_route_table_free(t);

    t = table_of("{\"name\":\"r\",\"virtual_hosts\":[{\"name\":\"v\",\"domains\":[\"a.com\"],"
                 "\"routes\":[]}]}");
    assert_int_equal(vhost(t, "b.com"), XLB_ROUTE_NONE);
    xlb_route_table_free(t);
}

static void path_prefix_and_case(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f, RC(R("{\"prefix\":\"/svc/\"}", TO("a")) "," R(
                  "{\"prefix\":\"/other/\",\"case_sensitive\":false}", TO("c")) "," ANY_TO("b")));
    assert_int_equal(pick(&f, "/svc/M", NULL, 0), 0);
    assert_int_equal(pick(&f, "/SVC/M", NULL, 0), 1);
    assert_int_equal(pick(&f, "/OTHER/m", NULL, 0), 2);
    assert_int_equal(pick(&f, "/sv", NULL, 0), 1);
    teardown(&f);
}

static void path_exact_and_case(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f, RC(R("{\"path\":\"/s/M\"}", TO("a")) "," R(
                  "{\"path\":\"/s/N\",\"case_sensitive\":false}", TO("c")) "," ANY_TO("b")));
    assert_int_equal(pick(&f, "/s/M", NULL, 0), 0);
    assert_int_equal(pick(&f, "/s/m", NULL, 0), 1);
    assert_int_equal(pick(&f, "/s/MX", NULL, 0), 1);
    assert_int_equal(pick(&f, "/S/n", NULL, 0), 2);
    teardown(&f);
}

static void path_regex_full_match(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f, RC(R("{\"safe_regex\":{\"regex\":\"/s/[a-z]+\"},\"case_sensitive\":false}",
                   TO("a")) "," ANY_TO("b")));
    assert_int_equal(pick(&f, "/s/abc", NULL, 0), 0);
    assert_int_equal(pick(&f, "/s/abc/", NULL, 0), 1); /* full match, not a search */
    assert_int_equal(pick(&f, "/s/ABC", NULL, 0), 1);  /* case_sensitive does not apply */
    teardown(&f);
}

static void header_kinds(void **state)
{
    (void)state;
    static const struct {
        const char *matcher, *hit, *miss;
    } cases[] = {
        {"{\"name\":\"k\",\"exact_match\":\"v1\"}", "v1", "v12"},
        {"{\"name\":\"k\",\"safe_regex_match\":{\"regex\":\"v[0-9]\"}}", "v7", "v77"},
        {"{\"name\":\"k\",\"prefix_match\":\"ab\"}", "abc", "cab"},
        {"{\"name\":\"k\",\"suffix_match\":\"yz\"}", "xyz", "yzx"},
        {"{\"name\":\"k\",\"contains_match\":\"mid\"}", "amidst", "mi-d"},
        {"{\"name\":\"k\",\"string_match\":{\"exact\":\"AbC\",\"ignore_case\":true}}", "aBc",
         "abd"},
        {"{\"name\":\"k\",\"string_match\":{\"prefix\":\"Ab\"}}", "Abz", "abz"},
        {"{\"name\":\"k\",\"string_match\":{\"suffix\":\"Z\",\"ignore_case\":true}}", "az", "za"},
        {"{\"name\":\"k\",\"string_match\":{\"contains\":\"q\"}}", "aqa", "aaa"},
        {"{\"name\":\"k\",\"string_match\":{\"safe_regex\":{\"regex\":\"a+\"}}}", "aaa", "aab"},
    };
    char json[1024];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(json, sizeof(json), HDR("%s"), cases[i].matcher);
        struct fixture f;
        setup(&f, json);
        struct xlb_route_field hit = F("k", cases[i].hit), miss = F("k", cases[i].miss);
        assert_int_equal(pick(&f, "/s/m", &hit, 1), 0);
        assert_int_equal(pick(&f, "/s/m", &miss, 1), 1);
        assert_int_equal(pick(&f, "/s/m", NULL, 0), 1); /* absent fails */
        teardown(&f);
    }
}

static void header_invert(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f, HDR("{\"name\":\"k\",\"exact_match\":\"v\",\"invert_match\":true}"));
    struct xlb_route_field v = F("k", "v"), w = F("k", "w");
    assert_int_equal(pick(&f, "/s/m", &v, 1), 1);
    assert_int_equal(pick(&f, "/s/m", &w, 1), 0);
    assert_int_equal(pick(&f, "/s/m", NULL, 0), 1); /* absent fails even when inverted */
    teardown(&f);
}

static void header_range_bounds(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f, HDR("{\"name\":\"n\",\"range_match\":{\"start\":\"-5\",\"end\":\"10\"}}"));
    static const char *in[] = {"-5", "0", "9", " +9 "};
    static const char *out[] = {"-6", "10", "x", "", "9a", "99999999999999999999"};
    for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
        struct xlb_route_field h = F("n", in[i]);
        assert_int_equal(pick(&f, "/s/m", &h, 1), 0);
    }
    for (size_t i = 0; i < sizeof(out) / sizeof(out[0]); i++) {
        struct xlb_route_field h = F("n", out[i]);
        assert_int_equal(pick(&f, "/s/m", &h, 1), 1);
    }
    teardown(&f);
}

static void header_present(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f, RC(R("{\"prefix\":\"\",\"headers\":[{\"name\":\"k\",\"present_match\":true}]}",
                   TO("a")) "," R("{\"prefix\":\"\",\"headers\":[{\"name\":\"k\","
                                  "\"present_match\":true,\"invert_match\":true}]}",
                                  TO("c")) "," ANY_TO("b")));
    struct xlb_route_field k = F("k", ""), other = F("j", "1");
    assert_int_equal(pick(&f, "/s/m", &k, 1), 0);
    assert_int_equal(pick(&f, "/s/m", &other, 1), 2); /* inverted present: absent matches */
    teardown(&f);
}

static void header_values_joined(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f, HDR("{\"name\":\"k\",\"exact_match\":\"x,y\"}"));
    struct xlb_route_field two[] = {F("k", "x"), F("j", "z"), F("k", "y")};
    assert_int_equal(pick(&f, "/s/m", two, 3), 0);
    assert_int_equal(pick(&f, "/s/m", two, 1), 1);
    teardown(&f);
}

static void header_content_type(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f, HDR("{\"name\":\"content-type\",\"exact_match\":\"application/grpc\"}"));
    struct xlb_route_field ct = F("content-type", "application/grpc+proto");
    assert_int_equal(pick(&f, "/s/m", &ct, 1), 0);
    assert_int_equal(pick(&f, "/s/m", NULL, 0), 0); /* gRPC always sees application/grpc */
    teardown(&f);
}

static void header_bin_invisible(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f, RC(R("{\"prefix\":\"\",\"headers\":[{\"name\":\"k-bin\",\"present_match\":true}]}",
                   TO("a")) "," ANY_TO("b")));
    struct xlb_route_field bin = F("k-bin", "AAAA");
    assert_int_equal(pick(&f, "/s/m", &bin, 1), 1);
    teardown(&f);
}

static void runtime_fraction_bounds(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f, RC(R("{\"prefix\":\"\",\"runtime_fraction\":{\"default_value\":{\"numerator\":0}}}",
                   TO("a")) "," R("{\"prefix\":\"\",\"runtime_fraction\":{\"default_value\":{"
                                  "\"numerator\":1000000,\"denominator\":\"MILLION\"}}}",
                                  TO("c")) "," ANY_TO("b")));
    for (int i = 0; i < 10000; i++)
        assert_int_equal(pick(&f, "/s/m", NULL, 0), 2);
    teardown(&f);
}

static void weighted_distribution(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f, RC(R("{\"prefix\":\"\"}", "\"route\":{\"weighted_clusters\":{\"clusters\":["
                                        "{\"name\":\"a\",\"weight\":1},{\"name\":\"b\","
                                        "\"weight\":3},{\"name\":\"new\",\"weight\":6}]}}")));
    assert_int_equal(f.t->n_clusters, 4);
    assert_string_equal(f.t->cluster_names[3], "new");
    const unsigned n = 200000;
    unsigned count[4] = {0};
    for (unsigned i = 0; i < n; i++) {
        uint32_t c = pick(&f, "/s/m", NULL, 0);
        assert_true(c < 4);
        count[c]++;
    }
    const double p[4] = {0.1, 0.3, 0.0, 0.6};
    for (int c = 0; c < 4; c++) {
        double sigma = sqrt(n * p[c] * (1 - p[c]));
        assert_true(fabs(count[c] - n * p[c]) <= 5 * sigma);
    }
    teardown(&f);
}

#define WEIGHTED(entries)     "\"route\":{\"weighted_clusters\":{\"clusters\":[" entries "]}}"
#define W(name, weight, more) "{\"name\":\"" name "\",\"weight\":" #weight more "}"
#define DISABLED                                                                                   \
    ",\"typed_per_filter_config\":{\"ssa\":{\"@type\":\"type.googleapis.com/envoy.extensions."     \
    "filters.http.stateful_session.v3.StatefulSessionPerRoute\",\"disabled\":true}}"

/*
 * A39: a route whose weighted entries carry filter overrides tells them apart (result.entry),
 * even two entries of one cluster; the entries' share of draws and their clusters stay.
 */
static void weighted_entries_told_apart(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f, RC(R("{\"prefix\":\"/o/\"}",
                   WEIGHTED(W("b", 1, "") "," W("a", 1, DISABLED) "," W(
                       "b", 2, ""))) "," R("{\"prefix\":\"\"}",
                                           WEIGHTED(W("a", 1, "") "," W("b", 1, "")))));
    const unsigned n = 40000;
    unsigned count[3] = {0};
    struct xlb_route_request req = {"/o/m", 4, "x", 1, NULL, 0};
    struct xlb_route_result res;
    for (unsigned i = 0; i < n; i++) {
        xlb_route_match(f.t, 0, &req, &f.rng, f.s, &res);
        assert_true(res.entry < 3);
        assert_int_equal(res.cluster, res.entry == 1 ? 0 : 1); /* a, else b */
        count[res.entry]++;
    }
    const double p[3] = {0.25, 0.25, 0.5};
    for (int e = 0; e < 3; e++)
        assert_true(fabs(count[e] - n * p[e]) <= 5 * sqrt(n * p[e] * (1 - p[e])));
    /* Without overrides the entries are not told apart. */
    req.path = "/m";
    req.path_len = 2;
    xlb_route_match(f.t, 0, &req, &f.rng, f.s, &res);
    assert_int_equal(res.verdict, XLB_ROUTE_RESULT_CLUSTER);
    assert_int_equal(res.entry, XLB_ROUTE_NONE);
    teardown(&f);
}

static void first_match_wins(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f, RC(R("{\"prefix\":\"/s/\"}", TO("a")) "," R("{\"path\":\"/s/m\"}", TO("c"))));
    assert_int_equal(pick(&f, "/s/m", NULL, 0), 0);
    teardown(&f);
}

static void non_forwarding_and_no_route(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f, RC(R("{\"prefix\":\"/nf/\"}",
                   "\"non_forwarding_action\":{}") "," R("{\"prefix\":\"/s/\"}", TO("a"))));
    struct xlb_route_request req = {"/nf/m", 5, "x", 1, NULL, 0};
    struct xlb_route_result res;
    assert_int_equal(xlb_route_match(f.t, 0, &req, &f.rng, f.s, &res),
                     XLB_ROUTE_RESULT_NON_FORWARDING);
    assert_int_equal(res.route, 0);
    req.path = "/t/m";
    assert_int_equal(xlb_route_match(f.t, 0, &req, &f.rng, f.s, &res), XLB_ROUTE_RESULT_NO_ROUTE);
    assert_int_equal(res.cluster, XLB_ROUTE_NONE);
    assert_int_equal(xlb_route_match(f.t, XLB_ROUTE_NONE, &req, &f.rng, f.s, &res),
                     XLB_ROUTE_RESULT_NO_ROUTE);
    teardown(&f);
}

static void regex_limits_bound_work(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f, RC(R("{\"safe_regex\":{\"regex\":\"/(a+)+b\"}}", TO("a")) "," ANY_TO("b")));
    char path[64] = "/";
    memset(path + 1, 'a', 40);
    assert_int_equal(pick(&f, path, NULL, 0), 1); /* the limit stops the backtracking */
    teardown(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(domain_precedence),
        cmocka_unit_test(path_prefix_and_case),
        cmocka_unit_test(path_exact_and_case),
        cmocka_unit_test(path_regex_full_match),
        cmocka_unit_test(header_kinds),
        cmocka_unit_test(header_invert),
        cmocka_unit_test(header_range_bounds),
        cmocka_unit_test(header_present),
        cmocka_unit_test(header_values_joined),
        cmocka_unit_test(header_content_type),
        cmocka_unit_test(header_bin_invisible),
        cmocka_unit_test(runtime_fraction_bounds),
        cmocka_unit_test(weighted_distribution),
        cmocka_unit_test(weighted_entries_told_apart),
        cmocka_unit_test(first_match_wins),
        cmocka_unit_test(non_forwarding_and_no_route),
        cmocka_unit_test(regex_limits_bound_work),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
