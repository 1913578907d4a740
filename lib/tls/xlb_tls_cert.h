/* SPDX-License-Identifier: BSD-3-Clause */
/* One certificate of a TLS VIP, loaded from PEM files (gRPC A29's file_watcher provider), and
 * what an operator sees of it. Control plane only: it reads files. */
#ifndef XLB_TLS_CERT_H
#define XLB_TLS_CERT_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

struct xlb_tls_cert_files {
    const char *certificate_file; /* PEM chain, leaf first */
    const char *private_key_file; /* PEM key matching the leaf */
};

/* A server context holding the chain and the key of files, with xlb's protocol settings
 * (TLS 1.2 and 1.3, no session cache, no renegotiation). NULL with a sentence in err when a
 * file cannot be read or parsed or the key does not match the certificate. */
SSL_CTX *xlb_tls_cert_context(const struct xlb_tls_cert_files *files, char *err, size_t errlen);

/* Puts the chain and the key of files on ctx (a server's or a client's). 0, or -1 with a
 * sentence in err. */
int xlb_tls_cert_use_pair(SSL_CTX *ctx, const struct xlb_tls_cert_files *files, char *err,
                          size_t errlen);

/* A worker's copy of a context's material (docs/tls.md, "Per-worker contexts"): src's chain
 * and key, its trusted CA certificates and the CA names it sends, each decoded again for dst so
 * that no object is shared (SSL_new writes the reference counts of what it uses). Nothing is
 * read from files: every worker's context holds what src holds. 0, or -1 with a sentence. */
int xlb_tls_cert_copy(SSL_CTX *dst, SSL_CTX *src, char *err, size_t errlen);

/* A server context with xlb's protocol settings and src's material (xlb_tls_cert_copy). */
SSL_CTX *xlb_tls_cert_context_copy(SSL_CTX *src, char *err, size_t errlen);

/* Trusts the CA certificates of ca_file for client certificates (mTLS) on ctx. 0, or -1 with a
 * sentence in err. */
int xlb_tls_cert_trust_clients(SSL_CTX *ctx, const char *ca_file, char *err, size_t errlen);

/* What `xlbctl vips` shows of a certificate. */
struct xlb_tls_cert_info {
    char subject[256];
    char sans[512];         /* DNS names, comma-separated */
    char not_after[32];     /* ISO 8601, UTC */
    int64_t not_after_unix; /* the same in seconds since 1970, 0 when unknown */
};

void xlb_tls_cert_describe(const SSL_CTX *ctx, struct xlb_tls_cert_info *out);

#endif
