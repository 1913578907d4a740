/* SPDX-License-Identifier: BSD-3-Clause */
#include "xlb_tls_cert.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

/* The first OpenSSL error of the queue as text, the queue emptied. */
static const char *openssl_reason(char *buf, size_t len)
{
    unsigned long e = ERR_get_error();

    ERR_clear_error();
    if (e == 0)
        return "no detail";
    ERR_error_string_n(e, buf, len);
    return buf;
}

/* Says why path cannot be opened, before OpenSSL's less direct errors. */
static int file_readable(const char *what, const char *path, char *err, size_t errlen)
{
    FILE *f;

    if (path == NULL || path[0] == '\0') {
        snprintf(err, errlen, "%s is missing", what);
        return -1;
    }
    f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errlen, "%s %s cannot be read: %s", what, path, strerror(errno));
        return -1;
    }
    fclose(f);
    return 0;
}

static const unsigned char session_context[] = "xlb";

static void set_protocol(SSL_CTX *ctx)
{
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    /* Workers never share a session cache: resumption is by tickets only. */
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
    /* One TLS 1.3 ticket per handshake is enough to resume; the default two doubles the work. */
    SSL_CTX_set_num_tickets(ctx, 1);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_RELEASE_BUFFERS);
    /* Sessions are bound to a context name; OpenSSL refuses to resume a client-verified session
     * without one. Ticket keys, not this name, decide which VIP can open a ticket. */
    SSL_CTX_set_session_id_context(ctx, session_context, sizeof(session_context) - 1);
}

static EVP_PKEY *read_private_key(const char *path)
{
    FILE *f = fopen(path, "r");
    EVP_PKEY *key;

    if (f == NULL)
        return NULL;
    key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
    fclose(f);
    return key;
}

int xlb_tls_cert_use_pair(SSL_CTX *ctx, const struct xlb_tls_cert_files *files, char *err,
                          size_t errlen)
{
    char why[256];

    if (file_readable("certificate_file", files->certificate_file, err, errlen) != 0 ||
        file_readable("private_key_file", files->private_key_file, err, errlen) != 0)
        return -1;
    if (SSL_CTX_use_certificate_chain_file(ctx, files->certificate_file) != 1) {
        snprintf(err, errlen, "certificate_file %s holds no PEM certificate: %s",
                 files->certificate_file, openssl_reason(why, sizeof(why)));
        return -1;
    }
    EVP_PKEY *key = read_private_key(files->private_key_file);
    if (key == NULL) {
        snprintf(err, errlen, "private_key_file %s holds no PEM private key: %s",
                 files->private_key_file, openssl_reason(why, sizeof(why)));
        return -1;
    }
    int rc = 0;
    if (SSL_CTX_use_PrivateKey(ctx, key) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
        ERR_clear_error();
        snprintf(err, errlen, "private_key_file %s does not match certificate_file %s",
                 files->private_key_file, files->certificate_file);
        rc = -1;
    }
    EVP_PKEY_free(key);
    return rc;
}

SSL_CTX *xlb_tls_cert_context(const struct xlb_tls_cert_files *files, char *err, size_t errlen)
{
    char why[256];
    SSL_CTX *ctx;

    if (file_readable("certificate_file", files->certificate_file, err, errlen) != 0 ||
        file_readable("private_key_file", files->private_key_file, err, errlen) != 0)
        return NULL;
    ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL) {
        snprintf(err, errlen, "no TLS context: %s", openssl_reason(why, sizeof(why)));
        return NULL;
    }
    set_protocol(ctx);
    if (xlb_tls_cert_use_pair(ctx, files, err, errlen) != 0) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

int xlb_tls_cert_trust_clients(SSL_CTX *ctx, const char *ca_file, char *err, size_t errlen)
{
    STACK_OF(X509_NAME) * names;
    char why[256];

    if (file_readable("ca_certificate_file", ca_file, err, errlen) != 0)
        return -1;
    if (SSL_CTX_load_verify_locations(ctx, ca_file, NULL) != 1) {
        snprintf(err, errlen, "ca_certificate_file %s holds no PEM certificate: %s", ca_file,
                 openssl_reason(why, sizeof(why)));
        return -1;
    }
    /* The CA names the server sends in its CertificateRequest, for clients that choose. */
    names = SSL_load_client_CA_file(ca_file);
    if (names != NULL)
        SSL_CTX_set_client_CA_list(ctx, names);
    ERR_clear_error();
    return 0;
}

static int copy_pair(SSL_CTX *dst, SSL_CTX *src)
{
    X509 *leaf = SSL_CTX_get0_certificate(src);
    EVP_PKEY *key = SSL_CTX_get0_privatekey(src);
    STACK_OF(X509) *chain = NULL;

    if (leaf == NULL || key == NULL)
        return 0; /* a client context without a certificate */
    X509 *leaf_copy = X509_dup(leaf);
    EVP_PKEY *key_copy = EVP_PKEY_dup(key);
    int ok = leaf_copy != NULL && key_copy != NULL &&
             SSL_CTX_use_certificate(dst, leaf_copy) == 1 &&
             SSL_CTX_use_PrivateKey(dst, key_copy) == 1;
    X509_free(leaf_copy);
    EVP_PKEY_free(key_copy);
    SSL_CTX_get0_chain_certs(src, &chain);
    for (int i = 0; ok && i < sk_X509_num(chain); i++) {
        X509 *c = X509_dup(sk_X509_value(chain, i));
        ok = c != NULL && SSL_CTX_add0_chain_cert(dst, c) == 1;
        if (!ok)
            X509_free(c);
    }
    return ok ? 0 : -1;
}

static int copy_trust(SSL_CTX *dst, SSL_CTX *src)
{
    STACK_OF(X509_OBJECT) *objects = X509_STORE_get0_objects(SSL_CTX_get_cert_store(src));
    X509_STORE *store = SSL_CTX_get_cert_store(dst);
    int ok = 1;

    for (int i = 0; ok && i < sk_X509_OBJECT_num(objects); i++) {
        X509 *ca = X509_OBJECT_get0_X509(sk_X509_OBJECT_value(objects, i));
        X509 *c = ca != NULL ? X509_dup(ca) : NULL;

        if (ca == NULL)
            continue;
        ok = c != NULL && X509_STORE_add_cert(store, c) == 1;
        X509_free(c);
    }
    STACK_OF(X509_NAME) *names = SSL_CTX_get_client_CA_list(src);
    if (ok && names != NULL && sk_X509_NAME_num(names) > 0) {
        STACK_OF(X509_NAME) *copy = SSL_dup_CA_list(names);

        ok = copy != NULL;
        if (ok)
            SSL_CTX_set_client_CA_list(dst, copy);
    }
    return ok ? 0 : -1;
}

int xlb_tls_cert_copy(SSL_CTX *dst, SSL_CTX *src, char *err, size_t errlen)
{
    char why[256];

    if (copy_pair(dst, src) != 0 || copy_trust(dst, src) != 0) {
        snprintf(err, errlen, "cannot copy a TLS context for a worker: %s",
                 openssl_reason(why, sizeof(why)));
        return -1;
    }
    return 0;
}

SSL_CTX *xlb_tls_cert_context_copy(SSL_CTX *src, char *err, size_t errlen)
{
    char why[256];
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());

    if (ctx == NULL) {
        snprintf(err, errlen, "no TLS context: %s", openssl_reason(why, sizeof(why)));
        return NULL;
    }
    set_protocol(ctx);
    if (xlb_tls_cert_copy(ctx, src, err, errlen) != 0) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

static void describe_sans(X509 *leaf, char *out, size_t len)
{
    GENERAL_NAMES *names = X509_get_ext_d2i(leaf, NID_subject_alt_name, NULL, NULL);
    size_t used = 0;

    out[0] = '\0';
    for (int i = 0; names != NULL && i < sk_GENERAL_NAME_num(names); i++) {
        const GENERAL_NAME *name = sk_GENERAL_NAME_value(names, i);
        int n;

        if (name->type != GEN_DNS)
            continue;
        n = snprintf(out + used, len - used, "%s%.*s", used > 0 ? "," : "",
                     ASN1_STRING_length(name->d.dNSName),
                     (const char *)ASN1_STRING_get0_data(name->d.dNSName));
        if (n < 0 || (size_t)n >= len - used)
            break;
        used += (size_t)n;
    }
    GENERAL_NAMES_free(names);
}

static void describe_not_after(X509 *leaf, struct xlb_tls_cert_info *out)
{
    struct tm tm;

    if (ASN1_TIME_to_tm(X509_get0_notAfter(leaf), &tm) != 1) {
        snprintf(out->not_after, sizeof(out->not_after), "?");
        return;
    }
    strftime(out->not_after, sizeof(out->not_after), "%Y-%m-%dT%H:%M:%SZ", &tm);
    out->not_after_unix = (int64_t)timegm(&tm);
}

void xlb_tls_cert_describe(const SSL_CTX *ctx, struct xlb_tls_cert_info *out)
{
    X509 *leaf = SSL_CTX_get0_certificate(ctx);

    memset(out, 0, sizeof(*out));
    if (leaf == NULL)
        return;
    X509_NAME_oneline(X509_get_subject_name(leaf), out->subject, sizeof(out->subject));
    describe_sans(leaf, out->sans, sizeof(out->sans));
    describe_not_after(leaf, out);
}
