/*
 * The rules every xDS validator shares (control/xds/validate_common.c), through the resources that
 * carry them: an Any's type URL, its value, and a TypedStruct's inner type URL. Such Anys
 * cannot be written in proto3 JSON (the reader refuses unknown or malformed "@type"s), so the
 * tests edit the parsed message. One test per rule.
 */
#include "xv_test.h"

#include <stdlib.h>
#include <string.h>

#include "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.pb-c.h"
#include "listener_config.h"

typedef Envoy__Config__Listener__V3__Listener Listener;
typedef Envoy__Extensions__Filters__Network__HttpConnectionManager__V3__HttpConnectionManager Hcm;

#define HCM_URL                                                                                    \
    "type.googleapis.com/"                                                                         \
    "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"
#define ROUTER                                                                                     \
    "{\"name\":\"router\",\"typed_config\":{\"@type\":\"type.googleapis.com/"                      \
    "envoy.extensions.filters.http.router.v3.Router\"}}"
#define LISTENER(filters)                                                                          \
    "{\"name\":\"svc\",\"api_listener\":{\"api_listener\":{\"@type\":\"" HCM_URL "\","             \
    "\"rds\":{\"config_source\":{\"ads\":{}},\"route_config_name\":\"r\"},\"http_filters\":"       \
    "[" filters "]}}}"
#define TYPED_STRUCT_FILTER                                                                        \
    "{\"name\":\"x\",\"typed_config\":{\"@type\":\"type.googleapis.com/xds.type.v3.TypedStruct\"," \
    "\"type_url\":\"type.googleapis.com/custom.Filter\"}}," ROUTER

static Listener *listener_json(const char *json)
{
    return (Listener *)xv_json(&envoy__config__listener__v3__listener__descriptor, json);
}

/* The (edited) listener must be NACKed with exactly this line; it is freed. */
static void expect_nack(Listener *msg, const char *line)
{
    struct xlb_listener_config cfg;
    struct xlb_errors errs = {0};
    int rc = xlb_validate_listener(msg, &cfg, &errs);
    protobuf_c_message_free_unpacked(&msg->base, NULL);
    assert_int_equal(rc, -1);
    xv_expect_line(&errs, line);
}

static Google__Protobuf__Any *api_listener_any(Listener *msg)
{
    return msg->api_listener->api_listener;
}

static void any_type_url_without_slash(void **state)
{
    Listener *msg = listener_json(LISTENER(ROUTER));
    Google__Protobuf__Any *any = api_listener_any(msg);
    xv_any_replace(any, "HttpConnectionManager", any->value.data, any->value.len);
    expect_nack(msg, "listener \"svc\": api_listener.api_listener.type_url: invalid value "
                     "\"HttpConnectionManager\"");
}

static void any_type_url_ending_in_slash(void **state)
{
    Listener *msg = listener_json(LISTENER(ROUTER));
    Google__Protobuf__Any *any = api_listener_any(msg);
    xv_any_replace(any, "type.googleapis.com/", any->value.data, any->value.len);
    expect_nack(msg, "listener \"svc\": api_listener.api_listener.type_url: invalid value "
                     "\"type.googleapis.com/\"");
}

static void any_value_undecodable(void **state)
{
    static const uint8_t garbage[] = {0x0a, 0x7f, 0x00}; /* a field announcing 127 bytes */
    Listener *msg = listener_json(LISTENER(ROUTER));
    xv_any_replace(api_listener_any(msg), HCM_URL, garbage, sizeof(garbage));
    expect_nack(msg, "listener \"svc\": api_listener.api_listener: could not parse "
                     "HttpConnectionManager");
}

/* The filter list sits inside the packed HttpConnectionManager: unpack, edit, pack back. */
static Listener *listener_with_filter_edit(void (*edit)(Google__Protobuf__Any *filter_config))
{
    Listener *msg = listener_json(LISTENER(TYPED_STRUCT_FILTER));
    Google__Protobuf__Any *any = api_listener_any(msg);
    Hcm *hcm = (Hcm *)protobuf_c_message_unpack(
        &envoy__extensions__filters__network__http_connection_manager__v3__http_connection_manager__descriptor,
        NULL, any->value.len, any->value.data);
    assert_non_null(hcm);
    edit(hcm->http_filters[0]->typed_config);
    size_t len = protobuf_c_message_get_packed_size(&hcm->base);
    uint8_t *packed = malloc(len);
    assert_non_null(packed);
    protobuf_c_message_pack(&hcm->base, packed);
    xv_any_replace(any, HCM_URL, packed, len);
    free(packed);
    protobuf_c_message_free_unpacked(&hcm->base, NULL);
    return msg;
}

static void inner_url_without_slash(Google__Protobuf__Any *typed_struct)
{
    static const uint8_t inner[] = {0x0a, 0x0d, 'c', 'u', 's', 't', 'o', 'm',
                                    '.',  'F',  'i', 'l', 't', 'e', 'r'};
    xv_any_replace(typed_struct, typed_struct->type_url, inner, sizeof(inner));
}

static void typed_struct_inner_type_url_invalid(void **state)
{
    expect_nack(listener_with_filter_edit(inner_url_without_slash),
                "listener \"svc\": http_filters[0].typed_config.value.type_url: invalid value "
                "\"custom.Filter\"");
}

static void typed_struct_garbage(Google__Protobuf__Any *typed_struct)
{
    static const uint8_t garbage[] = {0x12, 0x40};
    xv_any_replace(typed_struct, typed_struct->type_url, garbage, sizeof(garbage));
}

static void typed_struct_undecodable(void **state)
{
    expect_nack(listener_with_filter_edit(typed_struct_garbage),
                "listener \"svc\": http_filters[0].typed_config: could not parse TypedStruct");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(any_type_url_without_slash),
        cmocka_unit_test(any_type_url_ending_in_slash),
        cmocka_unit_test(any_value_undecodable),
        cmocka_unit_test(typed_struct_inner_type_url_invalid),
        cmocka_unit_test(typed_struct_undecodable),
    };
    return cmocka_run_group_tests_name("xds_validate_common", tests, NULL, NULL);
}
