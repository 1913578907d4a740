/*
 * Hostile frame generator shared by the in-process robustness test and the live injector:
 * pure noise, valid templates with a few bytes flipped, and truncated templates, from a
 * seeded generator so any failure can be replayed.
 */
#ifndef XLB_HOSTILE_FRAMES_H
#define XLB_HOSTILE_FRAMES_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#define HOSTILE_MAX_FRAME     1518
#define HOSTILE_MAX_TEMPLATES 16

struct hostile_gen {
    uint64_t state;
    uint8_t dst_mac[6]; /* noise frames are addressed here half of the time */
    unsigned n_templates;
    size_t len[HOSTILE_MAX_TEMPLATES];
    const uint8_t *frame[HOSTILE_MAX_TEMPLATES];
    /* Shortest frame to produce (a kernel socket cannot send less than a header). */
    size_t min_len;
};

void hostile_init(struct hostile_gen *g, uint64_t seed, const uint8_t dst_mac[6]);
/* Register a valid frame to mutate; the bytes must outlive the generator. */
void hostile_add_template(struct hostile_gen *g, const uint8_t *frame, size_t len);
/* Write the next frame into out (HOSTILE_MAX_FRAME bytes); returns its length. */
size_t hostile_next(struct hostile_gen *g, uint8_t *out);
uint64_t hostile_random(struct hostile_gen *g);

#endif
