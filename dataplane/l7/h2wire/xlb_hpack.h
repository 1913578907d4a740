/*
 * HPACK decoding (RFC 7541) of complete header blocks with nghttp2's inflater, in memory the
 * caller gives: the inflater allocates from an xlb_h2_arena, the decoded names and values are
 * copied into caller storage, and nothing is allocated from the system.
 *
 * One decoder per direction of a connection: the dynamic table mirrors the peer's encoder, so
 * every header block of that direction must go through it, in order, including the ones xlb does
 * not care about (PUSH_PROMISE, trailers).
 */
#ifndef XLB_HPACK_H
#define XLB_HPACK_H

#include <stdbool.h>
#include <stdint.h>

#include <nghttp2/nghttp2.h>

#include "xlb_h2_arena.h"
#include "xlb_h2_quota.h"

#define XLB_H2_MAX_FIELDS 64

/* The HTTP/2 default (and what xlb announces before it splices): SETTINGS_HEADER_TABLE_SIZE. */
#define XLB_HPACK_DEFAULT_TABLE 4096u

/*
 * Arena bytes one decoder needs (see docs/l7.md, "HTTP/2 wire handling", for the measurements):
 * XLB_HPACK_TABLE_ARENA holds nghttp2's inflater with a full XLB_HPACK_DEFAULT_TABLE-byte table
 * at worst; XLB_HPACK_ARENA_SIZE(block_cap) adds the transient buffer of the largest string a
 * header block of block_cap bytes can carry (nghttp2 allocates 2 bytes per Huffman byte) and
 * room for the fragmentation adversarial peers cause. Checked by test_hpack_arena.c.
 */
#define XLB_HPACK_TABLE_ARENA           (36u * 1024u)
#define XLB_HPACK_ARENA_SIZE(block_cap) (32u * 1024u + 6u * (uint32_t)(block_cap))

/* A regular header field as decoded: lower-case name, value, in caller storage. */
struct xlb_h2_field {
    const char *name;
    const char *value;
    uint32_t name_len;
    uint32_t value_len;
};

/* A request's pseudo-headers and regular fields: path, authority (":authority", else a "host"
 * field), fields in arrival order. The L7 engine hands them on to lib/route's matcher. */
struct xlb_h2_request {
    const char *path; /* :path */
    uint32_t path_len;
    const char *authority; /* :authority */
    uint32_t authority_len;
    const struct xlb_h2_field *fields;
    uint32_t n_fields;
};

struct xlb_h2_headers {
    struct xlb_h2_request request;
    struct xlb_h2_field fields[XLB_H2_MAX_FIELDS];
    /* :method, :status (responses), grpc-status; NULL when absent. */
    const char *method, *status, *grpc_status;
    uint32_t method_len, status_len, grpc_status_len;
    bool truncated; /* fields or storage ran out: the block was still decoded to its end */
};

struct xlb_hpack_decoder {
    nghttp2_hd_inflater *inflater;
    uint32_t *last_failed; /* the memory's: its last request not met (xlb_h2_arena.h) */
    uint32_t max_table;    /* the SETTINGS_HEADER_TABLE_SIZE the peer's encoder is held to */
    bool broken;           /* an error left the table out of step with the peer: decode fails */
};

/* nghttp2_hd_inflate_new2 with the arena's mem. 0 or -ENOMEM. */
int xlb_hpack_decoder_init(struct xlb_hpack_decoder *d, struct xlb_h2_arena *arena);
/* The same with a quota of a shared arena (the L7 engine's decoders). */
int xlb_hpack_decoder_init_quota(struct xlb_hpack_decoder *d, struct xlb_h2_quota *quota);
/* Frees everything the decoder took from its arena. Safe on a decoder whose init failed. */
void xlb_hpack_decoder_fini(struct xlb_hpack_decoder *d);

/*
 * The receiving side announced SETTINGS_HEADER_TABLE_SIZE `size`: the peer's encoder may now use
 * a table that big (it says so with a size update at the start of a block). Call between
 * blocks. Memory grows with it: XLB_HPACK_TABLE_ARENA holds for 4096 only. 0, -ENOMEM, -EINVAL.
 */
int xlb_hpack_decoder_set_max_table(struct xlb_hpack_decoder *d, uint32_t size);

/*
 * Decode one complete header block. Names and values are copied into storage (cap bytes), each
 * NUL-terminated. The whole block is always run through the inflater (the dynamic table must
 * stay in step with the peer's encoder) even when fields or storage run out (then truncated =
 * true). Returns 0, -ENOMEM (arena), or -EBADMSG (HPACK error: a connection error for HTTP/2; a
 * block that declares a string longer than itself counts as one, although nghttp2 first tries
 * to allocate it). After an error the decoder only returns errors: fini and init it again.
 */
int xlb_hpack_decode(struct xlb_hpack_decoder *d, const uint8_t *block, uint32_t len,
                     struct xlb_h2_headers *out, char *storage, uint32_t cap);

#endif
