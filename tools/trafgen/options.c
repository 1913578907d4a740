#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <rte_tcp.h>

#include "trafgen.h"

void tg_usage(FILE *out)
{
    fputs("usage: xlb-trafgen --mode syn|range|pcap [OPTIONS] [-- EAL ARGUMENTS]\n"
          "\n"
          "traffic:\n"
          "  --mode syn|range|pcap     SYN flood, range of TCP segments, or pcap replay\n"
          "  --src-ip A[-B]            source addresses (syn, range; ARP is answered for them)\n"
          "  --src-port P[-Q]          source ports (default 1024-65535)\n"
          "  --dst ADDRESS:PORT        destination, e.g. the VIP (syn, range; pcap: ARP target)\n"
          "  --flags FLAGS             range mode TCP flags from FSRPAU (default A)\n"
          "  --payload BYTES           TCP payload of zeros (default 0, at most 1400)\n"
          "  --random                  pick tuples at random in the ranges (default: in order)\n"
          "  --seed N                  random seed (default 1)\n"
          "  --pcap FILE               classic pcap file of Ethernet frames to replay (pcap)\n"
          "  --keep-macs               pcap: send the frames' MAC addresses unchanged\n"
          "  --backend-ips A[-B]       stand in for backends: answer ARP for them and answer\n"
          "                            each SYN xlbd forwards to them with a SYN-ACK\n"
          "bounds and pacing:\n"
          "  --count N                 frames to send (default: one pass over the ranges/file)\n"
          "  --duration S              stop sending after S seconds (default 10)\n"
          "  --rate-pps N              frames per second (default 0: as fast as possible)\n"
          "  --burst N                 frames per tx burst, 1..512 (default 32)\n"
          "  --warmup S                answer ARP for S seconds before sending (default 0;\n"
          "                            1 with --backend-ips)\n"
          "  --linger S                keep counting replies S seconds after sending (default 1)\n"
          "  --idle-sleep-us N         sleep N us when a loop had nothing to do (default 0)\n"
          "device:\n"
          "  --memif SOCKET            connect as memif client to xlbd's memif server socket\n"
          "                            (adds --no-huge --no-pci -m 256 --vdev=net_memif0,...)\n"
          "  --memif-id N              memif interface id (default 0)\n"
          "  --port NAME               DPDK port to use (default: the first one)\n"
          "  --link-timeout S          wait at most S seconds for the link (default 10)\n"
          "  --src-mac MAC             source MAC (default: the port's)\n"
          "  --dst-mac MAC             destination MAC (default: resolved with ARP for --dst)\n"
          "output:\n"
          "  --output FILE             also write the JSON summary to FILE\n"
          "  --help                    this text\n"
          "\n"
          "Arguments after -- go to DPDK's EAL (e.g. -a 0000:01:00.0 -l 2). A --file-prefix of\n"
          "xlb-trafgen-PID is added unless one is given. The summary is one JSON line on stdout.\n",
          out);
}

int tg_parse_ipv4_range(const char *s, struct tg_range *out)
{
    char buf[64];
    if (strlen(s) >= sizeof(buf))
        return -1;
    strcpy(buf, s);
    char *dash = strchr(buf, '-');
    if (dash != NULL)
        *dash = '\0';
    struct in_addr a, b;
    if (inet_pton(AF_INET, buf, &a) != 1)
        return -1;
    b = a;
    if (dash != NULL && inet_pton(AF_INET, dash + 1, &b) != 1)
        return -1;
    out->lo = ntohl(a.s_addr);
    out->hi = ntohl(b.s_addr);
    return out->lo <= out->hi ? 0 : -1;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    if (*s == '\0' || *s == '-' || *s == '+')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v > max)
        return -1;
    *out = v;
    return 0;
}

static int parse_seconds(const char *s, double max, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(v >= 0) || v > max)
        return -1;
    *out = v;
    return 0;
}

int tg_parse_port_range(const char *s, struct tg_range *out)
{
    char buf[32];
    if (strlen(s) >= sizeof(buf))
        return -1;
    strcpy(buf, s);
    char *dash = strchr(buf, '-');
    if (dash != NULL)
        *dash = '\0';
    uint64_t a, b;
    if (parse_u64(buf, 65535, &a) != 0 || a == 0)
        return -1;
    b = a;
    if (dash != NULL && (parse_u64(dash + 1, 65535, &b) != 0 || b < a))
        return -1;
    out->lo = (uint32_t)a;
    out->hi = (uint32_t)b;
    return 0;
}

int tg_parse_tcp_flags(const char *s, uint8_t *out)
{
    static const char letters[] = "FSRPAU";
    static const uint8_t bits[] = {RTE_TCP_FIN_FLAG, RTE_TCP_SYN_FLAG, RTE_TCP_RST_FLAG,
                                   RTE_TCP_PSH_FLAG, RTE_TCP_ACK_FLAG, RTE_TCP_URG_FLAG};
    uint8_t flags = 0;
    if (*s == '\0' || strlen(s) > 6)
        return -1;
    for (; *s; s++) {
        const char *at = strchr(letters, *s);
        if (at == NULL)
            return -1;
        flags |= bits[at - letters];
    }
    *out = flags;
    return 0;
}

static int parse_endpoint(const char *s, uint32_t *ip, uint16_t *port)
{
    char buf[64];
    if (strlen(s) >= sizeof(buf))
        return -1;
    strcpy(buf, s);
    char *colon = strrchr(buf, ':');
    if (colon != NULL)
        *colon = '\0';
    struct in_addr a;
    if (inet_pton(AF_INET, buf, &a) != 1)
        return -1;
    uint64_t p = 0;
    if (colon != NULL && (parse_u64(colon + 1, 65535, &p) != 0 || p == 0))
        return -1;
    *ip = ntohl(a.s_addr);
    *port = (uint16_t)p;
    return 0;
}

void tg_tuple(const struct tg_options *o, uint64_t i, uint32_t *ip, uint16_t *port)
{
    uint64_t n_ports = tg_range_size(&o->src_port);
    uint64_t n = tg_range_size(&o->src_ip) * n_ports;
    i %= n;
    *ip = o->src_ip.lo + (uint32_t)(i / n_ports);
    *port = (uint16_t)(o->src_port.lo + i % n_ports);
}

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

enum {
    OPT_MODE = 256,
    OPT_SRC_IP,
    OPT_SRC_PORT,
    OPT_DST,
    OPT_FLAGS,
    OPT_PAYLOAD,
    OPT_RANDOM,
    OPT_SEED,
    OPT_RATE,
    OPT_COUNT,
    OPT_DURATION,
    OPT_WARMUP,
    OPT_LINGER,
    OPT_LINK_TIMEOUT,
    OPT_PCAP,
    OPT_KEEP_MACS,
    OPT_SRC_MAC,
    OPT_DST_MAC,
    OPT_MEMIF,
    OPT_MEMIF_ID,
    OPT_PORT,
    OPT_BURST,
    OPT_IDLE_SLEEP,
    OPT_BACKENDS,
    OPT_OUTPUT,
    OPT_HELP,
};

static const struct option long_options[] = {
    {"mode", required_argument, NULL, OPT_MODE},
    {"src-ip", required_argument, NULL, OPT_SRC_IP},
    {"src-port", required_argument, NULL, OPT_SRC_PORT},
    {"dst", required_argument, NULL, OPT_DST},
    {"flags", required_argument, NULL, OPT_FLAGS},
    {"payload", required_argument, NULL, OPT_PAYLOAD},
    {"random", no_argument, NULL, OPT_RANDOM},
    {"seed", required_argument, NULL, OPT_SEED},
    {"rate-pps", required_argument, NULL, OPT_RATE},
    {"count", required_argument, NULL, OPT_COUNT},
    {"duration", required_argument, NULL, OPT_DURATION},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"linger", required_argument, NULL, OPT_LINGER},
    {"link-timeout", required_argument, NULL, OPT_LINK_TIMEOUT},
    {"pcap", required_argument, NULL, OPT_PCAP},
    {"keep-macs", no_argument, NULL, OPT_KEEP_MACS},
    {"src-mac", required_argument, NULL, OPT_SRC_MAC},
    {"dst-mac", required_argument, NULL, OPT_DST_MAC},
    {"memif", required_argument, NULL, OPT_MEMIF},
    {"memif-id", required_argument, NULL, OPT_MEMIF_ID},
    {"port", required_argument, NULL, OPT_PORT},
    {"burst", required_argument, NULL, OPT_BURST},
    {"idle-sleep-us", required_argument, NULL, OPT_IDLE_SLEEP},
    {"backend-ips", required_argument, NULL, OPT_BACKENDS},
    {"output", required_argument, NULL, OPT_OUTPUT},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

static int parse_one(int opt, const char *arg, struct tg_options *o, bool *help, char *err,
                     size_t len)
{
    uint64_t v;
    switch (opt) {
    case OPT_MODE:
        if (strcmp(arg, "syn") == 0)
            o->mode = TG_MODE_SYN;
        else if (strcmp(arg, "range") == 0)
            o->mode = TG_MODE_RANGE;
        else if (strcmp(arg, "pcap") == 0)
            o->mode = TG_MODE_PCAP;
        else
            return fail(err, len, "--mode: \"%s\" is not syn, range or pcap", arg);
        return 0;
    case OPT_SRC_IP:
        o->have_src_ip = true;
        return tg_parse_ipv4_range(arg, &o->src_ip) == 0
                   ? 0
                   : fail(err, len, "--src-ip: \"%s\" is not A or A-B (IPv4, A <= B)", arg);
    case OPT_SRC_PORT:
        o->have_src_port = true;
        return tg_parse_port_range(arg, &o->src_port) == 0
                   ? 0
                   : fail(err, len, "--src-port: \"%s\" is not P or P-Q in 1..65535", arg);
    case OPT_BACKENDS:
        o->have_backends = true;
        return tg_parse_ipv4_range(arg, &o->backend_ip) == 0
                   ? 0
                   : fail(err, len, "--backend-ips: \"%s\" is not A or A-B (IPv4)", arg);
    case OPT_DST:
        o->have_dst = true;
        return parse_endpoint(arg, &o->dst_ip, &o->dst_port) == 0
                   ? 0
                   : fail(err, len, "--dst: \"%s\" is not ADDRESS:PORT (IPv4)", arg);
    case OPT_FLAGS:
        return tg_parse_tcp_flags(arg, &o->tcp_flags) == 0
                   ? 0
                   : fail(err, len, "--flags: \"%s\" is not letters of FSRPAU", arg);
    case OPT_PAYLOAD:
        if (parse_u64(arg, 1400, &v) != 0)
            return fail(err, len, "--payload: \"%s\" is not 0..1400", arg);
        o->payload = (uint16_t)v;
        return 0;
    case OPT_RANDOM:
        o->random = true;
        return 0;
    case OPT_SEED:
        return parse_u64(arg, UINT64_MAX, &o->seed) == 0
                   ? 0
                   : fail(err, len, "--seed: \"%s\" is not a number", arg);
    case OPT_RATE:
        return parse_u64(arg, 1000000000, &o->rate_pps) == 0
                   ? 0
                   : fail(err, len, "--rate-pps: \"%s\" is not 0..1000000000", arg);
    case OPT_COUNT:
        if (parse_u64(arg, UINT64_C(1000000000000), &v) != 0 || v == 0)
            return fail(err, len, "--count: \"%s\" is not 1..10^12", arg);
        o->count = v;
        return 0;
    case OPT_DURATION:
        if (parse_seconds(arg, 86400, &o->duration_s) != 0 || o->duration_s <= 0)
            return fail(err, len, "--duration: \"%s\" is not seconds in (0, 86400]", arg);
        return 0;
    case OPT_WARMUP:
        return parse_seconds(arg, 60, &o->warmup_s) == 0
                   ? 0
                   : fail(err, len, "--warmup: \"%s\" is not seconds in [0, 60]", arg);
    case OPT_LINGER:
        return parse_seconds(arg, 60, &o->linger_s) == 0
                   ? 0
                   : fail(err, len, "--linger: \"%s\" is not seconds in [0, 60]", arg);
    case OPT_LINK_TIMEOUT:
        return parse_seconds(arg, 300, &o->link_timeout_s) == 0
                   ? 0
                   : fail(err, len, "--link-timeout: \"%s\" is not seconds in [0, 300]", arg);
    case OPT_PCAP:
        o->pcap = arg;
        return 0;
    case OPT_KEEP_MACS:
        o->keep_macs = true;
        return 0;
    case OPT_SRC_MAC:
        o->have_src_mac = true;
        return rte_ether_unformat_addr(arg, &o->src_mac) == 0
                   ? 0
                   : fail(err, len, "--src-mac: \"%s\" is not a MAC address", arg);
    case OPT_DST_MAC:
        o->have_dst_mac = true;
        return rte_ether_unformat_addr(arg, &o->dst_mac) == 0
                   ? 0
                   : fail(err, len, "--dst-mac: \"%s\" is not a MAC address", arg);
    case OPT_MEMIF:
        if (*arg == '\0' || strlen(arg) > 107 || strchr(arg, ',') != NULL)
            return fail(err, len, "--memif: a socket path of 1..107 bytes without commas");
        o->memif = arg;
        return 0;
    case OPT_MEMIF_ID:
        if (parse_u64(arg, 65535, &v) != 0)
            return fail(err, len, "--memif-id: \"%s\" is not 0..65535", arg);
        o->memif_id = (unsigned)v;
        return 0;
    case OPT_PORT:
        o->port_name = arg;
        return 0;
    case OPT_BURST:
        if (parse_u64(arg, 512, &v) != 0 || v == 0)
            return fail(err, len, "--burst: \"%s\" is not 1..512", arg);
        o->burst = (unsigned)v;
        return 0;
    case OPT_IDLE_SLEEP:
        if (parse_u64(arg, 100000, &v) != 0)
            return fail(err, len, "--idle-sleep-us: \"%s\" is not 0..100000", arg);
        o->idle_sleep_us = (unsigned)v;
        return 0;
    case OPT_OUTPUT:
        o->output = arg;
        return 0;
    case OPT_HELP:
        *help = true;
        return 0;
    default:
        return fail(err, len, "unknown option (see --help)");
    }
}

static int check(struct tg_options *o, bool warmup_given, char *err, size_t len)
{
    if (o->mode == TG_MODE_NONE)
        return fail(err, len, "--mode syn|range|pcap is required");
    if (o->mode == TG_MODE_PCAP) {
        if (o->pcap == NULL)
            return fail(err, len, "--mode pcap needs --pcap FILE");
    } else {
        if (o->pcap != NULL)
            return fail(err, len, "--pcap goes with --mode pcap");
        if (!o->have_dst || o->dst_port == 0)
            return fail(err, len, "--mode %s needs --dst ADDRESS:PORT",
                        o->mode == TG_MODE_SYN ? "syn" : "range");
        if (!o->have_src_ip)
            return fail(err, len, "--mode %s needs --src-ip A[-B]",
                        o->mode == TG_MODE_SYN ? "syn" : "range");
    }
    if (o->mode == TG_MODE_SYN)
        o->tcp_flags = RTE_TCP_SYN_FLAG;
    if (o->memif == NULL && o->n_eal == 0)
        return fail(err, len, "no device: give --memif SOCKET or EAL arguments after --");
    if (!warmup_given && o->have_backends)
        o->warmup_s = 1;
    return 0;
}

int tg_parse_options(int argc, char **argv, struct tg_options *o, bool *help, char *err, size_t len)
{
    memset(o, 0, sizeof(*o));
    o->src_port = (struct tg_range){1024, 65535};
    o->tcp_flags = RTE_TCP_ACK_FLAG;
    o->seed = 1;
    o->duration_s = 10;
    o->linger_s = 1;
    o->link_timeout_s = 10;
    o->burst = 32;
    *help = false;
    bool warmup_given = false;
    opterr = 0;
    optind = 1;
    int opt;
    while ((opt = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
        if (opt == '?' || opt == ':')
            return fail(err, len, "%s: unknown option or missing argument (see --help)",
                        argv[optind - 1]);
        warmup_given |= opt == OPT_WARMUP;
        if (parse_one(opt, optarg, o, help, err, len) != 0)
            return -1;
    }
    if (*help)
        return 0;
    /* getopt_long stops at "--": what follows is EAL's. Anything else left is an error. */
    if (optind < argc && strcmp(argv[optind - 1], "--") != 0)
        return fail(err, len, "unexpected argument \"%s\" (EAL arguments go after --)",
                    argv[optind]);
    o->n_eal = argc - optind;
    o->eal = argv + optind;
    return check(o, warmup_given, err, len);
}
