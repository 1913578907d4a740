/*
 * Between the bootstrap reader's files: bootstrap.c (the document and the xlb section's own
 * keys), bootstrap_grpc.c (gRPC's part), bootstrap_ports.c (ports and the addresses xlb owns)
 * and bootstrap_vips.c. Each xlb object's keys are read through its table (config_keys.h).
 */
#ifndef XLB_BOOTSTRAP_INTERNAL_H
#define XLB_BOOTSTRAP_INTERNAL_H

#include "bootstrap.h"
#include "config_keys.h"

char *xlb_bootstrap_dup(const char *s); /* strdup, NULL for NULL */

/* gRPC's bootstrap: unknown fields ignored, as gRPC does. */
void xlb_bootstrap_read_xds_servers(const cJSON *root, struct xlb_bootstrap *out,
                                    struct xlb_errors *errs);
void xlb_bootstrap_read_certificate_providers(const cJSON *root, struct xlb_bootstrap *out,
                                              struct xlb_errors *errs);
/* A VIP's "tls" object into tls, its strings borrowed from the document until
 * xlb_bootstrap_vip_tls_keep copies them (a VIP rejected later then leaks nothing). */
bool xlb_bootstrap_read_vip_tls(const cJSON *vip, const char *path, const char *name,
                                const struct xlb_bootstrap *out, struct xlb_vip_tls_config *tls,
                                struct xlb_errors *errs);
void xlb_bootstrap_vip_tls_keep(const struct xlb_bootstrap *out, struct xlb_vip_tls_config *tls);
void xlb_bootstrap_vip_tls_free(struct xlb_vip_tls_config *tls);
void xlb_bootstrap_free_cert_providers(struct xlb_bootstrap *b);
void xlb_bootstrap_read_node(const cJSON *root, struct xlb_bootstrap *out, struct xlb_errors *errs);

/* Readers of xlb section keys (ctx: the struct xlb_bootstrap being filled). */
xlb_config_read_fn xlb_bootstrap_read_ports;
xlb_config_read_fn xlb_bootstrap_read_snat;
xlb_config_read_fn xlb_bootstrap_read_vips;

/* What an owned address (a port's or an SNAT address) already is, for clash messages; NULL if
 * it is new. */
const char *xlb_bootstrap_owned_as(const struct xlb_bootstrap *out, const struct xlb_addr *addr);

#endif
