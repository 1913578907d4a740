/*
 * Every xDS resource xlb knows of, by type and name, with the state a proxyless gRPC client
 * tracks for it (A57 for does-not-exist, A46 for NACKs): what is being waited for, what is
 * held (the last valid, validated value), what was rejected and why, and what came from the
 * bootstrap's static_resources. The ADS client and the static-resource reader write it; the
 * dependency manager and `xlbctl config dump` read it.
 */
#ifndef XLB_XDS_CACHE_H
#define XLB_XDS_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "cluster_config.h"
#include "endpoint_config.h"
#include "listener_config.h"
#include "route_config.h"

enum xlb_xds_type {
    XLB_XDS_LDS,
    XLB_XDS_RDS,
    XLB_XDS_CDS,
    XLB_XDS_EDS,
    XLB_XDS_TYPES,
};

enum xlb_resource_state {
    XLB_RES_REQUESTED,      /* watched, nothing received yet */
    XLB_RES_ACKED,          /* the last update was valid: value held */
    XLB_RES_NACKED,         /* the last update was invalid: error set; a previous value may stay */
    XLB_RES_DOES_NOT_EXIST, /* not in the server's answer (A57), or removed */
    XLB_RES_STATIC,         /* from static_resources: value held, never changes */
};

struct xlb_xds_resource {
    enum xlb_xds_type type;
    char *name;
    enum xlb_resource_state state;
    bool has_value;
    union {
        struct xlb_listener_config listener;
        struct xlb_route_config route;
        struct xlb_cluster_config cluster;
        struct xlb_endpoint_config endpoints;
    } value;
    ProtobufCMessage *message; /* the message the value was validated from (config dump) */
    char *version;             /* version_info of the response that carried the value */
    char *error;               /* the last NACK reason for this resource, or NULL */
    uint64_t changes;          /* bumped whenever value or state changes */
    bool watched;              /* the dependency manager wants it */
    struct xlb_xds_resource *next;
    struct xlb_xds_resource *hash_next; /* in its bucket of the name index */
};

/* Buckets of the name index per type: lookups stay O(1) for tens of thousands of clusters. */
#define XLB_XDS_CACHE_BUCKETS 4096

struct xlb_xds_cache {
    struct xlb_xds_resource *list[XLB_XDS_TYPES];
    struct xlb_xds_resource *index[XLB_XDS_TYPES][XLB_XDS_CACHE_BUCKETS];
    uint64_t changes; /* bumped on any change: "re-evaluate the dependency graph" */
    /* The certificate providers a cluster's transport_socket may name (A29); NULL: any. */
    const struct xlb_bootstrap *bootstrap;
};

extern const char *const xlb_xds_type_url[XLB_XDS_TYPES];
extern const char
    *const xlb_xds_type_name[XLB_XDS_TYPES]; /* "listener", "route_configuration"... */
/* The type of a type URL, or -1. */
int xlb_xds_type_by_url(const char *type_url);

void xlb_xds_cache_init(struct xlb_xds_cache *cache);
void xlb_xds_cache_free(struct xlb_xds_cache *cache);

/* The resource, or NULL. */
struct xlb_xds_resource *xlb_xds_cache_find(const struct xlb_xds_cache *cache,
                                            enum xlb_xds_type type, const char *name);
/* The resource, created in state REQUESTED when missing; NULL when out of memory. */
struct xlb_xds_resource *xlb_xds_cache_get(struct xlb_xds_cache *cache, enum xlb_xds_type type,
                                           const char *name);

/*
 * Validate msg (taken over: freed here on failure, or when replaced) as the resource's new
 * value. On success the resource holds it (state ACKED, or STATIC when is_static); on failure
 * the previous value stays, state becomes NACKED, and the reason is appended to errs and kept.
 * Returns 0 or -1.
 */
int xlb_xds_cache_update(struct xlb_xds_cache *cache, struct xlb_xds_resource *res,
                         ProtobufCMessage *msg, const char *version, bool is_static,
                         struct xlb_errors *errs);

/* Remove every STATIC resource (SIGHUP reloads static_resources anew). */
void xlb_xds_cache_drop_static(struct xlb_xds_cache *cache);

/* Nothing wants it any more (its watch is cancelled): its value, version and error go, as a
 * gRPC client's XdsClient drops a resource with its last watcher, so that watching it again
 * waits for the server's current value instead of serving what it held before (state
 * REQUESTED). STATIC resources stay. */
void xlb_xds_cache_forget(struct xlb_xds_cache *cache, struct xlb_xds_resource *res);

/* The server says it does not exist (absent from a SotW LDS/CDS answer, or the A57 timer). */
void xlb_xds_cache_does_not_exist(struct xlb_xds_cache *cache, struct xlb_xds_resource *res);

#endif
