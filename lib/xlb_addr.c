#include "xlb_addr.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int xlb_addr_parse(const char *text, struct xlb_addr *out)
{
    memset(out, 0, sizeof(*out));
    if (text == NULL)
        return -1;
    if (inet_pton(AF_INET, text, out->bytes) == 1) {
        out->family = AF_INET;
        return 0;
    }
    if (inet_pton(AF_INET6, text, out->bytes) == 1) {
        out->family = AF_INET6;
        return 0;
    }
    memset(out, 0, sizeof(*out));
    return -1;
}

int xlb_prefix_parse(const char *text, struct xlb_prefix *out)
{
    char host[XLB_ADDR_STRLEN];
    const char *slash = text ? strchr(text, '/') : NULL;

    memset(out, 0, sizeof(*out));
    if (slash == NULL || (size_t)(slash - text) >= sizeof(host) || slash[1] == '\0')
        return -1;
    memcpy(host, text, (size_t)(slash - text));
    host[slash - text] = '\0';
    if (xlb_addr_parse(host, &out->addr) != 0)
        return -1;

    char *end;
    long len = strtol(slash + 1, &end, 10);
    long max = out->addr.family == AF_INET ? 32 : 128;
    if (*end != '\0' || len < 0 || len > max)
        return -1;
    out->len = (uint8_t)len;
    return 0;
}

void xlb_addr_from_ipv4(uint32_t be_addr, struct xlb_addr *out)
{
    memset(out, 0, sizeof(*out));
    out->family = AF_INET;
    memcpy(out->bytes, &be_addr, 4);
}

void xlb_addr_from_ipv6(const uint8_t bytes[16], struct xlb_addr *out)
{
    memset(out, 0, sizeof(*out));
    out->family = AF_INET6;
    memcpy(out->bytes, bytes, 16);
}

bool xlb_addr_equal(const struct xlb_addr *a, const struct xlb_addr *b)
{
    return a->family == b->family && memcmp(a->bytes, b->bytes, 16) == 0;
}

bool xlb_prefix_contains(const struct xlb_prefix *prefix, const struct xlb_addr *addr)
{
    if (prefix->addr.family != addr->family)
        return false;
    unsigned full = prefix->len / 8, rest = prefix->len % 8;
    if (memcmp(prefix->addr.bytes, addr->bytes, full) != 0)
        return false;
    if (rest == 0)
        return true;
    uint8_t mask = (uint8_t)(0xff << (8 - rest));
    return (prefix->addr.bytes[full] & mask) == (addr->bytes[full] & mask);
}

const char *xlb_addr_format(const struct xlb_addr *addr, char *buf, size_t len)
{
    if (addr->family != AF_INET && addr->family != AF_INET6) {
        snprintf(buf, len, "-");
        return buf;
    }
    if (inet_ntop(addr->family, addr->bytes, buf, (socklen_t)len) == NULL)
        snprintf(buf, len, "?");
    return buf;
}
