/* See capacity.h. */
#include "capacity.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* "256" or "256,256": megabytes, summed; 0 if anything does not parse. */
static uint64_t megabytes(const char *text)
{
    uint64_t total = 0;
    while (*text != '\0') {
        char *end;
        unsigned long long mb = strtoull(text, &end, 10);
        if (end == text || (*end != ',' && *end != '\0'))
            return 0;
        total += mb;
        text = *end == ',' ? end + 1 : end;
    }
    return total << 20;
}

uint64_t xlbd_eal_memory_bytes(char *const *args, unsigned n_args)
{
    uint64_t bytes = 0;
    for (unsigned i = 0; i < n_args; i++) {
        const char *a = args[i], *value = NULL;
        if (strcmp(a, "-m") == 0 || strcmp(a, "--socket-mem") == 0)
            value = i + 1 < n_args ? args[++i] : NULL;
        else if (strncmp(a, "-m", 2) == 0)
            value = a + 2;
        else if (strncmp(a, "--socket-mem=", 13) == 0)
            value = a + 13;
        if (value != NULL)
            bytes = megabytes(value);
    }
    return bytes;
}

uint32_t xlbd_l7_pool_default(uint64_t memory_bytes, unsigned workers, size_t conn_bytes)
{
    if (workers == 0 || conn_bytes == 0)
        return XLBD_L7_POOL_FLOOR;
    uint64_t n = memory_bytes / XLBD_L7_POOL_SHARE_DIV / workers / conn_bytes;
    if (n < XLBD_L7_POOL_FLOOR)
        return XLBD_L7_POOL_FLOOR;
    return n > XLBD_L7_POOL_CEILING ? XLBD_L7_POOL_CEILING : (uint32_t)n;
}

uint32_t xlbd_stream_heap_default(uint64_t memory_bytes, unsigned workers, uint32_t connections,
                                  uint32_t per_conn, uint32_t min_bytes)
{
    if (memory_bytes == 0 || workers == 0)
        return min_bytes;
    uint64_t heap = (uint64_t)connections * per_conn;
    uint64_t share = memory_bytes / XLBD_STREAM_HEAP_SHARE_DIV / workers;
    if (heap > share)
        heap = share;
    if (heap < min_bytes)
        heap = min_bytes;
    return heap > (1u << 30) ? (1u << 30) : (uint32_t)heap;
}

/* Bytes in MiB, one decimal. */
static double mib(uint64_t bytes)
{
    return (double)bytes / (1024.0 * 1024.0);
}

void xlbd_capacity_print(FILE *out, const struct xlbd_capacity *c)
{
    uint64_t flows = (uint64_t)c->flows_per_worker * c->workers;
    uint64_t l7 = (uint64_t)c->l7_per_worker * c->workers;
    fprintf(out,
            "capacity: flows %" PRIu32 " per worker x %u workers = %" PRIu64
            " (%zu bytes each, %.1f MiB)\n",
            c->flows_per_worker, c->workers, flows, c->flow_bytes, mib(flows * c->flow_bytes));
    fprintf(out,
            "capacity: l7 connections %" PRIu32 " per worker x %u workers = %" PRIu64
            " (%zu bytes each, %.1f MiB)\n",
            c->l7_per_worker, c->workers, l7, c->l7_conn_bytes, mib(l7 * c->l7_conn_bytes));
    uint64_t stream = c->stream_worker_bytes * c->workers;
    if (c->stream_per_worker != 0)
        fprintf(out,
                "capacity: stream engine %" PRIu32 " connections per worker x %u workers"
                " (%.1f MiB each, %.1f MiB); its HTTP/2 heap of %.1f MiB holds %" PRIu32
                " sessions at once per worker\n",
                c->stream_per_worker, c->workers, mib(c->stream_worker_bytes), mib(stream),
                mib(c->stream_heap_bytes), c->stream_sessions);
    if (c->stream_per_worker != 0 && c->stream_tls_heap_bytes != 0)
        fprintf(out, "capacity: stream engine TLS heap of %.1f MiB per worker (OpenSSL's memory)\n",
                mib(c->stream_tls_heap_bytes));
    uint64_t tables = flows * c->flow_bytes + l7 * c->l7_conn_bytes + stream;
    if (c->memory_bytes != 0 && tables > c->memory_bytes)
        fprintf(out,
                "capacity: warning: these take %.1f MiB, more than the eal memory %.1f MiB:"
                " xlbd will not start (raise -m, or lower the counts)\n",
                mib(tables), mib(c->memory_bytes));
    if (c->memory_bytes != 0)
        fprintf(out, "capacity: eal memory %.1f MiB\n", mib(c->memory_bytes));
    else
        fprintf(out, "capacity: eal memory not given (-m or --socket-mem)\n");
}

void xlbd_mbufs_needed(struct xlbd_mbuf_need *n)
{
    uint64_t queues = (uint64_t)n->workers * n->ports;
    n->rx = queues * n->rx_desc;
    n->tx = queues * n->tx_desc;
    /* A ring of 2^k slots holds 2^k - 1; a lone worker redirects to no one. */
    n->redirect = n->workers > 1 ? (uint64_t)n->workers * (n->redirect_ring - 1) : 0;
    n->caches = (uint64_t)(n->workers + 1) * (n->cache + n->cache / 2); /* and the main lcore */
    n->total = n->rx + n->tx + n->redirect + n->caches;
}

uint32_t xlbd_mbuf_pool_default(const struct xlbd_mbuf_need *n)
{
    return n->total > XLBD_MBUF_POOL_FLOOR ? (uint32_t)n->total : XLBD_MBUF_POOL_FLOOR;
}

int xlbd_mbufs_explain(char *buf, size_t len, uint32_t pool, const struct xlbd_mbuf_need *n)
{
    bool short_of = pool < n->total;
    snprintf(buf, len,
             "mbuf pool %" PRIu32 " %s %" PRIu64 " needed: rx %ux%" PRIu32 " + tx %ux%" PRIu32
             " + redirect rings %" PRIu64 " + lcore caches %ux%" PRIu32,
             pool, short_of ? "<" : ">=", n->total, n->workers * n->ports, n->rx_desc,
             n->workers * n->ports, n->tx_desc, n->redirect, n->workers + 1,
             n->cache + n->cache / 2);
    return short_of ? -1 : 0;
}
