/* bench_l7's L7 VIP: the fixture's VIP given a route table (and optionally a session cookie). */
#ifndef BENCH_L7_VIP_H
#define BENCH_L7_VIP_H

#include <stdbool.h>

/* Make the fixture's first VIP an L7 VIP routing /xlb.test.Echo/ to its cluster. */
void l7_vip_make(void);
/* Stateful session affinity on its route (cookie xlb-session, path /, max-age 3600), or not. */
void l7_vip_cookie(bool on);
void l7_vip_free(void);
/* Bytes a pooled L7 connection takes, printed. */
void l7_memory_report(void);

#endif
