// Copyright 2026 The shoal Authors.
//
// Whether the tests run under a sanitizer (ASan or TSan), so that heavy
// tests can size their work: sanitized code runs several times slower.

#ifndef SHOAL_TESTS_TESTUTIL_SANITIZED_H_
#define SHOAL_TESTS_TESTUTIL_SANITIZED_H_

namespace shoal::test {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace shoal::test

#endif  // SHOAL_TESTS_TESTUTIL_SANITIZED_H_
