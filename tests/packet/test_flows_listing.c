/*
 * `xlbctl flows` on the control plane's side (control/flows.c) against fake workers that answer
 * the dump message from the event loop: the reply waits for every worker and joins their
 * records in worker order; a silent worker makes it an error naming it after the timeout,
 * without blocking the loop; its dump, answered late, is reaped and the next listing works.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "flows.h"
#include "listing_bench.h"
#include "xlb_flow_dump.h"
#include "xlb_msg.h"

#define WORKERS LISTING_BENCH_WORKERS

static cJSON *handler(const cJSON *request, void *arg)
{
    struct listing_bench *b = arg;
    char error[256] = "";
    cJSON *result =
        xlb_flows_list(b->listing, b->sock, cJSON_GetObjectItemCaseSensitive(request, "args"),
                       error, sizeof(error));
    if (result == NULL)
        return xlb_reply_error("%s", error);
    return result == XLB_REPLY_LATER ? result : xlb_reply_ok(result);
}

/* A worker answers a dump with one flow of its own. */
static void answer(struct listing_bench *b, unsigned w, const struct xlb_msg *msg)
{
    (void)b;
    assert_int_equal(msg->type, XLB_MSG_FLOWS_DUMP);
    struct xlb_flow_dump *d = msg->dump;
    struct xlb_flow_record r = {.family = AF_INET,
                                .state = XLB_FLOW_ESTABLISHED,
                                .worker = (uint8_t)w,
                                .client_port = (uint16_t)(40000 + w),
                                .vip_port = 9001,
                                .backend_port = 9002,
                                .snat_port = (uint16_t)(1024 + w),
                                .client = {198, 18, 0, 2},
                                .vip = {198, 18, 0, 100},
                                .backend = {198, 18, 0, 21},
                                .snat = {198, 18, 0, 11}};
    d->n_matching = 1;
    if (d->capacity > 0)
        d->records[d->n_records++] = r;
    xlb_flow_dump_finish(d);
}

static void destroy_flows(void *flows)
{
    xlb_flows_destroy(flows);
}

static int setup(void **state)
{
    struct listing_bench *b = listing_bench_create("flows-listing", handler, answer);
    for (unsigned w = 0; w < WORKERS; w++)
        b->shared->has_flows[w] = true;
    b->listing = xlb_flows_create(b->shared, b->loop);
    assert_non_null(b->listing);
    b->listing_destroy = destroy_flows;
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
    cJSON *reply = listing_bench_ask(b, "{\"command\":\"flows\",\"args\":{}}\n");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(reply, "ok")));
    const cJSON *result = cJSON_GetObjectItem(reply, "result");
    assert_int_equal(cJSON_GetObjectItem(result, "matching")->valueint, WORKERS);
    assert_int_equal(cJSON_GetObjectItem(result, "shown")->valueint, WORKERS);
    const cJSON *list = cJSON_GetObjectItem(result, "flows");
    assert_int_equal(cJSON_GetArraySize(list), WORKERS);
    const cJSON *f = cJSON_GetArrayItem(list, 1);
    assert_int_equal(cJSON_GetObjectItem(f, "worker")->valueint, 1);
    assert_string_equal(cJSON_GetObjectItem(f, "client")->valuestring, "198.18.0.2:40001");
    assert_string_equal(cJSON_GetObjectItem(f, "vip")->valuestring, "198.18.0.100:9001");
    assert_string_equal(cJSON_GetObjectItem(f, "snat")->valuestring, "198.18.0.11:1025");
    assert_string_equal(cJSON_GetObjectItem(f, "backend")->valuestring, "198.18.0.21:9002");
    assert_string_equal(cJSON_GetObjectItem(f, "state")->valuestring, "established");
    cJSON_Delete(reply);

    /* --limit 1: the first worker's flow is shown, both counted. */
    reply = listing_bench_ask(b, "{\"command\":\"flows\",\"args\":{\"limit\":1}}\n");
    result = cJSON_GetObjectItem(reply, "result");
    assert_int_equal(cJSON_GetObjectItem(result, "matching")->valueint, WORKERS);
    assert_int_equal(cJSON_GetObjectItem(result, "shown")->valueint, 1);
    f = cJSON_GetArrayItem(cJSON_GetObjectItem(result, "flows"), 0);
    assert_int_equal(cJSON_GetObjectItem(f, "worker")->valueint, 0);
    cJSON_Delete(reply);
}

static void silent_worker_makes_an_error_and_is_reaped_later(void **state)
{
    struct listing_bench *b = *state;
    b->silent[1] = true;
    uint64_t start = xlb_now_ms();
    cJSON *reply = listing_bench_ask(b, "{\"command\":\"flows\",\"args\":{}}\n");
    uint64_t took = xlb_now_ms() - start;
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(reply, "ok")));
    char want[64];
    snprintf(want, sizeof(want), "worker 1 did not answer within %u ms",
             (unsigned)XLB_FLOWS_TIMEOUT_MS);
    assert_string_equal(cJSON_GetObjectItem(reply, "error")->valuestring, want);
    assert_true(took >= XLB_FLOWS_TIMEOUT_MS); /* it waited for the silent worker */
    assert_true(b->ticks > 100);               /* the loop ran on while the reply waited */
    cJSON_Delete(reply);

    /* The worker wakes up, answers the dump given up on (then freed), and the next listing
     * gets both workers. */
    b->silent[1] = false;
    reply = listing_bench_ask(b, "{\"command\":\"flows\",\"args\":{}}\n");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(reply, "ok")));
    assert_int_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(reply, "result"), "matching")->valueint, WORKERS);
    cJSON_Delete(reply);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(reply_joins_every_worker_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(silent_worker_makes_an_error_and_is_reaped_later, setup,
                                        teardown),
    };
    return cmocka_run_group_tests_name("flows_listing", tests, NULL, NULL);
}
