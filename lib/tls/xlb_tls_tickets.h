/* SPDX-License-Identifier: BSD-3-Clause */
/* Session-ticket keys (docs/tls.md). The control plane makes them and rotates them: the newest
 * key seals new tickets, the one before still opens tickets sealed with it (and asks for a
 * renewal), so that a rotation does not cost every client a full handshake. Workers only read
 * them, through the snapshot's TLS servers. No server-side session cache: tickets are the only
 * resumption, so a worker never writes a shared cache. */
#ifndef XLB_TLS_TICKETS_H
#define XLB_TLS_TICKETS_H

#include <stdbool.h>
#include <stdint.h>

#include <openssl/ssl.h>

struct xlb_tls_ticket_key {
    uint8_t name[16];
    uint8_t aes_key[32];  /* AES-256-CBC */
    uint8_t hmac_key[32]; /* HMAC-SHA256 */
};

struct xlb_tls_ticket_keys {
    struct xlb_tls_ticket_key current;
    struct xlb_tls_ticket_key previous;
    bool has_previous;
};

/* Makes a fresh current key and keeps the old one as previous. 0, or -1 when the random
 * generator fails (the keys are then unchanged). */
int xlb_tls_ticket_keys_rotate(struct xlb_tls_ticket_keys *keys);

/* Seals and opens tickets on ctx with keys (which must outlive ctx). */
void xlb_tls_ticket_keys_install(SSL_CTX *ctx);

/* Where the ticket callback finds the keys of a handshake: set by the TLS server. */
const struct xlb_tls_ticket_keys *xlb_tls_ticket_keys_of(SSL *ssl);

#endif
