#include "options.h"

#include <getopt.h>
#include <string.h>

void xlbd_usage(FILE *out)
{
    fprintf(out,
            "usage: xlbd --config FILE [--check [--json]] [-- EAL-ARGS...]\n"
            "  --config FILE  the bootstrap file (gRPC xDS bootstrap with an \"xlb\" section)\n"
            "  --check        validate the file, print one line per problem, and exit\n"
            "  --json         with --check: print the result as one JSON object\n"
            "  --version      print the version\n"
            "Arguments after -- are appended to the bootstrap's xlb.eal list.\n");
}

enum xlbd_options_result xlbd_options_parse(int argc, char **argv, struct xlbd_options *opts)
{
    static const struct option long_options[] = {
        {"config", required_argument, NULL, 'c'}, {"check", no_argument, NULL, 'k'},
        {"json", no_argument, NULL, 'j'},         {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'v'},      {NULL, 0, NULL, 0},
    };
    memset(opts, 0, sizeof(*opts));
    optind = 0; /* glibc: a full restart, so a second call parses from argv[1] again */
    int opt;
    while ((opt = getopt_long(argc, argv, "c:h", long_options, NULL)) != -1) {
        switch (opt) {
        case 'c':
            opts->config = optarg;
            break;
        case 'k':
            opts->check = true;
            break;
        case 'j':
            opts->json = true;
            break;
        case 'h':
            xlbd_usage(stdout);
            return XLBD_OPTIONS_DONE;
        case 'v':
            printf("xlbd %s\n", XLB_VERSION);
            return XLBD_OPTIONS_DONE;
        default:
            xlbd_usage(stderr);
            return XLBD_OPTIONS_USAGE;
        }
    }
    if (opts->config == NULL || (opts->json && !opts->check)) {
        xlbd_usage(stderr);
        return XLBD_OPTIONS_USAGE;
    }
    /* getopt stops at "--" and steps over it: the rest belongs to EAL. */
    opts->extra_eal = argv + optind;
    opts->n_extra_eal = (unsigned)(argc - optind);
    return XLBD_OPTIONS_RUN;
}
