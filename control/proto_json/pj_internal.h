/*
 * Shared between the reader, the printer and the well-known types of proto_json; not part of
 * its interface.
 */
#ifndef XLB_PJ_INTERNAL_H
#define XLB_PJ_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto_json.h"

/* Long enough for a path XLB_PROTO_JSON_MAX_DEPTH levels deep with ordinary field names. */
#define PJ_PATH_MAX 1024

/* ---- the reader's state ---- */

struct pj_reader {
    struct xlb_errors *errs;
    unsigned n_errors; /* problems found, even those errs had no room for */
    unsigned depth;    /* messages entered */
    size_t path_len;
    char path[PJ_PATH_MAX];
};

void pj_error(struct pj_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The path grows as the reader descends; each push returns what pj_path_pop restores. */
size_t pj_path_push_key(struct pj_reader *r, const char *key);
size_t pj_path_push_index(struct pj_reader *r, unsigned index);
size_t pj_path_push_map_key(struct pj_reader *r, const char *key);
void pj_path_pop(struct pj_reader *r, size_t saved);

/* A short rendering of a JSON value for error lines: "5x" quoted, numbers as written. */
void pj_describe(const cJSON *json, char *out, size_t size);

/*
 * Reads json into msg, an initialised message (allocated by the caller and owned by whoever
 * frees the tree). On problems it reports them and leaves msg consistent, so freeing it with
 * protobuf_c_message_free_unpacked stays correct.
 */
void pj_read_message(struct pj_reader *r, const cJSON *json, ProtobufCMessage *msg);

/* A fresh message initialised with its descriptor's message_init, or NULL (reported). */
ProtobufCMessage *pj_new_message(struct pj_reader *r, const ProtobufCMessageDescriptor *desc);

/* Reads one scalar (not message) value of field's type into slot. Returns false if reported. */
bool pj_read_scalar(struct pj_reader *r, const ProtobufCFieldDescriptor *field, const cJSON *json,
                    void *slot);

/* ---- field layout, as protobuf-c's own unpacker lays messages out ---- */

static inline void *pj_member(ProtobufCMessage *msg, unsigned offset)
{
    return (char *)msg + offset;
}

static inline const void *pj_const_member(const ProtobufCMessage *msg, unsigned offset)
{
    return (const char *)msg + offset;
}

/* Bytes one element of this type takes in a message or a repeated array. */
size_t pj_element_size(ProtobufCType type);

/* protoc turns `map<K, V> xxx` into `repeated XxxEntry xxx` with key = 1 and value = 2. */
bool pj_is_map_field(const ProtobufCFieldDescriptor *field);

/* The field named `key`, by its .proto name or its lowerCamelCase JSON name. */
const ProtobufCFieldDescriptor *pj_field_by_json_key(const ProtobufCMessageDescriptor *desc,
                                                     const char *key);

/* ---- well-known types whose JSON form is not an object of fields ---- */

/* True if desc's JSON form is special (Any, Duration, wrappers, Struct, Value, ListValue). */
bool pj_wkt_is_special(const ProtobufCMessageDescriptor *desc);

/* Reads the special form of msg's type. Returns false if it is not special. */
bool pj_wkt_read(struct pj_reader *r, const cJSON *json, ProtobufCMessage *msg);

struct pj_printer {
    unsigned depth;
};

/* Prints any message; NULL when out of memory or too deep. */
cJSON *pj_print_message(struct pj_printer *p, const ProtobufCMessage *msg);

/* Prints the fields of msg into obj (proto3 presence rules). Returns false on failure. */
bool pj_print_fields(struct pj_printer *p, const ProtobufCMessage *msg, cJSON *obj);

/* Prints the special form of msg's type (see pj_wkt_is_special); NULL on failure. */
cJSON *pj_wkt_print(struct pj_printer *p, const ProtobufCMessage *msg);

/* Prints one scalar (not message) value of field's type stored at slot. */
cJSON *pj_print_scalar(const ProtobufCFieldDescriptor *field, const void *slot);

/* ---- base64 (standard alphabet; the URL-safe one and missing padding are read too) ---- */

bool pj_base64_decode(const char *text, ProtobufCBinaryData *out);
char *pj_base64_encode(const uint8_t *data, size_t len);

#endif
