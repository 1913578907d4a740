#include "port_steering.h"

#include <string.h>
#include <sys/socket.h>

#include <rte_ethdev.h>
#include <rte_flow.h>

#include "xlb_log.h"

/* One rule: TCP to `snat`, destination port in [first, first + slice) -> queue. */
static struct rte_flow *steer_one(uint16_t port_id, const struct xlb_addr *snat, uint32_t first,
                                  uint32_t slice, uint16_t queue, struct rte_flow_error *err)
{
    struct rte_flow_attr attr = {.ingress = 1};
    struct rte_flow_item_ipv4 ip4 = {0}, ip4_mask = {0};
    struct rte_flow_item_ipv6 ip6 = {0}, ip6_mask = {0};
    struct rte_flow_item_tcp tcp = {.hdr.dst_port = rte_cpu_to_be_16((uint16_t)first)};
    struct rte_flow_item_tcp tcp_mask = {.hdr.dst_port = rte_cpu_to_be_16((uint16_t) ~(slice - 1))};
    struct rte_flow_item pattern[4] = {{.type = RTE_FLOW_ITEM_TYPE_ETH}};
    if (snat->family == AF_INET) {
        memcpy(&ip4.hdr.dst_addr, snat->bytes, 4);
        ip4_mask.hdr.dst_addr = UINT32_MAX;
        pattern[1] = (struct rte_flow_item){
            .type = RTE_FLOW_ITEM_TYPE_IPV4, .spec = &ip4, .mask = &ip4_mask};
    } else {
        memcpy(ip6.hdr.dst_addr, snat->bytes, 16);
        memset(ip6_mask.hdr.dst_addr, 0xff, 16);
        pattern[1] = (struct rte_flow_item){
            .type = RTE_FLOW_ITEM_TYPE_IPV6, .spec = &ip6, .mask = &ip6_mask};
    }
    pattern[2] =
        (struct rte_flow_item){.type = RTE_FLOW_ITEM_TYPE_TCP, .spec = &tcp, .mask = &tcp_mask};
    pattern[3] = (struct rte_flow_item){.type = RTE_FLOW_ITEM_TYPE_END};
    struct rte_flow_action_queue to = {.index = queue};
    struct rte_flow_action actions[] = {
        {.type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &to},
        {.type = RTE_FLOW_ACTION_TYPE_END},
    };
    if (rte_flow_validate(port_id, &attr, pattern, actions, err) != 0)
        return NULL;
    return rte_flow_create(port_id, &attr, pattern, actions, err);
}

unsigned xlb_port_steer_snat(uint16_t port_id, uint16_t n_rxq, const struct xlb_addr *snat,
                             unsigned n_snat, uint32_t slice)
{
    if (n_rxq < 2 || slice >= 65536)
        return 0;
    unsigned installed = 0;
    for (unsigned s = 0; s < n_snat; s++)
        for (uint16_t q = 0; q < n_rxq; q++) {
            struct rte_flow_error err = {0};
            if (steer_one(port_id, &snat[s], (uint32_t)q * slice, slice, q, &err) != NULL) {
                installed++;
                continue;
            }
            XLB_LOG(INFO, PORT,
                    "port %u: no rte_flow steering (%s): replies reach their worker over "
                    "redirect rings",
                    port_id, err.message ? err.message : "refused");
            xlb_port_steer_flush(port_id);
            return 0;
        }
    XLB_LOG(INFO, PORT, "port %u: %u rte_flow rules steer replies to their worker's queue", port_id,
            installed);
    return installed;
}

void xlb_port_steer_flush(uint16_t port_id)
{
    struct rte_flow_error err;
    rte_flow_flush(port_id, &err);
}
