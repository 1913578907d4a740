/*
 * The ADS client's test fixture: a resource cache, a client on the fake transport (virtual
 * clock, scripted servers), and helpers to watch resources, answer with DiscoveryResponses
 * built from proto3 JSON, and read what the client sent.
 */
#ifndef XLB_ADS_TEST_H
#define XLB_ADS_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "ads_client.h"
#include "fake_transport.h"

#define CDS_URL "type.googleapis.com/envoy.config.cluster.v3.Cluster"
#define EDS_URL "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"
#define LDS_URL "type.googleapis.com/envoy.config.listener.v3.Listener"

/* A valid EDS cluster named n, and an empty ClusterLoadAssignment for n. */
#define CLUSTER(n)                                                                                 \
    "{\"name\":\"" n "\",\"type\":\"EDS\",\"eds_cluster_config\":{\"eds_config\":{\"ads\":{}}}}"
#define CLA(n) "{\"cluster_name\":\"" n "\"}"

struct ads_fixture {
    struct xlb_xds_cache cache;
    struct xlb_ads_client *client;
    Envoy__Config__Core__V3__Node node;
    unsigned changes;              /* calls of the client's changed callback */
    bool ignore_resource_deletion; /* given to every server by ads_start */
};

/* A fixture with the clock at 1000 ms and no client yet. */
struct ads_fixture *ads_fixture_new(void);
void ads_fixture_free(struct ads_fixture *f);
/* Create the client, for n_servers servers named "primary", "fallback" and "third"; it
 * starts connecting to the first at once. */
void ads_start(struct ads_fixture *f, unsigned n_servers);

/* The dependency manager's part: watch a resource (and tell the client). */
void ads_watch(struct ads_fixture *f, enum xlb_xds_type type, const char *name);
struct xlb_xds_resource *ads_resource(struct ads_fixture *f, enum xlb_xds_type type,
                                      const char *name);

/* The current stream: that of the last channel the client opened. */
struct xlb_grpc_stream *ads_stream(void);

/* A resource as a packed Any of type_url, from proto3 JSON of the resource type. */
Google__Protobuf__Any *ads_any(const char *type_url, const char *json);
/* An Any with arbitrary contents (a wrong type, bytes that do not decode). */
Google__Protobuf__Any *ads_raw_any(const char *type_url, const void *value, size_t len);
/* Send a DiscoveryResponse on s; the Anys are freed. */
void ads_respond(struct xlb_grpc_stream *s, const char *type_url, const char *version,
                 const char *nonce, Google__Protobuf__Any **resources, size_t n);

/* The request's error_detail message, or NULL for an ACK. */
const char *ads_error_detail(const DiscoveryRequest *req);

#endif
