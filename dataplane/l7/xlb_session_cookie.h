/*
 * Stateful session affinity cookies (gRPC A55, A60): the value xlb sets on a response, which
 * names the endpoint that served it, and the Set-Cookie field around it. The reading side is
 * xlb_lb_session_decode (lib/lb/xlb_lb.h); what is written here reads back through it.
 */
#ifndef XLB_SESSION_COOKIE_H
#define XLB_SESSION_COOKIE_H

#include <stdbool.h>
#include <stdint.h>

#include "xlb_host_port.h"

struct xlb_lb_trace;
struct xlb_lb_vip;

/*
 * The cookie value for endpoint `where` in `cluster` (NULL: none): base64 (with '=' padding)
 * of "ip:port;cluster", IPv6 as "[addr]:port". NUL-terminated; returns the length, or 0 when cap
 * is too small or the value would be longer than a pick reads (XLB_LB_COOKIE_MAX).
 */
uint32_t xlb_session_cookie_encode(char *out, uint32_t cap, const struct xlb_host_port *where,
                                   const char *cluster);

/* The same for an address list (A61: "ip:port,ip:port") and a cluster of cluster_len bytes. */
uint32_t xlb_session_cookie_encode_list(char *out, uint32_t cap, const struct xlb_host_port *where,
                                        uint32_t n_where, const char *cluster,
                                        uint32_t cluster_len);

/*
 * "NAME=VALUE; HttpOnly[; Path=P][; Max-Age=N]" (A55: Path when the filter's cookie has a path,
 * Max-Age when it has a ttl, in whole seconds). NUL-terminated; returns the length or 0 when cap
 * is too small.
 */
uint32_t xlb_set_cookie_value(char *out, uint32_t cap, const char *name, const char *value,
                              const char *path, uint32_t max_age_s, bool has_max_age);

/*
 * The Set-Cookie value for what a pick chose, when its route has a session cookie (A55, A60:
 * the value names the endpoint and the route's cluster, the attributes are the filter's).
 * NUL-terminated; returns the length, or 0 when no cookie applies or cap is too small.
 */
uint32_t xlb_set_cookie_of_pick(char *out, uint32_t cap, const struct xlb_lb_trace *trace,
                                const struct xlb_lb_vip *vip);

#endif
