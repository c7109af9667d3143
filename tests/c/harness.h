/* A tiny test harness in the style of cmark's api_test: checks count and
 * report, a test executable prints "N passed, N failed" and exits non-zero
 * when anything failed. One executable per engine area, registered with
 * ctest in tests/CMakeLists.txt. */
#ifndef KL_TEST_HARNESS_H
#define KL_TEST_HARNESS_H

#include <stdio.h>
#include <string.h>

typedef struct {
  int passed;
  int failed;
} test_batch;

static inline void kl_test_result(test_batch *t, int ok, const char *file, int line,
                                  const char *what) {
  if (ok) {
    t->passed++;
  } else {
    t->failed++;
    fprintf(stderr, "FAILED %s:%d: %s\n", file, line, what);
  }
}

#define OK(t, cond, msg) kl_test_result((t), (cond) ? 1 : 0, __FILE__, __LINE__, (msg))

#define INT_EQ(t, got, want, msg)                                                       \
  do {                                                                                  \
    long long got_ = (long long)(got), want_ = (long long)(want);                       \
    kl_test_result((t), got_ == want_, __FILE__, __LINE__, (msg));                      \
    if (got_ != want_) fprintf(stderr, "  got %lld, want %lld\n", got_, want_);         \
  } while (0)

#define STR_EQ(t, got, want, msg)                                                       \
  do {                                                                                  \
    const char *got_ = (got), *want_ = (want);                                          \
    int same_ = got_ && want_ ? strcmp(got_, want_) == 0 : got_ == want_;               \
    kl_test_result((t), same_, __FILE__, __LINE__, (msg));                              \
    if (!same_)                                                                         \
      fprintf(stderr, "  got  \"%s\"\n  want \"%s\"\n", got_ ? got_ : "(null)",         \
              want_ ? want_ : "(null)");                                                \
  } while (0)

static inline int kl_test_finish(const test_batch *t) {
  printf("%d passed, %d failed\n", t->passed, t->failed);
  return t->failed ? 1 : 0;
}

#endif
