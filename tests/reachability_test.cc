// Copyright 2026 The shoal Authors.
//
// Every stored vector can be found (issue 41): every graph a build or a
// merge writes reaches every node from the medoid, for every max_degree; a
// search whose list (or k) is as long as a segment returns every live
// vector whatever its graph; a vector's own values find it; a graph left
// unconnected by an older build is reported by `shoal verify` and healed by
// the next merge that extends it.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "db/inspect.h"
#include "gtest/gtest.h"
#include "segment/graph_reach.h"
#include "segment/segment.h"
#include "shoal/db.h"
#include "testutil/sanitized.h"
#include "testutil/temp_dir.h"
#include "util/file_system.h"
#include "util/thread_pool.h"
#include "util/top_k.h"

namespace shoal {
namespace {

using test::kSanitized;
using test::TempDir;

constexpr uint32_t kDim = 32;

// Gaussian points, as the probes used: no clusters to lean on.
std::vector<float> Gaussian(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  std::vector<float> out(n * kDim);
  for (float& x : out) x = gauss(rng);
  return out;
}

std::vector<uint64_t> Iota(size_t n) {
  std::vector<uint64_t> ids(n);
  for (size_t i = 0; i < n; ++i) ids[i] = i;
  return ids;
}

SegmentContents Contents(const std::vector<uint64_t>& ids, const std::vector<uint64_t>& seqs,
                         const std::vector<float>& vectors, const GraphSeed* seed = nullptr) {
  SegmentContents c;
  c.dim = kDim;
  c.metric = Metric::kL2;
  c.ids = ids;
  c.sequences = seqs;
  c.vectors = vectors.data();
  c.seed = seed;
  return c;
}

struct GraphCase {
  size_t points;
  uint32_t max_degree;
  uint32_t build_list_size;
};

std::string CaseName(const ::testing::TestParamInfo<GraphCase>& info) {
  return "n" + std::to_string(info.param.points) + "_R" +
         std::to_string(info.param.max_degree) + "_L" +
         std::to_string(info.param.build_list_size);
}

class BuildReachTest : public ::testing::TestWithParam<GraphCase> {
 protected:
  // Builds a segment of the case's points (with or without the connecting
  // step) and opens it.
  std::shared_ptr<Segment> Build(bool connect, const std::string& name,
                                 SegmentBuildStats* stats = nullptr) {
    const GraphCase& c = GetParam();
    ids_ = Iota(c.points);
    vectors_ = Gaussian(c.points, 7);
    SegmentBuildOptions options;
    options.graph.max_degree = c.max_degree;
    options.graph.build_list_size = c.build_list_size;
    options.connect = connect;
    const absl::Status built = BuildSegment(FileSystem::Default(), &pool_, dir_.Sub(name),
                                            Contents(ids_, ids_, vectors_), options, stats);
    EXPECT_TRUE(built.ok()) << built;
    auto segment = Segment::Open(FileSystem::Default(), dir_.Sub(name), kDim, Metric::kL2);
    EXPECT_TRUE(segment.ok()) << segment.status();
    return segment.ok() ? *segment : nullptr;
  }

  TempDir dir_;
  ThreadPool pool_{2};
  std::vector<uint64_t> ids_;
  std::vector<float> vectors_;
};

// The table (25K Gaussian points at R 16 / L 40 left 5.3% of them
// unreachable) and the smallest degrees the options allow.
INSTANTIATE_TEST_SUITE_P(
    Degrees, BuildReachTest,
    ::testing::Values(GraphCase{kSanitized ? 5000u : 25000u, 16, 40},
                      GraphCase{kSanitized ? 5000u : 25000u, 64, 100},
                      GraphCase{kSanitized ? 2000u : 10000u, 1, 10},
                      GraphCase{kSanitized ? 2000u : 10000u, 2, 10},
                      GraphCase{kSanitized ? 2000u : 10000u, 4, 20}),
    CaseName);

TEST_P(BuildReachTest, EveryNodeIsReachableFromTheMedoid) {
  SegmentBuildStats stats;
  std::shared_ptr<Segment> segment = Build(/*connect=*/true, "seg", &stats);
  ASSERT_NE(segment, nullptr);
  ASSERT_OK_AND_ASSIGN(const uint64_t unreachable, segment::CountUnreachableNodes(*segment));
  EXPECT_EQ(unreachable, 0u) << "linked " << stats.connected_nodes;
}

TEST_P(BuildReachTest, AListAsLongAsTheSegmentReturnsEveryVectorOfAnUnconnectedGraph) {
  std::shared_ptr<Segment> segment = Build(/*connect=*/false, "old");
  ASSERT_NE(segment, nullptr);
  SearchOptions options;
  options.k = std::numeric_limits<uint32_t>::max();
  options.list_size = std::numeric_limits<uint32_t>::max();
  TopK top(options.k);
  ASSERT_OK(segment->Search(vectors_.data(), options, {}, &top));
  const std::vector<Neighbor> all = top.Take();
  std::set<uint64_t> found;
  for (const Neighbor& n : all) found.insert(n.id);
  EXPECT_EQ(found.size(), GetParam().points);
  // At exactly the segment's size too, with a k of 10.
  options.k = 10;
  options.list_size = static_cast<uint32_t>(GetParam().points);
  for (size_t i = 0; i < 50; ++i) {
    TopK one(options.k);
    ASSERT_OK(segment->Search(vectors_.data() + i * kDim, options, {}, &one));
    const std::vector<Neighbor> got = one.Take();
    ASSERT_FALSE(got.empty());
    EXPECT_EQ(got[0].id, i);
    EXPECT_EQ(got[0].distance, 0.0f);
  }
}

TEST_P(BuildReachTest, AMergeConnectsTheGraphItExtends) {
  std::shared_ptr<Segment> old = Build(/*connect=*/false, "old");
  ASSERT_NE(old, nullptr);
  ASSERT_OK_AND_ASSIGN(const uint64_t before, segment::CountUnreachableNodes(*old));
  // Short lists leave nodes unreachable without the step (R 16: ~5%):
  // there the merge has something to heal.
  if (GetParam().max_degree <= 16) ASSERT_GT(before, 0u);
  // Extending a graph: its nodes keep their lists, 1% more are inserted.
  const size_t n = GetParam().points;
  std::vector<uint64_t> ids, seqs;
  std::vector<float> vectors;
  GraphSeed seed;
  seed.segment = old.get();
  ASSERT_OK(old->ForEachNode([&](uint32_t node, uint64_t id, uint64_t sequence,
                                 const float* v, std::span<const uint32_t>) {
    seed.row_of_node.push_back(static_cast<uint32_t>(ids.size()));
    EXPECT_EQ(seed.row_of_node.size(), node + 1u);
    ids.push_back(id);
    seqs.push_back(sequence);
    vectors.insert(vectors.end(), v, v + kDim);
  }));
  const std::vector<float> more = Gaussian(n / 100 + 1, 8);
  for (size_t i = 0; i < n / 100 + 1; ++i) {
    ids.push_back(n + i);
    seqs.push_back(n + i);
    vectors.insert(vectors.end(), more.begin() + i * kDim, more.begin() + (i + 1) * kDim);
  }
  SegmentBuildOptions options;
  options.graph.max_degree = GetParam().max_degree;
  options.graph.build_list_size = GetParam().build_list_size;
  ASSERT_OK(BuildSegment(FileSystem::Default(), &pool_, dir_.Sub("merged"),
                         Contents(ids, seqs, vectors, &seed), options));
  ASSERT_OK_AND_ASSIGN(auto merged,
                       Segment::Open(FileSystem::Default(), dir_.Sub("merged"), kDim, Metric::kL2));
  ASSERT_OK_AND_ASSIGN(const uint64_t after, segment::CountUnreachableNodes(*merged));
  EXPECT_EQ(after, 0u) << before << " unreachable before the merge";
}

// The table through the public API: BulkLoad, then an exhaustive
// search returns every vector, and self-searches at the default list find
// their own vector first.
struct LoadCase {
  size_t points;
  uint32_t shards;
  uint32_t max_degree;
  uint32_t build_list_size;
  // Self-searches at the default list that may miss: issue 41's goal at the
  // defaults (0.01%, at least one); at R 16, 4% (2.8% measured; 17% before).
  double most_self_misses;  // a share of the points
};

class LoadReachTest : public ::testing::TestWithParam<LoadCase> {};

INSTANTIATE_TEST_SUITE_P(
    Table, LoadReachTest,
    ::testing::Values(LoadCase{kSanitized ? 5000u : 25000u, 3, 16, 40, 0.04},
                      LoadCase{kSanitized ? 5000u : 25000u, 3, 64, 100, 1e-4},
                      LoadCase{kSanitized ? 5000u : 100000u, 2, 64, 100, 1e-4}),
    [](const ::testing::TestParamInfo<LoadCase>& info) {
      return "n" + std::to_string(info.param.points) + "_shards" +
             std::to_string(info.param.shards) + "_R" + std::to_string(info.param.max_degree);
    });

TEST_P(LoadReachTest, ExhaustiveSearchReturnsEveryVectorAndEachVectorFindsItself) {
  const LoadCase& c = GetParam();
  TempDir dir;
  Options options = test::DefaultOptions(kDim, Metric::kL2, c.shards);
  options.default_collection.graph.max_degree = c.max_degree;
  options.default_collection.graph.build_list_size = c.build_list_size;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DB> db, DB::Open(options, dir.path()));
  const std::vector<uint64_t> ids = Iota(c.points);
  const std::vector<float> vectors = Gaussian(c.points, 11);
  ASSERT_OK(db->BulkLoad(ids, vectors));

  SearchOptions all;
  all.k = 1u << 30;
  all.list_size = std::numeric_limits<uint32_t>::max();
  ASSERT_OK_AND_ASSIGN(const std::vector<Neighbor> everything, db->Search(std::span(vectors).first(kDim), all));
  std::set<uint64_t> found;
  for (const Neighbor& n : everything) found.insert(n.id);
  EXPECT_EQ(found.size(), c.points);

  SearchOptions self;
  self.k = 1;
  size_t misses = 0;
  for (size_t i = 0; i < c.points; ++i) {
    ASSERT_OK_AND_ASSIGN(const std::vector<Neighbor> got,
                         db->Search(std::span(vectors).subspan(i * kDim, kDim), self));
    misses += got.empty() || got[0].id != i;
  }
  // At least 5: a few misses more or less are a build's chance (2 threads).
  const size_t most = std::max<size_t>(5, static_cast<size_t>(c.most_self_misses * c.points));
  EXPECT_LE(misses, most) << "of " << c.points;
  std::printf("self-search misses: %zu of %zu\n", misses, c.points);
}

// `shoal verify` names a segment whose graph leaves nodes unreachable (a
// warning: nothing is damaged, and a list as long as the segment still
// finds them).
TEST(VerifyReachTest, ReportsUnreachableNodesAsAWarning) {
  TempDir dir;
  const std::string db_path = dir.Sub("db");
  {
    Options options = test::DefaultOptions(kDim, Metric::kL2, 1);
    options.default_collection.graph.max_degree = 16;
    options.default_collection.graph.build_list_size = 40;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<DB> db, DB::Open(options, db_path));
    const size_t n = kSanitized ? 3000 : 10000;
    ASSERT_OK(db->BulkLoad(Iota(n), Gaussian(n, 3)));
  }
  ASSERT_OK_AND_ASSIGN(VerifyReport clean, VerifyDatabase(FileSystem::Default(), db_path));
  EXPECT_TRUE(clean.problems.empty()) << clean.problems[0].what;

  // Replace the segment with one of the same contents whose graph was not
  // connected.
  const std::vector<std::string> files = test::SegmentFiles(db_path);
  ASSERT_EQ(files.size(), 1u);
  std::vector<uint64_t> ids, seqs;
  std::vector<float> vectors;
  {
    ASSERT_OK_AND_ASSIGN(auto segment,
                         Segment::Open(FileSystem::Default(), files[0], kDim, Metric::kL2));
    ASSERT_OK(segment->ForEachVector([&](uint64_t id, uint64_t sequence, const float* v) {
      ids.push_back(id);
      seqs.push_back(sequence);
      vectors.insert(vectors.end(), v, v + kDim);
    }));
  }
  SegmentBuildOptions options;
  options.graph.max_degree = 1;
  options.graph.build_list_size = 4;
  options.connect = false;
  ThreadPool pool(2);
  ASSERT_OK(BuildSegment(FileSystem::Default(), &pool, files[0], Contents(ids, seqs, vectors),
                         options));
  ASSERT_OK_AND_ASSIGN(auto rebuilt,
                       Segment::Open(FileSystem::Default(), files[0], kDim, Metric::kL2));
  ASSERT_OK_AND_ASSIGN(const uint64_t unreachable, segment::CountUnreachableNodes(*rebuilt));
  ASSERT_GT(unreachable, 0u);

  ASSERT_OK_AND_ASSIGN(VerifyReport report, VerifyDatabase(FileSystem::Default(), db_path));
  EXPECT_TRUE(report.ok());
  ASSERT_EQ(report.problems.size(), 1u);
  EXPECT_FALSE(report.problems[0].fatal);
  EXPECT_EQ(report.problems[0].path, files[0]);
  EXPECT_NE(report.problems[0].what.find(std::to_string(unreachable) + " of " +
                                         std::to_string(ids.size()) + " nodes"),
            std::string::npos)
      << report.problems[0].what;
}

}  // namespace
}  // namespace shoal
