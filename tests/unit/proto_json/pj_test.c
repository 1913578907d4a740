/* Helpers shared by the proto_json unit tests, and the test runner. */
#include "pj_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "google/protobuf/any.pb-c.h"

ProtobufCMessage *read_text(const ProtobufCMessageDescriptor *desc, const char *text,
                            struct xlb_errors *errs)
{
    cJSON *json = cJSON_Parse(text);
    if (json == NULL)
        fail_msg("test input is not JSON: %s", text);
    ProtobufCMessage *msg = xlb_proto_json_read(desc, json, "r", errs);
    cJSON_Delete(json);
    return msg;
}

ProtobufCMessage *read_ok(const ProtobufCMessageDescriptor *desc, const char *text)
{
    struct xlb_errors errs = {0};
    ProtobufCMessage *msg = read_text(desc, text, &errs);
    for (unsigned i = 0; i < errs.n; i++)
        print_message("unexpected error: %s\n", errs.lines[i]);
    assert_int_equal(errs.n, 0);
    xlb_errors_free(&errs);
    assert_non_null(msg);
    return msg;
}

void expect_error(const ProtobufCMessageDescriptor *desc, const char *text, const char *line)
{
    struct xlb_errors errs = {0};
    ProtobufCMessage *msg = read_text(desc, text, &errs);
    assert_null(msg);
    bool found = false;
    for (unsigned i = 0; i < errs.n; i++)
        found = found || strcmp(errs.lines[i], line) == 0;
    if (!found) {
        print_message("wanted: %s\n", line);
        for (unsigned i = 0; i < errs.n; i++)
            print_message("got:    %s\n", errs.lines[i]);
    }
    xlb_errors_free(&errs);
    assert_true(found);
}

static void expect_json(cJSON *printed, const char *expected)
{
    assert_non_null(printed);
    cJSON *want = cJSON_Parse(expected);
    assert_non_null(want);
    bool equal = cJSON_Compare(printed, want, 1);
    if (!equal) {
        char *got = cJSON_PrintUnformatted(printed);
        print_message("wanted: %s\ngot:    %s\n", expected, got);
        free(got);
    }
    cJSON_Delete(want);
    cJSON_Delete(printed);
    assert_true(equal);
}

void expect_print(const ProtobufCMessage *msg, const char *expected)
{
    expect_json(xlb_proto_json_print(msg), expected);
}

void expect_round_trip(const ProtobufCMessageDescriptor *desc, const char *text,
                       const char *expected)
{
    ProtobufCMessage *msg = read_ok(desc, text);
    expect_print(msg, expected);

    size_t len = protobuf_c_message_get_packed_size(msg);
    uint8_t *wire = malloc(len + 1);
    assert_non_null(wire);
    assert_int_equal(protobuf_c_message_pack(msg, wire), len);
    ProtobufCMessage *copy = protobuf_c_message_unpack(desc, NULL, len, wire);
    assert_non_null(copy);
    expect_print(copy, expected);

    protobuf_c_message_free_unpacked(copy, NULL);
    protobuf_c_message_free_unpacked(msg, NULL);
    free(wire);
}

ProtobufCMessage *unpack_any(const ProtobufCMessage *msg, const ProtobufCMessageDescriptor *desc)
{
    const Google__Protobuf__Any *any = (const Google__Protobuf__Any *)msg;
    assert_non_null(any);
    assert_ptr_equal(xlb_proto_type_by_url(any->type_url), desc);
    ProtobufCMessage *inner =
        protobuf_c_message_unpack(desc, NULL, any->value.len, any->value.data);
    assert_non_null(inner);
    return inner;
}

int main(void)
{
    int failed = 0;
    failed += _cmocka_run_group_tests("forms", forms_tests, forms_tests_count, NULL, NULL);
    failed += _cmocka_run_group_tests("errors", errors_tests, errors_tests_count, NULL, NULL);
    failed +=
        _cmocka_run_group_tests("resources", resources_tests, resources_tests_count, NULL, NULL);
    failed += _cmocka_run_group_tests("registry", registry_tests, registry_tests_count, NULL, NULL);
    return failed != 0;
}
