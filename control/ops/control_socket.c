#include "control_socket.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "stream_server.h"
#include "xlb_log.h"

struct xlb_reply_later {
    struct xlb_control_socket *sock;  /* NULL once the socket is closed */
    struct xlb_stream_client *client; /* NULL once the client is gone */
    struct xlb_reply_later *next;
};

struct xlb_control_socket {
    struct xlb_stream_server *server;
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    xlb_request_handler handler;
    void *arg;
    struct xlb_stream_client *current; /* whose request the handler is answering */
    struct xlb_reply_later *later;     /* replies still to come */
    uid_t owner;                       /* who created the socket (xlbd's effective uid) */
    bool has_group;
    gid_t group; /* may change state too (xlb_control_socket_allow_group) */
};

cJSON xlb_reply_later_marker;

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

/* Queue one reply line; a reply over the limit becomes an error reply. */
static void send_reply(struct xlb_stream_client *client, cJSON *reply)
{
    char *text = cJSON_PrintUnformatted(reply);
    cJSON_Delete(reply);
    if (text != NULL && strlen(text) + xlb_stream_client_queued(client) > XLB_REPLY_MAX) {
        free(text);
        cJSON *too_big = xlb_reply_error("reply larger than %u bytes", XLB_REPLY_MAX);
        text = cJSON_PrintUnformatted(too_big);
        cJSON_Delete(too_big);
    }
    if (text == NULL || xlb_stream_client_send(client, text, strlen(text)) != 0 ||
        xlb_stream_client_send(client, "\n", 1) != 0)
        xlb_stream_client_close_after_send(client);
    free(text);
}

static cJSON *answer(struct xlb_control_socket *sock, const char *line)
{
    cJSON *request = cJSON_Parse(line);
    cJSON *reply;
    if (request == NULL)
        reply = xlb_reply_error("request is not valid JSON");
    else if (!cJSON_IsObject(request))
        reply = xlb_reply_error("request must be a JSON object");
    else
        reply = sock->handler(request, sock->arg);
    cJSON_Delete(request);
    return reply;
}

struct xlb_reply_later *xlb_reply_later(struct xlb_control_socket *sock)
{
    struct xlb_reply_later *later =
        sock != NULL && sock->current != NULL ? calloc(1, sizeof(*later)) : NULL;
    if (later == NULL)
        return NULL;
    later->sock = sock;
    later->client = sock->current;
    later->next = sock->later;
    sock->later = later;
    xlb_stream_client_hold(later->client);
    return later;
}

void xlb_reply_later_send(struct xlb_reply_later *later, cJSON *reply)
{
    if (later->sock != NULL) {
        struct xlb_reply_later **link = &later->sock->later;
        while (*link != later)
            link = &(*link)->next;
        *link = later->next;
    }
    if (later->client != NULL) {
        send_reply(later->client, reply);
        xlb_stream_client_resume(later->client);
    } else {
        cJSON_Delete(reply);
    }
    free(later);
}

static void on_close(struct xlb_stream_client *client, void *arg)
{
    struct xlb_control_socket *sock = arg;
    for (struct xlb_reply_later *l = sock->later; l != NULL; l = l->next)
        if (l->client == client)
            l->client = NULL;
}

size_t xlb_control_socket_take_request(struct xlb_control_socket *sock, char *data, size_t len,
                                       cJSON **reply)
{
    *reply = NULL;
    char *newline = memchr(data, '\n', len);
    if (newline == NULL)
        return 0;
    *newline = '\0';
    *reply = answer(sock, data);
    return (size_t)(newline - data) + 1;
}

static size_t on_input(struct xlb_stream_client *client, char *data, size_t len, void *arg)
{
    struct xlb_control_socket *sock = arg;
    cJSON *reply;
    sock->current = client;
    size_t used = xlb_control_socket_take_request(sock, data, len, &reply);
    sock->current = NULL;
    if (used > 0 && reply != XLB_REPLY_LATER)
        send_reply(client, reply);
    return used;
}

static void on_overflow(struct xlb_stream_client *client, void *arg)
{
    send_reply(client, xlb_reply_error("request longer than %u bytes", XLB_REQUEST_MAX));
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

bool xlb_control_socket_in_use(const char *path)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(addr.sun_path))
        return false;
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
    return path_in_use(&addr);
}

/* A listening Unix socket with mode 0600 from the start: no window in which others connect. */
static int listen_owner_only(const struct sockaddr_un *addr)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    mode_t old = umask(0177);
    int rc = bind(fd, (const struct sockaddr *)addr, sizeof(*addr));
    umask(old);
    if (rc != 0 || listen(fd, 64) != 0) {
        close(fd);
        return -1;
    }
    return fd;
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

    struct xlb_control_socket *sock = calloc(1, sizeof(*sock));
    int fd = sock ? listen_owner_only(&addr) : -1;
    if (fd < 0) {
        XLB_LOG(ERR, SOCKET, "cannot listen on %s: %s", path, strerror(errno));
        free(sock);
        return NULL;
    }
    snprintf(sock->path, sizeof(sock->path), "%s", path);
    sock->owner = geteuid();
    sock->handler = handler;
    sock->arg = arg;
    const struct xlb_stream_handlers handlers = {
        .on_input = on_input,
        .on_overflow = on_overflow,
        .on_close = on_close,
        .max_input = XLB_REQUEST_MAX,
        .max_clients = XLB_SOCKET_CLIENTS,
        .busy_reply = "{\"ok\":false,\"error\":\"too many control clients\"}\n",
        /* One reply of the largest size, and a little: beyond it the client is not reading. */
        .max_output = XLB_REPLY_MAX + XLB_REQUEST_MAX,
        .idle_timeout_ms = XLB_CONTROL_IDLE_DEFAULT_MS,
    };
    sock->server = xlb_stream_server_open(loop, fd, &handlers, sock);
    if (sock->server == NULL) {
        unlink(path);
        free(sock);
        return NULL;
    }
    XLB_LOG(INFO, SOCKET, "control socket %s", path);
    return sock;
}

int xlb_control_socket_allow_group(struct xlb_control_socket *sock, gid_t gid)
{
    if (chown(sock->path, (uid_t)-1, gid) != 0 || chmod(sock->path, 0660) != 0) {
        XLB_LOG(ERR, SOCKET, "cannot give %s to group %u: %s", sock->path, (unsigned)gid,
                strerror(errno));
        return -1;
    }
    sock->has_group = true;
    sock->group = gid;
    return 0;
}

static bool in_group(const struct xlb_peer_cred *peer, gid_t group)
{
    if (peer->gid == group)
        return true;
    for (unsigned i = 0; i < peer->n_groups; i++)
        if (peer->groups[i] == group)
            return true;
    return false;
}

bool xlb_control_socket_may_change_state(const struct xlb_control_socket *sock, char *why,
                                         size_t why_len)
{
    struct xlb_peer_cred peer;
    if (sock->current == NULL || !xlb_stream_client_peer(sock->current, &peer)) {
        snprintf(why, why_len, "the client's credentials are unknown");
        return false;
    }
    if (peer.uid == 0 || peer.uid == sock->owner ||
        (sock->has_group && in_group(&peer, sock->group)))
        return true;
    if (sock->has_group)
        snprintf(why, why_len, "uid %u is not root, the socket's owner (uid %u) or in group %u",
                 (unsigned)peer.uid, (unsigned)sock->owner, (unsigned)sock->group);
    else
        snprintf(why, why_len, "uid %u is not root or the socket's owner (uid %u)",
                 (unsigned)peer.uid, (unsigned)sock->owner);
    return false;
}

struct xlb_stream_server *xlb_control_socket_server(struct xlb_control_socket *sock)
{
    return sock->server;
}

void xlb_control_socket_close(struct xlb_control_socket *sock)
{
    if (sock == NULL)
        return;
    xlb_stream_server_close(sock->server);
    for (struct xlb_reply_later *l = sock->later; l != NULL; l = l->next)
        l->sock = NULL; /* their owners still send (and so free) them */
    unlink(sock->path);
    free(sock);
}
