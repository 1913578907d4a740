/*
 * Happy eyeballs over one endpoint's addresses (gRPC A61 and A62, after RFC 8305): a
 * connection attempt to the endpoint tries its addresses in order; the next one starts when
 * the latest attempt fails, or when it has not connected within the Connection Attempt Delay
 * (250 ms); the first to connect wins and the others are abandoned; the endpoint has failed
 * only when every attempt has.
 *
 * The decisions only, on a clock passed in: the engine (dataplane/stream/stream_eyeballs.c)
 * makes the connections. No allocation, bounded work (at most XLB_EYEBALLS_MAX addresses).
 */
#ifndef XLB_EYEBALLS_H
#define XLB_EYEBALLS_H

#include <stdbool.h>
#include <stdint.h>

#include "xlb_limits.h"

/* A62's Connection Attempt Delay. */
#define XLB_EYEBALLS_DELAY_MS 250u
#define XLB_EYEBALLS_MAX      XLB_MAX_ENDPOINT_ADDRESSES
/* "No address": none to try now. */
#define XLB_EYEBALLS_NONE 0xffu

struct xlb_eyeballs {
    uint8_t n;       /* addresses of the endpoint */
    uint8_t usable;  /* bit k: address k may be tried (xlb can reach its family) */
    uint8_t live;    /* bit k: its attempt is in progress */
    uint8_t last;    /* the address tried last, XLB_EYEBALLS_NONE before the first */
    uint8_t won;     /* the address connected to, XLB_EYEBALLS_NONE until one is */
    uint64_t due_ms; /* when the next address starts unless one connects first; 0: none */
};

/* The first attempt at now_ms over n addresses of which those in the usable mask may be tried:
 * the address to connect to, or XLB_EYEBALLS_NONE when none may be. */
uint32_t xlb_eyeballs_begin(struct xlb_eyeballs *eb, uint32_t n, uint32_t usable, uint64_t now_ms);

/* On the timer: the address whose attempt starts now (the delay passed and none connected),
 * or XLB_EYEBALLS_NONE. */
uint32_t xlb_eyeballs_due(struct xlb_eyeballs *eb, uint64_t now_ms);

/* The attempt to address k failed (or could not be made): the address to try at once when k
 * was the latest attempt and one is left, else XLB_EYEBALLS_NONE. */
uint32_t xlb_eyeballs_failed(struct xlb_eyeballs *eb, uint32_t k, uint64_t now_ms);

/* The attempt to address k connected: it wins. Returns the mask of the attempts still in
 * progress, for the caller to abandon; no address starts after this. */
uint32_t xlb_eyeballs_connected(struct xlb_eyeballs *eb, uint32_t k);

/* Every attempt failed: none in progress, none left to try, none connected. */
static inline bool xlb_eyeballs_over(const struct xlb_eyeballs *eb)
{
    return eb->live == 0 && eb->due_ms == 0 && eb->won == XLB_EYEBALLS_NONE;
}

#endif
