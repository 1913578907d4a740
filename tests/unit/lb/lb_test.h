/*
 * Helpers shared by the lib/lb tests (lb_test.c): hand-built EDS assignments and cluster
 * configs, the compile step, a one-target L4 VIP around compiled clusters, a pick fixture
 * (one cluster, its VIP and a worker), and distribution bounds.
 */
#ifndef LB_TEST_H
#define LB_TEST_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cluster_compile.h"
#include "xlb_lb.h"

#define SEED 0x5eedf00du

/*
 * A count drawn from Binomial(draws, p) lies within 5 standard deviations of its mean except
 * with probability below one in a million; with fixed seeds the tests never flake. One extra
 * count absorbs discreteness.
 */
void assert_binomial(uint64_t count, uint64_t draws, double p);

struct xlb_host_port hp(const char *text);

/* got, formatted, is want. */
void assert_hp(const struct xlb_host_port *got, const char *want);

/* ---- a ClusterLoadAssignment built by hand; always appended to its last part ---- */

#define EDS_PRIOS 4
#define EDS_LOCS  8
#define EDS_EPS   32
#define EDS_ADDRS 6 /* more than a compiled endpoint keeps (XLB_MAX_ENDPOINT_ADDRESSES) */
#define EDS_DROPS 4

struct eds {
    struct xlb_endpoint_config cfg;
    struct xlb_eds_priority prios[EDS_PRIOS];
    struct xlb_eds_locality locs[EDS_PRIOS][EDS_LOCS];
    struct xlb_eds_endpoint eps[EDS_PRIOS][EDS_LOCS][EDS_EPS];
    struct xlb_host_port addrs[EDS_PRIOS][EDS_LOCS][EDS_EPS][EDS_ADDRS];
    char zones[EDS_PRIOS][EDS_LOCS][16];
    struct xlb_drop_overload drops[EDS_DROPS];
    uint32_t n_endpoints; /* flattened count so far */
};

struct eds *eds_new(void);
void eds_priority(struct eds *e);
void eds_locality(struct eds *e, uint32_t weight);

/* eds_new with one priority holding one locality of the given weight. */
struct eds *eds_one_locality(uint32_t weight);

/* Returns the endpoint's index in flattened EDS order (= its index in the compiled cluster). */
uint32_t eds_endpoint(struct eds *e, const char *addr, uint32_t weight,
                      enum xlb_health_status health);

/* A61: one more address for the last endpoint added. */
void eds_address(struct eds *e, const char *addr);

void eds_drop(struct eds *e, const char *category, uint32_t ppm);

/* ---- cluster config and compile ---- */

struct xlb_cluster_config cluster_config(enum xlb_lb_policy policy);

/* Stable slots handed out by the compile callbacks: never reused within one test program. */
#define ENDPOINT_SLOT_BASE 1000u

/* The slot the last compile gave a drop category. */
uint32_t drop_slot_of(const char *category);

/* Compile with endpoint slots ENDPOINT_SLOT_BASE + index; -1 and the reason on failure. */
int try_compile(const char *name, const struct xlb_cluster_config *config, const struct eds *e,
                const bool *ejected, uint32_t cluster_slot, struct xlb_lb_cluster **out, char *err,
                size_t err_len);

struct xlb_lb_cluster *compile(const char *name, const struct xlb_cluster_config *config,
                               const struct eds *e, const bool *ejected, uint32_t cluster_slot);

/* ---- an L4 VIP with one target ---- */

#define VIP_LEAVES 4

struct vip1 {
    struct xlb_lb_vip vip;
    struct xlb_lb_target target;
    struct xlb_lb_cluster *leaves[VIP_LEAVES];
};

/* Takes over the callers' references; vip_done releases them. */
void vip_init(struct vip1 *v, const char *target_name, struct xlb_lb_cluster *const *leaves,
              uint32_t n);
void vip_one(struct vip1 *v, struct xlb_lb_cluster *c);
void vip_done(struct vip1 *v);

enum xlb_lb_outcome pick(const struct vip1 *v, struct xlb_lb_worker *w, uint64_t connection_id,
                         const struct xlb_lb_session *session, struct xlb_lb_trace *trace);

void worker(struct xlb_lb_worker *w, struct xlb_worker_load *load,
            const struct xlb_worker_load *loads, unsigned n_workers);

/* n zeroed workers' load counters; free() them. */
struct xlb_worker_load *loads_new(unsigned n);

/* A session to the given addresses (NULL-terminated), optionally pinned to a cluster. */
struct xlb_lb_session session_of(const char *cluster, const char *addr, ...);

/* ---- a pick fixture: cluster "web" behind a one-target VIP, and a worker seeded SEED ---- */

struct fixture {
    struct eds *e; /* owned */
    struct vip1 v;
    struct xlb_lb_worker w;
    struct xlb_worker_load *load; /* the worker's counters when counted, else NULL */
};

/*
 * Compile e (owned from here on; NULL: no assignment) under cfg in cluster_slot with the given
 * endpoints ejected (NULL: none), put it behind f->v, then start f->w, with its own zeroed load
 * counters when counted.
 */
void fixture_start(struct fixture *f, struct eds *e, const struct xlb_cluster_config *cfg,
                   const bool *ejected, uint32_t cluster_slot, bool counted);

/* fixture_start with round robin, cluster slot 1 and no load counters. */
void fixture_rr(struct fixture *f, struct eds *e, const bool *ejected);

void fixture_done(struct fixture *f);

/* A pick through the fixture that must be XLB_LB_PICKED; its trace. */
struct xlb_lb_trace pick_ok(struct fixture *f, uint64_t connection_id,
                            const struct xlb_lb_session *session);

#endif
