/* SPDX-License-Identifier: BSD-3-Clause */
#include "xlb_tls_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <pcre2.h>

#include "xlb_tls_cert.h"
#include "xlb_tls_workers.h"

/* What a client context keeps beside OpenSSL's state: the matchers, owned. */
struct matchers {
    uint32_t n;
    struct xlb_san_matcher m[XLB_TLS_MAX_SAN_MATCHERS];
    pcre2_code *re[XLB_TLS_MAX_SAN_MATCHERS];
};

static int matchers_index = -1;

static void free_matchers(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
                          void *argp)
{
    (void)parent, (void)ad, (void)idx, (void)argl, (void)argp;
    struct matchers *ms = ptr;
    if (ms == NULL)
        return;
    for (uint32_t i = 0; i < ms->n; i++) {
        free((void *)(uintptr_t)ms->m[i].value);
        pcre2_code_free(ms->re[i]);
    }
    free(ms);
}

static bool ends_with(const char *s, size_t len, const char *tail, bool nocase)
{
    size_t n = strlen(tail);
    return n <= len &&
           (nocase ? strncasecmp(s + len - n, tail, n) : memcmp(s + len - n, tail, n)) == 0;
}

static bool contains(const char *s, size_t len, const char *part, bool nocase)
{
    size_t n = strlen(part);
    for (size_t i = 0; i + n <= len; i++)
        if ((nocase ? strncasecmp(s + i, part, n) : memcmp(s + i, part, n)) == 0)
            return true;
    return false;
}

static bool regex_full_match(pcre2_code *re, const char *s, size_t len)
{
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    if (md == NULL)
        return false;
    int rc = pcre2_match(re, (PCRE2_SPTR)s, len, 0, PCRE2_ANCHORED | PCRE2_ENDANCHORED, md, NULL);
    pcre2_match_data_free(md);
    return rc >= 0;
}

static bool san_matches(const struct xlb_san_matcher *m, pcre2_code *re, const char *san,
                        size_t len)
{
    size_t n = strlen(m->value);
    switch (m->type) {
    case XLB_SAN_EXACT:
        return n == len &&
               (m->ignore_case ? strncasecmp(san, m->value, n) : memcmp(san, m->value, n)) == 0;
    case XLB_SAN_PREFIX:
        return n <= len &&
               (m->ignore_case ? strncasecmp(san, m->value, n) : memcmp(san, m->value, n)) == 0;
    case XLB_SAN_SUFFIX:
        return ends_with(san, len, m->value, m->ignore_case);
    case XLB_SAN_CONTAINS:
        return contains(san, len, m->value, m->ignore_case);
    case XLB_SAN_REGEX:
        return re != NULL && regex_full_match(re, san, len);
    }
    return false;
}

bool xlb_tls_san_matches(const struct xlb_san_matcher *m, const char *san, size_t len)
{
    if (m->type != XLB_SAN_REGEX)
        return san_matches(m, NULL, san, len);
    int code;
    PCRE2_SIZE at;
    pcre2_code *re =
        pcre2_compile((PCRE2_SPTR)m->value, PCRE2_ZERO_TERMINATED, 0, &code, &at, NULL);
    bool ok = san_matches(m, re, san, len);
    pcre2_code_free(re);
    return ok;
}

/* A SAN as text: DNS, URI and email as they are, an IP address in its usual notation. */
static size_t san_text(const GENERAL_NAME *name, char *buf, size_t cap)
{
    const ASN1_STRING *s = NULL;
    switch (name->type) {
    case GEN_DNS:
        s = name->d.dNSName;
        break;
    case GEN_URI:
        s = name->d.uniformResourceIdentifier;
        break;
    case GEN_EMAIL:
        s = name->d.rfc822Name;
        break;
    case GEN_IPADD: {
        const unsigned char *ip = ASN1_STRING_get0_data(name->d.iPAddress);
        int len = ASN1_STRING_length(name->d.iPAddress);
        if (len == 4)
            return (size_t)snprintf(buf, cap, "%u.%u.%u.%u", ip[0], ip[1], ip[2], ip[3]);
        if (len == 16) {
            size_t used = 0;
            for (int i = 0; i < 16; i += 2)
                used += (size_t)snprintf(buf + used, cap - used, "%s%x", i ? ":" : "",
                                         (unsigned)(ip[i] << 8 | ip[i + 1]));
            return used;
        }
        return 0;
    }
    default:
        return 0;
    }
    int len = ASN1_STRING_length(s);
    if (len <= 0 || (size_t)len >= cap)
        return 0;
    memcpy(buf, ASN1_STRING_get0_data(s), (size_t)len);
    buf[len] = '\0';
    return (size_t)len;
}

static bool leaf_matches(X509 *leaf, const struct matchers *ms)
{
    GENERAL_NAMES *names = X509_get_ext_d2i(leaf, NID_subject_alt_name, NULL, NULL);
    bool ok = false;
    char text[512];
    for (int i = 0; names != NULL && i < sk_GENERAL_NAME_num(names) && !ok; i++) {
        size_t len = san_text(sk_GENERAL_NAME_value(names, i), text, sizeof(text));
        for (uint32_t k = 0; len > 0 && k < ms->n && !ok; k++)
            ok = san_matches(&ms->m[k], ms->re[k], text, len);
    }
    GENERAL_NAMES_free(names);
    return ok;
}

/* After OpenSSL's chain check: the leaf's SANs against the matchers. */
static int verify_peer(int preverify_ok, X509_STORE_CTX *store)
{
    if (!preverify_ok || X509_STORE_CTX_get_error_depth(store) != 0)
        return preverify_ok;
    SSL *ssl = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx());
    const struct matchers *ms = SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), matchers_index);
    if (ms == NULL || ms->n == 0 || leaf_matches(X509_STORE_CTX_get_current_cert(store), ms))
        return 1;
    X509_STORE_CTX_set_error(store, X509_V_ERR_HOSTNAME_MISMATCH);
    return 0;
}

static struct matchers *copy_matchers(const struct xlb_tls_client_config *cfg, char *err,
                                      size_t errlen)
{
    struct matchers *ms = calloc(1, sizeof(*ms));
    if (ms == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    for (uint32_t i = 0; i < cfg->n_sans && i < XLB_TLS_MAX_SAN_MATCHERS; i++) {
        ms->m[i] = cfg->sans[i];
        ms->m[i].value = strdup(cfg->sans[i].value != NULL ? cfg->sans[i].value : "");
        ms->n = i + 1;
        if (ms->m[i].value == NULL) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        if (cfg->sans[i].type != XLB_SAN_REGEX)
            continue;
        int code;
        PCRE2_SIZE at;
        ms->re[i] =
            pcre2_compile((PCRE2_SPTR)ms->m[i].value, PCRE2_ZERO_TERMINATED, 0, &code, &at, NULL);
        if (ms->re[i] == NULL) {
            snprintf(err, errlen, "match_subject_alt_names[%u]: invalid regex", i);
            goto fail;
        }
    }
    return ms;
fail:
    free_matchers(NULL, ms, NULL, 0, 0, NULL);
    return NULL;
}

/* The other workers' contexts, kept by worker 0's (the one the control plane holds). */
struct siblings {
    uint32_t n;
    SSL_CTX *ctx[XLB_TLS_WORKERS_MAX];
};

static int siblings_index = -1;

static void free_siblings(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
                          void *argp)
{
    (void)parent, (void)ad, (void)idx, (void)argl, (void)argp;
    struct siblings *sb = ptr;
    if (sb == NULL)
        return;
    /* An SSL still open on one holds its own reference: that context lives on until then. */
    for (uint32_t i = 0; i < sb->n; i++)
        SSL_CTX_free(sb->ctx[i]);
    free(sb);
}

static int ex_indexes(void)
{
    if (matchers_index < 0)
        matchers_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, free_matchers);
    if (siblings_index < 0)
        siblings_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, free_siblings);
    return matchers_index >= 0 && siblings_index >= 0 ? 0 : -1;
}

/* A client context: settings, trust and certificate from cfg's files (from NULL) or copied
 * from `from` (a worker's, xlb_tls_cert_copy), and matchers of its own. */
static SSL_CTX *client_context(const struct xlb_tls_client_config *cfg, SSL_CTX *from, char *err,
                               size_t errlen)
{
    static const unsigned char h2[] = {2, 'h', '2'};
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == NULL) {
        snprintf(err, errlen, "no TLS context");
        ERR_clear_error();
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    struct matchers *ms = NULL;
    if (SSL_CTX_set_alpn_protos(ctx, h2, sizeof(h2)) != 0)
        goto fail;
    if (from != NULL) {
        if (xlb_tls_cert_copy(ctx, from, err, errlen) != 0)
            goto fail;
    } else {
        if (xlb_tls_cert_trust_clients(ctx, cfg->ca_certificate_file, err, errlen) != 0)
            goto fail;
        if (cfg->certificate_file != NULL) {
            struct xlb_tls_cert_files pair = {cfg->certificate_file, cfg->private_key_file};
            if (xlb_tls_cert_use_pair(ctx, &pair, err, errlen) != 0)
                goto fail;
        }
    }
    ms = copy_matchers(cfg, err, errlen);
    if (ms == NULL || SSL_CTX_set_ex_data(ctx, matchers_index, ms) != 1)
        goto fail;
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, verify_peer);
    return ctx;
fail:
    if (ms != NULL && SSL_CTX_get_ex_data(ctx, matchers_index) != ms)
        free_matchers(NULL, ms, NULL, 0, 0, NULL);
    SSL_CTX_free(ctx);
    ERR_clear_error();
    return NULL;
}

SSL_CTX *xlb_tls_client_create(const struct xlb_tls_client_config *cfg, char *err, size_t errlen)
{
    if (ex_indexes() != 0) {
        snprintf(err, errlen, "no TLS context");
        return NULL;
    }
    SSL_CTX *ctx = client_context(cfg, NULL, err, errlen);
    if (ctx == NULL || xlb_tls_workers() == 1)
        return ctx;
    struct siblings *sb = calloc(1, sizeof(*sb));
    if (sb == NULL || SSL_CTX_set_ex_data(ctx, siblings_index, sb) != 1) {
        free(sb);
        snprintf(err, errlen, "out of memory");
        SSL_CTX_free(ctx);
        return NULL;
    }
    for (uint32_t w = 1; w < xlb_tls_workers(); w++) {
        sb->ctx[sb->n] = client_context(cfg, ctx, err, errlen);
        if (sb->ctx[sb->n] == NULL) {
            SSL_CTX_free(ctx); /* and the siblings made so far */
            return NULL;
        }
        sb->n++;
    }
    return ctx;
}

SSL *xlb_tls_client_new_ssl(SSL_CTX *ctx, unsigned worker)
{
    const struct siblings *sb = SSL_CTX_get_ex_data(ctx, siblings_index);
    if (sb != NULL && worker % (sb->n + 1) != 0)
        ctx = sb->ctx[worker % (sb->n + 1) - 1];
    SSL *ssl = SSL_new(ctx);
    if (ssl != NULL)
        SSL_set_connect_state(ssl);
    return ssl;
}
