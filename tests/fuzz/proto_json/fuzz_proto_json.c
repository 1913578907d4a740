/*
 * libFuzzer target for proto_json: the input is parsed as JSON and read as each top-level
 * resource type; whatever reads is printed, packed and freed. Crashes, leaks and sanitizer
 * reports are the findings; read errors are expected outcomes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto_json.h"

#include "envoy/config/cluster/v3/cluster.pb-c.h"
#include "envoy/config/endpoint/v3/endpoint.pb-c.h"
#include "envoy/config/listener/v3/listener.pb-c.h"
#include "envoy/config/route/v3/route.pb-c.h"
#include "google/protobuf/any.pb-c.h"

static const ProtobufCMessageDescriptor *const resource_types[] = {
    &envoy__config__listener__v3__listener__descriptor,
    &envoy__config__route__v3__route_configuration__descriptor,
    &envoy__config__cluster__v3__cluster__descriptor,
    &envoy__config__endpoint__v3__cluster_load_assignment__descriptor,
    &google__protobuf__any__descriptor,
};

/* Printing and a binary round trip exercise the printer on whatever the reader accepted. */
static void exercise(ProtobufCMessage *msg)
{
    cJSON *printed = xlb_proto_json_print(msg);
    char *text = printed ? cJSON_PrintUnformatted(printed) : NULL;
    free(text);
    cJSON_Delete(printed);

    size_t len = protobuf_c_message_get_packed_size(msg);
    uint8_t *wire = malloc(len ? len : 1);
    if (wire == NULL)
        return;
    protobuf_c_message_pack(msg, wire);
    ProtobufCMessage *copy = protobuf_c_message_unpack(msg->descriptor, NULL, len, wire);
    if (copy == NULL)
        abort(); /* what the reader built must pack into something protobuf-c reads back */
    protobuf_c_message_free_unpacked(copy, NULL);
    free(wire);
}

int LLVMFuzzerTestOneInput(const uint8_t *data,
                           size_t size); /* libFuzzer calls it; no header declares it */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    cJSON *json = cJSON_Parse(text);
    free(text);
    if (json == NULL)
        return 0;
    for (size_t i = 0; i < sizeof(resource_types) / sizeof(resource_types[0]); i++) {
        struct xlb_errors errs = {0};
        ProtobufCMessage *msg = xlb_proto_json_read(resource_types[i], json, "fuzz", &errs);
        if (msg != NULL) {
            exercise(msg);
            protobuf_c_message_free_unpacked(msg, NULL);
        }
        xlb_errors_free(&errs);
    }
    cJSON_Delete(json);
    return 0;
}
