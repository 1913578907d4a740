/*
 * Fixture of the L7 (HTTP/2) packet tests (dataplane/l7/): the NAT fixture's snapshot, flow
 * table and LB worker, with both VIPs (FIX_VIP4 and FIX_VIP6 on VIP_PORT) made L7 VIPs: each LB
 * tree gets a compiled route table (control/route_compile: virtual host "*", one prefix route
 * "/svc/" to the VIP's cluster of one backend, so every pick is deterministic) and, when asked,
 * the route's A55 session cookie. The worker's L7 state (xlb_l7_worker_create) sits in ctx->l7
 * with its clock in the fixture's TSC units.
 *
 * Frames are crafted as a Linux client and backend send them (MSS, SACK-permitted, timestamps,
 * window scale) and every frame xlb sends is compared byte for byte with the one the test
 * expects, its IP and TCP checksums verified. The expected option bytes are written here, not
 * with xlb's own writer. struct l7_conn follows a connection's numbers as the client and the
 * backend see them; the l7_* steps drive a connection through its phases and check each answer.
 * (l7_fixture.c: set-up, connections and steps; l7_frames.c: options and frames; l7_h2.c:
 * HTTP/2 bytes.)
 */
#ifndef XLB_L7_FIXTURE_H
#define XLB_L7_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "l7_h2.h"
#include "nat_fixture.h"
#include "route_compile.h"

#define L7_CLIENT_PORT   40000
#define L7_BACKEND4      "198.18.0.21"
#define L7_BACKEND6      "2001:2::21"
#define L7_BACKEND4_DEAD "198.18.0.31"
#define L7_BACKEND_PORT  50051
#define L7_SLOT4         7 /* endpoint slots */
#define L7_SLOT6         8
#define L7_CLUSTER_NAME4 "backends4"
#define L7_CLUSTER_NAME6 "backends6"
#define L7_ROUTE_PREFIX  "/svc/"
#define L7_COOKIE_NAME   "xlb-session"
#define L7_COOKIE_TTL    3600
/* The worker's clock: 1,000,012 ms at the start (a TSC of TSC_HZ counts 1,000 per ms). */
#define L7_START_TSC   (1000012345ull)
#define L7_TSC_PER_MS  (TSC_HZ / 1000)
#define L7_CLIENT_ISN  0x01020304u
#define L7_CLIENT_TS   0x70000000u /* the client's first TSval */
#define L7_BACKEND_ISN 0x0a0b0c0du
#define L7_BACKEND_TS  0x30000000u
#define L7_CLIENT_MSS  1460
#define L7_CLIENT_WS   7
#define L7_BACKEND_WS  6     /* differs from xlb's 7: windows toward the client are rescaled */
#define L7_IN_MAX      8192u /* what xlb keeps of the client's bytes before binding */
#define L7_WSCALE      7     /* what xlb offers a client that offers window scaling */
#define L7_FRAME_MAX   2048

#define L7_BACKEND_MAC                                                                             \
    {                                                                                              \
        {                                                                                          \
            0x02, 0x00, 0x00, 0x00, 0x00, 0x21                                                     \
        }                                                                                          \
    }
#define L7_BACKEND6_MAC                                                                            \
    {                                                                                              \
        {                                                                                          \
            0x02, 0x00, 0x00, 0x00, 0x00, 0x62                                                     \
        }                                                                                          \
    }

struct xlb_l7_worker;

struct l7_fixture {
    struct nat_fixture *n;
    struct xlb_l7_worker *l7;
    struct xlb_route_table *routes[2];
    char *cookie_names[1];
    struct xlb_lb_cookie_attrs cookie_attrs[1];
};

/* cmocka set-ups (*state is a struct l7_fixture): without and with the session cookie. */
int l7_setup(void **state);
int l7_setup_cookie(void **state);
/* A61: the IPv4 cluster's endpoint lists L7_BACKEND4_DEAD first, then L7_BACKEND4. */
int l7_setup_addresses(void **state);
int l7_teardown(void **state);

/* The worker's millisecond clock now (TSval of the segments xlb makes toward a client). */
uint32_t l7_now_ms(const struct l7_fixture *x);
/* Move the clock on. */
void l7_advance_ms(struct l7_fixture *x, uint32_t ms);

/* ---- segments ---- */

struct l7_seg {
    const struct rte_ether_addr *eth_src, *eth_dst;
    const char *src, *dst; /* IPv6 when it has a ':' */
    uint16_t sport, dport;
    uint32_t seq, ack;
    uint8_t flags;
    uint16_t window;
    uint8_t ttl;
    uint16_t ip_id; /* IPv4 */
    uint8_t opts[40];
    uint8_t opts_len;
    const uint8_t *payload;
    uint32_t len;
};

/* Options as Linux writes them, into s->opts. */
void opts_syn(struct l7_seg *s, uint16_t mss, bool sack, bool ts, uint32_t tsval, uint32_t tsecr,
              int wscale /* < 0: none */);
void opts_ts(struct l7_seg *s, uint32_t tsval, uint32_t tsecr);
/* NOP NOP TS, NOP NOP SACK with n blocks. */
void opts_ts_sack(struct l7_seg *s, uint32_t tsval, uint32_t tsecr, unsigned n,
                  const uint32_t *left, const uint32_t *right);

/* The frame of a segment, every length and checksum right; returns its length. */
size_t l7_frame(uint8_t *buf, const struct l7_seg *s);

/* What a TCP segment xlb sent holds. */
struct l7_out {
    bool v6;
    uint8_t flags;
    uint16_t window, sport, dport;
    uint32_t seq, ack;
    uint16_t mss;
    bool sack_ok, has_ts, has_ws;
    uint8_t ws;
    uint32_t tsval, tsecr;
    unsigned n_sack;
    uint32_t sack_left[4], sack_right[4];
    const uint8_t *payload;
    uint32_t len;
    const uint8_t *frame;
    size_t frame_len;
};

/* Send a segment through xlb_burst_process; returns how many frames xlb queued. */
unsigned l7_send(struct l7_fixture *x, const struct l7_seg *s);
/* Parse tx frame i (its checksums must be valid). */
void l7_read(struct l7_fixture *x, unsigned i, struct l7_out *out);
/* tx frame i must be `want`, byte for byte, with valid IP and TCP checksums. */
void l7_expect(struct l7_fixture *x, unsigned i, const struct l7_seg *want);
/* Free the tx batch. */
void l7_clear(struct l7_fixture *x);
uint64_t l7_event(const struct l7_fixture *x, enum xlb_event_counter event);
uint64_t l7_drop(const struct l7_fixture *x, enum xlb_drop_reason reason);

/* ---- a connection, as its client and its backend see it ---- */

struct l7_conn {
    bool v6;
    uint16_t port;       /* the client's */
    uint32_t c_isn;      /* the client's ISN */
    uint32_t c_seq;      /* the client's next sequence number */
    uint32_t c_tsval;    /* the client's TSval in its next segment */
    uint32_t cookie;     /* xlb's ISN toward the client (the SYN cookie) */
    uint32_t x_seq;      /* the next sequence number the client expects from the VIP */
    uint32_t x_tsval;    /* the latest TSval the client got: its TSecr */
    uint16_t snat_port;  /* xlb's port toward the backend */
    uint32_t b_seq;      /* the backend's next sequence number */
    uint32_t b_tsval;    /* the backend's latest TSval */
    uint32_t b_tsecr;    /* what the backend echoes: the client's TSval as xlb passed it */
    uint32_t stripped;   /* client bytes xlb cut from the replay */
    uint32_t ts_add;     /* backend TSval + ts_add = TSval toward the client */
    const char *backend; /* the backend address segments use, NULL: the fixture's (A61) */
};

void l7_conn_init(struct l7_conn *c, bool v6);

/* A segment from the client (window 502, TTL 61, IP ID 0x1111; TS: its c_tsval, echoing
 * x_tsval; c_tsval then moves on), or from the backend (window 1000, TTL 62, IP ID 0x2222;
 * TS: b_tsval, echoing b_tsecr). */
struct l7_seg l7_from_client(struct l7_conn *c, uint8_t flags, uint32_t seq, uint32_t ack,
                             const uint8_t *payload, uint32_t len);
struct l7_seg l7_from_backend(struct l7_conn *c, uint8_t flags, uint32_t seq, uint32_t ack,
                              const uint8_t *payload, uint32_t len);
/* A segment xlb makes itself, toward the client or toward the backend (TTL 64, IP ID 0, DF;
 * no options: the caller adds them). */
struct l7_seg l7_by_xlb_to_client(const struct l7_conn *c, uint8_t flags, uint32_t seq,
                                  uint32_t ack, uint16_t window, const uint8_t *payload,
                                  uint32_t len);
struct l7_seg l7_by_xlb_to_backend(const struct l7_conn *c, uint8_t flags, uint32_t seq,
                                   uint32_t ack, uint16_t window, const uint8_t *payload,
                                   uint32_t len);
/* A client (backend) segment as xlb passes it on: the same frame, addressed SNAT -> backend
 * (VIP -> client) from the port's MAC. Numbers and options are the caller's to translate. */
struct l7_seg l7_spliced_to_backend(const struct l7_conn *c, struct l7_seg s);
struct l7_seg l7_spliced_to_client(const struct l7_conn *c, struct l7_seg s);

/* The window xlb announces while receiving: the room left of its 8 KiB, scaled. */
uint16_t l7_receive_window(const struct l7_conn *c);
/* The same once binding has cut `stripped` bytes (frames meant for xlb) from what it holds. */
uint16_t l7_window_after_cut(const struct l7_conn *c, uint32_t stripped);

/* 1. The SYN (MSS 1460, SACK, TS, WS 7): exactly one SYN-ACK with the cookie; no flow. */
void l7_syn(struct l7_fixture *x, struct l7_conn *c);
/* 2. The ACK returning the cookie, carrying `hello` (may be empty): xlb answers ACK + its
 * SETTINGS (9 bytes). */
void l7_hello(struct l7_fixture *x, struct l7_conn *c, const uint8_t *hello, uint32_t len);
/* 3. A client segment completing the first request (it acknowledges everything xlb sent):
 * xlb ACKs the client and sends the backend its SYN (client ISN, client options, from SNAT).
 * stripped: the client bytes so far that are not replayed. */
void l7_request(struct l7_fixture *x, struct l7_conn *c, const uint8_t *data, uint32_t len,
                uint32_t stripped);
/* 3b. The backend's SYN-ACK: xlb replays exactly `replay` (at most one MSS). */
void l7_backend_accepts(struct l7_fixture *x, struct l7_conn *c, const uint8_t *replay,
                        uint32_t len);

/* Steps 1 to 3b for a first request on stream 1 (POST `path`, with a "cookie" field when not
 * NULL) from `peer`'s deflater: the client's hello (preface, SETTINGS), then SETTINGS ACK and
 * HEADERS; the backend accepts and gets the replay (hello and HEADERS). */
void l7_establish(struct l7_fixture *x, struct l7_conn *c, struct h2_peer *peer, const char *path,
                  const char *cookie);

/* Spliced, in order, everything acknowledged: a backend segment must reach the client with
 * its seq in the client's space (x_seq), its ACK plus what was cut, TSval + ts_add, its window
 * rescaled from the backend's scale to xlb's, the payload untouched; a client segment must reach
 * the backend with seq less what was cut, its ACK in the backend's space, TSecr less ts_add. */
void l7_pass_to_client(struct l7_fixture *x, struct l7_conn *c, uint8_t flags,
                       const uint8_t *payload, uint32_t len);
void l7_pass_to_backend(struct l7_fixture *x, struct l7_conn *c, uint8_t flags,
                        const uint8_t *payload, uint32_t len);

/* tx frame i: backend segment `in` spliced to the client at client seq `seq` with these flags,
 * carrying `payload` (ACK + stripped, TSval + ts_add, the window rescaled). */
void l7_expect_to_client(struct l7_fixture *x, const struct l7_conn *c, unsigned i,
                         const struct l7_seg *in, uint32_t seq, uint8_t flags,
                         const uint8_t *payload, uint32_t len);
/* `in` with the k bytes of `field` inserted at offset `at`, the frame header at frame_at grown
 * by k: what the client must get when xlb inserts its Set-Cookie. */
void l7_with_field(struct h2_bytes *out, const struct h2_bytes *in, uint32_t frame_at, uint32_t at,
                   const uint8_t *field, uint32_t k);

/* The client's flow (NULL when none). */
struct xlb_flow *l7_flow(struct l7_fixture *x, const struct l7_conn *c);

#endif
