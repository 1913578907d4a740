/*
 * protobuf-c message -> proto3 JSON. Field names stay as in the .proto (snake_case), as Envoy's
 * config dump prints them; fields holding their default value are left out, as proto3 JSON
 * does; fields with explicit presence (oneof members, proto2/optional) are printed when set.
 */
#include "pj_internal.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The shortest decimal that reads back as the same float, so 0.1f prints as 0.1. */
static double shortest_float(float value)
{
    char text[32];
    for (int precision = 6; precision < 9; precision++) {
        snprintf(text, sizeof(text), "%.*g", precision, (double)value);
        if ((float)strtod(text, NULL) == value)
            return strtod(text, NULL);
    }
    return (double)value;
}

static cJSON *print_floating(double value)
{
    if (isnan(value))
        return cJSON_CreateString("NaN");
    if (isinf(value))
        return cJSON_CreateString(value > 0 ? "Infinity" : "-Infinity");
    return cJSON_CreateNumber(value);
}

static cJSON *print_enum(const ProtobufCEnumDescriptor *desc, int value)
{
    const ProtobufCEnumValue *named = protobuf_c_enum_descriptor_get_value(desc, value);
    return named ? cJSON_CreateString(named->name) : cJSON_CreateNumber(value);
}

static cJSON *print_bytes(const ProtobufCBinaryData *data)
{
    char *text = pj_base64_encode(data->data, data->len);
    if (text == NULL)
        return NULL;
    cJSON *item = cJSON_CreateString(text);
    free(text);
    return item;
}

/* proto3 JSON writes 64-bit integers as strings: JavaScript numbers cannot hold them. */
static cJSON *print_int64(int64_t value, bool is_signed)
{
    char text[24];
    if (is_signed)
        snprintf(text, sizeof(text), "%" PRId64, value);
    else
        snprintf(text, sizeof(text), "%" PRIu64, (uint64_t)value);
    return cJSON_CreateString(text);
}

cJSON *pj_print_scalar(const ProtobufCFieldDescriptor *field, const void *slot)
{
    switch (field->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
        return cJSON_CreateNumber(*(const int32_t *)slot);
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        return cJSON_CreateNumber(*(const uint32_t *)slot);
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        return print_int64(*(const int64_t *)slot, true);
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        return print_int64(*(const int64_t *)slot, false);
    case PROTOBUF_C_TYPE_FLOAT:
        return print_floating(isfinite(*(const float *)slot) ? shortest_float(*(const float *)slot)
                                                             : (double)*(const float *)slot);
    case PROTOBUF_C_TYPE_DOUBLE:
        return print_floating(*(const double *)slot);
    case PROTOBUF_C_TYPE_BOOL:
        return cJSON_CreateBool(*(const protobuf_c_boolean *)slot);
    case PROTOBUF_C_TYPE_ENUM:
        return print_enum(field->descriptor, *(const int *)slot);
    case PROTOBUF_C_TYPE_STRING: {
        const char *text = *(char *const *)slot;
        return cJSON_CreateString(text ? text : "");
    }
    case PROTOBUF_C_TYPE_BYTES:
        return print_bytes(slot);
    case PROTOBUF_C_TYPE_MESSAGE:
        break;
    }
    return NULL;
}

/* A message-typed element that may be NULL (a map value never sent): printed as its default. */
static cJSON *print_message_or_default(struct pj_printer *p, const ProtobufCMessageDescriptor *desc,
                                       const ProtobufCMessage *msg)
{
    if (msg != NULL)
        return pj_print_message(p, msg);
    ProtobufCMessage *empty = malloc(desc->sizeof_message);
    if (empty == NULL)
        return NULL;
    desc->message_init(empty);
    cJSON *item = pj_print_message(p, empty);
    free(empty);
    return item;
}

static cJSON *print_element(struct pj_printer *p, const ProtobufCFieldDescriptor *field,
                            const void *slot)
{
    if (field->type == PROTOBUF_C_TYPE_MESSAGE)
        return print_message_or_default(p, field->descriptor, *(ProtobufCMessage *const *)slot);
    return pj_print_scalar(field, slot);
}

static cJSON *print_list(struct pj_printer *p, const ProtobufCFieldDescriptor *field,
                         const ProtobufCMessage *msg)
{
    size_t n = *(const size_t *)pj_const_member(msg, field->quantifier_offset);
    const char *array = *(char *const *)pj_const_member(msg, field->offset);
    size_t size = pj_element_size(field->type);
    cJSON *list = cJSON_CreateArray();
    for (size_t i = 0; list != NULL && i < n; i++) {
        cJSON *item = print_element(p, field, array + i * size);
        if (item == NULL || !cJSON_AddItemToArray(list, item)) {
            cJSON_Delete(item);
            cJSON_Delete(list);
            list = NULL;
        }
    }
    return list;
}

/* A map key as its JSON object key: strings as they are, numbers in decimal, bools by name. */
static bool map_key_text(const ProtobufCFieldDescriptor *key_field, const void *slot, char *out,
                         size_t size, const char **key)
{
    if (key_field->type == PROTOBUF_C_TYPE_STRING) {
        *key = *(char *const *)slot ? *(char *const *)slot : "";
        return true;
    }
    if (key_field->type == PROTOBUF_C_TYPE_BOOL) {
        *key = *(const protobuf_c_boolean *)slot ? "true" : "false";
        return true;
    }
    cJSON *number = pj_print_scalar(key_field, slot);
    if (number == NULL)
        return false;
    if (cJSON_IsString(number))
        snprintf(out, size, "%s", number->valuestring);
    else
        snprintf(out, size, "%.0f", number->valuedouble);
    cJSON_Delete(number);
    *key = out;
    return true;
}

static cJSON *print_map(struct pj_printer *p, const ProtobufCFieldDescriptor *field,
                        const ProtobufCMessage *msg)
{
    size_t n = *(const size_t *)pj_const_member(msg, field->quantifier_offset);
    ProtobufCMessage *const *entries =
        *(ProtobufCMessage *const *const *)pj_const_member(msg, field->offset);
    const ProtobufCMessageDescriptor *entry_desc = field->descriptor;
    const ProtobufCFieldDescriptor *key_field = &entry_desc->fields[0];
    const ProtobufCFieldDescriptor *value_field = &entry_desc->fields[1];
    cJSON *map = cJSON_CreateObject();
    for (size_t i = 0; map != NULL && i < n; i++) {
        char text[24];
        const char *key;
        cJSON *value = NULL;
        if (map_key_text(key_field, pj_const_member(entries[i], key_field->offset), text,
                         sizeof(text), &key))
            value = print_element(p, value_field, pj_const_member(entries[i], value_field->offset));
        if (value == NULL || !cJSON_AddItemToObject(map, key, value)) {
            cJSON_Delete(value);
            cJSON_Delete(map);
            map = NULL;
        }
    }
    return map;
}

static bool is_zero(const ProtobufCFieldDescriptor *field, const void *slot)
{
    switch (field->type) {
    case PROTOBUF_C_TYPE_STRING: {
        const char *text = *(char *const *)slot;
        return text == NULL || text[0] == '\0';
    }
    case PROTOBUF_C_TYPE_BYTES:
        return ((const ProtobufCBinaryData *)slot)->len == 0;
    case PROTOBUF_C_TYPE_MESSAGE:
        return *(ProtobufCMessage *const *)slot == NULL;
    case PROTOBUF_C_TYPE_FLOAT:
        return *(const float *)slot == 0 && !signbit(*(const float *)slot);
    case PROTOBUF_C_TYPE_DOUBLE:
        return *(const double *)slot == 0 && !signbit(*(const double *)slot);
    default: {
        static const uint8_t zeros[sizeof(uint64_t)];
        return memcmp(slot, zeros, pj_element_size(field->type)) == 0;
    }
    }
}

static bool is_present(const ProtobufCFieldDescriptor *field, const ProtobufCMessage *msg)
{
    const void *quantifier = pj_const_member(msg, field->quantifier_offset);
    if (field->label == PROTOBUF_C_LABEL_REPEATED)
        return *(const size_t *)quantifier > 0;
    if (field->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
        return *(const uint32_t *)quantifier == field->id;
    const void *slot = pj_const_member(msg, field->offset);
    if (field->label == PROTOBUF_C_LABEL_OPTIONAL && field->quantifier_offset != 0)
        return *(const protobuf_c_boolean *)quantifier;
    if (field->label == PROTOBUF_C_LABEL_OPTIONAL && field->type == PROTOBUF_C_TYPE_MESSAGE)
        return *(ProtobufCMessage *const *)slot != NULL;
    return !is_zero(field, slot);
}

static cJSON *print_field(struct pj_printer *p, const ProtobufCFieldDescriptor *field,
                          const ProtobufCMessage *msg)
{
    if (field->label != PROTOBUF_C_LABEL_REPEATED)
        return print_element(p, field, pj_const_member(msg, field->offset));
    if (pj_is_map_field(field))
        return print_map(p, field, msg);
    return print_list(p, field, msg);
}

bool pj_print_fields(struct pj_printer *p, const ProtobufCMessage *msg, cJSON *obj)
{
    const ProtobufCMessageDescriptor *desc = msg->descriptor;
    for (unsigned i = 0; i < desc->n_fields; i++) {
        const ProtobufCFieldDescriptor *field = &desc->fields[i];
        if (!is_present(field, msg))
            continue;
        cJSON *value = print_field(p, field, msg);
        if (value == NULL || !cJSON_AddItemToObject(obj, field->name, value)) {
            cJSON_Delete(value);
            return false;
        }
    }
    return true;
}

cJSON *pj_print_message(struct pj_printer *p, const ProtobufCMessage *msg)
{
    if (p->depth >= XLB_PROTO_JSON_MAX_DEPTH)
        return NULL;
    p->depth++;
    cJSON *obj;
    if (pj_wkt_is_special(msg->descriptor)) {
        obj = pj_wkt_print(p, msg);
    } else {
        obj = cJSON_CreateObject();
        if (obj != NULL && !pj_print_fields(p, msg, obj)) {
            cJSON_Delete(obj);
            obj = NULL;
        }
    }
    p->depth--;
    return obj;
}

cJSON *xlb_proto_json_print(const ProtobufCMessage *msg)
{
    struct pj_printer printer = {0};
    return pj_print_message(&printer, msg);
}
