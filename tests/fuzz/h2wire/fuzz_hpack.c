/*
 * libFuzzer target for HPACK decoding in a bounded arena. The input is a series of header
 * blocks (a 2-byte length, then the bytes), all decoded in order by one decoder, as a
 * connection's blocks would be; a length byte's top bit also changes the table size first.
 * Invariants: no crash; the arena is never overrun and is empty again after fini; after an
 * error the decoder is built afresh and works; after a success it still decodes a plain block;
 * and a second decoder, in the arena XLB_HPACK_ARENA_SIZE recommends for 4096-byte blocks and
 * given only such blocks and tables of at most 4096 bytes, never fails for want of memory.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xlb_hpack.h"

#define SMALL_ARENA (12 * 1024)
#define BLOCK_MAX   4096

static _Alignas(16) uint8_t small_mem[SMALL_ARENA];
static _Alignas(16) uint8_t sized_mem[XLB_HPACK_ARENA_SIZE(BLOCK_MAX)];
static char storage[2048];

struct subject {
    struct xlb_h2_arena arena;
    struct xlb_hpack_decoder dec;
    bool sized; /* the recommended arena: -ENOMEM is a finding */
};

static void start(struct subject *s, uint8_t *mem, uint32_t size)
{
    xlb_h2_arena_init(&s->arena, mem, size);
    if (xlb_hpack_decoder_init(&s->dec, &s->arena) != 0 && s->sized)
        abort();
}

static void restart(struct subject *s)
{
    xlb_hpack_decoder_fini(&s->dec);
    if (xlb_h2_arena_in_use(&s->arena) != 0)
        abort();
    if (xlb_hpack_decoder_init(&s->dec, &s->arena) != 0 && s->sized)
        abort();
}

/* :method GET, :path / from the static table: any working decoder reads it. */
static void probe(struct subject *s)
{
    static const uint8_t plain[] = {0x82, 0x84};
    struct xlb_h2_headers h;
    if (xlb_hpack_decode(&s->dec, plain, sizeof(plain), &h, storage, sizeof(storage)) != 0 ||
        h.request.path_len != 1 || h.method_len != 3)
        abort();
}

static void decode(struct subject *s, const uint8_t *block, uint32_t len, bool table_changed)
{
    struct xlb_h2_headers h;
    int rc = xlb_hpack_decode(&s->dec, block, len, &h, storage, sizeof(storage));
    if (xlb_h2_arena_in_use(&s->arena) > s->arena.size)
        abort();
    if (rc == -ENOMEM && s->sized)
        abort();
    if (rc != 0 && rc != -ENOMEM && rc != -EBADMSG)
        abort();
    if (h.request.n_fields > XLB_H2_MAX_FIELDS)
        abort();
    if (rc != 0)
        restart(s);
    else if (!table_changed)
        probe(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data,
                           size_t size); /* libFuzzer calls it; no header declares it */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct subject small = {.sized = false}, sized = {.sized = true};
    start(&small, small_mem, sizeof(small_mem));
    start(&sized, sized_mem, sizeof(sized_mem));
    while (size >= 2) {
        uint32_t len = (uint32_t)(data[0] & 0x7f) << 8 | data[1];
        bool resize = data[0] & 0x80;
        data += 2;
        size -= 2;
        if (len > size)
            len = (uint32_t)size;
        if (resize && len > 0) { /* first byte: the new size in 64-byte steps (up to 16320) */
            uint32_t table = (uint32_t)data[0] * 64;
            xlb_hpack_decoder_set_max_table(&small.dec, table);
            /* the sizing holds for the default table only */
            xlb_hpack_decoder_set_max_table(&sized.dec, table < 4096 ? table : 4096);
        }
        decode(&small, data, len, resize);
        if (len <= BLOCK_MAX) /* what the sizing is for: longer blocks go to `small` only */
            decode(&sized, data, len, resize);
        data += len;
        size -= len;
    }
    restart(&small);
    restart(&sized);
    xlb_hpack_decoder_fini(&small.dec);
    xlb_hpack_decoder_fini(&sized.dec);
    if (xlb_h2_arena_in_use(&small.arena) != 0 || xlb_h2_arena_in_use(&sized.arena) != 0)
        abort();
    return 0;
}
