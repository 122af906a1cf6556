// Copyright 2026 The shoal Authors.
//
// Filtered search (shoal/filter.h, issue 44): the predicate's semantics on
// a record's encoded parts (filter/compiled_filter.h); bad filters
// rejected when a search starts; and searches end to end that never answer
// an id failing the filter and answer exactly min(k, matching) results, at
// selectivities from 50% to a handful, over memtables and flushed segments
// in both storages and both graph modes.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "filter/compiled_filter.h"
#include "gtest/gtest.h"
#include "record/record_format.h"
#include "shoal/shoal.h"
#include "testutil/forced_plan.h"
#include "testutil/temp_dir.h"

namespace shoal::test {
namespace {

using ::absl::StatusCode;

const std::vector<std::string> kAttributes = {"ts", "price"};

// ---- Semantics, on encoded extras ----

std::string Extras(std::vector<uint32_t> labels, std::vector<AttributeValue> attributes) {
  std::sort(labels.begin(), labels.end());
  std::string out;
  record::AppendEncoded(record::Extras{labels, attributes, {}}, &out);
  return out;
}

bool Matches(const Filter& f, const std::string& extras, uint64_t id = 1) {
  absl::StatusOr<std::unique_ptr<const filter::CompiledFilter>> c =
      filter::CompiledFilter::Compile(f, kAttributes);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() && (*c)->MatchesExtras(extras, id);
}

TEST(FilterSemantics, AnyAllNoneOfLabels) {
  const std::string e = Extras({3, 7, 9}, {});
  EXPECT_TRUE(Matches(Filter::AnyLabel({1, 7}), e));
  EXPECT_FALSE(Matches(Filter::AnyLabel({1, 2}), e));
  EXPECT_TRUE(Matches(Filter::AllLabels({9, 3}), e));
  EXPECT_FALSE(Matches(Filter::AllLabels({3, 4}), e));
  EXPECT_TRUE(Matches(Filter::AllLabels({3, 3, 7}), e));  // repeats count once
  EXPECT_TRUE(Matches(Filter::NoLabel({1, 2}), e));
  EXPECT_FALSE(Matches(Filter::NoLabel({2, 9}), e));
}

TEST(FilterSemantics, RangeIsHalfOpenAndNeedsTheAttribute) {
  const std::string e = Extras({}, {{0, 100}});
  EXPECT_TRUE(Matches(Filter::Range("ts", 100, 101), e));
  EXPECT_FALSE(Matches(Filter::Range("ts", 90, 100), e));  // upper excluded
  EXPECT_FALSE(Matches(Filter::Range("ts", 100, 100), e));  // empty range
  EXPECT_TRUE(Matches(Filter::AtLeast("ts", 100), e));
  EXPECT_TRUE(Matches(Filter::Below("ts", 101), e));
  EXPECT_FALSE(Matches(Filter::Range("price", INT64_MIN, INT64_MAX), e));  // absent
  EXPECT_TRUE(Matches(Filter::AtLeast("ts", INT64_MIN), Extras({}, {{0, INT64_MAX}})));
}

TEST(FilterSemantics, AndOrNest) {
  const std::string e = Extras({5}, {{0, 10}, {1, 2000}});
  EXPECT_TRUE(Matches(Filter::And({Filter::AnyLabel({5}), Filter::Range("ts", 0, 11)}), e));
  EXPECT_FALSE(Matches(Filter::And({Filter::AnyLabel({5}), Filter::Range("ts", 11, 20)}), e));
  EXPECT_TRUE(Matches(Filter::Or({Filter::AnyLabel({6}), Filter::Range("ts", 0, 11)}), e));
  EXPECT_FALSE(Matches(Filter::Or({Filter::AnyLabel({6}), Filter::NoLabel({5})}), e));
  EXPECT_TRUE(Matches(
      Filter::And({Filter::Or({Filter::AnyLabel({6}), Filter::Below("price", 3000)}),
                   Filter::NoLabel({7})}),
      e));
}

TEST(FilterSemantics, RecordsWithoutPartsHaveNoLabelsAndNoAttributes) {
  EXPECT_FALSE(Matches(Filter::AnyLabel({1}), ""));
  EXPECT_FALSE(Matches(Filter::AllLabels({1}), ""));
  EXPECT_TRUE(Matches(Filter::NoLabel({1}), ""));
  EXPECT_FALSE(Matches(Filter::AtLeast("ts", INT64_MIN), ""));
}

TEST(FilterSemantics, IdsPredicateIsAskedOnlyAfterTheRestOfAnAnd) {
  int asked = 0;
  const Filter f = Filter::And({Filter::Ids([&](uint64_t id) {
                                  ++asked;
                                  return id % 2 == 0;
                                }),
                                Filter::AnyLabel({1})});
  EXPECT_FALSE(Matches(f, Extras({2}, {}), 4));
  EXPECT_EQ(asked, 0);
  EXPECT_TRUE(Matches(f, Extras({1}, {}), 4));
  EXPECT_FALSE(Matches(f, Extras({1}, {}), 5));
  EXPECT_EQ(asked, 2);
}

// ---- Bad filters ----

absl::Status CompileStatus(const Filter& f) {
  return filter::CompiledFilter::Compile(f, kAttributes).status();
}

Filter Nested(size_t depth) {
  Filter f = Filter::AnyLabel({1});
  for (size_t i = 1; i < depth; ++i) f = Filter::And({f});
  return f;
}

TEST(FilterBadInput, UnknownAttributeIsInvalidArgument) {
  EXPECT_STATUS_CODE(CompileStatus(Filter::Range("tss", 0, 1)), StatusCode::kInvalidArgument);
}

TEST(FilterBadInput, InvertedRangeIsInvalidArgument) {
  EXPECT_STATUS_CODE(CompileStatus(Filter::Range("ts", 5, 4)), StatusCode::kInvalidArgument);
  EXPECT_OK(CompileStatus(Filter::Range("ts", 5, 5)));
}

TEST(FilterBadInput, TooDeepOrTooWideIsInvalidArgument) {
  EXPECT_OK(CompileStatus(Nested(kMaxFilterDepth)));
  EXPECT_STATUS_CODE(CompileStatus(Nested(kMaxFilterDepth + 1)), StatusCode::kInvalidArgument);
  std::vector<Filter> wide(kMaxFilterChildren, Filter::AnyLabel({1}));
  EXPECT_OK(CompileStatus(Filter::Or(wide)));
  wide.push_back(Filter::AnyLabel({1}));
  EXPECT_STATUS_CODE(CompileStatus(Filter::Or(wide)), StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(CompileStatus(Filter::And({})), StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(CompileStatus(Filter::AnyLabel({})), StatusCode::kInvalidArgument);
  std::vector<uint32_t> many(kMaxFilterLabels + 1);
  for (size_t i = 0; i < many.size(); ++i) many[i] = static_cast<uint32_t>(i);
  EXPECT_STATUS_CODE(CompileStatus(Filter::AnyLabel(many)), StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(CompileStatus(Filter::Ids(nullptr)), StatusCode::kInvalidArgument);
}

// ---- End to end ----

constexpr uint32_t kDim = 8;
constexpr char kName[] = "docs";
constexpr uint64_t kCount = 3000;

// Labels by id: 1 on half, 2 on a tenth, 3 on a hundredth, 4 on three ids,
// 5 on a third; ts = id, price on odd ids. Ids = 5 mod 11 are plain
// vectors (no record parts).
bool Plain(uint64_t id) { return id % 11 == 5; }
std::vector<uint32_t> LabelsOf(uint64_t id) {
  std::vector<uint32_t> l;
  if (Plain(id)) return l;
  if (id % 2 == 0) l.push_back(1);
  if (id % 10 == 0) l.push_back(2);
  if (id % 100 == 0) l.push_back(3);
  if (id == 300 || id == 1700 || id == 2900) l.push_back(4);
  if (id % 3 == 0) l.push_back(5);
  return l;
}
std::vector<AttributeValue> AttributesOf(uint64_t id) {
  std::vector<AttributeValue> a;
  if (Plain(id)) return a;
  a.push_back({0, static_cast<int64_t>(id)});
  if (id % 2 == 1) a.push_back({1, static_cast<int64_t>(id) * 10});
  return a;
}
std::vector<float> VectorOf(uint64_t id, uint64_t version) {
  std::mt19937_64 rng(id * 1000003 + version);
  std::vector<float> v(kDim);
  for (float& x : v) x = std::uniform_real_distribution<float>(-1, 1)(rng);
  return v;
}

// (storage, one graph for the shards while small).
class FilteredSearchTest
    : public ::testing::TestWithParam<std::tuple<SegmentStorage, bool>> {
 protected:
  void SetUp() override {
    Options o = DefaultOptions(0);
    o.segment_storage = std::get<0>(GetParam());
    o.compaction.automatic = false;
    if (!std::get<1>(GetParam())) o.compaction.one_graph_max_vectors = 0;
    ASSERT_OK_AND_ASSIGN(db_, DB::Open(o, dir_.path()));
    CollectionOptions co;
    co.dim = kDim;
    co.shard_count = 2;
    co.attributes = kAttributes;
    ASSERT_OK(db_->CreateCollection(kName, co));
  }

  void Put(uint64_t id, uint64_t version = 0) {
    std::vector<float> v = VectorOf(id, version);
    if (Plain(id)) {
      ASSERT_OK(db_->Put(kName, id, v));
    } else {
      const std::vector<uint32_t> labels = LabelsOf(id);
      const std::vector<AttributeValue> attributes = AttributesOf(id);
      ASSERT_OK(db_->Put(kName, Record{id, v, labels, attributes, {}}));
    }
    live_[id] = std::move(v);
  }
  void PutRange(uint64_t from, uint64_t to, uint64_t version = 0) {
    for (uint64_t id = from; id < to; ++id) Put(id, version);
  }
  void Delete(uint64_t id) {
    ASSERT_OK(db_->Delete(kName, id));
    live_.erase(id);
  }

  // The live ids that match `pred`, nearest `query` first.
  std::vector<uint64_t> Exact(const std::vector<float>& query,
                              const std::function<bool(uint64_t)>& pred) const {
    std::vector<std::pair<float, uint64_t>> all;
    for (const auto& [id, v] : live_) {
      if (!pred(id)) continue;
      float d = 0;
      for (uint32_t j = 0; j < kDim; ++j) d += (v[j] - query[j]) * (v[j] - query[j]);
      all.push_back({d, id});
    }
    std::sort(all.begin(), all.end());
    std::vector<uint64_t> ids;
    for (const auto& [d, id] : all) ids.push_back(id);
    return ids;
  }

  // Searches with `filter` (the model's `pred`) from several queries:
  // every answer matches and is live, there are exactly min(k, matching),
  // and recall against the exact answer is high.
  void ExpectExact(const Filter& filter, const std::function<bool(uint64_t)>& pred,
                   uint32_t k = 10) {
    SearchOptions so;
    so.k = k;
    so.list_size = 40;
    so.filter = &filter;
    size_t found = 0, wanted = 0;
    for (uint64_t q = 0; q < 8; ++q) {
      const std::vector<float> query = VectorOf(1000000 + q, 0);
      const std::vector<uint64_t> exact = Exact(query, pred);
      ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got, db_->Search(kName, query, so));
      ASSERT_EQ(got.size(), std::min<size_t>(k, exact.size()));
      const absl::flat_hash_set<uint64_t> truth(
          exact.begin(), exact.begin() + std::min<size_t>(k, exact.size()));
      absl::flat_hash_set<uint64_t> seen;
      for (const Neighbor& n : got) {
        ASSERT_TRUE(live_.contains(n.id)) << n.id;
        ASSERT_TRUE(pred(n.id)) << "id " << n.id << " fails the filter";
        ASSERT_TRUE(seen.insert(n.id).second) << "id " << n.id << " twice";
        found += truth.contains(n.id);
      }
      wanted += truth.size();
    }
    EXPECT_GE(static_cast<double>(found), 0.8 * static_cast<double>(wanted));
  }

  // The selectivities: 50%, 10%, 1%, a handful, a range, an AND, an OR.
  void ExpectExactAtEverySelectivity() {
    auto has = [](uint32_t label) {
      return [label](uint64_t id) {
        const std::vector<uint32_t> l = LabelsOf(id);
        return std::find(l.begin(), l.end(), label) != l.end();
      };
    };
    ExpectExact(Filter::AnyLabel({1}), has(1));
    ExpectExact(Filter::AnyLabel({2}), has(2));
    ExpectExact(Filter::AnyLabel({3}), has(3));
    ExpectExact(Filter::AnyLabel({4}), has(4));
    ExpectExact(Filter::NoLabel({1}), [&](uint64_t id) { return !has(1)(id); });
    ExpectExact(Filter::Range("ts", 1000, 1300),
                [](uint64_t id) { return !Plain(id) && id >= 1000 && id < 1300; });
    ExpectExact(Filter::And({Filter::AnyLabel({2}), Filter::AllLabels({5})}),
                [&](uint64_t id) { return has(2)(id) && has(5)(id); });
    ExpectExact(Filter::Or({Filter::AnyLabel({3}), Filter::AtLeast("price", 29000)}),
                [&](uint64_t id) {
                  return has(3)(id) || (!Plain(id) && id % 2 == 1 && id * 10 >= 29000);
                });
    ExpectExact(Filter::And({Filter::AnyLabel({1}), Filter::Ids([](uint64_t id) {
                               return id % 4 == 0;
                             })}),
                [&](uint64_t id) { return has(1)(id) && id % 4 == 0; });
  }

  TempDir dir_;
  std::unique_ptr<DB> db_;
  absl::flat_hash_map<uint64_t, std::vector<float>> live_;
};

TEST_P(FilteredSearchTest, ExactlyKMatchingFromTheMemtable) {
  PutRange(0, kCount);
  ExpectExactAtEverySelectivity();
}

TEST_P(FilteredSearchTest, ExactlyKMatchingFromFlushedSegments) {
  PutRange(0, kCount);
  ASSERT_OK(db_->Flush());
  ExpectExactAtEverySelectivity();
}

// The planner's two paths, each forced on every segment with matches
// (ForcedPlan): walks among the matches (with their fallback to the scan
// when short) and scans of the matches' codes with their rerank each
// answer exactly min(k, matching), only matching ids.

TEST_P(FilteredSearchTest, WalksAmongTheMatchesAnswerExactlyKMatching) {
  PutRange(0, kCount);
  ASSERT_OK(db_->Flush());
  const ForcedPlan walk(0);
  ExpectExactAtEverySelectivity();
}

TEST_P(FilteredSearchTest, ScansOfTheMatchesAnswerExactlyKMatching) {
  PutRange(0, kCount);
  ASSERT_OK(db_->Flush());
  const ForcedPlan scan(~uint64_t{0} / (1 << 20));
  ExpectExactAtEverySelectivity();
}

// Calls `walks` until it returns more than 0 (true) or 30 s passed (false):
// a label graph is built in the background after a search asks for it.
bool EventuallyFollowsALabelGraph(const std::function<uint64_t()>& walks) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    if (walks() > 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// A walk for one label alone on a mapped segment follows a graph of that
// label's nodes (SegmentReader::LabelGraph) once it is built: the first
// such search queues the build on the DB's pool and walks without it (it
// does not wait), later ones follow it. A label more than a quarter of the
// nodes have, a filter of more than one label, and a disk-resident segment
// walk as before. Every answer is as exact either way (ExpectExact).
TEST_P(FilteredSearchTest, WalksForOneLabelFollowAGraphOfItsNodes) {
  PutRange(0, kCount);
  ASSERT_OK(db_->Flush());
  const ForcedPlan walk(0);
  auto label_graph_walks = [&](const Filter& filter) -> uint64_t {
    SearchStats stats;
    SearchOptions so;
    so.k = 10;
    so.list_size = 40;
    so.filter = &filter;
    so.stats = &stats;
    const std::vector<float> query = VectorOf(2000000, 0);
    EXPECT_OK(db_->Search(kName, query, so).status());
    EXPECT_GT(stats.filter_walked, 0u);
    return stats.filter_label_graph_walks;
  };
  const bool mapped = std::get<0>(GetParam()) == SegmentStorage::kMapped;
  const Filter tenth = Filter::AnyLabel({2});
  EXPECT_EQ(label_graph_walks(tenth), 0u);  // the first to ask: queued, not awaited
  if (mapped) {
    EXPECT_TRUE(EventuallyFollowsALabelGraph([&] { return label_graph_walks(tenth); }));
    EXPECT_GT(label_graph_walks(tenth), 0u);  // the graph kept
  } else {
    EXPECT_EQ(label_graph_walks(tenth), 0u);
  }
  EXPECT_EQ(label_graph_walks(Filter::AnyLabel({1})), 0u);  // half the nodes
  EXPECT_EQ(label_graph_walks(Filter::AnyLabel({2, 3})), 0u);
  EXPECT_EQ(label_graph_walks(Filter::And({tenth, Filter::AtLeast("ts", 100)})), 0u);
  ExpectExact(tenth, [](uint64_t id) { return !Plain(id) && id % 10 == 0; });
  ExpectExact(Filter::AllLabels({3}), [](uint64_t id) { return !Plain(id) && id % 100 == 0; });
}

// Labels refused a graph (here: each on half the nodes) take no room: after
// more of them than a segment keeps graphs, a label on a tenth still gets
// one.
TEST(LabelGraphTest, RefusedLabelsLeaveRoomForAGraph) {
  TempDir dir;
  Options o = DefaultOptions(0);
  o.compaction.automatic = false;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DB> db, DB::Open(o, dir.path()));
  CollectionOptions co;
  co.dim = kDim;
  co.shard_count = 1;
  ASSERT_OK(db->CreateCollection(kName, co));
  constexpr uint32_t kHalves = 70;  // > SegmentReader::kMaxLabelGraphs (64)
  std::mt19937_64 rng(7);
  for (uint64_t id = 0; id < kCount; ++id) {
    std::vector<uint32_t> labels;
    if (id % 10 == 0) labels.push_back(1);
    for (uint32_t l = 0; l < kHalves; ++l) {
      if (rng() % 2 == 0) labels.push_back(100 + l);
    }
    ASSERT_OK(db->Put(kName, Record{id, VectorOf(id, 0), labels, {}, {}}));
  }
  ASSERT_OK(db->Flush());
  const ForcedPlan walk(0);
  auto label_graph_walks = [&](uint32_t label) -> uint64_t {
    const Filter filter = Filter::AnyLabel({label});
    SearchStats stats;
    SearchOptions so;
    so.k = 10;
    so.filter = &filter;
    so.stats = &stats;
    EXPECT_OK(db->Search(kName, VectorOf(3000000, 0), so).status());
    EXPECT_GT(stats.filter_walked, 0u);
    return stats.filter_label_graph_walks;
  };
  for (uint32_t l = 0; l < kHalves; ++l) EXPECT_EQ(label_graph_walks(100 + l), 0u);
  EXPECT_TRUE(EventuallyFollowsALabelGraph([&] { return label_graph_walks(1); }));
}

// Label graphs still queued when the DB closes are skipped or finished
// without touching a segment nobody holds (ASan and TSan watch this), and
// nothing of them is on disk: the reopened DB answers as exactly.
TEST(LabelGraphTest, ClosingWithBuildsQueuedLosesNothing) {
  TempDir dir;
  Options o = DefaultOptions(0);
  o.compaction.automatic = false;
  CollectionOptions co;
  co.dim = kDim;
  co.shard_count = 2;
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<DB> db, DB::Open(o, dir.path()));
    ASSERT_OK(db->CreateCollection(kName, co));
    for (uint64_t id = 0; id < kCount; ++id) {
      // Ten labels of a tenth each.
      const uint32_t label = static_cast<uint32_t>(id % 10);
      ASSERT_OK(db->Put(kName, Record{id, VectorOf(id, 0), {&label, 1}, {}, {}}));
    }
    ASSERT_OK(db->Flush());
    const ForcedPlan walk(0);
    for (uint32_t label = 0; label < 10; ++label) {
      const Filter filter = Filter::AnyLabel({label});
      SearchOptions so;
      so.k = 10;
      so.filter = &filter;
      ASSERT_OK(db->Search(kName, VectorOf(label, 0), so).status());
    }
    ASSERT_OK(db->Close());
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DB> db, DB::Open(o, dir.path()));
  const Filter filter = Filter::AnyLabel({3});
  SearchOptions so;
  so.k = 10;
  so.filter = &filter;
  ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> found, db->Search(kName, VectorOf(3, 0), so));
  ASSERT_EQ(found.size(), 10u);
  for (const Neighbor& nb : found) EXPECT_EQ(nb.id % 10, 3u) << nb.id;
}

TEST_P(FilteredSearchTest, WalksAndScansSkipHiddenVersionsAndStillAnswerK) {
  // Every id of label 2 (a tenth) rewritten with a new vector after the
  // flush, and half of label 1's deleted: the flushed segment's nodes for
  // them are hidden, so shortlists and walks meet hidden entries.
  PutRange(0, kCount);
  ASSERT_OK(db_->Flush());
  for (uint64_t id = 0; id < kCount; id += 10) Put(id, 1);
  for (uint64_t id = 2; id < kCount; id += 4) Delete(id);
  ASSERT_OK(db_->Flush());
  for (const uint64_t cost : {uint64_t{0}, ~uint64_t{0} / (1 << 20)}) {
    const ForcedPlan plan(cost);
    ExpectExactAtEverySelectivity();
  }
}

TEST_P(FilteredSearchTest, ExactlyKMatchingAcrossSegmentsMemtablesAndNewerVersions) {
  PutRange(0, kCount / 2);
  ASSERT_OK(db_->Flush());
  PutRange(kCount / 2, kCount);
  ASSERT_OK(db_->Flush());
  // Newer versions of some ids (the same labels), deletes of others, in
  // the memtable: the segments' copies must not answer.
  PutRange(0, 400, /*version=*/1);
  for (uint64_t id = 400; id < 3000; id += 7) Delete(id);
  ExpectExactAtEverySelectivity();
  ASSERT_OK(db_->Compact());
  ASSERT_OK(db_->WaitForCompact());
  ExpectExactAtEverySelectivity();
}

TEST_P(FilteredSearchTest, ALabelNobodyHasAnswersEmpty) {
  PutRange(0, kCount);
  ASSERT_OK(db_->Flush());
  PutRange(0, 100, 1);
  const Filter f = Filter::AnyLabel({999});
  SearchOptions so;
  so.filter = &f;
  ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got, db_->Search(kName, VectorOf(7, 7), so));
  EXPECT_TRUE(got.empty());
}

TEST_P(FilteredSearchTest, BatchSearchesHonourTheFilter) {
  PutRange(0, kCount);
  ASSERT_OK(db_->Flush());
  const Filter f = Filter::AnyLabel({3});
  SearchOptions so;
  so.k = 5;
  so.filter = &f;
  std::vector<float> queries;
  for (uint64_t q = 0; q < 6; ++q) {
    const std::vector<float> v = VectorOf(2000000 + q, 0);
    queries.insert(queries.end(), v.begin(), v.end());
  }
  ASSERT_OK_AND_ASSIGN(auto got, db_->SearchBatch(kName, queries, so));
  for (const auto& row : got) {
    ASSERT_EQ(row.size(), 5u);
    for (const Neighbor& n : row) EXPECT_EQ(n.id % 100, 0u) << n.id;
  }
}

TEST_P(FilteredSearchTest, BadFiltersAreInvalidArgumentWhenTheSearchStarts) {
  PutRange(0, 50);
  SearchOptions so;
  const Filter unknown = Filter::Range("size", 0, 10);
  so.filter = &unknown;
  EXPECT_STATUS_CODE(db_->Search(kName, VectorOf(1, 1), so), StatusCode::kInvalidArgument);
  const Filter inverted = Filter::And({Filter::AnyLabel({1}), Filter::Range("ts", 10, 0)});
  so.filter = &inverted;
  EXPECT_STATUS_CODE(db_->Search(kName, VectorOf(1, 1), so), StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(db_->SearchBatch(kName, VectorOf(1, 1), so), StatusCode::kInvalidArgument);
  const Filter deep = Nested(kMaxFilterDepth + 1);
  so.filter = &deep;
  EXPECT_STATUS_CODE(db_->Search(kName, VectorOf(1, 1), so), StatusCode::kInvalidArgument);
}

// "When the search starts" means before any source is searched: an Ids
// predicate beside the bad part is never asked (an Or would ask it about
// every vector), and no segment search is counted.
TEST_P(FilteredSearchTest, BadFiltersAreRefusedBeforeAnythingIsSearched) {
  PutRange(0, 400);
  ASSERT_OK(db_->Flush());
  PutRange(400, 500);
  std::atomic<int> asked{0};
  const Filter ids = Filter::Ids([&asked](uint64_t) {
    asked.fetch_add(1);
    return true;
  });
  const std::vector<Filter> bad = {
      Filter::Or({ids, Filter::Range("size", 0, 10)}),
      Filter::Or({ids, Filter::Range("ts", 10, 0)}),
      Filter::Or({ids, Nested(kMaxFilterDepth)}),
  };
  for (const Filter& f : bad) {
    SearchStats stats;
    SearchOptions so;
    so.filter = &f;
    so.stats = &stats;
    EXPECT_STATUS_CODE(db_->Search(kName, VectorOf(1, 1), so), StatusCode::kInvalidArgument);
    EXPECT_STATUS_CODE(db_->SearchBatch(kName, VectorOf(2, 1), so),
                       StatusCode::kInvalidArgument);
    EXPECT_EQ(stats.segments, 0u);
    EXPECT_EQ(stats.distance_computations, 0u);
  }
  EXPECT_EQ(asked.load(), 0);
  // The same predicate in a good filter is asked.
  const Filter good = Filter::Or({ids, Filter::Range("ts", 0, 10)});
  SearchOptions so;
  so.filter = &good;
  ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got, db_->Search(kName, VectorOf(1, 1), so));
  EXPECT_EQ(got.size(), 10u);
  EXPECT_GT(asked.load(), 0);
}

TEST_P(FilteredSearchTest, VectorsWithoutRecordsMatchNoLabelCondition) {
  // Plain vectors only, in a segment and in the memtable.
  for (uint64_t id = 0; id < 600; ++id) {
    std::vector<float> v = VectorOf(id, 0);
    ASSERT_OK(db_->Put(kName, id, v));
    live_[id] = std::move(v);
    if (id == 399) ASSERT_OK(db_->Flush());
  }
  const Filter any = Filter::AnyLabel({1});
  SearchOptions so;
  so.filter = &any;
  ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got, db_->Search(kName, VectorOf(9, 9), so));
  EXPECT_TRUE(got.empty());
  ExpectExact(Filter::NoLabel({1}), [](uint64_t) { return true; });
  ExpectExact(Filter::Ids([](uint64_t id) { return id % 50 == 3; }),
              [](uint64_t id) { return id % 50 == 3; });
}

INSTANTIATE_TEST_SUITE_P(
    Storage, FilteredSearchTest,
    ::testing::Combine(::testing::Values(SegmentStorage::kMapped, SegmentStorage::kDisk),
                       ::testing::Bool()),
    [](const auto& info) {
      return std::string(std::get<0>(info.param) == SegmentStorage::kMapped ? "Mapped" : "Disk") +
             (std::get<1>(info.param) ? "OneGraph" : "GraphAShard");
    });

}  // namespace
}  // namespace shoal::test
