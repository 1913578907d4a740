/*
 * The stream mode's packet-test peers (test_stream.c): a client that is a real nghttp2 client
 * session over an xlb TCP endpoint, backends that are real nghttp2 server sessions over
 * another, and the wire between them and xlb's burst function, in simulated milliseconds.
 */
#ifndef XLB_TEST_STREAM_PEERS_H
#define XLB_TEST_STREAM_PEERS_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>
#include <nghttp2/nghttp2.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "flow/flow.h"
#include "nat_segments.h"
#include "stream/stream.h"
#include "tcp_fixture.h"
#include "xlb_lb_connectivity.h"
#include "xlb_tcp.h"

#define PEER_TX   1024
#define MAX_STEPS 20000u /* simulated milliseconds: every loop's bound */
#define MS        (TSC_HZ / 1000)
#define RPCS      4
#define RPCS_MAX  32 /* RPCs the client tracks at once (bench_stream keeps 16 in flight) */
#define BACKENDS  2
#define BACKEND_A "198.18.0.21"
#define BACKEND_B "198.18.0.22"
/* A61: an address on the backends' link that nothing listens on (refused, or silent). */
#define BACKEND_DEAD "198.18.0.31"

/* What the client learned of one RPC. */
struct rpc {
    int32_t stream_id;
    char grpc_status[8];
    char grpc_message[128];
    char body[64];
    bool closed;
    uint32_t error_code;
    bool message_sent; /* submit_rpc_message: its request message went out */
};

/* A backend: one of the backend endpoint's connections and its HTTP/2 server session. */
struct backend {
    struct stream_test *t;
    struct xlb_tcp_conn *c;
    nghttp2_session *h2;
    uint8_t addr[4]; /* the backend address it was opened to */
    char name;       /* 'A' or 'B', by address */
    unsigned rpcs;
    bool goaway;      /* xlb's subchannel said GOAWAY */
    unsigned cancels; /* RST_STREAM CANCEL from xlb */
    bool shut;        /* xlb closed its side: so did this backend, as a server does */
};

struct stream_test {
    struct nat_fixture *n;
    struct xlb_tcp_endpoint *backend_ep;
    struct rte_mbuf *backend_tx[PEER_TX];
    uint16_t n_backend_tx;
    struct xlb_syn_cookie_keys backend_keys;
    struct backend backends[8];
    unsigned n_backends;
    bool refuse;     /* the backends answer SYNs with a RST */
    bool black_hole; /* the backends never answer SYNs */
    /* One address only: SYNs to it get a RST (refuse_at), or nothing (silent_at); NULL none. */
    const char *refuse_at, *silent_at;
    const char *timeout;          /* the RPCs' grpc-timeout, or NULL */
    uint32_t backend_max_streams; /* the backends' SETTINGS_MAX_CONCURRENT_STREAMS, 0: none */
    bool mute;                    /* the backends never answer a request */
    /* Segments with data from xlb to the client that the wire loses (as a link with a
     * smaller MTU would), the first one's IP and TCP headers kept. */
    unsigned drop_to_client;
    uint8_t dropped[64];
    uint32_t dropped_len;
    /* Flow control: the backends take request DATA without giving its window back until
     * released (stall), and count it; the client sends body_total bytes of request body. */
    bool stall;
    uint64_t backend_body, backend_unconsumed;
    uint32_t body_total, body_sent;
    struct rte_mbuf *sent[4096];
    uint32_t n_sent;
    struct rte_mempool *peer_pool;
    struct xlb_tcp_endpoint *ep;
    struct xlb_tcp_conn *c;
    struct rte_mbuf *tx[PEER_TX];
    uint16_t n_tx;
    bool closed;
    nghttp2_session *h2;
    struct rpc rpcs[RPCS_MAX];
    unsigned n_rpcs;
    bool settings_acked;
    uint32_t goaway_error; /* UINT32_MAX: none received */
    bool eof;              /* xlb's FIN */
};

/* One packet into xlb, as bench_stream logs a new connection's: its burst cycles, frame
 * length and TCP flags. */
struct stream_xlb_packet {
    uint64_t cycles;
    uint32_t len;
    uint8_t tcp_flags;
};

/* The TSC cycles spent in xlb's calls (the burst function, xlb_stream_poll, xlb_flow_expire)
 * and the packets xlb received and sent, summed since the start of the process: bench_stream
 * reads them around what it measures, so that the peers' own work is not counted. */
struct stream_xlb_cycles {
    uint64_t burst, poll, expire;
    uint64_t rx, tx;
    struct stream_xlb_packet *log; /* when set, each packet in, while n_log < cap_log */
    uint32_t n_log, cap_log;
};
extern struct stream_xlb_cycles stream_xlb_cycles;

/* A worker with a stream VIP over two backends, and the client connected to it. */
struct stream_test *stream_test_create(void);
/* The same with the first endpoint's addresses given ("a:p,b:p": A61's additional ones) and
 * room for that many client connections (and as many subchannels: stream_test_create's 4). */
struct stream_test *stream_test_create_at(const char *endpoint_a, uint32_t connections);
/* Everything is back (flows, connections, mbufs); then freed. */
void stream_test_destroy(struct stream_test *t);
/* One simulated millisecond: the wire both ways, timers, the peers' sessions. */
void step(struct stream_test *t);
/* A unary RPC on the client's connection; with a body of `bytes`. */
void submit_rpc(struct stream_test *t);
void submit_rpc_with_body(struct stream_test *t, uint32_t bytes);
/* A unary RPC whose request is HEADERS then one DATA frame with a 21-byte gRPC message and
 * END_STREAM, as h2load's and a gRPC client's are. */
void submit_rpc_message(struct stream_test *t);
/* A new client connection from `port` (a fresh HTTP/2 client session), once the previous one
 * is closed (t->c NULL); stream_test_create made the first, from port 40000. */
void stream_client_connect(struct stream_test *t, uint16_t port);

#endif
