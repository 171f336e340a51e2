/* The checks of the C test programs (C99): EXPECT counts a passed or failed condition, printing
 * the failed ones. Each program prints "N passed, N failed" from the two counters at its end. */
#ifndef FERRY_TESTS_C_CHECK_H_
#define FERRY_TESTS_C_CHECK_H_

#include <stdio.h>

static int passed = 0;
static int failed = 0;

#define EXPECT(cond)                                                      \
  do {                                                                    \
    if (cond) {                                                           \
      ++passed;                                                           \
    } else {                                                              \
      ++failed;                                                           \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
    }                                                                     \
  } while (0)

#endif /* FERRY_TESTS_C_CHECK_H_ */
