/*
 * proto3 JSON scalars: integers as numbers or decimal strings, floats with "NaN"/"Infinity",
 * bools, strings, base64 bytes, and enums by name or number.
 */
#include "pj_internal.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Past 2^53 a JSON number (a double, in cJSON) no longer holds every integer exactly. */
#define EXACT_DOUBLE_LIMIT 9007199254740992.0

struct int_range {
    bool is_signed;
    int64_t min;
    uint64_t max;
};

static struct int_range range_of(ProtobufCType type)
{
    switch (type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_ENUM:
        return (struct int_range){true, INT32_MIN, INT32_MAX};
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        return (struct int_range){false, 0, UINT32_MAX};
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        return (struct int_range){false, 0, UINT64_MAX};
    default:
        return (struct int_range){true, INT64_MIN, INT64_MAX};
    }
}

static void range_error(struct pj_reader *r, struct int_range range)
{
    if (range.is_signed)
        pj_error(r, "must be %" PRId64 "..%" PRIu64, range.min, range.max);
    else
        pj_error(r, "must be 0..%" PRIu64, range.max);
}

/* A decimal integer string: optional '-', digits, nothing else. */
static bool parse_decimal(struct pj_reader *r, const char *text, struct int_range range,
                          int64_t *neg, uint64_t *pos, bool *negative)
{
    const char *digits = text[0] == '-' ? text + 1 : text;
    if (digits[0] == '\0' || strspn(digits, "0123456789") != strlen(digits)) {
        pj_error(r, "\"%.40s\" is not an integer", text);
        return false;
    }
    errno = 0;
    *negative = text[0] == '-';
    if (*negative)
        *neg = strtoll(text, NULL, 10);
    else
        *pos = strtoull(text, NULL, 10);
    if (errno == ERANGE || (*negative && *neg < range.min) || (!*negative && *pos > range.max)) {
        range_error(r, range);
        return false;
    }
    return true;
}

static bool parse_number(struct pj_reader *r, double value, struct int_range range, int64_t *neg,
                         uint64_t *pos, bool *negative)
{
    if (!isfinite(value) || value != floor(value)) {
        pj_error(r, "must be an integer");
        return false;
    }
    if (value < (double)range.min || (value >= 0 && value > (double)range.max)) {
        range_error(r, range);
        return false;
    }
    if (fabs(value) > EXACT_DOUBLE_LIMIT) {
        pj_error(r, "is beyond 2^53: write it as a decimal string");
        return false;
    }
    *negative = value < 0;
    if (*negative)
        *neg = (int64_t)value;
    else
        *pos = (uint64_t)value;
    return true;
}

static bool read_integer(struct pj_reader *r, ProtobufCType type, const cJSON *json, void *slot)
{
    struct int_range range = range_of(type);
    int64_t neg = 0;
    uint64_t pos = 0;
    bool negative = false;
    bool ok;
    if (cJSON_IsString(json))
        ok = parse_decimal(r, json->valuestring, range, &neg, &pos, &negative);
    else if (cJSON_IsNumber(json))
        ok = parse_number(r, json->valuedouble, range, &neg, &pos, &negative);
    else {
        pj_error(r, "must be an integer");
        ok = false;
    }
    if (!ok)
        return false;
    if (pj_element_size(type) == sizeof(uint32_t) && type != PROTOBUF_C_TYPE_ENUM)
        *(uint32_t *)slot = negative ? (uint32_t)(int32_t)neg : (uint32_t)pos;
    else if (type == PROTOBUF_C_TYPE_ENUM)
        *(int *)slot = negative ? (int)neg : (int)pos;
    else
        *(uint64_t *)slot = negative ? (uint64_t)neg : pos;
    return true;
}

static bool parse_float_text(const char *text, double *out)
{
    if (strcmp(text, "NaN") == 0)
        *out = NAN;
    else if (strcmp(text, "Infinity") == 0)
        *out = INFINITY;
    else if (strcmp(text, "-Infinity") == 0)
        *out = -INFINITY;
    else {
        char *end;
        errno = 0;
        *out = strtod(text, &end);
        /* strtod would also take "inf", "nan" and hex: proto3 JSON spells those differently. */
        if (text[0] == '\0' || *end != '\0' || errno == ERANGE || strpbrk(text, "xXnNiI") != NULL)
            return false;
    }
    return true;
}

static bool read_floating(struct pj_reader *r, ProtobufCType type, const cJSON *json, void *slot)
{
    double value;
    if (cJSON_IsNumber(json)) {
        value = json->valuedouble;
    } else if (!cJSON_IsString(json) || !parse_float_text(json->valuestring, &value)) {
        char seen[64];
        pj_describe(json, seen, sizeof(seen));
        pj_error(r, "%s is not a number", seen);
        return false;
    }
    if (type == PROTOBUF_C_TYPE_DOUBLE) {
        *(double *)slot = value;
        return true;
    }
    if (isfinite(value) && fabs(value) > FLT_MAX) {
        pj_error(r, "is out of range for a float");
        return false;
    }
    *(float *)slot = (float)value;
    return true;
}

static bool read_enum(struct pj_reader *r, const ProtobufCFieldDescriptor *field, const cJSON *json,
                      void *slot)
{
    const ProtobufCEnumDescriptor *desc = field->descriptor;
    if (cJSON_IsNumber(json))
        return read_integer(r, PROTOBUF_C_TYPE_ENUM, json, slot);
    if (!cJSON_IsString(json)) {
        pj_error(r, "must be a %s name or number", desc->name);
        return false;
    }
    const ProtobufCEnumValue *value =
        protobuf_c_enum_descriptor_get_value_by_name(desc, json->valuestring);
    if (value == NULL) {
        pj_error(r, "\"%.40s\" is not a value of %s", json->valuestring, desc->name);
        return false;
    }
    *(int *)slot = value->value;
    return true;
}

static bool read_string(struct pj_reader *r, const cJSON *json, void *slot)
{
    if (!cJSON_IsString(json)) {
        pj_error(r, "must be a string");
        return false;
    }
    char *copy = strdup(json->valuestring);
    if (copy == NULL) {
        pj_error(r, "out of memory");
        return false;
    }
    /* The slot holds either NULL or protobuf-c's shared empty default: nothing to free. */
    *(char **)slot = copy;
    return true;
}

static bool read_bytes(struct pj_reader *r, const cJSON *json, void *slot)
{
    ProtobufCBinaryData data;
    if (!cJSON_IsString(json) || !pj_base64_decode(json->valuestring, &data)) {
        char seen[64];
        pj_describe(json, seen, sizeof(seen));
        pj_error(r, "%s is not base64", seen);
        return false;
    }
    *(ProtobufCBinaryData *)slot = data;
    return true;
}

bool pj_read_scalar(struct pj_reader *r, const ProtobufCFieldDescriptor *field, const cJSON *json,
                    void *slot)
{
    switch (field->type) {
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_DOUBLE:
        return read_floating(r, field->type, json, slot);
    case PROTOBUF_C_TYPE_BOOL:
        if (!cJSON_IsBool(json)) {
            pj_error(r, "must be true or false");
            return false;
        }
        *(protobuf_c_boolean *)slot = cJSON_IsTrue(json);
        return true;
    case PROTOBUF_C_TYPE_ENUM:
        return read_enum(r, field, json, slot);
    case PROTOBUF_C_TYPE_STRING:
        return read_string(r, json, slot);
    case PROTOBUF_C_TYPE_BYTES:
        return read_bytes(r, json, slot);
    case PROTOBUF_C_TYPE_MESSAGE:
        pj_error(r, "internal: message where a scalar was expected");
        return false;
    default:
        return read_integer(r, field->type, json, slot);
    }
}
