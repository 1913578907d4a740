#include "xlb_host_port.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

int xlb_host_port_format(const struct xlb_host_port *hp, char *buf, size_t len)
{
    char host[INET6_ADDRSTRLEN];
    int family = hp->addr.family;
    if ((family != AF_INET && family != AF_INET6) ||
        inet_ntop(family, hp->addr.bytes, host, sizeof(host)) == NULL)
        return -1;
    int n = snprintf(buf, len, family == AF_INET6 ? "[%s]:%u" : "%s:%u", host, (unsigned)hp->port);
    return n < 0 || (size_t)n >= len ? -1 : n;
}

/* 1 to 5 decimal digits naming a port in 1..65535, no leading zero: the form gRPC writes. */
static int parse_port(const char *text, size_t len, uint16_t *out)
{
    if (len == 0 || len > 5 || text[0] == '0')
        return -EINVAL;
    uint32_t value = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9')
            return -EINVAL;
        value = value * 10 + (uint32_t)(text[i] - '0');
    }
    if (value == 0 || value > 65535)
        return -EINVAL;
    *out = (uint16_t)value;
    return 0;
}

/* inet_pton needs a terminated string: copy the bounded host text first. */
static int parse_host(const char *text, size_t len, int family, struct xlb_addr *out)
{
    char host[INET6_ADDRSTRLEN];
    if (len == 0 || len >= sizeof(host))
        return -EINVAL;
    memcpy(host, text, len);
    host[len] = '\0';
    memset(out, 0, sizeof(*out));
    if (inet_pton(family, host, out->bytes) != 1)
        return -EINVAL;
    out->family = (uint8_t)family;
    return 0;
}

static const char *last_colon(const char *text, size_t len)
{
    for (size_t i = len; i > 0; i--)
        if (text[i - 1] == ':')
            return &text[i - 1];
    return NULL;
}

int xlb_host_port_parse(const char *text, size_t len, struct xlb_host_port *out)
{
    if (text == NULL || len == 0)
        return -EINVAL;
    const char *end = text + len;
    const char *host = text, *host_end, *port;
    int family = AF_INET;

    if (text[0] == '[') {
        /* Brackets are the only way to tell an IPv6 address's colons from the port's. */
        host = text + 1;
        host_end = memchr(host, ']', (size_t)(end - host));
        if (host_end == NULL || end - host_end < 2 || host_end[1] != ':')
            return -EINVAL;
        port = host_end + 2;
        family = AF_INET6;
    } else {
        host_end = last_colon(text, len);
        if (host_end == NULL)
            return -EINVAL;
        port = host_end + 1;
    }
    struct xlb_host_port hp;
    if (parse_host(host, (size_t)(host_end - host), family, &hp.addr) != 0 ||
        parse_port(port, (size_t)(end - port), &hp.port) != 0)
        return -EINVAL;
    *out = hp;
    return 0;
}

int xlb_host_port_list_parse(const char *text, size_t len, struct xlb_host_port *out,
                             uint32_t max_out)
{
    if (text == NULL || len == 0)
        return -EINVAL;
    const char *at = text, *end = text + len;
    uint32_t count = 0;

    for (;;) {
        const char *comma = memchr(at, ',', (size_t)(end - at));
        const char *item_end = comma != NULL ? comma : end;
        if (count == max_out)
            return -E2BIG;
        if (xlb_host_port_parse(at, (size_t)(item_end - at), &out[count]) != 0)
            return -EINVAL;
        count++;
        if (comma == NULL)
            return (int)count;
        at = comma + 1;
    }
}
