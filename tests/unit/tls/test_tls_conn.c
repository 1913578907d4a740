/* SPDX-License-Identifier: BSD-3-Clause */
/* The TLS glue (dataplane/tls/) against a real OpenSSL client, both in memory: what a client
 * notices (the certificate it gets, the ALPN, the alert, resumption, its bytes echoed) and what
 * an operator counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "tls_test_certs.h"
#include "xlb_tls_conn.h"

static struct tls_test_certs certs;

struct pair {
    SSL_CTX *client_ctx;
    SSL *client;
    BIO *client_in, *client_out;
    struct xlb_tls_server *server_ctx;
    struct xlb_tls_conn server;
    struct xlb_tls_counters counters;
    int client_result; /* the client's last SSL_do_handshake */
};

struct options {
    const char *sni;
    const char *client_alpn; /* wire format, NULL: none offered */
    unsigned client_alpn_len;
    int max_version;
    const char *client_cert, *client_key;
    bool require_client_certificate;
    bool two_certificates;
    SSL_SESSION *session;
    const struct xlb_tls_ticket_keys *keys;
};

static struct xlb_tls_ticket_keys test_keys;

static struct xlb_tls_server *make_server(const struct options *o)
{
    struct xlb_tls_server_config cfg = {
        .certs = {{certs.server_cert, certs.server_key}, {certs.other_cert, certs.other_key}},
        .n_certs = o->two_certificates ? 2 : 1,
        .ca_certificate_file = certs.ca,
        .require_client_certificate = o->require_client_certificate,
        .alpn = {"h2"},
        .n_alpn = 1,
        .ticket_keys = o->keys != NULL ? *o->keys : test_keys,
    };
    char err[256] = "";
    struct xlb_tls_server *srv = xlb_tls_server_create(&cfg, err, sizeof(err));

    if (srv == NULL)
        fail_msg("server: %s", err);
    return srv;
}

static void pair_open(struct pair *p, const struct options *o)
{
    memset(p, 0, sizeof(*p));
    p->server_ctx = make_server(o);
    assert_int_equal(xlb_tls_conn_open(&p->server, p->server_ctx, &p->counters), 0);
    p->client_ctx = SSL_CTX_new(TLS_client_method());
    assert_int_equal(SSL_CTX_load_verify_locations(p->client_ctx, certs.ca, NULL), 1);
    SSL_CTX_set_verify(p->client_ctx, SSL_VERIFY_PEER, NULL);
    if (o->max_version != 0)
        SSL_CTX_set_max_proto_version(p->client_ctx, o->max_version);
    if (o->client_cert != NULL) {
        assert_int_equal(
            SSL_CTX_use_certificate_file(p->client_ctx, o->client_cert, SSL_FILETYPE_PEM), 1);
        assert_int_equal(
            SSL_CTX_use_PrivateKey_file(p->client_ctx, o->client_key, SSL_FILETYPE_PEM), 1);
    }
    p->client = SSL_new(p->client_ctx);
    p->client_in = BIO_new(BIO_s_mem());
    p->client_out = BIO_new(BIO_s_mem());
    BIO_set_mem_eof_return(p->client_in, -1);
    SSL_set_bio(p->client, p->client_in, p->client_out);
    SSL_set_connect_state(p->client);
    if (o->sni != NULL) {
        char sni[64]; /* writable: OpenSSL's macro casts the name to void * */

        snprintf(sni, sizeof(sni), "%s", o->sni);
        SSL_set_tlsext_host_name(p->client, sni);
    }
    if (o->client_alpn != NULL)
        assert_int_equal(SSL_set_alpn_protos(p->client, (const unsigned char *)o->client_alpn,
                                             o->client_alpn_len),
                         0);
    if (o->session != NULL)
        SSL_set_session(p->client, o->session);
}

static void pair_close(struct pair *p)
{
    /* A client session freed without close_notify is not resumable. */
    if (SSL_is_init_finished(p->client))
        SSL_shutdown(p->client);
    xlb_tls_conn_free(&p->server);
    xlb_tls_server_unref(p->server_ctx);
    SSL_free(p->client);
    SSL_CTX_free(p->client_ctx);
    ERR_clear_error();
}

/* Moves ciphertext both ways, the client's in pieces of at most chunk bytes, until nothing
 * moves; bounded in rounds. */
static void pump(struct pair *p, uint32_t chunk)
{
    static uint8_t buf[1 << 16];

    for (int round = 0; round < 100000; round++) {
        struct xlb_tls_budget budget = {.handshake_steps = 1};
        bool moved = false;
        int n;

        if (!SSL_is_init_finished(p->client))
            p->client_result = SSL_do_handshake(p->client);
        n = BIO_read(p->client_out, buf, (int)chunk);
        if (n > 0) {
            assert_int_equal(xlb_tls_conn_feed(&p->server, buf, (uint32_t)n), (uint32_t)n);
            moved = true;
        }
        xlb_tls_conn_advance(&p->server, &budget);
        for (uint32_t got; (got = xlb_tls_conn_take(&p->server, buf, sizeof(buf))) > 0;) {
            BIO_write(p->client_in, buf, (int)got);
            moved = true;
        }
        if (!moved && !SSL_is_init_finished(p->client) && SSL_want_read(p->client) == 0 &&
            p->client_result <= 0)
            return;
        if (!moved && (SSL_is_init_finished(p->client) || p->client_result <= 0) &&
            BIO_ctrl_pending(p->client_out) == 0)
            return;
    }
    fail_msg("pump did not settle");
}

/* The client writes msg; the server reads it and echoes it; the client reads the echo. */
static void echo(struct pair *p, const char *msg, uint32_t chunk)
{
    uint8_t got[256];
    size_t n = 0, len = strlen(msg);
    uint32_t r;

    assert_int_equal(SSL_write_ex(p->client, msg, len, &n), 1);
    pump(p, chunk);
    r = xlb_tls_conn_read(&p->server, got, sizeof(got));
    assert_int_equal(r, len);
    assert_memory_equal(got, msg, len);
    assert_int_equal(xlb_tls_conn_write(&p->server, got, r), r);
    pump(p, chunk);
    assert_int_equal(SSL_read_ex(p->client, got, sizeof(got), &n), 1);
    assert_int_equal(n, len);
    assert_memory_equal(got, msg, len);
}

static const char h2[] = "\x02h2";
static const char http11[] = "\x08http/1.1";

static void assert_peer_name(SSL *client, const char *cn)
{
    X509 *peer = SSL_get1_peer_certificate(client);
    char name[128];

    assert_non_null(peer);
    X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, name, sizeof(name));
    assert_string_equal(name, cn);
    X509_free(peer);
}

static void handshake_tls13_alpn_h2_and_data(void **state)
{
    struct options o = {.sni = "vip.test", .client_alpn = h2, .client_alpn_len = 3};
    struct pair p;
    const unsigned char *proto;
    unsigned len;

    (void)state;
    pair_open(&p, &o);
    pump(&p, 1 << 16);
    assert_int_equal(p.client_result, 1);
    assert_int_equal(p.server.state, XLB_TLS_OPEN);
    assert_int_equal(SSL_version(p.client), TLS1_3_VERSION);
    SSL_get0_alpn_selected(p.client, &proto, &len);
    assert_int_equal(len, 2);
    assert_memory_equal(proto, "h2", 2);
    assert_peer_name(p.client, "vip.test");
    echo(&p, "PRI * HTTP/2.0", 1 << 16);
    assert_int_equal(p.counters.handshakes, 1);
    assert_int_equal(p.counters.resumptions, 0);
    pair_close(&p);
}

static void handshake_tls12(void **state)
{
    struct options o = {.client_alpn = h2, .client_alpn_len = 3, .max_version = TLS1_2_VERSION};
    struct pair p;

    (void)state;
    pair_open(&p, &o);
    pump(&p, 1 << 16);
    assert_int_equal(p.client_result, 1);
    assert_int_equal(SSL_version(p.client), TLS1_2_VERSION);
    echo(&p, "hello over 1.2", 1 << 16);
    assert_int_equal(p.counters.handshakes, 1);
    pair_close(&p);
}

static void assert_client_got_alert(struct pair *p, int reason)
{
    assert_true(p->client_result <= 0);
    assert_int_equal(SSL_get_error(p->client, p->client_result), SSL_ERROR_SSL);
    assert_int_equal(ERR_GET_REASON(ERR_peek_last_error()), reason);
    ERR_clear_error();
}

static void alpn_without_h2_refused_with_alert(void **state)
{
    struct options o = {.client_alpn = http11, .client_alpn_len = 9};
    struct pair p;

    (void)state;
    pair_open(&p, &o);
    pump(&p, 1 << 16);
    assert_int_equal(p.server.state, XLB_TLS_FAILED);
    assert_client_got_alert(&p, SSL_R_TLSV1_ALERT_NO_APPLICATION_PROTOCOL);
    assert_int_equal(p.counters.failures[XLB_TLS_FAIL_NO_ALPN], 1);
    assert_int_equal(p.counters.handshakes, 0);
    pair_close(&p);
}

static void no_alpn_at_all_refused_with_alert(void **state)
{
    struct options o = {0};
    struct pair p;

    (void)state;
    pair_open(&p, &o);
    pump(&p, 1 << 16);
    assert_int_equal(p.server.state, XLB_TLS_FAILED);
    assert_client_got_alert(&p, SSL_R_TLSV1_ALERT_NO_APPLICATION_PROTOCOL);
    assert_int_equal(p.counters.failures[XLB_TLS_FAIL_NO_ALPN], 1);
    pair_close(&p);
}

static void sni_chooses_certificate(void **state)
{
    struct options o = {.client_alpn = h2, .client_alpn_len = 3, .two_certificates = true};
    const char *const names[] = {"other.test", "vip.test", NULL, "unknown.test"};
    const char *const expect[] = {"other.test", "vip.test", "vip.test", "vip.test"};
    struct pair p;

    (void)state;
    for (size_t i = 0; i < 4; i++) {
        o.sni = names[i];
        pair_open(&p, &o);
        pump(&p, 1 << 16);
        assert_int_equal(p.server.state, XLB_TLS_OPEN);
        assert_peer_name(p.client, expect[i]);
        echo(&p, "sni", 1 << 16);
        pair_close(&p);
    }
}

/* A full handshake, then one with its ticket; keys from ticket_keys each time. */
static SSL_SESSION *full_handshake_session(const struct xlb_tls_ticket_keys *keys, int version)
{
    struct options o = {
        .client_alpn = h2, .client_alpn_len = 3, .keys = keys, .max_version = version};
    struct pair p;
    SSL_SESSION *session;

    pair_open(&p, &o);
    pump(&p, 1 << 16);
    echo(&p, "first", 1 << 16); /* TLS 1.3 tickets arrive after the handshake */
    assert_int_equal(p.counters.resumptions, 0);
    /* The client's close_notify reaches the server: it sees the end of the stream. */
    assert_int_equal(SSL_shutdown(p.client), 0);
    pump(&p, 1 << 16);
    xlb_tls_conn_read(&p.server, (uint8_t[16]){0}, 16);
    assert_int_equal(p.server.state, XLB_TLS_CLOSED);
    session = SSL_get1_session(p.client);
    pair_close(&p);
    return session;
}

static bool resumes(SSL_SESSION *session, const struct xlb_tls_ticket_keys *keys, int version)
{
    struct options o = {.client_alpn = h2,
                        .client_alpn_len = 3,
                        .session = session,
                        .keys = keys,
                        .max_version = version};
    struct pair p;
    bool reused;

    pair_open(&p, &o);
    pump(&p, 1 << 16);
    assert_int_equal(p.server.state, XLB_TLS_OPEN);
    echo(&p, "again", 1 << 16);
    reused = SSL_session_reused(p.client);
    assert_int_equal(p.counters.handshakes, 1);
    assert_int_equal(p.counters.resumptions, reused ? 1 : 0);
    pair_close(&p);
    return reused;
}

static void resumption_with_ticket_across_rotation(void **state)
{
    const int versions[] = {TLS1_2_VERSION, TLS1_3_VERSION};

    (void)state;
    for (size_t i = 0; i < 2; i++) {
        struct xlb_tls_ticket_keys keys = test_keys;
        SSL_SESSION *session = full_handshake_session(&keys, versions[i]);

        assert_true(resumes(session, &keys, versions[i]));
        /* One rotation: the previous key still opens the ticket. */
        assert_int_equal(xlb_tls_ticket_keys_rotate(&keys), 0);
        assert_true(resumes(session, &keys, versions[i]));
        /* Two: the ticket's key is gone, a full handshake follows. */
        assert_int_equal(xlb_tls_ticket_keys_rotate(&keys), 0);
        assert_false(resumes(session, &keys, versions[i]));
        SSL_SESSION_free(session);
    }
}

static void mtls(void **state)
{
    struct options o = {
        .client_alpn = h2, .client_alpn_len = 3, .require_client_certificate = true};
    struct pair p;

    (void)state;
    o.client_cert = certs.client_cert;
    o.client_key = certs.client_key;
    pair_open(&p, &o);
    pump(&p, 1 << 16);
    assert_int_equal(p.server.state, XLB_TLS_OPEN);
    echo(&p, "trusted", 1 << 16);
    pair_close(&p);

    o.client_cert = NULL;
    pair_open(&p, &o);
    pump(&p, 1 << 16);
    assert_int_equal(p.server.state, XLB_TLS_FAILED);
    assert_int_equal(p.counters.failures[XLB_TLS_FAIL_NO_CLIENT_CERT], 1);
    pair_close(&p);

    o.client_cert = certs.stranger_cert;
    o.client_key = certs.stranger_key;
    pair_open(&p, &o);
    pump(&p, 1 << 16);
    assert_int_equal(p.server.state, XLB_TLS_FAILED);
    assert_int_equal(p.counters.failures[XLB_TLS_FAIL_BAD_CLIENT_CERT], 1);
    pair_close(&p);
}

static void records_split_across_segments(void **state)
{
    struct options o = {.client_alpn = h2, .client_alpn_len = 3};
    struct pair p;

    (void)state;
    pair_open(&p, &o);
    pump(&p, 7); /* the ClientHello and Finished in 7-byte pieces */
    assert_int_equal(p.server.state, XLB_TLS_OPEN);
    echo(&p, "a record that arrives one byte at a time", 1);
    pair_close(&p);
}

static void handshake_waits_for_budget(void **state)
{
    struct options o = {.client_alpn = h2, .client_alpn_len = 3};
    struct xlb_tls_budget none = {0}, one = {.handshake_steps = 1};
    uint8_t buf[4096];
    struct pair p;
    int n;

    (void)state;
    pair_open(&p, &o);
    SSL_do_handshake(p.client);
    n = BIO_read(p.client_out, buf, sizeof(buf));
    assert_true(n > 0);
    assert_int_equal(xlb_tls_conn_feed(&p.server, buf, (uint32_t)n), (uint32_t)n);
    assert_int_equal(xlb_tls_conn_advance(&p.server, &none), XLB_TLS_HANDSHAKING);
    assert_int_equal(xlb_tls_conn_pending(&p.server), 0);
    xlb_tls_conn_advance(&p.server, &one);
    assert_int_equal(one.handshake_steps, 0);
    assert_true(xlb_tls_conn_pending(&p.server) > 0); /* the server's flight */
    pair_close(&p);
}

static void input_is_bounded(void **state)
{
    struct options o = {.client_alpn = h2, .client_alpn_len = 3};
    static uint8_t junk[XLB_TLS_INPUT_MAX + 1000];
    struct pair p;

    (void)state;
    pair_open(&p, &o);
    assert_int_equal(xlb_tls_conn_feed(&p.server, junk, sizeof(junk)), XLB_TLS_INPUT_MAX);
    assert_int_equal(xlb_tls_conn_feed(&p.server, junk, 1), 0);
    pair_close(&p);
}

static void bad_files_say_why(void **state)
{
    struct xlb_tls_cert_files missing = {"/nonexistent/cert.pem", certs.server_key};
    struct xlb_tls_cert_files mismatch = {certs.server_cert, certs.other_key};
    struct xlb_tls_cert_files swapped = {certs.server_key, certs.server_cert};
    char err[512];

    (void)state;
    assert_null(xlb_tls_cert_context(&missing, err, sizeof(err)));
    assert_non_null(strstr(err, "certificate_file /nonexistent/cert.pem cannot be read"));
    assert_null(xlb_tls_cert_context(&mismatch, err, sizeof(err)));
    assert_non_null(strstr(err, "does not match"));
    assert_null(xlb_tls_cert_context(&swapped, err, sizeof(err)));
    assert_non_null(strstr(err, "holds no PEM certificate"));
}

static void describes_certificate(void **state)
{
    struct xlb_tls_cert_files files = {certs.server_cert, certs.server_key};
    struct xlb_tls_cert_info info;
    char err[256];
    SSL_CTX *ctx = xlb_tls_cert_context(&files, err, sizeof(err));

    (void)state;
    assert_non_null(ctx);
    xlb_tls_cert_describe(ctx, &info);
    assert_string_equal(info.subject, "/CN=vip.test");
    assert_string_equal(info.sans, "vip.test");
    assert_int_equal(strlen(info.not_after), 20);
    SSL_CTX_free(ctx);
}

static int setup(void **state)
{
    (void)state;
    if (tls_test_certs_make(&certs) != 0)
        return -1;
    return xlb_tls_ticket_keys_rotate(&test_keys);
}

static int teardown(void **state)
{
    (void)state;
    tls_test_certs_remove(&certs);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(handshake_tls13_alpn_h2_and_data),
        cmocka_unit_test(handshake_tls12),
        cmocka_unit_test(alpn_without_h2_refused_with_alert),
        cmocka_unit_test(no_alpn_at_all_refused_with_alert),
        cmocka_unit_test(sni_chooses_certificate),
        cmocka_unit_test(resumption_with_ticket_across_rotation),
        cmocka_unit_test(mtls),
        cmocka_unit_test(records_split_across_segments),
        cmocka_unit_test(handshake_waits_for_budget),
        cmocka_unit_test(input_is_bounded),
        cmocka_unit_test(bad_files_say_why),
        cmocka_unit_test(describes_certificate),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
