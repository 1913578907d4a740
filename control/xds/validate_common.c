/* Error lines, paths and the small checks every xDS validator shares. */
#include "validate_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "udpa/type/v1/typed_struct.pb-c.h"
#include "xds/type/v3/typed_struct.pb-c.h"
#include "xds_regex.h"

#define XV_DURATION_MAX_SECONDS INT64_C(315576000000)
#define XV_PPM                  1000000u

void xv_ctx_init(struct xv_ctx *ctx, struct xlb_errors *errs, const char *kind, const char *name)
{
    const char *n = name != NULL ? name : "";
    size_t len = strlen(n);
    ctx->errs = errs;
    ctx->n_errors = 0;
    if (len > XV_NAME_MAX)
        snprintf(ctx->prefix, sizeof(ctx->prefix), "%s \"%.*s...\"", kind, XV_NAME_MAX, n);
    else
        snprintf(ctx->prefix, sizeof(ctx->prefix), "%s \"%s\"", kind, n);
}

void xv_error(struct xv_ctx *ctx, const char *path, const char *fmt, ...)
{
    char reason[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);

    char where[XV_PATH_MAX + sizeof(ctx->prefix) + 2];
    if (path[0] == '\0')
        snprintf(where, sizeof(where), "%s", ctx->prefix);
    else
        snprintf(where, sizeof(where), "%s: %s", ctx->prefix, path);
    ctx->n_errors++;
    xlb_errors_add(ctx->errs, where, "%s", reason);
}

/* Paths longer than XV_PATH_MAX are cut: an error line stays readable either way. */
void xv_pathf(char out[XV_PATH_MAX], const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, XV_PATH_MAX, fmt, ap);
    va_end(ap);
}

/* out may be parent itself: the parent is copied first. */
void xv_key(char out[XV_PATH_MAX], const char *parent, const char *key)
{
    char copy[XV_PATH_MAX];
    xv_pathf(copy, "%s", parent);
    if (copy[0] == '\0')
        xv_pathf(out, "%s", key);
    else
        xv_pathf(out, "%s.%s", copy, key);
}

void xv_idx(char out[XV_PATH_MAX], const char *parent, size_t index)
{
    xv_pathf(out, "%s[%zu]", parent, index);
}

void xv_map(char out[XV_PATH_MAX], const char *parent, const char *key)
{
    xv_pathf(out, "%s[\"%.64s\"]", parent, key != NULL ? key : "");
}

char *xv_strdup(struct xv_ctx *ctx, const char *path, const char *s)
{
    char *copy = strdup(s != NULL ? s : "");
    if (copy == NULL)
        xv_error(ctx, path, "out of memory");
    return copy;
}

void *xv_calloc(struct xv_ctx *ctx, const char *path, size_t n, size_t size)
{
    /* calloc(0, ...) may return NULL; one element keeps "NULL means ENOMEM" true. */
    void *p = calloc(n > 0 ? n : 1, size);
    if (p == NULL)
        xv_error(ctx, path, "out of memory");
    return p;
}

bool xv_duration(struct xv_ctx *ctx, const char *path, const Google__Protobuf__Duration *in,
                 struct xlb_duration *out)
{
    bool ok = true;
    if (in->seconds < 0 || in->seconds > XV_DURATION_MAX_SECONDS) {
        char child[XV_PATH_MAX];
        xv_key(child, path, "seconds");
        xv_error(ctx, child, "%lld is not in 0..315576000000", (long long)in->seconds);
        ok = false;
    }
    if (in->nanos < 0 || in->nanos > 999999999) {
        char child[XV_PATH_MAX];
        xv_key(child, path, "nanos");
        xv_error(ctx, child, "%d is not in 0..999999999", (int)in->nanos);
        ok = false;
    }
    if (ok) {
        out->seconds = in->seconds;
        out->nanos = in->nanos;
    }
    return ok;
}

bool xv_fraction_ppm(struct xv_ctx *ctx, const char *path,
                     const Envoy__Type__V3__FractionalPercent *in, uint32_t *ppm)
{
    uint64_t scale;
    switch (in->denominator) {
    case ENVOY__TYPE__V3__FRACTIONAL_PERCENT__DENOMINATOR_TYPE__HUNDRED:
        scale = 10000;
        break;
    case ENVOY__TYPE__V3__FRACTIONAL_PERCENT__DENOMINATOR_TYPE__TEN_THOUSAND:
        scale = 100;
        break;
    case ENVOY__TYPE__V3__FRACTIONAL_PERCENT__DENOMINATOR_TYPE__MILLION:
        scale = 1;
        break;
    default: {
        char child[XV_PATH_MAX];
        xv_key(child, path, "denominator");
        xv_error(ctx, child, "unknown denominator type %d", (int)in->denominator);
        return false;
    }
    }
    /* More than 100% means always; computed in 64 bits so that it cannot wrap. */
    uint64_t v = (uint64_t)in->numerator * scale;
    *ppm = v > XV_PPM ? XV_PPM : (uint32_t)v;
    return true;
}

bool xv_config_source_ads_or_self(const Envoy__Config__Core__V3__ConfigSource *cs)
{
    return cs->config_source_specifier_case ==
               ENVOY__CONFIG__CORE__V3__CONFIG_SOURCE__CONFIG_SOURCE_SPECIFIER_ADS ||
           cs->config_source_specifier_case ==
               ENVOY__CONFIG__CORE__V3__CONFIG_SOURCE__CONFIG_SOURCE_SPECIFIER_SELF;
}

static const char *type_name_of(const char *url)
{
    const char *slash = url != NULL ? strrchr(url, '/') : NULL;
    if (slash == NULL || slash[1] == '\0')
        return NULL;
    return slash + 1;
}

const char *xv_any_type(struct xv_ctx *ctx, const char *path, const Google__Protobuf__Any *any)
{
    const char *type = type_name_of(any->type_url);
    if (type == NULL) {
        char child[XV_PATH_MAX];
        xv_key(child, path, "type_url");
        xv_error(ctx, child, "invalid value \"%.64s\"", any->type_url ? any->type_url : "");
    }
    return type;
}

ProtobufCMessage *xv_unpack(struct xv_ctx *ctx, const char *path, const Google__Protobuf__Any *any,
                            const ProtobufCMessageDescriptor *desc, const char *what)
{
    ProtobufCMessage *msg = protobuf_c_message_unpack(desc, NULL, any->value.len, any->value.data);
    if (msg == NULL)
        xv_error(ctx, path, "could not parse %s", what);
    return msg;
}

ProtobufCMessage *xv_unpack_only(struct xv_ctx *ctx, const char *path,
                                 const Google__Protobuf__Any *any,
                                 const ProtobufCMessageDescriptor *desc, const char *kind)
{
    if (any == NULL) {
        xv_error(ctx, path, "field not present");
        return NULL;
    }
    const char *type = xv_any_type(ctx, path, any);
    if (type == NULL)
        return NULL;
    if (strcmp(type, desc->name) != 0) {
        xv_error(ctx, path, "unsupported %s \"%.96s\"", kind, type);
        return NULL;
    }
    return xv_unpack(ctx, path, any, desc, desc->short_name);
}

bool xv_extension_read(struct xv_ctx *ctx, const char *path, const Google__Protobuf__Any *any,
                       struct xv_extension *out)
{
    memset(out, 0, sizeof(*out));
    const char *type = xv_any_type(ctx, path, any);
    if (type == NULL)
        return false;
    const char *inner_url = NULL;
    if (strcmp(type, "udpa.type.v1.TypedStruct") == 0) {
        Udpa__Type__V1__TypedStruct *ts = (Udpa__Type__V1__TypedStruct *)xv_unpack(
            ctx, path, any, &udpa__type__v1__typed_struct__descriptor, "TypedStruct");
        out->typed_struct = ts;
        inner_url = ts != NULL ? ts->type_url : NULL;
    } else if (strcmp(type, "xds.type.v3.TypedStruct") == 0) {
        Xds__Type__V3__TypedStruct *ts = (Xds__Type__V3__TypedStruct *)xv_unpack(
            ctx, path, any, &xds__type__v3__typed_struct__descriptor, "TypedStruct");
        out->typed_struct = ts;
        inner_url = ts != NULL ? ts->type_url : NULL;
    } else {
        out->type = type;
        out->any = any;
        return true;
    }
    if (out->typed_struct == NULL)
        return false;
    out->type = type_name_of(inner_url);
    if (out->type == NULL) {
        char child[XV_PATH_MAX];
        xv_key(child, path, "value.type_url");
        xv_error(ctx, child, "invalid value \"%.64s\"", inner_url);
        xv_extension_release(out);
        return false;
    }
    return true;
}

void xv_extension_release(struct xv_extension *ext)
{
    if (ext->typed_struct != NULL)
        protobuf_c_message_free_unpacked(ext->typed_struct, NULL);
    memset(ext, 0, sizeof(*ext));
}

bool xv_regex_check(struct xv_ctx *ctx, const char *path, const char *regex, bool full_match)
{
    char reason[160];
    pcre2_code *code = xlb_xds_regex_compile(regex, full_match, reason, sizeof(reason));
    if (code == NULL) {
        xv_error(ctx, path, "invalid regex \"%.64s\" (%s)", regex, reason);
        return false;
    }
    pcre2_code_free(code);
    return true;
}

bool xv_port_value(struct xv_ctx *ctx, const char *path,
                   const Envoy__Config__Core__V3__SocketAddress *sa, uint16_t *port)
{
    char child[XV_PATH_MAX];
    xv_key(child, path, "port_value");
    if (sa->port_specifier_case !=
        ENVOY__CONFIG__CORE__V3__SOCKET_ADDRESS__PORT_SPECIFIER_PORT_VALUE) {
        xv_error(ctx, child, "field not present");
        return false;
    }
    if (sa->port_value == 0 || sa->port_value > 65535) {
        xv_error(ctx, child, "%u is not in 1..65535", sa->port_value);
        return false;
    }
    *port = (uint16_t)sa->port_value;
    return true;
}
