/*
 * The reassembly queue: out-of-order segments kept sorted and without overlap in a fixed array
 * of the control block, within a per-connection byte budget, a per-worker byte budget and
 * XLB_TCP_OOO_SLOTS segments. A segment over budget is dropped and counted; the sender resends it
 * (and our SACK blocks tell it what we hold). Overlaps are trimmed on insert, so the bytes that
 * reach the receive queue are exactly one copy of each sequence number.
 */
#include <string.h>

#include "xlb_tcp_conn.h"
#include "xlb_tcp_seq.h"

static void ooo_remove(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, unsigned i, bool free)
{
    if (free)
        rte_pktmbuf_free(c->ooo[i].m);
    c->ooo_bytes -= c->ooo[i].len;
    ep->ooo_bytes -= c->ooo[i].len;
    memmove(&c->ooo[i], &c->ooo[i + 1], (c->n_ooo - i - 1) * sizeof(c->ooo[0]));
    c->n_ooo--;
}

static void note_recent(struct xlb_tcp_conn *c, uint32_t seq)
{
    memmove(&c->sack_recent[1], &c->sack_recent[0],
            (XLB_TCP_SACK_SEND - 1) * sizeof(c->sack_recent[0]));
    c->sack_recent[0] = seq;
}

bool xlb_tcp_reass_insert(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c, uint32_t seq,
                          uint32_t len, bool fin, struct rte_mbuf *m)
{
    uint32_t end = seq + len;
    /* Trim against the neighbours: drop what an earlier segment holds from the front, and what
     * later ones hold from the back; segments this one covers entirely are replaced. */
    for (unsigned i = 0; i < c->n_ooo; i++) { /* a bare FIN (len 0) too: fuzz_tcp found it */
        const struct xlb_tcp_ooo *o = &c->ooo[i];
        uint32_t o_end = o->seq + o->len;
        if (xlb_seq_le(o->seq, seq) && xlb_seq_ge(o_end, end)) {
            /* Entirely held already (a duplicate): keep the FIN news if any. */
            if (fin && o_end == end && !o->fin)
                c->ooo[i].fin = true;
            if (len) { /* D-SACK the duplicate, RFC 2883 section 4.2 */
                c->dsack_left = seq;
                c->dsack_right = end;
            }
            note_recent(c, o->seq);
            rte_pktmbuf_free(m);
            return true;
        }
    }
    for (unsigned i = 0; i < c->n_ooo;) {
        const struct xlb_tcp_ooo *o = &c->ooo[i];
        uint32_t o_end = o->seq + o->len;
        if (xlb_seq_ge(o->seq, seq) && xlb_seq_le(o_end, end)) {
            fin = fin || (o->fin && o_end == end);
            ooo_remove(ep, c, i, true); /* covered by the new one */
            continue;
        }
        if (xlb_seq_lt(o->seq, seq) && xlb_seq_gt(o_end, seq)) {
            uint32_t cut = o_end - seq; /* front of ours overlaps its back */
            rte_pktmbuf_adj(m, (uint16_t)cut);
            seq += cut;
            len -= cut;
        } else if (xlb_seq_lt(o->seq, end) && xlb_seq_gt(o_end, end)) {
            uint32_t cut = end - o->seq; /* our back overlaps its front */
            rte_pktmbuf_trim(m, (uint16_t)cut);
            len -= cut;
            end -= cut;
            fin = false;
        }
        i++;
    }
    if (len == 0 && !fin) {
        rte_pktmbuf_free(m);
        return true;
    }
    if (c->n_ooo >= XLB_TCP_OOO_SLOTS) {
        ep->ctr.ooo_dropped_slots++;
        rte_pktmbuf_free(m);
        return false;
    }
    if (c->ooo_bytes + len > ep->cfg.ooo_max_bytes) {
        ep->ctr.ooo_dropped_conn++;
        rte_pktmbuf_free(m);
        return false;
    }
    if (ep->ooo_bytes + len > ep->cfg.ooo_max_bytes_worker) {
        ep->ctr.ooo_dropped_worker++;
        rte_pktmbuf_free(m);
        return false;
    }
    unsigned at = 0;
    while (at < c->n_ooo && xlb_seq_lt(c->ooo[at].seq, seq))
        at++;
    memmove(&c->ooo[at + 1], &c->ooo[at], (c->n_ooo - at) * sizeof(c->ooo[0]));
    c->ooo[at] = (struct xlb_tcp_ooo){.seq = seq, .len = len, .fin = fin, .m = m};
    c->n_ooo++;
    c->ooo_bytes += len;
    ep->ooo_bytes += len;
    ep->ctr.ooo_queued++;
    note_recent(c, seq);
    return true;
}

bool xlb_tcp_reass_pull(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c)
{
    bool fin = false;
    while (c->n_ooo && xlb_seq_le(c->ooo[0].seq, c->rcv_nxt)) {
        struct xlb_tcp_ooo o = c->ooo[0];
        uint32_t end = o.seq + o.len;
        ooo_remove(ep, c, 0, false);
        if (xlb_seq_le(end, c->rcv_nxt) && !(o.fin && end == c->rcv_nxt)) {
            rte_pktmbuf_free(o.m); /* already delivered by a retransmission */
            continue;
        }
        uint32_t skip = c->rcv_nxt - o.seq;
        if (skip)
            rte_pktmbuf_adj(o.m, (uint16_t)skip);
        if (o.m->data_len) {
            c->rcv_nxt += o.m->data_len;
            xlb_tcp_mq_push(&c->rcvq, o.m);
        } else {
            rte_pktmbuf_free(o.m);
        }
        if (o.fin) {
            fin = true;
            break;
        }
    }
    return fin;
}

void xlb_tcp_reass_free(struct xlb_tcp_endpoint *ep, struct xlb_tcp_conn *c)
{
    while (c->n_ooo)
        ooo_remove(ep, c, c->n_ooo - 1, true);
}

uint8_t xlb_tcp_reass_sack(const struct xlb_tcp_conn *c, uint32_t left[XLB_TCP_SACK_SEND],
                           uint32_t right[XLB_TCP_SACK_SEND])
{
    /* Contiguous runs of the queue, then ordered: the runs holding the latest arrivals first
     * (RFC 2018 section 4), then the others from the lowest. */
    uint32_t run_l[XLB_TCP_OOO_SLOTS], run_r[XLB_TCP_OOO_SLOTS];
    unsigned runs = 0;
    for (unsigned i = 0; i < c->n_ooo; i++) {
        uint32_t l = c->ooo[i].seq, r = l + c->ooo[i].len;
        if (runs && run_r[runs - 1] == l)
            run_r[runs - 1] = r;
        else {
            run_l[runs] = l;
            run_r[runs] = r;
            runs++;
        }
    }
    bool used[XLB_TCP_OOO_SLOTS] = {false};
    uint8_t n = 0;
    for (unsigned k = 0; k < XLB_TCP_SACK_SEND && n < XLB_TCP_SACK_SEND; k++) {
        for (unsigned i = 0; i < runs; i++) {
            if (!used[i] && xlb_seq_in(c->sack_recent[k], run_l[i], run_r[i])) {
                used[i] = true;
                left[n] = run_l[i];
                right[n] = run_r[i];
                n++;
                break;
            }
        }
    }
    for (unsigned i = 0; i < runs && n < XLB_TCP_SACK_SEND; i++) {
        if (!used[i]) {
            left[n] = run_l[i];
            right[n] = run_r[i];
            n++;
        }
    }
    return n;
}
