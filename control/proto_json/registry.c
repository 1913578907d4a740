/*
 * Type URL -> descriptor, for reading and printing google.protobuf.Any.
 *
 * The registry is every message reachable from the roots below through message fields, so a
 * nested type (Cluster.RingHashLbConfig, a map entry) is known without being listed. A new
 * top-level message that can travel in an Any only needs adding to roots[].
 */
#include "pj_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envoy/config/cluster/v3/cluster.pb-c.h"
#include "envoy/config/endpoint/v3/endpoint.pb-c.h"
#include "envoy/config/listener/v3/listener.pb-c.h"
#include "envoy/config/route/v3/route.pb-c.h"
#include "envoy/config/route/v3/route_components.pb-c.h"
#include "envoy/extensions/clusters/aggregate/v3/cluster.pb-c.h"
#include "envoy/extensions/filters/http/router/v3/router.pb-c.h"
#include "envoy/extensions/filters/http/stateful_session/v3/stateful_session.pb-c.h"
#include "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.pb-c.h"
#include "envoy/extensions/http/stateful_session/cookie/v3/cookie.pb-c.h"
#include "envoy/extensions/load_balancing_policies/least_request/v3/least_request.pb-c.h"
#include "envoy/extensions/load_balancing_policies/pick_first/v3/pick_first.pb-c.h"
#include "envoy/extensions/load_balancing_policies/client_side_weighted_round_robin/v3/client_side_weighted_round_robin.pb-c.h"
#include "envoy/extensions/upstreams/http/v3/http_protocol_options.pb-c.h"
#include "envoy/extensions/transport_sockets/tls/v3/tls.pb-c.h"
#include "envoy/service/discovery/v3/discovery.pb-c.h"
#include "envoy/service/load_stats/v3/lrs.pb-c.h"
#include "envoy/type/v3/percent.pb-c.h"
#include "google/protobuf/any.pb-c.h"
#include "google/protobuf/duration.pb-c.h"
#include "google/protobuf/empty.pb-c.h"
#include "google/protobuf/struct.pb-c.h"
#include "google/protobuf/wrappers.pb-c.h"
#include "google/rpc/status.pb-c.h"
#include "udpa/type/v1/typed_struct.pb-c.h"
#include "xds/data/orca/v3/orca_load_report.pb-c.h"
#include "xds/type/v3/typed_struct.pb-c.h"

/* Far above the ~100 messages of proto/; overflowing it aborts on first use (unit tests). */
#define REGISTRY_CAPACITY 512

static const ProtobufCMessageDescriptor *const roots[] = {
    /* xDS resources and the extensions they carry in an Any */
    &envoy__config__listener__v3__listener__descriptor,
    &envoy__config__route__v3__route_configuration__descriptor,
    &envoy__config__cluster__v3__cluster__descriptor,
    &envoy__config__endpoint__v3__cluster_load_assignment__descriptor,
    &envoy__config__route__v3__filter_config__descriptor,
    &envoy__extensions__filters__network__http_connection_manager__v3__http_connection_manager__descriptor,
    &envoy__extensions__filters__http__router__v3__router__descriptor,
    &envoy__extensions__filters__http__stateful_session__v3__stateful_session__descriptor,
    &envoy__extensions__filters__http__stateful_session__v3__stateful_session_per_route__descriptor,
    &envoy__extensions__http__stateful_session__cookie__v3__cookie_based_session_state__descriptor,
    &envoy__extensions__clusters__aggregate__v3__cluster_config__descriptor,
    &envoy__extensions__load_balancing_policies__least_request__v3__least_request__descriptor,
    &envoy__extensions__load_balancing_policies__pick_first__v3__pick_first__descriptor,
    &envoy__extensions__load_balancing_policies__client_side_weighted_round_robin__v3__client_side_weighted_round_robin__descriptor,
    &envoy__extensions__upstreams__http__v3__http_protocol_options__descriptor,
    &envoy__extensions__transport_sockets__tls__v3__upstream_tls_context__descriptor,
    &udpa__type__v1__typed_struct__descriptor,
    &xds__type__v3__typed_struct__descriptor,
    /* the ADS and LRS streams */
    &envoy__service__discovery__v3__discovery_request__descriptor,
    &envoy__service__discovery__v3__discovery_response__descriptor,
    &envoy__service__discovery__v3__resource__descriptor, /* resource-in-sotw wrapper */
    &envoy__service__load_stats__v3__load_stats_request__descriptor,
    &envoy__service__load_stats__v3__load_stats_response__descriptor,
    &google__rpc__status__descriptor,
    /* the ORCA load report backends send in trailers (A51), for tools and tests */
    &xds__data__orca__v3__orca_load_report__descriptor,
    /* referenced by no field of the trimmed files, yet part of the API */
    &envoy__type__v3__percent__descriptor,
    /* well-known types */
    &google__protobuf__any__descriptor,
    &google__protobuf__duration__descriptor,
    &google__protobuf__empty__descriptor,
    &google__protobuf__struct__descriptor,
    &google__protobuf__value__descriptor,
    &google__protobuf__list_value__descriptor,
    &google__protobuf__double_value__descriptor,
    &google__protobuf__float_value__descriptor,
    &google__protobuf__int64_value__descriptor,
    &google__protobuf__uint64_value__descriptor,
    &google__protobuf__int32_value__descriptor,
    &google__protobuf__uint32_value__descriptor,
    &google__protobuf__bool_value__descriptor,
    &google__protobuf__string_value__descriptor,
    &google__protobuf__bytes_value__descriptor,
};

static const ProtobufCMessageDescriptor *registry[REGISTRY_CAPACITY];
static size_t registry_size;
static pthread_once_t registry_once = PTHREAD_ONCE_INIT;

static bool is_registered(const ProtobufCMessageDescriptor *desc)
{
    for (size_t i = 0; i < registry_size; i++) {
        if (registry[i] == desc)
            return true;
    }
    return false;
}

static void add(const ProtobufCMessageDescriptor *desc)
{
    if (is_registered(desc))
        return;
    if (registry_size == REGISTRY_CAPACITY) {
        fprintf(stderr, "proto_json: more than %d message types\n", REGISTRY_CAPACITY);
        abort();
    }
    registry[registry_size++] = desc;
}

/* Breadth-first over message fields, using the registry itself as the queue. */
static void add_closure(const ProtobufCMessageDescriptor *root)
{
    size_t next = registry_size;
    add(root);
    for (; next < registry_size; next++) {
        const ProtobufCMessageDescriptor *desc = registry[next];
        for (unsigned i = 0; i < desc->n_fields; i++) {
            if (desc->fields[i].type == PROTOBUF_C_TYPE_MESSAGE)
                add(desc->fields[i].descriptor);
        }
    }
}

static int by_name(const void *a, const void *b)
{
    const ProtobufCMessageDescriptor *const *x = a;
    const ProtobufCMessageDescriptor *const *y = b;
    return strcmp((*x)->name, (*y)->name);
}

static void build_registry(void)
{
    for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
        add_closure(roots[i]);
    qsort(registry, registry_size, sizeof(registry[0]), by_name);
}

static int name_vs_desc(const void *key, const void *element)
{
    const ProtobufCMessageDescriptor *const *desc = element;
    return strcmp(key, (*desc)->name);
}

const ProtobufCMessageDescriptor *xlb_proto_type_by_url(const char *type_url)
{
    const char *slash = type_url ? strrchr(type_url, '/') : NULL;
    if (slash == NULL)
        return NULL;
    pthread_once(&registry_once, build_registry);
    const ProtobufCMessageDescriptor *const *found =
        bsearch(slash + 1, registry, registry_size, sizeof(registry[0]), name_vs_desc);
    return found ? *found : NULL;
}
