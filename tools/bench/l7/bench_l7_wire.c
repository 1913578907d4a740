/* bench_l7's wire (bench_l7_wire.h): segments in as a NIC delivers them, xlb's out, a burst. */
#include "bench_l7_wire.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>

#include "flow/flow.h"
#include "l7/l7.h"

const struct rte_ether_addr bench_l7_router = {{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}};
static const struct rte_ether_addr port_mac = {{0x02, 0x00, 0x00, 0x00, 0x00, 0x10}};

struct bench_l7 L;

void build(struct rte_mbuf *m, const struct seg *s)
{
    uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *);
    struct rte_ether_hdr *eth = (struct rte_ether_hdr *)d;
    struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
    struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)(ip + 1);
    uint32_t tcp_len = (uint32_t)sizeof(*tcp) + s->options_len + s->len;
    eth->dst_addr = port_mac;
    eth->src_addr = *s->src_mac;
    eth->ether_type = htons(RTE_ETHER_TYPE_IPV4);
    *ip = (struct rte_ipv4_hdr){
        .version_ihl = 0x45,
        .total_length = htons((uint16_t)(sizeof(*ip) + tcp_len)),
        .fragment_offset = htons(RTE_IPV4_HDR_DF_FLAG),
        .time_to_live = 64,
        .next_proto_id = IPPROTO_TCP,
        .src_addr = s->src,
        .dst_addr = s->dst,
    };
    ip->hdr_checksum = rte_ipv4_cksum(ip);
    *tcp = (struct rte_tcp_hdr){
        .src_port = s->sport,
        .dst_port = s->dport,
        .sent_seq = htonl(s->seq),
        .recv_ack = htonl(s->ack),
        .data_off = (uint8_t)(((sizeof(*tcp) + s->options_len) / 4) << 4),
        .tcp_flags = s->flags,
        .rx_win = htons(s->window),
    };
    uint8_t *body = (uint8_t *)(tcp + 1);
    if (s->options_len != 0)
        memcpy(body, s->options, s->options_len);
    if (s->len != 0)
        memcpy(body + s->options_len, s->payload, s->len);
    uint32_t len = (uint32_t)(sizeof(*eth) + sizeof(*ip)) + tcp_len;
    len = len < MIN_FRAME ? MIN_FRAME : len;
    m->data_len = (uint16_t)len;
    m->pkt_len = len;
    m->ol_flags = RTE_MBUF_F_RX_IP_CKSUM_GOOD;
}

void client_seg(struct rte_mbuf *m, struct conn *c, uint8_t flags, const uint8_t *payload,
                uint32_t len)
{
    uint8_t opts[12];
    c->c_tsval++;
    struct seg s = {&bench_l7_router,
                    c->client,
                    htonl(RTE_IPV4(198, 18, 0, 100)),
                    c->client_port,
                    htons(VIP_PORT),
                    c->c_seq,
                    c->c_ack,
                    flags,
                    502,
                    opts,
                    xlb_tcp_options_write_ts(opts, c->c_tsval, c->c_tsecr),
                    payload,
                    len};
    build(m, &s);
    c->c_seq += len;
}

void backend_seg(struct rte_mbuf *m, struct conn *c, uint8_t flags, const uint8_t *payload,
                 uint32_t len)
{
    uint8_t opts[12];
    c->b_tsval++;
    struct seg s = {&c->backend_mac,
                    c->backend,
                    c->snat,
                    c->backend_port,
                    c->snat_port,
                    c->b_seq,
                    c->b_ack,
                    flags,
                    502,
                    opts,
                    xlb_tcp_options_write_ts(opts, c->b_tsval, c->b_tsecr),
                    payload,
                    len};
    build(m, &s);
    c->b_seq += len;
}

void read_sent(unsigned i, struct sent *s)
{
    struct rte_mbuf *m = b.ctx.tx[0].pkts[i];
    s->ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, sizeof(struct rte_ether_hdr));
    s->tcp = (struct rte_tcp_hdr *)((uint8_t *)s->ip + rte_ipv4_hdr_len(s->ip));
    uint32_t hlen = (uint32_t)(s->tcp->data_off >> 4) * 4;
    s->seq = ntohl(s->tcp->sent_seq);
    s->ack = ntohl(s->tcp->recv_ack);
    s->flags = s->tcp->tcp_flags;
    s->len = ntohs(s->ip->total_length) - rte_ipv4_hdr_len(s->ip) - hlen;
    if (xlb_tcp_options_parse((const uint8_t *)(s->tcp + 1), hlen - sizeof(*s->tcp), &s->opts) != 0)
        die("xlb sent malformed TCP options");
}

static _Noreturn void unexpected(const char *when, unsigned got, unsigned want)
{
    fprintf(stderr, "bench_l7: %s: xlb sent %u segments, expected %u\n", when, got, want);
    die_dropped(when);
}

static uint64_t drops_total(void)
{
    uint64_t n = 0;
    for (int d = 0; d < XLB_DROP_MAX; d++)
        n += b.stats.drops[d];
    return n;
}

/* The worker's clock: the TSC, moved on at most 1 ms a burst, so that a bench process the shared
 * machine deschedules between two steps does not see xlb's 250 ms backend retransmission fire
 * (the step would get more segments than it expects); expiry runs jump it ahead. */
uint64_t worker_clock(uint64_t tsc)
{
    uint64_t d = tsc - L.last_tsc, max = b.tsc_hz / 1000;
    if (L.last_tsc == 0) { /* the first burst: the clock starts at the TSC */
        L.virtual_tsc = tsc;
        d = 0;
    }
    L.last_tsc = tsc;
    L.virtual_tsc += d < max ? d : max;
    return L.virtual_tsc + L.clock_offset;
}

uint64_t process(struct rte_mbuf **pkts, uint16_t n, const char *when, unsigned want_tx)
{
    uint64_t drops = drops_total();
    uint64_t t0 = rte_rdtsc();
    b.ctx.now_tsc = worker_clock(t0);
    xlb_flow_expire(&b.ctx, b.snap);
    xlb_l7_poll(&b.ctx, b.snap);
    xlb_burst_process(&b.ctx, b.snap, 0, pkts, n);
    uint64_t cycles = rte_rdtsc() - t0;
    if (b.ctx.tx[0].n != want_tx || drops_total() != drops)
        unexpected(when, b.ctx.tx[0].n, want_tx);
    return cycles;
}

void alloc(struct rte_mbuf **pkts, unsigned n)
{
    if (rte_pktmbuf_alloc_bulk(b.pool, pkts, n) != 0)
        die("mbuf pool empty");
}
