/* See xv_test.h. */
#include "xv_test.h"

#include <stdlib.h>
#include <string.h>

ProtobufCMessage *xv_json(const ProtobufCMessageDescriptor *desc, const char *text)
{
    cJSON *json = cJSON_Parse(text);
    if (json == NULL)
        fail_msg("test input is not JSON: %s", text);
    struct xlb_errors errs = {0};
    ProtobufCMessage *msg = xlb_proto_json_read(desc, json, "r", &errs);
    cJSON_Delete(json);
    for (unsigned i = 0; i < errs.n; i++)
        print_message("test input error: %s\n", errs.lines[i]);
    xlb_errors_free(&errs);
    assert_non_null(msg);
    return msg;
}

void xv_expect_line(struct xlb_errors *errs, const char *line)
{
    bool found = errs->n == 1 && strcmp(errs->lines[0], line) == 0;
    if (!found) {
        print_message("wanted: %s\n", line);
        for (unsigned i = 0; i < errs->n; i++)
            print_message("got:    %s\n", errs->lines[i]);
    }
    xlb_errors_free(errs);
    assert_true(found);
}

void xv_expect_none(struct xlb_errors *errs)
{
    for (unsigned i = 0; i < errs->n; i++)
        print_message("unexpected: %s\n", errs->lines[i]);
    unsigned n = errs->n;
    xlb_errors_free(errs);
    assert_int_equal(n, 0);
}

void xv_any_replace(Google__Protobuf__Any *any, const char *type_url, const void *value, size_t len)
{
    /* Copies first: type_url and value may be the Any's own. The reader allocates with
     * malloc, and protobuf-c frees the message with free. */
    char *url = strdup(type_url);
    uint8_t *data = malloc(len ? len : 1);
    assert_non_null(url);
    assert_non_null(data);
    memcpy(data, value, len);
    free(any->type_url);
    free(any->value.data);
    any->type_url = url;
    any->value.data = data;
    any->value.len = len;
}
