/*
 * The ADS client's streams on a virtual clock: nonces per stream (a new stream starts without
 * any, versions are kept), A71 fallback (only on a connection failure or a stream that ended
 * before any response, and then at once), gRPC's backoff and its reset after a response, and
 * A57's does-not-exist timers (started once a request went out on a connected stream; on a
 * new stream only for resources not cached; cancelled when the stream fails).
 */
#include <stdlib.h>
#include <string.h>

#include "ads_test.h"

static void expect_request(const DiscoveryRequest *req, const char *type_url, const char *version,
                           const char *nonce)
{
    assert_string_equal(req->type_url, type_url);
    assert_string_equal(req->version_info, version);
    assert_string_equal(req->response_nonce, nonce);
}

static void respond_one(struct xlb_grpc_stream *s, const char *type_url, const char *json,
                        const char *version, const char *nonce)
{
    Google__Protobuf__Any *r[] = {ads_any(type_url, json)};
    ads_respond(s, type_url, version, nonce, r, 1);
}

/* The client's next connection attempt after ch fails now: the delay it waited. */
static uint64_t retry_delay_after_failure(struct xlb_grpc_channel *ch)
{
    size_t before = fake_n_channels();
    uint64_t failed_at = fake_now();
    fake_fail(ch, "connection refused");
    for (unsigned ms = 0; fake_n_channels() == before && ms < 200000; ms++)
        fake_advance(1);
    assert_int_equal(fake_n_channels(), before + 1);
    return fake_last_channel()->created_ms - failed_at;
}

static void expect_between(uint64_t value, uint64_t low, uint64_t high)
{
    if (value < low || value > high)
        fail_msg("%llu is not in %llu..%llu", (unsigned long long)value, (unsigned long long)low,
                 (unsigned long long)high);
}

/* ---- nonces ---- */

static void first_request_of_a_new_stream_has_no_nonce(void **state)
{
    struct ads_fixture *f = ads_fixture_new();
    ads_watch(f, XLB_XDS_CDS, "c1");
    ads_start(f, 1);
    fake_ready(fake_channel(0));
    const DiscoveryRequest *first = fake_request(ads_stream(), 0);
    expect_request(first, CDS_URL, "", "");
    assert_non_null(first->node);
    assert_int_equal(first->n_resource_names, 1);
    assert_string_equal(first->resource_names[0], "c1");

    respond_one(ads_stream(), CDS_URL, CLUSTER("c1"), "1", "A");
    expect_request(fake_last_request(ads_stream()), CDS_URL, "1", "A");

    /* The server ends the stream after a response: a new one, whose requests know the version
     * but not the old stream's nonce. */
    fake_end_stream(ads_stream(), 0, "");
    fake_advance(0);
    assert_int_equal(fake_n_channels(), 2);
    fake_ready(fake_channel(1));
    const DiscoveryRequest *again = fake_request(ads_stream(), 0);
    expect_request(again, CDS_URL, "1", "");
    assert_non_null(again->node);

    cJSON *status = xlb_ads_client_status(f->client);
    const cJSON *cds = cJSON_GetObjectItem(cJSON_GetObjectItem(status, "types"), "cluster");
    assert_string_equal(cJSON_GetObjectItem(cds, "nonce")->valuestring, "");
    assert_string_equal(cJSON_GetObjectItem(cds, "version")->valuestring, "1");
    cJSON_Delete(status);
    ads_fixture_free(f);
}

static void nonces_stay_with_their_stream_across_fallback_and_back(void **state)
{
    struct ads_fixture *f = ads_fixture_new();
    ads_watch(f, XLB_XDS_EDS, "e1");
    ads_start(f, 2);
    fake_fail(fake_channel(0), "connection refused");
    fake_advance(0);
    struct xlb_grpc_channel *fallback = fake_channel(1);
    assert_string_equal(fallback->host, "fallback");
    fake_ready(fallback);
    respond_one(fallback->stream, EDS_URL, CLA("e1"), "1", "F1");
    expect_request(fake_last_request(fallback->stream), EDS_URL, "1", "F1");

    /* The primary is tried again after the first backoff delay; its stream starts afresh. */
    fake_advance(1000);
    assert_int_equal(fake_n_channels(), 3);
    struct xlb_grpc_channel *probe = fake_channel(2);
    assert_string_equal(probe->host, "primary");
    fake_ready(probe);
    expect_request(fake_request(probe->stream, 0), EDS_URL, "1", "");

    /* It answers: it becomes current and the fallback stream ends. */
    respond_one(probe->stream, EDS_URL, CLA("e1"), "2", "P1");
    expect_request(fake_last_request(probe->stream), EDS_URL, "2", "P1");
    assert_true(fallback->stream->cancelled);
    ads_fixture_free(f);
}

/* ---- fallback (A71) and reconnection ---- */

static void stream_ended_after_a_response_reconnects_at_once(void **state)
{
    struct ads_fixture *f = ads_fixture_new();
    ads_watch(f, XLB_XDS_EDS, "e1");
    ads_watch(f, XLB_XDS_EDS, "e2"); /* never answered: not cached */
    ads_start(f, 2);
    fake_ready(fake_channel(0));
    respond_one(ads_stream(), EDS_URL, CLA("e1"), "1", "A");
    fake_advance(500);
    uint64_t ended_at = fake_now();
    /* Not a failure (A57): the same server again, without waiting, and no fallback. */
    fake_end_stream(ads_stream(), XLB_GRPC_UNAVAILABLE, "max connection age");
    fake_advance(0);
    assert_int_equal(fake_n_channels(), 2);
    assert_string_equal(fake_channel(1)->host, "primary");
    assert_int_equal(fake_channel(1)->created_ms, ended_at);
    ads_fixture_free(f);
}

static void connection_failure_falls_back_at_once(void **state)
{
    struct ads_fixture *f = ads_fixture_new();
    ads_watch(f, XLB_XDS_EDS, "e1");
    ads_start(f, 2);
    fake_advance(300);
    fake_fail(fake_channel(0), "connection refused");
    fake_advance(0);
    assert_int_equal(fake_n_channels(), 2);
    assert_string_equal(fake_channel(1)->host, "fallback");
    assert_int_equal(fake_channel(1)->created_ms, 1300);
    ads_fixture_free(f);
}

static void stream_ended_before_a_response_falls_back_at_once(void **state)
{
    struct ads_fixture *f = ads_fixture_new();
    ads_watch(f, XLB_XDS_EDS, "e1");
    ads_start(f, 2);
    fake_ready(fake_channel(0));
    fake_end_stream(ads_stream(), XLB_GRPC_UNAVAILABLE, "no healthy upstream");
    fake_advance(0);
    assert_int_equal(fake_n_channels(), 2);
    assert_string_equal(fake_channel(1)->host, "fallback");
    assert_int_equal(fake_channel(1)->created_ms, 1000);
    ads_fixture_free(f);
}

static void no_fallback_while_everything_is_cached(void **state)
{
    struct ads_fixture *f = ads_fixture_new();
    ads_watch(f, XLB_XDS_EDS, "e1");
    ads_start(f, 2);
    fake_ready(fake_channel(0));
    respond_one(ads_stream(), EDS_URL, CLA("e1"), "1", "A");
    fake_end_stream(ads_stream(), 0, "");
    fake_advance(0);
    /* That attempt fails before any response: everything is cached, so the primary again,
     * after the first backoff delay (1 s +-20 %). */
    uint64_t delay = retry_delay_after_failure(fake_channel(1));
    assert_string_equal(fake_last_channel()->host, "primary");
    expect_between(delay, 800, 1200);
    ads_fixture_free(f);
}

static void backoff_grows_then_resets_after_a_response(void **state)
{
    struct ads_fixture *f = ads_fixture_new();
    ads_watch(f, XLB_XDS_EDS, "e1");
    ads_start(f, 1);
    expect_between(retry_delay_after_failure(fake_channel(0)), 800, 1200);
    expect_between(retry_delay_after_failure(fake_channel(1)), 1280, 1920);
    expect_between(retry_delay_after_failure(fake_channel(2)), 2048, 3072);
    fake_ready(fake_channel(3));
    respond_one(ads_stream(), EDS_URL, CLA("e1"), "1", "A");
    fake_end_stream(ads_stream(), 0, "");
    fake_advance(0);
    assert_int_equal(fake_n_channels(), 5);
    expect_between(retry_delay_after_failure(fake_channel(4)), 800, 1200);
    ads_fixture_free(f);
}

/* ---- does-not-exist timers (A57) ---- */

static void timer_waits_for_a_connected_stream(void **state)
{
    struct ads_fixture *f = ads_fixture_new();
    ads_watch(f, XLB_XDS_EDS, "e1");
    ads_start(f, 1);
    fake_advance(30000); /* still connecting: no timer */
    assert_int_equal(ads_resource(f, XLB_XDS_EDS, "e1")->state, XLB_RES_REQUESTED);
    fake_ready(fake_channel(0));
    fake_advance(14999);
    assert_int_equal(ads_resource(f, XLB_XDS_EDS, "e1")->state, XLB_RES_REQUESTED);
    unsigned changes = f->changes;
    fake_advance(1);
    assert_int_equal(ads_resource(f, XLB_XDS_EDS, "e1")->state, XLB_RES_DOES_NOT_EXIST);
    assert_int_equal(f->changes, changes + 1);
    ads_fixture_free(f);
}

static void timers_cancelled_when_the_stream_fails(void **state)
{
    struct ads_fixture *f = ads_fixture_new();
    ads_watch(f, XLB_XDS_EDS, "e1");
    ads_start(f, 1);
    fake_ready(fake_channel(0));
    fake_advance(10000);
    fake_fail(fake_channel(0), "connection reset");
    assert_int_equal(fake_timers_due_at(1000 + 15000), 0);
    fake_advance(20000); /* the next attempt never connects */
    assert_int_equal(ads_resource(f, XLB_XDS_EDS, "e1")->state, XLB_RES_REQUESTED);
    ads_fixture_free(f);
}

static void new_stream_times_only_resources_not_cached(void **state)
{
    struct ads_fixture *f = ads_fixture_new();
    ads_watch(f, XLB_XDS_EDS, "e1");
    ads_watch(f, XLB_XDS_EDS, "e2");
    ads_start(f, 1);
    fake_ready(fake_channel(0));
    assert_int_equal(fake_timers_due_at(16000), 2);
    fake_advance(1000);
    respond_one(ads_stream(), EDS_URL, CLA("e1"), "1", "A");
    assert_int_equal(fake_timers_due_at(16000), 1);
    fake_advance(3000);
    fake_end_stream(ads_stream(), 0, "");
    fake_advance(0);
    assert_int_equal(fake_timers_due_at(16000), 0);
    fake_ready(fake_channel(1));
    assert_int_equal(fake_timers_due_at(5000 + 15000), 1); /* e2's alone */
    fake_advance(15000);
    assert_int_equal(ads_resource(f, XLB_XDS_EDS, "e2")->state, XLB_RES_DOES_NOT_EXIST);
    assert_int_equal(ads_resource(f, XLB_XDS_EDS, "e1")->state, XLB_RES_ACKED);
    ads_fixture_free(f);
}

static void newly_watched_resource_timed_from_its_request(void **state)
{
    struct ads_fixture *f = ads_fixture_new();
    ads_watch(f, XLB_XDS_EDS, "e1");
    ads_start(f, 1);
    fake_ready(fake_channel(0));
    fake_advance(2000);
    ads_watch(f, XLB_XDS_EDS, "e2");
    const DiscoveryRequest *req = fake_last_request(ads_stream());
    assert_int_equal(req->n_resource_names, 2);
    assert_int_equal(fake_timers_due_at(16000), 1);
    assert_int_equal(fake_timers_due_at(18000), 1);
    ads_fixture_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(first_request_of_a_new_stream_has_no_nonce),
        cmocka_unit_test(nonces_stay_with_their_stream_across_fallback_and_back),
        cmocka_unit_test(stream_ended_after_a_response_reconnects_at_once),
        cmocka_unit_test(connection_failure_falls_back_at_once),
        cmocka_unit_test(stream_ended_before_a_response_falls_back_at_once),
        cmocka_unit_test(no_fallback_while_everything_is_cached),
        cmocka_unit_test(backoff_grows_then_resets_after_a_response),
        cmocka_unit_test(timer_waits_for_a_connected_stream),
        cmocka_unit_test(timers_cancelled_when_the_stream_fails),
        cmocka_unit_test(new_stream_times_only_resources_not_cached),
        cmocka_unit_test(newly_watched_resource_timed_from_its_request),
    };
    return cmocka_run_group_tests_name("ads_streams", tests, NULL, NULL);
}
