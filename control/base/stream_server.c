#define _GNU_SOURCE /* accept4 */
#include "stream_server.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

struct xlb_stream_client {
    int fd;
    struct xlb_stream_server *server;
    char *in;
    size_t in_len;
    char *out;
    size_t out_len, out_sent, out_cap;
    bool closing;             /* close once the output is flushed */
    bool held;                /* a reply comes later: input waits (xlb_stream_client_hold) */
    bool eof;                 /* the client sent its last byte while held */
    uint64_t last_active_ms;  /* the last byte read or written (accept counts) */
    uint64_t last_active_seq; /* the same as the server's activity count: orders clients whose
                               * last activity fell in the same millisecond */
    bool dropped;             /* its output passed max_output: nothing more is queued */
    bool has_peer;            /* a Unix socket: peer holds its credentials */
    struct xlb_peer_cred peer;
};

struct xlb_stream_server {
    struct xlb_loop *loop;
    int listen_fd;
    struct xlb_stream_handlers handlers;
    void *arg;
    struct xlb_stream_client **clients;
    struct xlb_stream_server_stats stats;
    uint64_t sweep;        /* the idle sweep's timeout id, 0 when none is armed */
    uint64_t activity_seq; /* counts client activity: last_active_seq */
};

/* A byte read or written, or the accept: the idle clock and the order of idleness restart. */
static void client_active(struct xlb_stream_client *c)
{
    c->last_active_ms = xlb_now_ms();
    c->last_active_seq = ++c->server->activity_seq;
}

static void client_close(struct xlb_stream_client *c)
{
    struct xlb_stream_server *s = c->server;
    if (s->handlers.on_close != NULL)
        s->handlers.on_close(c, s->arg);
    for (unsigned i = 0; i < s->handlers.max_clients; i++)
        if (s->clients[i] == c)
            s->clients[i] = NULL;
    xlb_loop_remove_fd(s->loop, c->fd);
    close(c->fd);
    free(c->in);
    free(c->out);
    free(c);
}

/* Room for `need` queued bytes. Doubling: a client that reads slowly gets many replies
 * queued, and growing by each reply's size would copy the whole queue per reply (quadratic;
 * a sanitizer's realloc always copies). */
static int grow_output(struct xlb_stream_client *c, size_t need)
{
    size_t cap = c->out_cap < 4096 ? 4096 : c->out_cap;
    while (cap < need)
        cap *= 2;
    char *grown = realloc(c->out, cap);
    if (grown == NULL)
        return -1;
    c->out = grown;
    c->out_cap = cap;
    return 0;
}

int xlb_stream_client_send(struct xlb_stream_client *c, const char *data, size_t len)
{
    size_t cap = c->server->handlers.max_output;
    if (c->dropped)
        return -1;
    if (cap != 0 && xlb_stream_client_queued(c) + len > cap) {
        /* It does not read: drop what is queued, so that flushing closes it at once. */
        c->server->stats.closed_output++;
        c->out_len = c->out_sent = 0;
        c->closing = c->dropped = true;
        return -1;
    }
    if (c->out_len + len > c->out_cap && grow_output(c, c->out_len + len) != 0) {
        c->closing = true;
        return -1;
    }
    memcpy(c->out + c->out_len, data, len);
    c->out_len += len;
    return 0;
}

void xlb_stream_client_close_after_send(struct xlb_stream_client *c)
{
    c->closing = true;
}

size_t xlb_stream_client_queued(const struct xlb_stream_client *c)
{
    return c->out_len - c->out_sent;
}

/* Write what the socket takes; false when the client was closed. */
static bool flush_output(struct xlb_stream_client *c)
{
    while (c->out_sent < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_sent, c->out_len - c->out_sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n <= 0) {
            client_close(c);
            return false;
        }
        c->out_sent += (size_t)n;
        client_active(c);
    }
    if (c->out_sent == c->out_len) {
        c->out_len = c->out_sent = 0;
        if (c->out_cap > 65536) { /* a large reply went out: do not keep its buffer */
            free(c->out);
            c->out = NULL;
            c->out_cap = 0;
        }
        if (c->closing) {
            client_close(c);
            return false;
        }
    }
    xlb_loop_modify_fd(c->server->loop, c->fd,
                       (c->eof ? 0 : EPOLLIN) | (c->out_len ? EPOLLOUT : 0));
    return true;
}

static void consume_input(struct xlb_stream_client *c)
{
    struct xlb_stream_server *s = c->server;
    size_t used;
    while (c->in_len > 0 && !c->closing && !c->held &&
           (used = s->handlers.on_input(c, c->in, c->in_len, s->arg)) > 0) {
        memmove(c->in, c->in + used, c->in_len - used);
        c->in_len -= used;
        c->in[c->in_len] = '\0';
    }
    if (c->in_len >= s->handlers.max_input && !c->closing && !c->held) {
        s->stats.closed_overflow++;
        s->handlers.on_overflow(c, s->arg);
        c->closing = true;
        c->in_len = 0;
    }
}

static void on_client(int fd, uint32_t events, void *arg)
{
    struct xlb_stream_client *c = arg;
    if (events & EPOLLIN) {
        size_t room = c->server->handlers.max_input - c->in_len;
        ssize_t n = room ? recv(fd, c->in + c->in_len, room, 0) : 0;
        if (n == 0 && room > 0 && c->held) {
            c->eof = true; /* answer the held request first, then close */
            flush_output(c);
            return;
        }
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            client_close(c);
            return;
        }
        if (n > 0) {
            client_active(c);
            c->in_len += (size_t)n;
            c->in[c->in_len] = '\0';
            consume_input(c);
        }
    } else if (events & (EPOLLHUP | EPOLLERR)) {
        client_close(c);
        return;
    }
    flush_output(c);
}

void xlb_stream_client_hold(struct xlb_stream_client *c)
{
    c->held = true;
}

void xlb_stream_client_resume(struct xlb_stream_client *c)
{
    c->held = false;
    consume_input(c);
    if (c->eof && !c->held)
        c->closing = true;
    flush_output(c);
}

static void refuse(const struct xlb_stream_server *s, int fd)
{
    if (s->handlers.busy_reply != NULL) {
        ssize_t ignored = send(fd, s->handlers.busy_reply, strlen(s->handlers.busy_reply),
                               MSG_NOSIGNAL | MSG_DONTWAIT);
        (void)ignored;
    }
    close(fd);
}

/* Credentials are taken once, at accept: what the peer was when it connected is what the
 * kernel vouches for. */
static void read_peer(struct xlb_stream_client *c)
{
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof(cred))
        return;
    c->has_peer = true;
    c->peer.uid = cred.uid;
    c->peer.gid = cred.gid;
    socklen_t groups_len = sizeof(c->peer.groups);
    if (getsockopt(c->fd, SOL_SOCKET, SO_PEERGROUPS, c->peer.groups, &groups_len) == 0)
        c->peer.n_groups = (unsigned)(groups_len / sizeof(gid_t));
}

bool xlb_stream_client_peer(const struct xlb_stream_client *c, struct xlb_peer_cred *out)
{
    if (!c->has_peer)
        return false;
    *out = c->peer;
    return true;
}

/*
 * When every slot is taken, the client idle longest (no reply being prepared for it, nothing
 * queued) makes room: idle connections cannot keep out a scrape or an operator's command.
 * Returns its slot, or max_clients when every client is busy.
 */
static unsigned evict_oldest_idle(struct xlb_stream_server *s)
{
    unsigned oldest = s->handlers.max_clients;
    for (unsigned i = 0; i < s->handlers.max_clients; i++) {
        const struct xlb_stream_client *c = s->clients[i];
        if (c == NULL || c->held || xlb_stream_client_queued(c) > 0)
            continue;
        if (oldest == s->handlers.max_clients ||
            c->last_active_seq < s->clients[oldest]->last_active_seq)
            oldest = i;
    }
    if (oldest < s->handlers.max_clients) {
        s->stats.evicted++;
        client_close(s->clients[oldest]);
    }
    return oldest;
}

static void adopt(struct xlb_stream_server *s, int fd)
{
    unsigned slot = 0;
    while (slot < s->handlers.max_clients && s->clients[slot] != NULL)
        slot++;
    if (slot == s->handlers.max_clients)
        slot = evict_oldest_idle(s);
    struct xlb_stream_client *c = slot < s->handlers.max_clients ? calloc(1, sizeof(*c)) : NULL;
    if (c != NULL)
        c->in = malloc(s->handlers.max_input + 1);
    if (c == NULL || c->in == NULL || xlb_loop_add_fd(s->loop, fd, EPOLLIN, on_client, c) != 0) {
        if (c != NULL)
            free(c->in);
        free(c);
        s->stats.refused++;
        refuse(s, fd);
        return;
    }
    c->fd = fd;
    c->server = s;
    client_active(c);
    read_peer(c);
    s->clients[slot] = c;
}

static void on_accept(int fd, uint32_t events, void *arg)
{
    struct xlb_stream_server *s = arg;
    /* Drain the backlog (bounded per wakeup) so that a burst of clients is not refused by the
     * kernel for want of backlog room. */
    for (unsigned i = 0; i < 4 * s->handlers.max_clients; i++) {
        int client_fd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (client_fd < 0)
            return;
        adopt(s, client_fd);
    }
}

static void arm_sweep(struct xlb_stream_server *s);

/* Close the clients idle for idle_timeout_ms; runs a few times per timeout. */
static void sweep_idle(void *arg)
{
    struct xlb_stream_server *s = arg;
    s->sweep = 0;
    uint64_t now = xlb_now_ms();
    for (unsigned i = 0; i < s->handlers.max_clients; i++) {
        struct xlb_stream_client *c = s->clients[i];
        if (c != NULL && !c->held && now - c->last_active_ms >= s->handlers.idle_timeout_ms) {
            s->stats.closed_idle++;
            client_close(c);
        }
    }
    arm_sweep(s);
}

static void arm_sweep(struct xlb_stream_server *s)
{
    if (s->handlers.idle_timeout_ms == 0)
        return;
    uint64_t period = s->handlers.idle_timeout_ms / 4;
    period = period < 50 ? 50 : period > 1000 ? 1000 : period;
    s->sweep = xlb_loop_add_timeout(s->loop, period, sweep_idle, s);
}

const struct xlb_stream_server_stats *xlb_stream_server_stats(const struct xlb_stream_server *s)
{
    return &s->stats;
}

void xlb_stream_server_set_idle_timeout(struct xlb_stream_server *s, uint64_t idle_ms)
{
    if (s->sweep != 0)
        xlb_loop_cancel(s->loop, s->sweep);
    s->sweep = 0;
    s->handlers.idle_timeout_ms = idle_ms;
    arm_sweep(s);
}

struct xlb_stream_server *xlb_stream_server_open(struct xlb_loop *loop, int listen_fd,
                                                 const struct xlb_stream_handlers *handlers,
                                                 void *arg)
{
    struct xlb_stream_server *s = calloc(1, sizeof(*s));
    if (s != NULL)
        s->clients = calloc(handlers->max_clients, sizeof(*s->clients));
    if (s == NULL || s->clients == NULL ||
        xlb_loop_add_fd(loop, listen_fd, EPOLLIN, on_accept, s) != 0) {
        if (s != NULL)
            free(s->clients);
        free(s);
        close(listen_fd);
        return NULL;
    }
    s->loop = loop;
    s->listen_fd = listen_fd;
    s->handlers = *handlers;
    s->arg = arg;
    arm_sweep(s);
    return s;
}

void xlb_stream_server_close(struct xlb_stream_server *s)
{
    if (s == NULL)
        return;
    for (unsigned i = 0; i < s->handlers.max_clients; i++)
        if (s->clients[i] != NULL)
            client_close(s->clients[i]);
    if (s->sweep != 0)
        xlb_loop_cancel(s->loop, s->sweep);
    xlb_loop_remove_fd(s->loop, s->listen_fd);
    close(s->listen_fd);
    free(s->clients);
    free(s);
}
