#define _GNU_SOURCE
#include "eal_args.h"

#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool names_lcores(const char *arg)
{
    return strcmp(arg, "-l") == 0 || strcmp(arg, "-c") == 0 || strncmp(arg, "--lcores", 8) == 0 ||
           (strncmp(arg, "-l", 2) == 0 && arg[2] != '\0') ||
           (strncmp(arg, "-c", 2) == 0 && arg[2] != '\0');
}

/* "--lcores=0@2,1@3,...": lcore i on the i-th allowed CPU, wrapping when there are fewer. */
static char *lcores_argument(unsigned workers)
{
    cpu_set_t allowed;
    int cpus[CPU_SETSIZE], n_cpus = 0;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0)
        for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
            if (CPU_ISSET(cpu, &allowed))
                cpus[n_cpus++] = cpu;
    if (n_cpus == 0)
        cpus[n_cpus++] = 0;
    if (workers + 1 > (unsigned)n_cpus)
        fprintf(stderr,
                "xlbd: %u lcores (main + %u workers) on %d CPUs: lcores share CPUs; give -l or "
                "--lcores in xlb.eal to place them yourself\n",
                workers + 1, workers, n_cpus);

    size_t cap = 16 + (size_t)(workers + 1) * 16;
    char *arg = malloc(cap);
    if (arg == NULL)
        return NULL;
    size_t len = (size_t)snprintf(arg, cap, "--lcores=");
    for (unsigned lcore = 0; lcore <= workers; lcore++)
        len += (size_t)snprintf(arg + len, cap - len, "%s%u@%d", lcore ? "," : "", lcore,
                                cpus[lcore % (unsigned)n_cpus]);
    return arg;
}

int xlbd_eal_args_build(struct xlbd_eal_args *out, char *const *configured, unsigned n_configured,
                        char *const *extra, unsigned n_extra, unsigned workers)
{
    out->argc = 0;
    out->argv = calloc(n_configured + n_extra + 3, sizeof(char *));
    if (out->argv == NULL)
        return -1;
    out->argv[out->argc++] = strdup("xlbd");
    bool has_lcores = false;
    for (unsigned i = 0; i < n_configured; i++) {
        has_lcores |= names_lcores(configured[i]);
        out->argv[out->argc++] = strdup(configured[i]);
    }
    for (unsigned i = 0; i < n_extra; i++) {
        has_lcores |= names_lcores(extra[i]);
        out->argv[out->argc++] = strdup(extra[i]);
    }
    if (!has_lcores)
        out->argv[out->argc++] = lcores_argument(workers);
    for (int i = 0; i < out->argc; i++)
        if (out->argv[i] == NULL)
            return -1;
    return 0;
}

void xlbd_eal_args_free(struct xlbd_eal_args *args)
{
    /* rte_eal_init may reorder argv, but keeps the same pointers. */
    for (int i = 0; args->argv != NULL && i < args->argc; i++)
        free(args->argv[i]);
    free(args->argv);
    args->argv = NULL;
    args->argc = 0;
}
