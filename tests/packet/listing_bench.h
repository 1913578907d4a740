/*
 * The bench of the listing tests (test_flows_listing.c, test_tcp_listing.c): a control socket
 * on the event loop, a client that sends one request and runs the loop until its reply, and
 * fake workers that answer each dump message from the loop, at once, unless told to be silent.
 */
#ifndef XLB_TEST_LISTING_BENCH_H
#define XLB_TEST_LISTING_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "control_socket.h"
#include "event_loop.h"
#include "xlb_msg.h"
#include "xlb_shared.h"

#define LISTING_BENCH_WORKERS 2

struct listing_bench;

/* A fake worker's answer to one message taken from its ring. */
typedef void (*listing_bench_answer)(struct listing_bench *b, unsigned worker,
                                     const struct xlb_msg *msg);

struct listing_bench {
    struct xlb_shared *shared;
    struct xlb_loop *loop;
    struct xlb_control_socket *sock;
    void *listing;                   /* the test's object under test */
    void (*listing_destroy)(void *); /* called once the socket is closed */
    listing_bench_answer answer;
    bool silent[LISTING_BENCH_WORKERS]; /* a worker that takes no message */
    char path[108];
    int client;
    char reply[4096];
    size_t reply_len;
    uint64_t ticks; /* loop turns while a reply was awaited */
};

/* EAL (once per process) and a bench named name, its socket served by handler(request, b);
 * the caller sets listing and listing_destroy. */
struct listing_bench *listing_bench_create(const char *name, xlb_request_handler handler,
                                           listing_bench_answer answer);
void listing_bench_destroy(struct listing_bench *b);

/* Send one request on a new connection and run the loop until its reply (or 5 s). */
cJSON *listing_bench_ask(struct listing_bench *b, const char *request);

#endif
