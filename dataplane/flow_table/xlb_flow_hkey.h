/*
 * The form in which a flow's client side is kept in the flow table's hash: 24 bytes, so that
 * rte_hash stores it in a 32-byte slot (with its 8-byte data word) instead of the 48 a full
 * struct xlb_flow_key would take; on a table of millions of flows that is a sixth of its
 * memory.
 *
 * The client's address is kept whole, an IPv4 one as IPv4-mapped IPv6 (::ffff:a.b.c.d). The
 * VIP is an IPv4 address in 4 bytes; an IPv6 VIP is given a small number by the table the
 * first time a flow to it is made (XLB_FLOW_VIP6_MARK | n), and the table keeps the address.
 * IPv4 addresses 255.255.255.0/24 are never VIPs (the bootstrap reader refuses broadcast and
 * multicast VIPs), so the two cannot meet.
 */
#ifndef XLB_FLOW_HKEY_H
#define XLB_FLOW_HKEY_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "xlb_addr.h"
#include "xlb_limits.h"

#define XLB_FLOW_VIP6_MARK UINT32_C(0xffffff00)   /* host order: the top 24 bits, then n */
#define XLB_FLOW_MAX_VIP6  XLB_MAX_VIP6_ADDRESSES /* IPv6 VIP addresses a table numbers */

struct xlb_flow_key;

struct xlb_flow_hkey {
    uint8_t client[16];             /* IPv6, or IPv4-mapped IPv6 */
    uint16_t client_port, vip_port; /* network order */
    uint32_t vip;                   /* host order: an IPv4 address, or XLB_FLOW_VIP6_MARK | n */
};

_Static_assert(sizeof(struct xlb_flow_hkey) == 24, "rte_hash keeps 24-byte keys in 32 bytes");

/* The IPv6 VIP addresses a table has numbered. */
struct xlb_flow_vip6 {
    uint16_t n;
    uint8_t addr[XLB_FLOW_MAX_VIP6][16];
};

/* Number an IPv6 VIP address (once): false when the table has numbered as many as it can. */
bool xlb_flow_vip6_add(struct xlb_flow_vip6 *vip6, const uint8_t addr[16]);

/* An IPv6 VIP address's number (XLB_FLOW_VIP6_MARK | n), if the table has numbered it. */
bool xlb_flow_vip6_find(const struct xlb_flow_vip6 *vip6, const uint8_t addr[16], uint32_t *out);

/*
 * The compact form of a client key (client -> VIP) from a segment's addresses and ports (ports
 * in network order, addresses of 4 or 16 bytes by family); false for a key no flow can have: an
 * IPv6 VIP not numbered, or an IPv4 VIP in 255.255.255.0/24. IPv6 VIPs are searched in the
 * order they were numbered: a table serves few. Inline: a worker calls it for every segment
 * from a client.
 */
static inline bool xlb_flow_hkey_from(const struct xlb_flow_vip6 *vip6, uint8_t family,
                                      const uint8_t *client, uint16_t client_port,
                                      const uint8_t *vip, uint16_t vip_port,
                                      struct xlb_flow_hkey *out)
{
    out->client_port = client_port;
    out->vip_port = vip_port;
    if (family == AF_INET) {
        uint32_t vip4;
        memcpy(&vip4, vip, 4);
        out->vip = ntohl(vip4); /* host order */
        memset(out->client, 0, 10);
        out->client[10] = out->client[11] = 0xff; /* ::ffff:a.b.c.d */
        memcpy(out->client + 12, client, 4);
        return (out->vip & XLB_FLOW_VIP6_MARK) != XLB_FLOW_VIP6_MARK;
    }
    memcpy(out->client, client, 16);
    return xlb_flow_vip6_find(vip6, vip, &out->vip);
}

/* The same from a full client key. */
bool xlb_flow_hkey_of(const struct xlb_flow_vip6 *vip6, const struct xlb_flow_key *key,
                      struct xlb_flow_hkey *out);

/*
 * A stored key's addresses as a packet of the flow carries them, without building the full
 * key: the client's, and the VIP's (an IPv4 VIP written to vip4 in network order; an IPv6 one
 * from the table's numbering). A reply's rewrite needs no more.
 */
static inline void xlb_flow_hkey_addresses(const struct xlb_flow_vip6 *vip6,
                                           const struct xlb_flow_hkey *h, const uint8_t **client,
                                           const uint8_t **vip, uint32_t *vip4)
{
    if ((h->vip & XLB_FLOW_VIP6_MARK) != XLB_FLOW_VIP6_MARK) {
        *vip4 = htonl(h->vip);
        *vip = (const uint8_t *)vip4;
        *client = h->client + 12;
        return;
    }
    uint32_t n = h->vip & ~XLB_FLOW_VIP6_MARK;
    *vip = vip6->addr[n < vip6->n ? n : 0];
    *client = h->client;
}

/* Back to the full client key. */
void xlb_flow_hkey_expand(const struct xlb_flow_vip6 *vip6, const struct xlb_flow_hkey *h,
                          struct xlb_flow_key *out);

#endif
