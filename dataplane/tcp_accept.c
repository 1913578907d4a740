#include "tcp_accept.h"

#include <string.h>

#include "xlb_tcp_options.h"

uint64_t xlb_accept_now_ms(const struct xlb_burst_ctx *ctx)
{
    uint64_t per_ms = ctx->tsc_hz / 1000;
    return ctx->now_tsc / (per_ms != 0 ? per_ms : 1);
}

void xlb_accept_cookie_keys(const struct xlb_burst_ctx *ctx, struct xlb_syn_cookie_keys *k)
{
    xlb_syn_cookie_keys_init(k, ctx->flows->secret);
}

bool xlb_accept_cookie_valid(const struct xlb_burst_ctx *ctx, const struct rte_tcp_hdr *tcp,
                             uint32_t payload_len, const struct xlb_flow_key *key)
{
    struct xlb_tcp_opts o;
    if (xlb_tcp_options_parse((const uint8_t *)(tcp + 1), xlb_tcp_options_len(tcp), &o) != 0)
        return false;
    struct xlb_syn_cookie_keys keys;
    struct xlb_syn_cookie_tuple t = {
        .family = key->family, .client_port = key->src_port, .vip_port = key->dst_port};
    memcpy(t.client, key->src, 16);
    memcpy(t.vip, key->dst, 16);
    xlb_accept_cookie_keys(ctx, &keys);
    struct xlb_syn_cookie_opts opts;
    uint32_t client_isn;
    return xlb_syn_cookie_check_flight(&keys, &t, rte_be_to_cpu_32(tcp->sent_seq), payload_len,
                                       rte_be_to_cpu_32(tcp->recv_ack), o.has_ts, o.tsecr,
                                       xlb_accept_now_ms(ctx), &client_isn, &opts) == 0;
}

struct rte_mbuf *xlb_accept_ip_packet(struct xlb_frame *frame)
{
    rte_pktmbuf_adj(frame->m, frame->l2_len);
    return frame->m;
}

void xlb_accept_mss_limit(struct xlb_tcp_endpoint *ep, const struct xlb_snapshot *snap,
                          uint8_t family, uint16_t port_index)
{
    xlb_tcp_set_mss_limit(ep, family, xlb_egress_mss_max(snap, family, port_index, port_index));
}
