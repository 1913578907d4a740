/* SPDX-License-Identifier: BSD-3-Clause */
/* TLS records from a client against the glue (dataplane/tls/). OpenSSL parses the records; this
 * target checks what the glue adds: input and output stay within their bounds, a failed
 * connection takes no more input, nothing leaks, every call returns.
 *
 * Input: a sequence of pieces, each a length byte L then L bytes of ciphertext fed to the
 * server, after which the handshake advances with a budget of one step, plaintext is read and
 * echoed back, and the ciphertext to send is taken. Seeds: a TLS 1.3 ClientHello offering h2. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../unit/tls/tls_test_certs.h"
#include "xlb_tls_conn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct xlb_tls_server *server(void)
{
    static struct xlb_tls_server *srv;
    static struct tls_test_certs certs;
    struct xlb_tls_server_config cfg = {.n_certs = 2, .alpn = {"h2"}, .n_alpn = 1};
    char err[256];

    if (srv != NULL)
        return srv;
    if (tls_test_certs_make(&certs) != 0)
        abort();
    cfg.certs[0] = (struct xlb_tls_cert_files){certs.server_cert, certs.server_key};
    cfg.certs[1] = (struct xlb_tls_cert_files){certs.other_cert, certs.other_key};
    cfg.ca_certificate_file = certs.ca;
    if (xlb_tls_ticket_keys_rotate(&cfg.ticket_keys) != 0)
        abort();
    srv = xlb_tls_server_create(&cfg, err, sizeof(err));
    if (srv == NULL)
        abort();
    /* The server holds the files' contents: the folder can go. */
    tls_test_certs_remove(&certs);
    return srv;
}

static void drain(struct xlb_tls_conn *t)
{
    static uint8_t buf[XLB_TLS_INPUT_MAX];
    uint32_t n;

    if (xlb_tls_conn_pending(t) > XLB_TLS_INPUT_MAX + 16384u)
        abort();
    while ((n = xlb_tls_conn_take(t, buf, sizeof(buf))) > 0)
        ;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct xlb_tls_counters counters = {0};
    struct xlb_tls_conn t;
    uint8_t plain[4096];
    size_t at = 0;

    if (xlb_tls_conn_open(&t, server(), &counters) != 0)
        return 0;
    while (at < size) {
        struct xlb_tls_budget budget = {.handshake_steps = 1};
        size_t len = data[at++];
        uint32_t got;

        if (len > size - at)
            len = size - at;
        if (xlb_tls_conn_feed(&t, data + at, (uint32_t)len) > len)
            abort();
        at += len;
        xlb_tls_conn_advance(&t, &budget);
        while ((got = xlb_tls_conn_read(&t, plain, sizeof(plain))) > 0)
            xlb_tls_conn_write(&t, plain, got);
        if (t.state == XLB_TLS_FAILED && xlb_tls_conn_feed(&t, data, size > 0 ? 1 : 0) != 0)
            abort();
        drain(&t);
    }
    xlb_tls_conn_free(&t);
    return 0;
}
