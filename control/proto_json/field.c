/* Where protobuf-c keeps a field's value, and which JSON key names it. */
#include "pj_internal.h"

#include <ctype.h>
#include <string.h>

size_t pj_element_size(ProtobufCType type)
{
    switch (type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        return sizeof(uint32_t);
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        return sizeof(uint64_t);
    case PROTOBUF_C_TYPE_FLOAT:
        return sizeof(float);
    case PROTOBUF_C_TYPE_DOUBLE:
        return sizeof(double);
    case PROTOBUF_C_TYPE_BOOL:
        return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_ENUM:
        return sizeof(int);
    case PROTOBUF_C_TYPE_STRING:
        return sizeof(char *);
    case PROTOBUF_C_TYPE_BYTES:
        return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_MESSAGE:
        return sizeof(ProtobufCMessage *);
    }
    return 0;
}

/* "typed_per_filter_config" -> "TypedPerFilterConfigEntry", compared without building it. */
static bool is_entry_name_of(const char *short_name, const char *field_name)
{
    bool upper_next = true;
    for (; *field_name != '\0'; field_name++) {
        if (*field_name == '_') {
            upper_next = true;
            continue;
        }
        char expected = upper_next ? (char)toupper((unsigned char)*field_name) : *field_name;
        if (*short_name++ != expected)
            return false;
        upper_next = false;
    }
    return strcmp(short_name, "Entry") == 0;
}

bool pj_is_map_field(const ProtobufCFieldDescriptor *field)
{
    if (field->label != PROTOBUF_C_LABEL_REPEATED || field->type != PROTOBUF_C_TYPE_MESSAGE)
        return false;
    const ProtobufCMessageDescriptor *entry = field->descriptor;
    return entry->n_fields == 2 && entry->fields[0].id == 1 &&
           strcmp(entry->fields[0].name, "key") == 0 && entry->fields[1].id == 2 &&
           strcmp(entry->fields[1].name, "value") == 0 &&
           is_entry_name_of(entry->short_name, field->name);
}

/* protoc's json_name: underscores dropped, the letter after each one upper-cased. */
static bool is_json_name_of(const char *key, const char *field_name)
{
    bool upper_next = false;
    for (; *field_name != '\0'; field_name++) {
        if (*field_name == '_') {
            upper_next = true;
            continue;
        }
        char expected = upper_next ? (char)toupper((unsigned char)*field_name) : *field_name;
        if (*key++ != expected)
            return false;
        upper_next = false;
    }
    return *key == '\0';
}

const ProtobufCFieldDescriptor *pj_field_by_json_key(const ProtobufCMessageDescriptor *desc,
                                                     const char *key)
{
    const ProtobufCFieldDescriptor *field =
        protobuf_c_message_descriptor_get_field_by_name(desc, key);
    if (field != NULL)
        return field;
    for (unsigned i = 0; i < desc->n_fields; i++) {
        if (is_json_name_of(key, desc->fields[i].name))
            return &desc->fields[i];
    }
    return NULL;
}
