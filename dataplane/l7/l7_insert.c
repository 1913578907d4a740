/*
 * Set-Cookie insertion (A55/A60). The field is one HPACK literal without indexing, the same for
 * every response of the connection (one endpoint, one cluster), appended to the end of a
 * response's first header block; the frame's length grows by as much. The client's byte stream
 * is then longer than the backend's: every insertion is remembered by the backend sequence
 * number it went before, so that backend numbers map to client numbers (adding the bytes
 * inserted before), client ACKs and SACK edges map back (an ACK inside an inserted field means
 * "up to it"), and a retransmitted segment gets exactly the same bytes again. An insertion is
 * forgotten, its length folded into a running total, once the client has acknowledged past it.
 */
#include <string.h>
#include <sys/socket.h>

#include <rte_ip.h>

#include "l7_conn.h"
#include "xlb_session_cookie.h"

#define SEQ_LT(a, b) ((int32_t)((a) - (b)) < 0)
#define SEQ_LE(a, b) ((int32_t)((a) - (b)) <= 0)

void xlb_l7_cookie_prepare(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c,
                           const struct xlb_lb_trace *trace, const struct xlb_lb_vip *vip)
{
    c->cookie_field_len = 0;
    char header[XLB_L7_COOKIE_FIELD_MAX];
    uint32_t n = xlb_set_cookie_of_pick(header, sizeof(header), trace, vip);
    if (n == 0)
        return;
    const char *cluster = vip->targets[trace->target].name;
    if (strlen(trace->session_cookie) >= sizeof(c->cookie_name) ||
        strlen(cluster) >= sizeof(c->cluster_name))
        return;
    c->cookie_field_len = (uint16_t)xlb_hpack_encode_field(
        &ctx->l7->encoder, c->cookie_field, sizeof(c->cookie_field), "set-cookie", header, n);
    strcpy(c->cookie_name, trace->session_cookie);
    strcpy(c->cluster_name, cluster);
    c->endpoint = trace->cluster->endpoints[trace->endpoint].where;
}

uint32_t xlb_l7_inserted_before(const struct xlb_l7_conn *c, uint32_t b)
{
    uint32_t n = c->inserted_folded;
    for (uint8_t i = 0; i < c->n_inserts; i++)
        if (SEQ_LE(c->inserts[i].at, b))
            n += c->cookie_field_len;
    return n;
}

uint32_t xlb_l7_client_to_backend(const struct xlb_l7_conn *c, uint32_t a)
{
    uint32_t shift = c->s2c_seq_add + c->inserted_folded;
    for (uint8_t i = 0; i < c->n_inserts; i++) {
        uint32_t start = c->inserts[i].at + shift; /* the field's first byte, client side */
        if (SEQ_LE(a, start))
            break;
        if (SEQ_LT(a, start + c->cookie_field_len))
            return c->inserts[i].at; /* inside the field: acknowledged up to it */
        shift += c->cookie_field_len;
    }
    return a - shift;
}

void xlb_l7_inserts_fold(struct xlb_l7_conn *c, uint32_t client_ack)
{
    while (c->n_inserts > 0) {
        uint32_t end = c->inserts[0].at + c->s2c_seq_add + c->inserted_folded + c->cookie_field_len;
        if (SEQ_LT(client_ack, end))
            return;
        c->inserted_folded += c->cookie_field_len;
        memmove(&c->inserts[0], &c->inserts[1], (c->n_inserts - 1u) * sizeof(c->inserts[0]));
        c->n_inserts--;
    }
}

static uint8_t *payload_of(const struct xlb_tcp_packet *p)
{
    return xlb_tcp_payload(p->tcp);
}

static void set_l3_length(struct xlb_tcp_packet *p, uint32_t tcp_len)
{
    if (p->family == AF_INET) {
        struct rte_ipv4_hdr *ip = p->ip;
        ip->total_length = rte_cpu_to_be_16((uint16_t)(rte_ipv4_hdr_len(ip) + tcp_len));
    } else {
        struct rte_ipv6_hdr *ip = p->ip;
        ip->payload_len = rte_cpu_to_be_16((uint16_t)tcp_len);
    }
}

/* The frame header at backend seq frame_at, if in this segment: its 24-bit length grows. */
static void grow_frame_length(struct xlb_l7_conn *c, uint8_t *payload, uint32_t seq, uint32_t len,
                              uint32_t frame_at)
{
    uint32_t off = frame_at - seq;
    if (SEQ_LT(frame_at, seq) || off + 3 > len)
        return;
    uint32_t n =
        ((uint32_t)payload[off] << 16 | (uint32_t)payload[off + 1] << 8 | payload[off + 2]) +
        c->cookie_field_len;
    payload[off] = (uint8_t)(n >> 16);
    payload[off + 1] = (uint8_t)(n >> 8);
    payload[off + 2] = (uint8_t)n;
}

/* Insert the field at backend seq `at` into the segment (seq, *len): false without room. */
static bool insert_one(struct xlb_l7_conn *c, struct xlb_frame *frame, struct xlb_tcp_packet *p,
                       uint32_t seq, uint32_t *len, const struct xlb_l7_insert *ins)
{
    uint32_t off = ins->at - seq, k = c->cookie_field_len;
    if (rte_pktmbuf_append(frame->m, (uint16_t)k) == NULL)
        return false;
    uint8_t *payload = payload_of(p);
    memmove(payload + off + k, payload + off, *len - off);
    memcpy(payload + off, c->cookie_field, k);
    /* The header precedes the insertion point, so its offset did not move. */
    grow_frame_length(c, payload, seq, *len + k, ins->frame_at);
    *len += k;
    frame->l3_avail += k;
    set_l3_length(p, xlb_tcp_header_len(p->tcp) + *len);
    return true;
}

/*
 * Whether insertion `ins` belongs to segment (seq, len): its point in (seq, seq + len]. A
 * point at the segment's very start belongs to the segment before, except in a retransmission
 * from there (`again`): the client acknowledged up to or into the field, so the field goes out
 * again at the start (whatever of it the client has, it drops).
 */
static bool falls_in(const struct xlb_l7_insert *ins, uint32_t seq, uint32_t len, bool again)
{
    return (SEQ_LT(seq, ins->at) || (again && ins->at == seq)) && SEQ_LE(ins->at, seq + len);
}

bool xlb_l7_insert_at(const struct xlb_l7_conn *c, uint32_t b)
{
    for (uint8_t i = 0; i < c->n_inserts; i++)
        if (c->inserts[i].at == b)
            return true;
    return false;
}

/* Bytes of TCP options the segment carries (its header beyond the fixed 20). */
static uint32_t options_of(const struct xlb_tcp_packet *p)
{
    return xlb_tcp_options_len(p->tcp);
}

bool xlb_l7_insert_apply(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                         struct xlb_l7_conn *c, struct xlb_frame *frame, struct xlb_tcp_packet *p,
                         uint32_t seq, uint32_t *payload_len, bool again)
{
    uint32_t original = *payload_len;
    /* Back to front, so that earlier offsets stay valid: the new insertions lie past every
     * remembered one (they were found in bytes scanned for the first time). */
    bool done[XLB_L7_NEW_INSERTS] = {false};
    uint8_t room = (uint8_t)(XLB_L7_INSERTS - c->n_inserts);
    /* At most what one cut in two can carry: the segment is then never more than twice the MSS. */
    uint32_t mss = xlb_l7_payload_max(ctx, snap, c, XLB_L7_TO_CLIENT, options_of(p)), fits = 0;
    while (fits < c->n_new && original + (fits + 1u) * c->cookie_field_len <= 2 * mss)
        fits++;
    for (int i = c->n_new - 1; i >= 0; i--) {
        done[i] = i < room && (uint32_t)i < fits &&
                  insert_one(c, frame, p, seq, payload_len, &c->new_inserts[i]);
        ctx->stats->events[done[i] ? XLB_EVENT_L7_SET_COOKIES : XLB_EVENT_L7_SET_COOKIE_MISSED]++;
    }
    bool ok = true;
    for (int i = c->n_inserts - 1; i >= 0 && ok; i--)
        if (falls_in(&c->inserts[i], seq, original, again))
            ok = insert_one(c, frame, p, seq, payload_len, &c->inserts[i]);
    for (uint8_t i = 0; i < c->n_new; i++)
        if (done[i])
            c->inserts[c->n_inserts++] = c->new_inserts[i];
    c->n_new = 0;
    return ok;
}

struct rte_mbuf *xlb_l7_split_to_mss(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                     struct xlb_l7_conn *c, struct xlb_frame *frame,
                                     struct xlb_tcp_packet *p, uint32_t payload_len)
{
    uint32_t mss = xlb_l7_payload_max(ctx, snap, c, XLB_L7_TO_CLIENT, options_of(p));
    if (payload_len <= mss)
        return NULL;
    uint32_t head = (uint32_t)(payload_of(p) - rte_pktmbuf_mtod(frame->m, uint8_t *));
    uint32_t tail = payload_len - mss;
    struct rte_mbuf *m2 = rte_pktmbuf_alloc(ctx->pool);
    uint8_t *d = m2 != NULL ? (uint8_t *)rte_pktmbuf_append(m2, (uint16_t)(head + tail)) : NULL;
    if (d == NULL) {
        rte_pktmbuf_free(m2);
        ctx->stats->drops[XLB_DROP_L7_NO_MBUF]++; /* sent whole: it may not pass */
        return NULL;
    }
    uint8_t *src = rte_pktmbuf_mtod(frame->m, uint8_t *);
    memcpy(d, src, head);
    memcpy(d + head, src + head + mss, tail);
    rte_pktmbuf_trim(frame->m, (uint16_t)tail);
    /* The first part: no FIN, no PSH. The second: seq moved on by the first's payload. */
    uint32_t tcp_hlen = xlb_tcp_header_len(p->tcp);
    struct xlb_tcp_packet p2 = *p;
    p2.ip = d + ((uint8_t *)p->ip - src);
    p2.tcp = (struct rte_tcp_hdr *)(d + ((uint8_t *)p->tcp - src));
    p->tcp->tcp_flags &= (uint8_t) ~(RTE_TCP_FIN_FLAG | RTE_TCP_PSH_FLAG);
    set_l3_length(p, tcp_hlen + mss);
    p2.tcp->sent_seq = rte_cpu_to_be_32(rte_be_to_cpu_32(p->tcp->sent_seq) + mss);
    set_l3_length(&p2, tcp_hlen + tail);
    xlb_l7_checksums(&p2);
    frame->l3_avail -= tail;
    return m2;
}
