// Copyright 2026 The shoal Authors.
//
// One graph while a collection is small (CompactionOptions::
// one_graph_max_vectors): a bulk load writes one segment the shards share,
// the merges after flushes fold every shard's segments into one, a search
// walks it once, and a collection that grows past the limit goes back to a
// graph a shard. Newest version wins and deletes stay deleted throughout.

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "db/inspect.h"
#include "gtest/gtest.h"
#include "testutil/temp_dir.h"
#include "version/filename.h"

namespace shoal {
namespace {

namespace stdfs = std::filesystem;
using test::SegmentFiles;
using test::TempDir;

constexpr uint32_t kDim = 16;
constexpr size_t kCount = 600;

std::vector<float> Vec(uint64_t seed) { return test::RandomVector(kDim, seed); }

Options Opts(uint64_t one_graph_max_vectors = 65536, uint32_t shards = 3) {
  Options o = test::DefaultOptions(kDim, Metric::kL2, shards);
  o.compaction.one_graph_max_vectors = one_graph_max_vectors;
  return o;
}

// Bulk loads ids [from, to) with vectors Vec(id + salt) and records them.
absl::Status Load(DB& db, uint64_t from, uint64_t to, uint64_t salt, test::VectorMap* model) {
  std::vector<uint64_t> ids;
  std::vector<float> rows;
  for (uint64_t id = from; id < to; ++id) {
    ids.push_back(id);
    const std::vector<float> v = Vec(id + salt);
    rows.insert(rows.end(), v.begin(), v.end());
    (*model)[id] = v;
  }
  return db.BulkLoad(ids, rows);
}

// The segment files in the collection's directory itself (shared ones).
size_t SharedFiles(const std::string& db_path) {
  size_t n = 0;
  for (const auto& e : stdfs::directory_iterator(JoinPath(db_path, kDefaultCollection))) {
    uint64_t number;
    if (ParseSegmentFileName(e.path().filename().string(), &number)) ++n;
  }
  return n;
}

// Every shard's report.
std::vector<ShardReport> Shards(DB& db) {
  absl::StatusOr<std::vector<CollectionReport>> stats = CollectStats(db);
  EXPECT_TRUE(stats.ok()) << stats.status();
  return stats.ok() ? stats->front().shards : std::vector<ShardReport>{};
}

// Exact top-10 for a few queries (a list as large as the data walks all of
// it), and Get of every id.
void ExpectExact(DB& db, const test::VectorMap& model, std::span<const uint64_t> absent = {}) {
  EXPECT_TRUE(test::HoldsExactly(db, kDefaultCollection, Metric::kL2, model, absent));
  for (uint64_t q = 0; q < 8; ++q) {
    const std::vector<float> query = Vec(100000 + q);
    absl::StatusOr<std::vector<Neighbor>> got =
        db.Search(query, {.k = 10, .list_size = 2 * kCount});
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(test::MatchesOracle(*got, model, query, Metric::kL2, 10)) << "query " << q;
  }
}

TEST(OneGraphTest, BulkLoadOfSmallCollectionWritesOneSegmentAllShardsName) {
  TempDir dir;
  test::VectorMap model;
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(Opts(), dir.path()));
  ASSERT_OK(Load(*db, 0, kCount, 0, &model));
  EXPECT_EQ(SegmentFiles(dir.path()).size(), 1u);
  EXPECT_EQ(SharedFiles(dir.path()), 1u);
  uint64_t entries = 0;
  std::set<uint64_t> numbers;
  for (const ShardReport& s : Shards(*db)) {
    ASSERT_EQ(s.shared_segments.size(), 1u) << "shard " << s.index;
    numbers.insert(s.shared_segments[0]);
    entries += s.segment_vectors;
    EXPECT_EQ(s.stored_vectors, s.live_vectors);  // its own entries only
  }
  EXPECT_EQ(numbers.size(), 1u);  // the same segment
  EXPECT_EQ(entries, kCount);     // each entry counted by its own shard
  ExpectExact(*db, model);
  // One walk a query, not one a shard.
  SearchStats stats;
  ASSERT_OK(db->Search(Vec(7), {.k = 10, .stats = &stats}).status());
  EXPECT_EQ(stats.segments, 1u);
  ASSERT_OK(db->Close());
  ASSERT_OK_AND_ASSIGN(db, DB::Open(Opts(), dir.path()));
  ExpectExact(*db, model);
}

TEST(OneGraphTest, WithoutTheLimitEachShardBuildsItsOwnGraph) {
  TempDir dir;
  test::VectorMap model;
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(Opts(/*one_graph_max_vectors=*/0), dir.path()));
  ASSERT_OK(Load(*db, 0, kCount, 0, &model));
  EXPECT_EQ(SegmentFiles(dir.path()).size(), 3u);
  EXPECT_EQ(SharedFiles(dir.path()), 0u);
  SearchStats stats;
  ASSERT_OK(db->Search(Vec(7), {.k = 10, .stats = &stats}).status());
  EXPECT_EQ(stats.segments, 3u);
  ExpectExact(*db, model);
}

TEST(OneGraphTest, BulkLoadPastTheLimitBuildsAGraphAShard) {
  TempDir dir;
  test::VectorMap model;
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(Opts(/*one_graph_max_vectors=*/kCount - 1), dir.path()));
  ASSERT_OK(Load(*db, 0, kCount, 0, &model));
  EXPECT_EQ(SharedFiles(dir.path()), 0u);
  EXPECT_EQ(SegmentFiles(dir.path()).size(), 3u);
  ExpectExact(*db, model);
}

TEST(OneGraphTest, NewerVersionsAndDeletesHideTheSharedEntries) {
  TempDir dir;
  test::VectorMap model;
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(Opts(), dir.path()));
  ASSERT_OK(Load(*db, 0, kCount, 0, &model));
  std::vector<uint64_t> deleted;
  for (uint64_t id = 0; id < kCount; id += 7) {
    ASSERT_OK(db->Delete(id));
    model.erase(id);
    deleted.push_back(id);
  }
  for (uint64_t id = 3; id < kCount; id += 11) {
    if (id % 7 == 0) continue;
    model[id] = Vec(id + 5000);
    ASSERT_OK(db->Put(id, model[id]));
  }
  // In memtables, then in segments, then folded into one shared segment.
  ExpectExact(*db, model, deleted);
  ASSERT_OK(db->Flush());
  ExpectExact(*db, model, deleted);
  ASSERT_OK(db->WaitForCompact());
  EXPECT_EQ(SegmentFiles(dir.path()).size(), 1u);
  ExpectExact(*db, model, deleted);
  for (const ShardReport& s : Shards(*db)) EXPECT_EQ(s.stored_vectors, s.live_vectors);
  // A deleted id is not found by its own vector either.
  for (uint64_t id : deleted) {
    ASSERT_OK_AND_ASSIGN(auto hits, db->Search(Vec(id), {.k = 3, .list_size = 2 * kCount}));
    for (const Neighbor& h : hits) EXPECT_NE(h.id, id);
  }
  ASSERT_OK(db->Close());
  ASSERT_OK_AND_ASSIGN(db, DB::Open(Opts(), dir.path()));
  ExpectExact(*db, model, deleted);
}

TEST(OneGraphTest, FlushedSegmentsOfEveryShardFoldIntoOneGraph) {
  TempDir dir;
  Options o = Opts();
  o.memtable_bytes = 16 << 10;  // a flush every ~200 vectors a shard
  test::VectorMap model;
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
  for (uint64_t from = 0; from < 3 * kCount; from += 100) {
    std::vector<uint64_t> ids;
    std::vector<float> rows;
    for (uint64_t id = from; id < from + 100; ++id) {
      ids.push_back(id % 1000);  // ids past 1000 overwrite
      const std::vector<float> v = Vec(id);
      rows.insert(rows.end(), v.begin(), v.end());
      model[id % 1000] = v;
    }
    ASSERT_OK(db->PutBatch(ids, rows));
  }
  ASSERT_OK(db->Flush());
  ASSERT_OK(db->WaitForCompact());
  EXPECT_EQ(SegmentFiles(dir.path()).size(), 1u);
  EXPECT_EQ(SharedFiles(dir.path()), 1u);
  for (const ShardReport& s : Shards(*db)) {
    EXPECT_EQ(s.segments, 1u);
    EXPECT_EQ(s.shared_segments.size(), 1u);
  }
  ExpectExact(*db, model);
  ASSERT_OK(db->Close());
  ASSERT_OK_AND_ASSIGN(db, DB::Open(o, dir.path()));
  ExpectExact(*db, model);
}

TEST(OneGraphTest, CollectionGrownPastTheLimitGoesBackToAGraphAShard) {
  TempDir dir;
  Options o = Opts(/*one_graph_max_vectors=*/kCount);
  test::VectorMap model;
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
  ASSERT_OK(Load(*db, 0, kCount, 0, &model));
  ASSERT_EQ(SharedFiles(dir.path()), 1u);
  // Past the limit: the shards merge their own, taking their entries out
  // of the shared segment, whose file goes once none names it.
  ASSERT_OK(Load(*db, kCount, 2 * kCount, 0, &model));
  ASSERT_OK(db->Put(5, Vec(77)));
  model[5] = Vec(77);
  ASSERT_OK(db->Compact());
  ASSERT_OK(db->WaitForCompact());
  EXPECT_EQ(SharedFiles(dir.path()), 0u);
  EXPECT_EQ(SegmentFiles(dir.path()).size(), 3u);
  for (const ShardReport& s : Shards(*db)) EXPECT_TRUE(s.shared_segments.empty());
  ExpectExact(*db, model);
  ASSERT_OK(db->Close());
  ASSERT_OK_AND_ASSIGN(db, DB::Open(o, dir.path()));
  ExpectExact(*db, model);
}

// A database at `path` holding kCount bulk-loaded vectors (one shared
// segment), closed.
void LoadAndClose(const std::string& path, test::VectorMap* model) {
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(Opts(), path));
  ASSERT_OK(Load(*db, 0, kCount, 0, model));
  ASSERT_OK(db->Close());
}

TEST(OneGraphTest, OpenRemovesASharedSegmentNoManifestNames) {
  TempDir dir;
  test::VectorMap model;
  ASSERT_NO_FATAL_FAILURE(LoadAndClose(dir.path(), &model));
  // What a fold that crashed before its manifest edit leaves.
  const std::string stray =
      JoinPath(JoinPath(dir.path(), kDefaultCollection), SegmentFileName(999999));
  std::ofstream(stray) << "half a segment";
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(Opts(), dir.path()));
  EXPECT_FALSE(stdfs::exists(stray));
  EXPECT_EQ(SharedFiles(dir.path()), 1u);
  ExpectExact(*db, model);
}

TEST(OneGraphTest, DamagedSharedSegmentIsDataLossNamingTheFile) {
  TempDir dir;
  test::VectorMap model;
  ASSERT_NO_FATAL_FAILURE(LoadAndClose(dir.path(), &model));
  const std::vector<std::string> files = SegmentFiles(dir.path());
  ASSERT_EQ(files.size(), 1u);
  {
    std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(8);
    f.put('\x5a');
  }
  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(Opts(), dir.path());
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), absl::StatusCode::kDataLoss) << db.status();
  EXPECT_NE(db.status().message().find(files[0]), std::string::npos) << db.status();
}

}  // namespace
}  // namespace shoal
