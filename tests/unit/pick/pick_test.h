/* Helpers shared by the pick tests: cmocka includes and distribution bounds. */
#ifndef PICK_TEST_H
#define PICK_TEST_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/*
 * A count drawn from Binomial(draws, p) lies within 5 standard deviations of its mean except
 * with probability below one in a million; with fixed seeds the tests never flake, and with
 * enough draws a wrong distribution lands far outside. One extra count absorbs discreteness.
 */
static inline void assert_binomial(uint64_t count, uint64_t draws, double p)
{
    double mean = (double)draws * p;
    double bound = 5.0 * sqrt((double)draws * p * (1.0 - p)) + 1.0;
    if (fabs((double)count - mean) > bound)
        fail_msg("count %llu outside %.1f +- %.1f (draws %llu, p %.6g)", (unsigned long long)count,
                 mean, bound, (unsigned long long)draws, p);
}

#endif
