/*
 * A minimal protobuf wire-format reader for the few xDS extension messages that xlb's trimmed
 * proto/ does not carry (the load_balancing_policy extensions). Internal to control/xds.
 */
#ifndef XLB_XDS_WIRE_H
#define XLB_XDS_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct xv_wire {
    const uint8_t *p, *end;
};

struct xv_wire_field {
    uint32_t number;
    uint32_t wire_type;  /* 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32 */
    uint64_t varint;     /* wire type 0 */
    const uint8_t *data; /* wire type 2 */
    size_t len;
};

/* Returns 1 with the next field, 0 at the end, -1 when the bytes are malformed. */
int xv_wire_next(struct xv_wire *w, struct xv_wire_field *f);

#endif
