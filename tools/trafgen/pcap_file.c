/*
 * The classic pcap format (not pcapng): a 24-byte file header, then per packet a 16-byte
 * record header (seconds, micro- or nanoseconds, captured length, original length) and the
 * captured bytes. Either byte order. Only Ethernet (link type 1) is replayed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trafgen.h"

#define PCAP_MAGIC_US   0xa1b2c3d4u
#define PCAP_MAGIC_NS   0xa1b23c4du
#define PCAPNG_MAGIC    0x0a0d0d0au
#define LINKTYPE_ETHER  1
#define FILE_HEADER_LEN 24
#define REC_HEADER_LEN  16

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

static uint32_t u32_at(const uint8_t *p, bool swap)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return swap ? __builtin_bswap32(v) : v;
}

static int read_file(const char *path, uint8_t **data, size_t *size, char *err, size_t len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return fail(err, len, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return fail(err, len, "%s: not a regular file", path);
    }
    if ((uint64_t)st.st_size > TG_PCAP_MAX_BYTES) {
        fclose(f);
        return fail(err, len, "%s: larger than %u MiB", path, TG_PCAP_MAX_BYTES >> 20);
    }
    *size = (size_t)st.st_size;
    *data = malloc(*size ? *size : 1);
    if (*data == NULL || fread(*data, 1, *size, f) != *size) {
        free(*data);
        *data = NULL;
        fclose(f);
        return fail(err, len, "%s: cannot read", path);
    }
    fclose(f);
    return 0;
}

int tg_pcap_load(const char *path, uint32_t max_frame, struct tg_pcap *out, char *err, size_t len)
{
    memset(out, 0, sizeof(*out));
    uint8_t *file = NULL;
    size_t size = 0;
    if (read_file(path, &file, &size, err, len) != 0)
        return -1;
    int rc = -1;
    if (size < FILE_HEADER_LEN) {
        fail(err, len, "%s: too short for a pcap file header", path);
        goto out;
    }
    uint32_t magic;
    memcpy(&magic, file, 4);
    bool swap;
    if (magic == PCAP_MAGIC_US || magic == PCAP_MAGIC_NS)
        swap = false;
    else if (magic == __builtin_bswap32(PCAP_MAGIC_US) || magic == __builtin_bswap32(PCAP_MAGIC_NS))
        swap = true;
    else if (magic == PCAPNG_MAGIC) {
        fail(err, len, "%s: pcapng is not supported; convert it with editcap -F pcap", path);
        goto out;
    } else {
        fail(err, len, "%s: not a pcap file (magic 0x%08x)", path, magic);
        goto out;
    }
    uint32_t linktype = u32_at(file + 20, swap) & 0xffff;
    if (linktype != LINKTYPE_ETHER) {
        fail(err, len, "%s: link type %u, only Ethernet (1) is replayed", path, linktype);
        goto out;
    }

    /* Two passes: count, then index. Both bounded by the file's size. */
    uint32_t n = 0;
    size_t at = FILE_HEADER_LEN;
    for (; at + REC_HEADER_LEN <= size; n++) {
        uint32_t incl = u32_at(file + at + 8, swap);
        if (incl > size - at - REC_HEADER_LEN) {
            fail(err, len, "%s: packet %u is truncated", path, n + 1);
            goto out;
        }
        if (n == TG_PCAP_MAX_PACKETS) {
            fail(err, len, "%s: more than %u packets", path, TG_PCAP_MAX_PACKETS);
            goto out;
        }
        at += REC_HEADER_LEN + incl;
    }
    if (at != size) {
        fail(err, len, "%s: %zu trailing bytes after packet %u", path, size - at, n);
        goto out;
    }
    out->offset = calloc(n ? n : 1, sizeof(uint32_t));
    out->length = calloc(n ? n : 1, sizeof(uint32_t));
    if (out->offset == NULL || out->length == NULL) {
        fail(err, len, "out of memory");
        goto out;
    }
    at = FILE_HEADER_LEN;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t incl = u32_at(file + at + 8, swap);
        at += REC_HEADER_LEN;
        if (incl == 0 || incl > max_frame) {
            out->skipped++;
        } else {
            out->offset[out->n] = (uint32_t)at;
            out->length[out->n] = incl;
            out->n++;
        }
        at += incl;
    }
    if (out->n == 0) {
        fail(err, len, "%s: no packet to replay (%u longer than %u bytes or empty)", path,
             out->skipped, max_frame);
        goto out;
    }
    out->data = file;
    file = NULL;
    rc = 0;
out:
    free(file);
    if (rc != 0)
        tg_pcap_free(out);
    return rc;
}

void tg_pcap_free(struct tg_pcap *p)
{
    free(p->data);
    free(p->offset);
    free(p->length);
    memset(p, 0, sizeof(*p));
}
