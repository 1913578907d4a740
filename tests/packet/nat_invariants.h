/*
 * Consistency checks of the NAT robustness run: what is sent (from the port's MAC, TCP from a
 * VIP or SNAT address, every checksum right when the input was valid), the flow table (used
 * entries, hash keys, free list, SNAT port stacks, half-open count, timer wheel), the frame
 * and flow accounting, expiry progress, and the final drain past every timeout.
 */
#ifndef XLB_NAT_INVARIANTS_H
#define XLB_NAT_INVARIANTS_H

#include <rte_mbuf.h>

#include "nat_robust.h"

/* Check, count and free every queued frame; in[] are the frames of the burst just processed. */
void collect_tx(struct robust *r, struct rte_mbuf *const *in, const bool *clean, unsigned n);
/* The table is whole, and its timer wheel holds every used flow no later than its deadline. */
void check_table(struct robust *r);
/* Every frame in is accounted for: sent, dropped by reason, handled silently or handed on. */
void check_accounting(const struct robust *r);
/* After a call of xlb_flow_expire: it freed a flow or moved the wheel on, unless the wheel is
 * not behind the clock; fails after too many calls in a row that did neither. */
void check_expiry_progress(struct robust *r, uint64_t closed_before);
/* Past every timeout, a bounded number of expiry calls frees every flow and port. */
void expire_everything(struct robust *r);

#endif
