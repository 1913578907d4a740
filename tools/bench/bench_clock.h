/* What the benchmarks share: a cycle counter, a millisecond clock, and sorting for medians. */
#ifndef XLB_BENCH_CLOCK_H
#define XLB_BENCH_CLOCK_H

#include <stdint.h>
#include <time.h>

/* TSC cycles on x86; elsewhere nanoseconds, and the figures read as such. */
static inline uint64_t ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

static inline double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* qsort comparator for doubles (medians of runs). */
static inline int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
