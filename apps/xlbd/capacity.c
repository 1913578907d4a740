/* See capacity.h. */
#include "capacity.h"

#include <inttypes.h>
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
    if (c->memory_bytes != 0)
        fprintf(out, "capacity: eal memory %.1f MiB\n", mib(c->memory_bytes));
    else
        fprintf(out, "capacity: eal memory not given (-m or --socket-mem)\n");
}
