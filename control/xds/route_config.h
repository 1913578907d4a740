/*
 * A validated RouteConfiguration (RDS, or inline in a listener): gRPC proposals A28 (routing),
 * A39 (per-route filter config), A42 (hash policies), A55/A60/A61 (per-route stateful session).
 *
 * Self-contained: every string and array is owned, nothing points into the protobuf message.
 * Regex strings are stored as written; compile them with xlb_xds_regex_compile (xds_regex.h),
 * the function validation used, so that what was accepted is what matches.
 */
#ifndef XLB_XDS_ROUTE_CONFIG_H
#define XLB_XDS_ROUTE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "envoy/config/route/v3/route.pb-c.h"
#include "json_read.h"
#include "xds_types.h"

enum xlb_domain_match {
    XLB_DOMAIN_EXACT,    /* "foo.com" */
    XLB_DOMAIN_SUFFIX,   /* "*.foo.com": pattern keeps the '*' */
    XLB_DOMAIN_PREFIX,   /* "foo.*" */
    XLB_DOMAIN_UNIVERSE, /* "*" */
};

struct xlb_domain {
    char *pattern;
    enum xlb_domain_match type;
};

enum xlb_path_match {
    XLB_PATH_PREFIX, /* "" matches everything */
    XLB_PATH_EXACT,
    XLB_PATH_REGEX, /* full match; case_sensitive does not apply, as in gRPC */
};

enum xlb_header_match {
    XLB_HEADER_EXACT,
    XLB_HEADER_REGEX, /* full match */
    XLB_HEADER_RANGE, /* [range_start, range_end) */
    XLB_HEADER_PRESENT,
    XLB_HEADER_PREFIX,
    XLB_HEADER_SUFFIX,
    XLB_HEADER_CONTAINS,
};

struct xlb_header_matcher {
    char *name;
    enum xlb_header_match type;
    char *value; /* EXACT, REGEX, PREFIX, SUFFIX, CONTAINS; "" otherwise */
    int64_t range_start, range_end;
    bool present;     /* PRESENT: true matches a present header, false an absent one */
    bool ignore_case; /* string_match.ignore_case (never for REGEX) */
    bool invert;
};

struct xlb_route_match {
    enum xlb_path_match path_type;
    char *path;
    bool case_sensitive; /* default true */
    struct xlb_header_matcher *headers;
    size_t n_headers;
    bool has_fraction;
    uint32_t fraction_per_million; /* runtime_fraction.default_value, capped at 1000000 */
};

/* A typed_per_filter_config entry that overrides a stateful session filter (A39, A61). */
enum xlb_session_override_kind {
    XLB_SESSION_OVERRIDE_DISABLED, /* StatefulSessionPerRoute.disabled */
    XLB_SESSION_OVERRIDE_CONFIG,   /* StatefulSessionPerRoute.stateful_session */
};

struct xlb_filter_override {
    char *filter_name; /* the HTTP filter instance name it applies to */
    enum xlb_session_override_kind kind;
    struct xlb_stateful_session session; /* CONFIG only */
};

struct xlb_filter_overrides {
    struct xlb_filter_override *items; /* optional unsupported overrides are left out */
    size_t n;
};

struct xlb_weighted_cluster {
    char *name;
    uint32_t weight; /* > 0; zero-weight entries are kept out */
    struct xlb_filter_overrides overrides;
};

enum xlb_hash_policy_kind {
    XLB_HASH_HEADER,     /* header_name, optional regex_rewrite */
    XLB_HASH_CHANNEL_ID, /* filter_state key io.grpc.channel_id */
};

struct xlb_hash_policy {
    enum xlb_hash_policy_kind kind;
    bool terminal;
    char *header_name;  /* HEADER */
    char *regex;        /* HEADER with regex_rewrite, else NULL; search mode (not anchored) */
    char *substitution; /* with regex */
};

enum xlb_route_action_kind {
    XLB_ROUTE_CLUSTER,
    XLB_ROUTE_WEIGHTED_CLUSTERS,
    XLB_ROUTE_NON_FORWARDING, /* non_forwarding_action: a server-side action, fails on clients */
    XLB_ROUTE_UNSUPPORTED,    /* redirect, direct_response, filter_action: RPCs fail UNAVAILABLE */
};

struct xlb_route {
    char *name;
    struct xlb_route_match match;
    enum xlb_route_action_kind action;
    char *cluster;                         /* CLUSTER */
    struct xlb_weighted_cluster *weighted; /* WEIGHTED_CLUSTERS */
    size_t n_weighted;
    uint64_t total_weight; /* sum of weights, 1..UINT32_MAX */
    struct xlb_hash_policy *hash_policies;
    size_t n_hash_policies;
    bool has_max_stream_duration;
    struct xlb_duration max_stream_duration;
    struct xlb_filter_overrides overrides;
};

struct xlb_virtual_host {
    char *name;
    struct xlb_domain *domains;
    size_t n_domains;
    struct xlb_route *routes; /* routes gRPC ignores are left out */
    size_t n_routes;
    struct xlb_filter_overrides overrides;
};

struct xlb_route_config {
    char *name;
    struct xlb_virtual_host *vhosts;
    size_t n_vhosts;
};

/*
 * Validate a RouteConfiguration. Returns 0 with *out filled (free with xlb_route_config_free),
 * or -1 with one line per problem appended to errs and *out left empty.
 */
int xlb_validate_route_config(const Envoy__Config__Route__V3__RouteConfiguration *msg,
                              struct xlb_route_config *out, struct xlb_errors *errs);

void xlb_route_config_free(struct xlb_route_config *config);

#endif
