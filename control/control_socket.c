#define _GNU_SOURCE /* accept4 */
#include "control_socket.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "xlb_log.h"

struct client {
    int fd;
    struct xlb_control_socket *owner;
    char *in;
    size_t in_len;
    char *out;
    size_t out_len, out_sent;
    bool closing; /* close once the output is flushed */
};

struct xlb_control_socket {
    struct xlb_loop *loop;
    int listen_fd;
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    xlb_request_handler handler;
    void *arg;
    struct client *clients[XLB_SOCKET_CLIENTS];
};

cJSON *xlb_reply_error(const char *fmt, ...)
{
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    cJSON *reply = cJSON_CreateObject();
    cJSON_AddFalseToObject(reply, "ok");
    cJSON_AddStringToObject(reply, "error", message);
    return reply;
}

cJSON *xlb_reply_ok(cJSON *result)
{
    cJSON *reply = cJSON_CreateObject();
    cJSON_AddTrueToObject(reply, "ok");
    cJSON_AddItemToObject(reply, "result", result ? result : cJSON_CreateObject());
    return reply;
}

static void client_close(struct client *c)
{
    struct xlb_control_socket *s = c->owner;
    for (unsigned i = 0; i < XLB_SOCKET_CLIENTS; i++)
        if (s->clients[i] == c)
            s->clients[i] = NULL;
    xlb_loop_remove_fd(s->loop, c->fd);
    close(c->fd);
    free(c->in);
    free(c->out);
    free(c);
}

/* Queue a reply line; a reply too large for the limit becomes an error reply. */
static void client_queue(struct client *c, cJSON *reply)
{
    char *text = cJSON_PrintUnformatted(reply);
    cJSON_Delete(reply);
    if (text != NULL && strlen(text) + c->out_len > XLB_REPLY_MAX) {
        free(text);
        cJSON *too_big = xlb_reply_error("reply larger than %u bytes", XLB_REPLY_MAX);
        text = cJSON_PrintUnformatted(too_big);
        cJSON_Delete(too_big);
    }
    if (text == NULL) {
        c->closing = true;
        return;
    }
    size_t len = strlen(text);
    char *grown = realloc(c->out, c->out_len + len + 1);
    if (grown == NULL) {
        free(text);
        c->closing = true;
        return;
    }
    memcpy(grown + c->out_len, text, len);
    grown[c->out_len + len] = '\n';
    c->out = grown;
    c->out_len += len + 1;
    free(text);
}

static void handle_line(struct client *c, char *line)
{
    cJSON *request = cJSON_Parse(line);
    cJSON *reply;
    if (request == NULL)
        reply = xlb_reply_error("request is not valid JSON");
    else if (!cJSON_IsObject(request))
        reply = xlb_reply_error("request must be a JSON object");
    else
        reply = c->owner->handler(request, c->owner->arg);
    cJSON_Delete(request);
    client_queue(c, reply);
}

/* Serve every complete line in the input buffer; keep a partial one. */
static void handle_input(struct client *c)
{
    size_t start = 0;
    for (size_t i = 0; i < c->in_len; i++) {
        if (c->in[i] != '\n')
            continue;
        c->in[i] = '\0';
        handle_line(c, c->in + start);
        start = i + 1;
    }
    memmove(c->in, c->in + start, c->in_len - start);
    c->in_len -= start;
    if (c->in_len >= XLB_REQUEST_MAX) {
        client_queue(c, xlb_reply_error("request longer than %u bytes", XLB_REQUEST_MAX));
        c->closing = true;
        c->in_len = 0;
    }
}

static void flush_output(struct client *c)
{
    while (c->out_sent < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_sent, c->out_len - c->out_sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n <= 0) {
            client_close(c);
            return;
        }
        c->out_sent += (size_t)n;
    }
    if (c->out_sent == c->out_len) {
        c->out_len = c->out_sent = 0;
        if (c->closing) {
            client_close(c);
            return;
        }
    }
    xlb_loop_modify_fd(c->owner->loop, c->fd, EPOLLIN | (c->out_len ? EPOLLOUT : 0));
}

static void on_client(int fd, uint32_t events, void *arg)
{
    struct client *c = arg;
    if (events & EPOLLIN) {
        ssize_t n = recv(fd, c->in + c->in_len, XLB_REQUEST_MAX - c->in_len, 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            client_close(c);
            return;
        }
        if (n > 0) {
            c->in_len += (size_t)n;
            handle_input(c);
        }
    } else if (events & (EPOLLHUP | EPOLLERR)) {
        client_close(c);
        return;
    }
    flush_output(c);
}

/* Serve one accepted connection, or tell it that every client slot is taken. */
static void adopt_client(struct xlb_control_socket *s, int client_fd)
{
    unsigned slot = 0;
    while (slot < XLB_SOCKET_CLIENTS && s->clients[slot] != NULL)
        slot++;
    struct client *c = slot < XLB_SOCKET_CLIENTS ? calloc(1, sizeof(*c)) : NULL;
    if (c != NULL)
        c->in = malloc(XLB_REQUEST_MAX + 1);
    if (c == NULL || c->in == NULL) {
        static const char busy[] = "{\"ok\":false,\"error\":\"too many control clients\"}\n";
        ssize_t ignored = send(client_fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL);
        (void)ignored;
        close(client_fd);
        if (c != NULL)
            free(c);
        return;
    }
    c->fd = client_fd;
    c->owner = s;
    if (xlb_loop_add_fd(s->loop, client_fd, EPOLLIN, on_client, c) != 0) {
        close(client_fd);
        free(c->in);
        free(c);
        return;
    }
    s->clients[slot] = c;
}

static void on_accept(int fd, uint32_t events, void *arg)
{
    /* Drain the backlog (bounded per wakeup) so a burst of clients is not refused by the
     * kernel for want of backlog room. */
    for (int i = 0; i < 4 * XLB_SOCKET_CLIENTS; i++) {
        int client_fd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (client_fd < 0)
            return;
        adopt_client(arg, client_fd);
    }
}

/* A socket file that still accepts connections belongs to a live daemon. */
static bool path_in_use(const struct sockaddr_un *addr)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    bool live = connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0;
    close(fd);
    return live;
}

static int bind_owner_only(int fd, const struct sockaddr_un *addr)
{
    /* Created 0600 from the start: no window in which others may connect. */
    mode_t old = umask(0177);
    int rc = bind(fd, (const struct sockaddr *)addr, sizeof(*addr));
    umask(old);
    return rc;
}

struct xlb_control_socket *xlb_control_socket_open(struct xlb_loop *loop, const char *path,
                                                   xlb_request_handler handler, void *arg)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(addr.sun_path)) {
        XLB_LOG(ERR, SOCKET, "control socket path too long: %s", path);
        return NULL;
    }
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
    if (path_in_use(&addr)) {
        XLB_LOG(ERR, SOCKET, "%s is served by another process (another xlbd?)", path);
        return NULL;
    }
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
        unlink(path); /* stale, from a daemon that did not exit cleanly */

    struct xlb_control_socket *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    s->loop = loop;
    s->handler = handler;
    s->arg = arg;
    snprintf(s->path, sizeof(s->path), "%s", path);
    s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->listen_fd < 0 || bind_owner_only(s->listen_fd, &addr) != 0 ||
        listen(s->listen_fd, 64) != 0 ||
        xlb_loop_add_fd(loop, s->listen_fd, EPOLLIN, on_accept, s) != 0) {
        XLB_LOG(ERR, SOCKET, "cannot listen on %s: %s", path, strerror(errno));
        if (s->listen_fd >= 0)
            close(s->listen_fd);
        free(s);
        return NULL;
    }
    XLB_LOG(INFO, SOCKET, "control socket %s", path);
    return s;
}

void xlb_control_socket_close(struct xlb_control_socket *s)
{
    if (s == NULL)
        return;
    for (unsigned i = 0; i < XLB_SOCKET_CLIENTS; i++)
        if (s->clients[i] != NULL)
            client_close(s->clients[i]);
    xlb_loop_remove_fd(s->loop, s->listen_fd);
    close(s->listen_fd);
    unlink(s->path);
    free(s);
}
