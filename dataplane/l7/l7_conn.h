/*
 * One L7 (HTTP/2) connection as a worker keeps it: private to dataplane/l7/.
 *
 * Its life has three phases. RECEIVING: the client's SYN was answered with a SYN cookie, its
 * ACK proved the cookie, and xlb is the client's TCP peer: it acknowledges the client's bytes,
 * keeps them, sends its own SETTINGS and answers PINGs, until the first request's header block
 * is complete and the client has acknowledged xlb's SETTINGS. Then the request is picked
 * (route, session cookie, LB core) and CONNECTING starts: xlb opens a connection to the backend
 * with the client's options and replays the client's bytes, less the frames that were meant
 * for xlb. SPLICED: every segment is passed on with its sequence numbers, ACKs, SACK blocks,
 * timestamps and window translated between the two connections' number spaces.
 *
 * The entry lives in a per-worker mempool; the flow table's entry for the client's key points
 * here (struct xlb_flow's l7_conn, in a flow of kind XLB_FLOW_KIND_L7_SPLICE), so both directions
 * find it as L4 flows do. It goes back to the pool as soon as the exchange is over (both FINs or
 * a RST; a connection xlb ended, once the client's FIN is acknowledged): the flow then turns into
 * one of kind XLB_FLOW_KIND_L7_CLOSED for its last segments (l7_closed.c).
 */
#ifndef XLB_L7_CONN_H
#define XLB_L7_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mempool.h>

#include "l7.h"
#include "xlb_h2_arena.h"
#include "xlb_lb.h"
#include "xlb_route.h"
#include "xlb_h2_build.h"
#include "xlb_h2_scan.h"
#include "xlb_hpack.h"
#include "xlb_syn_cookie.h"
#include "xlb_tcp_options.h"

/* Client bytes kept before binding: the preface, SETTINGS, the first request and its body. */
#define XLB_L7_IN_MAX 8192u
/* xlb's own bytes to the client before binding (SETTINGS, PING ACKs), kept until acknowledged. */
#define XLB_L7_OUT_MAX 128u
/* Frames of the client's meant for xlb and not replayed (its SETTINGS ACK, PINGs). */
#define XLB_L7_STRIP_MAX 8u
/* A request header block, and its decoded fields. */
#define XLB_L7_BLOCK_MAX   4096u
#define XLB_L7_STORAGE_MAX 4096u
/*
 * Each direction's HPACK decoder takes its memory from the worker's HPACK pool as its dynamic
 * table grows (dataplane/l7/h2wire/xlb_h2_quota.h): XLB_L7_HPACK_FLOOR is committed to it when
 * the connection is made (what real peers need: a gRPC request's fields in the table take 2 KiB),
 * so a connection is never starved by the others; beyond it, it grows from what is left, up to
 * XLB_L7_HPACK_LIMIT: what a peer within the default 4,096-byte table needs at worst while it
 * sends header blocks of XLB_L7_BLOCK_MAX (XLB_HPACK_ARENA_SIZE, measured by
 * test_hpack_arena.c). A peer that announces a larger table and fills it beyond that is not
 * followed further (docs/l7.md). The pool has XLB_L7_HPACK_SHARE bytes per pooled connection,
 * of which an eighth is kept against fragmentation (xlb_h2_pool_init): both floors and about
 * 1.1 KiB to grow into. A connection that finds it empty fails and is
 * counted (events.l7_hpack_pool_full); the others keep what they hold.
 */
#define XLB_L7_HPACK_FLOOR 2560u
#define XLB_L7_HPACK_LIMIT XLB_HPACK_ARENA_SIZE(XLB_L7_BLOCK_MAX)
#define XLB_L7_HPACK_SHARE (2u * XLB_L7_HPACK_FLOOR + 2048u)
/*
 * What a connection needs only until its replay is acknowledged (the kept client bytes, the
 * first request decoded) lives in a second per-worker pool: an entry is held from the
 * handshake's ACK until the backend acknowledges the replay, and given back for a bound
 * connection's life. One binding entry per XLB_L7_BINDING_SHARE connection entries (at least
 * XLB_L7_BINDING_MIN, at most one each); when none is free, the handshake is refused as for a
 * full pool. One each: with one per four, e2e_conn_rate (1,000 new connections a second on a
 * loaded machine) had 5,000-8,000 handshakes refused while the connection pool had room, since
 * a client slow to send its first request holds its entry up to XLB_L7_RECEIVING_TIMEOUT_S.
 */
#define XLB_L7_BINDING_SHARE 1u
#define XLB_L7_BINDING_MIN   64u
/* The window scale xlb offers a client that offered one (Linux's usual). */
#define XLB_L7_WSCALE 7
/* Streams whose outcome a connection tracks at once (more are forwarded, not counted). */
#define XLB_L7_STREAMS 32u
/* The Set-Cookie field xlb inserts (HPACK bytes), and insertions remembered for retransmission. */
#define XLB_L7_COOKIE_FIELD_MAX 384u
#define XLB_L7_INSERTS          32u
#define XLB_L7_NEW_INSERTS      16u /* in one segment (a cut in two must still fit the MSS) */
/* Requests on other streams before binding, registered when the connection is bound. */
#define XLB_L7_EARLY_STREAMS    8u
#define XLB_L7_CLUSTER_NAME_MAX 128u
/* Backend SYN and replay retransmissions: first after this, doubling, at most this many. */
#define XLB_L7_RETRY_MS  250u
#define XLB_L7_RETRY_MAX 4u

enum xlb_l7_phase {
    XLB_L7_RECEIVING,  /* xlb is the client's peer, waiting for the first request */
    XLB_L7_CONNECTING, /* SYN sent to the backend, or its replay not yet all acknowledged */
    XLB_L7_SPLICED,    /* segments pass both ways, translated */
    XLB_L7_CLOSED,     /* ended by xlb (rejected, failed): the flow waits for its removal */
};

/* One HTTP/2 stream of a spliced connection, for its RPC's outcome and its session cookie. */
struct xlb_l7_stream {
    uint32_t id;
    bool responded;    /* the response's first header block went by */
    bool needs_cookie; /* its response gets xlb's Set-Cookie (A55/A60) */
    bool grpc;         /* the request's content-type is application/grpc...: trailers expected */
    bool http_ok;      /* the response's :status is 2xx */
};

/* A Set-Cookie insertion into the backend's byte stream, kept to redo it on retransmission. */
struct xlb_l7_insert {
    uint32_t at;       /* backend sequence number the field is inserted before */
    uint32_t frame_at; /* backend sequence number of the frame header whose length grew */
};

/* A connection's state until its replay is acknowledged (see XLB_L7_BINDING_SHARE). */
struct xlb_l7_binding {
    /* A61: the endpoint's other addresses of the flow's family, tried in turn when the one
     * being connected to refuses or stays silent (l7_connect.c); next: the next to try. */
    struct xlb_host_port more[XLB_MAX_ENDPOINT_ADDRESSES - 1];
    uint8_t n_more, next;
    struct xlb_h2_headers request; /* the first request, decoded into storage */
    char storage[XLB_L7_STORAGE_MAX];
    uint8_t in[XLB_L7_IN_MAX]; /* the client's bytes, from client_isn + 1 */
};

struct xlb_l7_conn {
    uint32_t index; /* in the worker's by_index: what the flow entry holds */
    struct xlb_flow *flow;
    struct xlb_l7_conn *next_retry, *prev_retry; /* on the worker's retry list */
    uint8_t phase;
    bool on_retry_list;
    /* The client's TCP options, as the cookie gave them back. */
    struct xlb_syn_cookie_opts client;
    uint8_t xlb_wscale; /* what xlb offered the client: 0 when it offered none */
    /* Client -> xlb, client sequence space. */
    uint32_t client_isn, rcv_nxt;
    uint32_t ts_recent;     /* the client's latest TSval, echoed back */
    uint16_t client_window; /* its last window field (its scale applies) */
    /* xlb -> client, xlb sequence space. */
    uint32_t snd_nxt, snd_una;
    uint16_t out_len;
    uint8_t out[XLB_L7_OUT_MAX];
    /* The client's bytes, from client_isn + 1; strip ranges are offsets into in[]. */
    uint32_t in_len;
    uint8_t n_strip;
    struct {
        uint32_t at, len;
    } strip[XLB_L7_STRIP_MAX];
    bool settings_acked; /* the client acknowledged xlb's SETTINGS */
    bool request_seen;   /* the first request's header block is decoded */
    bool request_ok;     /* and fitted */
    uint32_t first_stream;
    uint8_t n_early;
    uint32_t early_streams[XLB_L7_EARLY_STREAMS];
    struct xlb_l7_binding *binding; /* until the replay is acknowledged; NULL after */
    /* Backend connection. */
    uint32_t replay_len;  /* bytes replayed, from backend seq client_isn + 1 */
    uint32_t stripped;    /* client bytes not replayed: client seq - stripped = backend seq */
    uint32_t backend_isn; /* the backend's ISN */
    uint32_t backend_una; /* the backend's cumulative ACK, backend space */
    uint8_t backend_wscale;
    bool backend_ts;
    uint16_t backend_mss;   /* from its SYN-ACK; 0: it offered none (536) */
    uint32_t backend_tsval; /* the backend's latest TSval, echoed back to it */
    uint32_t ts_add;        /* backend TSval + ts_add = TSval toward the client */
    uint32_t s2c_seq_add;   /* backend seq + s2c_seq_add = client-facing seq */
    uint64_t retry_tsc;
    uint8_t tries;
    /* CONNECTING: the endpoint's next hop was not resolved yet (a neighbour just added to the
     * table); the backend SYN waits for the retry timer, which looks again. */
    bool next_hop_pending;
    /* Inspection after binding: the next byte to scan each way (client / backend sequence). */
    bool inspect;      /* false once a direction could not be followed: splice only */
    uint8_t fin_seen;  /* 1: the client's FIN went by, 2: the backend's, 4: a RST */
    uint32_t s2c_sent; /* backend payload bytes passed to the client (0: none yet) */
    uint32_t c2b_next, s2c_next;
    uint32_t locality_slot; /* the endpoint's locality load slot */
    uint8_t n_streams;
    struct xlb_l7_stream streams[XLB_L7_STREAMS];
    /* The session cookie: its HPACK field, and what a request's cookie must name to keep it. */
    uint16_t cookie_field_len; /* 0: no session affinity on this route */
    uint8_t cookie_field[XLB_L7_COOKIE_FIELD_MAX];
    char cookie_name[64];
    char cluster_name[XLB_L7_CLUSTER_NAME_MAX];
    struct xlb_host_port endpoint;
    /* Insertions: those still unacknowledged by the client, and the bytes of older ones. */
    uint32_t inserted_folded;
    uint8_t n_inserts, n_new;
    struct xlb_l7_insert inserts[XLB_L7_INSERTS];
    struct xlb_l7_insert new_inserts[XLB_L7_NEW_INSERTS]; /* found in the segment being fed */
    uint32_t feeding_seq, feeding_len; /* that segment: backend seq and payload length */
    /* HTTP/2 of the backend's direction. */
    struct xlb_h2_scanner s2c_scan;
    struct xlb_hpack_decoder s2c_hpack; /* made at binding */
    /* HTTP/2 of the client's direction. */
    struct xlb_h2_scanner scan;
    struct xlb_h2_quota quota, s2c_quota; /* both made at the handshake */
    struct xlb_hpack_decoder hpack;
    uint8_t block[XLB_L7_BLOCK_MAX];
    uint8_t s2c_block[XLB_L7_BLOCK_MAX];
};

struct xlb_l7_worker {
    struct rte_mempool *conns;
    struct rte_mempool *bindings;  /* struct xlb_l7_binding */
    struct xlb_l7_conn **by_index; /* every entry of the pool, by its index */
    uint32_t n_conns;
    struct xlb_syn_cookie_keys keys;
    uint64_t master[2];  /* SipHash key the cookie secrets are derived from */
    uint64_t rotate_tsc; /* next secret rotation */
    uint64_t tsc_per_ms;
    struct xlb_l7_conn *retry;        /* connections with a pending retransmission */
    struct xlb_l7_conn *retry_cursor; /* where xlb_l7_poll goes on */
    /* The ports' MACs, for segments made without a snapshot at hand (expiry). */
    struct rte_ether_addr port_mac[XLB_MAX_PORTS];
    uint64_t port_mac_generation;
    /* Both HPACK decoders of every connection allocate from here (XLB_L7_HPACK_SHARE). */
    struct xlb_h2_pool hpack_pool;
    void *hpack_heap_mem;
    struct xlb_h2_arena encoder_arena;
    struct xlb_hpack_encoder encoder; /* xlb's own responses: literals, no table */
    uint8_t encoder_mem[XLB_HPACK_ENCODER_ARENA];
};

/* The worker's millisecond clock: TCP timestamps and SYN cookie counters. */
static inline uint64_t xlb_l7_now_ms(const struct xlb_burst_ctx *ctx)
{
    return ctx->now_tsc / ctx->l7->tsc_per_ms;
}

static inline struct xlb_l7_conn *xlb_l7_conn_of(const struct xlb_burst_ctx *ctx,
                                                 const struct xlb_flow *f)
{
    return ctx->l7->by_index[f->l7_conn];
}

/* ---- l7_segment.c: segments xlb makes ---- */

/* Which of the flow's two connections a segment xlb makes belongs to. */
enum xlb_l7_side { XLB_L7_TO_CLIENT, XLB_L7_TO_BACKEND };

struct xlb_l7_segment {
    uint32_t seq, ack;
    uint8_t flags;
    uint16_t window; /* as sent (already scaled down) */
    const uint8_t *options;
    uint32_t options_len;
    const uint8_t *payload;
    uint32_t payload_len;
};

/* Build and queue one segment on the flow's client or backend connection (snap may be NULL: the
 * ports' MACs are then the worker's copy). false: no mbuf. */
bool xlb_l7_send(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap, struct xlb_flow *f,
                 enum xlb_l7_side side, const struct xlb_l7_segment *s);

/*
 * The most payload one segment toward `side` may carry: the receiver's MSS (the client's from
 * its SYN, the backend's from its SYN-ACK; 536 when it offered none), lowered to what the
 * path through xlb's ports carries (xlb_egress_mss_max), less `options_len` bytes of TCP options
 * the segment carries (RFC 9293 3.7.1: the MSS counts no options).
 */
uint32_t xlb_l7_payload_max(const struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                            const struct xlb_l7_conn *c, enum xlb_l7_side side,
                            uint32_t options_len);
/* A segment with only the timestamp option (when the connection has timestamps). */
bool xlb_l7_send_ts(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                    struct xlb_l7_conn *c, enum xlb_l7_side side, uint32_t seq, uint32_t ack,
                    uint8_t flags, uint16_t window, const uint8_t *payload, uint32_t len);

/* Recompute the IP and TCP checksums of a segment rewritten in place. */
void xlb_l7_checksums(struct xlb_tcp_packet *p);

/* ---- l7_receive.c ---- */
xlb_verdict xlb_l7_receive(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                           struct xlb_tcp_packet *p, uint32_t tcp_len, struct xlb_l7_conn *c);
/* xlb's window toward the client while receiving: the room left in in[]. */
uint16_t xlb_l7_receive_window(const struct xlb_l7_conn *c);

/* ---- l7_reject.c ---- */
/* Answer the first request with a trailers-only UNAVAILABLE naming the reason, then GOAWAY and
 * FIN; the connection is CLOSED. */
void xlb_l7_reject(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                   struct xlb_l7_conn *c, const char *reason);
/* Remove the connection and its flow now (a RST was seen, or after an abort). */
void xlb_l7_close(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c);
/* End the client's connection with a RST (protocol errors, overflow, timeouts). */
void xlb_l7_abort(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                  struct xlb_l7_conn *c);

/* ---- l7_worker.c ---- */
/* The replay is acknowledged (or the connection ends): its binding entry goes back to the
 * pool. Does nothing when it has none. */
void xlb_l7_binding_put(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c);

/* ---- l7_closed.c ---- */
/* The connection's exchange is over (xlb_l7_over, or xlb ended it and acknowledged the client's
 * FIN): its accounting is done and its entry goes back to the pool now; its flow becomes one of
 * kind XLB_FLOW_KIND_L7_CLOSED for the CLOSED timeout. c is gone on return. */
void xlb_l7_retire(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c);

/* ---- l7_connect.c ---- */
/* A decoded request (h2wire's codec types) as lib/route and the LB core read it: fields has room
 * for XLB_H2_MAX_FIELDS. */
void xlb_l7_route_request(const struct xlb_h2_request *h, struct xlb_route_field *fields,
                          struct xlb_route_request *out);
/* The first request is in and xlb's SETTINGS acknowledged: pick and connect. */
void xlb_l7_bind(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap, struct xlb_l7_conn *c);
xlb_verdict xlb_l7_connecting(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                              struct xlb_tcp_packet *p, struct xlb_l7_conn *c);
/* Retransmit the backend SYN or the replay when due; give up after XLB_L7_RETRY_MAX. */
void xlb_l7_retry(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                  struct xlb_l7_conn *c);
void xlb_l7_retry_arm(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c);
void xlb_l7_retry_disarm(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c);

/* ---- l7_streams.c: per-RPC outcomes (outlier detection, load reports, circuit breaking) ---- */
/* The connection is bound: its first request is stream first_stream, already counted. */
void xlb_l7_streams_bind(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c, bool needs_cookie);
/* A request header block on a stream (a new stream is counted as started). */
struct xlb_l7_stream *xlb_l7_stream_request(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c,
                                            uint32_t id, const struct xlb_h2_headers *h);
struct xlb_l7_stream *xlb_l7_stream_find(struct xlb_l7_conn *c, uint32_t id);
/* The stream ended: ok or not; it is forgotten. */
void xlb_l7_stream_end(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c, struct xlb_l7_stream *s,
                       bool ok);
/* DATA with END_STREAM from the backend: a response without trailers ends. */
void xlb_l7_stream_data_end(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c,
                            struct xlb_l7_stream *s);
/* A response header block: its status, and whether it ends the stream. */
void xlb_l7_stream_response(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c,
                            struct xlb_l7_stream *s, const struct xlb_h2_headers *h,
                            bool end_stream);
/* GOAWAY from the backend: streams above last_id never ran. */
void xlb_l7_streams_goaway(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c, uint32_t last_id);
/* The connection ends: streams still open failed. */
void xlb_l7_streams_end_all(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c);

/* ---- l7_inspect.c: HTTP/2 of both directions after binding ---- */
/* Inspection starts at binding: the backend's decoder is made (a heap too full for it leaves the
 * connection spliced, not inspected, counted). */
void xlb_l7_inspect_start(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c);
/* Client bytes at client seq `seq`: false when the segment must be dropped (ahead of a gap). */
bool xlb_l7_inspect_client(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c, uint32_t seq,
                           const uint8_t *data, uint32_t len);
/* Backend bytes at backend seq `seq`; new insertions land in c->new_inserts. false: drop. */
bool xlb_l7_inspect_backend(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c, uint32_t seq,
                            const uint8_t *data, uint32_t len);

/* ---- l7_insert.c: Set-Cookie insertion and the sequence map it makes ---- */
/* Build the connection's Set-Cookie field from the pick (at binding). */
void xlb_l7_cookie_prepare(struct xlb_burst_ctx *ctx, struct xlb_l7_conn *c,
                           const struct xlb_lb_trace *trace, const struct xlb_lb_vip *vip);
/* Bytes inserted before backend sequence number b (b's client-side shift beyond s2c_seq_add). */
uint32_t xlb_l7_inserted_before(const struct xlb_l7_conn *c, uint32_t b);
/* A client-side sequence number (an ACK or SACK edge) in the backend's space. */
uint32_t xlb_l7_client_to_backend(const struct xlb_l7_conn *c, uint32_t a);
/* Forget insertions the client has acknowledged (they cannot be retransmitted any more). */
void xlb_l7_inserts_fold(struct xlb_l7_conn *c, uint32_t client_ack);
/* Apply the insertions (new and remembered) that fall in a backend segment of `*payload_len`
 * bytes at backend seq `seq`, growing it. false: a remembered one did not fit (drop it). */
bool xlb_l7_insert_apply(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                         struct xlb_l7_conn *c, struct xlb_frame *frame, struct xlb_tcp_packet *p,
                         uint32_t seq, uint32_t *payload_len, bool again);
/* Whether a remembered insertion is at backend seq b: a retransmission from b carries it again
 * at its start (pass again = true to insert_apply, and shift it one field less). */
bool xlb_l7_insert_at(const struct xlb_l7_conn *c, uint32_t b);
/* After translation: a segment over what the client takes (xlb_l7_payload_max) is cut in two.
 * Returns the second part (translated, checksummed) to send after the first, or NULL when no
 * cut was needed or made. */
struct rte_mbuf *xlb_l7_split_to_mss(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                     struct xlb_l7_conn *c, struct xlb_frame *frame,
                                     struct xlb_tcp_packet *p, uint32_t payload_len);

/* ---- l7_splice.c ---- */
/* Rewrite a segment's addresses and ports (addresses as the family has them, ports network
 * order). */
void xlb_l7_set_addresses(struct xlb_tcp_packet *p, const uint8_t *src, uint16_t sport,
                          const uint8_t *dst, uint16_t dport);
/* A spliced connection's exchange is over: both FINs or a RST went by, the client acknowledged
 * every Set-Cookie insertion and the backend the replay. Its entry can go (xlb_l7_retire). */
bool xlb_l7_over(const struct xlb_l7_conn *c);
xlb_verdict xlb_l7_splice_from_client(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                      struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                      uint32_t tcp_len, struct xlb_l7_conn *c);
xlb_verdict xlb_l7_splice_from_backend(struct xlb_burst_ctx *ctx, const struct xlb_snapshot *snap,
                                       struct xlb_frame *frame, struct xlb_tcp_packet *p,
                                       uint32_t tcp_len, struct xlb_l7_conn *c);

#endif
