/* The LB state tests' shared fixture (lb_state_fixture.h). */
#include "lb_state_fixture.h"

#include <stdlib.h>

static uint64_t grace_start(void *arg)
{
    struct lbs_fixture *f = arg;
    f->grace_over = false;
    return 1;
}

static bool grace_over(void *arg, uint64_t token)
{
    struct lbs_fixture *f = arg;
    (void)token;
    return f->grace_over;
}

int lbs_setup(void **state, unsigned n_workers)
{
    struct lbs_fixture *f = calloc(1, sizeof(*f));
    void *dm_state;
    if (f == NULL || dm_setup(&dm_state) != 0)
        return -1;
    f->dm = dm_state;
    xlb_load_slots_init(&f->load_slots);
    struct xlb_lb_grace grace = {grace_start, grace_over, f};
    f->load = calloc(n_workers, sizeof(*f->load));
    f->lb = xlb_lb_trees_create(&f->load_slots, &grace, f->load, n_workers, 42);
    f->now = 1000;
    if (f->lb == NULL || f->load == NULL ||
        xlb_lb_worker_init(&f->w, 7, NULL, f->load, n_workers) != 0)
        return -1;
    *state = f;
    return 0;
}

int lbs_teardown(void **state)
{
    struct lbs_fixture *f = *state;
    xlb_lb_worker_fini(&f->w);
    xlb_lb_trees_free(f->lb);
    xlb_load_slots_free(&f->load_slots);
    void *dm_state = f->dm;
    dm_teardown(&dm_state);
    free(f->load);
    free(f);
    return 0;
}

bool lbs_update(struct lbs_fixture *f)
{
    dm_step(f->dm);
    size_t index = 0;
    return xlb_lb_trees_update(f->lb, &f->dm->dm, &index, 1, f->now);
}
