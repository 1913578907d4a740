/*
 * HPACK header-block decoding over nghttp2's inflater (see xlb_hpack.h).
 */
#include <errno.h>
#include <string.h>

#include "xlb_hpack.h"

/* nghttp2 keeps a decoded string in an nghttp2_rcbuf: a small header, then the bytes. */
#define RCBUF_SLACK 64u

static int init_with(struct xlb_hpack_decoder *d, nghttp2_mem *mem, uint32_t *last_failed)
{
    memset(d, 0, sizeof(*d));
    d->last_failed = last_failed;
    d->max_table = XLB_HPACK_DEFAULT_TABLE;
    *last_failed = 0;
    if (nghttp2_hd_inflate_new2(&d->inflater, mem) != 0) {
        d->inflater = NULL;
        d->broken = true;
        return -ENOMEM;
    }
    return 0;
}

int xlb_hpack_decoder_init(struct xlb_hpack_decoder *d, struct xlb_h2_arena *arena)
{
    return init_with(d, &arena->mem, &arena->last_failed);
}

int xlb_hpack_decoder_init_quota(struct xlb_hpack_decoder *d, struct xlb_h2_quota *quota)
{
    return init_with(d, &quota->mem, &quota->last_failed);
}

void xlb_hpack_decoder_fini(struct xlb_hpack_decoder *d)
{
    if (d->inflater != NULL)
        nghttp2_hd_inflate_del(d->inflater);
    d->inflater = NULL;
    d->broken = true;
}

int xlb_hpack_decoder_set_max_table(struct xlb_hpack_decoder *d, uint32_t size)
{
    if (d->broken)
        return -EINVAL;
    int rc = nghttp2_hd_inflate_change_table_size(d->inflater, size);
    if (rc == NGHTTP2_ERR_NOMEM)
        return -ENOMEM;
    if (rc != 0)
        return -EINVAL;
    d->max_table = size;
    return 0;
}

/* Copy n bytes plus a NUL into storage; NULL when they do not fit. */
static char *keep(char *storage, uint32_t cap, uint32_t *used, const uint8_t *src, size_t n)
{
    if (n >= cap - *used)
        return NULL;
    char *dst = storage + *used;
    memcpy(dst, src, n);
    dst[n] = '\0';
    *used += (uint32_t)n + 1;
    return dst;
}

/* Like keep, lower-casing: lib/route compares names in lower case, as HTTP/2 sends them. */
static char *keep_lower(char *storage, uint32_t cap, uint32_t *used, const uint8_t *src, size_t n)
{
    char *dst = keep(storage, cap, used, src, n);
    for (size_t i = 0; dst != NULL && i < n; i++)
        if (dst[i] >= 'A' && dst[i] <= 'Z')
            dst[i] = (char)(dst[i] - 'A' + 'a');
    return dst;
}

static bool name_is(const nghttp2_nv *nv, const char *name)
{
    size_t n = strlen(name);
    return nv->namelen == n && memcmp(nv->name, name, n) == 0;
}

/* A pseudo-header xlb uses: the first of each kind counts. */
static void keep_pseudo(struct xlb_h2_headers *out, const nghttp2_nv *nv, char *storage,
                        uint32_t cap, uint32_t *used)
{
    const char **slot = NULL;
    uint32_t *slot_len = NULL;
    if (name_is(nv, ":path"))
        slot = &out->request.path, slot_len = &out->request.path_len;
    else if (name_is(nv, ":authority"))
        slot = &out->request.authority, slot_len = &out->request.authority_len;
    else if (name_is(nv, ":method"))
        slot = &out->method, slot_len = &out->method_len;
    else if (name_is(nv, ":status"))
        slot = &out->status, slot_len = &out->status_len;
    if (slot == NULL || *slot != NULL)
        return;
    *slot = keep(storage, cap, used, nv->value, nv->valuelen);
    if (*slot == NULL)
        out->truncated = true;
    else
        *slot_len = (uint32_t)nv->valuelen;
}

static void keep_field(struct xlb_h2_headers *out, const nghttp2_nv *nv, char *storage,
                       uint32_t cap, uint32_t *used)
{
    if (nv->namelen > 0 && nv->name[0] == ':') {
        keep_pseudo(out, nv, storage, cap, used);
        return;
    }
    uint32_t n = out->request.n_fields;
    uint32_t mark = *used;
    const char *name = NULL, *value = NULL;
    if (n < XLB_H2_MAX_FIELDS &&
        (name = keep_lower(storage, cap, used, nv->name, nv->namelen)) != NULL)
        value = keep(storage, cap, used, nv->value, nv->valuelen);
    if (value == NULL) {
        *used = mark; /* no half-kept field */
        out->truncated = true;
        return;
    }
    out->fields[n] =
        (struct xlb_h2_field){name, value, (uint32_t)nv->namelen, (uint32_t)nv->valuelen};
    out->request.n_fields = n + 1;
    if (out->grpc_status == NULL && name_is(nv, "grpc-status")) {
        out->grpc_status = value;
        out->grpc_status_len = (uint32_t)nv->valuelen;
    }
}

/* HTTP/2 requests carry :authority; an HTTP/1-minded client may send only "host". */
static void authority_from_host(struct xlb_h2_headers *out)
{
    for (uint32_t i = 0; out->request.authority == NULL && i < out->request.n_fields; i++) {
        const struct xlb_h2_field *f = &out->fields[i];
        if (f->name_len == 4 && memcmp(f->name, "host", 4) == 0) {
            out->request.authority = f->value;
            out->request.authority_len = f->value_len;
        }
    }
}

static uint32_t pow2(uint32_t n)
{
    uint32_t p = 1;
    while (p < n && p < (1u << 31))
        p <<= 1;
    return p;
}

/*
 * nghttp2 allocates a literal's buffer from its declared length before reading it, so a short
 * block claiming a huge string runs the arena dry. When the failed request is larger than any
 * string of this block could need (nghttp2 takes 2 bytes per Huffman-coded byte) and than the
 * entry-pointer ring of the table, the block lied: an HPACK error, not a shortage.
 */
static int nomem_or_badmsg(const struct xlb_hpack_decoder *d, uint32_t len)
{
    uint64_t string_max = (uint64_t)len * 2 + 1 + RCBUF_SLACK;
    uint64_t ring_max = (uint64_t)pow2(d->max_table / 32 + 1) * sizeof(void *);
    uint32_t failed = *d->last_failed;
    return failed > string_max && failed > ring_max ? -EBADMSG : -ENOMEM;
}

static int fail(struct xlb_hpack_decoder *d, ssize_t rc, uint32_t len)
{
    d->broken = true;
    return rc == NGHTTP2_ERR_NOMEM ? nomem_or_badmsg(d, len) : -EBADMSG;
}

int xlb_hpack_decode(struct xlb_hpack_decoder *d, const uint8_t *block, uint32_t len,
                     struct xlb_h2_headers *out, char *storage, uint32_t cap)
{
    memset(out, 0, sizeof(*out));
    out->request.fields = out->fields;
    if (d->broken)
        return -EBADMSG;
    *d->last_failed = 0;
    uint32_t used = 0, total = len;
    static const uint8_t empty[1];
    const uint8_t *p = len ? block : empty;
    for (;;) {
        nghttp2_nv nv;
        int flags = 0;
        ssize_t n = nghttp2_hd_inflate_hd2(d->inflater, &nv, &flags, p, len, 1);
        if (n < 0)
            return fail(d, n, total);
        p += n;
        len -= (uint32_t)n;
        if (flags & NGHTTP2_HD_INFLATE_EMIT)
            keep_field(out, &nv, storage, cap, &used);
        if (flags & NGHTTP2_HD_INFLATE_FINAL)
            break;
        if (!(flags & NGHTTP2_HD_INFLATE_EMIT) && len == 0)
            break;
    }
    nghttp2_hd_inflate_end_headers(d->inflater);
    authority_from_host(out);
    return 0;
}
