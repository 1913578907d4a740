/*
 * Stopping xlbd without cutting RPCs short. The stream mode holds HTTP/2 clients whose RPCs a
 * stop would reset; on SIGTERM the workers tell them GOAWAY (dataplane/stream/stream_drain.c)
 * and the control plane waits for their sessions to end, polling the workers' gauges, for at
 * most xlb.drain_seconds. Everything else (NAT flows, spliced connections) has no such signal
 * and stops at once, as before.
 */
#include <signal.h>

#include "control_plane.h"
#include "xlb_log.h"

#define DRAIN_POLL_MS 100u

static uint64_t stream_sessions(const struct xlb_control_plane *cp, uint64_t *rpcs)
{
    uint64_t sessions = 0;
    *rpcs = 0;
    for (unsigned w = 0; w < cp->shared->n_workers; w++) {
        const volatile struct xlb_worker_stats *s = &cp->shared->stats[w];
        sessions += s->stream_sessions;
        *rpcs += s->stream_rpcs;
    }
    return sessions;
}

static void check_drained(void *arg)
{
    struct xlb_control_plane *cp = arg;
    if (!cp->draining)
        return;
    uint64_t rpcs, sessions = stream_sessions(cp, &rpcs);
    if (sessions == 0) {
        XLB_LOG(NOTICE, CONTROL, "drained: no stream client connection left; stopping");
    } else if (xlb_now_ms() >= cp->drain_deadline_ms) {
        XLB_LOG(WARNING, CONTROL,
                "drain time (%u s) over with %" PRIu64 " stream client connections and %" PRIu64
                " RPCs left; stopping",
                cp->bootstrap.drain_seconds, sessions, rpcs);
    } else {
        return;
    }
    cp->draining = false;
    xlb_loop_stop(cp->loop);
}

void xlb_control_plane_stop(struct xlb_control_plane *cp, unsigned signo)
{
    uint64_t rpcs, sessions = stream_sessions(cp, &rpcs);
    if (cp->draining || cp->bootstrap.drain_seconds == 0 || sessions == 0) {
        XLB_LOG(NOTICE, CONTROL, "signal %u: stopping", signo);
        xlb_loop_stop(cp->loop);
        return;
    }
    XLB_LOG(NOTICE, CONTROL,
            "signal %u: draining %" PRIu64 " stream client connections (%" PRIu64
            " RPCs in flight) for up to %u s; a second signal stops at once",
            signo, sessions, rpcs, cp->bootstrap.drain_seconds);
    cp->draining = true;
    cp->drain_deadline_ms = xlb_now_ms() + (uint64_t)cp->bootstrap.drain_seconds * 1000u;
    __atomic_store_n(&cp->shared->drain, true, __ATOMIC_RELEASE);
    if (xlb_loop_add_timer(cp->loop, DRAIN_POLL_MS, check_drained, cp) != 0) {
        XLB_LOG(WARNING, CONTROL, "cannot time the drain; stopping");
        xlb_loop_stop(cp->loop);
    }
}
