// Copyright 2026 The shoal Authors.
//
// Test helpers shared by every shoal test binary:
//   - TempDir: a fresh, uniquely named directory, removed with its contents by
//     the destructor;
//   - status macros (ASSERT_OK, ASSERT_OK_AND_ASSIGN, ASSERT_STATUS_CODE, ...)
//     that evaluate their argument exactly once;
//   - seeded random vectors;
//   - a brute-force oracle: the exact top-k under a metric, ties broken by id,
//     and a comparison of a search result against it.
//
// Only the public API (include/shoal/) is used, so these helpers pin down
// behaviour, not implementation.

#ifndef SHOAL_TESTS_TESTUTIL_TEMP_DIR_H_
#define SHOAL_TESTS_TESTUTIL_TEMP_DIR_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "shoal/db.h"
#include "shoal/options.h"

namespace shoal::test {

// A unique, empty directory, removed recursively by the destructor. Not
// copyable: one owner deletes it.
class TempDir {
 public:
  enum class Storage {
    kMemory,  // under /dev/shm (when present) or /tmp
    kDisk,    // under /var/tmp (when writable and not tmpfs) or the working directory
  };
  explicit TempDir(Storage storage = Storage::kMemory);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // `path()/name`, not created.
  std::string Sub(const std::string& name) const;

 private:
  std::string path_;
};

// ---- Status helpers (used by the macros below) ----
inline const absl::Status& AsStatus(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& AsStatus(const absl::StatusOr<T>& s) {
  return s.status();
}

// Predicate-formatters for the macros: success when the status is OK /
// has `want`; the failure message names the expression and its status.
template <typename T>
::testing::AssertionResult IsOkFormat(const char* expr_text, const T& value) {
  const absl::Status& s = AsStatus(value);
  if (s.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << expr_text << " -> " << s;
}
template <typename T>
::testing::AssertionResult HasCodeFormat(const char* expr_text,
                                         const char* want_text, const T& value,
                                         absl::StatusCode want) {
  const absl::Status& s = AsStatus(value);
  if (s.code() == want) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << expr_text << " -> " << s << "\n  want " << want_text << " ("
         << absl::StatusCodeToString(want) << ")";
}

// ---- Vectors ----

// id -> vector as written (not normalized). The model the oracle reads.
using VectorMap = std::map<uint64_t, std::vector<float>>;

// `dim` floats uniform in [-1, 1), a pure function of (dim, seed).
std::vector<float> RandomVector(size_t dim, uint64_t seed);
// `n * dim` floats (row-major), a pure function of (n, dim, seed).
std::vector<float> RandomVectors(size_t n, size_t dim, uint64_t seed);
// The unit vector in the direction of `v` (computed in double, then rounded).
std::vector<float> Normalized(std::span<const float> v);
// Row `i` of a row-major matrix with `dim` columns.
inline std::span<const float> Row(const std::vector<float>& m, size_t i,
                                  size_t dim) {
  return std::span<const float>(m).subspan(i * dim, dim);
}

// ---- Oracle ----

// Distance in double precision, by the public conventions:
// kL2 = squared L2, kInnerProduct = -dot, kCosine = 1 - cos (both normalized).
double OracleDistance(Metric metric, std::span<const float> a,
                      std::span<const float> b);

// The exact top-k of `data` for `query`: sorted by ascending distance, ties
// broken by ascending id. Returns min(k, data.size()) neighbours.
std::vector<Neighbor> BruteForceTopK(const VectorMap& data,
                                     std::span<const float> query,
                                     Metric metric, size_t k);

// Success when `actual` equals BruteForceTopK(data, query, metric, k):
// same length; the same id at every position; each distance within 1e-4
// relative (plus 1e-5 absolute, for distances near zero) of the oracle's.
// `actual` must also pass IsSortedTopK (the engine orders its own equal
// distances by id). One allowance for floating point: where the oracle's
// distances of two ids are equal up to float rounding (1e-5 relative + 1e-6),
// those ids may come in either order (the engine computes in float, the
// oracle in double, so their tie-breaks may legitimately differ).
::testing::AssertionResult MatchesOracle(const std::vector<Neighbor>& actual,
                                         const VectorMap& data,
                                         std::span<const float> query,
                                         Metric metric, size_t k);

// Success when `result` has at most `k` entries sorted by ascending distance,
// ties by ascending id, with no id repeated.
::testing::AssertionResult IsSortedTopK(const std::vector<Neighbor>& result,
                                        size_t k);

// Success when `actual` equals `expected` component-wise within `tolerance`.
::testing::AssertionResult VectorsNear(std::span<const float> actual,
                                       std::span<const float> expected,
                                       float tolerance = 1e-6f);

// Checks that `db` holds exactly `model` in `collection` as seen by Get:
// every id in the model Gets its vector (normalized under kCosine), every id
// in `absent` is NotFound.
::testing::AssertionResult HoldsExactly(DB& db, std::string_view collection,
                                        Metric metric, const VectorMap& model,
                                        std::span<const uint64_t> absent = {});

// Options for a DB whose default collection has the given shape.
Options DefaultOptions(uint32_t dim, Metric metric = Metric::kL2,
                       uint32_t shard_count = 2);

std::string MetricName(Metric metric);

// The segment files (*.vamana) anywhere under `dir`, sorted.
std::vector<std::string> SegmentFiles(const std::string& dir);

}  // namespace shoal::test

// ---- Status macros. Each evaluates its expression exactly once, and each
// but ASSERT_OK_AND_ASSIGN takes `<< message` like any gtest assertion. ----

#define SHOAL_TEST_CONCAT_INNER_(a, b) a##b
#define SHOAL_TEST_CONCAT_(a, b) SHOAL_TEST_CONCAT_INNER_(a, b)

// `expr` (an absl::Status or absl::StatusOr) is OK.
#define ASSERT_OK(expr) ASSERT_PRED_FORMAT1(::shoal::test::IsOkFormat, expr)
#define EXPECT_OK(expr) EXPECT_PRED_FORMAT1(::shoal::test::IsOkFormat, expr)
// The status of `expr` has exactly `want_code` (an absl::StatusCode).
#define ASSERT_STATUS_CODE(expr, want_code) \
  ASSERT_PRED_FORMAT2(::shoal::test::HasCodeFormat, expr, want_code)
#define EXPECT_STATUS_CODE(expr, want_code) \
  EXPECT_PRED_FORMAT2(::shoal::test::HasCodeFormat, expr, want_code)

// `lhs = std::move(value of expr)`, failing the test when `expr` is not OK.
// `lhs` may be a declaration: ASSERT_OK_AND_ASSIGN(auto db, DB::Open(...)).
#define ASSERT_OK_AND_ASSIGN(lhs, expr)                                    \
  SHOAL_TEST_ASSIGN_IMPL_(SHOAL_TEST_CONCAT_(shoal_test_statusor_, __LINE__), \
                          lhs, expr)
#define SHOAL_TEST_ASSIGN_IMPL_(tmp, lhs, expr)                 \
  auto tmp = (expr);                                            \
  ASSERT_TRUE(tmp.ok()) << #expr << " -> " << tmp.status();     \
  lhs = std::move(tmp).value()

#endif  // SHOAL_TESTS_TESTUTIL_TEMP_DIR_H_
