/* Tail loss probe (RFC 8985 section 7); see xlb_tcp_tlp.h. */
#include "xlb_tcp_tlp.h"
#include "xlb_tcp_seq.h"

uint32_t xlb_tcp_tlp_timeout_us(const struct xlb_tcp_recovery *r, uint32_t srtt_us,
                                uint32_t in_flight, uint32_t rto_us)
{
    if (!r->sack_ok || srtt_us == 0 || in_flight == 0 || r->in_recovery || r->after_rto ||
        r->tlp_out)
        return 0;
    uint64_t pto = 2ull * srtt_us;
    if (pto < XLB_TCP_TLP_MIN_US)
        pto = XLB_TCP_TLP_MIN_US;
    if (in_flight <= r->mss)
        pto += XLB_TCP_TLP_MAX_ACK_DELAY_US;
    return pto < rto_us ? (uint32_t)pto : rto_us;
}

struct xlb_tcp_send_choice xlb_tcp_tlp_probe(const struct xlb_tcp_recovery *r,
                                             const struct xlb_tcp_send_view *v)
{
    uint32_t in_flight = v->snd_nxt - v->snd_una;
    if (!r->sack_ok || in_flight == 0 || r->in_recovery || r->after_rto || r->tlp_out)
        return (struct xlb_tcp_send_choice){XLB_TCP_SEND_NOTHING, 0, 0};
    uint32_t want = v->unsent < v->mss ? v->unsent : v->mss;
    if (want > 0 && v->snd_wnd >= in_flight + want)
        return (struct xlb_tcp_send_choice){XLB_TCP_SEND_NEW, v->snd_nxt, want};
    uint32_t last = in_flight < v->mss ? in_flight : v->mss;
    return (struct xlb_tcp_send_choice){XLB_TCP_SEND_RETRANSMIT, v->snd_nxt - last, last};
}

void xlb_tcp_tlp_sent(struct xlb_tcp_recovery *r, uint32_t seq, uint32_t len, bool retransmission,
                      struct xlb_tcp_recovery_stats *st)
{
    r->tlp_out = 1;
    r->tlp_seq = seq;
    r->tlp_end = seq + len;
    r->tlp_rxt = retransmission;
    st->tlp_probes++;
}
