/*
 * proto3 JSON -> protobuf-c message: objects, fields, repeated fields, maps and oneofs. Scalars
 * are in scalar_read.c, the well-known types in wkt_read.c.
 *
 * Everything is allocated with malloc in the layout protobuf-c's unpacker produces, and the
 * message is kept consistent after every step, so one protobuf_c_message_free_unpacked call
 * frees a tree however far reading got.
 */
#include "pj_internal.h"
#include "xlb_const.h"

#include <stdlib.h>
#include <string.h>

ProtobufCMessage *pj_new_message(struct pj_reader *r, const ProtobufCMessageDescriptor *desc)
{
    ProtobufCMessage *msg = malloc(desc->sizeof_message);
    if (msg == NULL) {
        pj_error(r, "out of memory");
        return NULL;
    }
    desc->message_init(msg);
    return msg;
}

/* JSON null stands for "absent", except where google.protobuf.Value gives it a meaning. */
static bool is_null_value_type(const ProtobufCFieldDescriptor *field)
{
    return field->type == PROTOBUF_C_TYPE_MESSAGE &&
           strcmp(((const ProtobufCMessageDescriptor *)field->descriptor)->name,
                  "google.protobuf.Value") == 0;
}

/* One value of field's type into slot: a message pointer, or the scalar itself. */
static bool read_element(struct pj_reader *r, const ProtobufCFieldDescriptor *field,
                         const cJSON *json, void *slot)
{
    if (field->type != PROTOBUF_C_TYPE_MESSAGE)
        return pj_read_scalar(r, field, json, slot);
    ProtobufCMessage *sub = pj_new_message(r, field->descriptor);
    if (sub == NULL)
        return false;
    *(ProtobufCMessage **)slot = sub;
    pj_read_message(r, json, sub);
    return true;
}

/*
 * A repeated field's array holds n elements of element_size; n_slot is its count. The array is
 * grown to full size first and the count raised one element at a time, so a failure half-way
 * leaves only initialised elements counted.
 */
static void *start_array(struct pj_reader *r, const ProtobufCFieldDescriptor *field,
                         ProtobufCMessage *msg, unsigned n)
{
    size_t *count = pj_member(msg, field->quantifier_offset);
    void **array = pj_member(msg, field->offset);
    *count = 0;
    *array = n ? calloc(n, pj_element_size(field->type)) : NULL;
    if (n && *array == NULL)
        pj_error(r, "out of memory");
    return *array;
}

static void read_list(struct pj_reader *r, const ProtobufCFieldDescriptor *field, const cJSON *json,
                      ProtobufCMessage *msg)
{
    if (!cJSON_IsArray(json)) {
        pj_error(r, "must be an array");
        return;
    }
    char *array = start_array(r, field, msg, (unsigned)cJSON_GetArraySize(json));
    if (array == NULL)
        return;
    size_t *count = pj_member(msg, field->quantifier_offset);
    size_t size = pj_element_size(field->type);
    unsigned index = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, json) {
        size_t saved = pj_path_push_index(r, index++);
        if (cJSON_IsNull(item) && !is_null_value_type(field))
            pj_error(r, "null is not allowed in a list");
        else if (read_element(r, field, item, array + *count * size))
            (*count)++;
        pj_path_pop(r, saved);
    }
}

/* Map keys are JSON strings; integer and bool keys are spelled as decimal or true/false. */
static bool read_map_key(struct pj_reader *r, const ProtobufCFieldDescriptor *key_field,
                         const char *key, ProtobufCMessage *entry)
{
    void *slot = pj_member(entry, key_field->offset);
    if (key_field->type == PROTOBUF_C_TYPE_BOOL) {
        if (strcmp(key, "true") != 0 && strcmp(key, "false") != 0) {
            pj_error(r, "map key must be true or false");
            return false;
        }
        *(protobuf_c_boolean *)slot = strcmp(key, "true") == 0;
        return true;
    }
    /* cJSON's valuestring is not const; pj_read_scalar only reads it. */
    cJSON as_string = {.type = cJSON_String, .valuestring = XLB_UNCONST(key)};
    return pj_read_scalar(r, key_field, &as_string, slot);
}

static void read_map(struct pj_reader *r, const ProtobufCFieldDescriptor *field, const cJSON *json,
                     ProtobufCMessage *msg)
{
    if (!cJSON_IsObject(json)) {
        pj_error(r, "must be an object");
        return;
    }
    ProtobufCMessage **entries = start_array(r, field, msg, (unsigned)cJSON_GetArraySize(json));
    if (entries == NULL)
        return;
    size_t *count = pj_member(msg, field->quantifier_offset);
    const ProtobufCMessageDescriptor *entry_desc = field->descriptor;
    const ProtobufCFieldDescriptor *value_field = &entry_desc->fields[1];
    const cJSON *item;
    cJSON_ArrayForEach(item, json) {
        size_t saved = pj_path_push_map_key(r, item->string);
        ProtobufCMessage *entry = pj_new_message(r, entry_desc);
        if (entry != NULL) {
            entries[(*count)++] = entry;
            if (cJSON_IsNull(item) && !is_null_value_type(value_field))
                pj_error(r, "null is not allowed as a map value");
            else if (read_map_key(r, &entry_desc->fields[0], item->string, entry))
                read_element(r, value_field, item, pj_member(entry, value_field->offset));
        }
        pj_path_pop(r, saved);
    }
}

/* The field of desc whose number is id (for naming a oneof's current member). */
static const char *field_name_by_id(const ProtobufCMessageDescriptor *desc, uint32_t id)
{
    const ProtobufCFieldDescriptor *field = protobuf_c_message_descriptor_get_field(desc, id);
    return field ? field->name : "?";
}

static void read_singular(struct pj_reader *r, const ProtobufCFieldDescriptor *field,
                          const cJSON *json, ProtobufCMessage *msg)
{
    uint32_t *oneof_case = NULL;
    if (field->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
        oneof_case = pj_member(msg, field->quantifier_offset);
        if (*oneof_case != 0) {
            pj_error(r, "only one of \"%s\" and \"%s\" may be set",
                     field_name_by_id(msg->descriptor, *oneof_case), field->name);
            return;
        }
    }
    if (!read_element(r, field, json, pj_member(msg, field->offset)))
        return;
    /* Presence exactly as protobuf-c's unpacker records it. */
    if (oneof_case != NULL)
        *oneof_case = field->id;
    else if (field->label == PROTOBUF_C_LABEL_OPTIONAL && field->quantifier_offset != 0)
        *(protobuf_c_boolean *)pj_member(msg, field->quantifier_offset) = 1;
}

static void read_field(struct pj_reader *r, const ProtobufCFieldDescriptor *field,
                       const cJSON *json, ProtobufCMessage *msg)
{
    if (field->label != PROTOBUF_C_LABEL_REPEATED)
        read_singular(r, field, json, msg);
    else if (pj_is_map_field(field))
        read_map(r, field, json, msg);
    else
        read_list(r, field, json, msg);
}

static void read_fields(struct pj_reader *r, const cJSON *json, ProtobufCMessage *msg)
{
    const ProtobufCMessageDescriptor *desc = msg->descriptor;
    /* Both spellings of one field ("lb_policy", "lbPolicy") may not both be given. */
    unsigned char *seen = calloc(desc->n_fields ? desc->n_fields : 1, 1);
    if (seen == NULL) {
        pj_error(r, "out of memory");
        return;
    }
    const cJSON *item;
    cJSON_ArrayForEach(item, json) {
        const ProtobufCFieldDescriptor *field = pj_field_by_json_key(desc, item->string);
        if (field == NULL)
            continue; /* unknown fields are skipped, as the binary unpacker does */
        bool takes_null = is_null_value_type(field) && field->label != PROTOBUF_C_LABEL_REPEATED;
        if (cJSON_IsNull(item) && !takes_null)
            continue;
        size_t saved = pj_path_push_key(r, item->string);
        size_t index = (size_t)(field - desc->fields);
        if (seen[index])
            pj_error(r, "\"%s\" is already set", field->name);
        else
            read_field(r, field, item, msg);
        seen[index] = 1;
        pj_path_pop(r, saved);
    }
    free(seen);
}

void pj_read_message(struct pj_reader *r, const cJSON *json, ProtobufCMessage *msg)
{
    if (r->depth >= XLB_PROTO_JSON_MAX_DEPTH) {
        pj_error(r, "nested deeper than %d levels", XLB_PROTO_JSON_MAX_DEPTH);
        return;
    }
    r->depth++;
    if (!pj_wkt_read(r, json, msg)) {
        if (cJSON_IsObject(json))
            read_fields(r, json, msg);
        else
            pj_error(r, "must be an object");
    }
    r->depth--;
}

ProtobufCMessage *xlb_proto_json_read(const ProtobufCMessageDescriptor *desc, const cJSON *json,
                                      const char *path, struct xlb_errors *errs)
{
    struct pj_reader *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        xlb_errors_add(errs, path, "out of memory");
        return NULL;
    }
    r->errs = errs;
    pj_path_push_key(r, path);
    ProtobufCMessage *msg = pj_new_message(r, desc);
    if (msg != NULL)
        pj_read_message(r, json, msg);
    if (r->n_errors != 0 && msg != NULL) {
        protobuf_c_message_free_unpacked(msg, NULL);
        msg = NULL;
    }
    free(r);
    return msg;
}
