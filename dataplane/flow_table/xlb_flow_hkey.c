#include "xlb_flow_hkey.h"

#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_byteorder.h>

#include "xlb_flow_table.h"

bool xlb_flow_vip6_find(const struct xlb_flow_vip6 *vip6, const uint8_t addr[16], uint32_t *out)
{
    for (uint16_t i = 0; i < vip6->n; i++) {
        if (memcmp(vip6->addr[i], addr, 16) == 0) {
            *out = XLB_FLOW_VIP6_MARK | i;
            return true;
        }
    }
    return false;
}

bool xlb_flow_vip6_add(struct xlb_flow_vip6 *vip6, const uint8_t addr[16])
{
    uint32_t known;
    if (xlb_flow_vip6_find(vip6, addr, &known))
        return true;
    if (vip6->n == XLB_FLOW_MAX_VIP6)
        return false;
    memcpy(vip6->addr[vip6->n++], addr, 16);
    return true;
}

bool xlb_flow_hkey_of(const struct xlb_flow_vip6 *vip6, const struct xlb_flow_key *key,
                      struct xlb_flow_hkey *out)
{
    return xlb_flow_hkey_from(vip6, key->family, key->src, key->src_port, key->dst, key->dst_port,
                              out);
}

void xlb_flow_hkey_expand(const struct xlb_flow_vip6 *vip6, const struct xlb_flow_hkey *h,
                          struct xlb_flow_key *out)
{
    memset(out, 0, sizeof(*out));
    out->proto = IPPROTO_TCP;
    out->src_port = h->client_port;
    out->dst_port = h->vip_port;
    if ((h->vip & XLB_FLOW_VIP6_MARK) != XLB_FLOW_VIP6_MARK) {
        out->family = AF_INET;
        uint32_t vip = rte_cpu_to_be_32(h->vip);
        memcpy(out->dst, &vip, 4);
        memcpy(out->src, h->client + 12, 4);
        return;
    }
    out->family = AF_INET6;
    memcpy(out->src, h->client, 16);
    uint32_t n = h->vip & ~XLB_FLOW_VIP6_MARK;
    if (n < vip6->n)
        memcpy(out->dst, vip6->addr[n], 16);
}
