/*
 * The send queue: the application's mbufs from snd_una, linked through a dynamic field that
 * also keeps where each one's payload lies. Not through the mbufs' next pointers and data
 * fields, because an mbuf of the queue can itself go to the wire as a segment, its headers
 * written into its headroom (xlb_tcp_output.c): while it is on the wire its next pointer must
 * be NULL and its data fields describe the packet, not the queued bytes.
 */
#include <string.h>

#include <rte_errno.h>

#include "xlb_tcp_conn.h"

int xlb_tcp_sndq_field = -1;

int xlb_tcp_sndq_register(void)
{
    static const struct rte_mbuf_dynfield desc = {
        .name = "xlb_tcp_sndq_link",
        .size = sizeof(struct xlb_tcp_sndq_link),
        .align = __alignof__(struct xlb_tcp_sndq_link),
    };
    /* Registering again with the same description returns the same offset. */
    int off = rte_mbuf_dynfield_register(&desc);
    if (off < 0)
        return -rte_errno;
    xlb_tcp_sndq_field = off;
    return 0;
}

void xlb_tcp_sndq_push(struct xlb_tcp_sndq *q, struct rte_mbuf *m)
{
    struct xlb_tcp_sndq_link *l = xlb_tcp_sndq_link(m);
    l->next = NULL;
    l->off = m->data_off;
    l->len = m->data_len;
    m->next = NULL;
    m->nb_segs = 1;
    m->pkt_len = m->data_len;
    if (q->tail)
        xlb_tcp_sndq_link(q->tail)->next = m;
    else
        q->head = m;
    q->tail = m;
    q->bytes += l->len;
    q->segs++;
    (*q->held)++;
}

/* Give back one mbuf of the queue: the wire may still hold it (a segment sent in place), and
 * then only the queue's reference goes. Its next pointer is NULL already (push and the
 * in-place send keep it so), so nothing of an mbuf the wire holds is written. */
static void release(struct rte_mbuf *m)
{
    rte_pktmbuf_free_seg(m);
}

void xlb_tcp_sndq_drop(struct xlb_tcp_sndq *q, uint32_t n, uint32_t *off)
{
    if (n > q->bytes)
        n = q->bytes;
    q->bytes -= n;
    /* Bounded by the queue's mbufs: each turn frees one or ends. */
    while (n && q->head) {
        struct rte_mbuf *m = q->head;
        const struct xlb_tcp_sndq_link *l = xlb_tcp_sndq_link(m);
        uint32_t left = (uint32_t)l->len - *off;
        if (n < left) {
            *off += n;
            return;
        }
        n -= left;
        *off = 0;
        if (q->cursor == m)
            q->cursor = NULL;
        else if (q->cursor)
            q->cursor_pos -= l->len;
        q->head = l->next;
        if (!q->head)
            q->tail = NULL;
        q->segs--;
        (*q->held)--;
        release(m);
    }
}

void xlb_tcp_sndq_free(struct xlb_tcp_sndq *q)
{
    while (q->head) {
        struct rte_mbuf *m = q->head;
        q->head = xlb_tcp_sndq_link(m)->next;
        release(m);
    }
    q->tail = NULL;
    q->cursor = NULL;
    q->bytes = 0;
    *q->held -= q->segs;
    q->segs = 0;
}

struct rte_mbuf *xlb_tcp_sndq_seek(struct xlb_tcp_sndq *q, uint32_t off, uint32_t *at)
{
    struct rte_mbuf *m = q->head;
    uint32_t pos = 0; /* where m's first byte lies, from the head's first byte */
    if (q->cursor && q->cursor_pos <= off) {
        m = q->cursor;
        pos = q->cursor_pos;
    }
    /* Bounded by the queue's mbufs. */
    for (; m; m = xlb_tcp_sndq_link(m)->next) {
        uint32_t len = xlb_tcp_sndq_link(m)->len;
        if (off - pos < len)
            break;
        pos += len;
    }
    if (!m)
        return NULL;
    q->cursor = m;
    q->cursor_pos = pos;
    *at = off - pos;
    return m;
}

uint32_t xlb_tcp_sndq_tail_room(struct xlb_tcp_sndq *q, uint32_t unsent, uint32_t piece)
{
    struct rte_mbuf *m = q->tail;
    if (!m)
        return 0;
    const struct xlb_tcp_sndq_link *l = xlb_tcp_sndq_link(m);
    /* Sent, even in part, its bytes are fixed (the peer may have them); on the wire, or held by
     * anyone else, it may not be written. Unsent, its data fields are still the payload's. */
    if (unsent < l->len || !RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1 || l->len >= piece)
        return 0;
    return RTE_MIN(piece - l->len, (uint32_t)rte_pktmbuf_tailroom(m));
}

void xlb_tcp_sndq_append_tail(struct xlb_tcp_sndq *q, const void *data, uint32_t n)
{
    struct rte_mbuf *m = q->tail;
    memcpy(rte_pktmbuf_append(m, (uint16_t)n), data, n);
    xlb_tcp_sndq_link(m)->len = m->data_len;
    q->bytes += n;
}
