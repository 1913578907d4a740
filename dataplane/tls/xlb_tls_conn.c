/* SPDX-License-Identifier: BSD-3-Clause */
#include "xlb_tls_conn.h"

#include <string.h>

#include <openssl/err.h>

#include "xlb_tls_mem.h"

/* Memory BIOs on ssl (NULL: OpenSSL could not allocate it). */
static int attach(struct xlb_tls_conn *t, SSL *ssl, struct xlb_tls_counters *counters)
{
    memset(t, 0, sizeof(*t));
    t->ssl = ssl;
    t->network = BIO_new(BIO_s_mem());
    t->output = BIO_new(BIO_s_mem());
    if (t->ssl == NULL || t->network == NULL || t->output == NULL) {
        BIO_free(t->network);
        BIO_free(t->output);
        SSL_free(t->ssl);
        memset(t, 0, sizeof(*t));
        ERR_clear_error();
        return -1;
    }
    /* An empty input is "wait for more", not end of stream. */
    BIO_set_mem_eof_return(t->network, -1);
    SSL_set_bio(t->ssl, t->network, t->output); /* the SSL owns both from here */
    t->counters = counters;
    t->state = XLB_TLS_HANDSHAKING;
    return 0;
}

int xlb_tls_conn_open(struct xlb_tls_conn *t, const struct xlb_tls_server *srv,
                      struct xlb_tls_counters *counters)
{
    return attach(t, xlb_tls_server_new_ssl(srv, xlb_tls_worker_index()), counters);
}

int xlb_tls_conn_open_client(struct xlb_tls_conn *t, SSL_CTX *ctx,
                             struct xlb_tls_counters *counters)
{
    if (attach(t, xlb_tls_client_new_ssl(ctx, xlb_tls_worker_index()), counters) != 0)
        return -1;
    t->client = true;
    t->handshake_due = true; /* the client speaks first: its ClientHello needs no input */
    return 0;
}

void xlb_tls_conn_free(struct xlb_tls_conn *t)
{
    SSL_free(t->ssl);
    memset(t, 0, sizeof(*t));
}

static void fail(struct xlb_tls_conn *t, enum xlb_tls_failure why)
{
    t->state = XLB_TLS_FAILED;
    t->failure = why;
    t->counters->failures[why]++;
    ERR_clear_error();
}

/* Why OpenSSL ended the handshake, in the terms an operator counts. */
static enum xlb_tls_failure handshake_failure(const struct xlb_tls_conn *t)
{
    enum xlb_tls_failure refused = xlb_tls_server_refusal(t->ssl);

    if (refused != XLB_TLS_FAIL_NONE)
        return refused;
    switch (ERR_GET_REASON(ERR_peek_error())) {
    case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
        return XLB_TLS_FAIL_NO_CLIENT_CERT;
    case SSL_R_CERTIFICATE_VERIFY_FAILED:
        return t->client ? XLB_TLS_FAIL_BAD_SERVER_CERT : XLB_TLS_FAIL_BAD_CLIENT_CERT;
    case SSL_R_UNSUPPORTED_PROTOCOL:
    case SSL_R_VERSION_TOO_LOW:
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_NO_PROTOCOLS_AVAILABLE:
        return XLB_TLS_FAIL_PROTOCOL_VERSION;
    default:
        return XLB_TLS_FAIL_HANDSHAKE;
    }
}

uint32_t xlb_tls_conn_feed(struct xlb_tls_conn *t, const uint8_t *cipher, uint32_t len)
{
    size_t held = BIO_ctrl_pending(t->network);
    uint32_t room, take;
    int written;

    if (t->state == XLB_TLS_FAILED || held >= XLB_TLS_INPUT_MAX || len == 0)
        return 0;
    room = XLB_TLS_INPUT_MAX - (uint32_t)held;
    take = len < room ? len : room;
    written = BIO_write(t->network, cipher, (int)take);
    if (written <= 0)
        return 0;
    t->handshake_due = true;
    return (uint32_t)written;
}

static void handshake_done(struct xlb_tls_conn *t)
{
    t->state = XLB_TLS_OPEN;
    t->counters->handshakes++;
    if (SSL_session_reused(t->ssl))
        t->counters->resumptions++;
}

enum xlb_tls_state xlb_tls_conn_advance(struct xlb_tls_conn *t, struct xlb_tls_budget *budget)
{
    int r;

    if (t->state != XLB_TLS_HANDSHAKING || !t->handshake_due || budget->handshake_steps == 0)
        return t->state;
    budget->handshake_steps--;
    t->handshake_due = false;
    r = SSL_do_handshake(t->ssl);
    if (r == 1)
        handshake_done(t);
    else if (SSL_get_error(t->ssl, r) != SSL_ERROR_WANT_READ)
        fail(t, handshake_failure(t));
    return t->state;
}

uint32_t xlb_tls_conn_read(struct xlb_tls_conn *t, uint8_t *plain, uint32_t cap)
{
    size_t got = 0;
    int r;

    if (t->state != XLB_TLS_OPEN || cap == 0)
        return 0;
    r = SSL_read_ex(t->ssl, plain, cap, &got);
    if (r == 1)
        return (uint32_t)got;
    switch (SSL_get_error(t->ssl, r)) {
    case SSL_ERROR_WANT_READ:
        break;
    case SSL_ERROR_ZERO_RETURN:
        t->state = XLB_TLS_CLOSED;
        break;
    default:
        fail(t, XLB_TLS_FAIL_RECORD);
        break;
    }
    return 0;
}

uint32_t xlb_tls_conn_write(struct xlb_tls_conn *t, const uint8_t *plain, uint32_t len)
{
    size_t held = BIO_ctrl_pending(t->output);
    size_t done = 0;
    uint32_t room, take;

    /* Held ciphertext bounds the plaintext taken, as on input: the rest stays with the caller
     * until the client acknowledges what was sent. */
    if (t->state != XLB_TLS_OPEN || held >= XLB_TLS_INPUT_MAX || len == 0)
        return 0;
    room = XLB_TLS_INPUT_MAX - (uint32_t)held;
    take = len < room ? len : room;
    if (SSL_write_ex(t->ssl, plain, take, &done) != 1) {
        if (SSL_get_error(t->ssl, 0) == SSL_ERROR_SSL)
            fail(t, XLB_TLS_FAIL_RECORD);
        ERR_clear_error();
        return 0;
    }
    return (uint32_t)done;
}

uint32_t xlb_tls_conn_pending(const struct xlb_tls_conn *t)
{
    return (uint32_t)BIO_ctrl_pending(t->output);
}

uint32_t xlb_tls_conn_take(struct xlb_tls_conn *t, uint8_t *cipher, uint32_t cap)
{
    int got;

    if (cap == 0 || BIO_ctrl_pending(t->output) == 0)
        return 0;
    got = BIO_read(t->output, cipher, (int)cap);
    return got > 0 ? (uint32_t)got : 0;
}

void xlb_tls_conn_shutdown(struct xlb_tls_conn *t)
{
    if (t->state == XLB_TLS_OPEN || t->state == XLB_TLS_CLOSED)
        SSL_shutdown(t->ssl);
    ERR_clear_error();
}

const uint8_t *xlb_tls_conn_alpn(const struct xlb_tls_conn *t, uint32_t *len)
{
    const unsigned char *proto = NULL;
    unsigned int n = 0;

    SSL_get0_alpn_selected(t->ssl, &proto, &n);
    *len = n;
    return proto;
}
