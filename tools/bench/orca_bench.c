/*
 * What an RPC of a client-side weighted round robin cluster adds in stream mode: reading the
 * ORCA report of its trailer (base64, then protobuf-c on the stack arena) and the weight
 * update. Baseline: a pass over the same trailer bytes (a byte sum), in the same run. Never
 * asserts; prints TSC cycles per report, median of 7 runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "bench_clock.h"
#include "xds/data/orca/v3/orca_load_report.pb-c.h"
#include "xlb_orca.h"

#define RUNS       7
#define ITERATIONS 200000u

static volatile uint64_t sink;

/* A report as a backend sends it: utilizations, qps, eps and `named` named metrics. */
static size_t trailer(unsigned named, char *out, size_t cap)
{
    Xds__Data__Orca__V3__OrcaLoadReport m;
    xds__data__orca__v3__orca_load_report__init(&m);
    m.cpu_utilization = 0.42;
    m.application_utilization = 0.37;
    m.rps_fractional = 812.5;
    m.eps = 3.25;
    static char key[] = "queue_depth";
    Xds__Data__Orca__V3__OrcaLoadReport__NamedMetricsEntry e[8], *p[8];
    for (unsigned i = 0; i < named && i < 8; i++) {
        xds__data__orca__v3__orca_load_report__named_metrics_entry__init(&e[i]);
        e[i].key = key;
        e[i].value = i;
        p[i] = &e[i];
    }
    m.n_named_metrics = named;
    m.named_metrics = p;
    uint8_t bytes[1024];
    size_t n = xds__data__orca__v3__orca_load_report__pack(&m, bytes);
    if ((n + 2) / 3 * 4 + 1 > cap)
        abort();
    size_t len = (size_t)EVP_EncodeBlock((unsigned char *)out, bytes, (int)n);
    while (len > 0 && out[len - 1] == '=')
        len--; /* gRPC sends binary metadata unpadded */
    return len;
}

static double median(double *runs)
{
    qsort(runs, RUNS, sizeof(runs[0]), compare_doubles);
    return runs[RUNS / 2];
}

static void run(unsigned named)
{
    char value[1100];
    size_t len = trailer(named, value, sizeof(value));
    double base[RUNS], read[RUNS];
    struct xlb_endpoint_weight weight = {0};
    for (int r = 0; r < RUNS; r++) {
        uint64_t start = ticks(), acc = 0;
        for (uint32_t i = 0; i < ITERATIONS; i++)
            for (size_t k = 0; k < len; k++)
                acc += (uint8_t)value[k];
        base[r] = (double)(ticks() - start) / ITERATIONS;
        sink += acc;
        start = ticks();
        for (uint32_t i = 0; i < ITERATIONS; i++) {
            struct xlb_wrr_report report;
            if (xlb_orca_read(value, len, &report) == 0)
                sink += xlb_wrr_weight_update(&weight, 1.0f, &report, 1000 + i);
        }
        read[r] = (double)(ticks() - start) / ITERATIONS;
    }
    double b = median(base), c = median(read);
    printf("%-7u %-7zu %10.1f %10.1f %7.1f x\n", named, len, c, b, c / b);
}

int main(void)
{
    printf("orca_bench: TSC cycles per ORCA trailer read and weight update, median of %d runs "
           "of %u\n",
           RUNS, ITERATIONS);
    printf("%-7s %-7s %10s %10s %9s\n", "named", "chars", "cycles", "byte pass", "ratio");
    const unsigned named[] = {0, 2, 8};
    for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
        run(named[i]);
    return 0;
}
