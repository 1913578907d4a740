/* A TLS handshake load client for tools/bench/tls_vs_haproxy.sh: opens TLS connections one after
 * the other for a given time and counts the handshakes that completed. What `openssl s_time
 * -new` / `-reuse` does, with ALPN (xlb's TLS VIPs refuse a client that offers none, and
 * s_time cannot offer any), a fixed protocol version, cipher and key-exchange group, so that
 * every server under test negotiates the same thing.
 *
 *   tls_handshakes ADDRESS PORT SECONDS [--tls 1.2|1.3] [--reuse] [--alpn h2] [--rate N]
 *                  [--ciphers LIST] [--ciphersuites LIST] [--groups LIST] [--servername NAME]
 *
 * --rate N paces the connections at N a second at most (0, the default: as fast as they go).
 *
 * One line on stdout: handshakes=N resumed=N failures=N seconds=S protocol=... cipher=...
 * group=... ; the first failure's reason goes to stderr. The certificate is not verified (the
 * benchmark measures the server; the e2e tests check verification). Each connection sends
 * close_notify and is then reset (SO_LINGER 0), so that neither side keeps TIME-WAIT state and
 * the client's ports can be reused at any rate. Every socket call is bounded by a 2 s timeout. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct options {
    struct sockaddr_in server;
    double seconds;
    double rate;
    int version;
    bool reuse;
    const char *alpn;
    const char *ciphers;
    const char *ciphersuites;
    char *groups; /* not const: OpenSSL's macros take them as char * */
    char *servername;
};

struct tally {
    unsigned long handshakes;
    unsigned long resumed;
    unsigned long failures;
    char protocol[32];
    char cipher[64];
    char group[32];
    char first_failure[256];
};

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(void)
{
    fprintf(stderr, "usage: tls_handshakes ADDRESS PORT SECONDS [--tls 1.2|1.3] [--reuse] "
                    "[--alpn NAME] [--ciphers LIST] [--ciphersuites LIST] [--groups LIST] "
                    "[--servername NAME]\n");
    exit(2);
}

static void parse(int argc, char **argv, struct options *o)
{
    if (argc < 4)
        usage();
    memset(o, 0, sizeof(*o));
    o->server.sin_family = AF_INET;
    o->server.sin_port = htons((uint16_t)atoi(argv[2]));
    if (inet_pton(AF_INET, argv[1], &o->server.sin_addr) != 1)
        usage();
    o->seconds = atof(argv[3]);
    o->version = TLS1_3_VERSION;
    o->alpn = "h2";
    static char default_groups[] = "X25519:P-256";
    o->groups = default_groups;
    o->ciphers = "ECDHE-ECDSA-AES128-GCM-SHA256";
    o->ciphersuites = "TLS_AES_128_GCM_SHA256";
    for (int i = 4; i < argc; i++) {
        const char *arg = argv[i];
        char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(arg, "--reuse") == 0) {
            o->reuse = true;
            continue;
        }
        if (value == NULL)
            usage();
        i++;
        if (strcmp(arg, "--tls") == 0)
            o->version = strcmp(value, "1.2") == 0 ? TLS1_2_VERSION : TLS1_3_VERSION;
        else if (strcmp(arg, "--rate") == 0)
            o->rate = atof(value);
        else if (strcmp(arg, "--alpn") == 0)
            o->alpn = value;
        else if (strcmp(arg, "--ciphers") == 0)
            o->ciphers = value;
        else if (strcmp(arg, "--ciphersuites") == 0)
            o->ciphersuites = value;
        else if (strcmp(arg, "--groups") == 0)
            o->groups = value;
        else if (strcmp(arg, "--servername") == 0)
            o->servername = value;
        else
            usage();
    }
    if (o->seconds <= 0 || o->rate < 0)
        usage();
}

static SSL_CTX *context(const struct options *o)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    unsigned char wire[256];
    size_t n = strlen(o->alpn);

    if (ctx == NULL || n == 0 || n >= sizeof(wire))
        return NULL;
    wire[0] = (unsigned char)n;
    memcpy(wire + 1, o->alpn, n);
    if (SSL_CTX_set_min_proto_version(ctx, o->version) != 1 ||
        SSL_CTX_set_max_proto_version(ctx, o->version) != 1 ||
        SSL_CTX_set_cipher_list(ctx, o->ciphers) != 1 ||
        SSL_CTX_set_ciphersuites(ctx, o->ciphersuites) != 1 ||
        SSL_CTX_set1_groups_list(ctx, o->groups) != 1 ||
        SSL_CTX_set_alpn_protos(ctx, wire, (unsigned)(n + 1)) != 0) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    /* The session to resume is kept by hand (SSL_get1_session), not in the context's cache. */
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    return ctx;
}

static int tcp_connect(const struct options *o)
{
    const struct timeval timeout = {.tv_sec = 2};
    const struct linger reset = {.l_onoff = 1, .l_linger = 0};
    const int one = 1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, (const struct sockaddr *)&o->server, sizeof(o->server)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void note_failure(struct tally *t, const char *what)
{
    t->failures++;
    if (t->first_failure[0] != '\0')
        return;
    unsigned long code = ERR_peek_last_error();
    char reason[160];
    snprintf(reason, sizeof(reason), "(%s)", strerror(errno));
    if (code != 0)
        ERR_error_string_n(code, reason, sizeof(reason));
    snprintf(t->first_failure, sizeof(t->first_failure), "%s %s", what, reason);
}

static void note_negotiated(struct tally *t, SSL *ssl)
{
    if (t->protocol[0] != '\0')
        return;
    snprintf(t->protocol, sizeof(t->protocol), "%s", SSL_get_version(ssl));
    snprintf(t->cipher, sizeof(t->cipher), "%s", SSL_get_cipher_name(ssl));
    int nid = SSL_get_negotiated_group(ssl);
    snprintf(t->group, sizeof(t->group), "%s",
             nid > 0 && OBJ_nid2sn(nid) != NULL ? OBJ_nid2sn(nid) : "none");
}

/* One connection: a handshake, offering SESSION when given; the session to offer next. */
static SSL_SESSION *one_connection(const struct options *o, SSL_CTX *ctx, SSL_SESSION *session,
                                   struct tally *t)
{
    errno = 0;
    int fd = tcp_connect(o);
    if (fd < 0) {
        note_failure(t, "connect:");
        return session;
    }
    SSL *ssl = SSL_new(ctx);
    if (ssl == NULL || SSL_set_fd(ssl, fd) != 1) {
        note_failure(t, "SSL_new:");
        SSL_free(ssl);
        close(fd);
        return session;
    }
    if (o->servername != NULL)
        SSL_set_tlsext_host_name(ssl, o->servername);
    if (session != NULL)
        SSL_set_session(ssl, session);
    errno = 0;
    if (SSL_connect(ssl) == 1) {
        t->handshakes++;
        note_negotiated(t, ssl);
        if (SSL_session_reused(ssl)) {
            t->resumed++;
        } else if (o->reuse) {
            SSL_SESSION_free(session);
            session = SSL_get1_session(ssl);
        }
        SSL_shutdown(ssl);
    } else {
        note_failure(t, "handshake:");
    }
    ERR_clear_error();
    SSL_free(ssl);
    close(fd);
    return session;
}

int main(int argc, char **argv)
{
    struct options o;
    struct tally t = {0};

    parse(argc, argv, &o);
    SSL_CTX *ctx = context(&o);
    if (ctx == NULL) {
        fprintf(stderr, "tls_handshakes: cannot make the client context (cipher, group or ALPN)\n");
        return 1;
    }
    SSL_SESSION *session = NULL;
    const double start = now_seconds();
    double elapsed = 0;
    /* Bounded by time; a failing server costs at most the socket timeouts per attempt. */
    unsigned long attempts = 0;
    while (elapsed < o.seconds) {
        session = one_connection(&o, ctx, session, &t);
        attempts++;
        elapsed = now_seconds() - start;
        if (o.rate > 0 && attempts / o.rate > elapsed) {
            double wait = attempts / o.rate - elapsed;
            struct timespec ts = {.tv_sec = (time_t)wait,
                                  .tv_nsec = (long)((wait - (double)(time_t)wait) * 1e9)};
            nanosleep(&ts, NULL);
            elapsed = now_seconds() - start;
        }
    }
    printf("handshakes=%lu resumed=%lu failures=%lu seconds=%.3f protocol=%s cipher=%s group=%s\n",
           t.handshakes, t.resumed, t.failures, elapsed, t.protocol[0] ? t.protocol : "none",
           t.cipher[0] ? t.cipher : "none", t.group[0] ? t.group : "none");
    if (t.first_failure[0] != '\0')
        fprintf(stderr, "tls_handshakes: first failure: %s\n", t.first_failure);
    SSL_SESSION_free(session);
    SSL_CTX_free(ctx);
    return 0;
}
