/*
 * proto3 JSON <-> protobuf-c messages, driven by the descriptors protoc-c generates for proto/.
 *
 * Static resources (xlb.static_resources in the bootstrap) are read with it into the very same
 * messages an xDS response unpacks to, so that both share one validation path; `xlbctl config
 * dump` prints any resource with it. docs/static-resources.md describes the accepted forms and
 * where xlb departs from the reference mapping (unknown fields are skipped, not rejected).
 */
#ifndef XLB_PROTO_JSON_H
#define XLB_PROTO_JSON_H

#include <cjson/cJSON.h>
#include <protobuf-c/protobuf-c.h>

#include "json_read.h"

/* Messages (and Any, Struct, list values) nested deeper than this are refused, not recursed. */
#define XLB_PROTO_JSON_MAX_DEPTH 64

/*
 * Reads the JSON value `json` as a message of type `desc`. `path` names the value in error lines
 * ("clusters[0]"). Returns a message to free with protobuf_c_message_free_unpacked(msg, NULL),
 * or NULL when anything was wrong: then every problem found was appended to errs as
 * "path: reason". Unknown fields are skipped.
 */
ProtobufCMessage *xlb_proto_json_read(const ProtobufCMessageDescriptor *desc, const cJSON *json,
                                      const char *path, struct xlb_errors *errs);

/*
 * Prints a message as proto3 JSON with the .proto field names (snake_case, as Envoy's config
 * dump does). Returns NULL when out of memory or nested deeper than XLB_PROTO_JSON_MAX_DEPTH.
 */
cJSON *xlb_proto_json_print(const ProtobufCMessage *msg);

/*
 * The descriptor of a type URL ("type.googleapis.com/envoy.config.cluster.v3.Cluster"; whatever
 * precedes the last '/' is ignored), or NULL when it is not a message of proto/.
 */
const ProtobufCMessageDescriptor *xlb_proto_type_by_url(const char *type_url);

#endif
