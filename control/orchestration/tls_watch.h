/*
 * The TLS VIPs' servers (docs/tls.md), kept by the control plane: built from the bootstrap's
 * certificate_providers (gRPC A29's file_watcher) when xlbd starts and at each reload, built
 * again when a provider's files change (looked at every refresh_interval) and when the
 * session-ticket keys rotate. A new set goes to the workers with the next snapshot; a set that
 * fails to build leaves the previous one serving and says why. Control plane only.
 */
#ifndef XLB_TLS_WATCH_H
#define XLB_TLS_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "bootstrap.h"
#include "xlb_limits.h"
#include "xlb_tls_server.h"

/* The ticket keys rotate this often: a ticket resumes for one to two periods. */
#define XLB_TLS_TICKET_ROTATE_MS (3600u * 1000u)
/* A server replaced stays alive this long for the handshakes begun with it (a worker ends a
 * handshake that takes longer, dataplane/stream/stream_tls.c). */
#define XLB_TLS_RETIRE_MS   15000u
#define XLB_TLS_RETIRED_MAX 64u

/* One built set: a server per TLS VIP, by its tls index. */
struct xlb_tls_set {
    struct xlb_tls_server *servers[XLB_MAX_TLS_VIPS];
    unsigned n;
    uint64_t files_stamp; /* what the files looked like when read */
};

struct xlb_tls_watch {
    struct xlb_tls_set current;
    struct xlb_tls_ticket_keys keys;
    uint64_t keys_rotated_ms, next_look_ms;
    uint64_t failed_stamp; /* the files' stamp of the last failed build: not tried again */
    uint64_t seen_stamp;   /* the files as last looked at */
    uint64_t files_epoch;  /* bumped when they change: clusters' upstream TLS reads them again */
    struct {
        struct xlb_tls_server *server;
        uint64_t free_at_ms;
    } retired[XLB_TLS_RETIRED_MAX];
    unsigned n_retired;
    uint64_t builds, failures; /* rebuilds after start: applied, refused */
    char last_error[512];
};

/* Build the servers of b's TLS VIPs into set (0), or say what is wrong in errs, one line per
 * VIP, under "xlb.vips[i].tls" (-1, set empty). keys: those the servers seal tickets with. */
int xlb_tls_set_build(struct xlb_tls_set *set, const struct xlb_bootstrap *b,
                      const struct xlb_tls_ticket_keys *keys, struct xlb_errors *errs);
void xlb_tls_set_free(struct xlb_tls_set *set);

/* xlbd --check: b's TLS VIPs' files, read as a running xlbd would. */
int xlb_tls_check(const struct xlb_bootstrap *b, struct xlb_errors *errs);

/* At start: fresh keys and b's servers; -1 with errs filled. */
int xlb_tls_watch_init(struct xlb_tls_watch *w, const struct xlb_bootstrap *b, uint64_t now_ms,
                       struct xlb_errors *errs);
/* Take a set built for a reload (its keys are w's); the one it replaces is retired. */
void xlb_tls_watch_install(struct xlb_tls_watch *w, struct xlb_tls_set *set, uint64_t now_ms);
/* On the control plane's tick: look at the files when due, rotate the keys when due, free
 * what has retired long enough. True when the servers changed (publish a snapshot). */
bool xlb_tls_watch_tick(struct xlb_tls_watch *w, const struct xlb_bootstrap *b, uint64_t now_ms);
void xlb_tls_watch_fini(struct xlb_tls_watch *w);

/* The server of the TLS VIP with this index, NULL when there is none. */
struct xlb_tls_server *xlb_tls_watch_server(const struct xlb_tls_watch *w, unsigned index);

#endif
