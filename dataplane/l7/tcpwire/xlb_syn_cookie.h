/*
 * SYN cookies for the L7 mode: xlb answers a client's SYN without keeping state, and the
 * client's ACK proves that it received the SYN-ACK and gives back what xlb needs to remember
 * of the SYN (MSS, and with timestamps window scale and SACK-permitted).
 *
 * The SYN-ACK's ISN, least significant bit first:
 *
 *   bits 0-2   MSS index into an 8-entry table (the largest entry <= the client's MSS)
 *   bit  3     parity of the time counter, counter = now_ms / XLB_SYN_COOKIE_PERIOD_MS
 *   bit  4     parity of the key generation that signed (so check computes one hash, not two)
 *   bit  5     the SYN-ACK carried a timestamp, so an echoed TSecr holds option bits
 *   bits 6-31  26 bits of SipHash-2-4(key[generation & 1]; family, addresses, ports,
 *              client ISN, the full counter, bits 0-5)
 *
 * Why: the hash covers every visible field, so none of them can be altered; the counter
 * parity lets check name the one counter to try (now's or the previous one), and as the hash
 * covers the full counter a cookie two or more periods old reconstructs the wrong counter and
 * fails -- a cookie is always accepted within one period (64 s) of its making and never after
 * two (128 s), the Linux rule. Every value of bits 0-5 decodes to something valid, so they
 * help no forger: a blind attacker (one who does not see the SYN-ACK) passes with probability
 * 2^-26 per forged ACK, whether or not it adds a timestamp. That is 2^2 better than the 2^-24
 * this design must meet, and like any 32-bit cookie it is probabilistic: at 10 million forged
 * ACKs per second expect one accepted handshake every ~7 s, each costing a backend
 * connection attempt but never more.
 *
 * With timestamps, the SYN-ACK's TSval's low 8 bits (bits 0-3 window scale or 15 for none,
 * bit 4 SACK-permitted, bits 5-7 three more bits of the same hash, selected by bits 0-4) are
 * what the client echoes in TSecr. The check bits make a TSecr that is not our TSval (a
 * middlebox rewriting timestamps, a client bug) fail 7 times in 8, and a TSecr newer than
 * now_ms always fails. They are no secret from the client, which sees its TSval: a client
 * can only misstate its own options, which it could as well have sent in its SYN.
 *
 * Keys: the current generation signs, both validate; a cookie survives one rotation and dies
 * at the second. Rotate at least every few counter periods so that a key is short-lived.
 * Worker-safe: no allocation, no locks, one SipHash per call; the keys are the caller's to
 * publish to the workers.
 */
#ifndef XLB_SYN_COOKIE_H
#define XLB_SYN_COOKIE_H

#include <stdbool.h>
#include <stdint.h>

#define XLB_SYN_COOKIE_PERIOD_MS 64000u /* one counter tick; cookies live 1 to 2 of them */
#define XLB_SYN_COOKIE_HASH_BITS 26u
#define XLB_SYN_COOKIE_N_MSS     8u

/* The tuple of the client's SYN as it arrived (client -> VIP). Addresses IPv4 in the first 4
 * bytes, rest zero (for AF_INET the rest is not read). */
struct xlb_syn_cookie_tuple {
    uint8_t family; /* AF_INET or AF_INET6 */
    uint8_t client[16], vip[16];
    uint16_t client_port, vip_port; /* network order */
};

/* What the cookie carries of the client's SYN. */
struct xlb_syn_cookie_opts {
    /* One of 536, 1220, 1360, 1440, 1460, 4312, 8940, 8960: the largest <= the client's. A
     * client MSS below 536 (or 0, no MSS option) gives 536, the size every IPv4 host must
     * accept (RFC 9293 section 3.7.1); the engine may cap it at the client's own value. */
    uint16_t mss;
    uint8_t wscale; /* when has_wscale; above 14 is treated as 14 (RFC 7323) */
    bool has_wscale, sack_ok, has_ts;
};

/* Secrets: two generations, rotated by the caller (the current one signs, both validate). */
struct xlb_syn_cookie_keys {
    uint64_t key[2][2];  /* SipHash keys: [generation & 1] */
    uint32_t generation; /* bumps at each rotation */
};

/* Both generations start with the seed's key: the hash covers the generation bit, so the two
 * still sign apart, and an ACK naming generation 1 is no easier to forge. */
void xlb_syn_cookie_keys_init(struct xlb_syn_cookie_keys *k, const uint8_t seed[16]);

/* The next generation gets the fresh key and starts signing; the previous one still
 * validates; the one before that is forgotten. */
void xlb_syn_cookie_rotate(struct xlb_syn_cookie_keys *k, const uint8_t fresh[16]);

/* The table entry a client MSS encodes as (see struct xlb_syn_cookie_opts). */
uint16_t xlb_syn_cookie_mss_round(uint16_t client_mss);

/*
 * A SYN-ACK's ISN for a client's SYN (client_isn = its seq), and the options xlb sends back.
 * now_ms: a millisecond clock (the engine's TCP timestamp clock). When in->has_ts, *tsval_out
 * is the TSval to put in the SYN-ACK: the option bits in its low 8 bits, and between 511 ms
 * behind (uint32_t)now_ms and (uint32_t)now_ms (in mod 2^32 order), so later TSvals from the
 * same clock do not go backwards (so the handshake's TSecr is no RTT sample). Without
 * timestamps *tsval_out is 0 and only the MSS survives (wscale and SACK are lost, as with
 * Linux cookies). *out reports what the cookie will give back.
 */
uint32_t xlb_syn_cookie_make(const struct xlb_syn_cookie_keys *k,
                             const struct xlb_syn_cookie_tuple *t, uint32_t client_isn,
                             const struct xlb_syn_cookie_opts *in, uint64_t now_ms,
                             uint32_t *tsval_out, struct xlb_syn_cookie_opts *out);

/*
 * The client's ACK completing the handshake: seq = client_isn + 1, ack = cookie ISN + 1, and
 * its TSecr (has_ts when the ACK carries a timestamp). Returns 0 with *out = the options the
 * cookie encoded, or -1 when the cookie is not one of ours (including a family other than
 * AF_INET/AF_INET6), is older than 2 counter periods, or the timestamp bits are inconsistent.
 * An ACK without a timestamp whose SYN-ACK had one is accepted with has_ts = false and
 * neither wscale nor SACK (Linux decodes options only from a TSecr that is present); an ACK
 * with a timestamp whose SYN-ACK had none likewise has has_ts = false (RFC 7323: timestamps
 * were not negotiated). Validates with both key generations.
 */
int xlb_syn_cookie_check(const struct xlb_syn_cookie_keys *k, const struct xlb_syn_cookie_tuple *t,
                         uint32_t seq, uint32_t ack, bool has_ts, uint32_t tsecr, uint64_t now_ms,
                         struct xlb_syn_cookie_opts *out);

/* Tried by xlb_syn_cookie_check_flight: segments of the first flight it looks back over, and
 * the least payload for which it looks back at all (a full segment at the smallest MSS). */
#define XLB_SYN_COOKIE_FLIGHT_SEGS    4u
#define XLB_SYN_COOKIE_FLIGHT_MIN_LEN 512u

/*
 * xlb_syn_cookie_check for any segment of the client's first flight: when the handshake's ACK
 * and the flight's first segments were lost, the first to arrive carries seq = client_isn + 1
 * + i * len (segments of len bytes). Tries i = 0 .. XLB_SYN_COOKIE_FLIGHT_SEGS - 1 when len
 * is at least XLB_SYN_COOKIE_FLIGHT_MIN_LEN (i = 0 alone otherwise): at most that many hashes
 * for an ACK that is not one of ours. Returns 0 with *client_isn and *out, or -1.
 */
int xlb_syn_cookie_check_flight(const struct xlb_syn_cookie_keys *k,
                                const struct xlb_syn_cookie_tuple *t, uint32_t seq, uint32_t len,
                                uint32_t ack, bool has_ts, uint32_t tsecr, uint64_t now_ms,
                                uint32_t *client_isn, struct xlb_syn_cookie_opts *out);

#endif
