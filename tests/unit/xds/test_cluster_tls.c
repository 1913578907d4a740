/* CDS transport_socket (A29, control/xds/validate_transport_socket.c): an UpstreamTlsContext
 * naming certificate provider instances; one test per rule, each NACK by its exact line. */
#include "cluster_test.h"

#include <string.h>

#include "bootstrap.h"
#include "xlb_const.h"

#define TLS_TYPE                                                                                   \
    "\"@type\":\"type.googleapis.com/"                                                             \
    "envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext\""
#define SOCKET(body)                                                                               \
    EDS(",\"transport_socket\":{\"name\":\"envoy.transport_sockets.tls\",\"typed_config\":"        \
        "{" TLS_TYPE body "}}")
#define COMMON(body) SOCKET(",\"common_tls_context\":{" body "}")
#define CA(name)                                                                                   \
    "\"validation_context\":{\"ca_certificate_provider_instance\":{\"instance_name\":\"" name "\"" \
    "}"
#define PATH "transport_socket.typed_config.value.common_tls_context"

static void full_context_is_kept(void **state)
{
    (void)state;
    struct xlb_cluster_config cfg;
    ct_valid(COMMON("\"tls_certificate_provider_instance\":{\"instance_name\":\"mine\"}," CA(
                 "roots") ",\"match_subject_alt_names\":[{\"exact\":\"a.example\"},"
                          "{\"suffix\":\".EXAMPLE\",\"ignore_case\":true},"
                          "{\"safe_regex\":{\"regex\":\"spiffe://[a-z]+/ns/.*\"}}]}"),
             &cfg);
    assert_true(cfg.upstream_tls.enabled);
    assert_string_equal(cfg.upstream_tls.ca_instance, "roots");
    assert_string_equal(cfg.upstream_tls.cert_instance, "mine");
    assert_int_equal(cfg.upstream_tls.n_sans, 3);
    assert_int_equal(cfg.upstream_tls.sans[0].type, XLB_SAN_EXACT);
    assert_string_equal(cfg.upstream_tls.sans[0].value, "a.example");
    assert_int_equal(cfg.upstream_tls.sans[1].type, XLB_SAN_SUFFIX);
    assert_true(cfg.upstream_tls.sans[1].ignore_case);
    assert_int_equal(cfg.upstream_tls.sans[2].type, XLB_SAN_REGEX);
    xlb_cluster_config_free(&cfg);
}

static void older_forms_name_the_ca(void **state)
{
    (void)state;
    struct xlb_cluster_config cfg;
    ct_valid(COMMON("\"combined_validation_context\":{"
                    "\"validation_context_certificate_provider_instance\":{\"instance_name\":"
                    "\"old\"},\"default_validation_context\":{\"match_subject_alt_names\":["
                    "{\"prefix\":\"b\"}]}}"),
             &cfg);
    assert_string_equal(cfg.upstream_tls.ca_instance, "old");
    assert_null(cfg.upstream_tls.cert_instance);
    assert_int_equal(cfg.upstream_tls.n_sans, 1);
    xlb_cluster_config_free(&cfg);
    ct_valid(COMMON("\"validation_context_certificate_provider_instance\":{\"instance_name\":"
                    "\"oldest\"}"),
             &cfg);
    assert_string_equal(cfg.upstream_tls.ca_instance, "oldest");
    xlb_cluster_config_free(&cfg);
}

static void no_transport_socket_is_cleartext(void **state)
{
    (void)state;
    struct xlb_cluster_config cfg;
    ct_valid(EDS(""), &cfg);
    assert_false(cfg.upstream_tls.enabled);
    xlb_cluster_config_free(&cfg);
}

static void what_gRPC_refuses_is_nacked(void **state)
{
    (void)state;
    ct_expect_nack(EDS(",\"transport_socket\":{\"name\":\"raw\",\"typed_config\":{\"@type\":"
                       "\"type.googleapis.com/google.protobuf.Empty\"}}"),
                   "cluster \"backend\": transport_socket.typed_config: unsupported transport "
                   "socket \"google.protobuf.Empty\"");
    ct_expect_nack(EDS(",\"transport_socket\":{\"name\":\"tls\"}"),
                   "cluster \"backend\": transport_socket.typed_config: field not present");
    ct_expect_nack(SOCKET(""), "cluster \"backend\": " PATH ": field not present");
    ct_expect_nack(COMMON(""), "cluster \"backend\": " PATH
                               ": no CA certificate provider instance (A29: required upstream)");
    ct_expect_nack(COMMON("\"tls_certificates\":[{}]," CA("r") "}"),
                   "cluster \"backend\": " PATH ".tls_certificates: field not supported (A29)");
    ct_expect_nack(COMMON("\"tls_params\":{}," CA("r") "}"),
                   "cluster \"backend\": " PATH ".tls_params: field not supported (A29)");
    ct_expect_nack(COMMON(CA("r") ",\"verify_certificate_spki\":[\"x\"]}"),
                   "cluster \"backend\": " PATH
                   ".validation_context.verify_certificate_spki: field not supported (A29)");
    ct_expect_nack(COMMON(CA("r") ",\"match_typed_subject_alt_names\":[{\"san_type\":\"DNS\"}]}"),
                   "cluster \"backend\": " PATH
                   ".validation_context.match_typed_subject_alt_names: field not supported "
                   "(A29)");
    ct_expect_nack(COMMON("\"validation_context\":{\"ca_certificate_provider_instance\":{}}"),
                   "cluster \"backend\": " PATH
                   ".validation_context.ca_certificate_provider_instance.instance_name: field "
                   "not present");
    ct_expect_nack(COMMON(CA("r") ",\"match_subject_alt_names\":[{\"safe_regex\":{\"regex\":"
                                  "\"(\"}}]}"),
                   "cluster \"backend\": " PATH
                   ".validation_context.match_subject_alt_names[0].safe_regex: invalid regex "
                   "\"(\" (missing closing parenthesis)");
}

/* With the bootstrap at hand, an instance it does not have is NACKed (A29). */
static void unknown_instance_is_nacked(void **state)
{
    (void)state;
    struct xlb_cert_provider_config providers[] = {
        {.name = XLB_STR("roots"), .ca_certificate_file = XLB_STR("/ca.pem")}};
    struct xlb_bootstrap b = {.n_cert_providers = 1, .cert_providers = providers};
    struct xlb_cluster_config cfg;
    struct xlb_errors errs = {0};
    Cluster *msg = ct_json(COMMON(CA("roots") "}"));
    assert_int_equal(xlb_validate_cluster_with(msg, &b, &cfg, &errs), 0);
    xlb_cluster_config_free(&cfg);
    protobuf_c_message_free_unpacked(&msg->base, NULL);
    msg = ct_json(COMMON(
        "\"tls_certificate_provider_instance\":{\"instance_name\":\"gone\"}," CA("roots") "}"));
    assert_int_equal(xlb_validate_cluster_with(msg, &b, &cfg, &errs), -1);
    protobuf_c_message_free_unpacked(&msg->base, NULL);
    xv_expect_line(&errs, "cluster \"backend\": " PATH
                          ".tls_certificate_provider_instance.instance_name: unrecognized "
                          "certificate provider instance name: gone");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(full_context_is_kept),
        cmocka_unit_test(older_forms_name_the_ca),
        cmocka_unit_test(no_transport_socket_is_cleartext),
        cmocka_unit_test(what_gRPC_refuses_is_nacked),
        cmocka_unit_test(unknown_instance_is_nacked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
