/*
 * HPACK decoding: blocks from nghttp2's own deflater (dynamic table in use across blocks),
 * the fields in lib/route's form, truncation that keeps the table in step, HPACK errors,
 * arena exhaustion without leaks, and table size changes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2_test.h"
#include "hpack_craft.h"
#include "xlb_hpack.h"
#include "xlb_const.h"

static _Alignas(16) uint8_t mem[256 * 1024];
static char storage[64 * 1024];
static uint8_t block[64 * 1024];
static struct xlb_h2_arena arena;
static struct xlb_hpack_decoder dec;
static struct xlb_h2_headers h;
static nghttp2_hd_deflater *deflater;

static int setup(void **state)
{
    xlb_h2_arena_init(&arena, mem, sizeof(mem));
    assert_int_equal(xlb_hpack_decoder_init(&dec, &arena), 0);
    assert_int_equal(nghttp2_hd_deflate_new(&deflater, 4096), 0);
    return 0;
}

static int teardown(void **state)
{
    xlb_hpack_decoder_fini(&dec);
    nghttp2_hd_deflate_del(deflater);
    assert_int_equal(xlb_h2_arena_in_use(&arena), 0);
    return 0;
}

static uint32_t deflate(const nghttp2_nv *nva, size_t n)
{
    ssize_t len = nghttp2_hd_deflate_hd(deflater, block, sizeof(block), nva, n);
    assert_true(len >= 0);
    return (uint32_t)len;
}

static int decode(uint32_t len, uint32_t cap)
{
    return xlb_hpack_decode(&dec, block, len, &h, storage, cap);
}

static void assert_field(uint32_t i, const char *name, const char *value)
{
    assert_true(i < h.request.n_fields);
    assert_int_equal(h.fields[i].name_len, strlen(name));
    assert_string_equal(h.fields[i].name, name);
    assert_int_equal(h.fields[i].value_len, strlen(value));
    assert_string_equal(h.fields[i].value, value);
}

static void test_request_fields(void **state)
{
    nghttp2_nv nva[] = {
        H2T_NV(":method", "POST"),
        H2T_NV(":scheme", "http"),
        H2T_NV(":path", "/a.B/C"),
        H2T_NV(":authority", "svc:50051"),
        H2T_NV("content-type", "application/grpc"),
        H2T_NV("x-user", "alice"),
        H2T_NV("cookie", "a=1"),
        H2T_NV("cookie", "xlb=abc"),
    };
    /* twice: the second block is mostly indexes into the dynamic table the first one filled */
    for (int round = 0; round < 2; round++) {
        uint32_t len = deflate(nva, 8);
        assert_int_equal(decode(len, sizeof(storage)), 0);
        assert_string_equal(h.method, "POST");
        assert_int_equal(h.method_len, 4);
        assert_int_equal(h.request.path_len, 6);
        assert_string_equal(h.request.path, "/a.B/C");
        assert_string_equal(h.request.authority, "svc:50051");
        assert_ptr_equal(h.request.fields, h.fields);
        assert_int_equal(h.request.n_fields, 4);
        assert_field(0, "content-type", "application/grpc");
        assert_field(1, "x-user", "alice");
        assert_field(2, "cookie", "a=1");
        assert_field(3, "cookie", "xlb=abc");
        assert_null(h.status);
        assert_null(h.grpc_status);
        assert_false(h.truncated);
    }
}

static void test_response_and_trailers(void **state)
{
    nghttp2_nv res[] = {H2T_NV(":status", "200"), H2T_NV("content-type", "application/grpc")};
    assert_int_equal(decode(deflate(res, 2), sizeof(storage)), 0);
    assert_string_equal(h.status, "200");
    assert_int_equal(h.status_len, 3);
    assert_null(h.grpc_status);
    nghttp2_nv trailers[] = {H2T_NV("grpc-status", "14"), H2T_NV("grpc-message", "down")};
    assert_int_equal(decode(deflate(trailers, 2), sizeof(storage)), 0);
    assert_null(h.status);
    assert_string_equal(h.grpc_status, "14");
    assert_int_equal(h.grpc_status_len, 2);
    assert_field(0, "grpc-status", "14");
    assert_field(1, "grpc-message", "down");
}

static void test_host_and_case(void **state)
{
    /* hand-made: a literal "Host" (capitals, as an HTTP/1 mind would send) and no :authority */
    uint32_t n = 0;
    block[n++] = HPACK_LITERAL;
    n += (uint32_t)hpack_raw(block + n, "Host", 4);
    n += (uint32_t)hpack_raw(block + n, "h.example", 9);
    block[n++] = HPACK_INDEXED | 4; /* :path / */
    assert_int_equal(decode(n, sizeof(storage)), 0);
    assert_field(0, "host", "h.example");
    assert_string_equal(h.request.authority, "h.example");
    assert_string_equal(h.request.path, "/");
    /* :authority wins over host */
    block[n++] = HPACK_LITERAL | 1; /* :authority, static index 1 */
    n += (uint32_t)hpack_raw(block + n, "a.example", 9);
    assert_int_equal(decode(n, sizeof(storage)), 0);
    assert_string_equal(h.request.authority, "a.example");
}

static void test_too_many_fields(void **state)
{
    /* 70 new entries: 64 fields kept, the rest decoded (and indexed) all the same */
    nghttp2_nv nva[70];
    char names[70][8];
    for (int i = 0; i < 70; i++) {
        snprintf(names[i], sizeof(names[i]), "x-%02d", i);
        nva[i] = (nghttp2_nv){XLB_UNCONST(names[i]), XLB_UNCONST("v"), 4, 1, NGHTTP2_NV_FLAG_NONE};
    }
    assert_int_equal(decode(deflate(nva, 70), sizeof(storage)), 0);
    assert_true(h.truncated);
    assert_int_equal(h.request.n_fields, XLB_H2_MAX_FIELDS);
    assert_field(63, "x-63", "v");
    /* the table stayed in step: the same fields again are indexes only, and decode right */
    uint32_t len = deflate(nva + 60, 10);
    assert_int_equal(len, 10);
    assert_int_equal(decode(len, sizeof(storage)), 0);
    assert_false(h.truncated);
    assert_int_equal(h.request.n_fields, 10);
    assert_field(9, "x-69", "v");
}

static void test_storage_runs_out(void **state)
{
    nghttp2_nv nva[] = {H2T_NV(":path", "/p"), H2T_NV("aaaa", "1111"), H2T_NV("bbbb", "2222"),
                        H2T_NV("c", "3")};
    uint32_t len = deflate(nva, 4);
    /* "/p\0" + "aaaa\0" "1111\0" = 13 bytes; "bbbb" fits but "2222" does not: both dropped */
    assert_int_equal(decode(len, 18), 0);
    assert_true(h.truncated);
    assert_string_equal(h.request.path, "/p");
    assert_int_equal(h.request.n_fields, 2);
    assert_field(0, "aaaa", "1111");
    assert_field(1, "c", "3");
    assert_int_equal(decode(deflate(nva, 4), 0), 0);
    assert_true(h.truncated);
    assert_null(h.request.path);
    assert_int_equal(h.request.n_fields, 0);
}

static void test_empty_block(void **state)
{
    assert_int_equal(xlb_hpack_decode(&dec, NULL, 0, &h, storage, sizeof(storage)), 0);
    assert_int_equal(h.request.n_fields, 0);
    assert_false(h.truncated);
}

/* After an HPACK error the decoder refuses everything; fini gives all memory back. */
static void assert_bad(const uint8_t *bytes, uint32_t len)
{
    memcpy(block, bytes, len);
    assert_int_equal(decode(len, sizeof(storage)), -EBADMSG);
    nghttp2_nv ok[] = {H2T_NV(":path", "/")};
    assert_int_equal(decode(deflate(ok, 1), sizeof(storage)), -EBADMSG);
    xlb_hpack_decoder_fini(&dec);
    assert_int_equal(xlb_h2_arena_in_use(&arena), 0);
    assert_int_equal(xlb_hpack_decoder_init(&dec, &arena), 0);
}

static void test_hpack_errors(void **state)
{
    assert_bad((const uint8_t *)"\x80", 1); /* index 0 */
    assert_bad((const uint8_t *)"\xbf", 1); /* index 63: no dynamic entries */
    assert_bad((const uint8_t *)"\x40\x03"
                                "ab",
               4); /* string cut short */
    assert_bad((const uint8_t *)"\x00\x81\xff\x01"
                                "a",
               5);                                      /* Huffman: EOS/padding too long */
    assert_bad((const uint8_t *)"\x82\x3f\xe1\x1f", 4); /* table size update not at the start */
    assert_bad((const uint8_t *)"\x3f\xe1\x3f", 3);     /* table size update above 4096 */
    assert_bad((const uint8_t *)"\xff\xff\xff\xff\xff\xff\x7f", 7); /* index overflow */
}

/* A short block that claims a 60000-byte string: nghttp2 tries to allocate it first. */
static void test_lying_length(void **state)
{
    static _Alignas(16) uint8_t small[16 * 1024];
    struct xlb_h2_arena a;
    struct xlb_hpack_decoder d;
    xlb_h2_arena_init(&a, small, sizeof(small));
    assert_int_equal(xlb_hpack_decoder_init(&d, &a), 0);
    const uint8_t lie[] = {0x40, 0x01, 'a', 0x7f, 0xe1, 0xd3, 0x03, 'x'};
    assert_int_equal(xlb_hpack_decode(&d, lie, sizeof(lie), &h, storage, sizeof(storage)),
                     -EBADMSG);
    xlb_hpack_decoder_fini(&d);
    assert_int_equal(xlb_h2_arena_in_use(&a), 0);
}

/* Arena exhaustion: -ENOMEM at init or decode, never a leak. */
static void test_arena_exhaustion(void **state)
{
    static _Alignas(16) uint8_t small[8 * 1024];
    uint32_t n = 0;
    for (int i = 0; i < 3; i++)
        n += (uint32_t)hpack_add_entry_huff(block + n, (char)('a' + i), 600);
    int init_failures = 0, nomem = 0;
    for (uint32_t size = 64; size <= sizeof(small); size += 64) {
        struct xlb_h2_arena a;
        struct xlb_hpack_decoder d;
        xlb_h2_arena_init(&a, small, size);
        int rc = xlb_hpack_decoder_init(&d, &a);
        if (rc != 0) {
            assert_int_equal(rc, -ENOMEM);
            init_failures++;
        } else {
            rc = xlb_hpack_decode(&d, block, n, &h, storage, sizeof(storage));
            assert_true(rc == 0 || rc == -ENOMEM);
            nomem += rc == -ENOMEM;
            if (rc == -ENOMEM) /* refused from then on */
                assert_int_equal(xlb_hpack_decode(&d, block, 0, &h, storage, 10), -EBADMSG);
        }
        xlb_hpack_decoder_fini(&d);
        assert_int_equal(xlb_h2_arena_in_use(&a), 0);
    }
    assert_true(init_failures > 0);
    assert_true(nomem > 0);
}

static void test_table_size(void **state)
{
    /* the peer's encoder may grow its table only once the receiving side allowed it */
    uint32_t n = (uint32_t)hpack_int(block, 8192, 5, HPACK_TABLE_SIZE);
    block[n++] = 0x84; /* :path / */
    assert_int_equal(decode(n, sizeof(storage)), -EBADMSG);
    xlb_hpack_decoder_fini(&dec);
    assert_int_equal(xlb_hpack_decoder_init(&dec, &arena), 0);
    assert_int_equal(xlb_hpack_decoder_set_max_table(&dec, 8192), 0);
    assert_int_equal(decode(n, sizeof(storage)), 0);
    assert_string_equal(h.request.path, "/");
    /* shrinking to 0 evicts everything: an index into the dynamic table is then an error */
    n = (uint32_t)hpack_add_entry_raw(block, 'k', "v", 1);
    assert_int_equal(decode(n, sizeof(storage)), 0);
    block[0] = HPACK_INDEXED | 62;
    assert_int_equal(decode(1, sizeof(storage)), 0);
    assert_field(0, "k", "v");
    assert_int_equal(xlb_hpack_decoder_set_max_table(&dec, 0), 0);
    n = (uint32_t)hpack_int(block, 0, 5, HPACK_TABLE_SIZE);
    block[n++] = HPACK_INDEXED | 62;
    assert_int_equal(decode(n, sizeof(storage)), -EBADMSG);
    assert_int_equal(xlb_hpack_decoder_set_max_table(&dec, 4096), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_request_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_response_and_trailers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_host_and_case, setup, teardown),
        cmocka_unit_test_setup_teardown(test_too_many_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_storage_runs_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_block, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hpack_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lying_length, setup, teardown),
        cmocka_unit_test_setup_teardown(test_arena_exhaustion, setup, teardown),
        cmocka_unit_test_setup_teardown(test_table_size, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
