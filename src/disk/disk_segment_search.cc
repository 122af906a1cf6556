// Copyright 2026 The shoal Authors.
//
// Beam search over a disk-resident segment (DiskSegmentReader::Walk),
// DiskANN's search from SSD, and what both walks share: the start, the
// expansion of one record, and the ranking of the rerank set (Search).
//
// The candidate list holds the max(L, k) closest nodes by their codes (in RAM: SQ8,
// or SQ4 under a tight memory budget).
// Each hop takes the beam_width closest unexpanded ones and fetches their
// records: from the node cache, or by reading their blocks (FetchBeam,
// through ReadBlocks, which submits the hop's reads together). A record read
// gives two things at once (ExpandRecord): the neighbour list, whose new
// nodes join the list by their code distance, and the full vector, whose
// exact distance puts the node in the rerank set. A block holds
// nodes_per_block records, laid out so that they are graph neighbours
// (block_layout.h): its other records join the rerank set too, and those
// the list would take are expanded at once, without a read of their own
// (Starling's block search). The search ends when every
// listed node has been expanded; the rerank set (every expanded node, so a
// superset of the final list) sorted by exact distance gives the answer.
// The pipelined walk (disk_segment_pipelined_search.cc) differs only in
// when it reads and expands.
//
// A list as long as the segment scans it instead (segment_scan.h).
//
// Each thread keeps its scratch (disk_search_scratch.h) in a thread_local,
// so a query allocates nothing once its thread has searched a segment this
// large. Reentrant, as segment_search.cc.

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "distance/distance.h"
#include "graph/candidate_list.h"
#include "disk/disk_search_scratch.h"
#include "disk/disk_segment_reader.h"
#include "graph/entry_points.h"
#include "graph/scratch_lease.h"
#include "segment/segment_scan.h"
#include "codes/sq8.h"
#include "util/coding.h"
#include "util/status_macros.h"

namespace shoal::disk {

using graph::CandidateList;
using graph::ListEntryPoints;
using graph::ScratchLease;
using segment::AnswerFilter;
using segment::NodeLayout;
using segment::RankedEntry;
using segment::ScanSegment;
using segment::SearchScans;

namespace {

thread_local DiskSearchScratch tls_disk_scratch;

}  // namespace

absl::Status DiskSegmentReader::FetchBeam(DiskSearchScratch* s, SegmentSearchStats* stats,
                                          IoCounts* io) const {
  const size_t w = s->beam.size();
  s->records.assign(w, nullptr);
  s->slot.assign(w, DiskSearchScratch::kCached);
  s->blocks.clear();
  for (size_t i = 0; i < w; ++i) {
    const uint32_t u = s->beam[i];
    if (const char* record = cache_.Find(u); record != nullptr) {
      s->records[i] = record;
      ++stats->cache_hits;
      continue;
    }
    // Beam nodes may share a block (nodes_per_block > 1): read it once.
    const uint32_t block = BlockOf(u);
    auto at = std::find(s->blocks.begin(), s->blocks.end(), block);
    s->slot[i] = static_cast<uint32_t>(at - s->blocks.begin());
    if (at == s->blocks.end()) s->blocks.push_back(block);
  }
  if (s->blocks.empty()) return absl::OkStatus();
  const size_t block_bytes = header_.layout.block_bytes();
  char* bytes = s->buffer.Reserve(s->blocks.size() * block_bytes);
  SHOAL_RETURN_IF_ERROR(ReadBlocks(s->blocks, bytes, io));
  for (size_t i = 0; i < w; ++i) {
    if (s->slot[i] == DiskSearchScratch::kCached) continue;
    s->records[i] = bytes + size_t{s->slot[i]} * block_bytes + OffsetInBlock(s->beam[i]);
  }
  return absl::OkStatus();
}

void DiskSegmentReader::ResetQuery(const float* query, DiskSearchScratch* s) const {
  if (residual_ != nullptr) {
    s->residual.Reset(*residual_, header_.metric, query);
  } else {
    s->sq8.Reset(*sq8_, header_.metric, query);
  }
}

float DiskSegmentReader::CodeDistanceAt(const DiskSearchScratch& s, const uint8_t* code) const {
  return residual_ != nullptr ? s.residual.Distance(code) : s.sq8.Distance(code);
}

void DiskSegmentReader::StartWalk(const SearchOptions& options, DiskSearchScratch* s,
                                  SegmentSearchStats* stats) const {
  const size_t n = header_.vector_count;
  // L as asked, but never more than the segment has nodes.
  s->list.Reset(std::min<size_t>(std::max(options.list_size, options.k), n));
  s->visited.Clear(n);
  s->expanded.Clear(n);
  s->rerank.clear();
  s->visited.TestAndSet(header_.medoid);
  s->list.Insert(CodeDistance(*s, header_.medoid), header_.medoid);
  ++stats->distance_computations;
  // The entry points: one scan of their codes; the closest stay listed, so
  // the walk starts near the query rather than at the medoid.
  stats->distance_computations += ListEntryPoints(
      entry_points_, entry_point_codes_.data(), code_bytes_, 0, entry_points_.size(),
      [&](const uint8_t* code) { return CodeDistanceAt(*s, code); }, &s->visited, &s->list);
  if (residual_ != nullptr) {
    // With 4-bit codes the groups take the entry points' place: the query's
    // group terms (computed anyway) rank the groups, and the L nearest
    // groups' nodes nearest their centres are listed.
    const std::vector<float>& terms = s->residual.group_terms();
    s->groups.clear();
    for (uint32_t g = 0; g < group_nodes_.size(); ++g) {
      // NaN (centres beyond the float range) last: the order must be strict.
      const float t = std::isnan(terms[g]) ? std::numeric_limits<float>::infinity() : terms[g];
      if (group_nodes_[g] != kNoGroupNode) s->groups.push_back({t, g});
    }
    const size_t take = std::min(s->groups.size(), s->list.capacity());
    std::nth_element(s->groups.begin(), s->groups.begin() + take, s->groups.end());
    for (size_t i = 0; i < take; ++i) {
      const uint32_t v = group_nodes_[s->groups[i].second];
      if (s->visited.TestAndSet(v)) continue;
      const float d = CodeDistance(*s, v);
      ++stats->distance_computations;
      if (s->list.Accepts(d)) s->list.Insert(d, v);
    }
  }
}

void DiskSegmentReader::ExpandRecord(const float* query, uint32_t node, const char* record,
                                     DiskSearchScratch* s, SegmentSearchStats* stats) const {
  const NodeLayout& layout = header_.layout;
  // Checked (cache or just read): degree <= R and every neighbour < n.
  s->rerank.push_back(
      {Distance(header_.metric, query, reinterpret_cast<const float*>(record), header_.dim),
       node, DecodeFixed64(record + layout.id_offset()),
       DecodeFixed64(record + layout.sequence_offset())});
  uint64_t computed = 1;  // the exact one
  const uint32_t degree = DecodeFixed32(record + layout.degree_offset());
  const char* neighbors = record + layout.neighbors_offset();
  for (uint32_t k = 0; k < degree; ++k) {
    const uint32_t v = DecodeFixed32(neighbors + 4 * k);
    if (s->visited.TestAndSet(v)) continue;
    const float d = CodeDistance(*s, v);
    ++computed;
    if (s->list.Accepts(d)) s->list.Insert(d, v);
  }
  stats->distance_computations += computed;
  ++stats->hops;
}

void DiskSegmentReader::ExpandBlockMates(uint32_t block, const char* bytes, const float* query,
                                         DiskSearchScratch* s, SegmentSearchStats* stats) const {
  const NodeLayout& layout = header_.layout;
  const uint64_t first = uint64_t{block} * layout.nodes_per_block;
  const uint64_t end = std::min<uint64_t>(first + layout.nodes_per_block, header_.vector_count);
  CandidateList& list = s->list;
  for (uint64_t m64 = first; m64 < end; ++m64) {
    const auto m = static_cast<uint32_t>(m64);
    // Taken by the walk (expanded, or being read), or done already.
    if (s->expanded.TestAndSet(m)) continue;
    const char* record = bytes + (m64 - first) * layout.node_bytes;
    // Listed (and not expanded): expand it now rather than read this block
    // again later. Unseen: it joins the list, expanded, if its code
    // distance would place it there.
    size_t at = list.size();
    if (s->visited.TestAndSet(m)) {
      at = list.Find(m);
    } else {
      const float d = CodeDistance(*s, m);
      ++stats->distance_computations;
      if (list.Accepts(d)) at = list.Insert(d, m);
    }
    if (at < list.size()) {
      list.MarkExpanded(at);
      ExpandRecord(query, m, record, s, stats);
    } else {
      // Not worth a hop, but its exact distance is known: it may still
      // be among the k closest.
      s->rerank.push_back(
          {Distance(header_.metric, query, reinterpret_cast<const float*>(record), header_.dim),
           m, DecodeFixed64(record + layout.id_offset()),
           DecodeFixed64(record + layout.sequence_offset())});
      ++stats->distance_computations;
    }
  }
}

absl::Status DiskSegmentReader::Walk(const float* query, const SearchOptions& options,
                                     DiskSearchScratch* s, SegmentSearchStats* stats,
                                     IoCounts* io) const {
  const size_t beam_width = std::max<uint32_t>(1, options.beam_width);
  const size_t block_bytes = header_.layout.block_bytes();
  CandidateList& list = s->list;
  StartWalk(options, s, stats);
  while (true) {
    s->beam.clear();
    for (size_t i = list.NextUnexpanded(); i < list.size() && s->beam.size() < beam_width;
         ++i) {
      if (list.expanded(i)) continue;
      list.MarkExpanded(i);
      s->expanded.TestAndSet(list.node(i));
      s->beam.push_back(list.node(i));
    }
    if (s->beam.empty()) break;
    SHOAL_RETURN_IF_ERROR(FetchBeam(s, stats, io));
    for (size_t i = 0; i < s->beam.size(); ++i) {
      ExpandRecord(query, s->beam[i], s->records[i], s, stats);
    }
    // A block read holds nodes_per_block records: the others came for free.
    if (header_.layout.nodes_per_block > 1) {
      for (size_t j = 0; j < s->blocks.size(); ++j) {
        ExpandBlockMates(s->blocks[j], s->buffer.data() + j * block_bytes, query, s, stats);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status DiskSegmentReader::Search(const float* query, const SearchOptions& options,
                                       const AnswerFilter& admit,
                                       TopK* top, SegmentSearchStats* stats) const {
  if (header_.vector_count == 0 || options.k == 0) return absl::OkStatus();
  if (SearchScans(options, header_.vector_count)) {
    return ScanSegment(*this, header_.metric, header_.dim, query, admit, top, stats);
  }
  SearchOptions resolved = options;
  resolved.beam_width = options.beam_width == 0
                            ? kDefaultBeamWidth
                            : std::min(options.beam_width, kMaxBeamWidth);
  const uint64_t start = MonotonicNs();
  const ScratchLease lease(&tls_disk_scratch);
  DiskSearchScratch* s = lease.get();
  ResetQuery(query, s);
  SegmentSearchStats counts;
  IoCounts io;
  const bool pipelined = options.disk_search == DiskSearch::kPipelined ||
                         (options.disk_search == DiskSearch::kAuto && resolved.beam_width > 1);
  absl::Status status = pipelined ? WalkPipelined(query, resolved, s, &counts, &io)
                                  : Walk(query, resolved, s, &counts, &io);
  if (status.ok()) {
    std::sort(s->rerank.begin(), s->rerank.end(), [](const auto& a, const auto& b) {
      return a.distance < b.distance || (a.distance == b.distance && a.node < b.node);
    });
    admit.OfferRanked(
        s->rerank.size(), options.k,
        [&](size_t i) {
          const DiskSearchScratch::Ranked& r = s->rerank[i];
          return RankedEntry{r.id, r.sequence, r.distance, r.node};
        },
        top);
  }
  if (stats != nullptr) {
    const uint64_t total = MonotonicNs() - start;
    stats->hops += counts.hops;
    stats->distance_computations += counts.distance_computations;
    stats->cache_hits += counts.cache_hits;
    stats->reads += io.reads;
    stats->sectors_touched += io.reads * header_.layout.sectors_per_block;
    stats->io_wait_ns += io.wait_ns;
    stats->compute_ns += total > io.wait_ns ? total - io.wait_ns : 0;
  }
  return status;
}

absl::Status DiskSegmentReader::ScanNodes(const float* query, const SearchOptions& options,
                                          const BitSet& nodes, const AnswerFilter& admit,
                                          TopK* top, SegmentSearchStats* stats) const {
  if (options.k == 0) return absl::OkStatus();
  const uint64_t start = MonotonicNs();
  const ScratchLease lease(&tls_disk_scratch);
  DiskSearchScratch* s = lease.get();
  ResetQuery(query, s);
  // The shortlist by code distance (as long as a mapped segment's).
  const size_t count = nodes.Count();
  const size_t shortlist =
      std::max<size_t>(options.list_size, size_t{options.k} + std::max<size_t>(2, options.k / 4));
  CandidateList& list = s->list;
  list.Reset(std::min(shortlist, count));
  nodes.ForEach([&](size_t v) {
    const float d = CodeDistance(*s, static_cast<uint32_t>(v));
    if (list.Accepts(d)) list.Insert(d, static_cast<uint32_t>(v));
  });
  // Rerank: each listed node's block read, in node order; its vector's
  // exact distance.
  std::vector<uint32_t>& order = s->beam;
  order.clear();
  for (size_t i = 0; i < list.size(); ++i) order.push_back(list.node(i));
  std::sort(order.begin(), order.end());
  const NodeLayout& layout = header_.layout;
  char* block = s->buffer.Reserve(layout.block_bytes());
  IoCounts io;
  s->rerank.clear();
  for (const uint32_t node : order) {
    const uint32_t b = BlockOf(node);
    SHOAL_RETURN_IF_ERROR(ReadBlocks(std::span<const uint32_t>(&b, 1), block, &io));
    const char* record = block + OffsetInBlock(node);
    s->rerank.push_back({Distance(header_.metric, query, reinterpret_cast<const float*>(record),
                                  header_.dim),
                         node, DecodeFixed64(record + layout.id_offset()),
                         DecodeFixed64(record + layout.sequence_offset())});
  }
  std::sort(s->rerank.begin(), s->rerank.end(), [](const auto& a, const auto& b) {
    return a.distance < b.distance || (a.distance == b.distance && a.node < b.node);
  });
  TopK mine(options.k);
  admit.OfferRanked(
      s->rerank.size(), options.k,
      [&](size_t i) {
        const DiskSearchScratch::Ranked& r = s->rerank[i];
        return RankedEntry{r.id, r.sequence, r.distance, r.node};
      },
      &mine);
  if (stats != nullptr) {
    const uint64_t total = MonotonicNs() - start;
    stats->distance_computations += count + s->rerank.size();
    stats->reads += io.reads;
    stats->sectors_touched += io.reads * layout.sectors_per_block;
    stats->io_wait_ns += io.wait_ns;
    stats->compute_ns += total > io.wait_ns ? total - io.wait_ns : 0;
  }
  if (mine.size() < options.k && list.size() < count) {
    // Newer versions or deletes hid too many of the shortlist: every node.
    return SegmentFile::ScanNodes(query, options, nodes, admit, top, stats);
  }
  for (const Neighbor& nb : mine.Take()) top->Push(nb.id, nb.distance);
  return absl::OkStatus();
}

}  // namespace shoal::disk
