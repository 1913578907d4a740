/*
 * `xlbctl tcp` on the control plane's side (control/ops/tcp_listing.c) against fake workers
 * that answer the TCP dump message from the event loop: the reply waits for every worker and
 * joins their connections in worker order, as ss -ti's fields; --limit caps the rows and is
 * checked; a silent worker makes it an error naming it after the timeout, without blocking the
 * loop; its dump, answered late, is reaped and the next listing works.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "listing_bench.h"
#include "tcp_listing.h"
#include "xlb_msg.h"
#include "xlb_tcp_dump.h"

#define WORKERS LISTING_BENCH_WORKERS

static cJSON *handler(const cJSON *request, void *arg)
{
    struct listing_bench *b = arg;
    char error[256] = "";
    cJSON *result =
        xlb_tcp_listing_list(b->listing, b->sock, cJSON_GetObjectItemCaseSensitive(request, "args"),
                             error, sizeof(error));
    if (result == NULL)
        return xlb_reply_error("%s", error);
    return result == XLB_REPLY_LATER ? result : xlb_reply_ok(result);
}

/* A worker answers a dump with one connection of its own. */
static void answer(struct listing_bench *b, unsigned w, const struct xlb_msg *msg)
{
    (void)b;
    assert_int_equal(msg->type, XLB_MSG_TCP_DUMP);
    struct xlb_tcp_dump *d = msg->tcp_dump;
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

static void destroy_listing(void *listing)
{
    xlb_tcp_listing_destroy(listing);
}

static int setup(void **state)
{
    struct listing_bench *b = listing_bench_create("tcp-listing", handler, answer);
    b->listing = xlb_tcp_listing_create(b->shared, b->loop);
    assert_non_null(b->listing);
    b->listing_destroy = destroy_listing;
    *state = b;
    return 0;
}

static int teardown(void **state)
{
    listing_bench_destroy(*state);
    return 0;
}

static void reply_joins_every_worker_in_order(void **state)
{
    struct listing_bench *b = *state;
    cJSON *reply = listing_bench_ask(b, "{\"command\":\"tcp\",\"args\":{}}\n");
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
    reply = listing_bench_ask(b, "{\"command\":\"tcp\",\"args\":{\"limit\":1}}\n");
    result = cJSON_GetObjectItem(reply, "result");
    assert_int_equal(cJSON_GetObjectItem(result, "total")->valueint, WORKERS);
    assert_int_equal(cJSON_GetObjectItem(result, "shown")->valueint, 1);
    c = cJSON_GetArrayItem(cJSON_GetObjectItem(result, "connections"), 0);
    assert_int_equal(cJSON_GetObjectItem(c, "worker")->valueint, 0);
    cJSON_Delete(reply);

    /* A limit out of range is refused before any worker is asked. */
    reply = listing_bench_ask(b, "{\"command\":\"tcp\",\"args\":{\"limit\":0}}\n");
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(reply, "ok")));
    assert_string_equal(cJSON_GetObjectItem(reply, "error")->valuestring,
                        "--limit must be in 1..10000");
    cJSON_Delete(reply);
}

static void silent_worker_makes_an_error_and_is_reaped_later(void **state)
{
    struct listing_bench *b = *state;
    b->silent[1] = true;
    uint64_t start = xlb_now_ms();
    cJSON *reply = listing_bench_ask(b, "{\"command\":\"tcp\",\"args\":{}}\n");
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
    reply = listing_bench_ask(b, "{\"command\":\"tcp\",\"args\":{}}\n");
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
