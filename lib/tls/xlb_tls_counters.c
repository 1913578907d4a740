/* SPDX-License-Identifier: BSD-3-Clause */
#include "xlb_tls_counters.h"

const char *xlb_tls_failure_name(enum xlb_tls_failure f)
{
    switch (f) {
    case XLB_TLS_FAIL_NONE:
        return "none";
    case XLB_TLS_FAIL_NO_ALPN:
        return "no_alpn";
    case XLB_TLS_FAIL_NO_CLIENT_CERT:
        return "no_client_certificate";
    case XLB_TLS_FAIL_BAD_CLIENT_CERT:
        return "bad_client_certificate";
    case XLB_TLS_FAIL_PROTOCOL_VERSION:
        return "protocol_version";
    case XLB_TLS_FAIL_HANDSHAKE:
        return "handshake";
    case XLB_TLS_FAIL_RECORD:
        return "record";
    case XLB_TLS_FAIL_BAD_SERVER_CERT:
        return "bad_server_certificate";
    case XLB_TLS_FAIL_COUNT:
        break;
    }
    return "unknown";
}

void xlb_tls_counters_add(struct xlb_tls_counters *sum, const struct xlb_tls_counters *c)
{
    sum->handshakes += c->handshakes;
    sum->resumptions += c->resumptions;
    for (int f = 0; f < XLB_TLS_FAIL_COUNT; f++)
        sum->failures[f] += c->failures[f];
}
