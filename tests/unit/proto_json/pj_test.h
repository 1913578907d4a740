/* Helpers shared by the proto_json unit tests. */
#ifndef XLB_PJ_TEST_H
#define XLB_PJ_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include "proto_json.h"

/* Parses text and reads it as desc with path "r"; errors land in errs. */
ProtobufCMessage *read_text(const ProtobufCMessageDescriptor *desc, const char *text,
                            struct xlb_errors *errs);

/* Reads text, which must succeed; fails the test with the error lines otherwise. */
ProtobufCMessage *read_ok(const ProtobufCMessageDescriptor *desc, const char *text);

/* Reading text must fail, and one of the error lines must be exactly `line`. */
void expect_error(const ProtobufCMessageDescriptor *desc, const char *text, const char *line);

/*
 * Reads text, prints it, packs and unpacks it, prints again: both prints must equal `expected`
 * (JSON text compared structurally).
 */
void expect_round_trip(const ProtobufCMessageDescriptor *desc, const char *text,
                       const char *expected);

/* Asserts that printing msg gives the JSON `expected`. */
void expect_print(const ProtobufCMessage *msg, const char *expected);

/* The message packed in an Any, unpacked; free with protobuf_c_message_free_unpacked. */
ProtobufCMessage *unpack_any(const ProtobufCMessage *any, const ProtobufCMessageDescriptor *desc);

extern const struct CMUnitTest forms_tests[];
extern const size_t forms_tests_count;
extern const struct CMUnitTest errors_tests[];
extern const size_t errors_tests_count;
extern const struct CMUnitTest resources_tests[];
extern const size_t resources_tests_count;
extern const struct CMUnitTest registry_tests[];
extern const size_t registry_tests_count;

#endif
