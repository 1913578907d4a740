/*
 * The connection under a gRPC channel: resolve (without blocking), connect each address in
 * turn, TLS handshake, then shuttle bytes between the socket and the nghttp2 session. Every
 * step is driven by epoll events or one-shot timeouts of the control plane's loop.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "grpc_internal.h"
#include "xlb_log.h"

#define RESOLVE_POLL_MS    5
#define RESOLVE_TIMEOUT_MS 10000
#define READ_CHUNK         16384
#define READS_PER_EVENT    64 /* bounded work per wakeup */

static void connect_next(struct xlb_grpc_channel *ch);
static void on_io(int fd, uint32_t events, void *arg);

static void cancel_timer(struct xlb_grpc_channel *ch)
{
    xlb_loop_cancel(ch->loop, ch->timer);
    ch->timer = 0;
}

static void close_socket(struct xlb_grpc_channel *ch)
{
    if (ch->fd >= 0) {
        xlb_loop_remove_fd(ch->loop, ch->fd);
        close(ch->fd);
        ch->fd = -1;
    }
    if (ch->ssl != NULL) {
        SSL_free(ch->ssl);
        ch->ssl = NULL;
    }
}

void xlb_grpc_channel_fail(struct xlb_grpc_channel *ch, const char *fmt, ...)
{
    if (ch->state == CH_CLOSED)
        return;
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    ch->state = CH_CLOSED;
    ch->ready = false;
    cancel_timer(ch);
    close_socket(ch);
    xlb_grpc_streams_fail(ch, reason);
    if (!ch->closed_reported) {
        ch->closed_reported = true;
        ch->cb.on_closed(ch, reason, ch->arg);
    }
}

/* ---- writing and reading ---- */

static ssize_t raw_write(struct xlb_grpc_channel *ch, const uint8_t *data, size_t len)
{
    if (ch->ssl == NULL) {
        ssize_t n = send(ch->fd, data, len, MSG_NOSIGNAL);
        return n >= 0 ? n : (errno == EAGAIN || errno == EINTR) ? 0 : -1;
    }
    int n = SSL_write(ch->ssl, data, (int)len);
    if (n > 0)
        return n;
    int err = SSL_get_error(ch->ssl, n);
    return err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ ? 0 : -1;
}

/* Write pending bytes, then whatever nghttp2 has to send; watch EPOLLOUT while blocked. */
void xlb_grpc_channel_flush(struct xlb_grpc_channel *ch)
{
    if (ch->state != CH_HTTP2)
        return;
    for (;;) {
        if (ch->out_sent == ch->out_len) {
            const uint8_t *data;
            ssize_t n = nghttp2_session_mem_send(ch->session, &data);
            if (n < 0) {
                xlb_grpc_channel_fail(ch, "HTTP/2: %s", nghttp2_strerror((int)n));
                return;
            }
            if (n == 0)
                break;
            uint8_t *copy = realloc(ch->out, (size_t)n);
            if (copy == NULL) {
                xlb_grpc_channel_fail(ch, "out of memory");
                return;
            }
            memcpy(copy, data, (size_t)n);
            ch->out = copy;
            ch->out_len = (size_t)n;
            ch->out_sent = 0;
        }
        ssize_t w = raw_write(ch, ch->out + ch->out_sent, ch->out_len - ch->out_sent);
        if (w < 0) {
            xlb_grpc_channel_fail(ch, "write: %s", ch->ssl ? "TLS error" : strerror(errno));
            return;
        }
        if (w == 0)
            break;
        ch->out_sent += (size_t)w;
    }
    bool blocked = ch->out_sent < ch->out_len;
    xlb_loop_modify_fd(ch->loop, ch->fd, EPOLLIN | (blocked ? EPOLLOUT : 0));
}

/* Returns bytes read, 0 when nothing more is available now, -1 on EOF or error. */
static ssize_t raw_read(struct xlb_grpc_channel *ch, uint8_t *buf, size_t len)
{
    if (ch->ssl == NULL) {
        ssize_t n = recv(ch->fd, buf, len, 0);
        if (n > 0)
            return n;
        return n < 0 && (errno == EAGAIN || errno == EINTR) ? 0 : -1;
    }
    int n = SSL_read(ch->ssl, buf, (int)len);
    if (n > 0)
        return n;
    int err = SSL_get_error(ch->ssl, n);
    return err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE ? 0 : -1;
}

static void read_available(struct xlb_grpc_channel *ch)
{
    uint8_t buf[READ_CHUNK];
    for (int i = 0; i < READS_PER_EVENT && ch->state == CH_HTTP2; i++) {
        ssize_t n = raw_read(ch, buf, sizeof(buf));
        if (n == 0)
            break;
        if (n < 0) {
            xlb_grpc_channel_fail(ch, "connection closed by the server");
            return;
        }
        ssize_t used = nghttp2_session_mem_recv(ch->session, buf, (size_t)n);
        if (used < 0) {
            xlb_grpc_channel_fail(ch, "HTTP/2: %s", nghttp2_strerror((int)used));
            return;
        }
    }
    xlb_grpc_channel_flush(ch);
    if (ch->state == CH_HTTP2 && !nghttp2_session_want_read(ch->session) &&
        !nghttp2_session_want_write(ch->session))
        xlb_grpc_channel_fail(ch, "HTTP/2 session ended (GOAWAY)");
}

/* ---- keepalive ---- */

static void on_keepalive(void *arg)
{
    struct xlb_grpc_channel *ch = arg;
    ch->timer = 0;
    uint64_t next_ms = 0;
    switch (xlb_grpc_keepalive_fire(&ch->keepalive, &next_ms)) {
    case XLB_KEEPALIVE_DEAD:
        xlb_grpc_channel_fail(ch, "keepalive: no PING acknowledgement within %d ms",
                              XLB_GRPC_KEEPALIVE_ACK_MS);
        return;
    case XLB_KEEPALIVE_PING:
        nghttp2_submit_ping(ch->session, NGHTTP2_FLAG_NONE, NULL);
        xlb_grpc_channel_flush(ch);
        if (ch->state != CH_HTTP2)
            return; /* the write failed and closed the channel */
        break;
    case XLB_KEEPALIVE_WAIT:
        break;
    }
    ch->timer = xlb_loop_add_timeout(ch->loop, next_ms, on_keepalive, ch);
}

void xlb_grpc_channel_became_ready(struct xlb_grpc_channel *ch)
{
    cancel_timer(ch); /* the connect timeout */
    ch->ready = true;
    ch->timer =
        xlb_loop_add_timeout(ch->loop, xlb_grpc_keepalive_start(&ch->keepalive), on_keepalive, ch);
    ch->cb.on_ready(ch, ch->arg);
}

/* ---- TLS handshake ---- */

static int tls_begin(struct xlb_grpc_channel *ch, char *error, size_t len)
{
    ch->ssl = SSL_new(ch->ssl_ctx);
    if (ch->ssl == NULL || SSL_set_fd(ch->ssl, ch->fd) != 1) {
        xlb_grpc_tls_error(error, len, "TLS session");
        return -1;
    }
    unsigned char literal[16];
    bool is_ip = inet_pton(AF_INET, ch->target.host, literal) == 1 ||
                 inet_pton(AF_INET6, ch->target.host, literal) == 1;
    X509_VERIFY_PARAM *param = SSL_get0_param(ch->ssl);
    /* The certificate must name the host we asked for: its DNS name or its IP address. */
    int ok = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(param, ch->target.host)
                   : (SSL_set_tlsext_host_name(ch->ssl, ch->target.host) == 1 &&
                      SSL_set1_host(ch->ssl, ch->target.host) == 1);
    if (!ok) {
        xlb_grpc_tls_error(error, len, "TLS server name");
        return -1;
    }
    return 0;
}

static void tls_step(struct xlb_grpc_channel *ch)
{
    int rc = SSL_connect(ch->ssl);
    if (rc != 1) {
        int err = SSL_get_error(ch->ssl, rc);
        if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
            xlb_loop_modify_fd(ch->loop, ch->fd, err == SSL_ERROR_WANT_WRITE ? EPOLLOUT : EPOLLIN);
            return;
        }
        char reason[384];
        long verify = SSL_get_verify_result(ch->ssl);
        if (verify != X509_V_OK)
            snprintf(reason, sizeof(reason), "TLS handshake: certificate verification failed: %s",
                     X509_verify_cert_error_string(verify));
        else
            xlb_grpc_tls_error(reason, sizeof(reason), "TLS handshake");
        xlb_grpc_channel_fail(ch, "%s", reason);
        return;
    }
    const unsigned char *proto;
    unsigned int proto_len;
    SSL_get0_alpn_selected(ch->ssl, &proto, &proto_len);
    if (proto_len != 2 || memcmp(proto, "h2", 2) != 0) {
        xlb_grpc_channel_fail(ch, "TLS: the server did not agree to HTTP/2 (ALPN h2)");
        return;
    }
    ch->state = CH_HTTP2;
    if (xlb_grpc_session_start(ch) != 0)
        xlb_grpc_channel_fail(ch, "HTTP/2 session: out of memory");
}

/* ---- connecting ---- */

static void connected(struct xlb_grpc_channel *ch)
{
    char error[384];
    if (ch->target.tls) {
        if (tls_begin(ch, error, sizeof(error)) != 0) {
            xlb_grpc_channel_fail(ch, "%s", error);
            return;
        }
        ch->state = CH_TLS_HANDSHAKE;
        tls_step(ch);
        return;
    }
    ch->state = CH_HTTP2;
    if (xlb_grpc_session_start(ch) != 0)
        xlb_grpc_channel_fail(ch, "HTTP/2 session: out of memory");
}

static void finish_connect(struct xlb_grpc_channel *ch)
{
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(ch->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
        XLB_LOG(DEBUG, GRPC, "connect to %s: %s", ch->authority, strerror(err));
        close_socket(ch);
        connect_next(ch);
        return;
    }
    xlb_loop_modify_fd(ch->loop, ch->fd, EPOLLIN);
    connected(ch);
}

static void connect_next(struct xlb_grpc_channel *ch)
{
    for (; ch->next_addr != NULL; ch->next_addr = ch->next_addr->ai_next) {
        struct addrinfo *ai = ch->next_addr;
        int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
            continue;
        int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
        if ((rc != 0 && errno != EINPROGRESS) ||
            xlb_loop_add_fd(ch->loop, fd, EPOLLOUT, on_io, ch) != 0) {
            close(fd);
            continue;
        }
        ch->fd = fd;
        ch->next_addr = ai->ai_next;
        ch->state = CH_CONNECTING;
        return;
    }
    xlb_grpc_channel_fail(ch, "cannot connect to %s", ch->authority);
}

static void on_io(int fd, uint32_t events, void *arg)
{
    struct xlb_grpc_channel *ch = arg;
    switch (ch->state) {
    case CH_CONNECTING:
        finish_connect(ch);
        break;
    case CH_TLS_HANDSHAKE:
        tls_step(ch);
        break;
    case CH_HTTP2:
        if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
            read_available(ch);
        else
            xlb_grpc_channel_flush(ch);
        break;
    default:
        break;
    }
}

static void on_connect_timeout(void *arg)
{
    struct xlb_grpc_channel *ch = arg;
    ch->timer = 0;
    xlb_grpc_channel_fail(ch, "connecting to %s timed out after %d ms", ch->authority,
                          XLB_GRPC_CONNECT_TIMEOUT);
}

/* ---- resolving ---- */

static void on_resolve_poll(void *arg)
{
    struct xlb_grpc_channel *ch = arg;
    ch->timer = 0;
    int rc = gai_error(&ch->resolve);
    if (rc == EAI_INPROGRESS) {
        if (xlb_now_ms() > ch->resolve_deadline_ms) {
            gai_cancel(&ch->resolve);
            xlb_grpc_channel_fail(ch, "resolving %s timed out", ch->target.host);
            return;
        }
        ch->timer = xlb_loop_add_timeout(ch->loop, RESOLVE_POLL_MS, on_resolve_poll, ch);
        return;
    }
    if (rc != 0) {
        xlb_grpc_channel_fail(ch, "resolving %s: %s", ch->target.host, gai_strerror(rc));
        return;
    }
    ch->addrs = ch->next_addr = ch->resolve.ar_result;
    ch->resolve.ar_result = NULL;
    ch->timer = xlb_loop_add_timeout(ch->loop, XLB_GRPC_CONNECT_TIMEOUT, on_connect_timeout, ch);
    connect_next(ch);
}

static int start_resolve(struct xlb_grpc_channel *ch)
{
    snprintf(ch->port_text, sizeof(ch->port_text), "%u", ch->target.port);
    ch->resolve_hints = (struct addrinfo){.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    ch->resolve = (struct gaicb){
        .ar_name = ch->target.host,
        .ar_service = ch->port_text,
        .ar_request = &ch->resolve_hints,
    };
    ch->resolve_list[0] = &ch->resolve;
    if (getaddrinfo_a(GAI_NOWAIT, ch->resolve_list, 1, NULL) != 0)
        return -1;
    ch->state = CH_RESOLVING;
    ch->resolve_deadline_ms = xlb_now_ms() + RESOLVE_TIMEOUT_MS;
    ch->timer = xlb_loop_add_timeout(ch->loop, 0, on_resolve_poll, ch);
    return 0;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

struct xlb_grpc_channel *xlb_grpc_channel_connect(struct xlb_loop *loop,
                                                  const struct xlb_grpc_target *target,
                                                  const struct xlb_grpc_channel_callbacks *cb,
                                                  void *arg)
{
    struct xlb_grpc_channel *ch = calloc(1, sizeof(*ch));
    if (ch == NULL)
        return NULL;
    ch->loop = loop;
    ch->target = *target;
    ch->ca_file = dup_or_null(target->ca_file);
    ch->cert_file = dup_or_null(target->cert_file);
    ch->key_file = dup_or_null(target->key_file);
    ch->target.ca_file = ch->target.cert_file = ch->target.key_file = NULL;
    if (ch->target.max_message == 0)
        ch->target.max_message = XLB_GRPC_DEFAULT_MAX_MSG;
    ch->cb = *cb;
    ch->arg = arg;
    ch->fd = -1;
    bool v6 = strchr(target->host, ':') != NULL;
    snprintf(ch->authority, sizeof(ch->authority), v6 ? "[%s]:%u" : "%s:%u", target->host,
             target->port);
    char error[384];
    if (target->tls && (ch->ssl_ctx = xlb_grpc_tls_context(ch, error, sizeof(error))) == NULL) {
        XLB_LOG(ERR, GRPC, "%s: %s", ch->authority, error);
        xlb_grpc_channel_destroy(ch);
        return NULL;
    }
    if (start_resolve(ch) != 0) {
        xlb_grpc_channel_destroy(ch);
        return NULL;
    }
    return ch;
}

bool xlb_grpc_channel_ready(const struct xlb_grpc_channel *ch)
{
    return ch->ready && ch->state == CH_HTTP2;
}

void xlb_grpc_channel_destroy(struct xlb_grpc_channel *ch)
{
    if (ch == NULL)
        return;
    if (ch->state == CH_RESOLVING && gai_cancel(&ch->resolve) == EAI_NOTCANCELED) {
        /* The lookup is running in glibc's thread: wait for it before freeing what it uses. */
        const struct gaicb *list[1] = {&ch->resolve};
        while (gai_suspend(list, 1, NULL) == EAI_INTR)
            ;
    }
    if (ch->resolve.ar_result != NULL)
        freeaddrinfo(ch->resolve.ar_result);
    cancel_timer(ch);
    close_socket(ch);
    xlb_grpc_streams_free(ch);
    nghttp2_session_del(ch->session);
    if (ch->addrs != NULL)
        freeaddrinfo(ch->addrs);
    SSL_CTX_free(ch->ssl_ctx);
    free(ch->out);
    free(ch->ca_file);
    free(ch->cert_file);
    free(ch->key_file);
    free(ch);
}
