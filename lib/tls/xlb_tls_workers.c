/* SPDX-License-Identifier: BSD-3-Clause */
#include "xlb_tls_workers.h"

/* Written once at start, before any context is built; read-only afterwards. */
static unsigned workers = 1;

void xlb_tls_set_workers(unsigned n)
{
    workers = n == 0 ? 1 : n > XLB_TLS_WORKERS_MAX ? XLB_TLS_WORKERS_MAX : n;
}

unsigned xlb_tls_workers(void)
{
    return workers;
}
