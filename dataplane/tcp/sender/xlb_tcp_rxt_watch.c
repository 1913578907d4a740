/* Lost retransmissions found by sequence order: see xlb_tcp_rxt_watch.h. */
#include <stddef.h>

#include "xlb_tcp_rxt_watch.h"
#include "xlb_tcp_seq.h"

static void forget(struct xlb_tcp_rxt_watch *x, unsigned i)
{
    x->w[i] = x->w[--x->n];
}

static unsigned oldest(const struct xlb_tcp_rxt_watch *x)
{
    unsigned o = 0;
    for (unsigned i = 1; i < x->n; i++)
        if (xlb_seq_lt(x->w[i].mark, x->w[o].mark))
            o = i;
    return o;
}

void xlb_tcp_rxt_watch_sent(struct xlb_tcp_rxt_watch *x, uint32_t seq, uint32_t len,
                            uint32_t snd_nxt)
{
    if (len == 0)
        return;
    struct xlb_tcp_rxt_watched *w = NULL;
    for (unsigned i = 0; i < x->n && w == NULL; i++)
        if (xlb_seq_le(x->w[i].seq, seq) && xlb_seq_lt(seq, x->w[i].end))
            w = &x->w[i];
    if (w == NULL) {
        w = &x->w[x->n < XLB_TCP_RXT_WATCH ? x->n++ : oldest(x)];
        w->seq = seq;
        w->end = seq + len;
    } else if (xlb_seq_gt(seq + len, w->end)) {
        w->end = seq + len;
    }
    w->mark = snd_nxt;
    w->due = 0;
}

/* Whether SACKed data first sent after w's copy proves it lost (see the header). */
static bool lost(const struct xlb_tcp_rxt_watched *w, uint32_t high_sack, uint32_t mss)
{
    return xlb_seq_gt(high_sack, w->mark) && high_sack - w->mark > (XLB_TCP_DUPTHRESH - 1) * mss;
}

unsigned xlb_tcp_rxt_watch_on_ack(struct xlb_tcp_rxt_watch *x, const struct xlb_tcp_sack_board *b,
                                  uint32_t ack, uint32_t mss, bool *head)
{
    unsigned found = 0;
    uint32_t high = xlb_tcp_sack_board_high(b, ack);
    *head = false;
    /* Bounded: each turn looks at one entry or forgets one. */
    for (unsigned i = 0; i < x->n;) {
        struct xlb_tcp_rxt_watched *w = &x->w[i];
        uint32_t from = xlb_seq_max(w->seq, ack), hs, he;
        if (xlb_seq_ge(ack, w->end) || !xlb_tcp_sack_board_next_hole(b, from, w->end, &hs, &he)) {
            forget(x, i); /* delivered */
            continue;
        }
        if (!w->due && lost(w, high, mss)) {
            w->due = 1;
            found++;
            *head = *head || hs == ack;
        }
        i++;
    }
    return found;
}

bool xlb_tcp_rxt_watch_next(const struct xlb_tcp_rxt_watch *x, const struct xlb_tcp_sack_board *b,
                            uint32_t snd_una, uint32_t *start, uint32_t *end)
{
    bool any = false;
    for (unsigned i = 0; i < x->n; i++) {
        const struct xlb_tcp_rxt_watched *w = &x->w[i];
        uint32_t hs, he;
        if (!w->due || xlb_seq_ge(snd_una, w->end) ||
            !xlb_tcp_sack_board_next_hole(b, xlb_seq_max(w->seq, snd_una), w->end, &hs, &he))
            continue;
        if (!any || xlb_seq_lt(hs, *start)) {
            *start = hs;
            *end = he;
            any = true;
        }
    }
    return any;
}

uint32_t xlb_tcp_rxt_watch_due_bytes(const struct xlb_tcp_rxt_watch *x, uint32_t snd_una)
{
    uint32_t bytes = 0;
    for (unsigned i = 0; i < x->n; i++) {
        const struct xlb_tcp_rxt_watched *w = &x->w[i];
        if (w->due && xlb_seq_lt(snd_una, w->end))
            bytes += w->end - xlb_seq_max(w->seq, snd_una);
    }
    return bytes;
}
