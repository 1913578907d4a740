/* One request to xlbd's control socket and its reply. */
#ifndef XLBCTL_CLIENT_H
#define XLBCTL_CLIENT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#define XLBCTL_TIMEOUT_S 10

/* 0 with *reply set, or -1 with a message in error. */
int xlbctl_request(const char *socket_path, const cJSON *request, cJSON **reply, char *error,
                   size_t error_len);

#endif
