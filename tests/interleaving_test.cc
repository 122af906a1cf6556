// Copyright 2026 The shoal Authors.
//
// A seeded random mix of every call that writes or moves data (Put,
// PutBatch, Delete, BulkLoad, Flush, Compact, WaitForCompact), with
// background flushes and merges running, checked against a brute-force
// model of what is stored: an exhaustive search (k and list_size past the
// collection) must return exactly the model's nearest neighbours, and Get
// must find exactly the live ids. Issue 41 found such a mix skipping nearer
// live vectors (graphs that left nodes unreachable).
//
// Each run is one seed. The default suite runs two short ones;
// SHOAL_INTERLEAVING_RUNS and SHOAL_INTERLEAVING_OPS make it longer
// (ctest -L long runs 20 full-size runs, when configured with
// -DSHOAL_LONG_TESTS=ON).

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "shoal/db.h"
#include "testutil/sanitized.h"
#include "testutil/temp_dir.h"

namespace shoal {
namespace {

using test::kSanitized;
using test::VectorMap;

constexpr uint32_t kDim = 32;

size_t FromEnv(const char* name, size_t otherwise) {
  const char* value = std::getenv(name);
  return value == nullptr ? otherwise : std::strtoull(value, nullptr, 10);
}

class Interleaving {
 public:
  explicit Interleaving(uint64_t seed) : rng_(seed) {}

  // Runs `ops` random calls on `db`, checking it against the model every
  // `check_every` calls and at the end.
  void Run(DB& db, size_t ops, size_t check_every) {
    for (size_t op = 1; op <= ops; ++op) {
      Step(db);
      if (::testing::Test::HasFatalFailure()) return;
      if (op % check_every == 0 || op == ops) {
        Check(db, op);
        if (::testing::Test::HasFailure()) return;
      }
    }
  }

 private:
  // An id: mostly new ones, sometimes one stored (an overwrite) or one
  // deleted before (a resurrection).
  uint64_t PickId() {
    const uint64_t roll = rng_() % 10;
    if (roll < 2 && !model_.empty()) {
      auto it = model_.lower_bound(rng_() % next_id_);
      if (it == model_.end()) it = model_.begin();
      return it->first;
    }
    if (roll < 3 && next_id_ > 0) return rng_() % next_id_;
    return next_id_++;
  }

  std::vector<float> Vector() {
    std::normal_distribution<float> gauss(0.0f, 1.0f);
    std::vector<float> v(kDim);
    for (float& x : v) x = gauss(rng_);
    return v;
  }

  // Ids and rows for a batch of `n` (an id may repeat: the later row wins).
  void Batch(size_t n, std::vector<uint64_t>* ids, std::vector<float>* rows) {
    for (size_t i = 0; i < n; ++i) {
      ids->push_back(PickId());
      const std::vector<float> v = Vector();
      rows->insert(rows->end(), v.begin(), v.end());
    }
  }

  void Apply(const std::vector<uint64_t>& ids, const std::vector<float>& rows) {
    for (size_t i = 0; i < ids.size(); ++i) {
      model_[ids[i]].assign(rows.begin() + i * kDim, rows.begin() + (i + 1) * kDim);
    }
  }

  void Step(DB& db) {
    const uint64_t roll = rng_() % 100;
    std::vector<uint64_t> ids;
    std::vector<float> rows;
    if (roll < 35) {
      const uint64_t id = PickId();
      const std::vector<float> v = Vector();
      ASSERT_OK(db.Put(id, v));
      model_[id] = v;
    } else if (roll < 60) {
      Batch(1 + rng_() % 100, &ids, &rows);
      ASSERT_OK(db.PutBatch(ids, rows));
      Apply(ids, rows);
    } else if (roll < 80) {
      uint64_t id = next_id_ == 0 ? 0 : rng_() % next_id_;
      if (rng_() % 4 != 0) {
        auto it = model_.lower_bound(id);
        if (it != model_.end()) id = it->first;
      }
      ASSERT_OK(db.Delete(id));
      model_.erase(id);
    } else if (roll < 86) {
      Batch(100 + rng_() % 800, &ids, &rows);
      ASSERT_OK(db.BulkLoad(ids, rows));
      Apply(ids, rows);
    } else if (roll < 92) {
      ASSERT_OK(db.Flush());
    } else if (roll < 95) {
      ASSERT_OK(db.Compact());
    } else {
      ASSERT_OK(db.WaitForCompact());
    }
  }

  void Check(DB& db, size_t op) {
    SearchOptions all;
    all.k = 20;
    all.list_size = rng_() % 2 == 0 ? std::numeric_limits<uint32_t>::max() : 1u << 20;
    for (int q = 0; q < 3; ++q) {
      const std::vector<float> query = Vector();
      ASSERT_OK_AND_ASSIGN(const std::vector<Neighbor> got, db.Search(query, all));
      ASSERT_TRUE(test::MatchesOracle(got, model_, query, Metric::kL2, all.k))
          << "after " << op << " calls, " << model_.size() << " live";
    }
    // Every live vector, and only those.
    SearchOptions everything;
    everything.k = std::numeric_limits<uint32_t>::max();
    everything.list_size = std::numeric_limits<uint32_t>::max();
    ASSERT_OK_AND_ASSIGN(const std::vector<Neighbor> got, db.Search(Vector(), everything));
    ASSERT_EQ(got.size(), model_.size()) << "after " << op << " calls";
    for (const Neighbor& n : got) {
      ASSERT_TRUE(model_.contains(n.id)) << n.id << " after " << op << " calls";
    }
    for (int i = 0; i < 20 && next_id_ > 0; ++i) {
      const uint64_t id = rng_() % next_id_;
      const absl::StatusOr<std::vector<float>> v = db.Get(id);
      if (model_.contains(id)) {
        ASSERT_OK(v);
        EXPECT_TRUE(test::VectorsNear(*v, model_[id]));
      } else {
        EXPECT_STATUS_CODE(v, absl::StatusCode::kNotFound) << id;
      }
    }
  }

  std::mt19937_64 rng_;
  VectorMap model_;
  uint64_t next_id_ = 0;
};

// The shape: dim 32, 3 shards, R 16, L 40, 32 KiB memtables.
Options InterleavingOptions() {
  Options o = test::DefaultOptions(kDim, Metric::kL2, 3);
  o.default_collection.graph.max_degree = 16;
  o.default_collection.graph.build_list_size = 40;
  o.memtable_bytes = 32 << 10;
  return o;
}

TEST(InterleavingTest, EveryMixOfWritesAndMergesMatchesABruteForceModel) {
  const size_t runs = FromEnv("SHOAL_INTERLEAVING_RUNS", 2);
  const size_t ops = FromEnv("SHOAL_INTERLEAVING_OPS", kSanitized ? 300 : 1000);
  for (uint64_t seed = 1; seed <= runs; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    test::TempDir dir;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<DB> db, DB::Open(InterleavingOptions(), dir.path()));
    Interleaving mix(seed);
    mix.Run(*db, ops, std::max<size_t>(1, ops / 10));
    if (HasFailure()) return;
    ASSERT_OK(db->Close());
  }
}

}  // namespace
}  // namespace shoal
