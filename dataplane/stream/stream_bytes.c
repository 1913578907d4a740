/*
 * Bytes waiting between a client stream and its backend stream, copied into mbufs of the
 * worker's pool (filling each before the next), taken out in order.
 */
#include <string.h>

#include "stream_conn.h"

bool xlb_stream_bytes_put(struct xlb_stream_bytes *q, struct rte_mempool *pool, const uint8_t *data,
                          uint32_t n)
{
    while (n > 0) {
        if (q->tail == NULL || rte_pktmbuf_tailroom(q->tail) == 0) {
            struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
            if (m == NULL)
                return false;
            if (q->tail == NULL)
                q->head = m;
            else
                q->tail->next = m; /* a plain list: each mbuf stands alone */
            q->tail = m;
        }
        uint32_t room = rte_pktmbuf_tailroom(q->tail);
        uint32_t piece = n < room ? n : room;
        memcpy(rte_pktmbuf_append(q->tail, (uint16_t)piece), data, piece);
        data += piece;
        n -= piece;
        q->len += piece;
    }
    return true;
}

uint32_t xlb_stream_bytes_take(struct xlb_stream_bytes *q, uint8_t *out, uint32_t max)
{
    uint32_t done = 0;
    while (done < max && q->head != NULL) {
        struct rte_mbuf *m = q->head;
        uint32_t have = rte_pktmbuf_data_len(m);
        uint32_t piece = have < max - done ? have : max - done;
        memcpy(out + done, rte_pktmbuf_mtod(m, const uint8_t *), piece);
        rte_pktmbuf_adj(m, (uint16_t)piece);
        done += piece;
        if (rte_pktmbuf_data_len(m) == 0) {
            q->head = m->next;
            m->next = NULL;
            rte_pktmbuf_free_seg(m);
            if (q->head == NULL)
                q->tail = NULL;
        }
    }
    q->len -= done;
    return done;
}

void xlb_stream_bytes_clear(struct xlb_stream_bytes *q)
{
    while (q->head != NULL) {
        struct rte_mbuf *m = q->head;
        q->head = m->next;
        m->next = NULL;
        rte_pktmbuf_free_seg(m);
    }
    q->tail = NULL;
    q->len = 0;
}
