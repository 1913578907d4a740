/* SPDX-License-Identifier: BSD-3-Clause */
/* A TLS VIP's server side (docs/tls.md): its certificates (SNI chooses; the first is the
 * default), its ALPN list, mTLS and session-ticket keys. Built on the control plane, handed to
 * workers through the snapshot, read-only there, reference counted and freed after the RCU
 * grace period like other snapshot parts. Workers make one SSL per connection from it. */
#ifndef XLB_TLS_SERVER_H
#define XLB_TLS_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "xlb_tls_cert.h"
#include "xlb_tls_counters.h"
#include "xlb_tls_tickets.h"
#include "xlb_tls_workers.h"

#define XLB_TLS_MAX_CERTS     8
#define XLB_TLS_MAX_ALPN      4
#define XLB_TLS_ALPN_WIRE_MAX 64

struct xlb_tls_server_config {
    struct xlb_tls_cert_files certs[XLB_TLS_MAX_CERTS];
    uint32_t n_certs;
    const char *ca_certificate_file; /* trusted for client certificates; NULL: none */
    bool require_client_certificate;
    /* Protocols offered, preferred first. Not empty: a client must offer one of them, else its
     * handshake ends with a no_application_protocol alert. Empty: ALPN ignored. */
    const char *alpn[XLB_TLS_MAX_ALPN];
    uint32_t n_alpn;
    struct xlb_tls_ticket_keys ticket_keys;
};

struct xlb_tls_server;

/* One worker's contexts of a server: the same certificates, trust, callbacks and ticket keys,
 * in objects of its own (xlb_tls_workers.h). */
struct xlb_tls_server_row {
    const struct xlb_tls_server *srv;
    SSL_CTX *certs[XLB_TLS_MAX_CERTS];
};

struct xlb_tls_server {
    SSL_CTX *certs[XLB_TLS_MAX_CERTS]; /* rows[0]'s: what the control plane describes */
    uint32_t n_certs;
    struct xlb_tls_server_row *rows; /* one per worker (xlb_tls_workers() when built) */
    uint32_t n_rows;
    uint8_t alpn_wire[XLB_TLS_ALPN_WIRE_MAX]; /* length-prefixed, as on the wire */
    uint32_t alpn_wire_len;
    bool require_client_certificate;
    struct xlb_tls_ticket_keys ticket_keys;
    uint32_t refs; /* control plane only: snapshots hold them, workers never count */
};

/* NULL with a sentence in err: a file, a key, a CA or an ALPN name is wrong. refs = 1. */
struct xlb_tls_server *xlb_tls_server_create(const struct xlb_tls_server_config *cfg, char *err,
                                             size_t errlen);
void xlb_tls_server_ref(struct xlb_tls_server *srv);
void xlb_tls_server_unref(struct xlb_tls_server *srv);

/* A connection's SSL in server mode, on worker's contexts (xlb_tls_worker_index); NULL when
 * OpenSSL cannot allocate. */
SSL *xlb_tls_server_new_ssl(const struct xlb_tls_server *srv, unsigned worker);

/* Why a connection's handshake was refused by xlb's own checks (ALPN), set by the callbacks;
 * XLB_TLS_FAIL_NONE when they did not refuse it. */
enum xlb_tls_failure xlb_tls_server_refusal(const SSL *ssl);

#endif
