/*
 * `xlbctl tcp` on the control plane's side (control/ops/tcp_listing.c) against fake workers
 * that answer the TCP dump message from the event loop: the reply waits for every worker and
 * joins their connections in worker order, as ss -ti's fields; --limit caps the rows and is
 * checked; a silent worker makes it an error naming it after the timeout, without blocking the
 * loop; its dump, answered late, is reaped and the next listing works.
 */
#include <errno.h>
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

#include "xlb_const.h"
#include <rte_eal.h>

#include "control_socket.h"
#include "event_loop.h"
#include "tcp_listing.h"
#include "xlb_tcp_dump.h"
#include "xlb_msg.h"
#include "xlb_shared.h"

#define WORKERS 2

struct bench {
    struct xlb_shared *shared;
    struct xlb_loop *loop;
    struct xlb_control_socket *sock;
    struct xlb_tcp_listing *listing;
    bool silent[WORKERS]; /* a worker that takes no message */
    char path[108];
    int client;
    char reply[4096];
    size_t reply_len;
    uint64_t ticks; /* loop turns while a reply was awaited */
};

static void eal_init(void)
{
    static bool done;
    if (done)
        return;
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "--file-prefix=xlb-tcp-listing-%d", (int)getpid());
    char *argv[] = {XLB_STR("tcp-listing"),
                    XLB_STR("--no-huge"),
                    XLB_STR("--no-pci"),
                    XLB_STR("--no-shconf"),
                    XLB_STR("-m"),
                    XLB_STR("64"),
                    XLB_STR("-l"),
                    XLB_STR("0"),
                    XLB_STR("--log-level=warning"),
                    XLB_STR("--no-telemetry"),
                    prefix,
                    NULL};
    assert_true(rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) >= 0);
    rmdir(rte_eal_get_runtime_dir());
    done = true;
}

static cJSON *handler(const cJSON *request, void *arg)
{
    struct bench *b = arg;
    char error[256] = "";
    cJSON *result =
        xlb_tcp_listing_list(b->listing, b->sock, cJSON_GetObjectItemCaseSensitive(request, "args"),
                             error, sizeof(error));
    if (result == NULL)
        return xlb_reply_error("%s", error);
    return result == XLB_REPLY_LATER ? result : xlb_reply_ok(result);
}

/* The workers: each answers a dump with one connection of its own, at once. */
static void workers(void *arg)
{
    struct bench *b = arg;
    for (unsigned w = 0; w < WORKERS; w++) {
        struct xlb_msg msg;
        while (!b->silent[w] && xlb_msg_receive(b->shared->to_worker[w], &msg) == 0) {
            assert_int_equal(msg.type, XLB_MSG_TCP_DUMP);
            struct xlb_tcp_dump *d = msg.tcp_dump;
            struct xlb_tcp_conn_record r = {.family = AF_INET,
                                            .worker = (uint8_t)w,
                                            .local_port = 9001,
                                            .remote_port = (uint16_t)(40000 + w),
                                            .local = {198, 18, 0, 100},
                                            .remote = {198, 18, 0, 2},
                                            .state = "ESTABLISHED",
                                            .cwnd = 14480,
                                            .ssthresh = UINT32_MAX,
                                            .srtt_us = 1500,
                                            .rttvar_us = 750,
                                            .rto_ms = 201,
                                            .mss = 1448,
                                            .snd_wnd = 65536,
                                            .rcv_wnd = 262144,
                                            .snd_queue = 10,
                                            .rcv_queue = 20,
                                            .ooo_bytes = 30,
                                            .unacked = 40,
                                            .retransmits = 5,
                                            .memory = 984};
            d->n_conns = 1;
            if (d->capacity > 0)
                d->records[d->n_records++] = r;
            xlb_tcp_dump_finish(d);
        }
    }
}

/* The client: stop the loop once the reply's line is in. */
static void client(void *arg)
{
    struct bench *b = arg;
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

static int setup(void **state)
{
    eal_init();
    struct bench *b = calloc(1, sizeof(*b));
    assert_non_null(b);
    b->shared = xlb_shared_create(WORKERS);
    assert_non_null(b->shared);
    b->loop = xlb_loop_create();
    assert_non_null(b->loop);
    b->listing = xlb_tcp_listing_create(b->shared, b->loop);
    assert_non_null(b->listing);
    snprintf(b->path, sizeof(b->path), "/tmp/xlb-tcp-listing-%d.sock", (int)getpid());
    b->sock = xlb_control_socket_open(b->loop, b->path, handler, b);
    assert_non_null(b->sock);
    assert_int_equal(xlb_loop_add_timer(b->loop, 1, workers, b), 0);
    assert_int_equal(xlb_loop_add_timer(b->loop, 1, client, b), 0);
    *state = b;
    return 0;
}

static int teardown(void **state)
{
    struct bench *b = *state;
    xlb_control_socket_close(b->sock);
    xlb_tcp_listing_destroy(b->listing); /* the "workers" have stopped */
    xlb_loop_destroy(b->loop);
    xlb_shared_destroy(b->shared);
    free(b);
    return 0;
}

/* Send one request on a new connection and run the loop until its reply (or 5 s). */
static cJSON *ask(struct bench *b, const char *request)
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
    cJSON *reply = cJSON_Parse(b->reply);
    assert_non_null(reply);
    return reply;
}

static void reply_joins_every_worker_in_order(void **state)
{
    struct bench *b = *state;
    cJSON *reply = ask(b, "{\"command\":\"tcp\",\"args\":{}}\n");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(reply, "ok")));
    const cJSON *result = cJSON_GetObjectItem(reply, "result");
    assert_int_equal(cJSON_GetObjectItem(result, "total")->valueint, WORKERS);
    assert_int_equal(cJSON_GetObjectItem(result, "shown")->valueint, WORKERS);
    const cJSON *list = cJSON_GetObjectItem(result, "connections");
    assert_int_equal(cJSON_GetArraySize(list), WORKERS);
    const cJSON *c = cJSON_GetArrayItem(list, 1);
    assert_int_equal(cJSON_GetObjectItem(c, "worker")->valueint, 1);
    assert_string_equal(cJSON_GetObjectItem(c, "local")->valuestring, "198.18.0.100:9001");
    assert_string_equal(cJSON_GetObjectItem(c, "remote")->valuestring, "198.18.0.2:40001");
    assert_string_equal(cJSON_GetObjectItem(c, "state")->valuestring, "ESTABLISHED");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(c, "ssthresh"))); /* unlimited */
    static const struct {
        const char *key;
        double value;
    } numbers[] = {{"cwnd", 14480},    {"srtt_ms", 1.5},   {"rttvar_ms", 0.75}, {"rto_ms", 201},
                   {"mss", 1448},      {"snd_wnd", 65536}, {"rcv_wnd", 262144}, {"send_queue", 10},
                   {"recv_queue", 20}, {"ooo_bytes", 30},  {"unacked", 40},     {"retransmits", 5},
                   {"memory", 984}};
    for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++)
        assert_true(cJSON_GetObjectItem(c, numbers[i].key)->valuedouble == numbers[i].value);
    cJSON_Delete(reply);

    /* --limit 1: the first worker's connection is shown, both counted. */
    reply = ask(b, "{\"command\":\"tcp\",\"args\":{\"limit\":1}}\n");
    result = cJSON_GetObjectItem(reply, "result");
    assert_int_equal(cJSON_GetObjectItem(result, "total")->valueint, WORKERS);
    assert_int_equal(cJSON_GetObjectItem(result, "shown")->valueint, 1);
    c = cJSON_GetArrayItem(cJSON_GetObjectItem(result, "connections"), 0);
    assert_int_equal(cJSON_GetObjectItem(c, "worker")->valueint, 0);
    cJSON_Delete(reply);

    /* A limit out of range is refused before any worker is asked. */
    reply = ask(b, "{\"command\":\"tcp\",\"args\":{\"limit\":0}}\n");
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(reply, "ok")));
    assert_string_equal(cJSON_GetObjectItem(reply, "error")->valuestring,
                        "--limit must be in 1..10000");
    cJSON_Delete(reply);
}

static void silent_worker_makes_an_error_and_is_reaped_later(void **state)
{
    struct bench *b = *state;
    b->silent[1] = true;
    uint64_t start = xlb_now_ms();
    cJSON *reply = ask(b, "{\"command\":\"tcp\",\"args\":{}}\n");
    uint64_t took = xlb_now_ms() - start;
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(reply, "ok")));
    char want[64];
    snprintf(want, sizeof(want), "worker 1 did not answer within %u ms",
             (unsigned)XLB_TCP_LISTING_TIMEOUT_MS);
    assert_string_equal(cJSON_GetObjectItem(reply, "error")->valuestring, want);
    assert_true(took >= XLB_TCP_LISTING_TIMEOUT_MS); /* it waited for the silent worker */
    assert_true(b->ticks > 100);                     /* the loop ran on while the reply waited */
    cJSON_Delete(reply);

    /* The worker wakes up, answers the dump given up on (then freed), and the next listing
     * gets both workers. */
    b->silent[1] = false;
    reply = ask(b, "{\"command\":\"tcp\",\"args\":{}}\n");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(reply, "ok")));
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(reply, "result"), "total")->valueint,
                     WORKERS);
    cJSON_Delete(reply);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(reply_joins_every_worker_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(silent_worker_makes_an_error_and_is_reaped_later, setup,
                                        teardown),
    };
    return cmocka_run_group_tests_name("tcp_listing", tests, NULL, NULL);
}
