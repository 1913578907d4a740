/*
 * Helpers shared by the xDS validators (not installed; consumers include the *_config.h
 * headers). Every error line has the form
 *     <resource kind> "<name>": <field path>: <reason>
 * so that a NACK's error_detail names the resource, the field and the rule. The helpers carry
 * the prefix xv_ (xDS validation); validate_common.c implements them.
 */
#ifndef XLB_VALIDATE_INTERNAL_H
#define XLB_VALIDATE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "envoy/config/core/v3/address.pb-c.h"
#include "envoy/config/core/v3/config_source.pb-c.h"
#include "envoy/type/v3/percent.pb-c.h"
#include "google/protobuf/any.pb-c.h"
#include "google/protobuf/duration.pb-c.h"
#include "json_read.h"
#include "xds_types.h"

#define XV_PATH_MAX    320
#define XV_NAME_MAX    96 /* longer resource names are cut in error lines */
#define XV_TYPE_PREFIX "type.googleapis.com/"

struct xlb_bootstrap;

struct xv_ctx {
    struct xlb_errors *errs;
    const struct xlb_bootstrap *bootstrap; /* certificate_providers (A29); NULL: not checked */
    char prefix[XV_NAME_MAX + 48];         /* cluster "backend" */
    unsigned n_errors;                     /* errors this validation added, dropped ones included */
};

void xv_ctx_init(struct xv_ctx *ctx, struct xlb_errors *errs, const char *kind, const char *name);

/* Appends "<prefix>: <path>: <reason>" (or "<prefix>: <reason>" for an empty path). */
void xv_error(struct xv_ctx *ctx, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Child paths: "a.b", "a[3]", "a[\"key\"]"; a top-level key has no leading dot. xv_key
 * accepts out == parent. */
void xv_key(char out[XV_PATH_MAX], const char *parent, const char *key);
void xv_pathf(char out[XV_PATH_MAX], const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void xv_idx(char out[XV_PATH_MAX], const char *parent, size_t index);
void xv_map(char out[XV_PATH_MAX], const char *parent, const char *key);

/* strdup that treats NULL as "" and aborts the validation softly on ENOMEM (returns NULL). */
char *xv_strdup(struct xv_ctx *ctx, const char *path, const char *s);

/* calloc(n, size) for n >= 0; NULL only on ENOMEM, with an error line. */
void *xv_calloc(struct xv_ctx *ctx, const char *path, size_t n, size_t size);

/* Checks a Duration as gRPC does (seconds 0..315576000000, nanos 0..999999999). */
bool xv_duration(struct xv_ctx *ctx, const char *path, const Google__Protobuf__Duration *in,
                 struct xlb_duration *out);

/* A FractionalPercent in parts per million, capped at 1000000; false for a bad denominator. */
bool xv_fraction_ppm(struct xv_ctx *ctx, const char *path,
                     const Envoy__Type__V3__FractionalPercent *in, uint32_t *ppm);

/* True when the ConfigSource is `ads` or `self` (what gRPC accepts for RDS and EDS). */
/* The socket address's port_value, present and 1..65535; errors name path.port_value. */
bool xv_port_value(struct xv_ctx *ctx, const char *path,
                   const Envoy__Config__Core__V3__SocketAddress *sa, uint16_t *port);

bool xv_config_source_ads_or_self(const Envoy__Config__Core__V3__ConfigSource *cs);

/*
 * The type name of an Any ("envoy.x.y.Z", what follows the last '/'), or NULL with an error
 * when the URL has no '/' or nothing after it.
 */
const char *xv_any_type(struct xv_ctx *ctx, const char *path, const Google__Protobuf__Any *any);

/*
 * An xDS extension: Any, possibly wrapping a udpa.type.v1 or xds.type.v3 TypedStruct. `type` is
 * the effective type name; `any` is set only when the config is in protobuf form (not a
 * TypedStruct), which is the only form gRPC parses for the router and stateful session filters.
 */
struct xv_extension {
    const char *type;
    const Google__Protobuf__Any *any;
    void *typed_struct; /* owned: the unpacked TypedStruct when wrapped */
};

bool xv_extension_read(struct xv_ctx *ctx, const char *path, const Google__Protobuf__Any *any,
                       struct xv_extension *out);
void xv_extension_release(struct xv_extension *ext);

/* Unpacks an Any whose type was checked; NULL with an error "could not parse <what>". */
ProtobufCMessage *xv_unpack(struct xv_ctx *ctx, const char *path, const Google__Protobuf__Any *any,
                            const ProtobufCMessageDescriptor *desc, const char *what);
/* A typed_config that must be present and hold desc's message: unpacked, or NULL after
 * "field not present", `unsupported KIND "TYPE"` or a parse error at path. */
ProtobufCMessage *xv_unpack_only(struct xv_ctx *ctx, const char *path,
                                 const Google__Protobuf__Any *any,
                                 const ProtobufCMessageDescriptor *desc, const char *kind);

/* Compiles to check a RegexMatcher's regex; false with `invalid regex "…" (reason)`. */
bool xv_regex_check(struct xv_ctx *ctx, const char *path, const char *regex, bool full_match);

#endif
