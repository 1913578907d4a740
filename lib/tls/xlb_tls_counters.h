/* SPDX-License-Identifier: BSD-3-Clause */
/* What a TLS VIP counts (docs/tls.md): handshakes, resumptions and failures by reason. The
 * workers write them per connection outcome; the control plane sums them per VIP. */
#ifndef XLB_TLS_COUNTERS_H
#define XLB_TLS_COUNTERS_H

#include <stdint.h>

/* Why a TLS connection ended before or instead of carrying data. */
enum xlb_tls_failure {
    XLB_TLS_FAIL_NONE = 0,
    XLB_TLS_FAIL_NO_ALPN,          /* the VIP requires h2 and the client did not offer it */
    XLB_TLS_FAIL_NO_CLIENT_CERT,   /* mTLS required, no certificate sent */
    XLB_TLS_FAIL_BAD_CLIENT_CERT,  /* a client certificate the CA does not verify */
    XLB_TLS_FAIL_PROTOCOL_VERSION, /* below TLS 1.2, or no version in common */
    XLB_TLS_FAIL_HANDSHAKE,        /* any other handshake error (bad record, cipher, ...) */
    XLB_TLS_FAIL_RECORD,           /* a bad record after the handshake */
    XLB_TLS_FAIL_BAD_SERVER_CERT,  /* upstream: the CA or the SAN matchers refuse the server */
    XLB_TLS_FAIL_COUNT,
};

const char *xlb_tls_failure_name(enum xlb_tls_failure f);

struct xlb_tls_counters {
    uint64_t handshakes;  /* completed, full or resumed */
    uint64_t resumptions; /* completed with a session ticket */
    uint64_t failures[XLB_TLS_FAIL_COUNT];
};

/* sum += c (the control plane sums the workers'). */
void xlb_tls_counters_add(struct xlb_tls_counters *sum, const struct xlb_tls_counters *c);

#endif
