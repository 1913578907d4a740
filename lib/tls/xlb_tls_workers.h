/* SPDX-License-Identifier: BSD-3-Clause */
/* How many contexts each TLS server and upstream client context is built with: one per worker
 * (docs/tls.md, "Per-worker contexts"). SSL_new takes a reference on its SSL_CTX (an atomic
 * write) and copies references to its certificates and keys: with a context of its own, and
 * certificates and keys decoded for it, a worker writes only lines no other worker touches.
 * xlbd sets it at start, before the control plane builds anything; 1 until then (tests,
 * tools). Contexts are picked by the thread's worker index (xlb_tls_worker_index). */
#ifndef XLB_TLS_WORKERS_H
#define XLB_TLS_WORKERS_H

#define XLB_TLS_WORKERS_MAX 128

/* n is clamped to 1..XLB_TLS_WORKERS_MAX. */
void xlb_tls_set_workers(unsigned n);
unsigned xlb_tls_workers(void);

#endif
