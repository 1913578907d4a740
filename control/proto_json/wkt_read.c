/*
 * Reading the well-known types whose proto3 JSON form is not an object of fields: Any (the
 * object of its packed message plus "@type"), Duration ("1.5s"), the wrappers (plain values),
 * and Struct/Value/ListValue (arbitrary JSON).
 */
#include "pj_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "google/protobuf/any.pb-c.h"
#include "google/protobuf/duration.pb-c.h"
#include "google/protobuf/struct.pb-c.h"
#include "google/protobuf/wrappers.pb-c.h"

/* The range proto3 gives Duration: about 10,000 years either way. */
#define DURATION_MAX_SECONDS 315576000000LL

static const ProtobufCMessageDescriptor *const wrapper_types[] = {
    &google__protobuf__double_value__descriptor, &google__protobuf__float_value__descriptor,
    &google__protobuf__int64_value__descriptor,  &google__protobuf__uint64_value__descriptor,
    &google__protobuf__int32_value__descriptor,  &google__protobuf__uint32_value__descriptor,
    &google__protobuf__bool_value__descriptor,   &google__protobuf__string_value__descriptor,
    &google__protobuf__bytes_value__descriptor,
};

static bool is_wrapper(const ProtobufCMessageDescriptor *desc)
{
    for (size_t i = 0; i < sizeof(wrapper_types) / sizeof(wrapper_types[0]); i++) {
        if (desc == wrapper_types[i])
            return true;
    }
    return false;
}

bool pj_wkt_is_special(const ProtobufCMessageDescriptor *desc)
{
    return desc == &google__protobuf__any__descriptor ||
           desc == &google__protobuf__duration__descriptor ||
           desc == &google__protobuf__struct__descriptor ||
           desc == &google__protobuf__value__descriptor ||
           desc == &google__protobuf__list_value__descriptor || is_wrapper(desc);
}

/* ---- Duration: [-]seconds[.fraction]s, fraction of 1 to 9 digits ---- */

static bool parse_duration(const char *text, int64_t *seconds, int32_t *nanos)
{
    const char *p = text;
    bool negative = *p == '-';
    if (negative)
        p++;
    size_t n_int = strspn(p, "0123456789");
    if (n_int == 0 || n_int > 12)
        return false;
    int64_t secs = strtoll(p, NULL, 10);
    p += n_int;
    int32_t frac = 0;
    if (*p == '.') {
        size_t n_frac = strspn(++p, "0123456789");
        if (n_frac == 0 || n_frac > 9)
            return false;
        for (size_t i = 0; i < 9; i++)
            frac = frac * 10 + (i < n_frac ? p[i] - '0' : 0);
        p += n_frac;
    }
    if (strcmp(p, "s") != 0 || secs > DURATION_MAX_SECONDS)
        return false;
    *seconds = negative ? -secs : secs;
    *nanos = negative ? -frac : frac;
    return true;
}

static void read_duration(struct pj_reader *r, const cJSON *json, ProtobufCMessage *msg)
{
    Google__Protobuf__Duration *duration = (Google__Protobuf__Duration *)msg;
    char seen[64];
    pj_describe(json, seen, sizeof(seen));
    if (!cJSON_IsString(json) ||
        !parse_duration(json->valuestring, &duration->seconds, &duration->nanos))
        pj_error(r, "%s is not a Duration", seen);
}

/* ---- wrappers: the JSON value is the wrapped field's value ---- */

static void read_wrapper(struct pj_reader *r, const cJSON *json, ProtobufCMessage *msg)
{
    const ProtobufCFieldDescriptor *field = &msg->descriptor->fields[0];
    pj_read_scalar(r, field, json, pj_member(msg, field->offset));
}

/* ---- Any: "@type" names the packed message; the other members are its fields ---- */

/* Reads the message the Any carries and packs it into any->value. */
static void pack_any(struct pj_reader *r, const cJSON *json, const char *type_url,
                     const ProtobufCMessageDescriptor *desc, Google__Protobuf__Any *any)
{
    ProtobufCMessage *inner = pj_new_message(r, desc);
    if (inner == NULL)
        return;
    unsigned errors_before = r->n_errors;
    if (pj_wkt_is_special(desc)) {
        /* The special forms sit under "value": {"@type": ".../Duration", "value": "1s"}. */
        const cJSON *value = cJSON_GetObjectItemCaseSensitive(json, "value");
        if (value != NULL) {
            size_t saved = pj_path_push_key(r, "value");
            pj_read_message(r, value, inner);
            pj_path_pop(r, saved);
        }
    } else {
        pj_read_message(r, json, inner); /* "@type" is no field of inner: skipped */
    }
    if (r->n_errors == errors_before) {
        size_t len = protobuf_c_message_get_packed_size(inner);
        any->value.data = malloc(len ? len : 1);
        any->type_url = strdup(type_url);
        if (any->value.data == NULL || any->type_url == NULL) {
            pj_error(r, "out of memory");
        } else {
            any->value.len = protobuf_c_message_pack(inner, any->value.data);
        }
    }
    protobuf_c_message_free_unpacked(inner, NULL);
}

static void read_any(struct pj_reader *r, const cJSON *json, ProtobufCMessage *msg)
{
    if (!cJSON_IsObject(json)) {
        pj_error(r, "must be an object");
        return;
    }
    if (json->child == NULL)
        return; /* {} is the empty Any */
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(json, "@type");
    if (!cJSON_IsString(type)) {
        pj_error(r, "\"@type\" must be given as a string");
        return;
    }
    const ProtobufCMessageDescriptor *desc = xlb_proto_type_by_url(type->valuestring);
    if (desc == NULL) {
        pj_error(r, "unknown @type \"%.100s\"", type->valuestring);
        return;
    }
    pack_any(r, json, type->valuestring, desc, (Google__Protobuf__Any *)msg);
}

/* ---- Struct, Value, ListValue: any JSON ---- */

static ProtobufCMessage *new_value(struct pj_reader *r)
{
    return pj_new_message(r, &google__protobuf__value__descriptor);
}

static void read_value(struct pj_reader *r, const cJSON *json, ProtobufCMessage *msg);

static void read_struct(struct pj_reader *r, const cJSON *json, ProtobufCMessage *msg)
{
    Google__Protobuf__Struct *st = (Google__Protobuf__Struct *)msg;
    if (!cJSON_IsObject(json)) {
        pj_error(r, "must be an object");
        return;
    }
    size_t n = (size_t)cJSON_GetArraySize(json);
    st->fields = n ? calloc(n, sizeof(*st->fields)) : NULL;
    if (n && st->fields == NULL) {
        pj_error(r, "out of memory");
        return;
    }
    const cJSON *item;
    cJSON_ArrayForEach(item, json) {
        Google__Protobuf__Struct__FieldsEntry *entry = malloc(sizeof(*entry));
        ProtobufCMessage *value = entry ? new_value(r) : NULL;
        if (value == NULL) {
            free(entry);
            pj_error(r, "out of memory");
            return;
        }
        google__protobuf__struct__fields_entry__init(entry);
        entry->value = (Google__Protobuf__Value *)value;
        st->fields[st->n_fields++] = entry;
        entry->key = strdup(item->string);
        size_t saved = pj_path_push_map_key(r, item->string);
        if (entry->key == NULL)
            pj_error(r, "out of memory");
        else
            pj_read_message(r, item, value);
        pj_path_pop(r, saved);
    }
}

static void read_list_value(struct pj_reader *r, const cJSON *json, ProtobufCMessage *msg)
{
    Google__Protobuf__ListValue *list = (Google__Protobuf__ListValue *)msg;
    if (!cJSON_IsArray(json)) {
        pj_error(r, "must be an array");
        return;
    }
    size_t n = (size_t)cJSON_GetArraySize(json);
    list->values = n ? calloc(n, sizeof(*list->values)) : NULL;
    if (n && list->values == NULL) {
        pj_error(r, "out of memory");
        return;
    }
    unsigned index = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, json) {
        ProtobufCMessage *value = new_value(r);
        if (value == NULL)
            return;
        list->values[list->n_values++] = (Google__Protobuf__Value *)value;
        size_t saved = pj_path_push_index(r, index++);
        pj_read_message(r, item, value);
        pj_path_pop(r, saved);
    }
}

/* A nested Struct or ListValue inside a Value: allocated, attached, then read. */
static void read_nested(struct pj_reader *r, const cJSON *json, Google__Protobuf__Value *value,
                        Google__Protobuf__Value__KindCase kind)
{
    bool is_struct = kind == GOOGLE__PROTOBUF__VALUE__KIND_STRUCT_VALUE;
    ProtobufCMessage *nested =
        pj_new_message(r, is_struct ? &google__protobuf__struct__descriptor
                                    : &google__protobuf__list_value__descriptor);
    if (nested == NULL)
        return;
    value->kind_case = kind;
    if (is_struct)
        value->struct_value = (Google__Protobuf__Struct *)nested;
    else
        value->list_value = (Google__Protobuf__ListValue *)nested;
    pj_read_message(r, json, nested);
}

static void read_value(struct pj_reader *r, const cJSON *json, ProtobufCMessage *msg)
{
    Google__Protobuf__Value *value = (Google__Protobuf__Value *)msg;
    if (cJSON_IsNull(json)) {
        value->kind_case = GOOGLE__PROTOBUF__VALUE__KIND_NULL_VALUE;
        value->null_value = GOOGLE__PROTOBUF__NULL_VALUE__NULL_VALUE;
    } else if (cJSON_IsBool(json)) {
        value->kind_case = GOOGLE__PROTOBUF__VALUE__KIND_BOOL_VALUE;
        value->bool_value = cJSON_IsTrue(json);
    } else if (cJSON_IsNumber(json)) {
        value->kind_case = GOOGLE__PROTOBUF__VALUE__KIND_NUMBER_VALUE;
        value->number_value = json->valuedouble;
    } else if (cJSON_IsString(json)) {
        value->string_value = strdup(json->valuestring);
        if (value->string_value == NULL) {
            pj_error(r, "out of memory");
            return;
        }
        value->kind_case = GOOGLE__PROTOBUF__VALUE__KIND_STRING_VALUE;
    } else if (cJSON_IsObject(json)) {
        read_nested(r, json, value, GOOGLE__PROTOBUF__VALUE__KIND_STRUCT_VALUE);
    } else if (cJSON_IsArray(json)) {
        read_nested(r, json, value, GOOGLE__PROTOBUF__VALUE__KIND_LIST_VALUE);
    } else {
        pj_error(r, "is not a JSON value");
    }
}

bool pj_wkt_read(struct pj_reader *r, const cJSON *json, ProtobufCMessage *msg)
{
    const ProtobufCMessageDescriptor *desc = msg->descriptor;
    if (desc == &google__protobuf__any__descriptor)
        read_any(r, json, msg);
    else if (desc == &google__protobuf__duration__descriptor)
        read_duration(r, json, msg);
    else if (desc == &google__protobuf__struct__descriptor)
        read_struct(r, json, msg);
    else if (desc == &google__protobuf__value__descriptor)
        read_value(r, json, msg);
    else if (desc == &google__protobuf__list_value__descriptor)
        read_list_value(r, json, msg);
    else if (is_wrapper(desc))
        read_wrapper(r, json, msg);
    else
        return false;
    return true;
}
