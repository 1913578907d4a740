/* The dependency-manager test executable: the L7 and the aggregate/L4 groups. */
#include "dm_test.h"

int main(void)
{
    int failed = dm_l7_tests();
    failed += dm_aggregate_tests();
    return failed;
}
