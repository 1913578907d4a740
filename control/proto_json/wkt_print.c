/*
 * Printing the well-known types whose proto3 JSON form is not an object of fields (the
 * counterpart of wkt_read.c).
 */
#include "pj_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "google/protobuf/any.pb-c.h"
#include "google/protobuf/duration.pb-c.h"
#include "google/protobuf/struct.pb-c.h"

/* "1s", "1.500s", "0.000000001s", "-2s": 0, 3, 6 or 9 fractional digits, as proto3 prints. */
static cJSON *print_duration(const Google__Protobuf__Duration *duration)
{
    bool negative = duration->seconds < 0 || duration->nanos < 0;
    uint64_t seconds =
        duration->seconds < 0 ? 0 - (uint64_t)duration->seconds : (uint64_t)duration->seconds;
    uint32_t nanos =
        duration->nanos < 0 ? 0 - (uint32_t)duration->nanos : (uint32_t)duration->nanos;
    char text[48];
    int len = snprintf(text, sizeof(text), "%s%" PRIu64, negative ? "-" : "", seconds);
    if (nanos != 0) {
        unsigned digits = nanos % 1000000 == 0 ? 3 : nanos % 1000 == 0 ? 6 : 9;
        unsigned scaled = digits == 3 ? nanos / 1000000 : digits == 6 ? nanos / 1000 : nanos;
        len += snprintf(text + len, sizeof(text) - (size_t)len, ".%0*u", (int)digits, scaled);
    }
    snprintf(text + len, sizeof(text) - (size_t)len, "s");
    return cJSON_CreateString(text);
}

static cJSON *print_value(struct pj_printer *p, const Google__Protobuf__Value *value)
{
    switch (value->kind_case) {
    case GOOGLE__PROTOBUF__VALUE__KIND_NUMBER_VALUE:
        return cJSON_CreateNumber(value->number_value);
    case GOOGLE__PROTOBUF__VALUE__KIND_STRING_VALUE:
        return cJSON_CreateString(value->string_value ? value->string_value : "");
    case GOOGLE__PROTOBUF__VALUE__KIND_BOOL_VALUE:
        return cJSON_CreateBool(value->bool_value);
    case GOOGLE__PROTOBUF__VALUE__KIND_STRUCT_VALUE:
        if (value->struct_value != NULL)
            return pj_print_message(p, &value->struct_value->base);
        return cJSON_CreateObject();
    case GOOGLE__PROTOBUF__VALUE__KIND_LIST_VALUE:
        if (value->list_value != NULL)
            return pj_print_message(p, &value->list_value->base);
        return cJSON_CreateArray();
    default: /* null_value, or no kind at all */
        return cJSON_CreateNull();
    }
}

static cJSON *print_struct(struct pj_printer *p, const Google__Protobuf__Struct *st)
{
    cJSON *obj = cJSON_CreateObject();
    for (size_t i = 0; obj != NULL && i < st->n_fields; i++) {
        const Google__Protobuf__Struct__FieldsEntry *entry = st->fields[i];
        cJSON *item = entry->value ? print_value(p, entry->value) : cJSON_CreateNull();
        if (item == NULL || !cJSON_AddItemToObject(obj, entry->key ? entry->key : "", item)) {
            cJSON_Delete(item);
            cJSON_Delete(obj);
            obj = NULL;
        }
    }
    return obj;
}

static cJSON *print_list_value(struct pj_printer *p, const Google__Protobuf__ListValue *list)
{
    cJSON *array = cJSON_CreateArray();
    for (size_t i = 0; array != NULL && i < list->n_values; i++) {
        const Google__Protobuf__Value *value = list->values[i];
        cJSON *item = value ? print_value(p, value) : cJSON_CreateNull();
        if (item == NULL || !cJSON_AddItemToArray(array, item)) {
            cJSON_Delete(item);
            cJSON_Delete(array);
            array = NULL;
        }
    }
    return array;
}

/* What an Any whose type is unknown (or whose bytes do not unpack) prints as. */
static cJSON *print_opaque_any(const Google__Protobuf__Any *any)
{
    cJSON *obj = cJSON_CreateObject();
    char *value = pj_base64_encode(any->value.data, any->value.len);
    if (obj == NULL || value == NULL ||
        cJSON_AddStringToObject(obj, "@type", any->type_url ? any->type_url : "") == NULL ||
        cJSON_AddStringToObject(obj, "value", value) == NULL) {
        cJSON_Delete(obj);
        obj = NULL;
    }
    free(value);
    return obj;
}

/* The packed message's fields (or its special form under "value"), after "@type". */
static cJSON *print_known_any(struct pj_printer *p, const char *type_url,
                              const ProtobufCMessage *inner)
{
    cJSON *obj = cJSON_CreateObject();
    if (obj == NULL || cJSON_AddStringToObject(obj, "@type", type_url) == NULL) {
        cJSON_Delete(obj);
        return NULL;
    }
    bool ok;
    if (pj_wkt_is_special(inner->descriptor)) {
        cJSON *value = pj_print_message(p, inner);
        ok = value != NULL && cJSON_AddItemToObject(obj, "value", value);
        if (!ok)
            cJSON_Delete(value);
    } else {
        ok = p->depth < XLB_PROTO_JSON_MAX_DEPTH;
        p->depth++;
        ok = ok && pj_print_fields(p, inner, obj);
        p->depth--;
    }
    if (!ok) {
        cJSON_Delete(obj);
        return NULL;
    }
    return obj;
}

static cJSON *print_any(struct pj_printer *p, const Google__Protobuf__Any *any)
{
    if ((any->type_url == NULL || any->type_url[0] == '\0') && any->value.len == 0)
        return cJSON_CreateObject();
    const ProtobufCMessageDescriptor *desc = xlb_proto_type_by_url(any->type_url);
    ProtobufCMessage *inner =
        desc ? protobuf_c_message_unpack(desc, NULL, any->value.len, any->value.data) : NULL;
    if (inner == NULL)
        return print_opaque_any(any);
    cJSON *obj = print_known_any(p, any->type_url, inner);
    protobuf_c_message_free_unpacked(inner, NULL);
    return obj;
}

cJSON *pj_wkt_print(struct pj_printer *p, const ProtobufCMessage *msg)
{
    const ProtobufCMessageDescriptor *desc = msg->descriptor;
    if (desc == &google__protobuf__any__descriptor)
        return print_any(p, (const Google__Protobuf__Any *)msg);
    if (desc == &google__protobuf__duration__descriptor)
        return print_duration((const Google__Protobuf__Duration *)msg);
    if (desc == &google__protobuf__struct__descriptor)
        return print_struct(p, (const Google__Protobuf__Struct *)msg);
    if (desc == &google__protobuf__value__descriptor)
        return print_value(p, (const Google__Protobuf__Value *)msg);
    if (desc == &google__protobuf__list_value__descriptor)
        return print_list_value(p, (const Google__Protobuf__ListValue *)msg);
    /* A wrapper: its one field's value, printed even when it is the default. */
    const ProtobufCFieldDescriptor *field = &desc->fields[0];
    return pj_print_scalar(field, pj_const_member(msg, field->offset));
}
