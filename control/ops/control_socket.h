/*
 * The control socket: a Unix stream socket (mode 0600) carrying one JSON request per line and
 * one JSON reply per line. Framing, limits and malformed input are handled here; what a
 * request means is the handler's business.
 */
#ifndef XLB_CONTROL_SOCKET_H
#define XLB_CONTROL_SOCKET_H

#include <stdbool.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "event_loop.h"
#include "stream_server.h"

#define XLB_REQUEST_MAX    (64u * 1024)
#define XLB_REPLY_MAX      (16u * 1024 * 1024)
#define XLB_SOCKET_CLIENTS 32
/* control_idle_timeout_ms when the bootstrap does not set it. */
#define XLB_CONTROL_IDLE_DEFAULT_MS (5u * 60 * 1000) /* = XLB_DEFAULT_CONTROL_IDLE_MS */

/* Returns a reply object ({"ok": ...}); the socket frees it. */
typedef cJSON *(*xlb_request_handler)(const cJSON *request, void *arg);

struct xlb_control_socket;

/* True when a live process accepts connections on path (another xlbd, most likely). */
bool xlb_control_socket_in_use(const char *path);

/* Listen on path; NULL (logged) if it cannot, e.g. another xlbd is serving it. */
struct xlb_control_socket *xlb_control_socket_open(struct xlb_loop *loop, const char *path,
                                                   xlb_request_handler handler, void *arg);
void xlb_control_socket_close(struct xlb_control_socket *sock);

/*
 * Let group gid connect (the socket file becomes 0660, group gid) and change state. Returns 0,
 * or -1 (logged) when the file cannot be changed.
 */
int xlb_control_socket_allow_group(struct xlb_control_socket *sock, gid_t gid);

/*
 * Whether the client whose request is being handled may run a command that changes state:
 * root, the socket's owner (xlbd's user) or a member of the allowed group (primary or
 * supplementary, as the kernel reported at connect). When not, why says who may.
 */
bool xlb_control_socket_may_change_state(const struct xlb_control_socket *sock, char *why,
                                         size_t why_len);

/*
 * Framing, one request per line: when data (len bytes, NUL-terminated after them) holds a
 * whole line, answer it and return its length with the newline, which becomes a NUL; the reply
 * (XLB_REPLY_LATER when deferred; NULL only without memory) is the caller's to send and free. 0
 * while the line is incomplete (*reply NULL). The socket calls this for each line a client sends,
 * and the fuzz target (tests/fuzz/control) without a client.
 */
size_t xlb_control_socket_take_request(struct xlb_control_socket *sock, char *data, size_t len,
                                       cJSON **reply);

/* The stream server under the socket: its limits' counters, its idle timeout. */
struct xlb_stream_server *xlb_control_socket_server(struct xlb_control_socket *sock);

/*
 * Replies that come later. A handler that cannot answer at once (it waits for the workers, say)
 * takes a handle with xlb_reply_later while it runs and returns XLB_REPLY_LATER; the client's
 * further requests wait, unread, until the reply is given with xlb_reply_later_send, which
 * must come from a later event (a timer). The handle is valid until then even if the client or
 * the socket goes away first (the reply is then dropped); the caller bounds the wait.
 */
struct xlb_reply_later;
extern cJSON xlb_reply_later_marker;
#define XLB_REPLY_LATER (&xlb_reply_later_marker)

/* The handle for the request being handled on sock; NULL outside a handler or without memory. */
struct xlb_reply_later *xlb_reply_later(struct xlb_control_socket *sock);
/* Send the reply (the socket frees it) and free the handle. */
void xlb_reply_later_send(struct xlb_reply_later *later, cJSON *reply);

/* {"ok": false, "error": message}: for handlers and the socket itself. */
cJSON *xlb_reply_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* {"ok": true, "result": result}; takes ownership of result. */
cJSON *xlb_reply_ok(cJSON *result);

#endif
