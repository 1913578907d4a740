/* SPDX-License-Identifier: BSD-3-Clause */
#include "tls_test_certs.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

static int add_extension(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509_EXTENSION *ext;
    char copy[256];

    snprintf(copy, sizeof(copy), "%s", value);
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
    ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, copy);
    if (ext == NULL)
        return -1;
    X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
    return 0;
}

/* A certificate for name (a DNS SAN when dns), signed by issuer (itself when NULL). */
static X509 *make_cert(EVP_PKEY *key, const char *name, bool dns, bool ca, X509 *issuer,
                       EVP_PKEY *issuer_key)
{
    static long serial = 1;
    X509 *cert = X509_new();
    char san[128];

    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), serial++);
    X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert), 86400L * 30);
    X509_set_pubkey(cert, key);
    X509_NAME_add_entry_by_txt(X509_get_subject_name(cert), "CN", MBSTRING_ASC,
                               (const unsigned char *)name, -1, -1, 0);
    X509_set_issuer_name(cert, X509_get_subject_name(issuer != NULL ? issuer : cert));
    add_extension(cert, issuer != NULL ? issuer : cert, NID_basic_constraints,
                  ca ? "critical,CA:TRUE" : "CA:FALSE");
    if (dns) {
        snprintf(san, sizeof(san), "DNS:%s", name);
        add_extension(cert, issuer != NULL ? issuer : cert, NID_subject_alt_name, san);
    }
    X509_sign(cert, issuer_key != NULL ? issuer_key : key, EVP_sha256());
    return cert;
}

static int write_pair(const char *cert_path, const char *key_path, X509 *cert, EVP_PKEY *key)
{
    FILE *f = fopen(cert_path, "w");
    int ok;

    if (f == NULL)
        return -1;
    ok = PEM_write_X509(f, cert);
    fclose(f);
    if (key_path == NULL)
        return ok ? 0 : -1;
    f = fopen(key_path, "w");
    if (f == NULL)
        return -1;
    ok = ok && PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL);
    fclose(f);
    return ok ? 0 : -1;
}

static void path(char *out, const struct tls_test_certs *certs, const char *name)
{
    snprintf(out, PATH_MAX, "%s/%s", certs->dir, name);
}

/* A leaf signed by issuer (self-signed when NULL), written to cert_path and key_path. */
static int make_leaf(const char *cert_path, const char *key_path, const char *name, bool dns,
                     X509 *issuer, EVP_PKEY *issuer_key)
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *cert = make_cert(key, name, dns, false, issuer, issuer_key);
    int r = write_pair(cert_path, key_path, cert, key);

    X509_free(cert);
    EVP_PKEY_free(key);
    return r;
}

int tls_test_certs_make(struct tls_test_certs *certs)
{
    EVP_PKEY *ca_key;
    X509 *ca;
    int r = 0;

    memset(certs, 0, sizeof(*certs));
    snprintf(certs->dir, sizeof(certs->dir), "/tmp/xlb-tls-test-XXXXXX");
    if (mkdtemp(certs->dir) == NULL)
        return -1;
    path(certs->ca, certs, "ca.pem");
    path(certs->server_cert, certs, "server.pem");
    path(certs->server_key, certs, "server.key");
    path(certs->other_cert, certs, "other.pem");
    path(certs->other_key, certs, "other.key");
    path(certs->client_cert, certs, "client.pem");
    path(certs->client_key, certs, "client.key");
    path(certs->stranger_cert, certs, "stranger.pem");
    path(certs->stranger_key, certs, "stranger.key");
    ca_key = EVP_EC_gen("P-256");
    ca = make_cert(ca_key, "xlb test CA", false, true, NULL, NULL);
    r |= write_pair(certs->ca, NULL, ca, ca_key);
    r |= make_leaf(certs->server_cert, certs->server_key, "vip.test", true, ca, ca_key);
    r |= make_leaf(certs->other_cert, certs->other_key, "other.test", true, ca, ca_key);
    r |= make_leaf(certs->client_cert, certs->client_key, "client", false, ca, ca_key);
    r |= make_leaf(certs->stranger_cert, certs->stranger_key, "client", false, NULL, NULL);
    X509_free(ca);
    EVP_PKEY_free(ca_key);
    return r;
}

void tls_test_certs_remove(const struct tls_test_certs *certs)
{
    const char *const files[] = {certs->ca,         certs->server_cert,   certs->server_key,
                                 certs->other_cert, certs->other_key,     certs->client_cert,
                                 certs->client_key, certs->stranger_cert, certs->stranger_key};

    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
        unlink(files[i]);
    rmdir(certs->dir);
}
