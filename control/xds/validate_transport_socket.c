/*
 * A Cluster's transport_socket as gRPC reads it (A29): its typed_config must be an
 * UpstreamTlsContext whose CommonTlsContext names certificate provider instances of the
 * bootstrap: the CA's (required, in validation_context, combined_validation_context or the
 * older validation_context_certificate_provider_instance) and optionally a client
 * certificate's (mTLS). match_subject_alt_names is kept; what gRPC does not support (inline
 * certificates, SDS, pinned hashes, CRLs, signed certificate timestamps, a custom validator,
 * typed SAN matchers) is NACKed by name. sni and alpn_protocols are ignored, as gRPC does
 * (it offers h2).
 */
#include <string.h>

#include "envoy/extensions/transport_sockets/tls/v3/tls.pb-c.h"
#include "validate_cluster_internal.h"

typedef Envoy__Extensions__TransportSockets__Tls__V3__CommonTlsContext CommonTlsContext;
typedef Envoy__Extensions__TransportSockets__Tls__V3__CertificateValidationContext
    ValidationContext;
typedef Envoy__Type__Matcher__V3__StringMatcher StringMatcher;

/* An instance name: it must be the bootstrap's (when the caller knows the bootstrap). */
static char *read_instance(struct xv_ctx *ctx, const char *path, const char *name)
{
    char child[XV_PATH_MAX];
    xv_key(child, path, "instance_name");
    if (name == NULL || name[0] == '\0') {
        xv_error(ctx, child, "field not present");
        return NULL;
    }
    if (ctx->bootstrap != NULL && xlb_bootstrap_cert_provider(ctx->bootstrap, name) == NULL) {
        xv_error(ctx, child, "unrecognized certificate provider instance name: %.96s", name);
        return NULL;
    }
    return xv_strdup(ctx, child, name);
}

static bool read_san(struct xv_ctx *ctx, const char *path, const StringMatcher *sm,
                     struct xlb_san_matcher *out)
{
    const char *value;
    out->ignore_case = sm->ignore_case;
    switch (sm->match_pattern_case) {
    case ENVOY__TYPE__MATCHER__V3__STRING_MATCHER__MATCH_PATTERN_EXACT:
        out->type = XLB_SAN_EXACT;
        value = sm->exact;
        break;
    case ENVOY__TYPE__MATCHER__V3__STRING_MATCHER__MATCH_PATTERN_PREFIX:
        out->type = XLB_SAN_PREFIX;
        value = sm->prefix;
        break;
    case ENVOY__TYPE__MATCHER__V3__STRING_MATCHER__MATCH_PATTERN_SUFFIX:
        out->type = XLB_SAN_SUFFIX;
        value = sm->suffix;
        break;
    case ENVOY__TYPE__MATCHER__V3__STRING_MATCHER__MATCH_PATTERN_CONTAINS:
        out->type = XLB_SAN_CONTAINS;
        value = sm->contains;
        break;
    case ENVOY__TYPE__MATCHER__V3__STRING_MATCHER__MATCH_PATTERN_SAFE_REGEX: {
        char child[XV_PATH_MAX];
        xv_key(child, path, "safe_regex");
        out->type = XLB_SAN_REGEX;
        out->ignore_case = false;
        value = sm->safe_regex->regex;
        if (!xv_regex_check(ctx, child, value, true))
            return false;
        break;
    }
    default:
        xv_error(ctx, path, "invalid string matcher");
        return false;
    }
    out->value = xv_strdup(ctx, path, value);
    return out->value != NULL;
}

/* The fields of a CertificateValidationContext gRPC refuses, by name; false if one is set. */
static bool refuse_unsupported(struct xv_ctx *ctx, const char *path, const ValidationContext *v)
{
    const char *field = v->n_verify_certificate_spki > 0   ? "verify_certificate_spki"
                        : v->n_verify_certificate_hash > 0 ? "verify_certificate_hash"
                        : v->require_signed_certificate_timestamp != NULL &&
                                v->require_signed_certificate_timestamp->value
                            ? "require_signed_certificate_timestamp"
                        : v->crl != NULL                         ? "crl"
                        : v->custom_validator_config != NULL     ? "custom_validator_config"
                        : v->n_match_typed_subject_alt_names > 0 ? "match_typed_subject_alt_names"
                        : v->trusted_ca != NULL                  ? "trusted_ca"
                                                                 : NULL;
    if (field == NULL)
        return true;
    char child[XV_PATH_MAX];
    xv_key(child, path, field);
    xv_error(ctx, child, "field not supported (A29)");
    return false;
}

static bool read_validation(struct xv_ctx *ctx, const char *path, const ValidationContext *v,
                            struct xlb_upstream_tls *out)
{
    if (!refuse_unsupported(ctx, path, v))
        return false;
    char child[XV_PATH_MAX];
    if (v->ca_certificate_provider_instance != NULL) {
        xv_key(child, path, "ca_certificate_provider_instance");
        free(out->ca_instance);
        out->ca_instance =
            read_instance(ctx, child, v->ca_certificate_provider_instance->instance_name);
        if (out->ca_instance == NULL)
            return false;
    }
    if (v->n_match_subject_alt_names > XLB_TLS_MAX_SAN_MATCHERS) {
        xv_key(child, path, "match_subject_alt_names");
        xv_error(ctx, child, "at most %d matchers", XLB_TLS_MAX_SAN_MATCHERS);
        return false;
    }
    xv_key(child, path, "match_subject_alt_names");
    for (size_t i = 0; i < v->n_match_subject_alt_names; i++) {
        char item[XV_PATH_MAX];
        xv_idx(item, child, i);
        if (!read_san(ctx, item, v->match_subject_alt_names[i], &out->sans[out->n_sans]))
            return false;
        out->n_sans++;
    }
    return true;
}

static bool read_validation_type(struct xv_ctx *ctx, const CommonTlsContext *c,
                                 struct xlb_upstream_tls *out)
{
    const char *path = "transport_socket.typed_config.value.common_tls_context";
    char child[XV_PATH_MAX];
    switch (c->validation_context_type_case) {
    case ENVOY__EXTENSIONS__TRANSPORT_SOCKETS__TLS__V3__COMMON_TLS_CONTEXT__VALIDATION_CONTEXT_TYPE_VALIDATION_CONTEXT:
        xv_key(child, path, "validation_context");
        return read_validation(ctx, child, c->validation_context, out);
    case ENVOY__EXTENSIONS__TRANSPORT_SOCKETS__TLS__V3__COMMON_TLS_CONTEXT__VALIDATION_CONTEXT_TYPE_COMBINED_VALIDATION_CONTEXT: {
        const Envoy__Extensions__TransportSockets__Tls__V3__CommonTlsContext__CombinedCertificateValidationContext
            *cv = c->combined_validation_context;
        xv_key(child, path, "combined_validation_context");
        if (cv->validation_context_sds_secret_config != NULL) {
            xv_key(child, child, "validation_context_sds_secret_config");
            xv_error(ctx, child, "field not supported (A29)");
            return false;
        }
        if (cv->validation_context_certificate_provider_instance != NULL) {
            char inst[XV_PATH_MAX];
            xv_key(inst, child, "validation_context_certificate_provider_instance");
            out->ca_instance = read_instance(
                ctx, inst, cv->validation_context_certificate_provider_instance->instance_name);
            if (out->ca_instance == NULL)
                return false;
        }
        if (cv->default_validation_context == NULL)
            return true;
        xv_key(child, child, "default_validation_context");
        return read_validation(ctx, child, cv->default_validation_context, out);
    }
    case ENVOY__EXTENSIONS__TRANSPORT_SOCKETS__TLS__V3__COMMON_TLS_CONTEXT__VALIDATION_CONTEXT_TYPE_VALIDATION_CONTEXT_CERTIFICATE_PROVIDER_INSTANCE:
        xv_key(child, path, "validation_context_certificate_provider_instance");
        out->ca_instance = read_instance(
            ctx, child, c->validation_context_certificate_provider_instance->instance_name);
        return out->ca_instance != NULL;
    case ENVOY__EXTENSIONS__TRANSPORT_SOCKETS__TLS__V3__COMMON_TLS_CONTEXT__VALIDATION_CONTEXT_TYPE_VALIDATION_CONTEXT_SDS_SECRET_CONFIG:
        xv_key(child, path, "validation_context_sds_secret_config");
        xv_error(ctx, child, "field not supported (A29)");
        return false;
    default:
        return true; /* no CA: refused by the caller */
    }
}

static bool read_common(struct xv_ctx *ctx, const CommonTlsContext *c, struct xlb_upstream_tls *out)
{
    const char *path = "transport_socket.typed_config.value.common_tls_context";
    char child[XV_PATH_MAX];
    const char *refused = c->tls_params != NULL       ? "tls_params"
                          : c->n_tls_certificates > 0 ? "tls_certificates"
                          : c->n_tls_certificate_sds_secret_configs > 0
                              ? "tls_certificate_sds_secret_configs"
                              : NULL;
    if (refused != NULL) {
        xv_key(child, path, refused);
        xv_error(ctx, child, "field not supported (A29)");
        return false;
    }
    const char *cert = c->tls_certificate_provider_instance != NULL
                           ? c->tls_certificate_provider_instance->instance_name
                       : c->tls_certificate_certificate_provider_instance != NULL
                           ? c->tls_certificate_certificate_provider_instance->instance_name
                           : NULL;
    if (cert != NULL) {
        xv_key(child, path,
               c->tls_certificate_provider_instance != NULL
                   ? "tls_certificate_provider_instance"
                   : "tls_certificate_certificate_provider_instance");
        out->cert_instance = read_instance(ctx, child, cert);
        if (out->cert_instance == NULL)
            return false;
    }
    if (!read_validation_type(ctx, c, out))
        return false;
    if (out->ca_instance == NULL) {
        xv_error(ctx, path, "no CA certificate provider instance (A29: required upstream)");
        return false;
    }
    return true;
}

bool xv_transport_socket(struct xv_ctx *ctx, const Envoy__Config__Cluster__V3__Cluster *c,
                         struct xlb_upstream_tls *out)
{
    memset(out, 0, sizeof(*out));
    if (c->transport_socket == NULL)
        return true;
    Envoy__Extensions__TransportSockets__Tls__V3__UpstreamTlsContext *tls =
        (Envoy__Extensions__TransportSockets__Tls__V3__UpstreamTlsContext *)xv_unpack_only(
            ctx, "transport_socket.typed_config", c->transport_socket->typed_config,
            &envoy__extensions__transport_sockets__tls__v3__upstream_tls_context__descriptor,
            "transport socket");
    if (tls == NULL)
        return false;
    bool ok;
    if (tls->common_tls_context == NULL) {
        xv_error(ctx, "transport_socket.typed_config.value.common_tls_context",
                 "field not present");
        ok = false;
    } else {
        ok = read_common(ctx, tls->common_tls_context, out);
    }
    protobuf_c_message_free_unpacked(&tls->base, NULL);
    out->enabled = ok;
    if (!ok)
        xlb_upstream_tls_free(out);
    return ok;
}

void xlb_upstream_tls_free(struct xlb_upstream_tls *tls)
{
    free(tls->ca_instance);
    free(tls->cert_instance);
    for (uint32_t i = 0; i < tls->n_sans; i++)
        free((void *)(uintptr_t)tls->sans[i].value);
    memset(tls, 0, sizeof(*tls));
}
