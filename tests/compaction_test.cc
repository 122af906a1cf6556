// Copyright 2026 The shoal Authors.
//
// Background compaction (Options::compaction): a shard written with many
// small flushes keeps O(log N) segments without anyone calling Compact(),
// small flushes fold into the large segment (a database at rest is one
// segment a shard), every id keeps its newest version (a merge of newer
// segments keeps the tombstones that still hide older ones), WaitForCompact
// waits for the merges, and with compaction off every flush stays a segment.

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "db/inspect.h"
#include "gtest/gtest.h"
#include "shoal/db.h"
#include "shoal/options.h"
#include "testutil/temp_dir.h"

namespace shoal::test {
namespace {

constexpr uint32_t kDim = 16;

// One shard, so that the segment files are the shard's.
Options SmallMemtables(bool automatic) {
  Options o = DefaultOptions(kDim, Metric::kL2, 1);
  o.memtable_bytes = 16 << 10;  // a flush every ~200 vectors
  o.compaction.automatic = automatic;
  return o;
}

// `rounds` PutBatch calls of `per_round` new ids each, then Flush.
void WriteRounds(DB& db, int rounds, int per_round, VectorMap* model, uint64_t first_id = 0) {
  for (int r = 0; r < rounds; ++r) {
    std::vector<uint64_t> ids;
    for (int i = 0; i < per_round; ++i) ids.push_back(first_id + uint64_t(r) * per_round + i);
    const std::vector<float> rows = RandomVectors(ids.size(), kDim, 1000 + first_id + r);
    ASSERT_OK(db.PutBatch(ids, rows));
    for (size_t i = 0; i < ids.size(); ++i) {
      (*model)[ids[i]] = std::vector<float>(Row(rows, i, kDim).begin(), Row(rows, i, kDim).end());
    }
  }
  ASSERT_OK(db.Flush());
}

// Deletes `count` old ids and overwrites `count` others, all below 100 *
// (round + 1) (so that rounds touch different ids); records both.
void DeleteAndOverwrite(DB& db, int round, int count, VectorMap* model,
                        std::vector<uint64_t>* deleted) {
  for (int i = 0; i < count; ++i) {
    const uint64_t gone = uint64_t(round) * 100 + i;
    ASSERT_OK(db.Delete(gone));
    model->erase(gone);
    deleted->push_back(gone);
    const uint64_t changed = uint64_t(round) * 100 + 50 + i;
    (*model)[changed] = RandomVector(kDim, 5000 + changed);
    ASSERT_OK(db.Put(changed, (*model)[changed]));
  }
}

void ExpectSearchesMatchTheOracle(DB& db, const VectorMap& model) {
  for (uint64_t q = 0; q < 5; ++q) {
    const std::vector<float> query = RandomVector(kDim, 77 + q);
    SearchOptions so;
    so.k = 10;
    so.list_size = 200;
    ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got, db.Search(query, so));
    EXPECT_TRUE(MatchesOracle(got, model, query, Metric::kL2, 10));
  }
}

// The statistics of the database's one shard.
ShardReport OnlyShard(DB& db) {
  absl::StatusOr<std::vector<CollectionReport>> stats = CollectStats(db);
  EXPECT_TRUE(stats.ok()) << stats.status();
  return stats.ok() && stats->size() == 1 && stats->front().shards.size() == 1
             ? stats->front().shards[0]
             : ShardReport{};
}

TEST(CompactionTest, ShardKeepsLogarithmicallyManySegmentsWithoutCompactCalls) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(SmallMemtables(true), dir.path()));
  VectorMap model;
  // 64 rounds of 100 vectors: 6,400 vectors, ~30 flushes.
  ASSERT_NO_FATAL_FAILURE(WriteRounds(*db, 64, 100, &model));
  ASSERT_OK(db->WaitForCompact());
  const size_t segments = SegmentFiles(dir.path()).size();
  // Size-tiered with T = 4: at most about 3 segments per power of 4 of the
  // flushes (here < 64 = 4^3): 9, and far fewer than one per flush.
  EXPECT_GE(segments, 1u);
  EXPECT_LE(segments, 9u);
  EXPECT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
  ExpectSearchesMatchTheOracle(*db, model);
  ASSERT_OK(db->Close());
  ASSERT_OK_AND_ASSIGN(db, DB::Open(SmallMemtables(true), dir.path()));
  EXPECT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
}

TEST(CompactionTest, WithCompactionOffEveryFlushStaysASegment) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(SmallMemtables(false), dir.path()));
  VectorMap model;
  ASSERT_NO_FATAL_FAILURE(WriteRounds(*db, 64, 100, &model));
  ASSERT_OK(db->WaitForCompact());
  EXPECT_GT(SegmentFiles(dir.path()).size(), 20u);
  EXPECT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
}

// A large old segment, then small flushes that overwrite and delete some of
// its ids: the policy merges the small ones alone (the old one is far
// larger), so the merged segment must keep their tombstones, or the deleted
// ids would come back from the old segment.
TEST(CompactionTest, MergingNewerSegmentsKeepsTombstonesThatHideOlderOnes) {
  TempDir dir;
  Options options = SmallMemtables(true);
  options.memtable_bytes = 8 << 20;  // flushes only when asked
  options.compaction.fold_ratio = 1e9;  // tiers only: the old segment stays out
  options.compaction.quiescent_fold_ratio = 1e9;
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, dir.path()));
  VectorMap model;
  ASSERT_NO_FATAL_FAILURE(WriteRounds(*db, 1, 3000, &model));  // the old segment
  std::vector<uint64_t> deleted;
  for (int round = 0; round < 8; ++round) {
    // Each small flush deletes 5 old ids and overwrites 5 others.
    ASSERT_NO_FATAL_FAILURE(DeleteAndOverwrite(*db, round, 5, &model, &deleted));
    ASSERT_OK(db->Flush());
  }
  ASSERT_OK(db->WaitForCompact());
  // Merged: fewer than the 9 segments written, yet the old one is still there.
  const size_t segments = SegmentFiles(dir.path()).size();
  EXPECT_LT(segments, 9u);
  EXPECT_GE(segments, 2u);
  EXPECT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, model, deleted));
  ExpectSearchesMatchTheOracle(*db, model);
  ASSERT_OK(db->Close());
  ASSERT_OK_AND_ASSIGN(db, DB::Open(options, dir.path()));
  EXPECT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, model, deleted));
  // A full Compact() then drops the tombstones and the old versions alike.
  ASSERT_OK(db->Compact());
  EXPECT_EQ(SegmentFiles(dir.path()).size(), 1u);
  EXPECT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, model, deleted));
}

// The fold: small flushes that overwrite, delete and add ids are merged into
// the large segment once they add up to fold_ratio of it (or
// quiescent_fold_ratio once nothing is left unflushed), extending its graph.
TEST(CompactionTest, SmallFlushesFoldIntoTheLargeSegment) {
  TempDir dir;
  Options options = SmallMemtables(true);
  options.memtable_bytes = 8 << 20;  // flushes only when asked
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, dir.path()));
  VectorMap model;
  ASSERT_NO_FATAL_FAILURE(WriteRounds(*db, 1, 3000, &model));  // the large segment
  std::vector<uint64_t> deleted;
  for (int round = 0; round < 6; ++round) {
    // 100 entries a flush: 1/30 of the large segment, above the quiescent
    // ratio (1/64), below the fold ratio (1/8).
    ASSERT_NO_FATAL_FAILURE(DeleteAndOverwrite(*db, round, 10, &model, &deleted));
    ASSERT_NO_FATAL_FAILURE(WriteRounds(*db, 1, 80, &model, 10000 + uint64_t(round) * 100));
    ASSERT_OK(db->WaitForCompact());
    // Quiescent after each Flush: every flush is folded in at once.
    EXPECT_EQ(SegmentFiles(dir.path()).size(), 1u) << "round " << round;
  }
  EXPECT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, model, deleted));
  ExpectSearchesMatchTheOracle(*db, model);
  ASSERT_OK(db->Close());
  ASSERT_OK_AND_ASSIGN(db, DB::Open(options, dir.path()));
  EXPECT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, model, deleted));
  ExpectSearchesMatchTheOracle(*db, model);
}

// A flush that makes the fold due merges the memtable straight into the
// large segment (its vectors inserted into that graph once), in the flush
// itself: when Flush returns there is one segment, before any background
// merge could have run.
TEST(CompactionTest, AFlushThatMakesTheFoldDueMergesIntoTheLargeSegmentAtOnce) {
  TempDir dir;
  Options options = SmallMemtables(true);
  options.memtable_bytes = 8 << 20;
  options.compaction.quiescent_fold_ratio = options.compaction.fold_ratio;  // 1/8
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, dir.path()));
  VectorMap model;
  ASSERT_NO_FATAL_FAILURE(WriteRounds(*db, 1, 3200, &model));
  ASSERT_OK(db->WaitForCompact());
  // 300 < 3200 / 8: a segment of its own.
  ASSERT_NO_FATAL_FAILURE(WriteRounds(*db, 1, 300, &model, 10000));
  ASSERT_OK(db->WaitForCompact());
  EXPECT_EQ(SegmentFiles(dir.path()).size(), 2u);
  // 300 + 200 >= 400: folded by the flush.
  for (uint64_t i = 0; i < 200; ++i) {
    model[20000 + i] = RandomVector(kDim, 20000 + i);
    ASSERT_OK(db->Put(20000 + i, model[20000 + i]));
  }
  ASSERT_OK(db->Delete(5));
  model.erase(5);
  const std::vector<uint64_t> deleted = {5};
  ASSERT_OK(db->Flush());
  EXPECT_EQ(SegmentFiles(dir.path()).size(), 1u);
  EXPECT_EQ(OnlyShard(*db).stored_vectors, 3699u);
  EXPECT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, model, deleted));
  ExpectSearchesMatchTheOracle(*db, model);
  ASSERT_OK(db->Close());
  ASSERT_OK_AND_ASSIGN(db, DB::Open(options, dir.path()));
  EXPECT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, model, deleted));
}

TEST(CompactionTest, WithoutQuiescentFoldSmallFlushesWaitForTheFoldRatio) {
  TempDir dir;
  Options options = SmallMemtables(true);
  options.memtable_bytes = 8 << 20;
  options.compaction.quiescent_fold_ratio = options.compaction.fold_ratio;  // 1/8
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, dir.path()));
  VectorMap model;
  ASSERT_NO_FATAL_FAILURE(WriteRounds(*db, 1, 3200, &model));
  // 100 vectors a flush: the third brings the newer ones to 300 < 400 = 3200
  // / 8, the fourth to 400.
  for (int round = 0; round < 3; ++round) {
    ASSERT_NO_FATAL_FAILURE(WriteRounds(*db, 1, 100, &model, 10000 + uint64_t(round) * 100));
  }
  ASSERT_OK(db->WaitForCompact());
  EXPECT_EQ(SegmentFiles(dir.path()).size(), 4u);
  ASSERT_NO_FATAL_FAILURE(WriteRounds(*db, 1, 100, &model, 20000));
  ASSERT_OK(db->WaitForCompact());
  EXPECT_EQ(SegmentFiles(dir.path()).size(), 1u);
  EXPECT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
  ExpectSearchesMatchTheOracle(*db, model);
}

// Inspection (`shoal stats`): dead vectors (deleted or overwritten, still
// stored) count until a merge drops them.
TEST(CompactionTest, StatsCountDeadVectorsUntilAMergeDropsThem) {
  TempDir dir;
  Options options = SmallMemtables(false);  // only Compact() merges
  options.memtable_bytes = 8 << 20;
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, dir.path()));
  VectorMap model;
  ASSERT_NO_FATAL_FAILURE(WriteRounds(*db, 1, 1000, &model));
  for (uint64_t id = 0; id < 100; ++id) ASSERT_OK(db->Delete(id));
  for (uint64_t id = 100; id < 200; ++id) ASSERT_OK(db->Put(id, RandomVector(kDim, id)));
  auto shard = [&] { return OnlyShard(*db); };
  // In the memtable: 1,100 stored, 900 live.
  ShardReport s = shard();
  EXPECT_EQ(s.stored_vectors, 1100u);
  EXPECT_EQ(s.live_vectors, 900u);
  EXPECT_DOUBLE_EQ(s.SpaceAmplification(), 1100.0 / 900.0);
  EXPECT_DOUBLE_EQ(s.DeadFraction(), 200.0 / 1100.0);
  ASSERT_OK(db->Flush());  // the same, across two segments
  s = shard();
  EXPECT_EQ(s.segments, 2u);
  EXPECT_EQ(s.stored_vectors, 1100u);
  EXPECT_EQ(s.live_vectors, 900u);
  ASSERT_OK(db->Compact());
  s = shard();
  EXPECT_EQ(s.segments, 1u);
  EXPECT_EQ(s.stored_vectors, 900u);
  EXPECT_EQ(s.live_vectors, 900u);
  EXPECT_DOUBLE_EQ(s.SpaceAmplification(), 1.0);
  EXPECT_DOUBLE_EQ(s.DeadFraction(), 0.0);
}

// Flushes only when asked, and of the merges only consolidation at
// `dead_fraction` (no fold, no tiers).
Options ConsolidationOnly(double dead_fraction) {
  Options o = SmallMemtables(true);
  o.memtable_bytes = 8 << 20;
  o.compaction.fold_ratio = 1e9;
  o.compaction.quiescent_fold_ratio = 1e9;
  o.compaction.min_merge_width = 1000;
  o.compaction.consolidate_dead_fraction = dead_fraction;
  return o;
}

// Consolidation: deletes and overwrites that no merge is due to drop (here
// neither a fold nor a tier is ever due) free their space once they make up
// consolidate_dead_fraction of a segment's vectors: that segment alone is
// rewritten without them, while the newer segments that hide them stay.
TEST(CompactionTest, ASegmentIsRewrittenWithoutItsDeadVectorsOnceTheyPassTheThreshold) {
  TempDir dir;
  const Options options = ConsolidationOnly(0.25);
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, dir.path()));
  VectorMap model;
  ASSERT_NO_FATAL_FAILURE(WriteRounds(*db, 1, 1000, &model));  // the large segment
  std::vector<uint64_t> deleted;
  // 200 of its 1,000 vectors dead: below the threshold, nothing is rewritten.
  for (int round = 0; round < 2; ++round) {
    ASSERT_NO_FATAL_FAILURE(DeleteAndOverwrite(*db, round, 50, &model, &deleted));
  }
  ASSERT_OK(db->Flush());
  ASSERT_OK(db->WaitForCompact());
  ShardReport s = OnlyShard(*db);
  EXPECT_EQ(s.segments, 2u);
  EXPECT_EQ(s.stored_vectors, 1100u);
  EXPECT_EQ(s.live_vectors, 900u);
  // 300 dead (30%): the large segment is rewritten with its 700 live ones.
  ASSERT_NO_FATAL_FAILURE(DeleteAndOverwrite(*db, 2, 50, &model, &deleted));
  ASSERT_OK(db->Flush());
  ASSERT_OK(db->WaitForCompact());
  s = OnlyShard(*db);
  EXPECT_EQ(s.segments, 3u);
  EXPECT_EQ(s.stored_vectors, 850u);
  EXPECT_EQ(s.live_vectors, 850u);
  EXPECT_DOUBLE_EQ(s.DeadFraction(), 0.0);
  EXPECT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, model, deleted));
  ExpectSearchesMatchTheOracle(*db, model);
  ASSERT_OK(db->Close());
  ASSERT_OK_AND_ASSIGN(db, DB::Open(options, dir.path()));
  EXPECT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, model, deleted));
  ExpectSearchesMatchTheOracle(*db, model);
  EXPECT_EQ(OnlyShard(*db).stored_vectors, 850u);
}

// The same segment is rewritten only when a newer one hides enough of it:
// dead vectors of newer segments (overwritten twice) count for those.
TEST(CompactionTest, ConsolidationTakesTheSegmentWhoseVectorsAreDeadNotTheNewest) {
  TempDir dir;
  const Options options = ConsolidationOnly(0.5);
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, dir.path()));
  VectorMap model;
  ASSERT_NO_FATAL_FAILURE(WriteRounds(*db, 1, 1000, &model));          // A: ids 0..999
  ASSERT_NO_FATAL_FAILURE(WriteRounds(*db, 1, 100, &model, 5000));     // B: ids 5000..5099
  // C overwrites 60 of B's 100 (60% dead) and 60 of A's (6%).
  for (uint64_t i = 0; i < 60; ++i) {
    for (uint64_t id : {5000 + i, i}) {
      model[id] = RandomVector(kDim, 9000 + id);
      ASSERT_OK(db->Put(id, model[id]));
    }
  }
  ASSERT_OK(db->Flush());
  ASSERT_OK(db->WaitForCompact());
  ShardReport s = OnlyShard(*db);
  EXPECT_EQ(s.segments, 3u);
  // B lost its 60 dead; A kept its 60 (below its threshold).
  EXPECT_EQ(s.stored_vectors, 1000u + 40u + 120u);
  EXPECT_EQ(s.live_vectors, 1100u);
  EXPECT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
  ExpectSearchesMatchTheOracle(*db, model);
}

// Back-pressure: writes that outpace merges wait for them once a shard holds
// max_segments segments, so the count stays bounded (the merges here are
// slow next to the flushes: a fold inserts thousands of vectors, a flush
// builds ~200).
TEST(CompactionTest, WritesWaitForMergesSoSegmentsStayBounded) {
  TempDir dir;
  Options options = SmallMemtables(true);
  options.compaction.max_segments = 3;
  options.compaction.min_merge_width = 2;
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, dir.path()));
  VectorMap model;
  size_t most = 0;
  for (int round = 0; round < 60; ++round) {
    std::vector<uint64_t> ids;
    for (uint64_t i = 0; i < 200; ++i) ids.push_back(uint64_t(round) * 200 + i);
    const std::vector<float> rows = RandomVectors(ids.size(), kDim, 300 + round);
    ASSERT_OK(db->PutBatch(ids, rows));
    for (size_t i = 0; i < ids.size(); ++i) {
      model[ids[i]] = std::vector<float>(Row(rows, i, kDim).begin(), Row(rows, i, kDim).end());
    }
    most = std::max<size_t>(most, OnlyShard(*db).segments);
  }
  // A write is admitted below max_segments; its freeze and the flushes
  // already queued (at most two frozen memtables) may add one each.
  EXPECT_LE(most, options.compaction.max_segments + 2);
  ASSERT_OK(db->Flush());
  ASSERT_OK(db->WaitForCompact());
  EXPECT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
}

TEST(CompactionTest, BadCompactionOptionsAreInvalidArgument) {
  TempDir dir;
  Options o = SmallMemtables(true);
  o.compaction.min_merge_width = 1;
  EXPECT_STATUS_CODE(DB::Open(o, dir.path()), absl::StatusCode::kInvalidArgument);
  o = SmallMemtables(true);
  o.compaction.size_ratio = -1;
  EXPECT_STATUS_CODE(DB::Open(o, dir.path()), absl::StatusCode::kInvalidArgument);
  o.compaction.size_ratio = std::nan("");
  EXPECT_STATUS_CODE(DB::Open(o, dir.path()), absl::StatusCode::kInvalidArgument);
  o = SmallMemtables(true);
  o.compaction.fold_ratio = -0.5;
  EXPECT_STATUS_CODE(DB::Open(o, dir.path()), absl::StatusCode::kInvalidArgument);
  o = SmallMemtables(true);
  o.compaction.quiescent_fold_ratio = std::numeric_limits<double>::infinity();
  EXPECT_STATUS_CODE(DB::Open(o, dir.path()), absl::StatusCode::kInvalidArgument);
  o = SmallMemtables(true);
  o.compaction.consolidate_dead_fraction = 0;
  EXPECT_STATUS_CODE(DB::Open(o, dir.path()), absl::StatusCode::kInvalidArgument);
  o.compaction.consolidate_dead_fraction = 1.5;
  EXPECT_STATUS_CODE(DB::Open(o, dir.path()), absl::StatusCode::kInvalidArgument);
  o = SmallMemtables(true);
  o.compaction.max_segments = 1;
  EXPECT_STATUS_CODE(DB::Open(o, dir.path()), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace shoal::test
