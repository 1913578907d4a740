#include "tcp_syn_options.h"

#include <string.h>

#include <rte_byteorder.h>

#include "checksum.h"

enum { OPT_END = 0, OPT_NOP = 1, OPT_MSS = 2, OPT_MSS_LEN = 4 };

const uint8_t *xlb_syn_option_find(const struct rte_tcp_hdr *tcp, uint8_t kind, uint8_t len)
{
    const uint8_t *opt = (const uint8_t *)(tcp + 1);
    uint32_t area = (uint32_t)(tcp->data_off >> 4) * 4 - (uint32_t)sizeof(*tcp);
    uint32_t i = 0;
    while (i < area && opt[i] != OPT_END) {
        if (opt[i] == OPT_NOP) {
            i++;
            continue;
        }
        if (i + 1 >= area || opt[i + 1] < 2 || opt[i + 1] > area - i)
            return NULL; /* malformed: what follows cannot be trusted */
        if (opt[i] == kind && opt[i + 1] == len)
            return &opt[i];
        i += opt[i + 1];
    }
    return NULL;
}

bool xlb_syn_clamp_mss(struct rte_tcp_hdr *tcp, uint16_t max)
{
    const uint8_t *mss = xlb_syn_option_find(tcp, OPT_MSS, OPT_MSS_LEN);
    if (mss == NULL)
        return false;
    uint8_t *header = (uint8_t *)tcp, *value = header + (mss - header) + 2; /* tcp is ours */
    uint16_t offered;
    memcpy(&offered, value, sizeof(offered));
    if (rte_be_to_cpu_16(offered) <= max)
        return false;
    /* The checksum sums 16-bit words from the header's start. After a lone NOP the value
     * straddles two of them, so the diff covers the 4 aligned bytes around it (still inside
     * the options area, whose length is a multiple of 4). */
    size_t at = (size_t)(value - header), start = at & ~(size_t)1, span = at == start ? 2 : 4;
    uint8_t before[4];
    memcpy(before, header + start, span);
    uint16_t clamped = rte_cpu_to_be_16(max);
    memcpy(value, &clamped, sizeof(clamped));
    uint16_t csum = tcp->cksum;
    xlb_csum_replace(&csum, before, header + start, span);
    tcp->cksum = csum;
    return true;
}
