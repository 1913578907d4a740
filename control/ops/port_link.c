/*
 * A port's link: DPDK's report, corrected by the kernel interface's state for vdevs bound to one.
 * DPDK's ethdev tells which kernel interface a port sits on (rte_eth_dev_info.if_index, set by
 * the af_packet and af_xdp drivers, 0 for a NIC's own driver), so no vdev argument is parsed.
 */
#include "port_link.h"

#include <sys/ioctl.h>
#include <sys/socket.h>
#include <string.h>
#include <unistd.h>

#include <rte_ethdev.h>

const char *xlb_link_state_name(enum xlb_link_state state)
{
    switch (state) {
    case XLB_LINK_UP:
        return "up";
    case XLB_LINK_DOWN:
        return "down";
    default:
        return "unknown";
    }
}

/* IFF_RUNNING is the interface's operational state (RFC 2863 "up"): carrier, and for a veth
 * a peer that is up. */
const char *xlb_kernel_link_problem(unsigned flags)
{
    if (!(flags & IFF_UP))
        return "admin down";
    if (!(flags & IFF_RUNNING))
        return "no carrier";
    return NULL;
}

/* The flags of interface if_index in xlbd's network namespace; its name into name. */
static int kernel_if_flags(unsigned if_index, char name[IF_NAMESIZE], unsigned *flags)
{
    if (if_indextoname(if_index, name) == NULL)
        return -1;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct ifreq req;
    memset(&req, 0, sizeof(req));
    memcpy(req.ifr_name, name, IF_NAMESIZE);
    int rc = ioctl(fd, SIOCGIFFLAGS, &req);
    close(fd);
    if (rc != 0)
        return -1;
    *flags = (unsigned)(uint16_t)req.ifr_flags;
    return 0;
}

void xlb_port_link_read(uint16_t port_id, struct xlb_port_link *out)
{
    memset(out, 0, sizeof(*out));
    struct rte_eth_link link;
    if (rte_eth_link_get_nowait(port_id, &link) != 0) {
        out->state = XLB_LINK_UNKNOWN;
        return;
    }
    out->state = link.link_status ? XLB_LINK_UP : XLB_LINK_DOWN;
    if (out->state == XLB_LINK_UP)
        out->speed_mbps = link.link_speed;
    struct rte_eth_dev_info info;
    if (rte_eth_dev_info_get(port_id, &info) != 0 || info.if_index == 0)
        return;
    unsigned flags = 0;
    if (kernel_if_flags(info.if_index, out->kernel_if, &flags) != 0) {
        out->kernel_state = "gone";
        out->state = XLB_LINK_DOWN;
        return;
    }
    const char *problem = xlb_kernel_link_problem(flags);
    out->kernel_state = problem != NULL ? problem : "up";
    if (problem != NULL)
        out->state = XLB_LINK_DOWN;
}
