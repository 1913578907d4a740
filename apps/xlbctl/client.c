#include "client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define XLBCTL_REPLY_MAX (16u * 1024 * 1024 + 2)

static int connect_socket(const char *path, char *error, size_t error_len)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(addr.sun_path)) {
        snprintf(error, error_len, "socket path too long: %s", path);
        return -1;
    }
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct timeval timeout = {.tv_sec = XLBCTL_TIMEOUT_S};
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout)) != 0 ||
        connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
        snprintf(error, error_len, "cannot connect to %s: %s (is xlbd running?)", path,
                 strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

static int send_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Read up to the first newline; returns a malloc'd NUL-terminated line or NULL. */
static char *read_line(int fd)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        if (len + 1 == cap) {
            char *grown = cap < XLBCTL_REPLY_MAX ? realloc(buf, cap * 2) : NULL;
            if (grown == NULL)
                break;
            buf = grown;
            cap *= 2;
        }
        ssize_t n = recv(fd, buf + len, cap - len - 1, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        char *newline = memchr(buf + len, '\n', (size_t)n);
        len += (size_t)n;
        if (newline != NULL) {
            *newline = '\0';
            return buf;
        }
    }
    free(buf);
    return NULL;
}

int xlbctl_request(const char *socket_path, const cJSON *request, cJSON **reply, char *error,
                   size_t error_len)
{
    int fd = connect_socket(socket_path, error, error_len);
    if (fd < 0)
        return -1;
    char *text = cJSON_PrintUnformatted(request);
    int rc = -1;
    if (text == NULL || send_all(fd, text, strlen(text)) != 0 || send_all(fd, "\n", 1) != 0) {
        snprintf(error, error_len, "cannot send the request: %s", strerror(errno));
    } else {
        char *line = read_line(fd);
        *reply = line ? cJSON_Parse(line) : NULL;
        if (*reply == NULL)
            snprintf(error, error_len, "no valid reply from xlbd (timed out or closed)");
        else
            rc = 0;
        free(line);
    }
    free(text);
    close(fd);
    return rc;
}
