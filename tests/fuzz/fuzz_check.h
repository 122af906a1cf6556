// Copyright 2026 The shoal Authors.
//
// FUZZ_CHECK(cond): aborts with the file, line and condition when `cond` is
// false. A fuzz target's way to report a broken promise: libFuzzer saves the
// input as a crash, fuzz_corpus_test dies on it. Active in every build type.

#ifndef SHOAL_TESTS_FUZZ_FUZZ_CHECK_H_
#define SHOAL_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond)                                                          \
  do {                                                                            \
    if (!(cond)) {                                                                \
      std::fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__, \
                   #cond);                                                        \
      std::abort();                                                               \
    }                                                                             \
  } while (0)

#endif  // SHOAL_TESTS_FUZZ_FUZZ_CHECK_H_
