/*
 * Traffic of the NAT robustness run: the next frame of the phase's mix (client SYNs from many
 * addresses and ports, backend replies on flows that exist and to random SNAT ports, client
 * segments with and without a flow, ICMP errors about flows, other traffic to the VIPs and
 * hostile noise) and the templates the noise generator flips and truncates.
 */
#ifndef XLB_NAT_TRAFFIC_H
#define XLB_NAT_TRAFFIC_H

#include "nat_frames.h"

/* The next frame of the mix into buf; *clean when it is as a sender would put it on the wire.
 * lo describes a frame built from a spec; lo->l3 is 0 for the others. */
size_t traffic_generate(struct robust *r, uint8_t *buf, bool *clean, struct layout *lo);
/* Give the noise generator frames of the kinds the NAT sees to flip and truncate. */
void traffic_add_templates(struct robust *r);

#endif
