/*
 * libFuzzer targets for the xDS validators (control/xds): the input bytes are unpacked as a
 * resource type, as an xDS response would deliver it, and validated; whatever was built is
 * freed. ASan and UBSan do the checking. meson builds one target per resource type
 * (XLB_FUZZ_TYPE 1..4: fuzz_validate_listener, _route, _cluster, _endpoints), so each
 * validator gets coverage guidance of its own, and one (XLB_FUZZ_TYPE 0, fuzz_validate) that
 * feeds every input to all four.
 */
#include <stddef.h>
#include <stdint.h>

#include "cluster_config.h"
#include "endpoint_config.h"
#include "listener_config.h"
#include "route_config.h"

static ProtobufCMessage *unpack(const ProtobufCMessageDescriptor *desc, const uint8_t *data,
                                size_t size)
{
    return protobuf_c_message_unpack(desc, NULL, size, data);
}

static void listener(const uint8_t *data, size_t size, struct xlb_errors *errs)
{
    ProtobufCMessage *msg = unpack(&envoy__config__listener__v3__listener__descriptor, data, size);
    if (msg == NULL)
        return;
    struct xlb_listener_config cfg;
    if (xlb_validate_listener((Envoy__Config__Listener__V3__Listener *)msg, &cfg, errs) == 0)
        xlb_listener_config_free(&cfg);
    protobuf_c_message_free_unpacked(msg, NULL);
}

static void route(const uint8_t *data, size_t size, struct xlb_errors *errs)
{
    ProtobufCMessage *msg =
        unpack(&envoy__config__route__v3__route_configuration__descriptor, data, size);
    if (msg == NULL)
        return;
    struct xlb_route_config cfg;
    if (xlb_validate_route_config((Envoy__Config__Route__V3__RouteConfiguration *)msg, &cfg,
                                  errs) == 0)
        xlb_route_config_free(&cfg);
    protobuf_c_message_free_unpacked(msg, NULL);
}

static void cluster(const uint8_t *data, size_t size, struct xlb_errors *errs)
{
    ProtobufCMessage *msg = unpack(&envoy__config__cluster__v3__cluster__descriptor, data, size);
    if (msg == NULL)
        return;
    struct xlb_cluster_config cfg;
    if (xlb_validate_cluster((Envoy__Config__Cluster__V3__Cluster *)msg, &cfg, errs) == 0)
        xlb_cluster_config_free(&cfg);
    protobuf_c_message_free_unpacked(msg, NULL);
}

static void endpoints(const uint8_t *data, size_t size, struct xlb_errors *errs)
{
    ProtobufCMessage *msg =
        unpack(&envoy__config__endpoint__v3__cluster_load_assignment__descriptor, data, size);
    if (msg == NULL)
        return;
    struct xlb_endpoint_config cfg;
    if (xlb_validate_endpoints((Envoy__Config__Endpoint__V3__ClusterLoadAssignment *)msg, &cfg,
                               errs) == 0)
        xlb_endpoint_config_free(&cfg);
    protobuf_c_message_free_unpacked(msg, NULL);
}

#ifndef XLB_FUZZ_TYPE
#define XLB_FUZZ_TYPE 0
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data,
                           size_t size); /* libFuzzer calls it; no header declares it */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct xlb_errors errs = {0};
    if (XLB_FUZZ_TYPE == 0 || XLB_FUZZ_TYPE == 1)
        listener(data, size, &errs);
    if (XLB_FUZZ_TYPE == 0 || XLB_FUZZ_TYPE == 2)
        route(data, size, &errs);
    if (XLB_FUZZ_TYPE == 0 || XLB_FUZZ_TYPE == 3)
        cluster(data, size, &errs);
    if (XLB_FUZZ_TYPE == 0 || XLB_FUZZ_TYPE == 4)
        endpoints(data, size, &errs);
    xlb_errors_free(&errs);
    return 0;
}
