/*
 * An endpoint address as the LB algorithms name it: IP address plus TCP port.
 *
 * Two text forms matter and both are gRPC's: "1.2.3.4:80" and "[2001:db8::1]:80". Ring hash
 * (A42) and Maglev hash that text, so it must be byte-for-byte what gRPC and Envoy produce;
 * stateful session affinity (A55/A60/A61) stores a list of them, comma-separated, in a cookie
 * that the data plane parses from untrusted input.
 */
#ifndef XLB_HOST_PORT_H
#define XLB_HOST_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xlb_addr.h"

/* Longest text form: "[" + 45-character IPv6 + "]:" + 5 digits + NUL. */
#define XLB_HOST_PORT_STRLEN 56

/* The most addresses a cookie may name; A61 endpoints carry a handful at most. */
#define XLB_HOST_PORT_LIST_MAX 8

struct xlb_host_port {
    struct xlb_addr addr;
    uint16_t port; /* host byte order */
};

static inline bool xlb_host_port_equal(const struct xlb_host_port *a, const struct xlb_host_port *b)
{
    return a->port == b->port && xlb_addr_equal(&a->addr, &b->addr);
}

/*
 * Write gRPC's text form into buf (XLB_HOST_PORT_STRLEN bytes suffice). Returns the length
 * written, or -1 when the address is not IPv4/IPv6 or buf is too small.
 */
int xlb_host_port_format(const struct xlb_host_port *hp, char *buf, size_t len);

/*
 * Parse exactly len bytes of text (no terminator needed, none read past len) as one
 * "ipv4:port" or "[ipv6]:port". Ports 1-65535 in decimal without leading zeros. Returns 0 or
 * -EINVAL.
 */
int xlb_host_port_parse(const char *text, size_t len, struct xlb_host_port *out);

/*
 * Parse a cookie's address list "hp[,hp]..." of exactly len bytes into out[0..max_out).
 * Returns the number of addresses, -EINVAL for anything malformed (empty items, spaces,
 * trailing commas included), or -E2BIG when there are more than max_out.
 */
int xlb_host_port_list_parse(const char *text, size_t len, struct xlb_host_port *out,
                             uint32_t max_out);

#endif
