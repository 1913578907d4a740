/*
 * A42 header hash policies with a regex_rewrite: the request hash is the one gRPC computes,
 * XXH64 (seed 0) of the header value after RE2::GlobalReplace(value, pattern, substitution).
 * The policies are compiled as the control plane compiles them (hash_policy_compile.c) and
 * hashed by the workers' code (lib/lb/xlb_lb_hash.c); each expected string is worked out here
 * from the rule.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <xxhash.h>

#include "hash_policy_compile.h"
#include "xlb_lb.h"

/* One route, one header policy, one request with the given header fields. */
struct hash_case {
    struct xlb_route_table routes;
    uint32_t first, n;
    struct xlb_lb_hash_policy policy;
    struct xlb_lb_vip vip;
    struct xlb_lb_worker worker;
};

static void case_init(struct hash_case *c, const char *header, const char *regex,
                      const char *substitution)
{
    memset(c, 0, sizeof(*c));
    char name[64], re[128], sub[64];
    snprintf(name, sizeof(name), "%s", header);
    snprintf(re, sizeof(re), "%s", regex);
    snprintf(sub, sizeof(sub), "%s", substitution);
    struct xlb_hash_policy in = {
        .kind = XLB_HASH_HEADER, .header_name = name, .regex = re, .substitution = sub};
    char err[128] = "";
    assert_int_equal(xlb_hash_policy_compile(&in, &c->policy, err, sizeof(err)), 0);
    c->routes.n_routes = 1;
    c->first = 0;
    c->n = 1;
    c->vip.routes = &c->routes;
    c->vip.route_first_hash = &c->first;
    c->vip.route_n_hash = &c->n;
    c->vip.hash_policies = &c->policy;
    c->vip.n_hash_policies = 1;
    assert_int_equal(xlb_lb_worker_init(&c->worker, 1, NULL, NULL, 1), 0);
}

static void case_fini(struct hash_case *c)
{
    free(c->policy.header);
    pcre2_code_free(c->policy.re);
    free(c->policy.substitution);
    xlb_lb_worker_fini(&c->worker);
}

static uint64_t request_hash(struct hash_case *c, const struct xlb_route_field *fields,
                             uint32_t n_fields)
{
    struct xlb_route_request http = {
        .path = "/", .path_len = 1, .fields = fields, .n_fields = n_fields};
    struct xlb_lb_request request = {.http = &http};
    bool hashed = false;
    uint64_t hash = xlb_lb_request_hash(&c->vip, 0, &request, &c->worker, &hashed);
    assert_true(hashed);
    return hash;
}

static uint64_t xxh(const char *s)
{
    return XXH64(s, strlen(s), 0);
}

#define FIELD(n, v)                                                                                \
    {                                                                                              \
        .name = n, .value = v, .name_len = sizeof(n) - 1, .value_len = sizeof(v) - 1               \
    }

/* "\2:\1" swaps the two groups: "user-42-eu" hashes as "eu:42". */
static void groups_in_substitution(void **state)
{
    (void)state;
    struct hash_case c;
    case_init(&c, "X-User", "^user-(\\d+)-(\\w+)$", "\\2:\\1");
    const struct xlb_route_field f[] = {FIELD("x-user", "user-42-eu")};
    assert_true(request_hash(&c, f, 1) == xxh("eu:42"));
    case_fini(&c);
}

/* Every match is replaced (GlobalReplace), and a '$' in the substitution is a '$'. A repeated
 * header is joined with ',' first, as gRPC presents it: "a1,b2" -> "$1$,$2$". */
static void global_replace_and_literal_dollar(void **state)
{
    (void)state;
    struct hash_case c;
    case_init(&c, "x-k", "[a-z](\\d)", "$\\1$");
    const struct xlb_route_field f[] = {FIELD("x-k", "a1"), FIELD("x-k", "b2")};
    assert_true(request_hash(&c, f, 2) == xxh("$1$,$2$"));
    case_fini(&c);
}

/* A rewrite naming a group the pattern lacks: RE2::GlobalReplace refuses it and leaves the
 * value unchanged, so gRPC hashes "abc" itself. */
static void missing_group_hashes_unchanged(void **state)
{
    (void)state;
    struct hash_case c;
    case_init(&c, "x-k", "(b)", "\\2");
    const struct xlb_route_field f[] = {FIELD("x-k", "abc")};
    assert_true(request_hash(&c, f, 1) == xxh("abc"));
    case_fini(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(groups_in_substitution),
        cmocka_unit_test(global_replace_and_literal_dollar),
        cmocka_unit_test(missing_group_hashes_unchanged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
