/* Helpers shared by the tcpwire tests: cmocka includes and a seeded random source. */
#ifndef TCPWIRE_TEST_H
#define TCPWIRE_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* splitmix64: a fixed seed gives the same draws on every run, so no test can flake. */
static inline uint64_t test_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#endif
