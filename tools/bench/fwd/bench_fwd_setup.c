/* bench_fwd's fixture (bench_l7 uses it too); see bench_fwd_setup.h. */
#define _GNU_SOURCE /* program_invocation_short_name */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_malloc.h>

#include "bench_fwd_setup.h"
#include "cluster_compile.h"
#include "xlb_msg.h"
#include "xlb_const.h"

/* Strings of the hand-built configuration, in the char * its parsed form holds. */
static char region[] = "r", zone[] = "z", no_string[] = "", cluster_name[] = "backends";

#define IPV4(a, b_, c, d)                                                                          \
    htonl((uint32_t)(a) << 24 | (uint32_t)(b_) << 16 | (uint32_t)(c) << 8 | (d))

static const struct rte_ether_addr port_mac = {{0x02, 0x00, 0x00, 0x00, 0x00, 0x10}};
static const struct rte_ether_addr router_mac = {{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}};

struct bench_fwd b;

_Noreturn void die(const char *what)
{
    fprintf(stderr, "%s: %s\n", program_invocation_short_name, what);
    exit(1);
}

_Noreturn void die_dropped(const char *when)
{
    fprintf(stderr, "%s: %s: a packet was not forwarded; drops:", program_invocation_short_name,
            when);
    for (int d = 0; d < XLB_DROP_MAX; d++)
        if (b.stats.drops[d] != 0)
            fprintf(stderr, " %s=%llu", xlb_drop_reason_name((enum xlb_drop_reason)d),
                    (unsigned long long)b.stats.drops[d]);
    fprintf(stderr, "\n");
    exit(1);
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (p == NULL)
        die("out of memory");
    return p;
}

/* ---- addresses ---- */

static rte_be32_t snat_addr(unsigned s)
{
    return IPV4(198, 19, s >> 8, s & 0xff);
}

static rte_be32_t backend_addr(unsigned k)
{
    return IPV4(198, 18, 0, 21 + k);
}

static struct rte_ether_addr backend_mac(unsigned k)
{
    return (struct rte_ether_addr){{0x02, 0x00, 0x00, 0x00, 0x01, (uint8_t)k}};
}

static void tuple_set(struct tuple *u, rte_be32_t src, rte_be16_t sport, rte_be32_t dst,
                      rte_be16_t dport)
{
    u->src = src;
    u->dst = dst;
    u->sport = sport;
    u->dport = dport;
    u->sum = (src & 0xffff) + (src >> 16) + (dst & 0xffff) + (dst >> 16);
}

/* Flow i's client side: 4,096 client addresses, each with as many source ports as needed. */
static void client_tuple(uint32_t i, struct tuple *u)
{
    rte_be32_t src = htonl(0x64400000u + 1 + i % CLIENT_ADDRS); /* 100.64.0.0/10 */
    tuple_set(u, src, htons((uint16_t)(1024 + i / CLIENT_ADDRS)), IPV4(198, 18, 0, 100),
              htons(VIP_PORT));
}

/* ---- frames ---- */

/* A segment of a connection whose client starts at sequence number CLIENT_ISN and whose
 * backend at BACKEND_ISN: each data segment resends the first bytes, which the flows' windows
 * take as a retransmission. */
#define CLIENT_ISN  1000u
#define BACKEND_ISN 5000u

/* What Linux puts in a SYN and its SYN-ACK: MSS 1460, SACK-permitted, timestamps, window
 * scale 7. */
static const uint8_t linux_syn_options[20] = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0,
                                              0, 1, 0,    0,    0, 0, 1, 3,  3, 7};

static const uint8_t ipv6_prefix[12] = BENCH_IPV6_PREFIX;

/* The address the bench uses for an IPv4 one: itself, or with --ipv6 in 2001:2::/96. */
static void bench_addr(rte_be32_t addr, struct xlb_addr *out)
{
    if (!b.ipv6) {
        xlb_addr_from_ipv4(addr, out);
        return;
    }
    uint8_t bytes[16];
    memcpy(bytes, ipv6_prefix, 12);
    memcpy(bytes + 12, &addr, 4);
    xlb_addr_from_ipv6(bytes, out);
}

/* The IPv4 header of a template (addresses, checksum zero), and its sum. */
static void tmpl_ipv4(struct tmpl *t, struct rte_ipv4_hdr *ip, uint16_t l4_len)
{
    ip->version_ihl = 0x45;
    ip->total_length = htons((uint16_t)(sizeof(*ip) + l4_len));
    ip->fragment_offset = htons(RTE_IPV4_HDR_DF_FLAG);
    ip->time_to_live = 64;
    ip->next_proto_id = IPPROTO_TCP;
    t->sum = rte_raw_cksum(ip, sizeof(*ip));
}

/* The IPv6 header of a template: the addresses' prefix, their last 4 bytes zero. */
static void tmpl_ipv6(struct tmpl *t, struct rte_ipv6_hdr *ip, uint16_t l4_len)
{
    ip->vtc_flow = htonl(6u << 28);
    ip->payload_len = htons(l4_len);
    ip->proto = IPPROTO_TCP;
    ip->hop_limits = 64;
    memcpy(ip->src_addr, ipv6_prefix, 12);
    memcpy(ip->dst_addr, ipv6_prefix, 12);
    t->ipv6 = true;
}

static void tmpl_make(struct tmpl *t, const struct rte_ether_addr *src_mac, uint8_t flags,
                      uint32_t seq, uint32_t ack, uint16_t payload)
{
    memset(t, 0, sizeof(*t));
    /* IPv6's header is 20 bytes longer: as much less payload keeps the frames' size. */
    if (b.ipv6 && payload >= 20)
        payload -= 20;
    size_t l3 = b.ipv6 ? sizeof(struct rte_ipv6_hdr) : sizeof(struct rte_ipv4_hdr);
    struct rte_ether_hdr *eth = (struct rte_ether_hdr *)t->bytes;
    struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)((uint8_t *)(eth + 1) + l3);
    size_t opts = (flags & RTE_TCP_SYN_FLAG) ? sizeof(linux_syn_options) : 0;
    uint16_t l4_len = (uint16_t)(sizeof(*tcp) + opts + payload);
    size_t len = sizeof(*eth) + l3 + l4_len;
    if (len > FRAME_COPY)
        die("frame template too long");
    eth->dst_addr = port_mac;
    eth->src_addr = *src_mac;
    eth->ether_type = htons(b.ipv6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
    if (b.ipv6)
        tmpl_ipv6(t, (struct rte_ipv6_hdr *)(eth + 1), l4_len);
    else
        tmpl_ipv4(t, (struct rte_ipv4_hdr *)(eth + 1), l4_len);
    tcp->sent_seq = htonl(seq);
    tcp->recv_ack = (flags & RTE_TCP_ACK_FLAG) ? htonl(ack) : 0;
    tcp->data_off = (uint8_t)((5 + opts / 4) << 4);
    tcp->tcp_flags = flags;
    tcp->rx_win = htons(65535);
    memcpy(tcp + 1, linux_syn_options, opts);
    memset((uint8_t *)(tcp + 1) + opts, 'x', payload);
    t->len = (uint16_t)(len < MIN_FRAME ? MIN_FRAME : len);
}

/* The backend's answer to a frame xlb sent it: the same addresses and ports, swapped. */
void answer_tuple(const struct rte_mbuf *m, struct tuple *u)
{
    if (b.ipv6) {
        const struct rte_ipv6_hdr *ip6 =
            rte_pktmbuf_mtod_offset(m, const struct rte_ipv6_hdr *, sizeof(struct rte_ether_hdr));
        const struct rte_tcp_hdr *tcp = (const struct rte_tcp_hdr *)(ip6 + 1);
        rte_be32_t src, dst;
        memcpy(&src, ip6->src_addr + 12, 4);
        memcpy(&dst, ip6->dst_addr + 12, 4);
        tuple_set(u, dst, tcp->dst_port, src, tcp->src_port);
        return;
    }
    const struct rte_ipv4_hdr *ip =
        rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *, sizeof(struct rte_ether_hdr));
    const struct rte_tcp_hdr *tcp = (const struct rte_tcp_hdr *)(ip + 1);
    tuple_set(u, ip->dst_addr, tcp->dst_port, ip->src_addr, tcp->src_port);
}

/* ---- set-up ---- */

static void add_entry(rte_be32_t addr, uint8_t role, const struct rte_ether_addr *mac,
                      uint16_t snat_index)
{
    struct xlb_addr_entry e = {
        .role = role, .port_mask = role == XLB_ROLE_NEIGHBOUR ? 0 : 1, .snat_index = snat_index};
    bench_addr(addr, &e.addr);
    if (mac != NULL) {
        e.resolved = true;
        e.mac = *mac;
    }
    if (xlb_snapshot_add_address(b.snap, &e) != 0)
        die("snapshot address table full");
}

static uint32_t locality_slot(void *arg, uint32_t priority, const struct xlb_eds_locality *l)
{
    (void)arg;
    (void)priority;
    (void)l;
    return 0;
}

/* One priority, one locality, N_BACKENDS healthy endpoints, round robin. */
static struct xlb_lb_cluster *compile_cluster(void)
{
    struct xlb_host_port where[N_BACKENDS];
    struct xlb_eds_endpoint eps[N_BACKENDS];
    uint32_t slots[N_BACKENDS];
    for (unsigned k = 0; k < N_BACKENDS; k++) {
        memset(&where[k], 0, sizeof(where[k]));
        bench_addr(backend_addr(k), &where[k].addr);
        where[k].port = BACKEND_PORT;
        eps[k] = (struct xlb_eds_endpoint){
            .addresses = &where[k], .n_addresses = 1, .health = XLB_HEALTH_HEALTHY, .weight = 1};
        slots[k] = k;
    }
    struct xlb_eds_locality loc = {.region = region,
                                   .zone = zone,
                                   .sub_zone = no_string,
                                   .weight = 1,
                                   .endpoints = eps,
                                   .n_endpoints = N_BACKENDS};
    struct xlb_eds_priority prio = {.localities = &loc, .n_localities = 1};
    struct xlb_endpoint_config eds = {
        .cluster_name = cluster_name, .priorities = &prio, .n_priorities = 1};
    struct xlb_cluster_config cfg = {
        .name = cluster_name,
        .type = XLB_CLUSTER_EDS,
        .eds_service_name = no_string,
        .lb_policy = XLB_LB_ROUND_ROBIN,
        .max_requests = 1u << 30,
        .override_host_status = XLB_OVERRIDE_STATUS_DEFAULT,
    };
    xlb_ring_hash_config_default(&cfg.ring_hash);
    struct xlb_cluster_compile_input in = {
        .name = "backends",
        .config = &cfg,
        .endpoints = &eds,
        .endpoint_slots = slots,
        .cluster_slot = CLUSTER_SLOT,
        .locality_slot = locality_slot,
    };
    struct xlb_lb_cluster *c = NULL;
    char err[256] = "";
    if (xlb_cluster_compile(&in, &c, err, sizeof(err)) != 0 || c == NULL) {
        fprintf(stderr, "bench_fwd: cluster compile: %s\n", err);
        exit(1);
    }
    return c;
}

void eal_init(bool hugepages, uint32_t memory_mib, char *const *extra)
{
    char mib[16], prefix[64];
    snprintf(mib, sizeof(mib), "%u", memory_mib);
    /* A prefix of its own: the runtime directory removed below is then this run's alone. */
    snprintf(prefix, sizeof(prefix), "--file-prefix=xlb-bench-fwd-%d", (int)getpid());
    char *no_huge[] = {XLB_STR("bench_fwd"),
                       XLB_STR("--no-shconf"),
                       XLB_STR("--no-huge"),
                       XLB_STR("--no-pci"),
                       XLB_STR("-l"),
                       XLB_STR("0"),
                       XLB_STR("--log-level=warning"),
                       XLB_STR("--no-telemetry"),
                       XLB_STR("-m"),
                       mib,
                       prefix,
                       NULL};
    /* --huge-unlink: the hugepage files go when the process does, whatever its end. */
    char *huge[] = {XLB_STR("bench_fwd"),
                    XLB_STR("--no-shconf"),
                    XLB_STR("--no-pci"),
                    XLB_STR("-l"),
                    XLB_STR("0"),
                    XLB_STR("--log-level=warning"),
                    XLB_STR("--no-telemetry"),
                    XLB_STR("--huge-unlink"),
                    prefix,
                    NULL};
    char *args[24];
    int argc = 0;
    for (char **arg = hugepages ? huge : no_huge; *arg != NULL; arg++)
        args[argc++] = *arg;
    for (; extra != NULL && *extra != NULL && argc < 23; extra++)
        args[argc++] = *extra;
    args[argc] = NULL;
    if (rte_eal_init(argc, args) < 0)
        die("rte_eal_init failed");
    /* With --no-shconf and --no-telemetry DPDK writes nothing there, but still makes the
     * directory, which would stay behind after every run. */
    rmdir(rte_eal_get_runtime_dir());
}

void setup(void)
{
    int socket = (int)rte_socket_id();
    b.tsc_hz = rte_get_tsc_hz();
    b.pool = rte_pktmbuf_pool_create("bench_fwd_pool", POOL_SIZE, POOL_CACHE, 0,
                                     RTE_MBUF_DEFAULT_BUF_SIZE, socket);
    b.to_control = xlb_msg_ring_create("bench_fwd_control", socket);
    b.snap = xlb_snapshot_alloc(1, 32 + MAX_SNAT, 1);
    if (b.pool == NULL || b.to_control == NULL || b.snap == NULL)
        die("cannot allocate the pool, ring or snapshot");

    struct xlb_snapshot *snap = b.snap;
    snap->n_ports = 1;
    snap->ports[0].port_id = 0;
    snap->ports[0].mac = port_mac;
    snap->ports[0].n_prefixes = 1;
    if (xlb_prefix_parse(b.ipv6 ? "2001:2::c612:a/96" : "198.18.0.10/24",
                         &snap->ports[0].prefixes[0]) != 0)
        die("prefix");
    add_entry(IPV4(198, 18, 0, 10), XLB_ROLE_PORT_ADDRESS, NULL, 0);
    add_entry(IPV4(198, 18, 0, 100), XLB_ROLE_VIP, NULL, 0);
    for (unsigned s = 0; s < MAX_SNAT; s++) {
        add_entry(snat_addr(s), XLB_ROLE_SNAT, NULL, (uint16_t)s);
        bench_addr(snat_addr(s), &b.snat[s]);
    }
    for (unsigned k = 0; k < N_BACKENDS; k++) {
        struct rte_ether_addr mac = backend_mac(k);
        add_entry(backend_addr(k), XLB_ROLE_NEIGHBOUR, &mac, 0);
    }

    b.cluster = compile_cluster();
    b.target = (struct xlb_lb_target){
        .name = b.cluster->name, .ready = true, .n_leaves = 1, .leaves = &b.cluster};
    b.vip = (struct xlb_lb_vip){.routes = NULL, .n_targets = 1, .targets = &b.target};
    snap->n_vips = 1;
    bench_addr(IPV4(198, 18, 0, 100), &snap->vips[0].addr);
    snap->vips[0].l4_port = VIP_PORT;
    snap->vips[0].l7 = false;
    snap->vips[0].lb = &b.vip;

    /* The worker's counters live in their own cache-aligned memory, as in xlb_shared. */
    size_t load_size = (sizeof(*b.load) + 63) / 64 * 64;
    b.load = aligned_alloc(64, load_size);
    if (b.load == NULL)
        die("out of memory");
    memset(b.load, 0, load_size);
    if (xlb_lb_worker_init(&b.lb, 42, b.load, b.load, 1) != 0)
        die("xlb_lb_worker_init failed");

    /* One worker, its SNAT slice as xlbd makes it (flows_create gives the table its ports). */
    xlb_burst_ctx_init(&b.ctx, &(struct xlb_burst_params){
                                   .stats = &b.stats,
                                   .to_control = b.to_control,
                                   .pool = b.pool,
                                   .lb = &b.lb,
                                   .worker_id = 0,
                                   .n_workers = 1,
                                   .tsc_hz = b.tsc_hz,
                               });

    struct rte_ether_addr backend0 = backend_mac(0);
    const uint8_t data = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG;
    tmpl_make(&b.data, &router_mac, data, CLIENT_ISN + 1, BACKEND_ISN + 1, PAYLOAD);
    tmpl_make(&b.back_data, &backend0, data, BACKEND_ISN + 1, CLIENT_ISN + 1, PAYLOAD);
    tmpl_make(&b.syn, &router_mac, RTE_TCP_SYN_FLAG, CLIENT_ISN, 0, 0);
    tmpl_make(&b.syn_ack, &backend0, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, BACKEND_ISN,
              CLIENT_ISN + 1, 0);
    tmpl_make(&b.ack, &router_mac, RTE_TCP_ACK_FLAG, CLIENT_ISN + 1, BACKEND_ISN + 1, 0);
}

void teardown(void)
{
    b.snap->n_vips = 0; /* the VIP's LB tree is ours, not reference counted */
    xlb_snapshot_free(b.snap);
    xlb_lb_cluster_release(b.cluster);
    xlb_lb_worker_fini(&b.lb);
    free(b.load);
    rte_ring_free(b.to_control);
    rte_mempool_free(b.pool);
}

/* ---- flows ---- */

uint64_t heap_bytes(void)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < rte_socket_count(); i++) {
        struct rte_malloc_socket_stats st;
        if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &st) == 0)
            total += st.heap_allocsz_bytes;
    }
    return total;
}

void flows_create(struct flows *f, uint32_t n)
{
    static unsigned serial;
    char name[32];
    snprintf(name, sizeof(name), "bench_flows_%u", serial++);
    f->n = n;
    uint64_t before = heap_bytes();
    /* Four SNAT addresses, or as many as the flows need ports. */
    unsigned n_snat = (n + SNAT_PORTS - 1) / SNAT_PORTS;
    uint16_t first, count;
    xlb_snat_worker_ports(0, xlb_snat_slice(1), 0, &first, &count);
    f->table = xlb_flow_table_create(name, n, (int)rte_socket_id(), b.snat,
                                     n_snat > N_SNAT ? n_snat : N_SNAT, first, count);
    if (f->table == NULL)
        die("cannot create the flow table (raise -m?)");
    f->bytes = heap_bytes() - before;
    f->client = xcalloc(n, sizeof(*f->client));
    f->backend = xcalloc(n, sizeof(*f->backend));
    for (uint32_t i = 0; i < n; i++)
        client_tuple(i, &f->client[i]);
    b.ctx.flows = f->table;
}

void flows_free(struct flows *f)
{
    b.ctx.flows = NULL;
    xlb_flow_table_free(f->table);
    free(f->client);
    free(f->backend);
}
