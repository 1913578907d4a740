/* Helpers shared by the xDS validation tests: resources are written as proto3 JSON. */
#ifndef XLB_XV_TEST_H
#define XLB_XV_TEST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include "google/protobuf/any.pb-c.h"
#include "json_read.h"
#include "proto_json.h"

/* Reads text (JSON) as a message of type desc; the test fails when it does not parse. */
ProtobufCMessage *xv_json(const ProtobufCMessageDescriptor *desc, const char *text);

/* errs must hold exactly one line, equal to `line`; frees errs. */
void xv_expect_line(struct xlb_errors *errs, const char *line);

/* errs must hold no line; frees errs. */
void xv_expect_none(struct xlb_errors *errs);

/* Replaces what an Any holds, for Anys the JSON reader refuses to build (a type URL without a
 * '/', bytes that do not decode). */
void xv_any_replace(Google__Protobuf__Any *any, const char *type_url, const void *value,
                    size_t len);

#endif
