/*
 * ORCA per-call load reports: base64 with OpenSSL's block decoder, the message with
 * protobuf-c on a bump allocator over a stack buffer, so that a worker never calls malloc.
 */
#include "xlb_orca.h"

#include <errno.h>
#include <stdalign.h>
#include <stdint.h>
#include <string.h>

#include <openssl/evp.h>

#include "xds/data/orca/v3/orca_load_report.pb-c.h"

/* protobuf-c allocates per map entry and unknown field: a report of XLB_ORCA_VALUE_MAX
 * base64 characters (768 bytes) needs at most a few KiB; more is refused as malformed. */
#define ORCA_ARENA_BYTES 16384u

struct arena {
    size_t used;
    alignas(max_align_t) uint8_t bytes[ORCA_ARENA_BYTES];
};

static void *arena_alloc(void *data, size_t size)
{
    struct arena *a = data;
    size_t at = (a->used + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1);
    if (size > sizeof(a->bytes) || at > sizeof(a->bytes) - size)
        return NULL;
    a->used = at + size;
    return a->bytes + at;
}

static void arena_free(void *data, void *p)
{
    (void)data; /* the whole arena goes with the caller's stack frame */
    (void)p;
}

/* Base64 of either form into out; returns the decoded length, or -1. */
static int decode_base64(const char *value, size_t len, uint8_t *out)
{
    char padded[XLB_ORCA_VALUE_MAX + 4];
    while (len > 0 && value[len - 1] == '=')
        len--;
    if (len % 4 == 1)
        return -1;
    size_t pad = (4 - len % 4) % 4;
    memcpy(padded, value, len);
    memset(padded + len, '=', pad);
    for (size_t i = 0; i < len; i++) /* EVP_DecodeBlock would skip spaces: a value has none */
        if (padded[i] == ' ' || padded[i] == '\t' || padded[i] == '\r' || padded[i] == '\n')
            return -1;
    int n = EVP_DecodeBlock(out, (const unsigned char *)padded, (int)(len + pad));
    return n < 0 || (size_t)n < pad ? -1 : n - (int)pad;
}

int xlb_orca_read(const char *value, size_t len, struct xlb_wrr_report *out)
{
    if (len > XLB_ORCA_VALUE_MAX)
        return -E2BIG;
    uint8_t bytes[XLB_ORCA_MESSAGE_MAX + 3];
    int n = decode_base64(value, len, bytes);
    if (n < 0)
        return -EINVAL;
    return xlb_orca_read_message(bytes, (size_t)n, out);
}

int xlb_orca_read_message(const uint8_t *bytes, size_t n, struct xlb_wrr_report *out)
{
    if (n > XLB_ORCA_MESSAGE_MAX)
        return -E2BIG;
    struct arena arena;
    arena.used = 0;
    ProtobufCAllocator allocator = {arena_alloc, arena_free, &arena};
    Xds__Data__Orca__V3__OrcaLoadReport *m =
        xds__data__orca__v3__orca_load_report__unpack(&allocator, n, bytes);
    if (m == NULL)
        return -EINVAL;
    *out = (struct xlb_wrr_report){
        .cpu_utilization = m->cpu_utilization,
        .application_utilization = m->application_utilization,
        .qps = m->rps_fractional,
        .eps = m->eps,
    };
    return 0;
}
