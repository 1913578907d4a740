/*
 * Packet fixtures for connections picked up without their flow (dataplane/nat/nat_new.c, new_flow):
 * on an L4 VIP whose cluster picks by hash (ring hash or Maglev), a client segment of a connection
 * this process has no flow for (xlbd restarted, or took over another host's addresses) goes to the
 * backend and from the SNAT port its SYN got, so the backend sees the same peer. A "restart"
 * here is a second fixture built from the same configuration.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rte_tcp.h>

#include "nat/nat.h"
#include "nat_segments.h"

#define RESUME_FLOWS 128 /* a half-open pool of 32 */
#define N_BACKENDS   3
#define CONNECTIONS  20

static const struct nat_backend backends[] = {
    {BACKEND4, NAT_BACKEND_MAC},
    {"198.18.0.22", {{0x02, 0, 0, 0, 0, 0x22}}},
    {"198.18.0.23", {{0x02, 0, 0, 0, 0, 0x23}}},
    {BACKEND6, NAT_BACKEND6_MAC},
};

static struct nat_fixture *create_with(enum xlb_lb_policy policy)
{
    static const char *const ep4[] = {BACKEND4 ":9001", "198.18.0.22:9001", "198.18.0.23:9001"};
    static const char *const ep6[] = {"[" BACKEND6 "]:9001"};
    static const uint32_t slots4[] = {SLOT4, 10, 11}, slot6[] = {SLOT6};
    const struct nat_cluster clusters[] = {
        {"hashed4", policy, ep4, N_BACKENDS, slots4, CLUSTER4, 1, 0},
        {"hashed6", policy, ep6, 1, slot6, CLUSTER6, 2, 0},
    };
    const struct nat_config cfg = {
        .name = "resume",
        .flows = RESUME_FLOWS,
        .port_count = PORT_COUNT,
        .start_tsc = START_TSC,
        .lb_seed = 7,
        .backends = backends,
        .n_backends = RTE_DIM(backends),
        .clusters = clusters,
        .n_clusters = 2,
    };
    return nat_fixture_create(&cfg);
}

static struct nat_fixture *create(void)
{
    return create_with(XLB_LB_RING_HASH);
}

static int setup(void **state)
{
    *state = create();
    return 0;
}

static int teardown(void **state)
{
    nat_fixture_destroy(*state);
    return 0;
}

/* The index in backends[] of a flow's backend. */
static unsigned backend_of(const struct xlb_flow *f, bool v6)
{
    for (unsigned b = 0; b < RTE_DIM(backends); b++) {
        uint8_t bytes[16];
        bool b6 = strchr(backends[b].addr, ':') != NULL;
        assert_int_equal(inet_pton(b6 ? AF_INET6 : AF_INET, backends[b].addr, bytes), 1);
        if (b6 == v6 && memcmp(bytes, f->backend, v6 ? 16 : 4) == 0)
            return b;
    }
    fail_msg("a flow to no backend of the fixture");
    return 0;
}

/* Send a client segment that must reach its flow's backend from its flow's SNAT port, byte for
 * byte; returns the flow. */
static struct xlb_flow *forward_to_its_backend(struct nat_fixture *n, const struct seg *in)
{
    uint8_t frame[256];
    size_t len = tcp_frame(frame, in);
    unsigned before = n->f->ctx.tx[0].n;
    assert_int_equal(fixture_send(n->f, frame, len), 1);
    struct xlb_flow *f = client_flow(n, in->src, in->sport);
    assert_non_null(f);
    const struct nat_backend *b = &backends[backend_of(f, is_v6(in))];
    struct seg out = to_backend(*in, f->snat_port);
    out.dst = b->addr;
    out.eth_dst = &b->mac;
    check_forwarded(n, before, &out);
    return f;
}

/* The backend's answer on a flow, as its backend sends it. */
static struct seg backend_answer(const struct xlb_flow *f, uint8_t flags, const char *payload)
{
    const struct nat_backend *b = &backends[backend_of(f, false)];
    struct seg s = from_backend4(f->snat_port, flags, payload);
    s.src = b->addr;
    s.eth_src = &b->mac;
    return s;
}

struct placement {
    unsigned backend;
    uint8_t snat_index;
    uint16_t snat_port;
};

/*
 * The property itself: the connections' SYNs go through one process; a second one, built from
 * the same configuration, gets only their later segments, in another order, and sends each to
 * the backend and from the SNAT address and port its SYN got.
 */
static void picked_up_where_their_syns_put_them(void **state, enum xlb_lb_policy policy)
{
    nat_fixture_destroy(*state);
    struct nat_fixture *n = *state = create_with(policy);
    struct placement syn[CONNECTIONS];
    unsigned per_backend[N_BACKENDS] = {0};
    for (uint16_t i = 0; i < CONNECTIONS; i++) {
        struct seg s = from_client4((uint16_t)(CLIENT_PORT + i), RTE_TCP_SYN_FLAG, NULL);
        struct xlb_flow *f = forward_to_its_backend(n, &s);
        syn[i] = (struct placement){backend_of(f, false), f->snat_index, f->snat_port};
        per_backend[syn[i].backend]++;
    }
    struct seg syn6 = from_client6(CLIENT_PORT, RTE_TCP_SYN_FLAG, NULL);
    uint16_t syn6_port = forward_to_its_backend(n, &syn6)->snat_port;
    /* Not a single backend or port for all: the comparison below can tell them apart. */
    for (unsigned b = 0; b < N_BACKENDS; b++)
        assert_true(per_backend[b] < CONNECTIONS);
    assert_int_not_equal(syn[0].snat_port, syn[1].snat_port);
    assert_int_equal(n->f->stats.events[XLB_EVENT_FLOWS_CREATED], CONNECTIONS + 1);

    nat_fixture_destroy(n); /* the restart */
    *state = n = create_with(policy);
    /* The clients speak again in another order than they connected. */
    for (uint16_t i = CONNECTIONS; i-- > 0;) {
        struct seg data = from_client4((uint16_t)(CLIENT_PORT + i), RTE_TCP_ACK_FLAG, PAYLOAD_TEXT);
        struct xlb_flow *f = forward_to_its_backend(n, &data);
        assert_int_equal(f->state, XLB_FLOW_RESUMING);
        assert_int_equal(backend_of(f, false), syn[i].backend);
        assert_int_equal(f->snat_index, syn[i].snat_index);
        assert_int_equal(f->snat_port, syn[i].snat_port);
    }
    struct seg ack6 = from_client6(CLIENT_PORT, RTE_TCP_ACK_FLAG, NULL);
    assert_int_equal(forward_to_its_backend(n, &ack6)->snat_port, syn6_port);
    assert_int_equal(n->f->stats.events[XLB_EVENT_FLOWS_RESUMED], CONNECTIONS + 1);
    assert_int_equal(n->f->stats.events[XLB_EVENT_FLOWS_CREATED], 0);
    assert_int_equal(n->f->stats.events[XLB_EVENT_TCP_RESETS_SENT], 0);
    assert_int_equal(n->flows->n_syn, CONNECTIONS + 1); /* half-open until the backends answer */
    assert_int_equal(n->load->clusters[CLUSTER4].started, CONNECTIONS);
}

static void ring_hash_connections_are_picked_up_where_their_syns_put_them(void **state)
{
    picked_up_where_their_syns_put_them(state, XLB_LB_RING_HASH);
}

static void maglev_connections_are_picked_up_where_their_syns_put_them(void **state)
{
    picked_up_where_their_syns_put_them(state, XLB_LB_MAGLEV);
}

/* The backend's answer makes the connection established; a RST from it ends it, and reaches
 * the client. Either way the half-open pool gets its place back. */
static void the_backend_answer_settles_a_picked_up_connection(void **state)
{
    struct nat_fixture *n = *state;
    struct seg data = from_client4(CLIENT_PORT, RTE_TCP_ACK_FLAG, PAYLOAD_TEXT);
    struct xlb_flow *f = forward_to_its_backend(n, &data);
    struct seg reply = backend_answer(f, RTE_TCP_ACK_FLAG, "HTTP/1.1 200 OK\r\n\r\n");
    reply.ack = SEQ_CLIENT + 1 + (uint32_t)strlen(PAYLOAD_TEXT);
    struct seg out = to_client(reply, CLIENT_PORT);
    forward(n, &reply, &out);
    assert_int_equal(f->state, XLB_FLOW_ESTABLISHED);
    assert_int_equal(n->flows->n_syn, 0);
    /* Established: later segments take the established lane, both ways. */
    struct seg more = from_client4(CLIENT_PORT, RTE_TCP_ACK_FLAG, "more");
    more.seq = SEQ_CLIENT + 1 + (uint32_t)strlen(PAYLOAD_TEXT);
    assert_ptr_equal(forward_to_its_backend(n, &more), f);

    struct seg other = from_client4(CLIENT_PORT + 1, RTE_TCP_ACK_FLAG, NULL);
    struct xlb_flow *g = forward_to_its_backend(n, &other);
    struct seg rst = backend_answer(g, RTE_TCP_RST_FLAG, NULL);
    struct seg rst_out = to_client(rst, CLIENT_PORT + 1);
    forward(n, &rst, &rst_out);
    assert_int_equal(g->state, XLB_FLOW_CLOSED);
    assert_int_equal(n->flows->n_syn, 0);
    /* No connect outcome is counted: neither answer was to a SYN. */
    for (unsigned slot = 0; slot < XLB_ENDPOINT_SLOTS && slot < 16; slot++)
        assert_int_equal(n->load->endpoints[slot].succeeded + n->load->endpoints[slot].failed, 0);
}

/*
 * A connection whose SNAT port another flow holds now cannot be picked up (any other port
 * would be a stranger to the backend): it gets a RST. A new connection from there still opens,
 * on another port.
 */
static void a_taken_port_means_reset(void **state)
{
    struct nat_fixture *n = *state;
    uint16_t collided = 0;
    for (uint16_t i = 0; i <= PORT_COUNT && collided == 0; i++) {
        uint16_t port = (uint16_t)(CLIENT_PORT + i);
        struct seg data = from_client4(port, RTE_TCP_ACK_FLAG, PAYLOAD_TEXT);
        uint8_t frame[256];
        size_t len = tcp_frame(frame, &data);
        unsigned before = n->f->ctx.tx[0].n;
        uint64_t resets = n->f->stats.events[XLB_EVENT_TCP_RESETS_SENT];
        assert_int_equal(fixture_send(n->f, frame, len), 1);
        struct xlb_flow *f = client_flow(n, FIX_PEER4, port);
        if (f == NULL) {
            assert_int_equal(n->f->stats.events[XLB_EVENT_TCP_RESETS_SENT], resets + 1);
            collided = port;
            break;
        }
        const struct rte_ether_hdr *eth = (const void *)fixture_tx(n->f, before, &len);
        assert_memory_equal(&eth->dst_addr, &backends[backend_of(f, false)].mac, 6);
        struct seg reply = backend_answer(f, RTE_TCP_ACK_FLAG, NULL);
        reply.ack = SEQ_CLIENT + 1 + (uint32_t)strlen(PAYLOAD_TEXT);
        struct seg out = to_client(reply, port);
        forward(n, &reply, &out); /* established: out of the half-open pool */
    }
    /* A slice of PORT_COUNT ports: two of its first PORT_COUNT + 1 connections share one. */
    assert_int_not_equal(collided, 0);
    uint32_t open = n->flows->n_used;
    assert_int_equal(n->f->stats.events[XLB_EVENT_FLOWS_RESUMED], open);
    assert_int_equal(n->load->clusters[CLUSTER4].started - n->load->clusters[CLUSTER4].finished,
                     open);

    struct seg syn = from_client4(collided, RTE_TCP_SYN_FLAG, NULL);
    struct xlb_flow *f = forward_to_its_backend(n, &syn);
    assert_int_equal(f->state, XLB_FLOW_SYN_SENT);
    assert_int_equal(n->flows->n_used, open + 1);
    assert_int_equal(n->f->stats.events[XLB_EVENT_FLOWS_CREATED], 1);
}

/* Segments that are no later part of a connection are not picked up, and a RST is never
 * answered. */
static void only_acknowledging_segments_are_picked_up(void **state)
{
    struct nat_fixture *n = *state;
    struct seg fin = from_client4(CLIENT_PORT, RTE_TCP_FIN_FLAG, NULL);
    answered_with_reset(n, &fin);
    struct seg syn_ack = from_client4(CLIENT_PORT, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    answered_with_reset(n, &syn_ack);
    struct seg rst = from_client4(CLIENT_PORT, RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG, NULL);
    dropped(n, &rst, XLB_DROP_TCP_NO_FLOW);
    assert_int_equal(n->flows->n_used, 0);
    assert_int_equal(n->load->clusters[CLUSTER4].started, 0);
    /* A FIN with its ACK is a later segment: the connection is closing, and is picked up. */
    struct seg fin_ack = from_client4(CLIENT_PORT, RTE_TCP_FIN_FLAG | RTE_TCP_ACK_FLAG, NULL);
    struct xlb_flow *f = forward_to_its_backend(n, &fin_ack);
    assert_int_equal(f->state, XLB_FLOW_RESUMING);
}

/* A flood of segments with ACKs fills no more than the half-open pool, and what it left
 * expires on the SYN timeout. */
static void pick_ups_are_held_to_the_half_open_pool(void **state)
{
    struct nat_fixture *n = *state;
    uint32_t cap = n->flows->syn_cap;
    assert_int_equal(cap, RESUME_FLOWS / 4);
    uint32_t resumed = 0;
    for (uint16_t i = 0; resumed < cap; i++) {
        struct seg ack = from_client4((uint16_t)(CLIENT_PORT + i), RTE_TCP_ACK_FLAG, NULL);
        uint8_t frame[256];
        assert_int_equal(fixture_send(n->f, frame, tcp_frame(frame, &ack)), 1);
        resumed = (uint32_t)n->f->stats.events[XLB_EVENT_FLOWS_RESUMED];
        assert_true(i < 2 * cap); /* collisions in a slice of PORT_COUNT: a few at most */
    }
    struct seg more = from_client4(CLIENT_PORT + 1000, RTE_TCP_ACK_FLAG, NULL);
    dropped(n, &more, XLB_DROP_SYN_POOL_FULL);
    assert_int_equal(n->flows->n_used, cap);

    n->f->ctx.now_tsc += (XLB_FLOW_SYN_TIMEOUT_S + 2) * TSC_HZ;
    for (int i = 0; i < 64 && n->flows->n_used > 0; i++)
        xlb_flow_expire(&n->f->ctx, n->f->snap);
    assert_int_equal(n->flows->n_used, 0);
    assert_int_equal(n->flows->n_syn, 0);
    assert_int_equal(n->load->clusters[CLUSTER4].started, n->load->clusters[CLUSTER4].finished);
    assert_int_equal(n->flows->n_free_ports[0], PORT_COUNT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            ring_hash_connections_are_picked_up_where_their_syns_put_them, setup, teardown),
        cmocka_unit_test_setup_teardown(maglev_connections_are_picked_up_where_their_syns_put_them,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(the_backend_answer_settles_a_picked_up_connection, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_taken_port_means_reset, setup, teardown),
        cmocka_unit_test_setup_teardown(only_acknowledging_segments_are_picked_up, setup, teardown),
        cmocka_unit_test_setup_teardown(pick_ups_are_held_to_the_half_open_pool, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
