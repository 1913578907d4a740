#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc_channel.h"

static int parse_port(const char *text, uint16_t *port)
{
    char *end;
    long value = strtol(text, &end, 10);
    if (text[0] == '\0' || *end != '\0' || value < 1 || value > 65535)
        return -1;
    *port = (uint16_t)value;
    return 0;
}

int xlb_grpc_target_parse(const char *uri, struct xlb_grpc_target *out, char *error,
                          size_t error_len)
{
    memset(out, 0, sizeof(*out));
    const char *rest = strncmp(uri, "dns:///", 7) == 0 ? uri + 7 : uri;
    const char *host = rest, *colon;
    size_t host_len;
    if (rest[0] == '[') {
        const char *close = strchr(rest, ']');
        if (close == NULL || close[1] != ':') {
            snprintf(error, error_len, "\"%s\": expected [IPv6]:PORT", uri);
            return -1;
        }
        host = rest + 1;
        host_len = (size_t)(close - host);
        colon = close + 1;
        char literal[64];
        if (host_len >= sizeof(literal)) {
            snprintf(error, error_len, "\"%s\": not an IPv6 address", uri);
            return -1;
        }
        memcpy(literal, host, host_len);
        literal[host_len] = '\0';
        struct in6_addr a6;
        if (inet_pton(AF_INET6, literal, &a6) != 1) {
            snprintf(error, error_len, "\"%s\": not an IPv6 address", uri);
            return -1;
        }
    } else {
        colon = strrchr(rest, ':');
        if (colon == NULL || memchr(rest, ':', (size_t)(colon - rest)) != NULL) {
            snprintf(error, error_len, "\"%s\": expected HOST:PORT or [IPv6]:PORT", uri);
            return -1;
        }
        host_len = (size_t)(colon - rest);
    }
    if (host_len == 0 || host_len > XLB_GRPC_HOST_MAX) {
        snprintf(error, error_len, "\"%s\": missing or overlong host", uri);
        return -1;
    }
    memcpy(out->host, host, host_len);
    out->host[host_len] = '\0';
    if (parse_port(colon + 1, &out->port) != 0) {
        snprintf(error, error_len, "\"%s\": port must be 1..65535", uri);
        return -1;
    }
    return 0;
}
