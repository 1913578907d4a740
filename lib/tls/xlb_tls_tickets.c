/* SPDX-License-Identifier: BSD-3-Clause */
#include "xlb_tls_tickets.h"

#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "xlb_const.h"

static bool key_is_set(const struct xlb_tls_ticket_key *key)
{
    static const struct xlb_tls_ticket_key unset;

    return memcmp(key, &unset, sizeof(*key)) != 0;
}

int xlb_tls_ticket_keys_rotate(struct xlb_tls_ticket_keys *keys)
{
    struct xlb_tls_ticket_key fresh;

    if (RAND_bytes(fresh.name, sizeof(fresh.name)) != 1 ||
        RAND_bytes(fresh.aes_key, sizeof(fresh.aes_key)) != 1 ||
        RAND_bytes(fresh.hmac_key, sizeof(fresh.hmac_key)) != 1)
        return -1;
    keys->previous = keys->current;
    keys->has_previous = key_is_set(&keys->current);
    keys->current = fresh;
    return 0;
}

static int ticket_key_apply(const struct xlb_tls_ticket_key *key, unsigned char *iv,
                            EVP_CIPHER_CTX *cipher, EVP_MAC_CTX *mac, int enc)
{
    static char digest[] = "SHA256";
    /* OSSL_PARAM takes a mutable pointer to a key it only reads. */
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, XLB_UNCONST(key->hmac_key),
                                          sizeof(key->hmac_key)),
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
        OSSL_PARAM_construct_end(),
    };

    if (EVP_MAC_CTX_set_params(mac, params) != 1)
        return -1;
    if (enc)
        return EVP_EncryptInit_ex(cipher, EVP_aes_256_cbc(), NULL, key->aes_key, iv) == 1 ? 0 : -1;
    return EVP_DecryptInit_ex(cipher, EVP_aes_256_cbc(), NULL, key->aes_key, iv) == 1 ? 0 : -1;
}

/* OpenSSL's ticket callback: 1 sealed/opened, 2 opened with the previous key (renew), 0 not our
 * key (full handshake), -1 error. */
static int ticket_key_callback(SSL *ssl, unsigned char key_name[16], unsigned char *iv,
                               EVP_CIPHER_CTX *cipher, EVP_MAC_CTX *mac, int enc)
{
    const struct xlb_tls_ticket_keys *keys = xlb_tls_ticket_keys_of(ssl);

    if (keys == NULL)
        return enc ? -1 : 0;
    if (enc) {
        if (RAND_bytes(iv, EVP_MAX_IV_LENGTH) != 1)
            return -1;
        memcpy(key_name, keys->current.name, sizeof(keys->current.name));
        return ticket_key_apply(&keys->current, iv, cipher, mac, 1) == 0 ? 1 : -1;
    }
    if (memcmp(key_name, keys->current.name, sizeof(keys->current.name)) == 0)
        return ticket_key_apply(&keys->current, iv, cipher, mac, 0) == 0 ? 1 : -1;
    if (keys->has_previous &&
        memcmp(key_name, keys->previous.name, sizeof(keys->previous.name)) == 0)
        return ticket_key_apply(&keys->previous, iv, cipher, mac, 0) == 0 ? 2 : -1;
    return 0;
}

void xlb_tls_ticket_keys_install(SSL_CTX *ctx)
{
    SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, ticket_key_callback);
}
