/* The receive queue: single-segment mbufs linked by next, no copy, O(1) push (the send
 * queue, whose mbufs also go to the wire, is xlb_tcp_sndq.c). */
#include "xlb_tcp_conn.h"

void xlb_tcp_mq_push(struct xlb_tcp_mqueue *q, struct rte_mbuf *m)
{
    m->next = NULL;
    m->nb_segs = 1;
    m->pkt_len = m->data_len;
    if (q->tail)
        q->tail->next = m;
    else
        q->head = m;
    q->tail = m;
    q->bytes += m->data_len;
    q->segs++;
    (*q->held)++;
}

void xlb_tcp_mq_drop(struct xlb_tcp_mqueue *q, uint32_t n, uint32_t *off)
{
    if (n > q->bytes)
        n = q->bytes;
    q->bytes -= n;
    /* Bounded by the queue's segments: each turn frees one or ends. */
    while (n && q->head) {
        struct rte_mbuf *m = q->head;
        uint32_t left = (uint32_t)m->data_len - *off;
        if (n < left) {
            *off += n;
            return;
        }
        n -= left;
        *off = 0;
        q->head = m->next;
        if (!q->head)
            q->tail = NULL;
        q->segs--;
        (*q->held)--;
        m->next = NULL;
        rte_pktmbuf_free_seg(m);
    }
}

void xlb_tcp_mq_free(struct xlb_tcp_mqueue *q)
{
    while (q->head) {
        struct rte_mbuf *m = q->head;
        q->head = m->next;
        m->next = NULL;
        rte_pktmbuf_free_seg(m);
    }
    q->tail = NULL;
    q->bytes = 0;
    *q->held -= q->segs;
    q->segs = 0;
}
