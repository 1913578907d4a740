/* xlbd's command line: the bootstrap path, --check [--json], and the EAL arguments after "--". Pure
 * libc, so the unit tests can run it on made-up command lines. */
#ifndef XLBD_OPTIONS_H
#define XLBD_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

struct xlbd_options {
    const char *config;
    bool check;
    bool json;        /* --check prints its result as JSON */
    char **extra_eal; /* points into argv: what follows "--" */
    unsigned n_extra_eal;
};

enum xlbd_options_result {
    XLBD_OPTIONS_RUN,   /* opts is filled */
    XLBD_OPTIONS_DONE,  /* --help or --version was printed: exit 0 */
    XLBD_OPTIONS_USAGE, /* a bad command line: the usage went to stderr, exit 2 */
};

void xlbd_usage(FILE *out);
/* May be called more than once (tests): getopt is restarted on each call. */
enum xlbd_options_result xlbd_options_parse(int argc, char **argv, struct xlbd_options *opts);

#endif
