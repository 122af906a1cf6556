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
// FilteredInterleavingTest does the same with records and filtered
// searches (issue 44).
//
// Each run is one seed. The default suite runs two short ones;
// SHOAL_INTERLEAVING_RUNS and SHOAL_INTERLEAVING_OPS make it longer
// (ctest -L long runs 20 full-size runs, when configured with
// -DSHOAL_LONG_TESTS=ON).

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "shoal/db.h"
#include "shoal/filter.h"
#include "shoal/record.h"
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

// ---- Filtered searches against the model (issue 44) ----

// The same kind of mix, of records: PutBatch, Put, Delete, BulkLoad, Flush,
// Compact, WaitForCompact, each record with random labels (label l in 0..5
// on a record with probability 1/2, 1/4, 1/8, 1/16, 1/64, 1/256: from half
// the records to a handful) and, on four of five, a "ts" in [0, 1000).
// Every check searches with random filters at list_size 200 and compares
// with the exact top-k of the live records that match: never an id that
// fails the filter or is not live, exactly min(k, matching) answers, and
// recall over the run at least kFilteredRecallFloor. The floor is set by
// the graphs, not the filters: these (R 16, build L 40, 32-d Gaussian)
// answer unfiltered searches at L 200 with recall@50 0.93-0.98 after 1000
// calls; the filtered searches measured 0.96-1.0 (2026-12, Release).
constexpr double kFilteredRecallFloor = 0.9;

class FilteredInterleaving {
 public:
  explicit FilteredInterleaving(uint64_t seed) : rng_(seed) {}

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

  // Of the exact answers' ids, the share the searches found.
  double recall() const {
    return wanted_ == 0 ? 1.0 : static_cast<double>(found_) / static_cast<double>(wanted_);
  }
  size_t searches() const { return searches_; }

 private:
  struct Stored {
    std::vector<float> vector;
    std::vector<uint32_t> labels;  // ascending
    std::optional<int64_t> ts;
  };
  // A record to write, owning what the Record views.
  struct Owned {
    uint64_t id = 0;
    Stored stored;
    std::vector<AttributeValue> attributes;
    Record view() const {
      return Record{id, stored.vector, stored.labels, attributes, {}};
    }
  };

  // As Interleaving::PickId: mostly new ids, some overwrites, some
  // resurrections.
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

  Owned MakeRecord() {
    Owned r;
    r.id = PickId();
    std::normal_distribution<float> gauss(0.0f, 1.0f);
    r.stored.vector.resize(kDim);
    for (float& x : r.stored.vector) x = gauss(rng_);
    static constexpr uint32_t kOneIn[] = {2, 4, 8, 16, 64, 256};
    for (uint32_t l = 0; l < 6; ++l) {
      if (rng_() % kOneIn[l] == 0) r.stored.labels.push_back(l);
    }
    if (rng_() % 5 != 0) {
      r.stored.ts = static_cast<int64_t>(rng_() % 1000);
      r.attributes = {{0, *r.stored.ts}};
    }
    return r;
  }

  std::vector<Owned> MakeRecords(size_t n) {
    std::vector<Owned> out;
    for (size_t i = 0; i < n; ++i) out.push_back(MakeRecord());
    return out;
  }

  // Applies `records` in order (a repeated id: the later record wins).
  void Apply(const std::vector<Owned>& records) {
    for (const Owned& r : records) model_[r.id] = r.stored;
  }

  static std::vector<Record> Views(const std::vector<Owned>& records) {
    std::vector<Record> views;
    for (const Owned& r : records) views.push_back(r.view());
    return views;
  }

  void Step(DB& db) {
    const uint64_t roll = rng_() % 100;
    if (roll < 20) {
      const std::vector<Owned> one = MakeRecords(1);
      ASSERT_OK(db.Put(one[0].view()));
      Apply(one);
    } else if (roll < 50) {
      const std::vector<Owned> batch = MakeRecords(1 + rng_() % 100);
      ASSERT_OK(db.PutBatch(Views(batch)));
      Apply(batch);
    } else if (roll < 75) {
      uint64_t id = next_id_ == 0 ? 0 : rng_() % next_id_;
      if (rng_() % 4 != 0) {
        auto it = model_.lower_bound(id);
        if (it != model_.end()) id = it->first;
      }
      ASSERT_OK(db.Delete(id));
      model_.erase(id);
    } else if (roll < 80) {
      const std::vector<Owned> batch = MakeRecords(100 + rng_() % 600);
      ASSERT_OK(db.BulkLoad(Views(batch)));
      Apply(batch);
    } else if (roll < 90) {
      ASSERT_OK(db.Flush());
    } else if (roll < 95) {
      ASSERT_OK(db.Compact());
    } else {
      ASSERT_OK(db.WaitForCompact());
    }
  }

  struct Query {
    std::string what;
    Filter filter;
    std::function<bool(uint64_t id, const Stored&)> matches;
  };

  static bool Has(const Stored& s, uint32_t label) {
    return std::binary_search(s.labels.begin(), s.labels.end(), label);
  }

  Query RandomQuery() {
    const uint32_t l = rng_() % 6, m = rng_() % 6;
    const int64_t a = static_cast<int64_t>(rng_() % 1000);
    const int64_t b = a + std::array<int64_t, 3>{5, 50, 400}[rng_() % 3];
    const auto in_range = [a, b](const Stored& s) { return s.ts && *s.ts >= a && *s.ts < b; };
    switch (rng_() % 9) {
      case 0:
        return {absl::StrCat("AnyLabel{", l, "}"), Filter::AnyLabel({l}),
                [l](uint64_t, const Stored& s) { return Has(s, l); }};
      case 1:
        return {absl::StrCat("AnyLabel{", l, ",", m, "}"), Filter::AnyLabel({l, m}),
                [l, m](uint64_t, const Stored& s) { return Has(s, l) || Has(s, m); }};
      case 2:
        return {absl::StrCat("AllLabels{", l, ",", m, "}"), Filter::AllLabels({l, m}),
                [l, m](uint64_t, const Stored& s) { return Has(s, l) && Has(s, m); }};
      case 3:
        return {absl::StrCat("NoLabel{", l, "}"), Filter::NoLabel({l}),
                [l](uint64_t, const Stored& s) { return !Has(s, l); }};
      case 4:
        return {absl::StrCat("Range(ts, ", a, ", ", b, ")"), Filter::Range("ts", a, b),
                [in_range](uint64_t, const Stored& s) { return in_range(s); }};
      case 5:
        return {absl::StrCat("And{AnyLabel{", l, "}, Range(ts, ", a, ", ", b, ")}"),
                Filter::And({Filter::AnyLabel({l}), Filter::Range("ts", a, b)}),
                [l, in_range](uint64_t, const Stored& s) { return Has(s, l) && in_range(s); }};
      case 6:
        return {absl::StrCat("Or{AllLabels{4,5}, Below(ts, ", a / 20, ")}"),
                Filter::Or({Filter::AllLabels({4, 5}), Filter::Below("ts", a / 20)}),
                [a](uint64_t, const Stored& s) {
                  return (Has(s, 4) && Has(s, 5)) || (s.ts && *s.ts < a / 20);
                }};
      case 7:
        return {absl::StrCat("And{NoLabel{", l, "}, Ids(id % 7 == 2)}"),
                Filter::And({Filter::NoLabel({l}),
                             Filter::Ids([](uint64_t id) { return id % 7 == 2; })}),
                [l](uint64_t id, const Stored& s) { return !Has(s, l) && id % 7 == 2; }};
      default:
        return {"AnyLabel{99}", Filter::AnyLabel({99}),
                [](uint64_t, const Stored&) { return false; }};
    }
  }

  void Check(DB& db, size_t op) {
    for (int q = 0; q < 8; ++q) {
      const Query query = RandomQuery();
      SCOPED_TRACE(absl::StrCat(query.what, " after ", op, " calls, ", model_.size(), " live"));
      VectorMap matching;
      for (const auto& [id, s] : model_) {
        if (query.matches(id, s)) matching[id] = s.vector;
      }
      std::normal_distribution<float> gauss(0.0f, 1.0f);
      std::vector<float> vector(kDim);
      for (float& x : vector) x = gauss(rng_);
      SearchOptions so;
      so.k = std::array<uint32_t, 3>{1, 10, 50}[rng_() % 3];
      so.list_size = 200;
      so.filter = &query.filter;
      ASSERT_OK_AND_ASSIGN(const std::vector<Neighbor> got, db.Search(vector, so));
      ASSERT_TRUE(test::IsSortedTopK(got, so.k));
      for (const Neighbor& n : got) {
        ASSERT_TRUE(model_.contains(n.id)) << "id " << n.id << " is not live";
        ASSERT_TRUE(matching.contains(n.id)) << "id " << n.id << " fails the filter";
      }
      ASSERT_EQ(got.size(), std::min<size_t>(so.k, matching.size()));
      const std::vector<Neighbor> exact =
          test::BruteForceTopK(matching, vector, Metric::kL2, so.k);
      for (const Neighbor& e : exact) {
        found_ += std::any_of(got.begin(), got.end(),
                              [&](const Neighbor& n) { return n.id == e.id; });
      }
      wanted_ += exact.size();
      ++searches_;
    }
  }

  std::mt19937_64 rng_;
  std::map<uint64_t, Stored> model_;
  uint64_t next_id_ = 0;
  size_t found_ = 0, wanted_ = 0, searches_ = 0;
};

// Two short runs by default (about 4 s in Release); the environment
// variables of InterleavingTest make it longer.
TEST(FilteredInterleavingTest, EveryMixOfRecordWritesAndMergesAnswersFiltersAsABruteForceModel) {
  const size_t runs = FromEnv("SHOAL_INTERLEAVING_RUNS", 2);
  const size_t ops = FromEnv("SHOAL_INTERLEAVING_OPS", kSanitized ? 100 : 300);
  for (uint64_t seed = 1; seed <= runs; ++seed) {
    // Odd seeds: memory-mapped segments, one graph for the shards while
    // small; even ones: disk-resident segments, a graph a shard.
    const bool odd = seed % 2 == 1;
    SCOPED_TRACE(absl::StrCat("seed ", seed, odd ? " (mapped, one graph)" : " (disk, a graph a shard)"));
    Options options = InterleavingOptions();
    options.default_collection.attributes = {"ts"};
    options.segment_storage = odd ? SegmentStorage::kMapped : SegmentStorage::kDisk;
    if (!odd) options.compaction.one_graph_max_vectors = 0;
    test::TempDir dir;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<DB> db, DB::Open(options, dir.path()));
    FilteredInterleaving mix(seed);
    mix.Run(*db, ops, std::max<size_t>(1, ops / 10));
    if (HasFailure()) return;
    std::cout << "seed " << seed << ": " << mix.searches() << " filtered searches, recall "
              << mix.recall() << "\n";
    EXPECT_GE(mix.recall(), kFilteredRecallFloor);
    ASSERT_OK(db->Close());
  }
}

}  // namespace
}  // namespace shoal
