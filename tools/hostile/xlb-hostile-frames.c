/*
 * xlb-hostile-frames: send hostile Ethernet frames (noise, mutated and truncated ARP, ICMP and
 * TCP) from a kernel AF_PACKET socket, for robustness tests against a live xlbd. Every frame
 * carries this interface's MAC as source and xlbd's MAC as destination, so the test switch
 * learns nothing new and floods nothing.
 *
 *   xlb-hostile-frames --iface IF --dst-mac MAC --vip4 A --src4 A [--count N] [--seed S]
 *                      [--pps RATE]
 */
#define _GNU_SOURCE /* sendmmsg */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hostile_frames.h"

#define BATCH 64

struct options {
    const char *iface;
    uint8_t dst_mac[6];
    uint32_t vip4, src4;
    unsigned long count;
    unsigned long pps; /* 0: as fast as the kernel takes them */
    uint64_t seed;
};

static uint16_t checksum(const void *data, size_t len, uint32_t sum)
{
    const uint8_t *p = data;
    for (size_t i = 0; i + 1 < len; i += 2)
        sum += (uint32_t)(p[i] << 8 | p[i + 1]);
    if (len & 1)
        sum += (uint32_t)(p[len - 1] << 8);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return htons((uint16_t)~sum);
}

static size_t put_eth(uint8_t *f, const struct options *o, const uint8_t *src_mac, uint16_t type)
{
    memcpy(f, o->dst_mac, 6);
    memcpy(f + 6, src_mac, 6);
    f[12] = (uint8_t)(type >> 8);
    f[13] = (uint8_t)type;
    return 14;
}

static size_t put_ipv4(uint8_t *ip, const struct options *o, uint8_t proto, size_t l4_len)
{
    memset(ip, 0, 20);
    ip[0] = 0x45;
    ip[2] = (uint8_t)((20 + l4_len) >> 8);
    ip[3] = (uint8_t)(20 + l4_len);
    ip[8] = 64;
    ip[9] = proto;
    memcpy(ip + 12, &o->src4, 4);
    memcpy(ip + 16, &o->vip4, 4);
    uint16_t sum = checksum(ip, 20, 0);
    memcpy(ip + 10, &sum, 2);
    return 20;
}

/* Valid ARP request, ICMP echo and TCP SYN to the VIP: mutation starts from real traffic. */
static void add_templates(struct hostile_gen *g, const struct options *o, const uint8_t *mac,
                          uint8_t frames[3][128])
{
    uint8_t *f = frames[0];
    size_t n = put_eth(f, o, mac, 0x0806);
    static const uint8_t arp_head[8] = {0, 1, 8, 0, 6, 4, 0, 1};
    memcpy(f + n, arp_head, 8);
    memcpy(f + n + 8, mac, 6);
    memcpy(f + n + 14, &o->src4, 4);
    memset(f + n + 18, 0, 6);
    memcpy(f + n + 24, &o->vip4, 4);
    hostile_add_template(g, f, n + 28);

    f = frames[1];
    n = put_eth(f, o, mac, 0x0800);
    n += put_ipv4(f + n, o, 1, 8 + 32);
    memset(f + n, 0, 40);
    f[n] = 8;
    uint16_t sum = checksum(f + n, 40, 0);
    memcpy(f + n + 2, &sum, 2);
    hostile_add_template(g, f, n + 40);

    f = frames[2];
    n = put_eth(f, o, mac, 0x0800);
    n += put_ipv4(f + n, o, 6, 20);
    memset(f + n, 0, 20);
    f[n + 2] = 0x1f; /* port 8080 */
    f[n + 3] = 0x90;
    f[n + 12] = 5 << 4;
    f[n + 13] = 0x02; /* SYN */
    hostile_add_template(g, f, n + 20);
}

static int parse_mac(const char *text, uint8_t mac[6])
{
    unsigned b[6];
    if (sscanf(text, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
        return -1;
    for (int i = 0; i < 6; i++)
        mac[i] = (uint8_t)b[i];
    return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    static const struct option opts[] = {
        {"iface", required_argument, NULL, 'i'}, {"dst-mac", required_argument, NULL, 'd'},
        {"vip4", required_argument, NULL, 'v'},  {"src4", required_argument, NULL, 's'},
        {"count", required_argument, NULL, 'n'}, {"seed", required_argument, NULL, 'S'},
        {"pps", required_argument, NULL, 'p'},   {NULL, 0, NULL, 0},
    };
    o->count = 1000000;
    o->seed = 1;
    bool have_mac = false;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'i':
            o->iface = optarg;
            break;
        case 'd':
            have_mac = parse_mac(optarg, o->dst_mac) == 0;
            break;
        case 'v':
            inet_pton(AF_INET, optarg, &o->vip4);
            break;
        case 's':
            inet_pton(AF_INET, optarg, &o->src4);
            break;
        case 'n':
            o->count = strtoul(optarg, NULL, 10);
            break;
        case 'S':
            o->seed = strtoull(optarg, NULL, 10);
            break;
        case 'p':
            o->pps = strtoul(optarg, NULL, 10);
            break;
        default:
            return -1;
        }
    }
    return o->iface && have_mac && o->vip4 && o->src4 ? 0 : -1;
}

static int open_socket(const char *iface, uint8_t mac[6], struct sockaddr_ll *to)
{
    int fd = socket(AF_PACKET, SOCK_RAW, 0); /* protocol 0: send only, receive nothing */
    struct ifreq ifr = {0};
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", iface);
    if (fd < 0 || ioctl(fd, SIOCGIFHWADDR, &ifr) != 0) {
        perror("xlb-hostile-frames: socket");
        return -1;
    }
    memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
    *to = (struct sockaddr_ll){
        .sll_family = AF_PACKET, .sll_ifindex = (int)if_nametoindex(iface), .sll_halen = 6};
    return fd;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    struct options o = {0};
    if (parse_options(argc, argv, &o) != 0) {
        fprintf(stderr, "usage: xlb-hostile-frames --iface IF --dst-mac MAC --vip4 A --src4 A "
                        "[--count N] [--seed S] [--pps RATE]\n");
        return 2;
    }
    uint8_t mac[6], templates[3][128];
    struct sockaddr_ll to;
    int fd = open_socket(o.iface, mac, &to);
    if (fd < 0)
        return 1;
    struct hostile_gen gen;
    hostile_init(&gen, o.seed, o.dst_mac);
    gen.min_len = 14;
    add_templates(&gen, &o, mac, templates);

    static uint8_t frames[BATCH][HOSTILE_MAX_FRAME];
    struct mmsghdr msgs[BATCH];
    struct iovec iov[BATCH];
    unsigned long sent = 0, refused = 0;
    double start = now_s();
    while (sent + refused < o.count) {
        /* Pacing: wait until the schedule allows the next batch. */
        while (o.pps && (double)(sent + refused) > (now_s() - start) * (double)o.pps)
            usleep(200);
        unsigned n =
            (unsigned)(o.count - sent - refused < BATCH ? o.count - sent - refused : BATCH);
        for (unsigned i = 0; i < n; i++) {
            size_t len = hostile_next(&gen, frames[i]);
            memcpy(frames[i], o.dst_mac, 6); /* unicast to xlbd, from us: nothing floods */
            memcpy(frames[i] + 6, mac, 6);
            iov[i] = (struct iovec){.iov_base = frames[i], .iov_len = len};
            msgs[i] = (struct mmsghdr){.msg_hdr = {.msg_name = &to,
                                                   .msg_namelen = sizeof(to),
                                                   .msg_iov = &iov[i],
                                                   .msg_iovlen = 1}};
        }
        int done = sendmmsg(fd, msgs, n, 0);
        if (done > 0) {
            sent += (unsigned long)done;
        } else if (errno == ENOBUFS || errno == EAGAIN) {
            usleep(100); /* the veth queue is full: let xlbd drain it */
        } else {
            refused++; /* a frame the kernel will not send at all: skip it */
        }
    }
    printf("xlb-hostile-frames: %lu frames sent, %lu refused by the kernel, in %.1f s\n", sent,
           refused, now_s() - start);
    close(fd);
    return 0;
}
