#include "listing_bench.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "../test_eal.h"

static void eal_init(const char *name)
{
    static bool done;
    if (!done)
        assert_int_equal(test_eal_init(name, 64), 0);
    done = true;
}

/* The workers: each answers what its ring holds, unless silent. */
static void workers(void *arg)
{
    struct listing_bench *b = arg;
    for (unsigned w = 0; w < LISTING_BENCH_WORKERS; w++) {
        struct xlb_msg msg;
        while (!b->silent[w] && xlb_msg_receive(b->shared->to_worker[w], &msg) == 0)
            b->answer(b, w, &msg);
    }
}

/* The client: stop the loop once the reply's line is in. */
static void client(void *arg)
{
    struct listing_bench *b = arg;
    b->ticks++;
    ssize_t n =
        recv(b->client, b->reply + b->reply_len, sizeof(b->reply) - 1 - b->reply_len, MSG_DONTWAIT);
    if (n > 0) {
        b->reply_len += (size_t)n;
        b->reply[b->reply_len] = '\0';
    }
    if (memchr(b->reply, '\n', b->reply_len) != NULL)
        xlb_loop_stop(b->loop);
}

static void give_up(void *arg)
{
    xlb_loop_stop(arg);
}

struct listing_bench *listing_bench_create(const char *name, xlb_request_handler handler,
                                           listing_bench_answer answer)
{
    eal_init(name);
    struct listing_bench *b = calloc(1, sizeof(*b));
    assert_non_null(b);
    b->answer = answer;
    b->client = -1;
    b->shared = xlb_shared_create(LISTING_BENCH_WORKERS);
    assert_non_null(b->shared);
    b->loop = xlb_loop_create();
    assert_non_null(b->loop);
    snprintf(b->path, sizeof(b->path), "/tmp/xlb-%s-%d.sock", name, (int)getpid());
    b->sock = xlb_control_socket_open(b->loop, b->path, handler, b);
    assert_non_null(b->sock);
    assert_int_equal(xlb_loop_add_timer(b->loop, 1, workers, b), 0);
    assert_int_equal(xlb_loop_add_timer(b->loop, 1, client, b), 0);
    return b;
}

void listing_bench_destroy(struct listing_bench *b)
{
    xlb_control_socket_close(b->sock);
    b->listing_destroy(b->listing); /* the "workers" have stopped */
    xlb_loop_destroy(b->loop);
    xlb_shared_destroy(b->shared);
    free(b);
}

cJSON *listing_bench_ask(struct listing_bench *b, const char *request)
{
    b->client = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(b->client >= 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", b->path);
    assert_int_equal(connect(b->client, (const struct sockaddr *)&addr, sizeof(addr)), 0);
    assert_int_equal(send(b->client, request, strlen(request), 0), (ssize_t)strlen(request));
    b->reply_len = 0;
    b->reply[0] = '\0';
    b->ticks = 0;
    uint64_t guard = xlb_loop_add_timeout(b->loop, 5000, give_up, b->loop);
    assert_int_equal(xlb_loop_run(b->loop), 0);
    xlb_loop_cancel(b->loop, guard);
    close(b->client);
    b->client = -1;
    cJSON *reply = cJSON_Parse(b->reply);
    assert_non_null(reply);
    return reply;
}
