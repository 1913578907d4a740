/*
 * The control plane's xDS side: the resource cache (static resources and what ADS delivers),
 * the dependency manager that turns each VIP's target into a complete configuration or says
 * why it is not one, and the ADS client that subscribes to what the dependency manager needs.
 */
#ifndef XLB_XDS_PLANE_H
#define XLB_XDS_PLANE_H

#include <cjson/cJSON.h>

#include "ads_client.h"
#include "bootstrap.h"
#include "dependency_manager.h"
#include "event_loop.h"
#include "lb_trees.h"
#include "lrs_source.h"
#include "xds_cache.h"
#include "xds_metrics.h"

struct xlb_xds_plane {
    struct xlb_loop *loop;
    struct xlb_xds_cache cache;
    struct xlb_dm dm;
    struct xlb_ads_client *ads;
    Envoy__Config__Core__V3__Node node;
    Envoy__Config__Core__V3__Locality locality;
    ProtobufCMessage *metadata; /* google.protobuf.Struct read from node.metadata */
    char *client_features[3];
    /* One per bootstrap VIP, in its order. */
    size_t n_vips;
    struct xlb_xds_vip {
        size_t dm_index;      /* its entry in dm.vips */
        bool ever_ready;      /* then a later WARMING or ERROR keeps the last complete config */
        uint64_t fingerprint; /* of the complete configuration it serves */
        uint64_t generation;  /* the ready_generation of that configuration */
    } * vips;
    uint64_t ready_generation; /* bumped whenever some VIP's complete configuration changes */
    /* Load reporting to the ADS server (lrs_server: self) on the channel ADS lends. */
    struct xlb_lrs_client *lrs;
    struct xlb_lrs_source_state lrs_source;
    struct xlb_grpc_channel *channel; /* ADS's ready channel, or NULL */
    /* The compiled LB trees of the VIPs (lib/lb) and the state that reshapes them. */
    struct xlb_lb_trees *lb;
    bool lb_changed; /* a tree changed since the owner last published a snapshot */
    /* Called when ADS changed the cache; the owner runs xlb_xds_plane_update (under its lock). */
    void (*changed)(void *arg);
    void *changed_arg;
};

/* Static resources are loaded (their problems appended to errs: -1), VIPs registered, and
 * ADS started when xds_servers are configured. */
int xlb_xds_plane_init(struct xlb_xds_plane *x, struct xlb_loop *loop,
                       const struct xlb_bootstrap *bootstrap, const struct xlb_worker_load *load,
                       unsigned n_workers, const struct xlb_lb_grace *grace,
                       void (*changed)(void *arg), void *arg, struct xlb_errors *errs);
void xlb_xds_plane_free(struct xlb_xds_plane *x);

/* After SIGHUP: VIPs and static resources anew. The caller has validated the bootstrap with
 * xlb_xds_plane_check, so this only fails when memory runs out. */
int xlb_xds_plane_reload(struct xlb_xds_plane *x, const struct xlb_bootstrap *bootstrap,
                         struct xlb_errors *errs);

/* Re-evaluate after a cache change; subscribes to what is now needed and recompiles the LB
 * trees that changed (then lb_changed is set). */
void xlb_xds_plane_update(struct xlb_xds_plane *x);

/* Periodic LB work (outlier detection, A56 timers, idle draining); sets lb_changed. */
void xlb_xds_plane_tick(struct xlb_xds_plane *x);
/* The certificate provider files changed: clusters with upstream TLS read them again (A29). */
void xlb_xds_plane_tls_files_changed(struct xlb_xds_plane *x);

/* For `xlbd --check`: the static resources of a bootstrap, validated as xDS would. */
int xlb_xds_plane_check(const struct xlb_bootstrap *bootstrap, struct xlb_errors *errs);

/*
 * Warnings about a bootstrap that is valid but unsafe, one line per xDS server ("path:
 * message"): insecure channel credentials towards a server that is not on loopback, where
 * anyone on the path can inject configuration. `xlbd --check` prints them and xlbd logs them
 * at startup.
 */
void xlb_xds_plane_warnings(const struct xlb_bootstrap *bootstrap, struct xlb_errors *warnings);

/* "ready", "stale" (warming or failing, the last complete configuration kept), "warming" or
 * "error". */
const char *xlb_xds_plane_vip_state(const struct xlb_xds_plane *x, size_t vip);

/* The VIP's state for status: {"state", "reason", "clusters": [...]} */
cJSON *xlb_xds_plane_vip_status(const struct xlb_xds_plane *x, size_t vip);
/* Every resource: type, name, state, version, error, and the value as proto3 JSON. */
cJSON *xlb_xds_plane_config_dump(const struct xlb_xds_plane *x);
/* Every cluster some VIP reaches: type, policy, state, and its endpoint counts. */
cJSON *xlb_xds_plane_clusters(const struct xlb_xds_plane *x);
/* One cluster's endpoints by priority and locality with their LB state (usable, ejected,
 * drained, counters), or NULL when no VIP reaches it. */
cJSON *xlb_xds_plane_endpoints(const struct xlb_xds_plane *x, const char *cluster);

/* The values of the xDS metrics: stream, ACK/NACK counts, resources by type and state. */
void xlb_xds_plane_metrics(const struct xlb_xds_plane *x, struct xlb_xds_metrics *out);

/* The ADS client's state (with the LRS stream's), or {"server": null} without xds_servers. */
cJSON *xlb_xds_plane_status(const struct xlb_xds_plane *x);

#endif
