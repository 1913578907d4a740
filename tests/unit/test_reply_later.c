/*
 * The control socket's replies that come later (control_socket.h): a deferred request is
 * answered from a timer, the client's next request waits for it and is answered after it, in
 * order; a half-close waits for the reply; a client gone before its reply costs nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "control_socket.h"
#include "event_loop.h"

struct server {
    struct xlb_loop *loop;
    struct xlb_control_socket *sock;
    struct xlb_reply_later *later;
    unsigned answered; /* immediate replies */
    char path[108];
};

/* "wait" is answered later, anything else at once with its command's name. */
static cJSON *handler(const cJSON *request, void *arg)
{
    struct server *s = arg;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(request, "command");
    if (cJSON_IsString(name) && strcmp(name->valuestring, "wait") == 0) {
        s->later = xlb_reply_later(s->sock);
        assert_non_null(s->later);
        return XLB_REPLY_LATER;
    }
    s->answered++;
    return xlb_reply_ok(cJSON_CreateString(cJSON_IsString(name) ? name->valuestring : "?"));
}

static void answer_later(void *arg)
{
    struct server *s = arg;
    assert_non_null(s->later);
    xlb_reply_later_send(s->later, xlb_reply_ok(cJSON_CreateString("waited")));
    s->later = NULL;
}

static void stop(void *arg)
{
    xlb_loop_stop(arg);
}

static int setup(void **state)
{
    struct server *s = calloc(1, sizeof(*s));
    assert_non_null(s);
    snprintf(s->path, sizeof(s->path), "/tmp/xlb-reply-later-%d.sock", (int)getpid());
    s->loop = xlb_loop_create();
    assert_non_null(s->loop);
    s->sock = xlb_control_socket_open(s->loop, s->path, handler, s);
    assert_non_null(s->sock);
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    struct server *s = *state;
    xlb_control_socket_close(s->sock);
    xlb_loop_destroy(s->loop);
    free(s);
    return 0;
}

static int connect_to(const struct server *s)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", s->path);
    assert_int_equal(connect(fd, (const struct sockaddr *)&addr, sizeof(addr)), 0);
    return fd;
}

/* Run the loop: the later reply at 30 ms, the end at 150 ms. */
static void run(struct server *s)
{
    assert_true(xlb_loop_add_timeout(s->loop, 30, answer_later, s) > 0);
    assert_true(xlb_loop_add_timeout(s->loop, 150, stop, s->loop) > 0);
    assert_int_equal(xlb_loop_run(s->loop), 0);
}

/* Everything the server wrote until it closed (or until nothing more comes). */
static size_t read_all(int fd, char *buf, size_t size)
{
    struct timeval tv = {.tv_usec = 200000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    size_t len = 0;
    ssize_t n;
    while (len < size - 1 && (n = recv(fd, buf + len, size - 1 - len, 0)) > 0)
        len += (size_t)n;
    buf[len] = '\0';
    return len;
}

static void later_reply_comes_first_and_the_half_close_waits_for_it(void **state)
{
    struct server *s = *state;
    int fd = connect_to(s);
    const char *requests = "{\"command\":\"wait\"}\n{\"command\":\"ping\"}\n";
    assert_int_equal(send(fd, requests, strlen(requests), 0), (ssize_t)strlen(requests));
    assert_int_equal(shutdown(fd, SHUT_WR), 0);
    run(s);
    char buf[512];
    read_all(fd, buf, sizeof(buf));
    assert_string_equal(buf, "{\"ok\":true,\"result\":\"waited\"}\n"
                             "{\"ok\":true,\"result\":\"ping\"}\n");
    assert_int_equal(s->answered, 1);
    close(fd);
}

static void client_gone_before_its_reply_is_forgotten(void **state)
{
    struct server *s = *state;
    int fd = connect_to(s);
    const char *request = "{\"command\":\"wait\"}\n";
    assert_int_equal(send(fd, request, strlen(request), 0), (ssize_t)strlen(request));
    /* Let the loop take the request, then go away before the reply. */
    assert_true(xlb_loop_add_timeout(s->loop, 10, stop, s->loop) > 0);
    assert_int_equal(xlb_loop_run(s->loop), 0);
    assert_non_null(s->later);
    close(fd);
    run(s); /* the reply is dropped: nothing to write to, nothing leaked */
    assert_null(s->later);

    /* The socket serves the next client as before. */
    fd = connect_to(s);
    request = "{\"command\":\"ping\"}\n";
    assert_int_equal(send(fd, request, strlen(request), 0), (ssize_t)strlen(request));
    assert_true(xlb_loop_add_timeout(s->loop, 30, stop, s->loop) > 0);
    assert_int_equal(xlb_loop_run(s->loop), 0);
    char buf[256];
    struct timeval tv = {.tv_usec = 200000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
    assert_true(n > 0);
    buf[n] = '\0';
    assert_string_equal(buf, "{\"ok\":true,\"result\":\"ping\"}\n");
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(later_reply_comes_first_and_the_half_close_waits_for_it,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(client_gone_before_its_reply_is_forgotten, setup, teardown),
    };
    return cmocka_run_group_tests_name("reply_later", tests, NULL, NULL);
}
