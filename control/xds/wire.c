/* See wire.h. Groups (wire types 3 and 4) are refused: proto3 messages never use them. */
#include "wire.h"

static bool read_varint(struct xv_wire *w, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (w->p >= w->end)
            return false;
        uint8_t b = *w->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
            *out = v;
            return true;
        }
    }
    return false;
}

static bool skip(struct xv_wire *w, size_t n)
{
    if ((size_t)(w->end - w->p) < n)
        return false;
    w->p += n;
    return true;
}

int xv_wire_next(struct xv_wire *w, struct xv_wire_field *f)
{
    if (w->p >= w->end)
        return 0;
    uint64_t key;
    if (!read_varint(w, &key) || (key >> 3) == 0 || (key >> 3) > 0x1fffffff)
        return -1;
    f->number = (uint32_t)(key >> 3);
    f->wire_type = (uint32_t)(key & 7);
    switch (f->wire_type) {
    case 0:
        return read_varint(w, &f->varint) ? 1 : -1;
    case 1:
        return skip(w, 8) ? 1 : -1;
    case 5:
        return skip(w, 4) ? 1 : -1;
    case 2: {
        uint64_t len;
        if (!read_varint(w, &len) || len > (uint64_t)(w->end - w->p))
            return -1;
        f->data = w->p;
        f->len = (size_t)len;
        w->p += len;
        return 1;
    }
    default:
        return -1;
    }
}
