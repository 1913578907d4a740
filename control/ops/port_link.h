/*
 * A port's link as operators and the health check see it. DPDK's own report is the answer for
 * a NIC. The vdevs that sit on a kernel interface (net_af_packet, net_af_xdp) report their link
 * up whatever that interface does, so for them the interface's operational state is read too:
 * a veth whose peer went down, or a NIC whose cable is out, is then a link down here, and
 * xlb-healthcheck withdraws the host (docs/scale-out.md).
 */
#ifndef XLB_PORT_LINK_H
#define XLB_PORT_LINK_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

enum xlb_link_state { XLB_LINK_UNKNOWN, XLB_LINK_DOWN, XLB_LINK_UP };

struct xlb_port_link {
    enum xlb_link_state state;
    uint32_t speed_mbps;         /* DPDK's figure, when up */
    char kernel_if[IF_NAMESIZE]; /* the kernel interface under the port, or "" */
    const char *kernel_state;    /* "up", "no carrier", "admin down", "gone"; NULL: none */
};

/* Reads the link of DPDK port port_id (a control-plane call: it may make syscalls). */
void xlb_port_link_read(uint16_t port_id, struct xlb_port_link *out);

/* "up", "down" or "unknown". */
const char *xlb_link_state_name(enum xlb_link_state state);

/* The kernel interface's state from its flags (IFF_UP, IFF_RUNNING): NULL when both are set. */
const char *xlb_kernel_link_problem(unsigned flags);

#endif
