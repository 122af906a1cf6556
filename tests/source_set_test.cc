// Copyright 2026 The shoal Authors.
//
// The source set: segments stay ranked by sequence whatever order they come
// in, a snapshot lists every source newest first, the newest source that
// names an id decides it (a tombstone hides older vectors), and compaction
// inputs stop below the first source that is not an old enough segment.

#include "version/source_set.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "segment/segment.h"
#include "testutil/temp_dir.h"
#include "util/thread_pool.h"

namespace shoal {
namespace {

constexpr uint32_t kDim = 4;

class SourceSetTest : public ::testing::Test {
 protected:
  // A memtable holding `puts` (id -> a vector whose first component is
  // `value`) and tombstones for `deletes`.
  std::shared_ptr<const MemTable> Mem(const std::vector<std::pair<uint64_t, float>>& puts,
                                      const std::vector<uint64_t>& deletes = {}) {
    auto mem = std::make_shared<MemTable>(kDim, 1 << 16, false, 1 << 20, nullptr);
    for (const auto& [id, value] : puts) {
      const std::vector<float> v = {value, 0, 0, 0};
      mem->Put(id, v.data());
    }
    for (uint64_t id : deletes) mem->Delete(id);
    return mem;
  }
  // A segment file holding `puts` (as Mem) at `sequence` and tombstones.
  SegmentSource Seg(uint64_t number, uint64_t min_sequence, uint64_t max_sequence,
                    const std::vector<std::pair<uint64_t, float>>& puts,
                    const std::vector<uint64_t>& deletes = {}) {
    std::vector<uint64_t> ids, sequences(puts.size(), max_sequence);
    std::vector<float> rows;
    for (const auto& [id, value] : puts) {
      ids.push_back(id);
      rows.insert(rows.end(), {value, 0, 0, 0});
    }
    const std::vector<uint64_t> tombstone_sequences(deletes.size(), max_sequence);
    SegmentContents contents;
    contents.dim = kDim;
    contents.ids = ids;
    contents.sequences = sequences;
    contents.vectors = rows.data();
    contents.tombstone_ids = deletes;
    contents.tombstone_sequences = tombstone_sequences;
    const std::string path = dir_.Sub("seg-" + std::to_string(number));
    EXPECT_TRUE(BuildSegment(FileSystem::Default(), &pool_, path, contents, {}).ok());
    absl::StatusOr<std::shared_ptr<Segment>> segment =
        Segment::Open(FileSystem::Default(), path, kDim, Metric::kL2);
    EXPECT_TRUE(segment.ok()) << segment.status();
    return {*segment, SegmentMeta{number, min_sequence, max_sequence, ids.size(),
                                  deletes.size()}};
  }
  // The first component of the newest version of `id`, or -1 when deleted,
  // -2 when absent.
  static float Newest(const SourceSnapshot& snapshot, uint64_t id, size_t end = SIZE_MAX) {
    std::vector<float> v;
    absl::StatusOr<SourceSnapshot::Lookup> found = snapshot.Find(id, end, &v);
    EXPECT_TRUE(found.ok()) << found.status();
    if (*found == SourceSnapshot::Lookup::kDeleted) return -1;
    if (*found == SourceSnapshot::Lookup::kAbsent) return -2;
    return v[0];
  }
  static std::vector<uint64_t> Numbers(const std::vector<SegmentSource>& segments) {
    std::vector<uint64_t> out;
    for (const SegmentSource& s : segments) out.push_back(s.meta.number);
    return out;
  }

  test::TempDir dir_;
  ThreadPool pool_{1};
};

TEST_F(SourceSetTest, SegmentsStayRankedByMaxSequenceWhateverTheOrderAdded) {
  SourceSet set;
  set.AddSegment(Seg(3, 21, 30, {{1, 3}}));
  set.AddSegment(Seg(1, 1, 10, {{1, 1}}));
  set.AddSegment(Seg(2, 11, 20, {{1, 2}}));
  EXPECT_EQ(Numbers(set.segments()), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(set.MaxSegmentSequence(), 30u);
  // A compaction of the two oldest ranks by its newest input.
  set.ReplaceSegments(std::vector<uint64_t>{1, 2}, Seg(4, 1, 20, {{1, 2}}));
  EXPECT_EQ(Numbers(set.segments()), (std::vector<uint64_t>{4, 3}));
  EXPECT_EQ(Newest(set.Snapshot(), 1), 3);
}

TEST_F(SourceSetTest, SnapshotListsEverySourceNewestFirstAndOutlivesChanges) {
  SourceSet set;
  set.AddSegment(Seg(1, 1, 10, {{1, 1}, {2, 1}}));
  set.AddFrozen({Mem({{1, 5}}), 21, 30, 7});
  set.AddSegment(Seg(2, 11, 20, {{2, 2}}));  // a bulk load between them
  const SourceSnapshot snapshot = set.Snapshot();
  ASSERT_EQ(snapshot.sources().size(), 3u);
  EXPECT_EQ(snapshot.sources()[0].max_sequence, 30u);
  EXPECT_NE(snapshot.sources()[0].mem, nullptr);
  EXPECT_EQ(snapshot.sources()[1].max_sequence, 20u);
  EXPECT_EQ(snapshot.sources()[2].max_sequence, 10u);
  // The set changes (the frozen memtable flushed away); the snapshot keeps
  // what it saw.
  set.RemoveOldestFrozen();
  EXPECT_TRUE(set.frozen().empty());
  EXPECT_EQ(Newest(snapshot, 1), 5);
  EXPECT_EQ(Newest(set.Snapshot(), 1), 1);
}

TEST_F(SourceSetTest, NewestSourceThatNamesAnIdDecidesItTombstonesIncluded) {
  SourceSet set;
  set.AddSegment(Seg(1, 1, 10, {{1, 1}, {2, 1}, {3, 1}}));
  set.AddSegment(Seg(2, 11, 20, {{2, 2}}, {3}));  // 3 deleted
  set.AddFrozen({Mem({{4, 4}}, {1}), 21, 30, 7});  // 1 deleted
  set.AddFrozen({Mem({{3, 6}}), 31, 40, 8});       // 3 back
  const SourceSnapshot snapshot = set.Snapshot();
  EXPECT_EQ(Newest(snapshot, 1), -1);
  EXPECT_EQ(Newest(snapshot, 2), 2);
  EXPECT_EQ(Newest(snapshot, 3), 6);
  EXPECT_EQ(Newest(snapshot, 4), 4);
  EXPECT_EQ(Newest(snapshot, 99), -2);
  // Among the older sources only (what a search of source i asks).
  EXPECT_EQ(Newest(snapshot, 3, 0), -2);
  EXPECT_EQ(Newest(snapshot, 3, 1), 6);
  // Sources newest first: 40 (mem), 30 (mem), 20 (seg 2), 10 (seg 1).
  EXPECT_EQ(Newest(snapshot, 1, 1), -2);  // only the newest memtable
  EXPECT_EQ(Newest(snapshot, 1, 2), -1);
}

TEST_F(SourceSetTest, CompactionInputsStopBelowTheLimitAndEveryFrozenMemtable) {
  SourceSet set;
  set.AddSegment(Seg(1, 1, 10, {{1, 1}}));
  set.AddSegment(Seg(2, 11, 20, {{1, 2}}));
  set.AddSegment(Seg(3, 31, 40, {{1, 3}}));  // newer than the frozen memtable
  EXPECT_EQ(Numbers(set.CompactionInputs(100)), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(Numbers(set.CompactionInputs(20)), (std::vector<uint64_t>{1}));
  EXPECT_TRUE(set.CompactionInputs(10).empty());
  set.AddFrozen({Mem({{1, 9}}), 21, 30, 7});
  EXPECT_EQ(Numbers(set.CompactionInputs(100)), (std::vector<uint64_t>{1, 2}));
  set.ClearFrozen();
  EXPECT_EQ(Numbers(set.CompactionInputs(100)), (std::vector<uint64_t>{1, 2, 3}));
}

TEST_F(SourceSetTest, FoldTakesTheLargestAndEveryNewerSegmentOnceTheyAddUp) {
  auto sets = [&](const std::vector<uint64_t>& sizes) {
    SourceSet set;
    for (size_t i = 0; i < sizes.size(); ++i) {
      std::vector<std::pair<uint64_t, float>> puts;
      for (uint64_t id = 0; id < sizes[i]; ++id) puts.push_back({id, 1});
      set.AddSegment(Seg(i + 1, 10 * i + 1, 10 * i + 10, puts));
    }
    return set;
  };
  auto fold = [&](const std::vector<uint64_t>& sizes, double ratio, uint64_t limit = 1000) {
    return Numbers(sets(sizes).FoldInputs(limit, ratio));
  };
  EXPECT_TRUE(fold({80}, 0.125).empty());            // nothing newer
  EXPECT_TRUE(fold({80, 5, 4}, 0.125).empty());      // 9 < 10
  EXPECT_EQ(fold({80, 5, 5}, 0.125), (std::vector<uint64_t>{1, 2, 3}));
  // Older, smaller segments stay out; the largest need not be the oldest.
  EXPECT_EQ(fold({3, 80, 5, 5}, 0.125), (std::vector<uint64_t>{2, 3, 4}));
  // Only below the limit: segment 3 (sequences 21..30) is not an input.
  EXPECT_TRUE(fold({80, 5, 5}, 0.125, 25).empty());
  // Fold before tiers; the quiescent ratio when quiescent.
  CompactionOptions options;
  options.fold_ratio = 0.5;
  options.quiescent_fold_ratio = 0.0625;
  const SourceSet set = sets({80, 5, 5, 5, 5});
  EXPECT_EQ(Numbers(set.PickCompaction(1000, options, /*quiescent=*/false)),
            (std::vector<uint64_t>{2, 3, 4, 5}));  // the tier: 20 < 40
  EXPECT_EQ(Numbers(set.PickCompaction(1000, options, /*quiescent=*/true)),
            (std::vector<uint64_t>{1, 2, 3, 4, 5}));  // the fold: 20 >= 5
}

TEST_F(SourceSetTest, SizeTieredPolicyMergesTheNewestRunOfSimilarSizes) {
  CompactionOptions four;  // T = 4, size_ratio 0.2
  auto run = [&](const std::vector<uint64_t>& sizes, uint64_t limit = 1000) {
    SourceSet set;
    for (size_t i = 0; i < sizes.size(); ++i) {
      std::vector<std::pair<uint64_t, float>> puts;
      for (uint64_t id = 0; id < sizes[i]; ++id) puts.push_back({id, 1});
      SegmentSource s = Seg(i + 1, 10 * i + 1, 10 * i + 10, puts);
      set.AddSegment(std::move(s));
    }
    return Numbers(set.SizeTieredInputs(limit, four));
  };
  EXPECT_TRUE(run({5, 5, 5}).empty());  // fewer than T
  EXPECT_EQ(run({5, 5, 5, 5}), (std::vector<uint64_t>{1, 2, 3, 4}));
  // A much larger old segment stays out of the run.
  EXPECT_EQ(run({100, 5, 5, 5, 5}), (std::vector<uint64_t>{2, 3, 4, 5}));
  // An older segment up to (1 + 0.2) x the run so far joins it.
  EXPECT_EQ(run({24, 5, 5, 5, 5}), (std::vector<uint64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(run({25, 5, 5, 5, 5}), (std::vector<uint64_t>{2, 3, 4, 5}));
  // Older, smaller segments join a big newest one.
  EXPECT_EQ(run({5, 5, 5, 5, 100}), (std::vector<uint64_t>{1, 2, 3, 4, 5}));
  // A small newest segment (the tail of a flush) does not block the run
  // behind it.
  EXPECT_EQ(run({5, 5, 5, 5, 2}), (std::vector<uint64_t>{1, 2, 3, 4}));
  EXPECT_TRUE(run({5, 5, 5, 2}).empty());
  // Only segments below the limit (older than what is not a segment yet).
  EXPECT_TRUE(run({5, 5, 5, 5}, 31).empty());
}

}  // namespace
}  // namespace shoal
