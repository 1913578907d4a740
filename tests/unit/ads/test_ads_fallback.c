/*
 * A71's fallback with three servers on a virtual clock: while on a fallback, every
 * higher-priority server is retried, each on its own backoff, and the first of them to answer
 * becomes current (so #3 -> #2 -> #1 as they come back); a failed retry of the primary waits
 * longer each time; a fallback that fails while everything is cached is retried itself, with
 * backoff, never replaced by a lower-priority server.
 */
#include <stdlib.h>
#include <string.h>

#include "ads_test.h"

static void respond_e1(struct xlb_grpc_stream *s, const char *version, const char *nonce)
{
    Google__Protobuf__Any *r[] = {ads_any(EDS_URL, CLA("e1"))};
    ads_respond(s, EDS_URL, version, nonce, r, 1);
}

/* The last channel the client opened to host, or NULL. */
static struct xlb_grpc_channel *last_to(const char *host)
{
    for (size_t i = fake_n_channels(); i-- > 0;)
        if (strcmp(fake_channel(i)->host, host) == 0)
            return fake_channel(i);
    return NULL;
}

static size_t channels_to(const char *host)
{
    size_t n = 0;
    for (size_t i = 0; i < fake_n_channels(); i++)
        n += strcmp(fake_channel(i)->host, host) == 0;
    return n;
}

/* Advance the clock 1 ms at a time until a new channel to host opens; the time waited. */
static uint64_t wait_for_channel_to(const char *host, uint64_t limit)
{
    size_t before = channels_to(host);
    uint64_t start = fake_now();
    while (channels_to(host) == before && fake_now() - start < limit)
        fake_advance(1);
    assert_int_equal(channels_to(host), before + 1);
    return fake_now() - start;
}

static void expect_between(uint64_t value, uint64_t low, uint64_t high)
{
    if (value < low || value > high)
        fail_msg("%llu is not in %llu..%llu", (unsigned long long)value, (unsigned long long)low,
                 (unsigned long long)high);
}

static int status_server(struct ads_fixture *f)
{
    cJSON *status = xlb_ads_client_status(f->client);
    int index = cJSON_GetObjectItem(status, "server_index")->valueint;
    cJSON_Delete(status);
    return index;
}

/* e1 watched, three servers, the first two unreachable: running on the third. */
static struct ads_fixture *on_third(void)
{
    struct ads_fixture *f = ads_fixture_new();
    ads_watch(f, XLB_XDS_EDS, "e1");
    ads_start(f, 3);
    fake_fail(last_to("primary"), "connection refused");
    fake_advance(0);
    fake_fail(last_to("fallback"), "connection refused");
    fake_advance(0);
    struct xlb_grpc_channel *third = last_to("third");
    assert_non_null(third);
    fake_ready(third);
    respond_e1(third->stream, "1", "T1");
    assert_int_equal(status_server(f), 2);
    return f;
}

static void third_goes_back_to_second_then_to_first(void **state)
{
    struct ads_fixture *f = on_third();
    struct xlb_grpc_channel *third = last_to("third");
    /* Both higher-priority servers are retried after the first backoff delay. */
    fake_advance(1000);
    assert_int_equal(channels_to("primary"), 2);
    assert_int_equal(channels_to("fallback"), 2);
    fake_fail(last_to("primary"), "connection refused");
    struct xlb_grpc_channel *second = last_to("fallback");
    fake_ready(second);
    respond_e1(second->stream, "2", "F1");
    assert_int_equal(status_server(f), 1);
    assert_true(third->stream->cancelled);
    assert_null(ads_error_detail(fake_last_request(second->stream)));

    /* The primary is still retried, and wins over the second once it answers. */
    wait_for_channel_to("primary", 2000);
    struct xlb_grpc_channel *first = last_to("primary");
    fake_ready(first);
    expect_between(fake_request(first->stream, 0)->n_resource_names, 1, 1);
    respond_e1(first->stream, "3", "P1");
    assert_int_equal(status_server(f), 0);
    assert_true(second->stream->cancelled);
    size_t n = fake_n_channels();
    fake_advance(300000); /* nothing else is retried */
    assert_int_equal(fake_n_channels(), n);
    ads_fixture_free(f);
}

/* The primary may answer first: the second's retry stops too. */
static void primary_back_first_stops_every_retry(void **state)
{
    struct ads_fixture *f = on_third();
    fake_advance(1000);
    struct xlb_grpc_channel *first = last_to("primary");
    struct xlb_grpc_channel *second = last_to("fallback");
    fake_ready(first);
    respond_e1(first->stream, "2", "P1");
    assert_int_equal(status_server(f), 0);
    assert_true(last_to("third")->stream->cancelled);
    fake_advance(0);
    assert_true(second->destroyed);
    size_t n = fake_n_channels();
    fake_advance(300000);
    assert_int_equal(fake_n_channels(), n);
    ads_fixture_free(f);
}

static void failed_retries_of_the_primary_back_off(void **state)
{
    struct ads_fixture *f = ads_fixture_new();
    ads_watch(f, XLB_XDS_EDS, "e1");
    ads_start(f, 2);
    fake_fail(last_to("primary"), "connection refused");
    fake_advance(0);
    struct xlb_grpc_channel *fallback = last_to("fallback");
    fake_ready(fallback);
    respond_e1(fallback->stream, "1", "F1");
    expect_between(wait_for_channel_to("primary", 5000), 1000, 1000);
    fake_fail(last_to("primary"), "connection refused");
    expect_between(wait_for_channel_to("primary", 5000), 800, 1200);
    fake_fail(last_to("primary"), "connection refused");
    expect_between(wait_for_channel_to("primary", 5000), 1280, 1920);
    /* Meanwhile the fallback serves, undisturbed. */
    assert_false(fallback->stream->cancelled);
    assert_int_equal(status_server(f), 1);
    assert_int_equal(channels_to("fallback"), 1);
    ads_fixture_free(f);
}

/*
 * The fallback fails while everything is cached: A71 falls back only for what it lacks, so the
 * third server is not tried; the fallback is retried with backoff, and the primary still is.
 */
static void fallback_failing_with_everything_cached(void **state)
{
    struct ads_fixture *f = ads_fixture_new();
    ads_watch(f, XLB_XDS_EDS, "e1");
    ads_start(f, 3);
    fake_fail(last_to("primary"), "connection refused");
    fake_advance(0);
    fake_ready(last_to("fallback"));
    respond_e1(last_to("fallback")->stream, "1", "F1");
    fake_fail(last_to("fallback"), "connection reset"); /* after a response: again at once */
    fake_advance(0);
    assert_int_equal(channels_to("fallback"), 2);
    fake_fail(last_to("fallback"), "connection refused"); /* before any response */
    fake_advance(0);
    assert_int_equal(channels_to("third"), 0);
    assert_int_equal(status_server(f), 1);

    cJSON *status = xlb_ads_client_status(f->client);
    assert_string_equal(cJSON_GetObjectItem(status, "stream")->valuestring, "backing off");
    double retry_in = cJSON_GetObjectItem(status, "retry_in_s")->valuedouble;
    assert_true(retry_in >= 0.8 && retry_in <= 1.2);
    const cJSON *probing = cJSON_GetObjectItem(status, "probing");
    assert_int_equal(cJSON_GetArraySize(probing), 1);
    assert_string_equal(cJSON_GetArrayItem(probing, 0)->valuestring, "primary");
    cJSON_Delete(status);

    /* The primary comes back before the fallback's retry: the retry is cancelled. */
    wait_for_channel_to("primary", 2000);
    fake_ready(last_to("primary"));
    respond_e1(last_to("primary")->stream, "2", "P1");
    assert_int_equal(status_server(f), 0);
    size_t n = fake_n_channels();
    fake_advance(300000);
    assert_int_equal(fake_n_channels(), n);
    assert_int_equal(channels_to("third"), 0);
    ads_fixture_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(third_goes_back_to_second_then_to_first),
        cmocka_unit_test(primary_back_first_stops_every_retry),
        cmocka_unit_test(failed_retries_of_the_primary_back_off),
        cmocka_unit_test(fallback_failing_with_everything_cached),
    };
    return cmocka_run_group_tests_name("ads_fallback", tests, NULL, NULL);
}
