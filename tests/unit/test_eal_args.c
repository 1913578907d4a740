/* xlbd's command line and the EAL argv it builds: the bootstrap's xlb.eal, then what follows
 * "--" on the command line, then --lcores unless one of them already places the lcores. */
#define _GNU_SOURCE
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "eal_args.h"
#include "options.h"
#include "xlb_const.h"

#define ARGC(argv) ((int)(sizeof(argv) / sizeof((argv)[0])) - 1)

/* What xlbd adds for `workers` workers: lcore i on the i-th CPU this process may use. */
static void expected_lcores(unsigned workers, char *out, size_t len)
{
    cpu_set_t allowed;
    int cpus[CPU_SETSIZE] = {0}, n = 0;
    assert_int_equal(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &allowed))
            cpus[n++] = cpu;
    assert_true(n > 0);
    size_t used = (size_t)snprintf(out, len, "--lcores=");
    for (unsigned lcore = 0; lcore <= workers; lcore++)
        used += (size_t)snprintf(out + used, len - used, "%s%u@%d", lcore ? "," : "", lcore,
                                 cpus[lcore % (unsigned)n]);
}

static void assert_argv(const struct xlbd_eal_args *args, const char *const *want, int n)
{
    for (int i = 0; i < args->argc && i < n; i++)
        assert_string_equal(args->argv[i], want[i]);
    assert_int_equal(args->argc, n);
}

static void arguments_after_dashdash_are_appended(void **state)
{
    char *argv[] = {XLB_STR("xlbd"),
                    XLB_STR("--config"),
                    XLB_STR("/etc/xlb/b.json"),
                    XLB_STR("--"),
                    XLB_STR("--vdev=net_null0"),
                    XLB_STR("-m"),
                    XLB_STR("256"),
                    NULL};
    struct xlbd_options opts;
    assert_int_equal(xlbd_options_parse(ARGC(argv), argv, &opts), XLBD_OPTIONS_RUN);
    assert_string_equal(opts.config, "/etc/xlb/b.json");
    assert_false(opts.check);
    assert_int_equal(opts.n_extra_eal, 3);

    char *configured[] = {XLB_STR("--no-huge"), XLB_STR("--no-pci")};
    struct xlbd_eal_args args;
    assert_int_equal(xlbd_eal_args_build(&args, configured, 2, opts.extra_eal, opts.n_extra_eal, 2),
                     0);
    char lcores[256];
    expected_lcores(2, lcores, sizeof(lcores));
    const char *want[] = {"xlbd", "--no-huge", "--no-pci", "--vdev=net_null0", "-m", "256", lcores};
    assert_argv(&args, want, 7);
    xlbd_eal_args_free(&args);
}

static void no_dashdash_means_the_configured_list_alone(void **state)
{
    char *argv[] = {XLB_STR("xlbd"), XLB_STR("--check"), XLB_STR("--config"), XLB_STR("b.json"),
                    NULL};
    struct xlbd_options opts;
    assert_int_equal(xlbd_options_parse(ARGC(argv), argv, &opts), XLBD_OPTIONS_RUN);
    assert_true(opts.check);
    assert_int_equal(opts.n_extra_eal, 0);

    char *configured[] = {XLB_STR("-a"), XLB_STR("0000:01:00.0")};
    struct xlbd_eal_args args;
    assert_int_equal(xlbd_eal_args_build(&args, configured, 2, opts.extra_eal, opts.n_extra_eal, 1),
                     0);
    char lcores[256];
    expected_lcores(1, lcores, sizeof(lcores));
    const char *want[] = {"xlbd", "-a", "0000:01:00.0", lcores};
    assert_argv(&args, want, 4);
    xlbd_eal_args_free(&args);
}

/* Each way EAL names lcores, in the bootstrap or on the command line, stops xlbd adding its own. */
static void lcores_given_anywhere_are_kept(void **state)
{
    char *const forms[][2] = {
        {XLB_STR("-l"), XLB_STR("0-2")},       {XLB_STR("-l0-2"), NULL},
        {XLB_STR("-c"), XLB_STR("0x7")},       {XLB_STR("-c0x7"), NULL},
        {XLB_STR("--lcores"), XLB_STR("0@0")}, {XLB_STR("--lcores=0@0,1@1"), NULL}};
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        unsigned n = forms[i][1] != NULL ? 2 : 1;
        struct xlbd_eal_args args;
        assert_int_equal(xlbd_eal_args_build(&args, forms[i], n, NULL, 0, 2), 0);
        assert_int_equal(args.argc, 1 + (int)n);
        xlbd_eal_args_free(&args);

        char *argv[] = {XLB_STR("xlbd"),
                        XLB_STR("--config"),
                        XLB_STR("b.json"),
                        XLB_STR("--"),
                        forms[i][0],
                        forms[i][1],
                        NULL};
        struct xlbd_options opts;
        assert_int_equal(xlbd_options_parse(4 + (int)n, argv, &opts), XLBD_OPTIONS_RUN);
        char *configured[] = {XLB_STR("--no-huge")};
        assert_int_equal(
            xlbd_eal_args_build(&args, configured, 1, opts.extra_eal, opts.n_extra_eal, 2), 0);
        assert_int_equal(args.argc, 2 + (int)n);
        assert_string_equal(args.argv[2], forms[i][0]);
        xlbd_eal_args_free(&args);
    }
}

static void bad_command_lines_are_refused(void **state)
{
    struct xlbd_options opts;
    char *no_config[] = {XLB_STR("xlbd"), XLB_STR("--"), XLB_STR("-m"), XLB_STR("256"), NULL};
    assert_int_equal(xlbd_options_parse(ARGC(no_config), no_config, &opts), XLBD_OPTIONS_USAGE);
    /* An EAL option before "--" is xlbd's to judge, and xlbd does not know it. */
    char *eal_too_early[] = {XLB_STR("xlbd"), XLB_STR("--config"), XLB_STR("b.json"),
                             XLB_STR("--no-huge"), NULL};
    assert_int_equal(xlbd_options_parse(ARGC(eal_too_early), eal_too_early, &opts),
                     XLBD_OPTIONS_USAGE);
    char *help[] = {XLB_STR("xlbd"), XLB_STR("--help"), NULL};
    assert_int_equal(xlbd_options_parse(ARGC(help), help, &opts), XLBD_OPTIONS_DONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(arguments_after_dashdash_are_appended),
        cmocka_unit_test(no_dashdash_means_the_configured_list_alone),
        cmocka_unit_test(lcores_given_anywhere_are_kept),
        cmocka_unit_test(bad_command_lines_are_refused),
    };
    return cmocka_run_group_tests_name("eal_args", tests, NULL, NULL);
}
