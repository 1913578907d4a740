/*
 * Packet fixtures for the flow table's hash against clients who choose their keys
 * (dataplane/flow_table/xlb_flow_table.c). The table used to hash with CRC32C from a secret
 * start value; CRC is linear, so keys whose difference lies in its kernel collide whatever the
 * start, and 17 such SYNs filled their two buckets and made the table evict established flows.
 * The keys are derived here by solving the CRC's linear map, then sent as SYNs.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rte_hash_crc.h>
#include <rte_random.h>
#include <rte_tcp.h>

#include "nat/nat.h"
#include "nat_segments.h"

#define TABLE_FLOWS 200 /* 32 buckets of 8, no extendable buckets (xlb_flow_table_needs_ext) */
#define N_ATTACK    24  /* more than the 16 slots of a key's two buckets */
#define FREE_BITS   64  /* the client address's low 8 bytes, inside 2001:2::/48 */

struct attack {
    struct xlb_flow_hkey keys[N_ATTACK];
};

/* The old hash. Copied into words first: rte_hash_crc reads the key as uint64_t, which may not
 * alias the struct under -O2 (the old code passed 8-byte-aligned keys it had just written). */
static uint32_t crc_of(const struct xlb_flow_hkey *h, uint32_t init)
{
    uint64_t words[3];
    memcpy(words, h, sizeof(words));
    return rte_hash_crc(words, sizeof(words), init);
}

static void flip_bit(struct xlb_flow_hkey *h, unsigned bit)
{
    h->client[8 + bit / 8] ^= (uint8_t)(1u << (bit % 8));
}

/*
 * N_ATTACK keys that collide under rte_hash_crc for every start value: for a fixed length,
 * crc(init, a) ^ crc(init, b) depends on a ^ b only, linearly. Each of the FREE_BITS bits'
 * effect on the CRC is a 32-bit column; Gaussian elimination finds combinations of bits whose
 * columns cancel (at least FREE_BITS - 32 of them), and the base key changed by any sum of
 * those collides with it.
 */
static void derive_colliding_keys(struct attack *a)
{
    struct xlb_flow_hkey base;
    memset(&base, 0, sizeof(base));
    assert_int_equal(inet_pton(AF_INET6, "2001:2::", base.client), 1);
    base.client_port = htons(CLIENT_PORT);
    base.vip_port = htons(VIP_PORT);
    base.vip = XLB_FLOW_VIP6_MARK; /* the same in every key: only the difference matters */

    uint32_t col[FREE_BITS];
    uint64_t combo[FREE_BITS]; /* which free bits each reduced column is the sum of */
    for (unsigned i = 0; i < FREE_BITS; i++) {
        struct xlb_flow_hkey k = base;
        flip_bit(&k, i);
        col[i] = crc_of(&k, 0) ^ crc_of(&base, 0);
        combo[i] = UINT64_C(1) << i;
    }
    /* Row-reduce: each pivot bit is cleared from every later column. */
    unsigned row = 0;
    for (unsigned bit = 0; bit < 32 && row < FREE_BITS; bit++) {
        unsigned p = row;
        while (p < FREE_BITS && !(col[p] >> bit & 1))
            p++;
        if (p == FREE_BITS)
            continue;
        uint32_t tc = col[p];
        uint64_t tm = combo[p];
        col[p] = col[row];
        combo[p] = combo[row];
        col[row] = tc;
        combo[row] = tm;
        for (unsigned j = row + 1; j < FREE_BITS; j++)
            if (col[j] >> bit & 1) {
                col[j] ^= col[row];
                combo[j] ^= combo[row];
            }
        row++;
    }
    /* Columns row.. are zero: the kernel. Five of them give 32 colliding keys. */
    assert_true(FREE_BITS - row >= 5);
    for (unsigned k = 0; k < N_ATTACK; k++) {
        a->keys[k] = base;
        for (unsigned v = 0; v < 5; v++) {
            assert_int_equal(col[row + v], 0);
            if (!(k >> v & 1))
                continue;
            for (unsigned i = 0; i < FREE_BITS; i++)
                if (combo[row + v] >> i & 1)
                    flip_bit(&a->keys[k], i);
        }
    }
}

static unsigned distinct(const uint32_t *v, unsigned n)
{
    unsigned d = 0;
    for (unsigned i = 0; i < n; i++) {
        bool seen = false;
        for (unsigned j = 0; j < i && !seen; j++)
            seen = v[j] == v[i];
        d += !seen;
    }
    return d;
}

static int big_table_setup(void **state)
{
    assert_false(xlb_flow_table_needs_ext(TABLE_FLOWS));
    *state = nat_fixture_two_clusters("hashatk", TABLE_FLOWS, 0, 0);
    return 0;
}

/* ---- tests ---- */

static void crc_colliding_keys_get_different_signatures(void **state)
{
    struct nat_fixture *n = *state;
    struct attack a;
    derive_colliding_keys(&a);
    uint32_t sig[N_ATTACK];
    /* What the old scheme did, whatever its secret start: one signature for all. */
    for (int round = 0; round < 4; round++) {
        uint32_t init = (uint32_t)rte_rand();
        for (unsigned k = 0; k < N_ATTACK; k++)
            sig[k] = crc_of(&a.keys[k], init);
        assert_int_equal(distinct(sig, N_ATTACK), 1);
    }
    /* The table's hash: 24 keyed 32-bit values, which a repeat among would be a 1 in 10^7
     * chance. */
    for (unsigned k = 0; k < N_ATTACK; k++)
        sig[k] = xlb_flow_table_hash(n->flows, &a.keys[k]);
    assert_int_equal(distinct(sig, N_ATTACK), N_ATTACK);
}

static void syns_on_crc_colliding_keys_evict_no_established_flow(void **state)
{
    struct nat_fixture *n = *state;
    for (uint16_t i = 0; i < FLOWS; i++) {
        client_syn4(n, (uint16_t)(CLIENT_PORT + i), (uint16_t)(PORT_BASE + i));
        backend_syn_ack4(n, (uint16_t)(PORT_BASE + i), (uint16_t)(CLIENT_PORT + i));
    }
    struct attack a;
    derive_colliding_keys(&a);
    for (unsigned k = 0; k < N_ATTACK; k++) {
        char client[INET6_ADDRSTRLEN];
        assert_non_null(inet_ntop(AF_INET6, a.keys[k].client, client, sizeof(client)));
        struct seg syn = from_client6(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
        syn.src = client;
        uint8_t frame[256];
        size_t len = tcp_frame(frame, &syn);
        fixture_send(n->f, frame, len);
    }
    /* The table has room for all: every SYN got its flow, none took an established one's. */
    assert_int_equal(n->f->stats.events[XLB_EVENT_FLOWS_EVICTED], 0);
    assert_int_equal(n->flows->n_used, FLOWS + N_ATTACK);
    for (uint16_t i = 0; i < FLOWS; i++) {
        struct seg data = from_client4((uint16_t)(CLIENT_PORT + i),
                                       RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, PAYLOAD_TEXT);
        data.ack = SEQ_BACKEND + 1;
        struct seg out = to_backend(data, (uint16_t)(PORT_BASE + i));
        forward(n, &data, &out);
    }
}

/*
 * Keys whose two rte_hash buckets are both among {A, B}, found by trying client addresses
 * against the table's own (keyed) hash: rte_hash 22.11 puts a key of signature sig in bucket
 * sig & mask or (sig ^ sig >> 16) & mask. Past 16 such keys the pair has no slot left, whatever
 * the rest of the table holds. A client cannot do this without the secret; the test can.
 */
/* Whether a flow the table holds has bucket a or b as one of its two: it may sit in one of
 * the pair's 16 slots. One confined to {a, b} stays there whatever the cuckoo moves (the keyed
 * hash puts one there now and then), and about one run in 60 even one with a bucket elsewhere
 * kept its slot, so the attack takes a pair no held flow touches. */
static bool pair_holds_a_flow(const struct nat_fixture *n, uint32_t mask, uint32_t a, uint32_t b)
{
    const struct xlb_flow_table *t = n->flows;
    for (uint32_t i = 0; i < t->capacity; i++) {
        if (!t->flows[i].used)
            continue;
        uint32_t sig = xlb_flow_table_hash(t, xlb_flow_stored_key(t, &t->flows[i]));
        uint32_t prim = sig & mask, sec = (prim ^ (sig >> 16)) & mask;
        if (prim == a || prim == b || sec == a || sec == b)
            return true;
    }
    return false;
}

static unsigned keys_confined_to_two_buckets(struct nat_fixture *n, struct xlb_flow_key *out,
                                             unsigned want)
{
    const uint32_t mask = rte_align32pow2(TABLE_FLOWS) / 8 - 1;
    uint32_t a = UINT32_MAX, b = UINT32_MAX;
    unsigned got = 0;
    for (uint32_t i = 1; i < (1u << 22) && got < want; i++) {
        struct xlb_flow_key key = {.family = AF_INET6,
                                   .proto = IPPROTO_TCP,
                                   .src_port = htons(CLIENT_PORT),
                                   .dst_port = htons(VIP_PORT)};
        assert_int_equal(inet_pton(AF_INET6, "2001:2::", key.src), 1);
        assert_int_equal(inet_pton(AF_INET6, FIX_VIP6, key.dst), 1);
        key.src[12] = (uint8_t)(i >> 24);
        key.src[13] = (uint8_t)(i >> 16);
        key.src[14] = (uint8_t)(i >> 8);
        key.src[15] = (uint8_t)i;
        struct xlb_flow_hkey h;
        assert_true(xlb_flow_hkey_of(&n->flows->vip6, &key, &h));
        uint32_t sig = xlb_flow_table_hash(n->flows, &h);
        uint32_t prim = sig & mask, sec = (prim ^ (sig >> 16)) & mask;
        if (prim == sec)
            continue;
        if (a == UINT32_MAX) {
            if (pair_holds_a_flow(n, mask, prim, sec))
                continue; /* its 16 slots are not all the attack's to fill */
            a = prim;
            b = sec;
        }
        if ((prim == a && sec == b) || (prim == b && sec == a))
            out[got++] = key;
    }
    return got;
}

static void full_bucket_pair_drops_the_syn_and_evicts_nothing(void **state)
{
    struct nat_fixture *n = *state;
    for (uint16_t i = 0; i < FLOWS; i++) {
        client_syn4(n, (uint16_t)(CLIENT_PORT + i), (uint16_t)(PORT_BASE + i));
        backend_syn_ack4(n, (uint16_t)(PORT_BASE + i), (uint16_t)(CLIENT_PORT + i));
    }
    /* One IPv6 flow first, so that the VIP has its number in the keys computed below. */
    struct seg first = from_client6(CLIENT_PORT + 1, RTE_TCP_SYN_FLAG, NULL);
    struct seg first_out = to_backend(first, PORT_BASE);
    forward(n, &first, &first_out);

    struct xlb_flow_key keys[N_ATTACK];
    assert_int_equal(keys_confined_to_two_buckets(n, keys, N_ATTACK), N_ATTACK);
    unsigned used = n->flows->n_used;
    for (unsigned k = 0; k < N_ATTACK; k++) {
        char client[INET6_ADDRSTRLEN];
        assert_non_null(inet_ntop(AF_INET6, keys[k].src, client, sizeof(client)));
        struct seg syn = from_client6(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
        syn.src = client;
        uint8_t frame[256];
        size_t len = tcp_frame(frame, &syn);
        fixture_send(n->f, frame, len);
    }
    /* 16 slots for 24 keys: the rest are dropped as such, though the table has room, and no
     * established flow makes way for them. */
    uint64_t bucket_full = fixture_drops(n->f, XLB_DROP_FLOW_HASH_BUCKET_FULL);
    assert_int_equal(bucket_full, N_ATTACK - 16);
    assert_int_equal(fixture_drops(n->f, XLB_DROP_FLOW_TABLE_FULL), 0);
    assert_int_equal(n->f->stats.events[XLB_EVENT_FLOWS_EVICTED], 0);
    assert_int_equal(n->flows->n_used, used + N_ATTACK - bucket_full);
    for (uint16_t i = 0; i < FLOWS; i++) {
        struct seg data = from_client4((uint16_t)(CLIENT_PORT + i),
                                       RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, PAYLOAD_TEXT);
        data.ack = SEQ_BACKEND + 1;
        struct seg out = to_backend(data, (uint16_t)(PORT_BASE + i));
        forward(n, &data, &out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(crc_colliding_keys_get_different_signatures,
                                        big_table_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(syns_on_crc_colliding_keys_evict_no_established_flow,
                                        big_table_setup, nat_teardown),
        cmocka_unit_test_setup_teardown(full_bucket_pair_drops_the_syn_and_evicts_nothing,
                                        big_table_setup, nat_teardown),
    };
    return cmocka_run_group_tests_name("flow_hash_attack", tests, NULL, NULL);
}
