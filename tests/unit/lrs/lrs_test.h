/* The LRS unit tests: one binary, two files. */
#ifndef XLB_LRS_TEST_H
#define XLB_LRS_TEST_H

/* test_lrs_messages.c's group; returns how many tests failed. */
int lrs_message_tests(void);

#endif
