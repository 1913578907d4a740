/* The listing (`ss -ti` for xlbctl), memory accounting and state names. */
#include <string.h>

#include "xlb_tcp_conn.h"

static const char *const state_names[XLB_TCP_N_STATES] = {
    [XLB_TCP_CLOSED] = "CLOSED",
    [XLB_TCP_SYN_SENT] = "SYN-SENT",
    [XLB_TCP_SYN_RECEIVED] = "SYN-RECEIVED",
    [XLB_TCP_ESTABLISHED] = "ESTABLISHED",
    [XLB_TCP_FIN_WAIT_1] = "FIN-WAIT-1",
    [XLB_TCP_FIN_WAIT_2] = "FIN-WAIT-2",
    [XLB_TCP_CLOSING] = "CLOSING",
    [XLB_TCP_TIME_WAIT] = "TIME-WAIT",
    [XLB_TCP_CLOSE_WAIT] = "CLOSE-WAIT",
    [XLB_TCP_LAST_ACK] = "LAST-ACK",
};

const char *xlb_tcp_state_name(enum xlb_tcp_state s)
{
    return (unsigned)s < XLB_TCP_N_STATES ? state_names[s] : "?";
}

enum xlb_tcp_state xlb_tcp_conn_state(const struct xlb_tcp_conn *c)
{
    return (enum xlb_tcp_state)c->state;
}

uint32_t xlb_tcp_conn_size(void)
{
    return (uint32_t)sizeof(struct xlb_tcp_conn);
}

static uint32_t mbuf_bytes(const struct rte_mbuf *m)
{
    return (uint32_t)sizeof(struct rte_mbuf) + m->priv_size + m->buf_len;
}

uint32_t xlb_tcp_conn_memory(const struct xlb_tcp_conn *c)
{
    uint32_t bytes = xlb_tcp_conn_size();
    for (struct rte_mbuf *m = c->sndq.head; m; m = xlb_tcp_sndq_link(m)->next)
        bytes += mbuf_bytes(m);
    for (const struct rte_mbuf *m = c->rcvq.head; m; m = m->next)
        bytes += mbuf_bytes(m);
    for (unsigned i = 0; i < c->n_ooo; i++)
        bytes += mbuf_bytes(c->ooo[i].m);
    return bytes;
}

void xlb_tcp_conn_info(const struct xlb_tcp_conn *c, struct xlb_tcp_conn_info *out)
{
    memset(out, 0, sizeof(*out));
    out->tuple = c->tuple;
    out->state = (enum xlb_tcp_state)c->state;
    bool synchronized = c->state != XLB_TCP_SYN_SENT && c->state != XLB_TCP_SYN_RECEIVED;
    out->cwnd = synchronized ? xlb_tcp_recovery_cwnd(&c->rec) : 0;
    out->ssthresh = synchronized ? c->rec.cc.ssthresh : 0;
    out->srtt_us = c->rtt.srtt_us;
    out->rttvar_us = c->rtt.rttvar_us;
    out->rto_ms = xlb_tcp_rto_ms(c);
    out->mss = c->mss;
    out->snd_wnd = c->snd_wnd;
    out->rcv_wnd = c->rcv_adv - c->rcv_nxt;
    out->snd_queue = c->sndq.bytes;
    out->rcv_queue = c->rcvq.bytes;
    out->ooo_bytes = c->ooo_bytes;
    out->unacked = c->snd_max - c->snd_una;
    out->retransmits = c->retransmits;
    out->memory = xlb_tcp_conn_memory(c);
}

uint32_t xlb_tcp_list(const struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn_info *out,
                      uint32_t max)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < ep->cfg.max_connections && n < max; i++)
        if (ep->conns[i].state != XLB_TCP_CLOSED)
            xlb_tcp_conn_info(&ep->conns[i], &out[n++]);
    return n;
}
