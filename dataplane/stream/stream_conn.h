/*
 * The stream engine's own state, shared by its files only: a client connection is xlb's TCP
 * connection plus an nghttp2 server session whose memory comes from the worker's heap through
 * the connection's quota; connections live in a per-worker pool allocated at start.
 */
#ifndef XLB_STREAM_CONN_H
#define XLB_STREAM_CONN_H

#include <rte_ether.h>

#include <nghttp2/nghttp2.h>

#include "stream.h"
#include "xlb_tls_conn.h"
#include "xlb_tls_mem.h"
#include "xlb_eyeballs.h"
#include "xlb_lb.h"
#include "xlb_lb_connectivity.h"
#include "xlb_h2_quota.h"
#include "xlb_tcp.h"
#include "xlb_tcp_timer_wheel.h"
#include "stream_subcall.h"

#define XLB_STREAM_NONE             UINT32_MAX
#define XLB_STREAM_TX_CAP           512 /* output packets collected per endpoint call */
#define XLB_STREAM_TIMERS_PER_SLICE 64
#define XLB_STREAM_POLL_SLICES      4
/* A session's heap: its floor is what one needs to exchange SETTINGS and a few requests (the
 * output buffer nghttp2 keeps is 16 KiB), its limit what a busy one may take. */
#define XLB_STREAM_QUOTA_LIMIT (512u * 1024u)
/* Request header fields kept for the pick (as the splice mode's decoder keeps). */
#define XLB_STREAM_MAX_FIELDS   64
#define XLB_STREAM_HEADER_BYTES 8192
/* Pieces of received bytes fed to the session per event: bounded work per segment. */
#define XLB_STREAM_RECV_PIECES 64
/* Send-queue room asked for before taking a chunk from the session: its largest (a DATA frame
 * of 16 KiB with padding, or a header block of 16 KiB in frames). */
#define XLB_STREAM_CHUNK_ROOM (16384u + 9u + 256u + 1024u)
/* Bytes of the session's output gathered into one chunk (its small frames, together). */
#define XLB_STREAM_GATHER_BYTES 2048u
/* Passes over the corked sides' owed pumps at a burst's end (one pump may owe another). */
#define XLB_STREAM_FLUSH_PASSES 4
/* Output chunks taken from the session per pump. */
#define XLB_STREAM_SEND_CHUNKS 64

/* Where a connection's packets leave: the first member of a client connection and of a
 * subchannel, so that output tagged with either (xlb_tcp_user_of) is routed alike. */
struct xlb_stream_link {
    struct xlb_tcp_tuple tuple;
    struct rte_ether_addr mac;   /* the peer's next hop */
    struct rte_ether_addr local; /* our port's */
    uint16_t port_index;
    bool flat; /* the port sends no chains: segments are linearized first */
    bool in_use;
};

/* One HTTP/2 session over one of xlb's TCP connections: a client connection's or a
 * subchannel's, the first member of either. */
struct xlb_stream_side {
    struct xlb_stream_link link;
    struct xlb_tcp_conn *tcp; /* NULL once closed; kept through TIME-WAIT (done set) */
    nghttp2_session *h2;      /* NULL once freed */
    struct xlb_h2_quota quota;
    struct xlb_stream_worker *w;
    /* One chunk of the session's output, copied, that the TCP send queue refused (rare: a
     * chunk is taken only with room for the largest). */
    struct rte_mbuf *pending;
    uint32_t flow; /* the flow's index in the worker's table, or XLB_STREAM_NONE */
    bool is_sub;   /* a subchannel (struct xlb_stream_sub), else a client connection */
    bool done;     /* on_closed delivered */
    bool shut;     /* our FIN is queued */
    bool pumping, again;
    bool deferred; /* on the worker's deferred list: its pump left work for the next poll */
    bool corked;   /* on the worker's corked list: its queued bytes go at the burst's end */
    bool send_due; /* corked with output owed by another session's callback: pumped first */
    /* TLS (stream_tls.c), a TLS VIP's client connection or a subchannel to an upstream TLS
     * cluster: the glue between the TCP bytes and the session (tls.ssl NULL: cleartext), the
     * handshake's deadline, close_notify queued. */
    bool tls_notified;
    /* The client said GOAWAY (its FIN is waited for, stream_linger.c); the wait is over. */
    bool peer_goaway, linger_over;
    struct xlb_tls_conn tls;
    struct xlb_tcp_timer handshake;
    struct xlb_tcp_timer linger;
};

/* One client connection. */
struct xlb_stream_conn {
    struct xlb_stream_side side;
    struct xlb_flow_key key; /* the client's, for the VIP and the connection hash */
    uint32_t next_free;      /* free-list link */
    bool rpcs_ended;         /* its session is over: its RPCs were ended (xlb_stream_conn_lost) */
};

/* Bytes waiting between the two sessions, in mbufs of the worker's pool: a request's DATA for
 * its backend stream, a response's for its client stream. The HTTP/2 windows bound them: a
 * side's DATA is consumed (its window reopened) only when the other side has taken it. */
struct xlb_stream_bytes {
    struct rte_mbuf *head, *tail;
    uint32_t len;
};
/* stream_bytes.c */
bool xlb_stream_bytes_put(struct xlb_stream_bytes *q, struct rte_mempool *pool, const uint8_t *data,
                          uint32_t n);
uint32_t xlb_stream_bytes_take(struct xlb_stream_bytes *q, uint8_t *out, uint32_t max);
void xlb_stream_bytes_clear(struct xlb_stream_bytes *q);

#define XLB_STREAM_TRAILERS      8
#define XLB_STREAM_TRAILER_BYTES 512

/* One RPC being forwarded: its client stream and its backend stream, and what waits between. */
struct xlb_stream_rpc {
    uint32_t conn, sub; /* indexes, XLB_STREAM_NONE once that side is done with it */
    int32_t client_id, backend_id;
    uint32_t cluster_slot, locality_slot, endpoint_slot;
    uint32_t next_free;
    uint32_t waiting; /* its entry in the worker's queue (stream_queue.c), XLB_STREAM_NONE */
    bool in_use;
    bool outcome_known, ok; /* the backend's answer said (grpc-status, or :status) */
    bool up_end;            /* the client's request has ended */
    bool down_end;          /* the backend's response has ended */
    bool response_sent;     /* response headers went to the client */
    bool retried;           /* sent again after its backend refused it (stream_retry.c) */
    bool orca_per_call;     /* A58: its trailers' load report weighs its endpoint */
    float orca_penalty;     /* with orca_per_call: the cluster's error_utilization_penalty */
    /* Its grpc-timeout as a deadline on the worker's clock (0: none), and its timer on the
     * worker's deadline wheel once forwarded (stream_deadline.c). */
    uint64_t deadline_ms;
    struct xlb_tcp_timer deadline;
    uint32_t replay;   /* its entry in the worker's replays, XLB_STREAM_NONE */
    uint32_t replayed; /* bytes of up sent again: consumed on the client already */
    struct xlb_stream_bytes up, down;
    uint8_t n_trailers;
    uint16_t trailer_used;
    /* The Set-Cookie value (A55/A60) the first response header block gets, in trailer_bytes
     * until then (trailers come only after it); 0: none. */
    uint16_t cookie_len;
    nghttp2_nv trailers[XLB_STREAM_TRAILERS];
    uint8_t trailer_bytes[XLB_STREAM_TRAILER_BYTES];
};

/* A subchannel: an HTTP/2 client connection xlb opens to one endpoint from a SNAT port. An
 * endpoint has up to limits.subchannels_per_endpoint of them per worker, listed from
 * sub_of_slot[slot] through next_same: another connects when those listed have as many RPCs
 * as their server's SETTINGS_MAX_CONCURRENT_STREAMS. The first listed speaks for the
 * endpoint's connectivity; a subchannel going away leaves the list. */
/*
 * A subchannel's client-side health check (gRPC A17, stream_health.c): its Watch call on the
 * backend and what the last answer said. OFF: its cluster names no service (or the backend
 * does not implement the health service): the connection alone makes it READY.
 */
enum xlb_stream_health_state {
    XLB_STREAM_HEALTH_OFF,
    XLB_STREAM_HEALTH_WAITING,     /* the Watch call is open, no answer yet: CONNECTING */
    XLB_STREAM_HEALTH_SERVING,     /* READY */
    XLB_STREAM_HEALTH_NOT_SERVING, /* the backend said so: TRANSIENT_FAILURE */
    XLB_STREAM_HEALTH_FAILED,      /* the call ended: TRANSIENT_FAILURE until the next one */
};

/* The framing and 512 bytes of OrcaLoadReport: utilizations, qps, eps and a few named metrics. A
 * longer report ends the call (stream_orca_reports_malformed). */
#define XLB_STREAM_OOB_REPORT_MAX (5u + 512u)

/*
 * A subchannel's out-of-band load reporting (gRPC A51, for A58's weights; stream_orca.c): what
 * its StreamCoreMetrics call (calls[XLB_STREAM_SUBCALL_OOB]) needs besides the call.
 */
struct xlb_stream_oob {
    uint32_t period_ms;                        /* oob_reporting_period */
    float penalty;                             /* error_utilization_penalty */
    uint8_t report[XLB_STREAM_OOB_REPORT_MAX]; /* the report being received, framing first */
};

/* A subchannel's health check besides its Watch call (calls[XLB_STREAM_SUBCALL_HEALTH]). */
struct xlb_stream_health {
    uint8_t state;      /* enum xlb_stream_health_state */
    uint8_t answer[16]; /* the answer being received: a HealthCheckResponse is 2 bytes */
    uint8_t service_len;
    char service[XLB_HEALTH_SERVICE_MAX]; /* what the Watch asks about */
};

/* A61: an endpoint's addresses, in order ([0] its where), as a subchannel and a retry entry
 * keep them: the compiled cluster they came from may be gone by the time they reconnect. */
struct xlb_stream_addrs {
    uint8_t n;
    struct xlb_host_port at[XLB_MAX_ENDPOINT_ADDRESSES];
};

/* Endpoint i of cluster c's addresses. */
static inline void xlb_stream_addrs_of(const struct xlb_lb_cluster *c, uint32_t i,
                                       struct xlb_stream_addrs *out)
{
    out->n = (uint8_t)xlb_lb_endpoint_n_addresses(&c->endpoints[i]);
    for (uint32_t k = 0; k < out->n; k++)
        out->at[k] = *xlb_lb_endpoint_address(c, i, k);
}

struct xlb_stream_sub {
    struct xlb_stream_side side;
    struct xlb_stream_subcall calls[XLB_STREAM_SUBCALLS]; /* its own (stream_subcall.c) */
    struct xlb_stream_health health;
    struct xlb_stream_oob oob;
    uint32_t endpoint_slot;
    uint32_t next_free;
    uint32_t next_same; /* the endpoint's next subchannel, XLB_STREAM_NONE */
    uint32_t rpcs;      /* RPCs whose backend stream is on it (open or queued in nghttp2) */
    bool linked;        /* on its endpoint's list */
    bool ready;         /* the server's SETTINGS came */
    bool retired;       /* its endpoint left the configuration: GOAWAY said, no new RPC (prune) */
    struct xlb_lb_endpoint endpoint; /* what it connects to: a retry connects it again */
    /* A61/A62 (stream_eyeballs.c): a connection to the endpoint is attempted over its
     * addresses with happy eyeballs. Each attempt is a subchannel; the one on the endpoint's
     * list (the head) holds the attempts' state, the others (racers) name it. The winner
     * takes the head's place; address says where it connected. */
    struct xlb_stream_addrs addrs;
    uint8_t address;              /* index in addrs of the address it connects to */
    bool connected;               /* its TCP connection came up */
    bool abandoned;               /* another attempt won: its close is no failure */
    uint32_t head;                /* a racer: the head's index; else XLB_STREAM_NONE */
    struct xlb_eyeballs eyeballs; /* the head's */
    uint32_t attempts[XLB_MAX_ENDPOINT_ADDRESSES]; /* the head's: the sub trying each address */
};

/* A subchannel that failed before READY is connected again after its backoff (gRPC's
 * connection backoff), so that a priority skipped in TRANSIENT_FAILURE comes back when its
 * endpoints recover: picks do not queue on it, and so do not trigger it, again. */
struct xlb_stream_retry {
    uint32_t slot; /* the endpoint slot, XLB_STREAM_NONE: a free entry */
    uint64_t at_ms;
    struct xlb_lb_endpoint endpoint;
    struct xlb_stream_addrs addrs;
};
#define XLB_STREAM_RETRIES 64u
/* Heads whose Connection Attempt Delay runs (stream_eyeballs.c); beyond, an endpoint's next
 * address starts only when the attempt in progress fails. */
#define XLB_STREAM_EYEBALL_TIMERS 64u

/* The request headers of the stream being decoded (one at a time per worker: HEADERS and
 * CONTINUATION frames are not interleaved). */
struct xlb_stream_headers {
    int32_t stream_id;
    bool overflow; /* more fields or bytes than kept: the request is refused */
    uint32_t n_fields, used;
    struct {
        const char *name, *value;
        uint32_t name_len, value_len;
    } fields[XLB_STREAM_MAX_FIELDS];
    char bytes[XLB_STREAM_HEADER_BYTES];
};

/* An RPC whose pick said XLB_LB_QUEUE: its request headers (the fields point into its own
 * bytes) and its clock, until a re-pick forwards it or its wait ends. */
struct xlb_stream_waiting {
    uint32_t rpc;                   /* XLB_STREAM_NONE: a free entry */
    uint64_t since_ms, deadline_ms; /* deadline_ms 0: the request has no grpc-timeout */
    struct xlb_stream_headers headers;
};
/* What an RPC has sent its backend, kept until the backend answers, so that a stream the
 * backend refused can be sent again (gRPC's transparent retry, A6): its request headers and
 * its DATA so far. A request longer than the bytes kept is not retried. */
struct xlb_stream_replay {
    uint32_t rpc; /* XLB_STREAM_NONE: a free entry */
    uint32_t len;
    struct xlb_stream_headers headers;
    uint8_t *data; /* limits.retry_buffer_bytes of the worker's replay_data */
};

/* How long an RPC may wait for a subchannel (gRPC's minimum connect timeout). */
#define XLB_STREAM_WAIT_MAX_MS 20000u
/* Waiting RPCs are re-picked at least this often on the poll (A56's failover timer can
 * expire with no subchannel changing state). */
#define XLB_STREAM_REPICK_MS 50u

struct xlb_stream_worker {
    struct xlb_tcp_endpoint *ep;
    struct xlb_stream_sub *subs;
    uint32_t n_subs, sub_free, subs_in_use;
    uint32_t *sub_of_slot; /* endpoint slot -> its subchannel, XLB_STREAM_NONE */
    struct xlb_stream_rpc *rpcs;
    uint32_t n_rpcs, rpc_free, rpcs_in_use;
    struct xlb_stream_waiting *waiting; /* limits.waiting_rpcs entries */
    uint32_t n_waiting;
    bool repick; /* a subchannel changed state: re-pick the waiting RPCs */
    uint64_t last_repick_ms;
    uint32_t subcalls_failed;         /* subchannels' own calls waiting for their next attempt */
    struct xlb_stream_retry *retries; /* XLB_STREAM_RETRIES entries */
    uint32_t eyeball_timers[XLB_STREAM_EYEBALL_TIMERS]; /* heads, XLB_STREAM_NONE: free */
    uint32_t eyeball_timers_armed;     /* entries in use: an idle poll looks at none */
    struct xlb_stream_replay *replays; /* limits.retry_buffers entries */
    uint8_t *replay_data;
    uint32_t n_replays;                 /* in use */
    struct xlb_backoff *backoff;        /* per endpoint slot, reset when READY */
    struct xlb_stream_headers response; /* a backend's header block being decoded */
    struct xlb_tcp_wheel deadlines;     /* of forwarded RPCs with a grpc-timeout */
    struct xlb_tcp_wheel handshakes;    /* of TLS handshakes in progress (stream_tls.c) */
    struct xlb_tcp_wheel lingers;       /* of client FINs waited for (stream_linger.c) */
    struct xlb_tls_budget tls_budget;   /* handshake steps left in this poll */
    struct xlb_tls_heap tls_heap;       /* OpenSSL's memory on this worker (stream_tls.c) */
    void *tls_block;                    /* its block of EAL memory */
    uint8_t tls_plain[16384];           /* a record's plaintext on its way to a session */
    nghttp2_session_callbacks *sub_callbacks;
    struct xlb_stream_conn *conns;
    uint32_t n_conns, free_head, in_use;
    struct xlb_stream_limits limits;
    struct xlb_h2_pool heap;
    void *heap_block;
    nghttp2_session_callbacks *callbacks; /* every session's, made at start */
    nghttp2_option *options;
    uint32_t session_bytes; /* measured on the first session (xlb_stream_session_bytes) */
    struct xlb_stream_headers headers;
    /* The call in progress (as the relay's): context, snapshot, the connection it is about,
     * where a cookie SYN-ACK goes. */
    struct xlb_burst_ctx *ctx;
    const struct xlb_snapshot *snap;
    struct xlb_stream_link *current;
    struct rte_ether_addr reply_mac;
    uint16_t reply_port;
    uint16_t n_tx;
    struct rte_mbuf *tx[XLB_STREAM_TX_CAP];
    /* Sides whose pump stopped at its bound with work left (input unread, output unsent, a
     * window update owed): each at most once, resumed by xlb_stream_poll. A ring of
     * n_conns + n_subs entries. */
    struct xlb_stream_side **deferred;
    uint32_t n_deferred, deferred_head;
    /* Sides with bytes queued in their TCP send queue during this burst: sent together at its
     * end (xlb_stream_flush), so that the frames of many RPCs share segments. */
    struct xlb_stream_side **corked;
    uint32_t n_corked;
    uint32_t sessions_live; /* client connections whose session is live (h2, not done) */
    /* The snapshot whose endpoints the subchannels are being checked against, and the next
     * subchannel (then retry entry) to check (stream_sub_prune.c). */
    uint64_t pruned_generation;
    uint32_t prune_cursor;
    /* Draining (stream_drain.c): 0 not, 1 shutdown notice sent, 2 final GOAWAY sent. */
    uint8_t drain_phase;
    uint64_t drain_notice_ms;
};

/* stream_worker.c */
void xlb_stream_enter(struct xlb_stream_worker *w, struct xlb_burst_ctx *ctx,
                      const struct xlb_snapshot *snap, struct xlb_stream_link *current);
void xlb_stream_route_output(struct xlb_stream_worker *w);
/* Send a side's queued bytes at the end of the burst (once). */
void xlb_stream_cork(struct xlb_stream_side *d);
/* Have a side pumped at the end of the burst, before its bytes go (once); false when the corked
 * list has no room for it (the caller pumps it now). */
bool xlb_stream_send_later(struct xlb_stream_side *d);
/* Put a side on the deferred list (once). */
void xlb_stream_defer(struct xlb_stream_side *d);
uint64_t xlb_stream_now_ms(const struct xlb_burst_ctx *ctx);
struct xlb_stream_conn *xlb_stream_conn_alloc(struct xlb_stream_worker *w);
void xlb_stream_conn_free(struct xlb_stream_worker *w, struct xlb_stream_conn *c);

/* stream_session.c: the HTTP/2 server session over the TCP connection. */
extern const struct xlb_tcp_callbacks xlb_stream_client_callbacks;
/* Make a client connection's session (SETTINGS queued); false when the heap cannot take one
 * more. */
bool xlb_stream_session_open(struct xlb_stream_conn *c);
/* Feed what the peer sent and write what the session has to send, as far as room allows. */
void xlb_stream_pump(struct xlb_stream_side *d);
/* A client session stops counting as live: closed, or freed with its connection. */
void xlb_stream_session_over(struct xlb_stream_side *d);
/* Reset the peer (the flow is going away). */
void xlb_stream_abort(struct xlb_stream_side *d);
/* Write what the session has to send (from a callback of another session): at the end of the
 * burst, so that what several callbacks owe goes in one pump (one chunk, one segment). */
void xlb_stream_send(struct xlb_stream_side *d);

/* stream_tls.c: TLS between a connection's TCP and its session. */
/* Start TLS on a new connection of a TLS VIP (server side); false when OpenSSL cannot. */
bool xlb_stream_tls_accept(struct xlb_stream_side *d, const struct xlb_vip_view *vip);
/* Start TLS on a subchannel to an upstream TLS cluster (client side); false likewise. */
bool xlb_stream_tls_connect(struct xlb_stream_side *d, struct ssl_ctx_st *ctx);
void xlb_stream_tls_close(struct xlb_stream_side *d);
/* The side's TLS, NULL for a cleartext connection. */
static inline struct xlb_tls_conn *xlb_stream_tls_of(struct xlb_stream_side *d)
{
    return d->tls.ssl != NULL ? &d->tls : NULL;
}
/* Feed the ciphertext received, run the handshake within the poll's budget, give the session
 * the plaintext; false when the session failed. *eof: the peer closed (FIN or close_notify). */
bool xlb_stream_tls_input(struct xlb_stream_side *d, bool *eof);
/* Seal n bytes of the session's output (taken whole) into a chain of mbufs; NULL when the
 * pool has too few. */
struct rte_mbuf *xlb_stream_tls_seal(struct xlb_stream_side *d, const uint8_t *data, uint32_t n);
/* The ciphertext the glue holds (handshake records, an alert, close_notify) as a chain of
 * mbufs; NULL when there is none or the pool has too few. */
struct rte_mbuf *xlb_stream_tls_take(struct xlb_stream_side *d);
/* Before the FIN: close_notify once (true when it was queued now). */
bool xlb_stream_tls_notify(struct xlb_stream_side *d);
/* The handshake failed (its alert is taken by the next output): the connection ends. */
bool xlb_stream_tls_failed(struct xlb_stream_side *d);
/* On the poll: the budget for this poll, and handshakes past their deadline end. */
void xlb_stream_tls_poll(struct xlb_stream_worker *w);
/* The worker's TLS heap, made with the engine on the main lcore (false: no memory), and given
 * back after its connections were freed. */
bool xlb_stream_tls_heap_create(struct xlb_stream_worker *w, unsigned worker_id, int socket);
void xlb_stream_tls_heap_free(struct xlb_stream_worker *w);
uint32_t xlb_stream_tls_heap_bytes(const struct xlb_stream_limits *limits);

/* stream_rpc.c: the session's callbacks that see requests. */
void xlb_stream_rpc_callbacks(nghttp2_session_callbacks *cb);
void xlb_stream_reply_unavailable(struct xlb_stream_conn *c, int32_t stream_id, const char *reason);
/* xlb's trailers-only answer with a gRPC status code (as text, "4", "14"). */
void xlb_stream_reply_status(struct xlb_stream_conn *c, int32_t stream_id, const char *code,
                             const char *reason);
/* Pick for a request and forward it, queue it, or answer it; r: its RPC when it waited. */
void xlb_stream_pick(struct xlb_stream_conn *c, struct xlb_stream_rpc *r,
                     const struct xlb_stream_headers *h, int32_t stream_id, bool ended);

/* stream_queue.c: RPCs waiting for a subchannel to become READY. */
/* Queue the RPC (the pick said XLB_LB_QUEUE) and connect the IDLE endpoints it waits for;
 * false when the queue is full (the caller answers). */
bool xlb_stream_enqueue(struct xlb_stream_conn *c, struct xlb_stream_rpc *r,
                        const struct xlb_stream_headers *h, const struct xlb_lb_trace *trace);
/* Connect every IDLE endpoint the trace's wait names. */
void xlb_stream_connect_idle(struct xlb_stream_worker *w, const struct xlb_lb_trace *trace);
/* The RPC leaves the queue (its client stream closed, or it was picked). */
void xlb_stream_unqueue(struct xlb_stream_worker *w, struct xlb_stream_rpc *r);
/* Re-pick the waiting RPCs (after a state change, or every XLB_STREAM_REPICK_MS) and end
 * those whose deadline or wait bound passed. On the poll. */
void xlb_stream_queue_poll(struct xlb_stream_worker *w);

/* stream_linger.c: after the client's GOAWAY, its FIN before ours. */
/* Whether the session being over should wait for the client's FIN (its wait armed now). */
bool xlb_stream_linger(struct xlb_stream_side *d);
void xlb_stream_linger_cancel(struct xlb_stream_side *d);
/* On the poll: the connections whose client did not close in time close now. */
void xlb_stream_linger_poll(struct xlb_stream_worker *w);

/* stream_drain.c: GOAWAY to the clients while xlbd stops. */
/* On the poll while the worker drains: the shutdown notice, then after a second the GOAWAY
 * with the last stream the session took. */
void xlb_stream_drain_step(struct xlb_stream_worker *w);
/* A session opened while draining gets what the others got. */
void xlb_stream_drain_session(struct xlb_stream_conn *c);

/* stream_queue.c: a header block copied; the copy's fields point into its own bytes. */
void xlb_stream_headers_copy(struct xlb_stream_headers *to, const struct xlb_stream_headers *from);

/* stream_deadline.c: grpc-timeout. */
/* The request's grpc-timeout in milliseconds (gRPC's PROTOCOL-HTTP2: at most 8 digits and a
 * unit), 0 when absent or malformed. */
uint64_t xlb_stream_grpc_timeout_ms(const struct xlb_stream_headers *h);
/* The RPC is forwarded: its deadline, if it has one, is armed. */
void xlb_stream_deadline_arm(struct xlb_stream_worker *w, struct xlb_stream_rpc *r);
void xlb_stream_deadline_cancel(struct xlb_stream_worker *w, struct xlb_stream_rpc *r);
/* The deadline passed before the backend's headers came: the RPC is ended as at its deadline
 * (true; it may be gone), else false. */
bool xlb_stream_deadline_overdue(struct xlb_stream_worker *w, struct xlb_stream_rpc *r);
/* End the forwarded RPCs whose deadline passed (on the poll, bounded). */
void xlb_stream_deadline_poll(struct xlb_stream_worker *w);

/* stream_retry.c: transparent retry of a refused stream. */
/* Keep what the RPC sends (its headers now, its DATA as taken), unless it was retried already
 * or every entry is taken. */
void xlb_stream_replay_keep(struct xlb_stream_rpc *r, struct xlb_stream_worker *w,
                            const struct xlb_stream_headers *h);
void xlb_stream_replay_note(struct xlb_stream_worker *w, struct xlb_stream_rpc *r,
                            const uint8_t *data, uint32_t n);
void xlb_stream_replay_drop(struct xlb_stream_worker *w, struct xlb_stream_rpc *r);
/* The backend refused the RPC's stream: pick again and send it anew (true), or false when it
 * cannot be (already retried, nothing kept, the response begun, the client gone). */
bool xlb_stream_retry(struct xlb_stream_worker *w, struct xlb_stream_rpc *r);

/* stream_sub.c: subchannels. */
/* The subchannel to an endpoint, made (connecting) if there is none; NULL when none can be. */
/* The endpoint's addresses come from held (a subchannel's or a retry's copy) or, when NULL,
 * from endpoint i of cluster c, read only when a subchannel is made. */
struct xlb_stream_sub *xlb_stream_sub_for(struct xlb_stream_worker *w,
                                          const struct xlb_snapshot *snap,
                                          const struct xlb_lb_endpoint *e,
                                          const struct xlb_lb_cluster *c, uint32_t i,
                                          const struct xlb_stream_addrs *held);
void xlb_stream_sub_callbacks(nghttp2_session_callbacks *cb);
/* A subchannel for address k of the head's endpoint, not listed (a happy eyeballs attempt),
 * or of a new head (head NULL; e and addrs say the endpoint); NULL when it cannot be made. */
struct xlb_stream_sub *xlb_stream_sub_attempt(struct xlb_stream_worker *w,
                                              const struct xlb_snapshot *snap,
                                              const struct xlb_lb_endpoint *e,
                                              const struct xlb_stream_addrs *addrs, uint32_t k);
/* Whether xlb can connect to the address: a SNAT address of its family and a next hop. */
bool xlb_stream_sub_reachable(struct xlb_stream_worker *w, const struct xlb_snapshot *snap,
                              const struct xlb_host_port *to);
/* Put s on its endpoint's list in old's place (old leaves it, no state reported). */
void xlb_stream_sub_replace(struct xlb_stream_sub *old, struct xlb_stream_sub *s);

/* stream_eyeballs.c: happy eyeballs over an endpoint's addresses (A61, A62). */
/* A new head: its eyeballs begun (k its first address), its timer armed if another is left. */
void xlb_stream_eyeballs_begun(struct xlb_stream_sub *s);
/* Its TCP connection came up: it wins over the endpoint's other attempts. */
void xlb_stream_eyeballs_connected(struct xlb_stream_sub *s);
/* Its connection closed before coming up: true when that is not the endpoint's failure (it
 * was abandoned, or another attempt is still in progress or was started now). */
bool xlb_stream_eyeballs_closed(struct xlb_stream_sub *s);
/* It goes away (freed, retired): its attempts with it. */
void xlb_stream_eyeballs_stop(struct xlb_stream_sub *s);
/* On the poll: the next addresses of the heads whose delay passed. */
void xlb_stream_eyeballs_poll(struct xlb_stream_worker *w);

/* A17 health checking of subchannels (stream_health.c): the cluster's service to watch. */
void xlb_stream_health_prepare(struct xlb_stream_sub *s, const char *service);
/* A58 per-call load reports (stream_orca.c): the ORCA report in a response header block of
 * RPC r, if any, weighs r's endpoint on this worker. */
void xlb_stream_orca_note(struct xlb_stream_worker *w, const struct xlb_stream_rpc *r,
                          const struct xlb_stream_headers *h);
/* A51 out-of-band load reports of a subchannel (stream_orca.c): the cluster's period. */
void xlb_stream_oob_prepare(struct xlb_stream_sub *s, const struct xlb_wrr_config *cfg);
/* The grpc-status of a header block, -1 when it has none. */
int xlb_stream_grpc_status(const struct xlb_stream_headers *h);
/* The state a subchannel gives its endpoint: its connection's, then its health check's. */
enum xlb_connectivity xlb_stream_sub_state(const struct xlb_stream_sub *s);
void xlb_stream_sub_report(struct xlb_stream_sub *s, enum xlb_connectivity state);
/* Take the subchannel off its endpoint's list; the next one listed, if any, now speaks for
 * the endpoint. */
void xlb_stream_sub_unlink(struct xlb_stream_sub *s);

/* stream_forward.c: an RPC from one session to the other. */
struct xlb_stream_rpc *xlb_stream_rpc_get(struct xlb_stream_worker *w);
/* The RPC's backend stream leaves its subchannel (a reset, an end, a retry elsewhere). */
void xlb_stream_rpc_off_sub(struct xlb_stream_worker *w, struct xlb_stream_rpc *r);
struct xlb_stream_rpc *xlb_stream_rpc_open(struct xlb_stream_conn *c, int32_t stream_id, bool ended,
                                           const struct xlb_stream_headers *h);
/* Forward an RPC that has its client stream (r->client_id) on subchannel s; false when it
 * could not be (answered, freed). */
bool xlb_stream_forward_rpc(struct xlb_stream_conn *c, struct xlb_stream_rpc *r,
                            struct xlb_stream_sub *s, const struct xlb_lb_trace *trace,
                            const struct xlb_stream_headers *h);
struct xlb_stream_rpc *xlb_stream_rpc_of_client(struct xlb_stream_conn *c, int32_t stream_id);
/* The client's side of an RPC: DATA, its end, its stream closed. */
void xlb_stream_client_data(struct xlb_stream_conn *c, struct xlb_stream_rpc *r,
                            const uint8_t *data, size_t len);
void xlb_stream_client_end(struct xlb_stream_conn *c, struct xlb_stream_rpc *r);
void xlb_stream_client_closed(struct xlb_stream_conn *c, struct xlb_stream_rpc *r,
                              uint32_t error_code);
/* A subchannel closed: its RPCs end UNAVAILABLE (or reset when their response had begun). */
void xlb_stream_sub_lost(struct xlb_stream_sub *s);
/* A client connection closed: its RPCs' backend streams are cancelled. */
void xlb_stream_conn_lost(struct xlb_stream_conn *c);
/* stream_sub.c: a subchannel's connection closed (its RPCs, its slot, its endpoint's count). */
void xlb_stream_sub_closed(struct xlb_stream_sub *s, enum xlb_tcp_close_reason why);
/* The backend said GOAWAY: the subchannel takes no more RPCs (those it has finish) and the
 * endpoint is connected again, as a gRPC subchannel goes IDLE and round robin reconnects. */
void xlb_stream_sub_goaway(struct xlb_stream_sub *s);
/* Connect the endpoints whose backoff has passed (on the poll). */
void xlb_stream_sub_retry(struct xlb_stream_worker *w);

/* stream_sub_prune.c: subchannels of endpoints that left the configuration. */
/* No new RPC for it, its slot IDLE again, GOAWAY to its backend: it closes once its RPCs end. */
void xlb_stream_sub_retire(struct xlb_stream_sub *s);
/* Check a slice of the subchannels and retry entries against the snapshot (on the poll). */
void xlb_stream_sub_prune(struct xlb_stream_worker *w, const struct xlb_snapshot *snap);

void xlb_stream_rpc_put(struct xlb_stream_worker *w, struct xlb_stream_rpc *r);

#endif
