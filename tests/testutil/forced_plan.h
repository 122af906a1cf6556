// Copyright 2026 The shoal Authors.
//
// Forces the filtered-search planner's path for a scope (shard/filter_plan.h):
// ForcedPlan(0) walks every segment with matches, a huge cost scans them.
// FilterScanCost() is process-wide: tests that use this run one at a time
// in their process (ctest runs each test on its own).

#ifndef SHOAL_TESTS_TESTUTIL_FORCED_PLAN_H_
#define SHOAL_TESTS_TESTUTIL_FORCED_PLAN_H_

#include <cstdint>

#include "shard/filter_plan.h"

namespace shoal::test {

class ForcedPlan {
 public:
  explicit ForcedPlan(uint64_t cost) { FilterScanCost() = cost; }
  ~ForcedPlan() { FilterScanCost() = kDefaultFilterScanCost; }
  ForcedPlan(const ForcedPlan&) = delete;
  ForcedPlan& operator=(const ForcedPlan&) = delete;
};

}  // namespace shoal::test

#endif  // SHOAL_TESTS_TESTUTIL_FORCED_PLAN_H_
