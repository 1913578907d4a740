/*
 * A61/A62 in the L7 stream mode: an endpoint with several addresses is connected to with happy
 * eyeballs (dataplane/stream/stream_eyeballs.c). Its first address refused (RST): the next is
 * tried at once and serves the endpoint's RPCs. Its first address silent (SYNs dropped): the
 * next is tried after the Connection Attempt Delay, wins, and the silent attempt is reset. An
 * address xlb cannot reach (no resolved next hop) is never tried. The endpoint fails only when
 * every address did, and then backs off as a whole. The peers are stream_peers.c's real
 * nghttp2 sessions; backend A listens on 198.18.0.21, 198.18.0.31 is dead.
 */
#include "stream_peers.h"

#define SLOT_A 7 /* endpoint 0's slot (stream_peers.c) */
/* Subchannels of the worker: a failed attempt's stays until its flow's closed timeout. */
#define SUBS 16

static void wait_settings(struct stream_test *t)
{
    for (uint32_t ms = 0; ms < MAX_STEPS && !t->settings_acked; ms++)
        step(t);
    assert_true(t->settings_acked);
}

/* n RPCs one after the other, each succeeding; how many backend A answered. */
static unsigned run_ok(struct stream_test *t, unsigned n)
{
    unsigned from_a = 0;
    for (unsigned i = 0; i < n; i++) {
        submit_rpc(t);
        struct rpc *r = &t->rpcs[t->n_rpcs - 1];
        for (uint32_t ms = 0; ms < MAX_STEPS && !r->closed; ms++)
            step(t);
        assert_true(r->closed);
        assert_string_equal(r->grpc_status, "0");
        from_a += strcmp(r->body + 5, "A") == 0;
    }
    return from_a;
}

/* Simulated time until the endpoint slot is READY. */
static void wait_ready(struct stream_test *t, uint32_t slot)
{
    for (uint32_t ms = 0;
         ms < MAX_STEPS && xlb_lb_connectivity_get(&t->n->lb, slot) != XLB_CONN_READY; ms++)
        step(t);
    assert_int_equal(xlb_lb_connectivity_get(&t->n->lb, slot), XLB_CONN_READY);
}

static uint64_t event(const struct stream_test *t, enum xlb_event_counter e)
{
    return t->n->f->stats.events[e];
}

/* Every connection the backends took came to a live address. */
static void assert_backends_live(const struct stream_test *t)
{
    for (unsigned i = 0; i < t->n_backends; i++) {
        char text[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, t->backends[i].addr, text, sizeof(text));
        assert_string_not_equal(text, BACKEND_DEAD);
    }
}

static void refused_first_address_next_serves(void **state)
{
    (void)state;
    struct stream_test *t = stream_test_create_at(BACKEND_DEAD ":50051," BACKEND_A ":50051", SUBS);
    t->refuse_at = BACKEND_DEAD;
    wait_settings(t);
    /* Round robin alternates over both endpoints: endpoint 0 serves through its second
     * address, its first failure was no failure of the endpoint. */
    assert_int_equal(run_ok(t, 4), 2);
    assert_int_equal(xlb_lb_connectivity_get(&t->n->lb, SLOT_A), XLB_CONN_READY);
    assert_int_equal(event(t, XLB_EVENT_STREAM_ADDRESS_ATTEMPTS), 1);
    assert_int_equal(event(t, XLB_EVENT_STREAM_ATTEMPTS_ABANDONED), 0);
    /* The refused attempt, the one to A, the one to B: all subchannels the endpoints have. */
    assert_int_equal(event(t, XLB_EVENT_STREAM_SUBCHANNELS), 3);
    assert_int_equal(t->n_backends, 2);
    assert_backends_live(t);
    stream_test_destroy(t);
}

static void silent_first_address_loses_the_race(void **state)
{
    (void)state;
    struct stream_test *t = stream_test_create_at(BACKEND_DEAD ":50051," BACKEND_A ":50051", SUBS);
    t->silent_at = BACKEND_DEAD;
    wait_settings(t);
    /* B is READY first and takes the first RPC; A once its second address won. */
    run_ok(t, 1);
    wait_ready(t, SLOT_A);
    assert_int_equal(run_ok(t, 4), 2);
    assert_int_equal(xlb_lb_connectivity_get(&t->n->lb, SLOT_A), XLB_CONN_READY);
    /* The second address started on the timer, connected, and the silent attempt was reset
     * rather than left to its SYN retries. */
    assert_int_equal(event(t, XLB_EVENT_STREAM_ADDRESS_ATTEMPTS), 1);
    assert_int_equal(event(t, XLB_EVENT_STREAM_ATTEMPTS_ABANDONED), 1);
    assert_int_equal(t->n_backends, 2);
    assert_backends_live(t);
    stream_test_destroy(t);
}

/* 198.18.0.99 has no resolved neighbour: xlb has no way to it, and does not try it. */
static void unreachable_address_is_skipped(void **state)
{
    (void)state;
    struct stream_test *t = stream_test_create_at("198.18.0.99:50051," BACKEND_A ":50051", SUBS);
    wait_settings(t);
    assert_int_equal(run_ok(t, 2), 1);
    assert_int_equal(event(t, XLB_EVENT_STREAM_ADDRESS_ATTEMPTS), 0);
    assert_int_equal(event(t, XLB_EVENT_STREAM_SUBCHANNELS), 2);
    stream_test_destroy(t);
}

/* Both addresses refused: one failure of the endpoint (TRANSIENT_FAILURE after both, one
 * backoff), and once its backend is back the retry goes through both addresses again. */
static void every_address_refused_fails_the_endpoint(void **state)
{
    (void)state;
    struct stream_test *t = stream_test_create_at(BACKEND_DEAD ":50051," BACKEND_A ":50051", SUBS);
    t->refuse = true;
    wait_settings(t);
    submit_rpc(t);
    for (uint32_t ms = 0; ms < MAX_STEPS && !t->rpcs[0].closed; ms++)
        step(t);
    assert_string_equal(t->rpcs[0].grpc_status, "14");
    assert_int_equal(xlb_lb_connectivity_get(&t->n->lb, SLOT_A), XLB_CONN_TRANSIENT_FAILURE);
    assert_int_equal(event(t, XLB_EVENT_STREAM_ADDRESS_ATTEMPTS), 1);
    t->refuse = false;
    t->refuse_at = BACKEND_DEAD;
    wait_ready(t, SLOT_A);
    assert_int_equal(event(t, XLB_EVENT_STREAM_ADDRESS_ATTEMPTS), 2);
    assert_backends_live(t);
    stream_test_destroy(t);
}

/* The same with room for 4 subchannels: the failed attempts hold theirs until their flows'
 * closed timeout, so the first retry finds none free; the endpoint is retried after its next
 * backoff rather than left in TRANSIENT_FAILURE. */
static void retry_without_room_backs_off_again(void **state)
{
    (void)state;
    struct stream_test *t = stream_test_create_at(BACKEND_DEAD ":50051," BACKEND_A ":50051", 4);
    t->refuse = true;
    wait_settings(t);
    submit_rpc(t);
    for (uint32_t ms = 0; ms < MAX_STEPS && !t->rpcs[0].closed; ms++)
        step(t);
    assert_string_equal(t->rpcs[0].grpc_status, "14");
    t->refuse = false;
    t->refuse_at = BACKEND_DEAD;
    wait_ready(t, SLOT_A);
    assert_int_equal(run_ok(t, 2), 1);
    stream_test_destroy(t);
}

int main(void)
{
    fixture_eal_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(refused_first_address_next_serves),
        cmocka_unit_test(silent_first_address_loses_the_race),
        cmocka_unit_test(unreachable_address_is_skipped),
        cmocka_unit_test(every_address_refused_fails_the_endpoint),
        cmocka_unit_test(retry_without_room_backs_off_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
