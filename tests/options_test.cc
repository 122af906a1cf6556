// Copyright 2026 The shoal Authors.
//
// Every option a caller sets is checked where it enters (DB::Open,
// CreateCollection, each search entry point) against what its comment in
// include/shoal/options.h accepts: a value just outside is
// InvalidArgumentError naming the field, and each documented bound is
// accepted (the database then works). One table row per field and bound;
// enums get a value past their last one and a value far from all of them.

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "shoal/db.h"
#include "shoal/options.h"
#include "testutil/temp_dir.h"

namespace shoal::test {
namespace {

using ::absl::StatusCode;

constexpr uint32_t kDim = 8;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <typename T>
struct Case {
  std::string field;  // named in the error message
  std::function<void(T&)> set;
};

// ---- Options (DB::Open) ----

std::vector<Case<Options>> OptionsOutsideTheirRange() {
  return {
      {"Options::fsync", [](Options& o) { o.fsync = static_cast<FsyncPolicy>(3); }},
      {"Options::fsync", [](Options& o) { o.fsync = static_cast<FsyncPolicy>(200); }},
      {"Options::sync_interval_us",
       [](Options& o) {
         o.fsync = FsyncPolicy::kInterval;
         o.sync_interval_us = 0;
       }},
      {"Options::segment_storage",
       [](Options& o) { o.segment_storage = static_cast<SegmentStorage>(2); }},
      {"Options::segment_storage",
       [](Options& o) { o.segment_storage = static_cast<SegmentStorage>(7); }},
      {"Options::arena_block_bytes", [](Options& o) { o.arena_block_bytes = (size_t{1} << 30) + 1; }},
      {"Options::arena_block_bytes",
       [](Options& o) { o.arena_block_bytes = std::numeric_limits<size_t>::max(); }},
      {"Options::wal_file_bytes", [](Options& o) { o.wal_file_bytes = (size_t{1} << 32) + 1; }},
      {"Options::wal_file_bytes",
       [](Options& o) { o.wal_file_bytes = std::numeric_limits<size_t>::max(); }},
      {"min_merge_width", [](Options& o) { o.compaction.min_merge_width = 1; }},
      {"max_segments", [](Options& o) { o.compaction.max_segments = 1; }},
      {"size_ratio", [](Options& o) { o.compaction.size_ratio = -1e-300; }},
      {"size_ratio", [](Options& o) { o.compaction.size_ratio = kInf; }},
      {"size_ratio", [](Options& o) { o.compaction.size_ratio = kNaN; }},
      {"fold_ratio", [](Options& o) { o.compaction.fold_ratio = -1e-300; }},
      {"fold_ratio", [](Options& o) { o.compaction.fold_ratio = kInf; }},
      {"fold_ratio", [](Options& o) { o.compaction.fold_ratio = kNaN; }},
      {"quiescent_fold_ratio", [](Options& o) { o.compaction.quiescent_fold_ratio = -1e-300; }},
      {"quiescent_fold_ratio", [](Options& o) { o.compaction.quiescent_fold_ratio = kInf; }},
      {"consolidate_dead_fraction", [](Options& o) { o.compaction.consolidate_dead_fraction = 0; }},
      {"consolidate_dead_fraction",
       [](Options& o) { o.compaction.consolidate_dead_fraction = std::nextafter(1.0, 2.0); }},
      {"consolidate_dead_fraction",
       [](Options& o) { o.compaction.consolidate_dead_fraction = kNaN; }},
      {"Options::worker_threads", [](Options& o) { o.worker_threads = 1025; }},
      // default_collection is checked as CreateCollection checks (below),
      // its other fields also when dim is 0.
      {"CollectionOptions::dim", [](Options& o) { o.default_collection.dim = 4097; }},
      {"CollectionOptions::metric",
       [](Options& o) { o.default_collection.metric = static_cast<Metric>(3); }},
      {"CollectionOptions::metric",
       [](Options& o) {
         o.default_collection.dim = 0;
         o.default_collection.metric = static_cast<Metric>(3);
       }},
      {"GraphOptions::alpha",
       [](Options& o) {
         o.default_collection.dim = 0;
         o.default_collection.graph.alpha = std::nanf("");
       }},
  };
}

std::vector<Case<Options>> OptionsAtTheirBounds() {
  auto interval = [](uint32_t us) {
    return [us](Options& o) {
      o.fsync = FsyncPolicy::kInterval;
      o.sync_interval_us = us;
    };
  };
  constexpr size_t kMaxSize = std::numeric_limits<size_t>::max();
  return {
      {"fsync kNever", [](Options& o) { o.fsync = FsyncPolicy::kNever; }},
      {"fsync kAlways", [](Options& o) { o.fsync = FsyncPolicy::kAlways; }},
      {"sync_interval_us 1", interval(1)},
      {"sync_interval_us max", interval(std::numeric_limits<uint32_t>::max())},
      {"sync_interval_us 0 under kNever", [](Options& o) { o.sync_interval_us = 0; }},
      {"segment_storage kMapped", [](Options& o) { o.segment_storage = SegmentStorage::kMapped; }},
      {"segment_storage kDisk", [](Options& o) { o.segment_storage = SegmentStorage::kDisk; }},
      {"memtable_bytes 0", [](Options& o) { o.memtable_bytes = 0; }},
      {"memtable_bytes max", [=](Options& o) { o.memtable_bytes = kMaxSize; }},
      {"arena_block_bytes 0", [](Options& o) { o.arena_block_bytes = 0; }},
      // (Not written to here: a write allocates the block, and its spare.)
      {"arena_block_bytes 1 GiB", [](Options& o) { o.arena_block_bytes = size_t{1} << 30; }},
      {"wal_file_bytes 0", [](Options& o) { o.wal_file_bytes = 0; }},
      {"wal_file_bytes 4 GiB", [](Options& o) { o.wal_file_bytes = size_t{1} << 32; }},
      {"min_merge_width 2", [](Options& o) { o.compaction.min_merge_width = 2; }},
      {"min_merge_width max",
       [](Options& o) { o.compaction.min_merge_width = std::numeric_limits<uint32_t>::max(); }},
      {"max_segments 2", [](Options& o) { o.compaction.max_segments = 2; }},
      {"size_ratio 0", [](Options& o) { o.compaction.size_ratio = 0; }},
      {"size_ratio max", [](Options& o) { o.compaction.size_ratio = DBL_MAX; }},
      {"fold_ratio 0", [](Options& o) { o.compaction.fold_ratio = 0; }},
      {"fold_ratio max", [](Options& o) { o.compaction.fold_ratio = DBL_MAX; }},
      {"quiescent_fold_ratio 0", [](Options& o) { o.compaction.quiescent_fold_ratio = 0; }},
      {"quiescent_fold_ratio max", [](Options& o) { o.compaction.quiescent_fold_ratio = DBL_MAX; }},
      {"consolidate_dead_fraction 1", [](Options& o) { o.compaction.consolidate_dead_fraction = 1; }},
      {"consolidate_dead_fraction min",
       [](Options& o) { o.compaction.consolidate_dead_fraction = DBL_TRUE_MIN; }},
      {"one_graph_max_vectors 0", [](Options& o) { o.compaction.one_graph_max_vectors = 0; }},
      {"one_graph_max_vectors max",
       [](Options& o) {
         o.compaction.one_graph_max_vectors = std::numeric_limits<uint64_t>::max();
       }},
      {"node_cache_bytes 0",
       [](Options& o) {
         o.segment_storage = SegmentStorage::kDisk;
         o.node_cache_bytes = 0;
       }},
      {"node_cache_bytes max",
       [=](Options& o) {
         o.segment_storage = SegmentStorage::kDisk;
         o.node_cache_bytes = kMaxSize;
       }},
      {"memory_budget_bytes max",
       [=](Options& o) {
         o.segment_storage = SegmentStorage::kDisk;
         o.memory_budget_bytes = kMaxSize;
       }},
      {"worker_threads 0", [](Options& o) { o.worker_threads = 0; }},
      {"worker_threads 1024", [](Options& o) { o.worker_threads = 1024; }},
      {"default_collection dim 0 (none)", [](Options& o) { o.default_collection.dim = 0; }},
  };
}

TEST(OptionsRangeTest, EachOptionJustOutsideItsRangeIsInvalidArgumentNamingIt) {
  for (const Case<Options>& row : OptionsOutsideTheirRange()) {
    TempDir dir;
    Options options = DefaultOptions(kDim);
    row.set(options);
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, dir.path());
    EXPECT_EQ(db.status().code(), StatusCode::kInvalidArgument) << row.field << ": "
                                                                << db.status();
    EXPECT_NE(std::string(db.status().message()).find(row.field), std::string::npos)
        << row.field << ": " << db.status();
  }
}

TEST(OptionsRangeTest, EachOptionAtABoundOfItsRangeIsAccepted) {
  for (const Case<Options>& row : OptionsAtTheirBounds()) {
    SCOPED_TRACE(row.field);
    TempDir dir;
    Options options = DefaultOptions(kDim);
    row.set(options);
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<DB> db, DB::Open(options, dir.path()));
    if (options.arena_block_bytes < (size_t{1} << 30) && options.default_collection.dim != 0) {
      const std::vector<float> v = RandomVector(kDim, 1);
      ASSERT_OK(db->Put(1, v));
      ASSERT_OK(db->Flush());
      ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> found, db->Search(v));
      ASSERT_EQ(found.size(), 1u);
      EXPECT_EQ(found[0].id, 1u);
    }
    ASSERT_OK(db->Close());
  }
}

// ---- CollectionOptions and GraphOptions (CreateCollection) ----

std::vector<Case<CollectionOptions>> CollectionOptionsOutsideTheirRange() {
  return {
      {"CollectionOptions::dim", [](CollectionOptions& c) { c.dim = 0; }},
      {"CollectionOptions::dim", [](CollectionOptions& c) { c.dim = 4097; }},
      {"CollectionOptions::metric", [](CollectionOptions& c) { c.metric = static_cast<Metric>(3); }},
      {"CollectionOptions::metric",
       [](CollectionOptions& c) { c.metric = static_cast<Metric>(255); }},
      {"CollectionOptions::shard_count", [](CollectionOptions& c) { c.shard_count = 257; }},
      {"CollectionOptions::code", [](CollectionOptions& c) { c.code = static_cast<VectorCode>(2); }},
      {"CollectionOptions::code", [](CollectionOptions& c) { c.code = static_cast<VectorCode>(9); }},
      {"GraphOptions::max_degree", [](CollectionOptions& c) { c.graph.max_degree = 0; }},
      {"GraphOptions::max_degree", [](CollectionOptions& c) { c.graph.max_degree = 1025; }},
      {"GraphOptions::build_list_size", [](CollectionOptions& c) { c.graph.build_list_size = 0; }},
      {"GraphOptions::build_list_size",
       [](CollectionOptions& c) { c.graph.build_list_size = 16385; }},
      {"GraphOptions::alpha",
       [](CollectionOptions& c) { c.graph.alpha = std::nextafter(1.0f, 0.0f); }},
      {"GraphOptions::alpha",
       [](CollectionOptions& c) { c.graph.alpha = std::numeric_limits<float>::infinity(); }},
      {"GraphOptions::alpha", [](CollectionOptions& c) { c.graph.alpha = std::nanf(""); }},
  };
}

std::vector<Case<CollectionOptions>> CollectionOptionsAtTheirBounds() {
  return {
      {"dim 1", [](CollectionOptions& c) { c.dim = 1; }},
      {"dim 4096", [](CollectionOptions& c) { c.dim = 4096; }},
      {"metric kL2", [](CollectionOptions& c) { c.metric = Metric::kL2; }},
      {"metric kInnerProduct", [](CollectionOptions& c) { c.metric = Metric::kInnerProduct; }},
      {"metric kCosine", [](CollectionOptions& c) { c.metric = Metric::kCosine; }},
      {"shard_count 0", [](CollectionOptions& c) { c.shard_count = 0; }},
      {"shard_count 256", [](CollectionOptions& c) { c.shard_count = 256; }},
      {"code kNone", [](CollectionOptions& c) { c.code = VectorCode::kNone; }},
      {"code kSq8", [](CollectionOptions& c) { c.code = VectorCode::kSq8; }},
      {"max_degree 1", [](CollectionOptions& c) { c.graph.max_degree = 1; }},
      {"max_degree 1024", [](CollectionOptions& c) { c.graph.max_degree = 1024; }},
      {"build_list_size 1", [](CollectionOptions& c) { c.graph.build_list_size = 1; }},
      {"build_list_size 16384", [](CollectionOptions& c) { c.graph.build_list_size = 16384; }},
      {"alpha 1", [](CollectionOptions& c) { c.graph.alpha = 1.0f; }},
      {"alpha max", [](CollectionOptions& c) { c.graph.alpha = FLT_MAX; }},
  };
}

CollectionOptions ValidCollection() {
  CollectionOptions c;
  c.dim = kDim;
  c.shard_count = 2;
  return c;
}

TEST(OptionsRangeTest, EachCollectionOptionJustOutsideItsRangeIsInvalidArgumentNamingIt) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DB> db, DB::Open(DefaultOptions(kDim), dir.path()));
  for (const Case<CollectionOptions>& row : CollectionOptionsOutsideTheirRange()) {
    CollectionOptions c = ValidCollection();
    row.set(c);
    const absl::Status created = db->CreateCollection("c", c);
    EXPECT_EQ(created.code(), StatusCode::kInvalidArgument) << row.field << ": " << created;
    EXPECT_NE(std::string(created.message()).find(row.field), std::string::npos)
        << row.field << ": " << created;
    // The same through Options::default_collection (where dim 0 means "as
    // stored").
    if (c.dim == 0) continue;
    TempDir other;
    Options options = DefaultOptions(kDim);
    options.default_collection = c;
    const absl::Status opened = DB::Open(options, other.path()).status();
    EXPECT_EQ(opened.code(), StatusCode::kInvalidArgument) << row.field << ": " << opened;
    EXPECT_NE(std::string(opened.message()).find(row.field), std::string::npos)
        << row.field << ": " << opened;
  }
  EXPECT_EQ(db->ListCollections(), std::vector<std::string>{"default"});
}

TEST(OptionsRangeTest, EachCollectionOptionAtABoundOfItsRangeIsAccepted) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DB> db, DB::Open(DefaultOptions(kDim), dir.path()));
  int n = 0;
  for (const Case<CollectionOptions>& row : CollectionOptionsAtTheirBounds()) {
    SCOPED_TRACE(row.field);
    CollectionOptions c = ValidCollection();
    row.set(c);
    const std::string name = "c" + std::to_string(n++);
    ASSERT_OK(db->CreateCollection(name, c));
    // Written, built into a graph, and searched (a graph of degree 1 need
    // not find the query's own vector).
    const std::vector<float> rows = RandomVectors(20, c.dim, n);
    std::vector<uint64_t> ids(20);
    for (uint64_t i = 0; i < ids.size(); ++i) ids[i] = i;
    ASSERT_OK(db->PutBatch(name, ids, rows));
    ASSERT_OK(db->Flush());
    ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> found, db->Search(name, Row(rows, 7, c.dim)));
    EXPECT_FALSE(found.empty());
    EXPECT_TRUE(IsSortedTopK(found, 10));
    ASSERT_OK(db->DropCollection(name));
  }
}

// ---- SearchOptions (every search entry point) ----

std::vector<Case<SearchOptions>> SearchOptionsOutsideTheirRange() {
  return {
      {"SearchOptions::k", [](SearchOptions& s) { s.k = 0; }},
      {"SearchOptions::list_size", [](SearchOptions& s) { s.list_size = 0; }},
      {"SearchOptions::disk_search",
       [](SearchOptions& s) { s.disk_search = static_cast<DiskSearch>(3); }},
      {"SearchOptions::disk_search",
       [](SearchOptions& s) { s.disk_search = static_cast<DiskSearch>(7); }},
  };
}

std::vector<Case<SearchOptions>> SearchOptionsAtTheirBounds() {
  constexpr uint32_t kMax = std::numeric_limits<uint32_t>::max();
  return {
      {"k 1", [](SearchOptions& s) { s.k = 1; }},
      {"k max", [](SearchOptions& s) { s.k = kMax; }},
      {"list_size 1", [](SearchOptions& s) { s.list_size = 1; }},
      {"list_size max", [](SearchOptions& s) { s.list_size = kMax; }},
      {"beam_width 0", [](SearchOptions& s) { s.beam_width = 0; }},
      {"beam_width max", [](SearchOptions& s) { s.beam_width = kMax; }},
      {"disk_search kAuto", [](SearchOptions& s) { s.disk_search = DiskSearch::kAuto; }},
      {"disk_search kBeam", [](SearchOptions& s) { s.disk_search = DiskSearch::kBeam; }},
      {"disk_search kPipelined", [](SearchOptions& s) { s.disk_search = DiskSearch::kPipelined; }},
  };
}

// The four public ways to search, each returning its status.
std::vector<std::pair<std::string, std::function<absl::Status(DB&, const std::vector<float>&,
                                                              const SearchOptions&)>>>
SearchEntryPoints() {
  return {
      {"Search(collection)",
       [](DB& db, const std::vector<float>& q, const SearchOptions& o) {
         return db.Search("default", q, o).status();
       }},
      {"Search", [](DB& db, const std::vector<float>& q,
                    const SearchOptions& o) { return db.Search(q, o).status(); }},
      {"SearchBatch(collection)",
       [](DB& db, const std::vector<float>& q, const SearchOptions& o) {
         return db.SearchBatch("default", q, o).status();
       }},
      {"SearchBatch", [](DB& db, const std::vector<float>& q,
                         const SearchOptions& o) { return db.SearchBatch(q, o).status(); }},
  };
}

class SearchOptionsRangeTest : public ::testing::TestWithParam<SegmentStorage> {
 protected:
  void SetUp() override {
    Options options = DefaultOptions(kDim);
    options.segment_storage = GetParam();
    ASSERT_OK_AND_ASSIGN(db_, DB::Open(options, dir_.path()));
    // Segments (searched by the storage's walk) and a memtable.
    std::vector<uint64_t> ids(200);
    for (uint64_t i = 0; i < ids.size(); ++i) ids[i] = i;
    ASSERT_OK(db_->PutBatch(ids, RandomVectors(ids.size(), kDim, 3)));
    ASSERT_OK(db_->Flush());
    ASSERT_OK(db_->Put(1000, RandomVector(kDim, 4)));
  }
  TempDir dir_{TempDir::Storage::kDisk};
  std::unique_ptr<DB> db_;
};

TEST_P(SearchOptionsRangeTest, EachOptionJustOutsideItsRangeIsInvalidArgumentEverywhere) {
  const std::vector<float> query = RandomVector(kDim, 5);
  for (const Case<SearchOptions>& row : SearchOptionsOutsideTheirRange()) {
    SearchOptions o;
    row.set(o);
    for (const auto& [entry, search] : SearchEntryPoints()) {
      const absl::Status s = search(*db_, query, o);
      EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << entry << ", " << row.field << ": " << s;
      EXPECT_NE(std::string(s.message()).find(row.field), std::string::npos)
          << entry << ", " << row.field << ": " << s;
    }
  }
}

TEST_P(SearchOptionsRangeTest, EachOptionAtABoundOfItsRangeIsAcceptedEverywhere) {
  const std::vector<float> query = RandomVector(kDim, 5);
  for (const Case<SearchOptions>& row : SearchOptionsAtTheirBounds()) {
    SearchOptions o;
    row.set(o);
    for (const auto& [entry, search] : SearchEntryPoints()) {
      EXPECT_OK(search(*db_, query, o)) << entry << ", " << row.field;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Storage, SearchOptionsRangeTest,
                         ::testing::Values(SegmentStorage::kMapped, SegmentStorage::kDisk),
                         [](const ::testing::TestParamInfo<SegmentStorage>& info) {
                           return info.param == SegmentStorage::kDisk ? std::string("Disk")
                                                                      : std::string("Mapped");
                         });

}  // namespace
}  // namespace shoal::test
