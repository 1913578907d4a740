#include "tcp_syn_options.h"

#include <string.h>

#include <rte_byteorder.h>

#include "checksum.h"
#include "packet_parse.h"

enum { OPT_END = 0, OPT_NOP = 1, OPT_MSS = 2, OPT_MSS_LEN = 4 };

/* Offset in the options area of the first option of `kind` and `len` at or after `from`, or
 * -1 (none before the end, or the area turns malformed). */
static int find_from(const struct rte_tcp_hdr *tcp, uint8_t kind, uint8_t len, uint32_t from)
{
    const uint8_t *opt = (const uint8_t *)(tcp + 1);
    uint32_t area = xlb_tcp_options_len(tcp);
    uint32_t i = from;
    while (i < area && opt[i] != OPT_END) {
        if (opt[i] == OPT_NOP) {
            i++;
            continue;
        }
        if (i + 1 >= area || opt[i + 1] < 2 || opt[i + 1] > area - i)
            return -1; /* malformed: what follows cannot be trusted */
        if (opt[i] == kind && opt[i + 1] == len)
            return (int)i;
        i += opt[i + 1];
    }
    return -1;
}

const uint8_t *xlb_syn_option_find(const struct rte_tcp_hdr *tcp, uint8_t kind, uint8_t len)
{
    int at = find_from(tcp, kind, len, 0);
    return at < 0 ? NULL : (const uint8_t *)(tcp + 1) + at;
}

/* Lower the 2-byte value at `at` bytes into the header to max, patching the checksum. */
static void lower_value(struct rte_tcp_hdr *tcp, size_t at, uint16_t max)
{
    /* The checksum sums 16-bit words from the header's start. After a lone NOP the value
     * straddles two of them, so the diff covers the 4 aligned bytes around it (still inside
     * the options area, whose length is a multiple of 4). */
    uint8_t *header = (uint8_t *)tcp;
    size_t start = at & ~(size_t)1, span = at == start ? 2 : 4;
    uint8_t before[4];
    memcpy(before, header + start, span);
    uint16_t clamped = rte_cpu_to_be_16(max);
    memcpy(header + at, &clamped, sizeof(clamped));
    uint16_t csum = tcp->cksum;
    xlb_csum_replace(&csum, before, header + start, span);
    tcp->cksum = csum;
}

bool xlb_syn_clamp_mss(struct rte_tcp_hdr *tcp, uint16_t max)
{
    /* Every MSS option, not only the first: stacks differ on which of several they take
     * (Linux keeps the last). The walk is bounded by the 40-byte options area. */
    bool lowered = false;
    for (int at = find_from(tcp, OPT_MSS, OPT_MSS_LEN, 0); at >= 0;
         at = find_from(tcp, OPT_MSS, OPT_MSS_LEN, (uint32_t)at + OPT_MSS_LEN)) {
        size_t value_at = sizeof(*tcp) + (size_t)at + 2;
        uint16_t offered;
        memcpy(&offered, (const uint8_t *)tcp + value_at, sizeof(offered));
        if (rte_be_to_cpu_16(offered) > max) {
            lower_value(tcp, value_at, max);
            lowered = true;
        }
    }
    return lowered;
}
