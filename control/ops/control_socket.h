/*
 * The control socket: a Unix stream socket (mode 0600) carrying one JSON request per line and
 * one JSON reply per line. Framing, limits and malformed input are handled here; what a
 * request means is the handler's business.
 */
#ifndef XLB_CONTROL_SOCKET_H
#define XLB_CONTROL_SOCKET_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "event_loop.h"

#define XLB_REQUEST_MAX    (64u * 1024)
#define XLB_REPLY_MAX      (16u * 1024 * 1024)
#define XLB_SOCKET_CLIENTS 32

/* Returns a reply object ({"ok": ...}); the socket frees it. */
typedef cJSON *(*xlb_request_handler)(const cJSON *request, void *arg);

struct xlb_control_socket;

/* True when a live process accepts connections on path (another xlbd, most likely). */
bool xlb_control_socket_in_use(const char *path);

/* Listen on path; NULL (logged) if it cannot, e.g. another xlbd is serving it. */
struct xlb_control_socket *xlb_control_socket_open(struct xlb_loop *loop, const char *path,
                                                   xlb_request_handler handler, void *arg);
void xlb_control_socket_close(struct xlb_control_socket *sock);

/* {"ok": false, "error": message}: for handlers and the socket itself. */
cJSON *xlb_reply_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* {"ok": true, "result": result}; takes ownership of result. */
cJSON *xlb_reply_ok(cJSON *result);

#endif
