/*
 * Ring hash's connection hash (xlb_flow_connection_hash, dataplane/flow/flow_life.c): without
 * xlb.connection_hash_key an unkeyed CRC, the same for anyone who computes it; with a key,
 * SipHash-2-4: another key gives other values (a client without the key cannot aim its
 * connections), while every snapshot, and so every host, with the same key gives the same value
 * for a connection. Either way connections one source port apart land all over the ring.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "flow/flow.h"

static struct xlb_flow_key connection(uint16_t client_port)
{
    struct xlb_flow_key k;
    memset(&k, 0, sizeof(k));
    k.family = AF_INET;
    k.proto = IPPROTO_TCP;
    k.src_port = htons(client_port);
    k.dst_port = htons(443);
    inet_pton(AF_INET, "198.18.1.2", k.src);
    inet_pton(AF_INET, "198.18.0.100", k.dst);
    return k;
}

static struct xlb_snapshot keyed(uint64_t k0, uint64_t k1)
{
    struct xlb_snapshot s;
    memset(&s, 0, sizeof(s));
    s.connection_hash_keyed = true;
    s.connection_hash_key[0] = k0;
    s.connection_hash_key[1] = k1;
    return s;
}

static void a_key_changes_every_value_and_the_same_key_gives_the_same(void **state)
{
    (void)state;
    const struct xlb_snapshot a = keyed(1, 2), a_again = keyed(1, 2), b = keyed(1, 3);
    struct xlb_snapshot unkeyed;
    memset(&unkeyed, 0, sizeof(unkeyed));
    for (uint16_t p = 40000; p < 40064; p++) {
        const struct xlb_flow_key k = connection(p);
        const uint64_t h = xlb_flow_connection_hash(&a, &k);
        assert_true(h == xlb_flow_connection_hash(&a_again, &k)); /* another host, same key */
        assert_true(h != xlb_flow_connection_hash(&b, &k));
        assert_true(h != xlb_flow_connection_hash(&unkeyed, &k));
        /* Without a snapshot, or without a key in it: the unkeyed hash. */
        assert_true(xlb_flow_connection_hash(NULL, &k) == xlb_flow_connection_hash(&unkeyed, &k));
    }
}

/* 256 connections one source port apart: every sixteenth of the ring gets some. */
static void spread_over_the_ring(const struct xlb_snapshot *snap)
{
    unsigned per_range[16] = {0};
    for (unsigned p = 0; p < 256; p++) {
        const struct xlb_flow_key k = connection((uint16_t)(40000 + p));
        per_range[xlb_flow_connection_hash(snap, &k) >> 60]++;
    }
    for (unsigned r = 0; r < 16; r++)
        if (per_range[r] == 0)
            fail_msg("no connection in ring range %u of 16", r);
}

static void one_port_apart_spreads_over_the_ring(void **state)
{
    (void)state;
    const struct xlb_snapshot k = keyed(0x0123456789abcdefu, 0xfedcba9876543210u);
    spread_over_the_ring(NULL);
    spread_over_the_ring(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_key_changes_every_value_and_the_same_key_gives_the_same),
        cmocka_unit_test(one_port_apart_spreads_over_the_ring),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
