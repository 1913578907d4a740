/* SPDX-License-Identifier: BSD-3-Clause */
/* TLS over one connection's byte stream (docs/tls.md), independent of who carries the bytes:
 * feed the ciphertext a client sent, read the plaintext it carried, write plaintext, take the
 * ciphertext to send. OpenSSL works on memory BIOs, so it never touches a socket. The relay
 * (dataplane/relay/) drives it over an xlb_tcp_conn; the stream mode will too. */
#ifndef XLB_TLS_CONN_H
#define XLB_TLS_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "tls/xlb_tls_client.h"
#include "tls/xlb_tls_counters.h"
#include "tls/xlb_tls_server.h"

/* Ciphertext held unread inside the glue at most: two full TLS records. The caller keeps the
 * rest in its TCP receive queue, so a client cannot make the glue grow. */
#define XLB_TLS_INPUT_MAX (2u * (16384u + 2048u))

enum xlb_tls_state {
    XLB_TLS_HANDSHAKING,
    XLB_TLS_OPEN,   /* plaintext flows both ways */
    XLB_TLS_CLOSED, /* the client sent close_notify */
    XLB_TLS_FAILED, /* alert sent if any is due (take it), then close the connection */
};

/* How many handshake steps a worker runs in one burst, shared by its connections. A step is one
 * call into OpenSSL's handshake with new input: a full TLS 1.3 handshake takes two, and the first
 * holds the private-key signature. A connection over budget keeps its input and is advanced by
 * a later burst. */
struct xlb_tls_budget {
    uint32_t handshake_steps;
};

struct xlb_tls_conn {
    SSL *ssl;
    BIO *network; /* ciphertext from the client, read by OpenSSL */
    BIO *output;  /* ciphertext for the client, written by OpenSSL */
    struct xlb_tls_counters *counters;
    enum xlb_tls_state state;
    enum xlb_tls_failure failure;
    bool handshake_due; /* input arrived since the last step */
    bool client;        /* our side opened the connection (a subchannel) */
};

/* 0, or -1 when OpenSSL cannot allocate (nothing to free then). counters: where this
 * connection's outcome is counted (the VIP's, per worker); must outlive t. */
int xlb_tls_conn_open(struct xlb_tls_conn *t, const struct xlb_tls_server *srv,
                      struct xlb_tls_counters *counters);
/* The same for a connection xlb opens: ctx from xlb_tls_client_create. */
int xlb_tls_conn_open_client(struct xlb_tls_conn *t, SSL_CTX *ctx,
                             struct xlb_tls_counters *counters);
void xlb_tls_conn_free(struct xlb_tls_conn *t);

/* Takes up to len bytes of ciphertext; returns how many (less when XLB_TLS_INPUT_MAX is reached
 * or the connection failed): the caller keeps the rest for later. */
uint32_t xlb_tls_conn_feed(struct xlb_tls_conn *t, const uint8_t *cipher, uint32_t len);

/* Runs the handshake when input is due and the budget allows; returns the state. */
enum xlb_tls_state xlb_tls_conn_advance(struct xlb_tls_conn *t, struct xlb_tls_budget *budget);

/* Up to cap bytes of plaintext the client sent; 0 when none is complete yet. */
uint32_t xlb_tls_conn_read(struct xlb_tls_conn *t, uint8_t *plain, uint32_t cap);

/* Seals up to len bytes of plaintext for the client; returns how many (0 before the handshake
 * is done or after a failure). */
uint32_t xlb_tls_conn_write(struct xlb_tls_conn *t, const uint8_t *plain, uint32_t len);

/* Ciphertext waiting to be sent, and taking it. */
uint32_t xlb_tls_conn_pending(const struct xlb_tls_conn *t);
uint32_t xlb_tls_conn_take(struct xlb_tls_conn *t, uint8_t *cipher, uint32_t cap);

/* Queues close_notify for the client. */
void xlb_tls_conn_shutdown(struct xlb_tls_conn *t);

/* The negotiated ALPN protocol (not NUL-terminated), len 0 when none. */
const uint8_t *xlb_tls_conn_alpn(const struct xlb_tls_conn *t, uint32_t *len);

#endif
