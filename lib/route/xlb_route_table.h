/*
 * A compiled RouteConfiguration (gRPC A28) laid out for the workers: flat arrays, immutable
 * once built, freed only when no worker can still read it (the snapshot generation rule).
 *
 * The control plane fills it (control/route_compile) from a validated config; this library only
 * reads it. Strings are owned, NUL-terminated and carry their length so that a match never
 * calls strlen. Clusters are uint32 indexes into cluster_names.
 */
#ifndef XLB_ROUTE_TABLE_H
#define XLB_ROUTE_TABLE_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xlb_wchoice.h"

/* Domain pattern kinds, best first: a lower value always wins over a higher one. */
enum xlb_rt_domain_kind {
    XLB_RT_DOMAIN_EXACT,
    XLB_RT_DOMAIN_SUFFIX,   /* "*.foo.com": '*' matches one character or more */
    XLB_RT_DOMAIN_PREFIX,   /* "foo.*" */
    XLB_RT_DOMAIN_UNIVERSE, /* "*" */
};

struct xlb_rt_domain {
    char *pattern; /* lower-cased, '*' kept */
    uint32_t len;
    uint8_t kind; /* enum xlb_rt_domain_kind */
    uint32_t vhost;
};

enum xlb_rt_path_kind {
    XLB_RT_PATH_PREFIX,
    XLB_RT_PATH_EXACT,
    XLB_RT_PATH_REGEX, /* full match; case_sensitive does not apply */
};

enum xlb_rt_header_kind {
    XLB_RT_HDR_EXACT,
    XLB_RT_HDR_REGEX, /* full match */
    XLB_RT_HDR_RANGE, /* decimal int64 in [range_start, range_end) */
    XLB_RT_HDR_PRESENT,
    XLB_RT_HDR_PREFIX,
    XLB_RT_HDR_SUFFIX,
    XLB_RT_HDR_CONTAINS,
};

/* How the matcher obtains the header's value; decided once, when the table is built. */
enum xlb_rt_header_source {
    XLB_RT_SRC_REQUEST,      /* the request's fields of that name, joined with ',' */
    XLB_RT_SRC_ABSENT,       /* "-bin": gRPC never exposes binary headers to routing */
    XLB_RT_SRC_CONTENT_TYPE, /* gRPC always sees "application/grpc" */
};

struct xlb_rt_header {
    char *name; /* lower-case */
    uint32_t name_len;
    uint8_t kind;   /* enum xlb_rt_header_kind */
    uint8_t source; /* enum xlb_rt_header_source */
    bool present;   /* PRESENT: match a present header (true) or an absent one */
    bool ignore_case;
    bool invert;
    char *value; /* EXACT, PREFIX, SUFFIX, CONTAINS; "" otherwise */
    uint32_t value_len;
    pcre2_code *re; /* REGEX */
    int64_t range_start, range_end;
};

enum xlb_rt_action {
    XLB_RT_ACT_CLUSTER,
    XLB_RT_ACT_WEIGHTED,
    XLB_RT_ACT_NON_FORWARDING,
    XLB_RT_ACT_UNSUPPORTED, /* redirect, direct_response...: gRPC fails the RPC UNAVAILABLE */
};

struct xlb_rt_route {
    uint8_t path_kind; /* enum xlb_rt_path_kind */
    bool case_sensitive;
    bool has_fraction;
    uint8_t action; /* enum xlb_rt_action */
    uint32_t path_len;
    char *path;                       /* PREFIX, EXACT */
    pcre2_code *re;                   /* REGEX */
    uint32_t first_header, n_headers; /* a slice of the table's headers */
    uint32_t fraction_ppm;
    /* CLUSTER: the cluster index. WEIGHTED whose entries carry filter overrides (A39): the
     * index in the table's entry_clusters of its first entry, and the choice's items are entry
     * indexes, so that the entry drawn is known; other WEIGHTED: XLB_PICK_NONE, and the choice
     * draws cluster indexes directly (one read less). Kept in this field so that a route stays
     * 48 bytes: the match scans routes. */
    uint32_t cluster;
    struct xlb_wchoice *choice; /* WEIGHTED */
};

struct xlb_rt_vhost {
    uint32_t first_route, n_routes; /* a slice of the table's routes */
};

struct xlb_route_table {
    struct xlb_rt_vhost *vhosts;
    uint32_t n_vhosts;
    struct xlb_rt_domain *domains; /* every vhost's patterns, in vhost order */
    uint32_t n_domains;
    struct xlb_rt_route *routes;
    uint32_t n_routes;
    struct xlb_rt_header *headers;
    uint32_t n_headers;
    char **cluster_names;
    uint32_t n_clusters;
    uint32_t *entry_clusters; /* per weighted entry told apart: its cluster index (see above) */
    uint32_t n_entry_clusters;
};

/*
 * JIT-compile every regex of the table where PCRE2 has a JIT for this CPU; patterns it cannot
 * JIT keep working through the interpreter. Call once, after filling, before publishing.
 */
void xlb_route_table_jit(struct xlb_route_table *table);

/* Free the table, its strings, regexes and weighted choices. NULL is a no-op. */
void xlb_route_table_free(struct xlb_route_table *table);

#endif
