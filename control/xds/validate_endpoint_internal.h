/* Shared between the EDS validator's files. Internal to control/xds. */
#ifndef XLB_XDS_VALIDATE_ENDPOINT_INTERNAL_H
#define XLB_XDS_VALIDATE_ENDPOINT_INTERNAL_H

#include "endpoint_config.h"
#include "validate_internal.h"

/*
 * One LocalityLbEndpoints. Returns 1 when kept (its priority in *priority), 0 when gRPC
 * ignores it (no weight), -1 on an error.
 */
int xv_locality(struct xv_ctx *ctx, const char *path,
                const Envoy__Config__Endpoint__V3__LocalityLbEndpoints *msg,
                struct xlb_eds_locality *out, uint32_t *priority);

void xv_locality_free(struct xlb_eds_locality *loc);

#endif
