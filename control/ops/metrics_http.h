/* The optional HTTP listener for Prometheus scrapers: GET /metrics on a loopback address. */
#ifndef XLB_METRICS_HTTP_H
#define XLB_METRICS_HTTP_H

#include "stream_server.h"
#include "xlb_host_port.h"

struct xlb_control_plane;
struct xlb_metrics_http;

/* NULL (logged) when the address cannot be bound. */
struct xlb_metrics_http *xlb_metrics_http_open(struct xlb_control_plane *cp,
                                               const struct xlb_host_port *listen_on);
void xlb_metrics_http_close(struct xlb_metrics_http *http);

/* The stream server under the listener: its limits' counters, its idle timeout. */
struct xlb_stream_server *xlb_metrics_http_server(struct xlb_metrics_http *http);

#endif
