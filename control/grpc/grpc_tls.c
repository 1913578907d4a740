/* OpenSSL for gRPC channels: TLS 1.2+, ALPN h2, the server verified against the configured
 * CAs and its name, an optional client certificate for mTLS. */
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>

#include "grpc_internal.h"

void xlb_grpc_tls_error(char *error, size_t len, const char *what)
{
    unsigned long code = ERR_get_error();
    char reason[256] = "no further detail";
    if (code != 0)
        ERR_error_string_n(code, reason, sizeof(reason));
    ERR_clear_error();
    snprintf(error, len, "%s: %s", what, reason);
}

SSL_CTX *xlb_grpc_tls_context(const struct xlb_grpc_channel *ch, char *error, size_t len)
{
    static const unsigned char alpn[] = {2, 'h', '2'};
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == NULL) {
        xlb_grpc_tls_error(error, len, "TLS context");
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    const char *failed = NULL;
    if (SSL_CTX_set_alpn_protos(ctx, alpn, sizeof(alpn)) != 0)
        failed = "ALPN";
    else if (ch->ca_file ? SSL_CTX_load_verify_locations(ctx, ch->ca_file, NULL) != 1
                         : SSL_CTX_set_default_verify_paths(ctx) != 1)
        failed = "loading the CA certificates";
    else if (ch->cert_file && SSL_CTX_use_certificate_chain_file(ctx, ch->cert_file) != 1)
        failed = "loading the client certificate";
    else if (ch->key_file && SSL_CTX_use_PrivateKey_file(ctx, ch->key_file, SSL_FILETYPE_PEM) != 1)
        failed = "loading the client private key";
    else if (ch->cert_file && SSL_CTX_check_private_key(ctx) != 1)
        failed = "client key and certificate do not match";
    if (failed != NULL) {
        xlb_grpc_tls_error(error, len, failed);
        SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}
