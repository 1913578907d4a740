/*
 * The L7 stream mode (dataplane/stream/), driven through the burst function by a client that
 * is a real nghttp2 client session over an xlb TCP endpoint, and backends that are real nghttp2
 * server sessions over another (answering each RPC with a message naming the backend and
 * grpc-status 0 in trailers): xlb terminates the client's TCP and HTTP/2, picks each request
 * stream on its own and forwards it over its subchannel to the picked backend. RPCs of one
 * connection spread over the endpoints; a backend that refuses the connection gets its RPC
 * answered UNAVAILABLE; bytes that are not HTTP/2 end the connection. In the end flows,
 * connections and mbufs are all back.
 */
#include "stream_peers.h"

/* ---- tests ---- */

static void wait_settings(struct stream_test *t)
{
    for (uint32_t ms = 0; ms < MAX_STEPS && !t->settings_acked; ms++)
        step(t);
    assert_true(t->settings_acked); /* xlb's HTTP/2 server took our SETTINGS */
}

static void run_rpc(struct stream_test *t, unsigned i)
{
    submit_rpc(t);
    struct rpc *r = &t->rpcs[i];
    for (uint32_t ms = 0; ms < MAX_STEPS && !r->closed; ms++)
        step(t);
    assert_true(r->closed);
    assert_int_equal(r->error_code, NGHTTP2_NO_ERROR);
}

/* RPCs of one client connection go each to its own pick: round robin over two endpoints
 * alternates, each RPC gets its backend's message and grpc-status 0, and the connection stays
 * open between them. */
static void rpcs_spread_over_endpoints(void **state)
{
    (void)state;
    struct stream_test *t = stream_test_create();
    wait_settings(t);
    print_message("an idle client session holds %u heap bytes\n",
                  xlb_stream_session_bytes(t->n->f->ctx.stream));
    unsigned from_a = 0, from_b = 0;
    for (unsigned i = 0; i < RPCS; i++) {
        run_rpc(t, i);
        struct rpc *r = &t->rpcs[i];
        assert_string_equal(r->grpc_status, "0");
        from_a += strcmp(r->body + 5, "A") == 0;
        from_b += strcmp(r->body + 5, "B") == 0;
        assert_non_null(t->c); /* the connection stays for the next RPC */
        assert_false(t->closed);
    }
    assert_int_equal(from_a, RPCS / 2);
    assert_int_equal(from_b, RPCS / 2);
    assert_int_equal(t->n_backends, BACKENDS); /* one subchannel per endpoint, reused */
    const struct xlb_worker_stats *st = &t->n->f->stats;
    assert_int_equal(st->events[XLB_EVENT_STREAM_OPENED], 1);
    assert_int_equal(st->events[XLB_EVENT_STREAM_RPCS], RPCS);
    assert_int_equal(st->events[XLB_EVENT_STREAM_RPCS_FORWARDED], RPCS);
    /* The first RPC found both endpoints IDLE: it waited while the engine connected both. */
    assert_int_equal(st->events[XLB_EVENT_STREAM_RPCS_QUEUED], 1);
    assert_int_equal(st->events[XLB_EVENT_STREAM_SUBCHANNELS], BACKENDS);
    assert_int_equal(st->events[XLB_EVENT_STREAM_SESSION_ERRORS], 0);
    /* Both endpoints READY for the LB core; every RPC a success in the load report. */
    assert_int_equal(xlb_lb_connectivity_get(&t->n->lb, 7), XLB_CONN_READY);
    assert_int_equal(xlb_lb_connectivity_get(&t->n->lb, 8), XLB_CONN_READY);
    assert_int_equal(t->n->load->localities[1].succeeded, RPCS);
    assert_int_equal(t->n->load->localities[1].failed, 0);
    /* Every RPC ended: least request (A48) sees no call left in flight on either endpoint. */
    assert_int_equal(t->n->load->endpoints[7].in_flight, 0);
    assert_int_equal(t->n->load->endpoints[8].in_flight, 0);
    stream_test_destroy(t);
}

/* A backend that does not read: the client's upload stalls after the two windows on its way
 * (xlb's towards the client, the backend's towards xlb) instead of filling xlb's memory; once
 * the backend reads, all of it arrives and the RPC completes. */
static void upload_stalls_with_the_backend(void **state)
{
    (void)state;
    struct stream_test *t = stream_test_create();
    t->stall = true;
    wait_settings(t);
    const uint32_t total = 1u << 20, window = XLB_STREAM_DEFAULT_WINDOW_BYTES;
    uint32_t heap_idle = xlb_stream_heap_in_use(t->n->f->ctx.stream);
    submit_rpc_with_body(t, total);
    for (uint32_t ms = 0; ms < 2000; ms++)
        step(t);
    print_message("heap: %u bytes with the idle client session, %u with a subchannel and one "
                  "RPC in flight; an RPC's own entry %u bytes\n",
                  heap_idle, xlb_stream_heap_in_use(t->n->f->ctx.stream), xlb_stream_rpc_size());
    print_message("stalled: client sent %u bytes, the backend got %llu\n", t->body_sent,
                  (unsigned long long)t->backend_body);
    assert_true(t->backend_body <= 65535);       /* the backend's own window */
    assert_true(t->body_sent <= window + 65535); /* xlb's window, plus what it passed on */
    assert_true(t->body_sent > 0);
    assert_false(t->rpcs[0].closed);
    /* The backend reads what it has and then all that follows. */
    for (unsigned i = 0; i < t->n_backends; i++)
        nghttp2_session_consume(t->backends[i].h2, 1, t->backend_unconsumed);
    t->stall = false;
    for (uint32_t ms = 0; ms < MAX_STEPS && !t->rpcs[0].closed; ms++)
        step(t);
    assert_true(t->rpcs[0].closed);
    assert_int_equal(t->backend_body, total);
    assert_string_equal(t->rpcs[0].grpc_status, "0");
    stream_test_destroy(t);
}

/* A backend that refuses the connection: its RPC ends UNAVAILABLE with the reason, the client
 * connection goes on. */
static void refused_backend_answers_unavailable(void **state)
{
    (void)state;
    struct stream_test *t = stream_test_create();
    t->refuse = true;
    wait_settings(t);
    run_rpc(t, 0);
    assert_string_equal(t->rpcs[0].grpc_status, "14");
    /* The RPC waited for the endpoint's connection (XLB_LB_QUEUE); once that failed, the
     * priority had no usable endpoint left (A56) and the re-pick answered it, unsent. */
    assert_string_equal(t->rpcs[0].grpc_message, "xlb: no usable endpoint in cluster grpc");
    assert_false(t->closed);
    assert_int_equal(t->n->f->stats.events[XLB_EVENT_STREAM_RPCS_QUEUED], 1);
    assert_int_equal(t->n->f->stats.events[XLB_EVENT_STREAM_RPCS_FORWARDED], 0);
    /* The endpoint in TRANSIENT_FAILURE for the LB core. */
    assert_int_equal(xlb_lb_connectivity_get(&t->n->lb, 7), XLB_CONN_TRANSIENT_FAILURE);
    stream_test_destroy(t);
}

/* A backend that refused its connection and then recovers: the engine connects it again after
 * its backoff (no pick queues on a priority in TRANSIENT_FAILURE, so nothing else would), it
 * becomes READY and the next RPC succeeds through it. */
static void refused_backend_comes_back_after_backoff(void **state)
{
    (void)state;
    struct stream_test *t = stream_test_create();
    t->refuse = true;
    wait_settings(t);
    run_rpc(t, 0);
    assert_string_equal(t->rpcs[0].grpc_status, "14");
    assert_int_equal(xlb_lb_connectivity_get(&t->n->lb, 7), XLB_CONN_TRANSIENT_FAILURE);
    t->refuse = false;
    for (uint32_t ms = 0; ms < MAX_STEPS && xlb_lb_connectivity_get(&t->n->lb, 7) != XLB_CONN_READY;
         ms++)
        step(t);
    assert_int_equal(xlb_lb_connectivity_get(&t->n->lb, 7), XLB_CONN_READY);
    run_rpc(t, 1);
    assert_string_equal(t->rpcs[1].grpc_status, "0");
    stream_test_destroy(t);
}

/* An endpoint that leaves the configuration (a snapshot whose stream VIPs no longer list it at
 * its slot): its subchannel says GOAWAY and closes, the endpoint's slot is IDLE again for this
 * worker, and the other endpoint's subchannel stays up and serving. */
static void removed_endpoint_subchannel_closes(void **state)
{
    (void)state;
    struct stream_test *t = stream_test_create();
    wait_settings(t);
    run_rpc(t, 0);
    run_rpc(t, 1);
    assert_int_equal(t->n_backends, BACKENDS);
    struct xlb_snapshot *snap = t->n->f->snap;
    assert_int_equal(xlb_snapshot_index_endpoints(snap), 0);
    struct xlb_host_port a = {.port = 50051}, b = {.port = 50051};
    assert_int_equal(xlb_addr_parse(BACKEND_A, &a.addr), 0);
    assert_int_equal(xlb_addr_parse(BACKEND_B, &b.addr), 0);
    assert_true(xlb_snapshot_has_endpoint(snap, 7, &a));
    assert_true(xlb_snapshot_has_endpoint(snap, 8, &b));
    assert_false(xlb_snapshot_has_endpoint(snap, 8, &a)); /* the slot names another address */
    assert_false(xlb_snapshot_has_endpoint(snap, 9, &b)); /* no stream VIP lists it */

    memset(&snap->slot_hosts[8], 0, sizeof(snap->slot_hosts[8])); /* B leaves */
    snap->generation++;
    struct backend *gone = NULL, *kept = NULL;
    for (unsigned i = 0; i < t->n_backends; i++)
        *(t->backends[i].name == 'B' ? &gone : &kept) = &t->backends[i];
    assert_non_null(gone);
    assert_non_null(kept);
    for (uint32_t ms = 0; ms < MAX_STEPS && gone->c != NULL; ms++)
        step(t);
    assert_true(gone->goaway);
    assert_null(gone->c); /* closed by both sides, no RST */
    assert_false(kept->goaway);
    assert_non_null(kept->c);
    const struct xlb_worker_stats *st = &t->n->f->stats;
    assert_int_equal(st->events[XLB_EVENT_STREAM_SUBS_RETIRED], 1);
    assert_int_equal(xlb_lb_connectivity_get(&t->n->lb, 8), XLB_CONN_IDLE);
    assert_int_equal(xlb_lb_connectivity_get(&t->n->lb, 7), XLB_CONN_READY);
    /* The tree still lists B here (only the index changed): a later pick of B connects anew,
     * the pick of A goes over the kept subchannel. */
    run_rpc(t, 2);
    run_rpc(t, 3);
    assert_string_equal(t->rpcs[2].grpc_status, "0");
    assert_string_equal(t->rpcs[3].grpc_status, "0");
    stream_test_destroy(t);
}

/* Backends that take one stream at a time (SETTINGS_MAX_CONCURRENT_STREAMS 1): three RPCs
 * sent at once over two endpoints put two on one endpoint, which gets a second subchannel
 * instead of holding the RPC back in nghttp2's queue; all three succeed. */
static void full_subchannel_gets_another(void **state)
{
    (void)state;
    struct stream_test *t = stream_test_create();
    t->backend_max_streams = 1;
    wait_settings(t);
    run_rpc(t, 0); /* both endpoints connected and READY */
    assert_int_equal(t->n_backends, BACKENDS);
    for (unsigned i = 1; i < RPCS; i++)
        submit_rpc(t);
    bool all_closed = false;
    for (uint32_t ms = 0; ms < MAX_STEPS && !all_closed; ms++) {
        step(t);
        all_closed = t->rpcs[1].closed && t->rpcs[2].closed && t->rpcs[3].closed;
    }
    assert_true(all_closed);
    for (unsigned i = 0; i < RPCS; i++)
        assert_string_equal(t->rpcs[i].grpc_status, "0");
    assert_int_equal(t->n_backends, BACKENDS + 1);
    const struct xlb_worker_stats *st = &t->n->f->stats;
    assert_int_equal(st->events[XLB_EVENT_STREAM_SUBS_EXTRA], 1);
    assert_int_equal(st->events[XLB_EVENT_STREAM_SUBCHANNELS], BACKENDS + 1);
    stream_test_destroy(t);
}

/* A backend that never answers: the forwarded RPC's grpc-timeout (300 ms) passes, xlb cancels
 * its backend stream (RST_STREAM CANCEL) and answers the client DEADLINE_EXCEEDED itself, as a
 * gRPC client ends a call at its deadline; the connection stays, the next RPC is served. */
static void forwarded_rpc_gets_deadline_exceeded(void **state)
{
    (void)state;
    struct stream_test *t = stream_test_create();
    wait_settings(t);
    run_rpc(t, 0); /* both endpoints READY */
    t->mute = true;
    t->timeout = "300m";
    uint64_t start = t->n->f->ctx.now_tsc / MS; /* simulated milliseconds */
    run_rpc(t, 1);
    assert_string_equal(t->rpcs[1].grpc_status, "4");
    assert_string_equal(t->rpcs[1].grpc_message, "xlb: deadline exceeded");
    assert_true(t->n->f->ctx.now_tsc / MS - start >= 300); /* not before its deadline */
    unsigned cancels = 0;
    for (uint32_t ms = 0; ms < 100 && cancels == 0; ms++) {
        step(t);
        for (unsigned i = 0; i < t->n_backends; i++)
            cancels += t->backends[i].cancels;
    }
    assert_int_equal(cancels, 1);
    const struct xlb_worker_stats *st = &t->n->f->stats;
    assert_int_equal(st->events[XLB_EVENT_STREAM_RPCS_DEADLINE], 1);
    assert_int_equal(st->events[XLB_EVENT_STREAM_RPCS_FORWARDED], 2);
    assert_false(t->closed);
    t->mute = false;
    t->timeout = NULL;
    run_rpc(t, 2);
    assert_string_equal(t->rpcs[2].grpc_status, "0");
    stream_test_destroy(t);
}

/* An ICMP "fragmentation needed" (MTU 1000) from a router, quoting a response segment xlb
 * sent the client and the link lost: xlb's TCP lowers the connection's MSS (RFC 1191), the
 * data goes again in segments that fit, and the RPC completes. */
static void send_frag_needed(struct stream_test *t, uint16_t mtu)
{
    uint8_t frame[160] = {0};
    struct rte_ether_hdr *eth = (struct rte_ether_hdr *)frame;
    eth->src_addr = (struct rte_ether_addr)FIX_PEER_MAC;
    eth->dst_addr = (struct rte_ether_addr)FIX_PORT_MAC;
    eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
    struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
    uint32_t quoted = t->dropped_len < 48 ? t->dropped_len : 48;
    uint16_t icmp_len = (uint16_t)(8 + quoted);
    ip->version_ihl = 0x45;
    ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + icmp_len));
    ip->time_to_live = 64;
    ip->next_proto_id = IPPROTO_ICMP;
    inet_pton(AF_INET, FIX_GW4, &ip->src_addr);
    inet_pton(AF_INET, FIX_VIP4, &ip->dst_addr);
    ip->hdr_checksum = rte_ipv4_cksum(ip);
    uint8_t *icmp = (uint8_t *)(ip + 1);
    icmp[0] = 3; /* destination unreachable */
    icmp[1] = 4; /* fragmentation needed and DF set */
    icmp[6] = (uint8_t)(mtu >> 8);
    icmp[7] = (uint8_t)mtu;
    memcpy(icmp + 8, t->dropped, quoted);
    uint16_t csum = (uint16_t)~rte_raw_cksum(icmp, icmp_len);
    memcpy(icmp + 2, &csum, 2);
    fixture_send(t->n->f, frame, sizeof(*eth) + sizeof(*ip) + icmp_len);
}

static void icmp_frag_needed_lowers_the_client_mss(void **state)
{
    (void)state;
    struct stream_test *t = stream_test_create();
    wait_settings(t);
    run_rpc(t, 0);
    const struct xlb_tcp_counters *ctr = xlb_tcp_counters(xlb_stream_endpoint(t->n->f->ctx.stream));
    uint64_t lowered = ctr->pmtu_lowered;
    t->drop_to_client = 1;
    submit_rpc(t);
    for (uint32_t ms = 0; ms < MAX_STEPS && t->dropped_len == 0; ms++)
        step(t);
    assert_true(t->dropped_len >= 28);
    send_frag_needed(t, 1000);
    assert_int_equal(ctr->pmtu_lowered, lowered + 1);
    struct rpc *r = &t->rpcs[1];
    for (uint32_t ms = 0; ms < MAX_STEPS && !r->closed; ms++)
        step(t);
    assert_true(r->closed);
    assert_string_equal(r->grpc_status, "0");
    stream_test_destroy(t);
}

/* A black-holed backend: the RPC waits for its connection until its grpc-timeout (300 ms)
 * passes, then gets DEADLINE_EXCEEDED from xlb, never having been sent; the client's
 * connection stays. */
static void waiting_rpc_gets_deadline_exceeded(void **state)
{
    (void)state;
    struct stream_test *t = stream_test_create();
    t->black_hole = true;
    t->timeout = "300m";
    wait_settings(t);
    run_rpc(t, 0);
    assert_string_equal(t->rpcs[0].grpc_status, "4");
    assert_string_equal(t->rpcs[0].grpc_message, "xlb: deadline exceeded waiting for a connection");
    assert_false(t->closed);
    const struct xlb_worker_stats *st = &t->n->f->stats;
    assert_int_equal(st->events[XLB_EVENT_STREAM_RPCS_QUEUED], 1);
    assert_int_equal(st->events[XLB_EVENT_STREAM_RPCS_DEADLINE], 1);
    assert_int_equal(st->events[XLB_EVENT_STREAM_RPCS_FORWARDED], 0);
    assert_int_equal(xlb_lb_connectivity_get(&t->n->lb, 7), XLB_CONN_CONNECTING);
    stream_test_destroy(t);
}

/* Bytes that are not HTTP/2 frames after the preface: xlb's session ends the connection as
 * RFC 9113 says (GOAWAY with the error, then FIN), nothing is left. */
static void garbage_ends_the_connection(void **state)
{
    (void)state;
    struct stream_test *t = stream_test_create();
    for (uint32_t ms = 0; ms < MAX_STEPS && !t->settings_acked; ms++)
        step(t);
    struct rte_mbuf *m = rte_pktmbuf_alloc(t->peer_pool);
    assert_non_null(m);
    memcpy(rte_pktmbuf_append(m, 16), "GET / HTTP/1.1\r\n", 16);
    assert_int_equal(xlb_tcp_write(t->ep, t->c, m), 0);
    xlb_tcp_flush(t->ep, t->c);
    for (uint32_t ms = 0; ms < MAX_STEPS && !t->eof; ms++)
        step(t);
    assert_int_equal(t->goaway_error, NGHTTP2_FRAME_SIZE_ERROR);
    assert_true(t->eof);
    stream_test_destroy(t);
}

/* A connection that ended gives its session's heap and its pool entry back at once, though its
 * flow stays a few seconds more for the last segments: otherwise every closed connection held
 * its session floor (then 48 KiB) and its entry for 3 s and new connections were refused
 * (stream_heap_full, stream_pool_full) far below the pool's size, as the TLS benchmark saw at a few
 * hundred new connections a second. */
static void closed_connection_gives_its_heap_back(void **state)
{
    (void)state;
    struct stream_test *t = stream_test_create();
    struct xlb_stream_worker *w = t->n->f->ctx.stream;
    for (uint32_t ms = 0; ms < MAX_STEPS && !t->settings_acked; ms++)
        step(t);
    assert_true(xlb_stream_heap_committed(w) > 0);
    xlb_tcp_shutdown(t->ep, t->c); /* the client closes: xlb's session ends, then its TCP */
    for (uint32_t ms = 0; ms < 200 && !t->eof; ms++)
        step(t);
    for (uint32_t ms = 0; ms < 200; ms++)
        step(t);
    uint32_t in_use, capacity;
    xlb_stream_use(w, &in_use, &capacity);
    assert_int_equal(xlb_stream_heap_committed(w), 0);
    /* Closed by the client first, xlb's side has no TIME-WAIT: the entry is back in the pool
     * too, while the flow stays to drop late segments. */
    assert_int_equal(in_use, 0);
    assert_int_equal(t->n->flows->n_used, 1);
    stream_test_destroy(t);
}

/* A client session that fails (bytes that are not HTTP/2) while its RPC waits for a backend
 * that does not answer: the connection ends, the backend stream is cancelled, and the RPC
 * leaves the cluster's requests in flight (circuit breaking would otherwise keep counting it
 * for ever, as e2e_conn_rate saw after sessions failed for want of heap). */
static void failed_session_ends_its_rpcs(void **state)
{
    (void)state;
    struct stream_test *t = stream_test_create();
    struct xlb_stream_worker *w = t->n->f->ctx.stream;
    wait_settings(t);
    run_rpc(t, 0); /* both endpoints READY */
    t->mute = true;
    submit_rpc(t);
    uint32_t sessions, rpcs;
    for (uint32_t ms = 0; ms < 50; ms++)
        step(t);
    xlb_stream_live(w, &sessions, &rpcs);
    assert_int_equal(rpcs, 1);
    const struct xlb_worker_load *load = t->n->f->ctx.lb->load;
    uint64_t started = 0, finished = 0;
    for (unsigned i = 0; i < XLB_CLUSTER_SLOTS; i++)
        started += load->clusters[i].started, finished += load->clusters[i].finished;
    assert_int_equal(started, finished + 1);
    struct rte_mbuf *m = rte_pktmbuf_alloc(t->peer_pool);
    assert_non_null(m);
    memcpy(rte_pktmbuf_append(m, 16), "GET / HTTP/1.1\r\n", 16);
    assert_int_equal(xlb_tcp_write(t->ep, t->c, m), 0);
    xlb_tcp_flush(t->ep, t->c);
    for (uint32_t ms = 0; ms < MAX_STEPS && !t->eof && !t->closed; ms++)
        step(t);
    for (uint32_t ms = 0; ms < 200; ms++)
        step(t);
    xlb_stream_live(w, &sessions, &rpcs);
    assert_int_equal(rpcs, 0);
    started = finished = 0;
    for (unsigned i = 0; i < XLB_CLUSTER_SLOTS; i++)
        started += load->clusters[i].started, finished += load->clusters[i].finished;
    assert_int_equal(started, finished);
    unsigned cancels = 0;
    for (unsigned i = 0; i < t->n_backends; i++)
        cancels += t->backends[i].cancels;
    assert_int_equal(cancels, 1);
    if (!t->closed)
        xlb_tcp_shutdown(t->ep, t->c);
    for (uint32_t ms = 0; ms < 200; ms++)
        step(t);
    stream_test_destroy(t);
}

/* The client says GOAWAY (it is closing): xlb waits for the client's FIN before its own, so
 * that TIME-WAIT stays on the client's side; xlb's entry is back in the pool at once. Sent
 * first, xlb's FIN would keep its entry and TCP block through TIME-WAIT, and a few thousand
 * short connections a second filled the pool (stream_pool_full in e2e_conn_rate). */
static void client_goaway_leaves_time_wait_to_the_client(void **state)
{
    (void)state;
    struct stream_test *t = stream_test_create();
    struct xlb_stream_worker *w = t->n->f->ctx.stream;
    wait_settings(t);
    run_rpc(t, 0);
    assert_int_equal(nghttp2_submit_goaway(t->h2, NGHTTP2_FLAG_NONE, 0, NGHTTP2_NO_ERROR, NULL, 0),
                     0);
    for (uint32_t ms = 0; ms < 500; ms++)
        step(t);
    assert_false(t->eof); /* xlb waits for the client's FIN */
    xlb_tcp_shutdown(t->ep, t->c);
    for (uint32_t ms = 0; ms < MAX_STEPS && !t->eof; ms++)
        step(t);
    assert_true(t->eof);
    for (uint32_t ms = 0; ms < 200; ms++)
        step(t);
    uint32_t in_use, capacity;
    xlb_stream_use(w, &in_use, &capacity);
    assert_int_equal(in_use, 0); /* no TIME-WAIT on xlb's side */
    assert_int_equal(t->n->f->stats.events[XLB_EVENT_STREAM_LINGER_TIMEOUTS], 0);
    stream_test_destroy(t);
}

/* A client that says GOAWAY and then does not close is waited for two seconds; then xlb closes
 * as before, and counts it. */
static void client_goaway_without_fin_is_closed_after_a_while(void **state)
{
    (void)state;
    struct stream_test *t = stream_test_create();
    wait_settings(t);
    assert_int_equal(nghttp2_submit_goaway(t->h2, NGHTTP2_FLAG_NONE, 0, NGHTTP2_NO_ERROR, NULL, 0),
                     0);
    for (uint32_t ms = 0; ms < 1500; ms++)
        step(t);
    assert_false(t->eof);
    for (uint32_t ms = 0; ms < MAX_STEPS && !t->eof; ms++)
        step(t);
    assert_true(t->eof);
    assert_int_equal(t->n->f->stats.events[XLB_EVENT_STREAM_LINGER_TIMEOUTS], 1);
    xlb_tcp_shutdown(t->ep, t->c);
    for (uint32_t ms = 0; ms < 200; ms++)
        step(t);
    stream_test_destroy(t);
}

int main(void)
{
    fixture_eal_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rpcs_spread_over_endpoints),
        cmocka_unit_test(refused_backend_answers_unavailable),
        cmocka_unit_test(waiting_rpc_gets_deadline_exceeded),
        cmocka_unit_test(refused_backend_comes_back_after_backoff),
        cmocka_unit_test(upload_stalls_with_the_backend),
        cmocka_unit_test(garbage_ends_the_connection),
        cmocka_unit_test(closed_connection_gives_its_heap_back),
        cmocka_unit_test(failed_session_ends_its_rpcs),
        cmocka_unit_test(client_goaway_leaves_time_wait_to_the_client),
        cmocka_unit_test(client_goaway_without_fin_is_closed_after_a_while),
        cmocka_unit_test(removed_endpoint_subchannel_closes),
        cmocka_unit_test(full_subchannel_gets_another),
        cmocka_unit_test(forwarded_rpc_gets_deadline_exceeded),
        cmocka_unit_test(icmp_frag_needed_lowers_the_client_mss),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
