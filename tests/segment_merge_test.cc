// Copyright 2026 The shoal Authors.
//
// Segments built from a seed (GraphSeed: a merge extending its largest
// input's graph): the result holds exactly the contents, dropped nodes are
// gone and no list points at them, recall matches a build from scratch, and
// a bad seed is InvalidArgument.

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "distance/distance.h"
#include "gtest/gtest.h"
#include "segment/segment.h"
#include "testutil/sanitized.h"
#include "testutil/temp_dir.h"
#include "util/file_system.h"
#include "util/thread_pool.h"
#include "util/top_k.h"

namespace shoal {
namespace {

using test::kSanitized;

constexpr size_t kPoints = kSanitized ? 3000 : 20000;
constexpr size_t kQueries = kSanitized ? 40 : 200;
constexpr uint32_t kDim = 48;

// Anisotropic data without clean clusters (a decaying spectrum, as real
// embeddings have), so that the graph, not the clusters, carries recall.
std::vector<float> Spectrum(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  std::vector<float> out(n * kDim);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < kDim; ++j) out[i * kDim + j] = gauss(rng) / std::sqrt(1.0f + j);
  }
  return out;
}

struct Rows {
  std::vector<uint64_t> ids, sequences;
  std::vector<float> vectors;

  SegmentContents contents(const GraphSeed* seed = nullptr) const {
    SegmentContents c;
    c.dim = kDim;
    c.metric = Metric::kL2;
    c.ids = ids;
    c.sequences = sequences;
    c.vectors = vectors.data();
    c.seed = seed;
    return c;
  }
  void Add(uint64_t id, const float* v) {
    ids.push_back(id);
    sequences.push_back(id + 1);
    vectors.insert(vectors.end(), v, v + kDim);
  }
};

class SegmentMergeTest : public ::testing::Test {
 protected:
  std::shared_ptr<Segment> Build(const SegmentContents& c, const std::string& name) {
    const absl::Status built = BuildSegment(FileSystem::Default(), &pool_, dir_.Sub(name), c, {});
    EXPECT_TRUE(built.ok()) << built;
    auto segment = Segment::Open(FileSystem::Default(), dir_.Sub(name), kDim, Metric::kL2);
    EXPECT_TRUE(segment.ok()) << segment.status();
    return segment.ok() ? *segment : nullptr;
  }

  // Mean recall@10 at list size 60 against brute force over `rows`.
  double Recall(const Segment& segment, const Rows& rows) {
    const std::vector<float> queries = Spectrum(kQueries, 99);
    double recall = 0;
    for (size_t q = 0; q < kQueries; ++q) {
      const float* query = &queries[q * kDim];
      std::vector<std::pair<float, uint64_t>> all;
      for (size_t i = 0; i < rows.ids.size(); ++i) {
        all.push_back({Distance(Metric::kL2, query, &rows.vectors[i * kDim], kDim), rows.ids[i]});
      }
      std::partial_sort(all.begin(), all.begin() + 10, all.end());
      std::set<uint64_t> truth;
      for (size_t i = 0; i < 10; ++i) truth.insert(all[i].second);
      SearchOptions options;
      options.k = 10;
      options.list_size = 60;
      TopK top(10);
      EXPECT_TRUE(segment.Search(query, options, {}, &top).ok());
      for (const Neighbor& n : top.Take()) recall += truth.count(n.id) / 10.0;
    }
    return recall / kQueries;
  }

  test::TempDir dir_;
  ThreadPool pool_{2};
};

// Base: the first quarter of the points. Merged: the base minus every
// tenth of its nodes (dropped, as if overwritten), plus the other points.
struct MergeCase {
  Rows base, merged;
  GraphSeed seed;
  std::set<uint64_t> dropped;
};

TEST_F(SegmentMergeTest, SeededBuildHoldsTheContentsAndRecallsLikeAFreshBuild) {
  const std::vector<float> points = Spectrum(kPoints, 1);
  MergeCase m;
  for (size_t i = 0; i < kPoints / 4; ++i) m.base.Add(i, &points[i * kDim]);
  std::shared_ptr<Segment> base = Build(m.base.contents(), "base");
  ASSERT_NE(base, nullptr);

  m.seed.segment = base.get();
  m.seed.row_of_node.assign(base->vector_count(), GraphSeed::kDroppedNode);
  ASSERT_TRUE(base->ForEachNode([&](uint32_t node, uint64_t id, uint64_t, const float* v,
                                    std::span<const uint32_t>) {
                    if (id % 10 == 3) {
                      m.dropped.insert(id);
                      return;
                    }
                    m.seed.row_of_node[node] = static_cast<uint32_t>(m.merged.ids.size());
                    m.merged.Add(id, v);
                  }).ok());
  for (size_t i = kPoints / 4; i < kPoints; ++i) m.merged.Add(i, &points[i * kDim]);

  std::shared_ptr<Segment> seeded = Build(m.merged.contents(&m.seed), "seeded");
  std::shared_ptr<Segment> fresh = Build(m.merged.contents(), "fresh");
  ASSERT_NE(seeded, nullptr);
  ASSERT_NE(fresh, nullptr);
  ASSERT_TRUE(seeded->VerifyAll().ok());

  // Exactly the contents: every id once, none of the dropped ones.
  EXPECT_EQ(seeded->vector_count(), m.merged.ids.size());
  std::set<uint64_t> listed;
  ASSERT_TRUE(seeded->ForEachNode([&](uint32_t, uint64_t id, uint64_t sequence, const float*,
                                      std::span<const uint32_t> neighbors) {
                      EXPECT_TRUE(listed.insert(id).second) << id;
                      EXPECT_EQ(sequence, id + 1);
                      EXPECT_FALSE(m.dropped.contains(id)) << id;
                      EXPECT_GT(neighbors.size(), 0u) << id;
                    }).ok());
  EXPECT_EQ(listed.size(), m.merged.ids.size());

  const double seeded_recall = Recall(*seeded, m.merged);
  const double fresh_recall = Recall(*fresh, m.merged);
  EXPECT_GE(seeded_recall, 0.95);
  EXPECT_GE(seeded_recall, fresh_recall - 0.02) << "fresh " << fresh_recall;
}

TEST_F(SegmentMergeTest, SeedThatDropsEveryNodeBuildsTheRestFromScratch) {
  const std::vector<float> points = Spectrum(400, 2);
  Rows base, merged;
  for (size_t i = 0; i < 100; ++i) base.Add(i, &points[i * kDim]);
  std::shared_ptr<Segment> segment = Build(base.contents(), "base");
  ASSERT_NE(segment, nullptr);
  GraphSeed seed;
  seed.segment = segment.get();
  seed.row_of_node.assign(100, GraphSeed::kDroppedNode);
  for (size_t i = 100; i < 400; ++i) merged.Add(i, &points[i * kDim]);
  std::shared_ptr<Segment> out = Build(merged.contents(&seed), "out");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->vector_count(), 300u);
  EXPECT_TRUE(out->VerifyAll().ok());
}

TEST_F(SegmentMergeTest, SeedNamingRowsWronglyIsInvalidArgument) {
  const std::vector<float> points = Spectrum(50, 3);
  Rows base;
  for (size_t i = 0; i < 50; ++i) base.Add(i, &points[i * kDim]);
  std::shared_ptr<Segment> segment = Build(base.contents(), "base");
  ASSERT_NE(segment, nullptr);
  GraphSeed seed;
  seed.segment = segment.get();
  auto build = [&](const std::string& name) {
    return BuildSegment(FileSystem::Default(), &pool_, dir_.Sub(name), base.contents(&seed), {});
  };
  seed.row_of_node.assign(49, 0);  // one short
  EXPECT_EQ(build("a").code(), absl::StatusCode::kInvalidArgument);
  seed.row_of_node.assign(50, 7);  // row 7 twice
  EXPECT_EQ(build("b").code(), absl::StatusCode::kInvalidArgument);
  seed.row_of_node.assign(50, GraphSeed::kDroppedNode);
  seed.row_of_node[0] = 50;  // past the rows
  EXPECT_EQ(build("c").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(FileSystem::Default()->Exists(dir_.Sub("a")));
  EXPECT_FALSE(FileSystem::Default()->Exists(dir_.Sub("c")));
}

}  // namespace
}  // namespace shoal
