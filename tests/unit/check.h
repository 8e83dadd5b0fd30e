/* CHECK for the unit tests: counts passes and failures, prints the line of each failure.
 * Each test ends with printf("%d passed, %d failed\n", passes, failures). */
#ifndef VKI_TEST_CHECK_H
#define VKI_TEST_CHECK_H

#include <stdio.h>

static int failures, passes;
#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (cond) passes++;                                                                \
        else {                                                                             \
            failures++;                                                                    \
            printf("FAIL line %d: ", __LINE__);                                            \
            printf(__VA_ARGS__);                                                           \
            printf("\n");                                                                  \
        }                                                                                  \
    } while (0)

#endif
