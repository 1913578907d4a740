/*
 * The L7 packet tests' fixture (l7_fixture.h): set-up, the connection's segments as its client
 * and backend send them and as xlb must send them, and the steps of a connection's life.
 */
#include "l7_fixture.h"

#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "l7/l7_conn.h"
#include "xlb_const.h"

/* Strings of the hand-built configuration, in the char * its parsed form holds (const
 * arguments go in through XLB_UNCONST): the compilers only read them. */
static char any_domain[] = "*", route_prefix[] = L7_ROUTE_PREFIX, cookie_name[] = L7_COOKIE_NAME,
            cookie_path[] = "/";

static const struct rte_ether_addr port_mac = FIX_PORT_MAC;
static const struct rte_ether_addr client_mac = FIX_PEER_MAC;
static const struct rte_ether_addr backend_mac = L7_BACKEND_MAC;
static const struct rte_ether_addr backend6_mac = L7_BACKEND6_MAC;

/* ---- set-up ---- */

/* Virtual host "*", one route: prefix L7_ROUTE_PREFIX to `cluster`. */
static struct xlb_route_table *compile_routes(const char *cluster)
{
    struct xlb_domain dom = {any_domain, XLB_DOMAIN_UNIVERSE};
    struct xlb_route route = {0};
    route.match.path_type = XLB_PATH_PREFIX;
    route.match.path = route_prefix;
    route.match.case_sensitive = true;
    route.action = XLB_ROUTE_CLUSTER;
    route.cluster = XLB_UNCONST(cluster);
    struct xlb_virtual_host vh = {0};
    vh.domains = &dom;
    vh.n_domains = 1;
    vh.routes = &route;
    vh.n_routes = 1;
    struct xlb_route_config cfg = {0};
    cfg.vhosts = &vh;
    cfg.n_vhosts = 1;
    const char *names[1] = {cluster};
    struct xlb_route_table *t = NULL;
    assert_int_equal(xlb_route_compile(&cfg, names, 1, &t), 0);
    assert_non_null(t);
    assert_int_equal(t->n_clusters, 1);
    return t;
}

static int setup(void **state, bool cookie, bool addresses)
{
    static const char *const ep4[] = {L7_BACKEND4 ":50051"};
    static const char *const ep4_more[] = {L7_BACKEND4_DEAD ":50051," L7_BACKEND4 ":50051"};
    static const char *const ep6[] = {"[" L7_BACKEND6 "]:50051"};
    static const uint32_t slot4[] = {L7_SLOT4}, slot6[] = {L7_SLOT6};
    const struct nat_cluster clusters[] = {
        {L7_CLUSTER_NAME4, XLB_LB_ROUND_ROBIN, addresses ? ep4_more : ep4, 1, slot4, CLUSTER4, 1,
         0},
        {L7_CLUSTER_NAME6, XLB_LB_ROUND_ROBIN, ep6, 1, slot6, CLUSTER6, 2, 0},
    };
    static const struct nat_backend backends[] = {
        {L7_BACKEND4, L7_BACKEND_MAC},
        {L7_BACKEND6, L7_BACKEND6_MAC},
        {L7_BACKEND4_DEAD, L7_BACKEND_MAC},
    };
    const struct nat_config cfg = {
        .name = "l7",
        .flows = 8,
        .port_count = 100,
        .start_tsc = L7_START_TSC,
        .lb_seed = 7,
        .backends = backends,
        .n_backends = 3,
        .clusters = clusters,
        .n_clusters = 2,
    };
    struct l7_fixture *x = calloc(1, sizeof(*x));
    assert_non_null(x);
    x->n = nat_fixture_create(&cfg);
    const char *names[2] = {L7_CLUSTER_NAME4, L7_CLUSTER_NAME6};
    x->cookie_names[0] = cookie_name;
    x->cookie_attrs[0] = (struct xlb_lb_cookie_attrs){cookie_path, true, L7_COOKIE_TTL};
    for (int i = 0; i < 2; i++) {
        x->routes[i] = compile_routes(names[i]);
        x->n->vip[i].routes = x->routes[i];
        x->n->vip[i].n_targets = 1;
        if (cookie) {
            x->n->vip[i].route_cookie = x->cookie_names;
            x->n->vip[i].route_cookie_attrs = x->cookie_attrs;
        }
        x->n->f->snap->vips[i].l7 = true;
    }
    x->l7 = xlb_l7_worker_create(0, 8, SOCKET_ID_ANY);
    assert_non_null(x->l7);
    /* The worker's clock in the fixture's TSC units; the cookie secrets never rotate here. */
    x->l7->tsc_per_ms = L7_TSC_PER_MS;
    x->l7->rotate_tsc = UINT64_MAX;
    x->n->f->ctx.l7 = x->l7;
    *state = x;
    return 0;
}

int l7_setup(void **state)
{
    return setup(state, false, false);
}

int l7_setup_cookie(void **state)
{
    return setup(state, true, false);
}

int l7_setup_addresses(void **state)
{
    return setup(state, false, true);
}

int l7_teardown(void **state)
{
    struct l7_fixture *x = *state;
    /* Connections still open go back to the pool as the worker would free them. */
    struct xlb_flow_table *t = x->n->flows;
    for (uint32_t i = 0; i < t->capacity; i++)
        if (t->flows[i].used && t->flows[i].kind == XLB_FLOW_KIND_L7_SPLICE)
            xlb_l7_release(&x->n->f->ctx, &t->flows[i]);
    fixture_clear_tx(x->n->f); /* RSTs of connections still receiving */
    x->n->f->ctx.l7 = NULL;
    xlb_l7_worker_free(x->l7);
    for (int i = 0; i < 2; i++) {
        x->n->vip[i].routes = NULL;
        x->n->vip[i].route_cookie = NULL;
        x->n->vip[i].route_cookie_attrs = NULL;
        xlb_route_table_free(x->routes[i]);
    }
    nat_fixture_destroy(x->n);
    free(x);
    return 0;
}

uint32_t l7_now_ms(const struct l7_fixture *x)
{
    return (uint32_t)(x->n->f->ctx.now_tsc / L7_TSC_PER_MS);
}

void l7_advance_ms(struct l7_fixture *x, uint32_t ms)
{
    x->n->f->ctx.now_tsc += (uint64_t)ms * L7_TSC_PER_MS;
}

uint64_t l7_event(const struct l7_fixture *x, enum xlb_event_counter event)
{
    return x->n->f->stats.events[event];
}

uint64_t l7_drop(const struct l7_fixture *x, enum xlb_drop_reason reason)
{
    return x->n->f->stats.drops[reason];
}

/* ---- connections ---- */

void l7_conn_init(struct l7_conn *c, bool v6)
{
    memset(c, 0, sizeof(*c));
    c->v6 = v6;
    c->port = L7_CLIENT_PORT;
    c->c_isn = L7_CLIENT_ISN;
    c->c_seq = L7_CLIENT_ISN;
    c->c_tsval = L7_CLIENT_TS;
    c->b_seq = L7_BACKEND_ISN;
    c->b_tsval = L7_BACKEND_TS;
}

static const char *client_addr(const struct l7_conn *c)
{
    return c->v6 ? FIX_PEER6 : FIX_PEER4;
}
static const char *vip_addr(const struct l7_conn *c)
{
    return c->v6 ? FIX_VIP6 : FIX_VIP4;
}
static const char *snat_addr(const struct l7_conn *c)
{
    return c->v6 ? SNAT6 : SNAT4;
}
static const char *backend_addr(const struct l7_conn *c)
{
    if (c->backend != NULL)
        return c->backend;
    return c->v6 ? L7_BACKEND6 : L7_BACKEND4;
}
static const struct rte_ether_addr *backend_mac_of(const struct l7_conn *c)
{
    return c->v6 ? &backend6_mac : &backend_mac;
}

struct l7_seg l7_from_client(struct l7_conn *c, uint8_t flags, uint32_t seq, uint32_t ack,
                             const uint8_t *payload, uint32_t len)
{
    struct l7_seg s = {
        .eth_src = &client_mac,
        .eth_dst = &port_mac,
        .src = client_addr(c),
        .dst = vip_addr(c),
        .sport = c->port,
        .dport = VIP_PORT,
        .seq = seq,
        .ack = ack,
        .flags = flags,
        .window = 502,
        .ttl = 61,
        .ip_id = 0x1111,
        .payload = payload,
        .len = len,
    };
    opts_ts(&s, c->c_tsval++, c->x_tsval);
    return s;
}

struct l7_seg l7_from_backend(struct l7_conn *c, uint8_t flags, uint32_t seq, uint32_t ack,
                              const uint8_t *payload, uint32_t len)
{
    struct l7_seg s = {
        .eth_src = backend_mac_of(c),
        .eth_dst = &port_mac,
        .src = backend_addr(c),
        .dst = snat_addr(c),
        .sport = L7_BACKEND_PORT,
        .dport = c->snat_port,
        .seq = seq,
        .ack = ack,
        .flags = flags,
        .window = 1000,
        .ttl = 62,
        .ip_id = 0x2222,
        .payload = payload,
        .len = len,
    };
    opts_ts(&s, c->b_tsval, c->b_tsecr);
    return s;
}

struct l7_seg l7_by_xlb_to_client(const struct l7_conn *c, uint8_t flags, uint32_t seq,
                                  uint32_t ack, uint16_t window, const uint8_t *payload,
                                  uint32_t len)
{
    return (struct l7_seg){
        .eth_src = &port_mac,
        .eth_dst = &client_mac,
        .src = vip_addr(c),
        .dst = client_addr(c),
        .sport = VIP_PORT,
        .dport = c->port,
        .seq = seq,
        .ack = ack,
        .flags = flags,
        .window = window,
        .ttl = 64,
        .payload = payload,
        .len = len,
    };
}

struct l7_seg l7_by_xlb_to_backend(const struct l7_conn *c, uint8_t flags, uint32_t seq,
                                   uint32_t ack, uint16_t window, const uint8_t *payload,
                                   uint32_t len)
{
    return (struct l7_seg){
        .eth_src = &port_mac,
        .eth_dst = backend_mac_of(c),
        .src = snat_addr(c),
        .dst = backend_addr(c),
        .sport = c->snat_port,
        .dport = L7_BACKEND_PORT,
        .seq = seq,
        .ack = ack,
        .flags = flags,
        .window = window,
        .ttl = 64,
        .payload = payload,
        .len = len,
    };
}

struct l7_seg l7_spliced_to_backend(const struct l7_conn *c, struct l7_seg s)
{
    s.eth_src = &port_mac;
    s.eth_dst = backend_mac_of(c);
    s.src = snat_addr(c);
    s.dst = backend_addr(c);
    s.sport = c->snat_port;
    s.dport = L7_BACKEND_PORT;
    return s;
}

struct l7_seg l7_spliced_to_client(const struct l7_conn *c, struct l7_seg s)
{
    s.eth_src = &port_mac;
    s.eth_dst = &client_mac;
    s.src = vip_addr(c);
    s.dst = client_addr(c);
    s.sport = VIP_PORT;
    s.dport = c->port;
    return s;
}

uint16_t l7_receive_window(const struct l7_conn *c)
{
    return l7_window_after_cut(c, 0);
}

uint16_t l7_window_after_cut(const struct l7_conn *c, uint32_t stripped)
{
    uint32_t held = c->c_seq - (c->c_isn + 1) - stripped;
    return (uint16_t)((L7_IN_MAX - held) >> L7_WSCALE);
}

struct xlb_flow *l7_flow(struct l7_fixture *x, const struct l7_conn *c)
{
    struct xlb_flow_key key = {.proto = IPPROTO_TCP,
                               .src_port = htons(c->port),
                               .dst_port = htons(VIP_PORT),
                               .family = c->v6 ? AF_INET6 : AF_INET};
    assert_int_equal(inet_pton(key.family, client_addr(c), key.src), 1);
    assert_int_equal(inet_pton(key.family, vip_addr(c), key.dst), 1);
    return xlb_flow_lookup(x->n->flows, &key);
}

/* ---- steps ---- */

void l7_syn(struct l7_fixture *x, struct l7_conn *c)
{
    uint32_t tsval = c->c_tsval;
    struct l7_seg syn = l7_from_client(c, RTE_TCP_SYN_FLAG, c->c_isn, 0, NULL, 0);
    syn.window = 64240;
    syn.ip_id = 0;
    opts_syn(&syn, L7_CLIENT_MSS, true, true, tsval, 0, L7_CLIENT_WS);
    uint64_t sent = l7_event(x, XLB_EVENT_L7_SYN_COOKIES_SENT);
    uint32_t used = x->n->flows->n_used;
    assert_int_equal(l7_send(x, &syn), 1);
    struct l7_out o;
    l7_read(x, 0, &o);
    /* The cookie: MSS 1460 is entry 4 of the table; bit 5 says the SYN-ACK has timestamps. */
    assert_int_equal(o.seq & 7, 4);
    assert_true(o.seq & (1u << 5));
    /* Its TSval is at most 511 ms behind the clock, and carries WS 7 and SACK (low 5 bits). */
    uint32_t now = l7_now_ms(x);
    assert_true(o.has_ts);
    assert_true(now - o.tsval < 512);
    assert_int_equal(o.tsval & 0x1f, 0x10 | L7_CLIENT_WS);
    struct l7_seg want = l7_by_xlb_to_client(c, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, o.seq,
                                             c->c_isn + 1, 65535, NULL, 0);
    opts_syn(&want, c->v6 ? 1440 : 1460, true, true, o.tsval, tsval, L7_WSCALE);
    l7_expect(x, 0, &want);
    l7_clear(x);
    /* Stateless: no flow, no connection. */
    assert_int_equal(x->n->flows->n_used, used);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_SYN_COOKIES_SENT), sent + 1);
    c->cookie = o.seq;
    c->x_seq = o.seq + 1;
    c->x_tsval = o.tsval;
    c->c_seq = c->c_isn + 1;
}

void l7_hello(struct l7_fixture *x, struct l7_conn *c, const uint8_t *hello, uint32_t len)
{
    static const uint8_t settings[9] = {0, 0, 0, 4, 0, 0, 0, 0, 0};
    uint32_t tsval = c->c_tsval;
    uint8_t flags = RTE_TCP_ACK_FLAG | (len > 0 ? RTE_TCP_PSH_FLAG : 0);
    struct l7_seg ack = l7_from_client(c, flags, c->c_seq, c->x_seq, hello, len);
    uint32_t used = x->n->flows->n_used;
    uint64_t conns = l7_event(x, XLB_EVENT_L7_CONNECTIONS);
    assert_int_equal(l7_send(x, &ack), 1);
    c->c_seq += len;
    assert_int_equal(x->n->flows->n_used, used + 1);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_CONNECTIONS), conns + 1);
    struct xlb_flow *f = l7_flow(x, c);
    assert_non_null(f);
    assert_int_equal(f->kind, XLB_FLOW_KIND_L7_SPLICE);
    struct l7_seg want = l7_by_xlb_to_client(c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, c->x_seq,
                                             c->c_seq, l7_receive_window(c), settings, 9);
    opts_ts(&want, l7_now_ms(x), tsval);
    l7_expect(x, 0, &want);
    l7_clear(x);
    c->x_seq += 9;
    c->x_tsval = l7_now_ms(x);
}

void l7_request(struct l7_fixture *x, struct l7_conn *c, const uint8_t *data, uint32_t len,
                uint32_t stripped)
{
    uint32_t tsval = c->c_tsval;
    uint8_t flags = RTE_TCP_ACK_FLAG | (len > 0 ? RTE_TCP_PSH_FLAG : 0);
    struct l7_seg seg = l7_from_client(c, flags, c->c_seq, c->x_seq, data, len);
    uint64_t bound = l7_event(x, XLB_EVENT_L7_BOUND);
    assert_int_equal(l7_send(x, &seg), 2);
    c->c_seq += len;
    assert_int_equal(l7_event(x, XLB_EVENT_L7_BOUND), bound + 1);
    /* The client's bytes are acknowledged at once; the window counts the bytes cut as free. */
    struct l7_seg ack = l7_by_xlb_to_client(c, RTE_TCP_ACK_FLAG, c->x_seq, c->c_seq,
                                            l7_window_after_cut(c, stripped), NULL, 0);
    opts_ts(&ack, l7_now_ms(x), tsval);
    l7_expect(x, 0, &ack);
    c->x_tsval = l7_now_ms(x);
    /* The SYN to the backend: from the SNAT address and a port of the worker's slice, with the
     * client's ISN and options (its MSS as the cookie kept it, its latest TSval). */
    struct l7_out o;
    l7_read(x, 1, &o);
    assert_true(o.sport >= PORT_BASE && o.sport < PORT_BASE + 100);
    struct xlb_flow *f = l7_flow(x, c);
    assert_non_null(f);
    assert_int_equal(f->snat_port, o.sport);
    assert_int_equal(f->endpoint_slot, c->v6 ? L7_SLOT6 : L7_SLOT4);
    c->snat_port = o.sport;
    struct l7_seg syn = l7_by_xlb_to_backend(c, RTE_TCP_SYN_FLAG, c->c_isn, 0, 65535, NULL, 0);
    opts_syn(&syn, L7_CLIENT_MSS, true, true, tsval, 0, L7_CLIENT_WS);
    l7_expect(x, 1, &syn);
    l7_clear(x);
    c->b_tsecr = tsval;
    c->stripped = stripped;
}

void l7_backend_accepts(struct l7_fixture *x, struct l7_conn *c, const uint8_t *replay,
                        uint32_t len)
{
    struct l7_seg syn_ack =
        l7_from_backend(c, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, c->b_seq, c->c_isn + 1, NULL, 0);
    syn_ack.window = 65160;
    opts_syn(&syn_ack, 1460, true, true, c->b_tsval, c->b_tsecr, L7_BACKEND_WS);
    uint64_t spliced = l7_event(x, XLB_EVENT_L7_SPLICED);
    assert_int_equal(l7_send(x, &syn_ack), 1);
    assert_int_equal(l7_event(x, XLB_EVENT_L7_SPLICED), spliced + 1);
    c->b_seq++;
    /* Backend timestamps go past every one xlb sent the client: its SYN-ACK's TSval maps to
     * the clock + 1. */
    c->ts_add = l7_now_ms(x) + 1 - c->b_tsval;
    /* The replay: the client's bytes less what was cut, from the client's ISN + 1, with the
     * client's latest window and TSval, echoing the backend's TSval. */
    assert_true(len <= L7_CLIENT_MSS);
    assert_int_equal(c->c_seq - (c->c_isn + 1) - c->stripped, len);
    struct l7_seg want = l7_by_xlb_to_backend(c, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, c->c_isn + 1,
                                              c->b_seq, 502, replay, len);
    opts_ts(&want, c->b_tsecr, c->b_tsval);
    l7_expect(x, 0, &want);
    l7_clear(x);
}

void l7_establish(struct l7_fixture *x, struct l7_conn *c, struct h2_peer *peer, const char *path,
                  const char *cookie)
{
    struct h2_bytes hello = {.len = 0}, block = {.len = 0}, request = {.len = 0};
    h2_client_hello(&hello);
    h2_request_block(peer, &block, path, cookie);
    h2_settings_ack(&request);
    h2_headers(&request, 1, false, &block);
    l7_syn(x, c);
    l7_hello(x, c, hello.b, hello.len);
    l7_request(x, c, request.b, request.len, 9);
    /* The replay: the hello and the HEADERS frame, without the SETTINGS ACK (9 bytes). */
    h2_append(&hello, request.b + 9, request.len - 9);
    l7_backend_accepts(x, c, hello.b, hello.len);
}

void l7_pass_to_client(struct l7_fixture *x, struct l7_conn *c, uint8_t flags,
                       const uint8_t *payload, uint32_t len)
{
    struct l7_seg in = l7_from_backend(c, flags, c->b_seq, c->c_seq - c->stripped, payload, len);
    assert_int_equal(l7_send(x, &in), 1);
    struct l7_seg want = l7_spliced_to_client(c, in);
    want.seq = c->x_seq;
    want.ack = c->c_seq;
    want.window = (uint16_t)(((uint32_t)in.window << L7_BACKEND_WS) >> L7_WSCALE);
    opts_ts(&want, c->b_tsval + c->ts_add, c->b_tsecr);
    l7_expect(x, 0, &want);
    l7_clear(x);
    c->b_seq += len;
    c->x_seq += len;
    c->x_tsval = c->b_tsval + c->ts_add;
}

void l7_pass_to_backend(struct l7_fixture *x, struct l7_conn *c, uint8_t flags,
                        const uint8_t *payload, uint32_t len)
{
    uint32_t tsval = c->c_tsval;
    struct l7_seg in = l7_from_client(c, flags, c->c_seq, c->x_seq, payload, len);
    assert_int_equal(l7_send(x, &in), 1);
    struct l7_seg want = l7_spliced_to_backend(c, in);
    want.seq = c->c_seq - c->stripped;
    want.ack = c->b_seq;
    opts_ts(&want, tsval, c->x_tsval - c->ts_add);
    l7_expect(x, 0, &want);
    l7_clear(x);
    c->c_seq += len;
    c->b_tsecr = tsval;
}

void l7_with_field(struct h2_bytes *out, const struct h2_bytes *in, uint32_t frame_at, uint32_t at,
                   const uint8_t *field, uint32_t k)
{
    out->len = 0;
    h2_append(out, in->b, at);
    h2_append(out, field, k);
    h2_append(out, in->b + at, in->len - at);
    uint32_t n = (uint32_t)out->b[frame_at] << 16 | (uint32_t)out->b[frame_at + 1] << 8 |
                 out->b[frame_at + 2];
    n += k;
    out->b[frame_at] = (uint8_t)(n >> 16);
    out->b[frame_at + 1] = (uint8_t)(n >> 8);
    out->b[frame_at + 2] = (uint8_t)n;
}

void l7_expect_to_client(struct l7_fixture *x, const struct l7_conn *c, unsigned i,
                         const struct l7_seg *in, uint32_t seq, uint8_t flags,
                         const uint8_t *payload, uint32_t len)
{
    struct l7_seg want = l7_spliced_to_client(c, *in);
    want.seq = seq;
    want.ack = in->ack + c->stripped;
    want.flags = flags;
    want.window = (uint16_t)(((uint32_t)in->window << L7_BACKEND_WS) >> L7_WSCALE);
    opts_ts(&want, c->b_tsval + c->ts_add, c->b_tsecr);
    want.payload = payload;
    want.len = len;
    l7_expect(x, i, &want);
}
