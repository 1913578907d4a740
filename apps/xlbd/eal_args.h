/* The EAL command line xlbd builds from the bootstrap's "eal" list and its own arguments. */
#ifndef XLBD_EAL_ARGS_H
#define XLBD_EAL_ARGS_H

struct xlbd_eal_args {
    int argc;
    char **argv;
};

/* argv[0], the configured args, then the extra ones; when none of them names lcores, one
 * lcore per worker plus the main lcore is added, spread over the CPUs this process may use. */
int xlbd_eal_args_build(struct xlbd_eal_args *out, char *const *configured, unsigned n_configured,
                        char *const *extra, unsigned n_extra, unsigned workers);
void xlbd_eal_args_free(struct xlbd_eal_args *args);

#endif
