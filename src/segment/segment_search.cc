// Copyright 2026 The shoal Authors.
//
// Beam search over a segment's graph (SegmentReader::Search).
//
// The candidate list holds the max(L, k) closest nodes seen (a few more
// than k on codes: RerankFloor); each step
// expands the beam_width closest unexpanded ones among its first L: their
// neighbour lists are read, the neighbours not seen before have their
// distance computed and are offered to the list. The search ends when the
// list's first L nodes have all been expanded.
//
// A segment with codes (SQ8, codes/sq8.h) navigates on them: a distance
// reads a quarter of the bytes, from one contiguous array. The list's
// distances are then approximate, so its entries are reranked with the full
// vectors (one node record each) and the k closest admitted (answer_filter.h) are the answer.
// Without codes the list's distances are exact: its first k admitted entries
// are the answer.
//
// Both kinds share one walk (SegmentReader::Walk) and differ in what a
// distance reads (a Navigator): a code, or a node record (whose block is
// then checked before it is read). The walk starts from the medoid and, in
// a graph whose medoid does not reach everywhere, from entry points spread
// over the data (ChooseEntryPoints, at Open).
//
// A list as long as the segment scans it instead (segment_scan.h).
//
// Each thread keeps its scratch (candidate list, visited set) in a
// thread_local, so a query allocates nothing once the thread has searched a
// segment this large. Reentrant: an AnswerFilter callback that searches again
// gets a scratch of its own.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "distance/distance.h"
#include "graph/candidate_list.h"
#include "graph/entry_points.h"
#include "graph/prefetch.h"
#include "graph/scratch_lease.h"
#include "segment/segment_scan.h"
#include "segment/segment_reader.h"
#include "codes/sq8.h"
#include "graph/visited_set.h"
#include "util/coding.h"
#include "util/status_macros.h"

namespace shoal::segment {

using codes::Sq8Query;
using graph::CandidateList;
using graph::EntryPointCount;
using graph::ListEntryPoints;
using graph::PrefetchBytes;
using graph::ScratchLease;
using graph::SpreadEntryPoints;
using graph::SpreadNode;
using graph::VisitedSet;

struct SearchScratch {
  CandidateList list;
  VisitedSet visited;
  VisitedSet blocks;  // node blocks read, for SegmentSearchStats
  std::vector<uint32_t> beam;
  std::vector<uint32_t> todo;
  std::vector<float> scores;  // todo's distances, for navigation on codes
  Sq8Query sq8;
  std::vector<CandidateList::Entry> exact;  // the list reranked
  std::vector<uint32_t> past;  // GatherSelected's unselected neighbours
  std::vector<uint32_t> near;  // WalkFilteredFromNear's first list
  std::vector<std::pair<float, uint32_t>> closest;  // entry points, by distance
  bool in_use = false;
};

namespace {

// Vectors this many positions ahead of the one being compared are prefetched.
constexpr size_t kPrefetchAhead = 4;
// A hop's codes this many ahead of the four being scored are prefetched:
// three groups of four. A code arrives in the time three groups take
// (embed, 384-d codes of 6 lines: +4-5% QPS over 4 ahead in 4 rounds in
// turns, +4-10% in earlier sets, where 12 to 24 and the whole hop at once
// were all close; medium's 256-d codes unchanged; docs/performance.md,
// "Kernels and prefetch").
constexpr size_t kCodePrefetchAhead = 12;

thread_local SearchScratch tls_scratch;

// A walk's use of its label's graph in the stats: followed, or wanted and
// still being built.
void CountLabelGraphWalk(const graph::SubsetGraph* subset, bool pending,
                         SegmentSearchStats* stats) {
  if (stats == nullptr) return;
  if (subset != nullptr) {
    ++stats->filter_label_graph_walks;
  } else if (pending) {
    ++stats->filter_label_graph_pending;
  }
}

// ChooseEntryPoints. Walks from the medoid for kEntryProbes of the graph's
// own nodes at list kEntryProbeListSize; kEntryProbesMissed or more misses
// give the segment its entry points (graph/entry_points.h). Measured
// (docs/performance-history.md, "Entry points"): medium's 500 tight clusters miss
// 6-8 of 64 on its 50K-node segments (11-17 with one 100K segment), where
// entry points lift recall at list 10 from 0.89 to 0.97 (0.62 to 0.91 with
// one segment); small's and embed's segments miss none and get none, so
// their searches are unchanged. A scan of the entry points costs about as
// much as a hop per 50 of them.
constexpr size_t kEntryProbes = 64;
constexpr uint32_t kEntryProbeListSize = 16;
constexpr size_t kEntryProbesMissed = 3;
// The entry points are grouped by k-means (about sqrt(count) groups, 8
// rounds); a search scans the centres, then the entry points of the
// kEntryGroupsScanned groups whose centres are closest. On medium (2 x 781
// entry points, 27 groups a segment): 30.7K QPS at list 10 (recall 0.964)
// against 23.2K (0.968) scanning them all.
constexpr size_t kEntryGroupsScanned = 4;
// Selected nodes spread over the node order that a filtered walk starts
// from besides the medoid and entry points that are selected.
constexpr size_t kFilteredSeeds = 16;
// The list of WalkFilteredFromNear's unfiltered walk.
constexpr uint32_t kLocateListSize = 16;
constexpr int kEntryGroupRounds = 8;

// The least list a walk on codes keeps for k answers: k and a few more,
// since the rerank picks the k answers from the list, and codes rank nodes a
// little differently than their vectors do (on small, 0.973 of the true 10
// nearest are among the 10 nearest by SQ8 code, 0.997 among the 12:
// bench/probes/code_rank_bench). Two more nodes to rerank take small's recall at
// list 5 from 0.947 to 0.970, at list 10 from 0.967 to 0.992, for two
// distances a query (docs/performance-history.md, "A rerank of k + 2"). Measured at
// k = 10; a quarter more for larger k is a guess that the codes' misranked
// share grows with k. Lists of at least RerankFloor(k) are unchanged.
size_t RerankFloor(uint32_t k) { return size_t{k} + std::max<size_t>(2, k / 4); }

// Distance under kMetric from the query to a stored vector, by the public
// conventions (see distance.h).
template <Metric kMetric>
struct QueryDistance {
  DistanceFn kernel = kMetric == Metric::kL2 ? Kernels().l2_squared : Kernels().dot;
  float operator()(const float* q, const float* v, size_t dim) const {
    if constexpr (kMetric == Metric::kL2) {
      return kernel(q, v, dim);
    } else if constexpr (kMetric == Metric::kInnerProduct) {
      return -kernel(q, v, dim);
    } else {
      return 1.0f - kernel(q, v, dim);
    }
  }
};

}  // namespace

// Navigates on full vectors: a distance reads the node's record.
template <Metric kMetric>
struct SegmentReader::VectorNavigator {
  static constexpr bool kReadsRecord = true;
  const SegmentReader& segment;
  const float* query;
  QueryDistance<kMetric> distance;
  float operator()(uint32_t v) const {
    return distance(query, segment.NodeVector(segment.NodeRecord(v)), segment.header_.dim);
  }
  void Prefetch(uint32_t v) const {
    PrefetchBytes(segment.NodeRecord(v), size_t{segment.header_.dim} * sizeof(float));
  }
};

// Navigates on SQ8 codes: a distance reads the node's code only.
struct SegmentReader::CodeNavigator {
  static constexpr bool kReadsRecord = false;
  const SegmentReader& segment;
  const Sq8Query& query;
  float operator()(uint32_t v) const { return query.Distance(segment.Code(v)); }
  // out[k] = the distance to node v[k], k < 4.
  void Four(const uint32_t* v, float* out) const {
    const uint8_t* const codes[4] = {segment.Code(v[0]), segment.Code(v[1]), segment.Code(v[2]),
                                     segment.Code(v[3])};
    query.DistanceFour(codes, out);
  }
  void Prefetch(uint32_t v) const { PrefetchBytes(segment.Code(v), segment.header_.code_bytes); }
};

absl::Status SegmentReader::ReadBlock(uint32_t node, SearchScratch* s, SegmentSearchStats* stats,
                                      uint64_t* sectors) const {
  const uint32_t block = BlockOf(node);
  SHOAL_RETURN_IF_ERROR(EnsureVerified(block));
  if (stats != nullptr && !s->blocks.TestAndSet(block)) {
    *sectors += header_.layout.sectors_per_block;
  }
  return absl::OkStatus();
}

absl::Status SegmentReader::GatherSelected(uint32_t u, const BitSet& selected,
                                           SearchScratch* s, SegmentSearchStats* stats,
                                           WalkCounts* counts, uint32_t* todo,
                                           size_t* m) const {
  const NodeLayout& layout = header_.layout;
  uint16_t* marks = s->visited.marks();
  const uint16_t epoch = s->visited.epoch();
  const size_t most = *m + layout.max_degree / 2;
  std::vector<uint32_t>& past = s->past;  // u's unselected neighbours
  past.clear();
  const char* record = NodeRecord(u);
  const uint32_t degree = DecodeFixed32(record + layout.degree_offset());
  const char* neighbors = record + layout.neighbors_offset();
  for (uint32_t k = 0; k < degree; ++k) {
    const uint32_t v = DecodeFixed32(neighbors + 4 * k);
    if (marks[v] == epoch) continue;
    marks[v] = epoch;
    if (selected.Test(v)) {
      todo[(*m)++] = v;
    } else {
      past.push_back(v);
    }
  }
  for (size_t j = 0; j < past.size() && *m < most; ++j) {
    const uint32_t w = past[j];
    if (j + 1 < past.size()) {  // the next list, while this one is read
      PrefetchBytes(NodeRecord(past[j + 1]) + layout.degree_offset(),
                    4 + 4 * size_t{layout.max_degree});
    }
    SHOAL_RETURN_IF_ERROR(ReadBlock(w, s, stats, &counts->sectors));
    const char* r = NodeRecord(w);
    const uint32_t d = DecodeFixed32(r + layout.degree_offset());
    const char* n = r + layout.neighbors_offset();
    for (uint32_t k = 0; k < d && *m < most; ++k) {
      const uint32_t x = DecodeFixed32(n + 4 * k);
      if (marks[x] == epoch || !selected.Test(x)) continue;
      marks[x] = epoch;
      todo[(*m)++] = x;
    }
  }
  return absl::OkStatus();
}

absl::Status SegmentReader::WalkFilteredFromNear(const CodeNavigator& navigate,
                                                 const SearchOptions& options, SearchScratch* s,
                                                 SegmentSearchStats* stats, WalkCounts* counts,
                                                 const BitSet& selected,
                                                 const graph::SubsetGraph* subset) const {
  SearchOptions locate = options;
  locate.k = 1;
  locate.list_size = kLocateListSize;
  SHOAL_RETURN_IF_ERROR((Walk<CodeNavigator, false>(navigate, locate, s, stats, counts)));
  std::vector<uint32_t>& near = s->near;
  near.clear();
  for (size_t i = 0; i < s->list.size(); ++i) near.push_back(s->list.node(i));
  return Walk<CodeNavigator, true>(navigate, options, s, stats, counts, &selected, near, subset);
}

template <class Navigator, bool kFiltered>
absl::Status SegmentReader::Walk(const Navigator& navigate, const SearchOptions& options,
                                 SearchScratch* s, SegmentSearchStats* stats,
                                 WalkCounts* counts, const BitSet* selected,
                                 std::span<const uint32_t> near,
                                 const graph::SubsetGraph* subset) const {
  const NodeLayout& layout = header_.layout;
  const size_t n = header_.vector_count;
  const size_t beam_width = std::max<uint32_t>(1, options.beam_width);
  CandidateList& list = s->list;
  // The list keeps max(L, k) nodes (on codes max(L, RerankFloor(k))), so
  // that k can be answered, but never more than the segment has (a caller's
  // list_size is unbounded). The walk ends once the list's first L are
  // expanded: with L below k it stops sooner, and the k answers are the
  // closest it has seen (recall for speed, SearchOptions::list_size).
  const size_t least = Navigator::kReadsRecord ? options.k : RerankFloor(options.k);
  list.Reset(std::min<size_t>(std::max<size_t>(options.list_size, least), n));
  const size_t expand_limit =
      std::min<size_t>(std::max<uint32_t>(options.list_size, 1), list.capacity());
  s->visited.Clear(n);
  if (stats != nullptr) s->blocks.Clear(header_.block_count);

  auto prefetch_neighbors = [&](uint32_t v) {
    if constexpr (kFiltered) {
      if (subset != nullptr) {
        PrefetchBytes(subset->row(v), 4 + 4 * size_t{subset->degree()});
        return;
      }
    }
    PrefetchBytes(NodeRecord(v) + layout.degree_offset(), 4 + 4 * size_t{layout.max_degree});
  };
  // Offers node v at distance d to the list.
  auto insert = [&](uint32_t v, float d) {
    if (!list.Accepts(d)) return;
    const size_t at = list.Insert(d, v);
    // A node that becomes the list's next to expand has its neighbour list
    // asked for now, before the hop's other offers, not only when it is read
    // (docs/performance-history.md, "The next node's neighbour list, a hop early").
    // Past the first L it is never expanded.
    if (at < expand_limit && at == list.NextUnexpanded()) prefetch_neighbors(v);
  };
  // Offers node v to the list (its block checked first when its record is
  // what the distance reads).
  auto offer = [&](uint32_t v) -> absl::Status {
    if constexpr (Navigator::kReadsRecord) {
      SHOAL_RETURN_IF_ERROR(ReadBlock(v, s, stats, &counts->sectors));
    }
    ++counts->computed;
    insert(v, navigate(v));
    return absl::OkStatus();
  };

  if constexpr (kFiltered) {
    // A filtered walk starts from selected nodes only: the medoid and the
    // entry points that are, and selected nodes spread over the node order
    // (a locality order: over the data), so that it starts among the
    // matches however far they lie from the medoid.
    size_t seeded = 0;
    auto seed = [&](uint32_t v) -> absl::Status {
      if (!selected->Test(v) || s->visited.TestAndSet(v)) return absl::OkStatus();
      ++seeded;
      return offer(v);
    };
    SHOAL_RETURN_IF_ERROR(seed(header_.medoid));
    // With a label graph of the segment's entry points' members, the walk
    // starts from those nearest the query alone (below); otherwise from
    // every selected entry point, then spread selected nodes.
    const bool from_entries = subset != nullptr && !subset->entries().empty();
    if (!from_entries) {
      for (uint32_t v : entry_points_) SHOAL_RETURN_IF_ERROR(seed(v));
    }
    if constexpr (!Navigator::kReadsRecord) {
      // With a label graph: the members near the entry points closest to
      // the query, among those of the closest groups (as an unfiltered walk
      // starts), one for each place in the list.
      if (from_entries) {
        std::vector<std::pair<float, uint32_t>>& closest = s->closest;
        closest.clear();
        ForClosestEntryGroups(navigate.query, counts,
                              [&](size_t begin, size_t end) {
          // Four codes at a time (they lie side by side).
          const uint8_t* codes[4];
          uint32_t at[4];
          float d[4];
          size_t held = 0;
          for (size_t i = begin; i < end; ++i) {
            if (subset->entries()[i] == graph::SubsetGraph::kNone) continue;
            codes[held] = entry_point_codes_.data() + i * header_.code_bytes;
            at[held++] = static_cast<uint32_t>(i);
            if (held == 4) {
              navigate.query.DistanceFour(codes, d);
              for (size_t j = 0; j < 4; ++j) closest.emplace_back(d[j], at[j]);
              held = 0;
            }
          }
          for (size_t j = 0; j < held; ++j) {
            closest.emplace_back(navigate.query.Distance(codes[j]), at[j]);
          }
        });
        counts->computed += closest.size();
        const size_t wanted = std::min(closest.size(), list.capacity());
        std::partial_sort(closest.begin(), closest.begin() + wanted, closest.end());
        for (size_t i = 0; i < wanted; ++i) {
          SHOAL_RETURN_IF_ERROR(seed(subset->entries()[closest[i].second]));
        }
      }
    }
    // Near the query (WalkFilteredFromNear): the selected nodes among them,
    // then among their neighbours, closest first, until twice the list's
    // length are offered (more would fall off the list).
    const size_t enough = seeded + 2 * list.capacity();
    for (const uint32_t u : near) SHOAL_RETURN_IF_ERROR(seed(u));
    for (size_t i = 0; i < near.size() && seeded < enough; ++i) {
      SHOAL_RETURN_IF_ERROR(ReadBlock(near[i], s, stats, &counts->sectors));
      const char* record = NodeRecord(near[i]);
      const uint32_t degree = DecodeFixed32(record + layout.degree_offset());
      for (uint32_t k = 0; k < degree && seeded < enough; ++k) {
        SHOAL_RETURN_IF_ERROR(
            seed(DecodeFixed32(record + layout.neighbors_offset() + 4 * k)));
      }
    }
    // Spread over the node order, so that a walk starts among the matches
    // however far from the query they lie (not needed when the closest
    // entry points' members filled the list).
    for (size_t i = 0; i < kFilteredSeeds && !(from_entries && seeded >= list.capacity()); ++i) {
      size_t v = selected->Next(i * n / kFilteredSeeds);
      if (v == n) v = selected->Next(0);
      if (v == n) break;
      SHOAL_RETURN_IF_ERROR(seed(static_cast<uint32_t>(v)));
    }
  } else {
    s->visited.TestAndSet(header_.medoid);
    SHOAL_RETURN_IF_ERROR(offer(header_.medoid));
  }
  if constexpr (!Navigator::kReadsRecord && !kFiltered) {
    // The entry points (ChooseEntryPoints; usually none): the codes of the
    // groups whose centres are closest, side by side; the closest entry
    // points stay in the list.
    auto scan = [&](size_t begin, size_t end) {
      counts->computed += ListEntryPoints(
          entry_points_, entry_point_codes_.data(), header_.code_bytes, begin, end,
          [&](const uint8_t* code) { return navigate.query.Distance(code); }, &s->visited, &list);
    };
    ForClosestEntryGroups(navigate.query, counts, scan);
  }
  while (true) {
    // The beam: up to beam_width closest unexpanded candidates among the
    // list's first L.
    s->beam.clear();
    const size_t end = std::min(list.size(), expand_limit);
    for (size_t i = list.NextUnexpanded(); i < end && s->beam.size() < beam_width; ++i) {
      if (list.expanded(i)) continue;
      list.MarkExpanded(i);
      s->beam.push_back(list.node(i));
      prefetch_neighbors(list.node(i));
    }
    if (s->beam.empty()) break;
    // And the one after the beam, read next hop unless this hop's offers
    // come before it.
    if (const size_t next = list.NextUnexpanded(); next < end) prefetch_neighbors(list.node(next));
    counts->hops += s->beam.size();
    // Their neighbours not seen yet. A node's block has passed its checks
    // before its list is read, so degree <= R and each neighbour < n.
    // Branch-free: every neighbour is written, the count advances only for
    // new ones (a mispredicted branch per neighbour cost more than the rest
    // of the loop).
    s->todo.resize(s->beam.size() * size_t{layout.max_degree});
    uint32_t* todo = s->todo.data();
    uint16_t* marks = s->visited.marks();
    const uint16_t epoch = s->visited.epoch();
    size_t m = 0;
    for (uint32_t u : s->beam) {
      if constexpr (!Navigator::kReadsRecord) {
        SHOAL_RETURN_IF_ERROR(ReadBlock(u, s, stats, &counts->sectors));
      }
      if constexpr (kFiltered) {
        if (subset != nullptr) {  // u's matches, gathered when the subset graph was built
          for (const uint32_t v : subset->neighbors(u)) {
            todo[m] = v;
            m += marks[v] != epoch;
            marks[v] = epoch;
          }
        } else {
          SHOAL_RETURN_IF_ERROR(GatherSelected(u, *selected, s, stats, counts, todo, &m));
        }
        continue;
      }
      const char* record = NodeRecord(u);
      const uint32_t degree = DecodeFixed32(record + layout.degree_offset());
      const char* neighbors = record + layout.neighbors_offset();
      for (uint32_t k = 0; k < degree; ++k) {
        const uint32_t v = DecodeFixed32(neighbors + 4 * k);
        todo[m] = v;
        m += marks[v] != epoch;
        marks[v] = epoch;
      }
    }
    if constexpr (Navigator::kReadsRecord) {
      for (size_t j = 0; j < std::min(m, kPrefetchAhead); ++j) navigate.Prefetch(todo[j]);
      for (size_t j = 0; j < m; ++j) {
        if (j + kPrefetchAhead < m) navigate.Prefetch(todo[j + kPrefetchAhead]);
        SHOAL_RETURN_IF_ERROR(offer(todo[j]));
      }
    } else {
      // Codes: all of the hop's distances first, four at a time, then the
      // offers (docs/performance-history.md, "Four codes at a time"): the four sums
      // overlap, and no list insertion sits between one code's load and the
      // next.
      s->scores.resize(m);
      float* scores = s->scores.data();
      for (size_t j = 0; j < std::min(m, kCodePrefetchAhead); ++j) navigate.Prefetch(todo[j]);
      size_t j = 0;
      for (; j + 4 <= m; j += 4) {
        for (size_t p = j + kCodePrefetchAhead; p < std::min(m, j + kCodePrefetchAhead + 4); ++p) {
          navigate.Prefetch(todo[p]);
        }
        navigate.Four(todo + j, scores + j);
      }
      for (; j < m; ++j) scores[j] = navigate(todo[j]);
      counts->computed += m;
      for (j = 0; j < m; ++j) insert(todo[j], scores[j]);
    }
  }
  return absl::OkStatus();
}

template <class Scan>
void SegmentReader::ForClosestEntryGroups(const Sq8Query& query, WalkCounts* counts,
                                          const Scan& scan) const {
  const size_t groups = entry_group_begin_.empty() ? 0 : entry_group_begin_.size() - 1;
  if (groups <= kEntryGroupsScanned) {
    scan(0, entry_points_.size());
    return;
  }
  std::pair<float, uint32_t> best[kEntryGroupsScanned];
  size_t kept = 0;
  const uint8_t* code = entry_group_codes_.data();
  for (uint32_t g = 0; g < groups; ++g, code += header_.code_bytes) {
    const float d = query.Distance(code);
    if (kept < kEntryGroupsScanned) {
      best[kept++] = {d, g};
    } else if (d < best[kept - 1].first) {
      best[kept - 1] = {d, g};
    } else {
      continue;
    }
    for (size_t j = kept - 1; j > 0 && best[j].first < best[j - 1].first; --j) {
      std::swap(best[j], best[j - 1]);
    }
  }
  counts->computed += groups;
  for (size_t b = 0; b < kept; ++b) {
    scan(entry_group_begin_[best[b].second], entry_group_begin_[best[b].second + 1]);
  }
}

void SegmentReader::Offer(std::span<const CandidateList::Entry> ranked, uint32_t k,
                          const AnswerFilter& admit,
                          TopK* top) const {
  const NodeLayout& layout = header_.layout;
  admit.OfferRanked(
      ranked.size(), k,
      [&](size_t i) {
        const uint32_t node = ranked[i].node & ~CandidateList::kExpanded;
        const char* record = NodeRecord(node);
        return RankedEntry{DecodeFixed64(record + layout.id_offset()),
                           DecodeFixed64(record + layout.sequence_offset()), ranked[i].distance,
                           node};
      },
      top);
}

absl::Status SegmentReader::Search(const float* query, const SearchOptions& options,
                                   const AnswerFilter& admit,
                                   TopK* top, SegmentSearchStats* stats) const {
  if (header_.vector_count == 0 || options.k == 0) return absl::OkStatus();
  if (SearchScans(options, header_.vector_count)) {
    return ScanSegment(*this, header_.metric, header_.dim, query, admit, top, stats);
  }
  if (sq8_ != nullptr) return SearchCoded(query, options, admit, top, stats);
  switch (header_.metric) {
    case Metric::kL2:
      return SearchImpl<Metric::kL2>(query, options, admit, top, stats);
    case Metric::kInnerProduct:
      return SearchImpl<Metric::kInnerProduct>(query, options, admit, top, stats);
    case Metric::kCosine:
      return SearchImpl<Metric::kCosine>(query, options, admit, top, stats);
  }
  return absl::InternalError("unknown metric");  // Open rejects these
}

absl::Status SegmentReader::SearchCoded(const float* query, const SearchOptions& options,
                                        const AnswerFilter& admit,
                                        TopK* top, SegmentSearchStats* stats) const {
  const ScratchLease lease(&tls_scratch);
  SearchScratch* s = lease.get();
  s->sq8.Reset(*sq8_, header_.metric, query);
  WalkCounts counts;
  bool pending = false;
  const graph::SubsetGraph* subset =
      admit.selected() == nullptr ? nullptr : SubsetFor(admit, &pending);
  CountLabelGraphWalk(subset, pending, stats);
  // A label graph starts its walk near the query by itself (its members
  // near the closest entry points); without one, a graph with entry points
  // first locates the query's part of the graph with an unfiltered walk.
  if (admit.selected() != nullptr && !entry_points_.empty() &&
      (subset == nullptr || subset->entries().empty())) {
    SHOAL_RETURN_IF_ERROR(WalkFilteredFromNear(CodeNavigator{*this, s->sq8}, options, s, stats,
                                               &counts, *admit.selected(), subset));
  } else {
    SHOAL_RETURN_IF_ERROR(WalkMaybeFiltered(CodeNavigator{*this, s->sq8}, options, s, stats,
                                            &counts, admit.selected(), subset));
  }

  // Rerank the list with the full vectors, closest first.
  const CandidateList& list = s->list;
  std::vector<CandidateList::Entry>& exact = s->exact;
  exact.clear();
  for (size_t i = 0; i < list.size(); ++i) {
    PrefetchBytes(NodeRecord(list.node(i)), size_t{header_.dim} * sizeof(float));
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const uint32_t v = list.node(i);
    SHOAL_RETURN_IF_ERROR(ReadBlock(v, s, stats, &counts.sectors));
    exact.push_back({Distance(header_.metric, query, NodeVector(NodeRecord(v)), header_.dim), v});
  }
  counts.computed += list.size();
  std::sort(exact.begin(), exact.end(), [](const auto& a, const auto& b) {
    return a.distance < b.distance || (a.distance == b.distance && a.node < b.node);
  });
  Offer(exact, options.k, admit, top);
  counts.AddTo(stats);
  return absl::OkStatus();
}

template <Metric kMetric>
absl::Status SegmentReader::SearchImpl(const float* query, const SearchOptions& options,
                                       const AnswerFilter& admit,
                                       TopK* top, SegmentSearchStats* stats) const {
  const ScratchLease lease(&tls_scratch);
  SearchScratch* s = lease.get();
  WalkCounts counts;
  bool pending = false;
  const graph::SubsetGraph* subset = SubsetFor(admit, &pending);
  CountLabelGraphWalk(subset, pending, stats);
  SHOAL_RETURN_IF_ERROR(
      WalkMaybeFiltered(VectorNavigator<kMetric>{*this, query, {}}, options, s, stats, &counts,
                        admit.selected(), subset));
  // The list is exact: offer its first k admitted entries.
  Offer(s->list.entries(), options.k, admit, top);
  counts.AddTo(stats);
  return absl::OkStatus();
}

// The nodes a scan reads, as a cursor: a BitSet's members, or a sorted list.
struct SegmentReader::BitNodes {
  const BitSet& set;
  size_t n;
  size_t count() const { return set.Count(); }
  size_t first() const { return set.Next(0); }
  size_t next(size_t at) const { return set.Next(at + 1); }
  bool done(size_t at) const { return at >= n; }
  uint32_t node(size_t at) const { return static_cast<uint32_t>(at); }
};
struct SegmentReader::ListNodes {
  std::span<const uint32_t> list;
  size_t count() const { return list.size(); }
  size_t first() const { return 0; }
  size_t next(size_t at) const { return at + 1; }
  bool done(size_t at) const { return at >= list.size(); }
  uint32_t node(size_t at) const { return list[at]; }
};

absl::Status SegmentReader::ScanNodes(const float* query, const SearchOptions& options,
                                      const BitSet& nodes, const AnswerFilter& admit, TopK* top,
                                      SegmentSearchStats* stats) const {
  return ScanNodesOf(query, options, BitNodes{nodes, header_.vector_count}, admit, top, stats);
}

absl::Status SegmentReader::ScanNodeList(const float* query, const SearchOptions& options,
                                         std::span<const uint32_t> nodes,
                                         const AnswerFilter& admit, TopK* top,
                                         SegmentSearchStats* stats) const {
  return ScanNodesOf(query, options, ListNodes{nodes}, admit, top, stats);
}

template <class Nodes>
absl::Status SegmentReader::ScanNodesOf(const float* query, const SearchOptions& options,
                                        const Nodes& nodes, const AnswerFilter& admit, TopK* top,
                                        SegmentSearchStats* stats) const {
  const size_t count = nodes.count();
  const size_t shortlist = std::max<size_t>(options.list_size, RerankFloor(options.k));
  if (sq8_ == nullptr || count <= shortlist || options.k == 0) {
    return ScanNodeVectors(query, nodes, admit, top, stats);
  }
  const ScratchLease lease(&tls_scratch);
  SearchScratch* s = lease.get();
  s->sq8.Reset(*sq8_, header_.metric, query);
  const CodeNavigator navigate{*this, s->sq8};
  CandidateList& list = s->list;
  list.Reset(shortlist);
  // The codes, four at a time, members in ascending order (the codes lie in
  // node order: the reads run forward through one array).
  uint32_t four[4];
  float d[4];
  size_t held = 0;
  auto flush = [&] {
    if (held == 4) {
      navigate.Four(four, d);
    } else {
      for (size_t j = 0; j < held; ++j) d[j] = navigate(four[j]);
    }
    for (size_t j = 0; j < held; ++j) {
      if (list.Accepts(d[j])) list.Insert(d[j], four[j]);
    }
    held = 0;
  };
  size_t ahead = nodes.first();
  for (size_t i = 0; i < 2 * kPrefetchAhead && !nodes.done(ahead); ++i, ahead = nodes.next(ahead)) {
    navigate.Prefetch(nodes.node(ahead));
  }
  for (size_t at = nodes.first(); !nodes.done(at); at = nodes.next(at)) {
    if (!nodes.done(ahead)) {
      navigate.Prefetch(nodes.node(ahead));
      ahead = nodes.next(ahead);
    }
    four[held++] = nodes.node(at);
    if (held == 4) flush();
  }
  flush();
  // Rerank the shortlist by the vectors, closest first.
  std::vector<CandidateList::Entry>& exact = s->exact;
  exact.clear();
  for (size_t i = 0; i < list.size(); ++i) {
    PrefetchBytes(NodeRecord(list.node(i)), size_t{header_.dim} * sizeof(float));
  }
  uint64_t sectors = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const uint32_t v = list.node(i);
    SHOAL_RETURN_IF_ERROR(ReadBlock(v, s, nullptr, &sectors));
    exact.push_back({Distance(header_.metric, query, NodeVector(NodeRecord(v)), header_.dim), v});
  }
  std::sort(exact.begin(), exact.end(), [](const auto& a, const auto& b) {
    return a.distance < b.distance || (a.distance == b.distance && a.node < b.node);
  });
  if (stats != nullptr) stats->distance_computations += count + exact.size();
  TopK mine(options.k);
  Offer(exact, options.k, admit, &mine);
  if (mine.size() < options.k) {
    // Newer versions or deletes hid too many of the shortlist: every node.
    return ScanNodeVectors(query, nodes, admit, top, stats);
  }
  for (const Neighbor& nb : mine.Take()) top->Push(nb.id, nb.distance);
  return absl::OkStatus();
}

template <class Nodes>
absl::Status SegmentReader::ScanNodeVectors(const float* query, const Nodes& nodes,
                                            const AnswerFilter& admit, TopK* top,
                                            SegmentSearchStats* stats) const {
  const NodeLayout& layout = header_.layout;
  const size_t bytes = size_t{header_.dim} * sizeof(float);
  uint64_t computed = 0;
  // The nodes kPrefetchAhead members ahead are asked for as each is read.
  size_t ahead = nodes.first();
  for (size_t i = 0; i < kPrefetchAhead && !nodes.done(ahead); ++i, ahead = nodes.next(ahead)) {
    PrefetchBytes(NodeRecord(nodes.node(ahead)), bytes);
  }
  for (size_t at = nodes.first(); !nodes.done(at); at = nodes.next(at)) {
    if (!nodes.done(ahead)) {
      PrefetchBytes(NodeRecord(nodes.node(ahead)), bytes);
      ahead = nodes.next(ahead);
    }
    const uint32_t node = nodes.node(at);
    SHOAL_RETURN_IF_ERROR(EnsureVerified(BlockOf(node)));
    const char* record = NodeRecord(node);
    const uint64_t id = DecodeFixed64(record + layout.id_offset());
    if (!admit.Admits(id, DecodeFixed64(record + layout.sequence_offset()), node)) continue;
    ++computed;
    top->Push(id, Distance(header_.metric, query, NodeVector(record), header_.dim));
  }
  if (stats != nullptr) stats->distance_computations += computed;
  return absl::OkStatus();
}

void SegmentReader::ChooseEntryPoints() {
  const size_t n = header_.vector_count;
  if (sq8_ == nullptr || EntryPointCount(n) == 0) return;
  const ScratchLease lease(&tls_scratch);
  SearchScratch* s = lease.get();
  SearchOptions probe;
  probe.k = 1;
  probe.list_size = kEntryProbeListSize;
  std::vector<float> q(header_.dim);
  size_t missed = 0;
  for (size_t i = 0; i < kEntryProbes; ++i) {
    const uint32_t v = SpreadNode(i, kEntryProbes, n);
    if (!EnsureVerified(BlockOf(v)).ok()) return;
    std::memcpy(q.data(), NodeVector(NodeRecord(v)), q.size() * sizeof(float));
    s->sq8.Reset(*sq8_, header_.metric, q.data());
    WalkCounts counts;
    if (!Walk(CodeNavigator{*this, s->sq8}, probe, s, nullptr, &counts).ok()) return;
    if (s->list.Find(v) == s->list.size()) ++missed;
  }
  if (missed < kEntryProbesMissed) return;
  SpreadEntryPoints(n, EntryPointCount(n), codes_, header_.code_bytes, &entry_points_,
                    &entry_point_codes_);
  GroupEntryPoints();
}

void SegmentReader::GroupEntryPoints() {
  const size_t count = entry_points_.size();
  const size_t groups = static_cast<size_t>(std::sqrt(static_cast<double>(count)));
  if (groups <= kEntryGroupsScanned) return;
  const size_t dim = header_.dim;
  std::vector<float> points(count * dim);
  for (size_t i = 0; i < count; ++i) {
    sq8_->Decode(entry_point_codes_.data() + i * header_.code_bytes, points.data() + i * dim);
  }
  // k-means (Lloyd), seeded with entry points spread over the node order.
  std::vector<float> centres(groups * dim);
  for (size_t g = 0; g < groups; ++g) {
    std::memcpy(centres.data() + g * dim, points.data() + (g * count / groups) * dim,
                dim * sizeof(float));
  }
  std::vector<uint32_t> of(count, 0);
  for (int round = 0; round < kEntryGroupRounds; ++round) {
    for (size_t i = 0; i < count; ++i) {
      float best = std::numeric_limits<float>::infinity();
      for (size_t g = 0; g < groups; ++g) {
        const float d =
            Kernels().l2_squared(points.data() + i * dim, centres.data() + g * dim, dim);
        if (d < best) {
          best = d;
          of[i] = static_cast<uint32_t>(g);
        }
      }
    }
    std::vector<double> sum(groups * dim, 0.0);
    std::vector<size_t> size(groups, 0);
    for (size_t i = 0; i < count; ++i) {
      ++size[of[i]];
      for (size_t j = 0; j < dim; ++j) sum[of[i] * dim + j] += points[i * dim + j];
    }
    for (size_t g = 0; g < groups; ++g) {
      if (size[g] == 0) continue;  // keeps its centre
      for (size_t j = 0; j < dim; ++j) {
        centres[g * dim + j] =
            static_cast<float>(sum[g * dim + j] / static_cast<double>(size[g]));
      }
    }
  }
  // Entry points sorted by group (stable: node order within a group).
  std::vector<uint32_t> order(count);
  for (size_t i = 0; i < count; ++i) order[i] = static_cast<uint32_t>(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return of[a] < of[b]; });
  std::vector<uint32_t> points_sorted(count);
  std::vector<uint8_t> codes_sorted(entry_point_codes_.size());
  entry_group_begin_.assign(groups + 1, 0);
  for (size_t i = 0; i < count; ++i) {
    points_sorted[i] = entry_points_[order[i]];
    std::memcpy(codes_sorted.data() + i * header_.code_bytes,
                entry_point_codes_.data() + order[i] * header_.code_bytes, header_.code_bytes);
    ++entry_group_begin_[of[order[i]] + 1];
  }
  for (size_t g = 0; g < groups; ++g) entry_group_begin_[g + 1] += entry_group_begin_[g];
  entry_points_ = std::move(points_sorted);
  entry_point_codes_ = std::move(codes_sorted);
  entry_group_codes_.resize(groups * header_.code_bytes);
  for (size_t g = 0; g < groups; ++g) {
    sq8_->Encode(centres.data() + g * dim, entry_group_codes_.data() + g * header_.code_bytes);
  }
}

}  // namespace shoal::segment
