// Copyright 2026 The shoal Authors.
//
// Beam search over a segment's graph (SegmentReader::Search).
//
// The candidate list holds the L closest nodes seen; each step expands the
// beam_width closest unexpanded ones: their neighbour lists are read, the
// neighbours not seen before have their distance computed and are offered to
// the list. The search ends when every listed node has been expanded.
//
// A segment with codes (SQ8, segment/sq8.h) navigates on them: a distance
// reads a quarter of the bytes, from one contiguous array. The list's
// distances are then approximate, so its entries are reranked with the full
// vectors (one node record each) and the k closest visible are the answer.
// Without codes the list's distances are exact: its first k visible entries
// are the answer.
//
// Each thread keeps its scratch (candidate list, visited set) in a
// thread_local, so a query allocates nothing once the thread has searched a
// segment this large. Reentrant: a `visible` callback that searches again
// gets a scratch of its own.

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "distance/distance.h"
#include "segment/candidate_list.h"
#include "segment/prefetch.h"
#include "segment/segment_reader.h"
#include "segment/sq8.h"
#include "segment/visited_set.h"
#include "util/coding.h"
#include "util/status_macros.h"

namespace shoal::segment {
namespace {

// Vectors this many positions ahead of the one being compared are prefetched.
constexpr size_t kPrefetchAhead = 4;

struct SearchScratch {
  CandidateList list;
  VisitedSet visited;
  VisitedSet blocks;  // node blocks read, for SegmentSearchStats
  std::vector<uint32_t> beam;
  std::vector<uint32_t> todo;
  Sq8Query sq8;
  std::vector<CandidateList::Entry> exact;  // the list reranked
  bool in_use = false;
};

thread_local SearchScratch tls_scratch;

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

absl::Status SegmentReader::Search(const float* query, const SearchOptions& options,
                                   const std::function<bool(uint64_t, uint64_t)>& visible,
                                   TopK* top, SegmentSearchStats* stats) const {
  if (header_.vector_count == 0 || options.k == 0) return absl::OkStatus();
  if (sq8_ != nullptr) return SearchCoded(query, options, visible, top, stats);
  switch (header_.metric) {
    case Metric::kL2:
      return SearchImpl<Metric::kL2>(query, options, visible, top, stats);
    case Metric::kInnerProduct:
      return SearchImpl<Metric::kInnerProduct>(query, options, visible, top, stats);
    case Metric::kCosine:
      return SearchImpl<Metric::kCosine>(query, options, visible, top, stats);
  }
  return absl::InternalError("unknown metric");  // Open rejects these
}

absl::Status SegmentReader::SearchCoded(const float* query, const SearchOptions& options,
                                        const std::function<bool(uint64_t, uint64_t)>& visible,
                                        TopK* top, SegmentSearchStats* stats) const {
  std::unique_ptr<SearchScratch> own;
  SearchScratch* s = &tls_scratch;
  if (s->in_use) {
    own = std::make_unique<SearchScratch>();
    s = own.get();
  }
  s->in_use = true;
  absl::Cleanup release = [s] { s->in_use = false; };

  const NodeLayout& layout = header_.layout;
  const size_t n = header_.vector_count;
  const size_t code_bytes = header_.code_bytes;
  const size_t beam_width = std::max<uint32_t>(1, options.beam_width);
  CandidateList& list = s->list;
  list.Reset(std::min<size_t>(std::max(options.list_size, options.k), n));
  s->visited.Clear(n);
  if (stats != nullptr) s->blocks.Clear(header_.block_count);
  Sq8Query& sq8 = s->sq8;
  sq8.Reset(*sq8_, header_.metric, query);
  uint64_t hops = 0, computed = 0, sectors = 0;

  // Reads node u's block: verified on first use, counted for the stats.
  auto read_block = [&](uint32_t u) -> absl::Status {
    const uint32_t block = BlockOf(u);
    SHOAL_RETURN_IF_ERROR(EnsureVerified(block));
    if (stats != nullptr && !s->blocks.TestAndSet(block)) sectors += layout.sectors_per_block;
    return absl::OkStatus();
  };

  s->visited.TestAndSet(header_.medoid);
  list.Insert(sq8.Distance(Code(header_.medoid)), header_.medoid);
  ++computed;
  while (true) {
    s->beam.clear();
    for (size_t i = list.NextUnexpanded(); i < list.size() && s->beam.size() < beam_width;
         ++i) {
      if (list.expanded(i)) continue;
      list.MarkExpanded(i);
      s->beam.push_back(list.node(i));
      PrefetchBytes(NodeRecord(list.node(i)) + layout.degree_offset(),
                    4 + 4 * size_t{layout.max_degree});
    }
    if (s->beam.empty()) break;
    hops += s->beam.size();
    s->todo.resize(s->beam.size() * size_t{layout.max_degree});
    uint32_t* todo = s->todo.data();
    uint16_t* marks = s->visited.marks();
    const uint16_t epoch = s->visited.epoch();
    size_t m = 0;
    for (uint32_t u : s->beam) {
      // Its neighbour list is read: its block must have passed its checks
      // (degree <= R, each neighbour < n).
      SHOAL_RETURN_IF_ERROR(read_block(u));
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
    for (size_t j = 0; j < std::min(m, kPrefetchAhead); ++j) {
      PrefetchBytes(Code(todo[j]), code_bytes);
    }
    for (size_t j = 0; j < m; ++j) {
      if (j + kPrefetchAhead < m) PrefetchBytes(Code(todo[j + kPrefetchAhead]), code_bytes);
      const float d = sq8.Distance(Code(todo[j]));
      if (list.Accepts(d)) list.Insert(d, todo[j]);
    }
    computed += m;
  }

  // Rerank the list with the full vectors, closest first.
  std::vector<CandidateList::Entry>& exact = s->exact;
  exact.clear();
  for (size_t i = 0; i < list.size(); ++i) {
    PrefetchBytes(NodeRecord(list.node(i)), size_t{layout.dim} * sizeof(float));
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const uint32_t v = list.node(i);
    SHOAL_RETURN_IF_ERROR(read_block(v));
    exact.push_back({Distance(header_.metric, query, NodeVector(NodeRecord(v)), layout.dim), v});
  }
  computed += list.size();
  std::sort(exact.begin(), exact.end(), [](const auto& a, const auto& b) {
    return a.distance < b.distance || (a.distance == b.distance && a.node < b.node);
  });
  uint32_t offered = 0;
  for (size_t i = 0; i < exact.size() && offered < options.k; ++i) {
    const char* record = NodeRecord(exact[i].node);
    const uint64_t id = DecodeFixed64(record + layout.id_offset());
    if (visible && !visible(id, DecodeFixed64(record + layout.sequence_offset()))) continue;
    top->Push(id, exact[i].distance);
    ++offered;
  }
  if (stats != nullptr) {
    stats->hops += hops;
    stats->distance_computations += computed;
    stats->sectors_touched += sectors;
  }
  return absl::OkStatus();
}

template <Metric kMetric>
absl::Status SegmentReader::SearchImpl(const float* query, const SearchOptions& options,
                                       const std::function<bool(uint64_t, uint64_t)>& visible,
                                       TopK* top, SegmentSearchStats* stats) const {
  std::unique_ptr<SearchScratch> own;
  SearchScratch* s = &tls_scratch;
  if (s->in_use) {
    own = std::make_unique<SearchScratch>();
    s = own.get();
  }
  s->in_use = true;
  absl::Cleanup release = [s] { s->in_use = false; };

  const NodeLayout& layout = header_.layout;
  const size_t dim = layout.dim;
  const size_t vector_bytes = dim * sizeof(float);
  const QueryDistance<kMetric> distance;
  const size_t n = header_.vector_count;
  const size_t beam_width = std::max<uint32_t>(1, options.beam_width);
  CandidateList& list = s->list;
  // L as asked, but never more than the segment has nodes: a larger list
  // would only hold the same nodes (and a caller's list_size is unbounded).
  list.Reset(std::min<size_t>(std::max(options.list_size, options.k), n));
  s->visited.Clear(n);
  if (stats != nullptr) s->blocks.Clear(header_.block_count);
  uint64_t hops = 0, computed = 0, sectors = 0;

  // Offers node v: checks its block on first use, then its distance.
  auto visit = [&](uint32_t v) -> absl::Status {
    const uint32_t block = BlockOf(v);
    SHOAL_RETURN_IF_ERROR(EnsureVerified(block));
    if (stats != nullptr && !s->blocks.TestAndSet(block)) sectors += layout.sectors_per_block;
    const float d = distance(query, NodeVector(NodeRecord(v)), dim);
    ++computed;
    if (list.Accepts(d)) list.Insert(d, v);
    return absl::OkStatus();
  };

  s->visited.TestAndSet(header_.medoid);
  SHOAL_RETURN_IF_ERROR(visit(header_.medoid));
  while (true) {
    // The beam: up to beam_width closest unexpanded candidates.
    s->beam.clear();
    for (size_t i = list.NextUnexpanded(); i < list.size() && s->beam.size() < beam_width;
         ++i) {
      if (list.expanded(i)) continue;
      list.MarkExpanded(i);
      s->beam.push_back(list.node(i));
      PrefetchBytes(NodeRecord(list.node(i)) + layout.degree_offset(),
                    4 + 4 * size_t{layout.max_degree});
    }
    if (s->beam.empty()) break;
    hops += s->beam.size();
    // Their neighbours not seen yet. Every listed node's block has been
    // verified, so degree <= R and each neighbour < n.
    // Branch-free: every neighbour is written, the count advances only for
    // new ones (a mispredicted branch per neighbour cost more than the rest
    // of the loop).
    s->todo.resize(s->beam.size() * size_t{layout.max_degree});
    uint32_t* todo = s->todo.data();
    uint16_t* marks = s->visited.marks();
    const uint16_t epoch = s->visited.epoch();
    size_t m = 0;
    for (uint32_t u : s->beam) {
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
    for (size_t j = 0; j < std::min(m, kPrefetchAhead); ++j) {
      PrefetchBytes(NodeRecord(todo[j]), vector_bytes);
    }
    for (size_t j = 0; j < m; ++j) {
      if (j + kPrefetchAhead < m) PrefetchBytes(NodeRecord(todo[j + kPrefetchAhead]), vector_bytes);
      SHOAL_RETURN_IF_ERROR(visit(todo[j]));
    }
  }

  // The list is exact: offer its first k visible entries.
  uint32_t offered = 0;
  for (size_t i = 0; i < list.size() && offered < options.k; ++i) {
    const char* record = NodeRecord(list.node(i));
    const uint64_t id = DecodeFixed64(record + layout.id_offset());
    if (visible && !visible(id, DecodeFixed64(record + layout.sequence_offset()))) continue;
    top->Push(id, list.distance(i));
    ++offered;
  }
  if (stats != nullptr) {
    stats->hops += hops;
    stats->distance_computations += computed;
    stats->sectors_touched += sectors;
  }
  return absl::OkStatus();
}

}  // namespace shoal::segment
