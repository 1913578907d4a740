/*
 * xlb-trafgen: a DPDK primary process of its own (its own --file-prefix) that sends SYN
 * floods, ranges of TCP segments over many flows, or a pcap file to xlbd, normally over a
 * memif link to xlbd's memif server, and counts what comes back. See docs/trafgen.md.
 *
 * One lcore does everything: poll rx (answer ARP for our addresses, SYN-ACK for the backends
 * we stand in for, count the rest by kind), generate up to a burst, transmit. Every loop is
 * bounded by a count and by the clock.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_mbuf.h>

#include "trafgen.h"

#define TG_MBUFS      8191
#define TG_MBUF_CACHE 256
#define TG_RX_BURST   32
#define TG_DESC       1024
#define TG_MAX_BURST  512
#define TG_MAX_GARP   1024 /* gratuitous ARPs for backends at most */

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

struct tg {
    const struct tg_options *o;
    uint16_t port_id;
    char port_name[RTE_ETH_NAME_MAX_LEN];
    struct rte_mempool *pool;
    struct rte_ether_addr src_mac, dst_mac;
    uint64_t hz;
    uint64_t rng;
    uint64_t total_tuples;
    struct tg_pcap pcap;
    /* ARP resolution of the destination */
    uint32_t resolve_ip;
    bool resolving, resolved;
    /* transmit */
    struct rte_mbuf *pending[TG_MAX_BURST];
    unsigned n_pending;
    /* counters */
    uint64_t generated, sent, not_sent, alloc_failed;
    uint64_t received, kinds[TG_KIND_COUNT];
    uint64_t arp_answered, syn_acks_sent, backend_syns, answers_failed;
};

static uint64_t next_random(struct tg *t)
{
    /* xorshift64* */
    uint64_t x = t->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    t->rng = x;
    return x * UINT64_C(2685821657736338717);
}

static double seconds(const struct tg *t, uint64_t cycles)
{
    return (double)cycles / (double)t->hz;
}

static uint64_t cycles_of(const struct tg *t, double s)
{
    return (uint64_t)(s * (double)t->hz);
}

static void idle(const struct tg *t)
{
    if (t->o->idle_sleep_us > 0)
        usleep(t->o->idle_sleep_us);
}

/* ---- receive ---- */

static bool is_ours(const struct tg *t, uint32_t ip)
{
    return (t->o->have_src_ip && tg_range_has(&t->o->src_ip, ip)) ||
           (t->o->have_backends && tg_range_has(&t->o->backend_ip, ip));
}

static bool set_length(struct rte_mbuf *m, uint32_t len)
{
    if (len > (uint32_t)m->buf_len - m->data_off)
        return false;
    m->data_len = (uint16_t)len;
    m->pkt_len = len;
    return true;
}

/* An answer for m (ARP reply, SYN-ACK), or false when m is only counted. */
static bool answer(struct tg *t, struct rte_mbuf *m, enum tg_kind kind, uint32_t l3)
{
    uint8_t *frame = rte_pktmbuf_mtod(m, uint8_t *);
    uint32_t len = rte_pktmbuf_data_len(m);
    switch (kind) {
    case TG_KIND_ARP_REQUEST:
        if (!is_ours(t, tg_arp_target(frame, l3)))
            return false;
        t->arp_answered++;
        return set_length(m, tg_arp_reply_in_place(frame, l3, &t->src_mac));
    case TG_KIND_ARP_REPLY: {
        struct rte_ether_addr mac;
        if (t->resolving && tg_arp_reply_for(frame, len, t->resolve_ip, &mac)) {
            t->dst_mac = mac;
            t->resolved = true;
        }
        return false;
    }
    case TG_KIND_TCP_SYN:
        if (!t->o->have_backends || !tg_range_has(&t->o->backend_ip, tg_ipv4_dst(frame, l3)))
            return false;
        t->backend_syns++;
        /* The SYN-ACK has no options: it is never longer than 60 bytes past the IP header. */
        if ((uint32_t)m->buf_len - m->data_off < l3 + TG_MIN_FRAME)
            return false;
        set_length(m, tg_syn_ack_in_place(frame, l3, &t->src_mac, (uint32_t)next_random(t)));
        t->syn_acks_sent++;
        return true;
    default:
        return false;
    }
}

/* Receive one burst; the number of frames received. */
static unsigned rx_poll(struct tg *t)
{
    struct rte_mbuf *pkts[TG_RX_BURST], *answers[TG_RX_BURST];
    unsigned n_answers = 0;
    uint16_t n = rte_eth_rx_burst(t->port_id, 0, pkts, TG_RX_BURST);
    for (uint16_t i = 0; i < n; i++) {
        struct rte_mbuf *m = pkts[i];
        uint32_t l3 = 0;
        enum tg_kind kind = TG_KIND_OTHER;
        if (rte_pktmbuf_is_contiguous(m))
            kind = tg_classify(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_data_len(m), &l3);
        t->received++;
        t->kinds[kind]++;
        if (kind != TG_KIND_OTHER && answer(t, m, kind, l3))
            answers[n_answers++] = m;
        else
            rte_pktmbuf_free(m);
    }
    if (n_answers > 0) {
        uint16_t sent = rte_eth_tx_burst(t->port_id, 0, answers, (uint16_t)n_answers);
        for (unsigned i = sent; i < n_answers; i++)
            rte_pktmbuf_free(answers[i]);
        t->answers_failed += n_answers - sent;
    }
    return n;
}

/* Poll rx until the clock passes end (or a signal), sleeping when idle. */
static void poll_until(struct tg *t, uint64_t end, bool until_resolved)
{
    while (!stop_requested && rte_get_tsc_cycles() < end) {
        if (until_resolved && t->resolved)
            return;
        if (rx_poll(t) == 0)
            idle(t);
    }
}

/* ---- transmit ---- */

static bool send_one_now(struct tg *t, const uint8_t *frame, uint32_t len)
{
    struct rte_mbuf *m = rte_pktmbuf_alloc(t->pool);
    if (m == NULL)
        return false;
    uint8_t *data = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
    if (data == NULL) {
        rte_pktmbuf_free(m);
        return false;
    }
    memcpy(data, frame, len);
    if (rte_eth_tx_burst(t->port_id, 0, &m, 1) == 1)
        return true;
    rte_pktmbuf_free(m);
    return false;
}

static bool build(struct tg *t, struct rte_mbuf *m)
{
    const struct tg_options *o = t->o;
    uint32_t room = rte_pktmbuf_tailroom(m);
    uint8_t *buf = rte_pktmbuf_mtod(m, uint8_t *);
    uint32_t len;
    if (o->mode == TG_MODE_PCAP) {
        uint32_t i = (uint32_t)(t->generated % t->pcap.n);
        len = t->pcap.length[i];
        if (len > room)
            return false;
        memcpy(buf, t->pcap.data + t->pcap.offset[i], len);
        if (!o->keep_macs && len >= sizeof(struct rte_ether_hdr)) {
            struct rte_ether_hdr *eth = (struct rte_ether_hdr *)buf;
            eth->src_addr = t->src_mac;
            eth->dst_addr = t->dst_mac;
        }
    } else {
        uint64_t i = o->random ? next_random(t) % t->total_tuples : t->generated;
        struct tg_tcp_spec s = {
            .src_mac = t->src_mac,
            .dst_mac = t->dst_mac,
            .dst_ip = o->dst_ip,
            .dst_port = o->dst_port,
            .flags = o->tcp_flags,
            .payload = o->payload,
        };
        tg_tuple(o, i, &s.src_ip, &s.src_port);
        uint64_t r = next_random(t);
        s.seq = (uint32_t)r;
        s.ack = (o->tcp_flags & RTE_TCP_ACK_FLAG) ? (uint32_t)(r >> 32) : 0;
        len = tg_build_tcp(buf, room, &s);
        if (len == 0)
            return false;
    }
    m->data_len = (uint16_t)len;
    m->pkt_len = len;
    return true;
}

/* Generate up to want frames into the pending array. */
static void generate(struct tg *t, unsigned want)
{
    struct rte_mbuf *ms[TG_MAX_BURST];
    if (want == 0 || rte_pktmbuf_alloc_bulk(t->pool, ms, want) != 0) {
        t->alloc_failed += want > 0;
        return;
    }
    for (unsigned i = 0; i < want; i++) {
        if (!build(t, ms[i])) {
            rte_pktmbuf_free(ms[i]);
            t->not_sent++;
        } else {
            t->pending[t->n_pending++] = ms[i];
        }
        t->generated++;
    }
}

static unsigned flush(struct tg *t)
{
    if (t->n_pending == 0)
        return 0;
    uint16_t sent = rte_eth_tx_burst(t->port_id, 0, t->pending, (uint16_t)t->n_pending);
    t->sent += sent;
    t->n_pending -= sent;
    memmove(t->pending, t->pending + sent, t->n_pending * sizeof(t->pending[0]));
    return sent;
}

static const char *send_all(struct tg *t, uint64_t count, uint64_t *elapsed)
{
    const struct tg_options *o = t->o;
    uint64_t start = rte_get_tsc_cycles(), deadline = start + cycles_of(t, o->duration_s);
    const char *why = "count";
    for (;;) {
        uint64_t now = rte_get_tsc_cycles();
        if (stop_requested) {
            why = "signal";
            break;
        }
        if (now >= deadline) {
            why = "duration";
            break;
        }
        if (t->generated >= count && t->n_pending == 0)
            break;
        /* Drain rx first (a few bursts at most): replies must not back up into xlbd's tx. */
        unsigned busy = 0, got;
        for (int i = 0; i < 4 && (got = rx_poll(t)) > 0; i++)
            busy += got;
        if (t->generated < count && t->n_pending < o->burst) {
            uint64_t want = o->burst - t->n_pending;
            if (o->rate_pps > 0) {
                uint64_t allowed = (uint64_t)(seconds(t, now - start) * (double)o->rate_pps) + 1;
                want = allowed > t->generated ? RTE_MIN(want, allowed - t->generated) : 0;
            }
            generate(t, (unsigned)RTE_MIN(want, count - t->generated));
        }
        busy += flush(t);
        if (busy == 0)
            idle(t);
    }
    *elapsed = rte_get_tsc_cycles() - start;
    for (unsigned i = 0; i < t->n_pending; i++)
        rte_pktmbuf_free(t->pending[i]);
    t->not_sent += t->n_pending;
    t->n_pending = 0;
    return why;
}

/* ---- setup ---- */

static int port_setup(struct tg *t)
{
    const struct tg_options *o = t->o;
    if (o->port_name != NULL) {
        if (rte_eth_dev_get_port_by_name(o->port_name, &t->port_id) != 0) {
            fprintf(stderr, "xlb-trafgen: no DPDK port %s\n", o->port_name);
            return -1;
        }
    } else {
        uint16_t id = RTE_MAX_ETHPORTS;
        RTE_ETH_FOREACH_DEV(id) {
            break;
        }
        if (id >= RTE_MAX_ETHPORTS) {
            fprintf(stderr, "xlb-trafgen: no DPDK port (check --memif or the EAL arguments)\n");
            return -1;
        }
        t->port_id = id;
    }
    rte_eth_dev_get_name_by_port(t->port_id, t->port_name);
    t->pool = rte_pktmbuf_pool_create("tg_mbufs", TG_MBUFS, TG_MBUF_CACHE, 0,
                                      RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
    if (t->pool == NULL) {
        fprintf(stderr, "xlb-trafgen: mbuf pool: %s\n", rte_strerror(rte_errno));
        return -1;
    }
    struct rte_eth_conf conf;
    memset(&conf, 0, sizeof(conf));
    uint16_t rx_desc = TG_DESC, tx_desc = TG_DESC;
    int socket = rte_eth_dev_socket_id(t->port_id);
    if (rte_eth_dev_configure(t->port_id, 1, 1, &conf) != 0 ||
        rte_eth_dev_adjust_nb_rx_tx_desc(t->port_id, &rx_desc, &tx_desc) != 0 ||
        rte_eth_rx_queue_setup(t->port_id, 0, rx_desc, socket, NULL, t->pool) != 0 ||
        rte_eth_tx_queue_setup(t->port_id, 0, tx_desc, socket, NULL) != 0) {
        fprintf(stderr, "xlb-trafgen: port %s: cannot configure\n", t->port_name);
        return -1;
    }
    /* A memif client cannot start before the server listens: retry within the link timeout. */
    uint64_t deadline = rte_get_tsc_cycles() + cycles_of(t, o->link_timeout_s);
    int rc;
    while ((rc = rte_eth_dev_start(t->port_id)) != 0 && !stop_requested &&
           rte_get_tsc_cycles() < deadline)
        usleep(100 * 1000);
    if (rc != 0) {
        fprintf(stderr,
                "xlb-trafgen: port %s: cannot start within %.1f s (error %d); over memif, is "
                "xlbd's memif server listening on that socket?\n",
                t->port_name, o->link_timeout_s, rc);
        return -1;
    }
    rte_eth_promiscuous_enable(t->port_id); /* not every driver has it; not needed on memif */
    struct rte_eth_link link;
    memset(&link, 0, sizeof(link));
    while (!stop_requested && rte_eth_link_get_nowait(t->port_id, &link) == 0 &&
           link.link_status != RTE_ETH_LINK_UP && rte_get_tsc_cycles() < deadline)
        usleep(10 * 1000);
    if (link.link_status != RTE_ETH_LINK_UP) {
        fprintf(stderr, "xlb-trafgen: port %s: link down after %.1f s\n", t->port_name,
                o->link_timeout_s);
        return -1;
    }
    struct rte_ether_addr mac;
    rte_eth_macaddr_get(t->port_id, &mac);
    t->src_mac = o->have_src_mac ? o->src_mac : mac;
    return 0;
}

/* The IPv4 address whose MAC is the destination: --dst, else the first IPv4 packet's. */
static bool resolve_target(const struct tg *t, uint32_t *ip)
{
    if (t->o->have_dst) {
        *ip = t->o->dst_ip;
        return true;
    }
    for (uint32_t i = 0; i < t->pcap.n; i++) {
        uint32_t l3;
        const uint8_t *frame = t->pcap.data + t->pcap.offset[i];
        enum tg_kind k = tg_classify(frame, t->pcap.length[i], &l3);
        if (k != TG_KIND_ARP_REQUEST && k != TG_KIND_ARP_REPLY && k != TG_KIND_IPV6 &&
            k != TG_KIND_OTHER && t->pcap.length[i] >= l3 + 20) {
            *ip = tg_ipv4_dst(frame, l3);
            return true;
        }
    }
    return false;
}

static int resolve_dst_mac(struct tg *t)
{
    const struct tg_options *o = t->o;
    if (o->have_dst_mac) {
        t->dst_mac = o->dst_mac;
        return 0;
    }
    if (o->mode == TG_MODE_PCAP && o->keep_macs)
        return 0;
    if (!resolve_target(t, &t->resolve_ip)) {
        fprintf(stderr, "xlb-trafgen: no address to resolve: give --dst-mac or --dst\n");
        return -1;
    }
    uint32_t sip = o->have_src_ip ? o->src_ip.lo : 0;
    uint8_t frame[TG_MIN_FRAME];
    tg_build_arp_request(frame, &t->src_mac, sip, t->resolve_ip);
    t->resolving = true;
    uint64_t deadline = rte_get_tsc_cycles() + cycles_of(t, RTE_MAX(o->link_timeout_s, 1.0));
    for (unsigned tries = 0; !t->resolved && !stop_requested && tries < 1000; tries++) {
        uint64_t now = rte_get_tsc_cycles();
        if (now >= deadline)
            break;
        send_one_now(t, frame, sizeof(frame));
        poll_until(t, RTE_MIN(deadline, now + cycles_of(t, 0.2)), true);
    }
    t->resolving = false;
    if (!t->resolved) {
        fprintf(stderr, "xlb-trafgen: no ARP reply for %u.%u.%u.%u; give --dst-mac\n",
                t->resolve_ip >> 24, (t->resolve_ip >> 16) & 0xff, (t->resolve_ip >> 8) & 0xff,
                t->resolve_ip & 0xff);
        return -1;
    }
    return 0;
}

/* Gratuitous ARP for the backends we stand in for, then answer ARP for the warmup time. */
static void warm_up(struct tg *t)
{
    const struct tg_options *o = t->o;
    if (o->have_backends) {
        uint8_t frame[TG_MIN_FRAME];
        uint64_t n = RTE_MIN(tg_range_size(&o->backend_ip), (uint64_t)TG_MAX_GARP);
        for (uint64_t i = 0; i < n; i++) {
            uint32_t ip = o->backend_ip.lo + (uint32_t)i;
            tg_build_arp_request(frame, &t->src_mac, ip, ip);
            send_one_now(t, frame, sizeof(frame));
        }
    }
    poll_until(t, rte_get_tsc_cycles() + cycles_of(t, o->warmup_s), false);
}

/* ---- EAL ---- */

struct eal_argv {
    int argc;
    char **argv;
    bool own_prefix;
};

static int eal_argv_build(const struct tg_options *o, struct eal_argv *out)
{
    out->argv = calloc((size_t)o->n_eal + 10, sizeof(char *));
    if (out->argv == NULL)
        return -1;
    char buf[256];
    out->argc = 0;
    out->argv[out->argc++] = strdup("xlb-trafgen");
    if (o->memif != NULL) {
        out->argv[out->argc++] = strdup("--no-huge");
        out->argv[out->argc++] = strdup("--no-pci");
        out->argv[out->argc++] = strdup("-m");
        out->argv[out->argc++] = strdup("256");
        snprintf(buf, sizeof(buf), "--vdev=net_memif0,role=client,socket=%s,id=%u", o->memif,
                 o->memif_id);
        out->argv[out->argc++] = strdup(buf);
    }
    out->own_prefix = true;
    for (int i = 0; i < o->n_eal; i++) {
        if (strncmp(o->eal[i], "--file-prefix", 13) == 0)
            out->own_prefix = false;
        out->argv[out->argc++] = strdup(o->eal[i]);
    }
    if (out->own_prefix) {
        snprintf(buf, sizeof(buf), "--file-prefix=xlb-trafgen-%ld", (long)getpid());
        out->argv[out->argc++] = strdup(buf);
    }
    for (int i = 0; i < out->argc; i++)
        if (out->argv[i] == NULL)
            return -1;
    return 0;
}

/* EAL leaves its runtime directory behind: remove the one named after our own PID. */
static void remove_runtime_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    struct dirent *e;
    char path[PATH_MAX];
    for (unsigned n = 0; n < 4096 && (e = readdir(d)) != NULL; n++) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < sizeof(path))
            unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

/* ---- summary ---- */

struct text {
    char buf[4096];
    size_t len;
};

__attribute__((format(printf, 2, 3))) static void add(struct text *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (s->len < sizeof(s->buf)) {
        int n = vsnprintf(s->buf + s->len, sizeof(s->buf) - s->len, fmt, ap);
        if (n > 0)
            s->len = RTE_MIN(s->len + (size_t)n, sizeof(s->buf));
    }
    va_end(ap);
}

static const char *mode_name(enum tg_mode m)
{
    return m == TG_MODE_SYN ? "syn" : m == TG_MODE_RANGE ? "range" : "pcap";
}

static void summary(const struct tg *t, const char *stopped_by, uint64_t send_cycles,
                    uint64_t total_cycles, struct text *s)
{
    double send_s = seconds(t, send_cycles), total_s = seconds(t, total_cycles);
    add(s, "{\"mode\": \"%s\", \"port\": \"%s\"", mode_name(t->o->mode), t->port_name);
    add(s, ", \"src_mac\": \"" RTE_ETHER_ADDR_PRT_FMT "\"", RTE_ETHER_ADDR_BYTES(&t->src_mac));
    if (t->o->mode == TG_MODE_PCAP && t->o->keep_macs)
        add(s, ", \"dst_mac\": null");
    else
        add(s, ", \"dst_mac\": \"" RTE_ETHER_ADDR_PRT_FMT "\"", RTE_ETHER_ADDR_BYTES(&t->dst_mac));
    add(s, ", \"sent\": %" PRIu64 ", \"not_sent\": %" PRIu64, t->sent, t->not_sent);
    add(s, ", \"received\": %" PRIu64 ", \"received_by_kind\": {", t->received);
    for (int k = 0; k < TG_KIND_COUNT; k++)
        add(s, "%s\"%s\": %" PRIu64, k ? ", " : "", tg_kind_names[k], t->kinds[k]);
    add(s,
        "}, \"answered\": {\"arp\": %" PRIu64 ", \"backend_syns\": %" PRIu64
        ", \"syn_acks\": %" PRIu64 ", \"failed\": %" PRIu64 "}",
        t->arp_answered, t->backend_syns, t->syn_acks_sent, t->answers_failed);
    if (t->o->mode == TG_MODE_PCAP)
        add(s, ", \"pcap\": {\"packets\": %u, \"skipped\": %u}", t->pcap.n, t->pcap.skipped);
    add(s, ", \"alloc_failed\": %" PRIu64, t->alloc_failed);
    add(s, ", \"elapsed_s\": %.6f, \"total_s\": %.6f, \"pps\": %.1f", send_s, total_s,
        send_s > 0 ? (double)t->sent / send_s : 0.0);
    add(s, ", \"stopped_by\": \"%s\"}\n", stopped_by);
}

static int run(struct tg *t)
{
    const struct tg_options *o = t->o;
    if (port_setup(t) != 0 || resolve_dst_mac(t) != 0)
        return 1;
    uint64_t count = o->count;
    if (count == 0)
        count = o->mode == TG_MODE_PCAP ? t->pcap.n : t->total_tuples;
    uint64_t begin = rte_get_tsc_cycles();
    warm_up(t);
    uint64_t send_cycles;
    const char *why = send_all(t, count, &send_cycles);
    poll_until(t, rte_get_tsc_cycles() + cycles_of(t, o->linger_s), false);
    struct text s = {.len = 0};
    summary(t, why, send_cycles, rte_get_tsc_cycles() - begin, &s);
    fwrite(s.buf, 1, s.len, stdout);
    fflush(stdout);
    if (o->output != NULL) {
        FILE *f = fopen(o->output, "w");
        if (f == NULL || fwrite(s.buf, 1, s.len, f) != s.len || fclose(f) != 0) {
            fprintf(stderr, "xlb-trafgen: cannot write %s\n", o->output);
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct tg_options o;
    bool help;
    char err[256];
    if (tg_parse_options(argc, argv, &o, &help, err, sizeof(err)) != 0) {
        fprintf(stderr, "xlb-trafgen: %s\n", err);
        return 2;
    }
    if (help) {
        tg_usage(stdout);
        return 0;
    }
    struct tg t;
    memset(&t, 0, sizeof(t));
    t.o = &o;
    t.rng = o.seed ? o.seed : 1;
    if (o.mode != TG_MODE_PCAP)
        t.total_tuples = tg_range_size(&o.src_ip) * tg_range_size(&o.src_port);
    else if (tg_pcap_load(o.pcap, RTE_MBUF_DEFAULT_DATAROOM, &t.pcap, err, sizeof(err)) != 0) {
        fprintf(stderr, "xlb-trafgen: %s\n", err);
        return 1;
    }

    struct eal_argv eal;
    if (eal_argv_build(&o, &eal) != 0) {
        fprintf(stderr, "xlb-trafgen: out of memory\n");
        return 1;
    }
    /* stdout carries the JSON summary alone: EAL and driver logs go to stderr. */
    rte_openlog_stream(stderr);
    char **eal_copy = calloc((size_t)eal.argc + 1, sizeof(char *));
    if (eal_copy == NULL)
        return 1;
    memcpy(eal_copy, eal.argv, (size_t)eal.argc * sizeof(char *));
    if (rte_eal_init(eal.argc, eal_copy) < 0) {
        fprintf(stderr, "xlb-trafgen: EAL: %s\n", rte_strerror(rte_errno));
        return 1;
    }
    char runtime_dir[PATH_MAX];
    snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    t.hz = rte_get_tsc_hz();

    int rc = run(&t);

    uint16_t id;
    RTE_ETH_FOREACH_DEV(id) {
        rte_eth_dev_stop(id);
        rte_eth_dev_close(id);
    }
    rte_eal_cleanup();
    if (eal.own_prefix)
        remove_runtime_dir(runtime_dir);
    tg_pcap_free(&t.pcap);
    for (int i = 0; i < eal.argc; i++)
        free(eal.argv[i]);
    free(eal.argv);
    free(eal_copy);
    return rc;
}
