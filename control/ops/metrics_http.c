#include "metrics_http.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control_plane.h"
#include "metrics.h"
#include "metrics_request.h"
#include "stream_server.h"
#include "xlb_log.h"

#define XLB_HTTP_REQUEST_MAX 8192
#define XLB_HTTP_CLIENTS     16
#define XLB_HTTP_OUTPUT_MAX  (64u * 1024 * 1024)

struct xlb_metrics_http {
    struct xlb_control_plane *cp;
    struct xlb_stream_server *server;
};

static void respond(struct xlb_stream_client *client, const char *status, const char *type,
                    const char *body, size_t body_len)
{
    char head[256];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n",
                     status, type, body_len);
    xlb_stream_client_send(client, head, (size_t)n);
    xlb_stream_client_send(client, body, body_len);
    xlb_stream_client_close_after_send(client);
}

static void respond_text(struct xlb_stream_client *client, const char *status, const char *body)
{
    respond(client, status, "text/plain; charset=utf-8", body, strlen(body));
}

/* One request per connection: wait for the end of the header block, answer, close. */
static size_t on_input(struct xlb_stream_client *client, char *data, size_t len, void *arg)
{
    struct xlb_metrics_http *http = arg;
    switch (xlb_metrics_request_read(data, len)) {
    case XLB_METRICS_REQUEST_INCOMPLETE:
        return 0;
    case XLB_METRICS_REQUEST_BAD:
        respond_text(client, "400 Bad Request", "bad request\n");
        break;
    case XLB_METRICS_REQUEST_NOT_GET:
        respond_text(client, "405 Method Not Allowed", "only GET\n");
        break;
    case XLB_METRICS_REQUEST_NOT_FOUND:
        respond_text(client, "404 Not Found", "try /metrics\n");
        break;
    case XLB_METRICS_REQUEST_METRICS: {
        struct xlb_text text = {0};
        xlb_metrics_render(http->cp, &text);
        if (text.failed)
            respond_text(client, "500 Internal Server Error", "out of memory\n");
        else
            respond(client, "200 OK", "text/plain; version=0.0.4; charset=utf-8", text.data,
                    text.len);
        xlb_text_free(&text);
        break;
    }
    }
    return len;
}

static void on_overflow(struct xlb_stream_client *client, void *arg)
{
    respond_text(client, "431 Request Header Fields Too Large", "request too large\n");
}

static int listen_tcp(const struct xlb_host_port *on)
{
    struct sockaddr_storage ss = {0};
    socklen_t len;
    if (on->addr.family == AF_INET) {
        struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
        sin->sin_family = AF_INET;
        sin->sin_port = htons(on->port);
        memcpy(&sin->sin_addr, on->addr.bytes, 4);
        len = sizeof(*sin);
    } else {
        struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = htons(on->port);
        memcpy(&sin6->sin6_addr, on->addr.bytes, 16);
        len = sizeof(*sin6);
    }
    int fd = socket(on->addr.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 64) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

struct xlb_metrics_http *xlb_metrics_http_open(struct xlb_control_plane *cp,
                                               const struct xlb_host_port *listen_on)
{
    char where[XLB_HOST_PORT_STRLEN];
    xlb_host_port_format(listen_on, where, sizeof(where));
    struct xlb_metrics_http *http = calloc(1, sizeof(*http));
    int fd = http ? listen_tcp(listen_on) : -1;
    if (fd < 0) {
        XLB_LOG(ERR, CONTROL, "metrics: cannot listen on %s: %s", where, strerror(errno));
        free(http);
        return NULL;
    }
    http->cp = cp;
    const struct xlb_stream_handlers handlers = {
        .on_input = on_input,
        .on_overflow = on_overflow,
        .max_input = XLB_HTTP_REQUEST_MAX,
        .max_clients = XLB_HTTP_CLIENTS,
        .busy_reply = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
                      "Connection: close\r\n\r\n",
        /* Several expositions at the series cap; beyond it the scraper is not reading. */
        .max_output = XLB_HTTP_OUTPUT_MAX,
    };
    http->server = xlb_stream_server_open(cp->loop, fd, &handlers, http);
    if (http->server == NULL) {
        free(http);
        return NULL;
    }
    XLB_LOG(INFO, CONTROL, "metrics on http://%s/metrics", where);
    return http;
}

struct xlb_stream_server *xlb_metrics_http_server(struct xlb_metrics_http *http)
{
    return http->server;
}

void xlb_metrics_http_close(struct xlb_metrics_http *http)
{
    if (http == NULL)
        return;
    xlb_stream_server_close(http->server);
    free(http);
}
