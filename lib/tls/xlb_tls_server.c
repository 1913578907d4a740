/* SPDX-License-Identifier: BSD-3-Clause */
#include "xlb_tls_server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/tls1.h>
#include <openssl/x509v3.h>

/* Each certificate's context points back at its row (and so its server); each SSL holds its
 * refusal reason. */
static int server_index = -1;
static int refusal_index = -1;

static int ex_indexes(void)
{
    if (server_index < 0)
        server_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, NULL);
    if (refusal_index < 0)
        refusal_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
    return server_index >= 0 && refusal_index >= 0 ? 0 : -1;
}

static const struct xlb_tls_server *server_of(SSL *ssl)
{
    const struct xlb_tls_server_row *row = SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), server_index);

    return row != NULL ? row->srv : NULL;
}

const struct xlb_tls_ticket_keys *xlb_tls_ticket_keys_of(SSL *ssl)
{
    const struct xlb_tls_server *srv = server_of(ssl);

    return srv != NULL ? &srv->ticket_keys : NULL;
}

static void refuse(SSL *ssl, enum xlb_tls_failure why)
{
    SSL_set_ex_data(ssl, refusal_index, (void *)(uintptr_t)why);
}

enum xlb_tls_failure xlb_tls_server_refusal(const SSL *ssl)
{
    return (enum xlb_tls_failure)(uintptr_t)SSL_get_ex_data(ssl, refusal_index);
}

/* SNI: the first certificate whose names cover the requested one; else the default. The
 * worker's own row: the switch takes a reference on a context only it uses. */
static int choose_certificate(SSL *ssl, int *alert, void *arg)
{
    const struct xlb_tls_server_row *row = arg;
    const struct xlb_tls_server *srv = row->srv;
    const char *name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);

    (void)alert;
    if (name == NULL)
        return SSL_TLSEXT_ERR_NOACK;
    for (uint32_t i = 0; i < srv->n_certs; i++) {
        X509 *leaf = SSL_CTX_get0_certificate(row->certs[i]);

        if (leaf != NULL && X509_check_host(leaf, name, 0, 0, NULL) == 1) {
            if (i > 0)
                SSL_set_SSL_CTX(ssl, row->certs[i]);
            return SSL_TLSEXT_ERR_OK;
        }
    }
    return SSL_TLSEXT_ERR_NOACK;
}

/* A client that sends no ALPN at all never reaches the ALPN callback: refuse it here. */
static int check_client_hello(SSL *ssl, int *alert, void *arg)
{
    const struct xlb_tls_server *srv = ((const struct xlb_tls_server_row *)arg)->srv;
    const unsigned char *ext;
    size_t len;

    if (srv->alpn_wire_len == 0 ||
        SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_application_layer_protocol_negotiation, &ext,
                                  &len) == 1)
        return SSL_CLIENT_HELLO_SUCCESS;
    refuse(ssl, XLB_TLS_FAIL_NO_ALPN);
    *alert = SSL_AD_NO_APPLICATION_PROTOCOL;
    return SSL_CLIENT_HELLO_ERROR;
}

static int choose_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
    const struct xlb_tls_server *srv = ((const struct xlb_tls_server_row *)arg)->srv;
    unsigned char *chosen;

    if (srv->alpn_wire_len == 0)
        return SSL_TLSEXT_ERR_NOACK;
    /* SSL_select_next_proto's output points into one of its inputs, which it only reads. */
    if (SSL_select_next_proto(&chosen, outlen, srv->alpn_wire, srv->alpn_wire_len, in, inlen) ==
        OPENSSL_NPN_NEGOTIATED) {
        *out = chosen;
        return SSL_TLSEXT_ERR_OK;
    }
    refuse(ssl, XLB_TLS_FAIL_NO_ALPN);
    return SSL_TLSEXT_ERR_ALERT_FATAL;
}

static int alpn_encode(struct xlb_tls_server *srv, const struct xlb_tls_server_config *cfg,
                       char *err, size_t errlen)
{
    for (uint32_t i = 0; i < cfg->n_alpn; i++) {
        size_t n = cfg->alpn[i] != NULL ? strlen(cfg->alpn[i]) : 0;

        if (n == 0 || n > 255 || srv->alpn_wire_len + 1 + n > sizeof(srv->alpn_wire)) {
            snprintf(err, errlen, "alpn entry %u is empty or too long", i);
            return -1;
        }
        srv->alpn_wire[srv->alpn_wire_len++] = (uint8_t)n;
        memcpy(srv->alpn_wire + srv->alpn_wire_len, cfg->alpn[i], n);
        srv->alpn_wire_len += (uint32_t)n;
    }
    return 0;
}

/* The callbacks and verify settings; trust from the CA file (row 0) or row 0's copy. */
static int configure_context(struct xlb_tls_server_row *row, SSL_CTX *ctx,
                             const struct xlb_tls_server_config *cfg, char *err, size_t errlen)
{
    SSL_CTX_set_ex_data(ctx, server_index, row);
    SSL_CTX_set_tlsext_servername_callback(ctx, choose_certificate);
    SSL_CTX_set_tlsext_servername_arg(ctx, row);
    SSL_CTX_set_client_hello_cb(ctx, check_client_hello, row);
    SSL_CTX_set_alpn_select_cb(ctx, choose_alpn, row);
    xlb_tls_ticket_keys_install(ctx);
    /* Row 0 reads the CA file; the others got row 0's copy (xlb_tls_cert_context_copy). */
    if (row == &row->srv->rows[0] && cfg->ca_certificate_file != NULL &&
        xlb_tls_cert_trust_clients(ctx, cfg->ca_certificate_file, err, errlen) != 0)
        return -1;
    if (cfg->require_client_certificate)
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    else if (cfg->ca_certificate_file != NULL)
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    return 0;
}

/* Row 0 from the files; the others copy row 0's material, so every worker serves the same
 * certificates even when the files change during the build. */
static int build_row(struct xlb_tls_server *srv, uint32_t r,
                     const struct xlb_tls_server_config *cfg, char *err, size_t errlen)
{
    struct xlb_tls_server_row *row = &srv->rows[r];

    for (uint32_t i = 0; i < cfg->n_certs; i++) {
        row->certs[i] = r == 0 ? xlb_tls_cert_context(&cfg->certs[i], err, errlen)
                               : xlb_tls_cert_context_copy(srv->rows[0].certs[i], err, errlen);
        if (row->certs[i] == NULL || configure_context(row, row->certs[i], cfg, err, errlen) != 0)
            return -1;
    }
    return 0;
}

struct xlb_tls_server *xlb_tls_server_create(const struct xlb_tls_server_config *cfg, char *err,
                                             size_t errlen)
{
    struct xlb_tls_server *srv;

    if (ex_indexes() != 0) {
        snprintf(err, errlen, "OpenSSL has no room for xlb's TLS data");
        return NULL;
    }
    if (cfg->n_certs == 0 || cfg->n_certs > XLB_TLS_MAX_CERTS || cfg->n_alpn > XLB_TLS_MAX_ALPN) {
        snprintf(err, errlen, "a TLS VIP takes 1 to %d certificates and up to %d ALPN names",
                 XLB_TLS_MAX_CERTS, XLB_TLS_MAX_ALPN);
        return NULL;
    }
    if (cfg->require_client_certificate && cfg->ca_certificate_file == NULL) {
        snprintf(err, errlen, "require_client_certificate needs a ca_certificate_file");
        return NULL;
    }
    srv = calloc(1, sizeof(*srv));
    if (srv == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    srv->refs = 1;
    srv->require_client_certificate = cfg->require_client_certificate;
    srv->ticket_keys = cfg->ticket_keys;
    if (alpn_encode(srv, cfg, err, errlen) != 0)
        goto fail;
    srv->rows = calloc(xlb_tls_workers(), sizeof(*srv->rows));
    if (srv->rows == NULL) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (uint32_t r = 0; r < xlb_tls_workers(); r++) {
        srv->rows[r].srv = srv;
        srv->n_rows = r + 1;
        if (build_row(srv, r, cfg, err, errlen) != 0)
            goto fail;
    }
    memcpy(srv->certs, srv->rows[0].certs, sizeof(srv->certs));
    srv->n_certs = cfg->n_certs;
    return srv;
fail:
    xlb_tls_server_unref(srv);
    return NULL;
}

void xlb_tls_server_ref(struct xlb_tls_server *srv)
{
    srv->refs++;
}

void xlb_tls_server_unref(struct xlb_tls_server *srv)
{
    if (srv == NULL || --srv->refs > 0)
        return;
    for (uint32_t r = 0; r < srv->n_rows; r++)
        for (uint32_t i = 0; i < XLB_TLS_MAX_CERTS; i++)
            SSL_CTX_free(srv->rows[r].certs[i]);
    free(srv->rows);
    OPENSSL_cleanse(&srv->ticket_keys, sizeof(srv->ticket_keys));
    free(srv);
}

SSL *xlb_tls_server_new_ssl(const struct xlb_tls_server *srv, unsigned worker)
{
    SSL *ssl = SSL_new(srv->rows[worker % srv->n_rows].certs[0]);

    if (ssl != NULL)
        SSL_set_accept_state(ssl);
    return ssl;
}
