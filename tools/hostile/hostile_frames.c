#include "hostile_frames.h"

#include <string.h>

uint64_t hostile_random(struct hostile_gen *g)
{
    /* xorshift64*: fast and reproducible from the seed. */
    g->state ^= g->state >> 12;
    g->state ^= g->state << 25;
    g->state ^= g->state >> 27;
    return g->state * 0x2545f4914f6cdd1dull;
}

void hostile_init(struct hostile_gen *g, uint64_t seed, const uint8_t dst_mac[6])
{
    memset(g, 0, sizeof(*g));
    g->state = seed ? seed : 0x9e3779b97f4a7c15ull;
    memcpy(g->dst_mac, dst_mac, 6);
}

void hostile_add_template(struct hostile_gen *g, const uint8_t *frame, size_t len)
{
    if (g->n_templates == HOSTILE_MAX_TEMPLATES || len > HOSTILE_MAX_FRAME)
        return;
    g->frame[g->n_templates] = frame;
    g->len[g->n_templates++] = len;
}

static size_t noise(struct hostile_gen *g, uint64_t r, uint8_t *out)
{
    /* Ethertypes that lead into xlb's parsers: ARP, IPv4, IPv6, 802.1Q. */
    static const uint8_t types[4][2] = {{0x08, 0x06}, {0x08, 0x00}, {0x86, 0xdd}, {0x81, 0x00}};
    size_t len = (size_t)(hostile_random(g) % (HOSTILE_MAX_FRAME + 1));
    for (size_t i = 0; i < len; i++)
        out[i] = (uint8_t)hostile_random(g);
    if (len >= 14 && (r & 0x10)) {
        memcpy(out, g->dst_mac, 6);
        memcpy(out + 12, types[(r >> 8) % 4], 2);
    }
    return len;
}

static size_t mutate(struct hostile_gen *g, uint64_t r, uint8_t *out, bool truncate)
{
    unsigned which = (unsigned)((r >> 16) % g->n_templates);
    size_t len = g->len[which];
    memcpy(out, g->frame[which], len);
    if (truncate)
        return (size_t)(hostile_random(g) % (len + 1));
    unsigned flips = 1 + (unsigned)((r >> 24) % 4);
    for (unsigned i = 0; i < flips; i++)
        out[hostile_random(g) % len] ^= (uint8_t)(1 + hostile_random(g) % 255);
    return len;
}

size_t hostile_next(struct hostile_gen *g, uint8_t *out)
{
    uint64_t r = hostile_random(g);
    unsigned kind = g->n_templates ? r % 4 : 0;
    size_t len = kind == 0 ? noise(g, r, out) : mutate(g, r, out, kind == 3);
    if (len < g->min_len) {
        memset(out + len, 0, g->min_len - len);
        len = g->min_len;
    }
    return len;
}
