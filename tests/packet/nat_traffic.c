#include "nat_traffic.h"

#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <string.h>

#include <cmocka.h>
#include <rte_ip.h>
#include <rte_tcp.h>

static const struct rte_ether_addr port_mac = FIX_PORT_MAC;
static const struct rte_ether_addr peer_mac = FIX_PEER_MAC;
static const struct rte_ether_addr gw_mac = FIX_GW_MAC;
static const struct rte_ether_addr backend_mac = NAT_BACKEND_MAC;

static void random_payload_and_shape(struct robust *r, struct spec *s)
{
    s->payload = 0;
    s->tcp_opt = (uint8_t)(chance(r, 20) ? 4 * below(r, 11) : 0);
    s->ip_opt = (uint8_t)(s->family == AF_INET && chance(r, 10) ? 4 * below(r, 11) : 0);
    s->vlans = (uint8_t)(chance(r, 10) ? 1 + below(r, 2) : 0);
}

static void data_payload(struct robust *r, struct spec *s)
{
    unsigned p = below(r, 100);
    s->payload = (uint16_t)(p < 50 ? below(r, 64) : p < 90 ? below(r, 600) : below(r, MAX_PAYLOAD));
}

static void random_mac(struct robust *r, struct rte_ether_addr *mac)
{
    uint64_t v = rnd(r);
    memcpy(mac->addr_bytes, &v, 6);
    mac->addr_bytes[0] = (uint8_t)((mac->addr_bytes[0] & 0xfe) | 0x02); /* unicast, local */
}

static void new_client(struct robust *r, struct conn *c)
{
    c->family = chance(r, r->phase.v4_pct) ? AF_INET : AF_INET6;
    memset(c->addr, 0, sizeof(c->addr));
    uint64_t v = rnd(r);
    if (c->family == AF_INET) {
        c->addr[0] = 10;
        /* Some clients open many connections: a small address pool half of the time. */
        memcpy(c->addr + 1, &v, 3);
        if (v >> 63)
            c->addr[1] = c->addr[2] = 0;
    } else {
        const uint8_t prefix[8] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1};
        memcpy(c->addr, prefix, 8);
        memcpy(c->addr + 8, &v, 8);
        if (v >> 63)
            memset(c->addr + 8, 0, 6);
    }
    c->port = (uint16_t)(1024 + below(r, 65536 - 1024));
    if (chance(r, 80))
        c->mac = peer_mac;
    else
        random_mac(r, &c->mac);
}

static const struct conn *remembered(struct robust *r)
{
    if (r->n_remembered == 0)
        return NULL;
    return &r->remembered[below(r, r->n_remembered)];
}

static void remember(struct robust *r, const struct conn *c)
{
    r->remembered[r->next_remembered] = *c;
    r->next_remembered = (r->next_remembered + 1) % REMEMBERED;
    if (r->n_remembered < REMEMBERED)
        r->n_remembered++;
}

static void client_key(const struct robust *r, const struct conn *c, struct xlb_flow_key *key)
{
    memset(key, 0, sizeof(*key));
    key->family = c->family;
    key->proto = IPPROTO_TCP;
    key->src_port = htons(c->port);
    key->dst_port = htons(VIP_PORT);
    memcpy(key->src, c->addr, alen(c->family));
    memcpy(key->dst, c->family == AF_INET ? r->vip4_b : r->vip6_b, alen(c->family));
}

static void from_client(struct robust *r, const struct conn *c, struct spec *s)
{
    memset(s, 0, sizeof(*s));
    s->family = c->family;
    s->proto = IPPROTO_TCP;
    s->eth_src = c->mac;
    s->eth_dst = port_mac;
    memcpy(s->src, c->addr, 16);
    memcpy(s->dst, c->family == AF_INET ? r->vip4_b : r->vip6_b, alen(c->family));
    s->sport = c->port;
    s->dport = VIP_PORT;
    s->seq = (uint32_t)rnd(r);
    s->ack = (uint32_t)rnd(r);
    random_payload_and_shape(r, s);
}

/* A backend segment to the SNAT side, from the backend key's point of view. */
static void from_backend_key(struct robust *r, const struct xlb_flow_key *k, struct spec *s)
{
    memset(s, 0, sizeof(*s));
    s->family = k->family;
    s->proto = IPPROTO_TCP;
    s->eth_src = backend_mac;
    s->eth_dst = port_mac;
    memcpy(s->src, k->src, 16);
    memcpy(s->dst, k->dst, 16);
    s->sport = ntohs(k->src_port);
    s->dport = ntohs(k->dst_port);
    s->seq = (uint32_t)rnd(r);
    s->ack = (uint32_t)rnd(r);
    random_payload_and_shape(r, s);
}

static uint8_t client_flags(struct robust *r)
{
    static const uint8_t flags[] = {
        RTE_TCP_ACK_FLAG,
        RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG,
        RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG,
        RTE_TCP_FIN_FLAG | RTE_TCP_ACK_FLAG,
        RTE_TCP_RST_FLAG,
        RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG,
        RTE_TCP_SYN_FLAG,
        RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG,
        RTE_TCP_FIN_FLAG,
        0,
    };
    return chance(r, 3) ? (uint8_t)rnd(r) : flags[below(r, sizeof(flags))];
}

static uint8_t backend_flags(struct robust *r)
{
    static const uint8_t flags[] = {
        RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG,
        RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, RTE_TCP_ACK_FLAG,
        RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG,
        RTE_TCP_FIN_FLAG | RTE_TCP_ACK_FLAG, RTE_TCP_RST_FLAG,
        RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG,
    };
    return chance(r, 3) ? (uint8_t)rnd(r) : flags[below(r, sizeof(flags))];
}

/*
 * Sequence and acknowledgment numbers as a sender on flow f would use them, at or just behind
 * what each side has sent, so that most segments fit the flow's windows and move its states;
 * now and then (and on no flow) anything, which the windows mostly refuse.
 */
static void plausible_numbers(struct robust *r, const struct xlb_flow *f, enum xlb_flow_side from,
                              struct spec *s)
{
    if (f == NULL || chance(r, 15))
        return;
    s->seq = f->window.end[from] - below(r, 64);
    s->ack = f->window.end[!from] - below(r, 64);
}

/* A used flow: a remembered client's, else the first used entry of a few random probes. */
static const struct xlb_flow *existing_flow(struct robust *r)
{
    const struct conn *c = remembered(r);
    if (c != NULL) {
        struct xlb_flow_key key;
        client_key(r, c, &key);
        const struct xlb_flow *f = xlb_flow_lookup(r->flows, &key);
        if (f != NULL)
            return f;
    }
    for (int i = 0; i < 16 && r->flows->n_used > 0; i++) {
        const struct xlb_flow *f = &r->flows->flows[below(r, FLOWS)];
        if (f->used)
            return f;
    }
    return NULL;
}

static void backend_random(struct robust *r, struct spec *s)
{
    struct xlb_flow_key k = {.family = chance(r, 50) ? AF_INET : AF_INET6,
                             .proto = IPPROTO_TCP,
                             .src_port = htons(chance(r, 80) ? VIP_PORT : (uint16_t)rnd(r))};
    bool v4 = k.family == AF_INET;
    memcpy(k.src, v4 ? r->backend4_b : r->backend6_b, alen(k.family));
    if (chance(r, 10))
        k.src[alen(k.family) - 1] = (uint8_t)rnd(r); /* some other host */
    memcpy(k.dst, v4 ? r->snat4_b : r->snat6_b, alen(k.family));
    unsigned where = below(r, 5);
    uint16_t port = where == 0   ? (uint16_t)below(r, PORT_BASE)
                    : where <= 2 ? (uint16_t)(PORT_BASE + below(r, PORT_COUNT))
                    : where == 3 ? (uint16_t)(PORT_BASE + PORT_COUNT + below(r, PORT_COUNT))
                                 : (uint16_t)(PORT_BASE + N_WORKERS * PORT_COUNT +
                                              below(r, 65536 - PORT_BASE - N_WORKERS * PORT_COUNT));
    k.dst_port = htons(port);
    from_backend_key(r, &k, s);
    s->flags = backend_flags(r);
}

/* Traffic to the VIPs and owned addresses that is not a NAT flow. Returns 0 if s is built, or
 * the length of a frame written into buf directly. */
static size_t other(struct robust *r, struct spec *s, uint8_t *buf)
{
    struct conn c;
    new_client(r, &c);
    from_client(r, &c, s);
    s->flags = RTE_TCP_SYN_FLAG;
    bool v4 = c.family == AF_INET;
    switch (below(r, 9)) {
    case 0: /* another port of the VIP */
        s->dport = (uint16_t)(VIP_PORT + 1 + below(r, 100));
        break;
    case 1: /* the port's own address serves no TCP */
        memcpy(s->dst, v4 ? r->port4_b : r->port6_b, alen(c.family));
        break;
    case 2:
        s->proto = IPPROTO_UDP;
        break;
    case 3:
        return build_icmp4_echo(buf, FIX_PEER4, FIX_VIP4, below(r, 100), 60);
    case 4:
        return build_icmp6_echo(buf, FIX_PEER6, FIX_VIP6, below(r, 100));
    case 5: /* an address that is not ours */
        s->dst[alen(c.family) - 1] ^= 0x80;
        break;
    case 6: /* a client's SYN to the SNAT address */
        memcpy(s->dst, v4 ? r->snat4_b : r->snat6_b, alen(c.family));
        s->dport = (uint16_t)(PORT_BASE + below(r, PORT_COUNT));
        break;
    case 7:
    case 8:
        s->fragment = true;
        break;
    }
    return 0;
}

/*
 * An ICMP error about a segment xlb sent on flow f (or on no flow when f is NULL): a router
 * tells the SNAT address about SNAT -> backend, or the VIP about VIP -> client. The quote is
 * short, the IP header and 8 bytes (RFC 792), a TCP header, or the whole segment.
 */
static size_t icmp_error(struct robust *r, const struct xlb_flow *f, uint8_t *buf,
                         struct layout *lo)
{
    static uint8_t seg[HOSTILE_MAX_FRAME];
    bool to_snat = chance(r, 50);
    struct spec in = {.proto = IPPROTO_TCP, .eth_src = port_mac, .eth_dst = backend_mac};
    if (f != NULL) {
        struct xlb_flow_key reply, client;
        xlb_flow_reply_key(r->flows, f, &reply);
        xlb_flow_client_key(r->flows, f, &client);
        const struct xlb_flow_key *k = to_snat ? &reply : &client;
        in.family = k->family;
        memcpy(in.src, k->dst, 16);
        memcpy(in.dst, k->src, 16);
        in.sport = ntohs(k->dst_port);
        in.dport = ntohs(k->src_port);
        if (chance(r, 10))
            in.dport ^= (uint16_t)(1 + below(r, 0xffff)); /* about no flow of ours */
    } else {
        in.family = chance(r, 50) ? AF_INET : AF_INET6;
        bool v4 = in.family == AF_INET;
        if (to_snat) {
            memcpy(in.src, v4 ? r->snat4_b : r->snat6_b, alen(in.family));
            memcpy(in.dst, v4 ? r->backend4_b : r->backend6_b, alen(in.family));
            in.sport = (uint16_t)(PORT_BASE + below(r, PORT_COUNT));
            in.dport = VIP_PORT;
        } else {
            struct conn c;
            new_client(r, &c);
            in.family = c.family;
            memcpy(in.src, c.family == AF_INET ? r->vip4_b : r->vip6_b, alen(c.family));
            memcpy(in.dst, c.addr, 16);
            in.sport = VIP_PORT;
            in.dport = c.port;
        }
    }
    bool v4 = in.family == AF_INET;
    in.flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG;
    in.seq = (uint32_t)rnd(r);
    in.ack = (uint32_t)rnd(r);
    in.payload = (uint16_t)below(r, 300);
    in.tcp_opt = (uint8_t)(4 * below(r, 3));
    in.ip_opt = (uint8_t)(v4 && chance(r, 10) ? 4 : 0);
    struct layout il;
    size_t seg_len = frame_build(seg, &in, &il) - il.l3;
    size_t l4_at = il.l4 - il.l3;
    unsigned q = below(r, 10);
    size_t quote = q < 4   ? l4_at + 8
                   : q < 7 ? l4_at + 20
                   : q < 9 ? seg_len
                           : below(r, (unsigned)(l4_at + 8));
    quote = RTE_MIN(quote, seg_len);

    memcpy(buf, port_mac.addr_bytes, 6);
    memcpy(buf + 6, gw_mac.addr_bytes, 6);
    put16(buf + 12, v4 ? RTE_ETHER_TYPE_IPV4 : RTE_ETHER_TYPE_IPV6);
    lo->family = in.family;
    lo->l3 = RTE_ETHER_HDR_LEN;
    uint8_t *ip = buf + lo->l3;
    size_t hlen = v4 ? sizeof(struct rte_ipv4_hdr) : sizeof(struct rte_ipv6_hdr);
    uint8_t *icmp = ip + hlen;
    size_t icmp_len = 8 + quote;
    memset(icmp, 0, 8);
    memcpy(icmp + 8, seg + il.l3, quote);
    uint8_t router[16];
    memcpy(router, v4 ? r->backend4_b : r->backend6_b, 16);
    router[alen(in.family) - 1] = (uint8_t)(0x80 | below(r, 0x7f)); /* some hop on the way */
    if (v4) {
        struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)ip;
        memset(h, 0, sizeof(*h));
        h->version_ihl = 0x45;
        h->total_length = htons((uint16_t)(hlen + icmp_len));
        h->time_to_live = 64;
        h->next_proto_id = IPPROTO_ICMP;
        memcpy(&h->src_addr, router, 4);
        memcpy(&h->dst_addr, in.src, 4);
        h->hdr_checksum = rte_ipv4_cksum(h);
        icmp[0] = chance(r, 70) ? 3 : 11;
        icmp[1] = (uint8_t)(icmp[0] == 3 ? (chance(r, 50) ? 4 : below(r, 16)) : below(r, 2));
        if (icmp[0] == 3 && icmp[1] == 4)
            put16(icmp + 6, 1400); /* next-hop MTU */
        uint16_t csum = (uint16_t)~rte_raw_cksum(icmp, icmp_len);
        memcpy(icmp + 2, &csum, 2);
    } else {
        struct rte_ipv6_hdr *h = (struct rte_ipv6_hdr *)ip;
        memset(h, 0, sizeof(*h));
        h->vtc_flow = htonl(6u << 28);
        h->payload_len = htons((uint16_t)icmp_len);
        h->proto = IPPROTO_ICMPV6;
        h->hop_limits = 64;
        memcpy(h->src_addr, router, 16);
        memcpy(h->dst_addr, in.src, 16);
        icmp[0] = (uint8_t)(1 + below(r, 3));
        icmp[1] = (uint8_t)below(r, 5);
        if (icmp[0] == 2)
            put16(icmp + 6, 1280); /* MTU */
        uint16_t csum = rte_ipv6_udptcp_cksum(h, icmp);
        memcpy(icmp + 2, &csum, 2);
    }
    lo->l4 = lo->l3 + hlen;
    lo->len = lo->l4 + icmp_len;
    return lo->len;
}

/* The next frame of the mix into buf; *clean when it is as a sender would put it on the wire. */
size_t traffic_generate(struct robust *r, uint8_t *buf, bool *clean, struct layout *lo)
{
    struct spec s;
    struct conn c;
    const struct conn *known = NULL;
    const struct xlb_flow *f = NULL;
    enum kind kind;
    unsigned p = below(r, 100);
    if (p < r->phase.noise_pct)
        kind = K_NOISE;
    else if (below(r, 100) < r->phase.syn_pct)
        kind = K_SYN_NEW;
    else {
        static const enum kind rest[] = {
            K_SYN_AGAIN,     K_BACKEND_FLOW,   K_BACKEND_FLOW,   K_BACKEND_FLOW, K_BACKEND_FLOW,
            K_BACKEND_FLOW,  K_BACKEND_FLOW,   K_BACKEND_FLOW,   K_CLIENT_FLOW,  K_CLIENT_FLOW,
            K_CLIENT_FLOW,   K_CLIENT_FLOW,    K_CLIENT_FLOW,    K_CLIENT_FLOW,  K_CLIENT_NOFLOW,
            K_CLIENT_NOFLOW, K_BACKEND_RANDOM, K_BACKEND_RANDOM, K_OTHER,        K_OTHER,
            K_ICMP_ERROR,    K_ICMP_ERROR,
        };
        kind = rest[below(r, sizeof(rest) / sizeof(rest[0]))];
    }
    if (kind == K_SYN_AGAIN || kind == K_CLIENT_FLOW) {
        known = remembered(r);
        if (known == NULL)
            kind = K_SYN_NEW;
    }
    if (kind == K_BACKEND_FLOW && (f = existing_flow(r)) == NULL)
        kind = K_BACKEND_RANDOM;
    if (kind == K_ICMP_ERROR && chance(r, 90))
        f = existing_flow(r);
    r->kinds[kind]++;
    *clean = true;
    memset(lo, 0, sizeof(*lo));
    switch (kind) {
    case K_NOISE:
        *clean = false;
        return hostile_next(&r->noise, buf);
    case K_SYN_NEW:
        new_client(r, &c);
        remember(r, &c);
        from_client(r, &c, &s);
        s.flags = RTE_TCP_SYN_FLAG;
        s.ack = 0;
        break;
    case K_SYN_AGAIN:
        from_client(r, known, &s);
        s.flags = RTE_TCP_SYN_FLAG;
        break;
    case K_BACKEND_FLOW: {
        struct xlb_flow_key reply;
        xlb_flow_reply_key(r->flows, f, &reply);
        from_backend_key(r, &reply, &s);
        s.flags = backend_flags(r);
        plausible_numbers(r, f, XLB_FLOW_FROM_BACKEND, &s);
        break;
    }
    case K_CLIENT_FLOW: {
        struct xlb_flow_key key;
        client_key(r, known, &key);
        from_client(r, known, &s);
        s.flags = client_flags(r);
        plausible_numbers(r, xlb_flow_lookup(r->flows, &key), XLB_FLOW_FROM_CLIENT, &s);
        break;
    }
    case K_CLIENT_NOFLOW:
        new_client(r, &c);
        from_client(r, &c, &s);
        s.flags = client_flags(r);
        break;
    case K_BACKEND_RANDOM:
        backend_random(r, &s);
        break;
    case K_OTHER: {
        size_t len = other(r, &s, buf);
        if (len > 0)
            return len;
        break;
    }
    case K_ICMP_ERROR:
        return icmp_error(r, f, buf, lo);
    default:
        fail();
    }
    if (s.flags & (RTE_TCP_PSH_FLAG | RTE_TCP_FIN_FLAG) || chance(r, 10))
        data_payload(r, &s);
    size_t len = frame_build(buf, &s, lo);
    if (len < 60 && chance(r, 50)) {
        memset(buf + len, 0xee, 60 - len); /* Ethernet padding */
        len = 60;
    }
    return len;
}

/* ---- noise templates ---- */

void traffic_add_templates(struct robust *r)
{
    struct spec s;
    struct layout lo;
    struct conn c = {.family = AF_INET, .addr = {10, 1, 2, 3}, .port = 40000, .mac = peer_mac};
    size_t len[6];
    from_client(r, &c, &s);
    s.flags = RTE_TCP_SYN_FLAG;
    s.tcp_opt = 4;
    s.ip_opt = 0;
    s.vlans = 0;
    len[0] = frame_build(r->templates[0], &s, &lo);
    s.flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG;
    s.payload = 40;
    s.ip_opt = 8;
    s.vlans = 1;
    len[1] = frame_build(r->templates[1], &s, &lo);
    c.family = AF_INET6;
    memcpy(c.addr, r->port6_b, 16);
    c.addr[15] = 0x77;
    from_client(r, &c, &s);
    s.flags = RTE_TCP_SYN_FLAG;
    s.tcp_opt = 4;
    s.ip_opt = 0;
    s.vlans = 0;
    len[2] = frame_build(r->templates[2], &s, &lo);
    struct xlb_flow_key k = {.family = AF_INET,
                             .proto = IPPROTO_TCP,
                             .src_port = htons(VIP_PORT),
                             .dst_port = htons(PORT_BASE)};
    memcpy(k.src, r->backend4_b, 4);
    memcpy(k.dst, r->snat4_b, 4);
    from_backend_key(r, &k, &s);
    s.flags = RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG;
    s.tcp_opt = 4;
    s.ip_opt = 0;
    s.vlans = 0;
    len[3] = frame_build(r->templates[3], &s, &lo);
    k.family = AF_INET6;
    memcpy(k.src, r->backend6_b, 16);
    memcpy(k.dst, r->snat6_b, 16);
    k.dst_port = htons(PORT_BASE + PORT_COUNT + 5); /* worker 1's */
    from_backend_key(r, &k, &s);
    s.flags = RTE_TCP_ACK_FLAG;
    s.tcp_opt = 0;
    s.vlans = 2;
    len[4] = frame_build(r->templates[4], &s, &lo);
    len[5] = build_icmp4_echo(r->templates[5], FIX_PEER4, FIX_VIP4, 16, 0);
    for (int i = 0; i < 6; i++) {
        assert_true(len[i] <= sizeof(r->templates[i]));
        hostile_add_template(&r->noise, r->templates[i], len[i]);
    }
}
