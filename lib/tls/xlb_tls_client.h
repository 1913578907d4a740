/* SPDX-License-Identifier: BSD-3-Clause */
/* A cluster's upstream TLS (gRPC A29, docs/tls.md): the client side of the stream mode's
 * subchannels to the cluster's endpoints. Built on the control plane from certificate provider
 * files; workers make one SSL per subchannel from it. The server's certificate must chain to
 * the CA and, when matchers are given, carry a subject alternative name one of them matches.
 * Its life is the SSL_CTX's: OpenSSL counts the references (the compiled cluster's and each
 * SSL's), so a subchannel handshaking while its cluster is replaced keeps what it uses. The
 * context holds one sibling per other worker (xlb_tls_workers.h), freed with it, each with the
 * same material decoded for it, so that a worker's SSL_new writes only its own context. */
#ifndef XLB_TLS_CLIENT_H
#define XLB_TLS_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#define XLB_TLS_MAX_SAN_MATCHERS 16

/* A29's match_subject_alt_names: a StringMatcher over each SAN (DNS, URI, email, IP). */
enum xlb_san_match {
    XLB_SAN_EXACT,
    XLB_SAN_PREFIX,
    XLB_SAN_SUFFIX,
    XLB_SAN_CONTAINS,
    XLB_SAN_REGEX, /* full match, PCRE2 */
};

struct xlb_san_matcher {
    enum xlb_san_match type;
    bool ignore_case; /* not for REGEX */
    const char *value;
};

struct xlb_tls_client_config {
    const char *ca_certificate_file; /* required */
    const char *certificate_file;    /* with private_key_file: a client certificate (mTLS) */
    const char *private_key_file;
    const struct xlb_san_matcher *sans;
    uint32_t n_sans;
};

/* A client context (ALPN h2, TLS 1.2 and 1.3, the CA trusted, the matchers kept with it);
 * NULL with a sentence in err. Free with SSL_CTX_free. */
SSL_CTX *xlb_tls_client_create(const struct xlb_tls_client_config *cfg, char *err, size_t errlen);

/* A subchannel's SSL in client mode, on worker's context (xlb_tls_worker_index); NULL when
 * OpenSSL cannot allocate. */
SSL *xlb_tls_client_new_ssl(SSL_CTX *ctx, unsigned worker);

/* Whether a SAN matches a matcher (exposed for tests). */
bool xlb_tls_san_matches(const struct xlb_san_matcher *m, const char *san, size_t len);

#endif
