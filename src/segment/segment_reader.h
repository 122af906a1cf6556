// Copyright 2026 The shoal Authors.
//
// The Segment implementation over a read-only mapping of the file. Open
// checks the header, footer and id table; node blocks are checked lazily,
// the first time any search or lookup reads them, and remembered in an
// atomic bitmap (one bit per block) so each is hashed once per process.
//
// Thread-safe: everything is immutable after Open except the bitmap, whose
// bits only go from 0 to 1 (two threads may both verify a block; harmless).

#ifndef SHOAL_SRC_SEGMENT_SEGMENT_READER_H_
#define SHOAL_SRC_SEGMENT_SEGMENT_READER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "graph/subset_graph.h"
#include "segment/segment.h"
#include "util/mutex.h"
#include "segment/segment_file.h"
#include "graph/candidate_list.h"
#include "segment/segment_format.h"
#include "codes/sq8.h"

namespace shoal::segment {

struct SearchScratch;  // segment_search.cc

class SegmentReader final : public SegmentFile {
 public:
  // As Segment::Open with SegmentStorage::kMapped; label graphs are built
  // on `background` (SegmentOpenOptions::background; null: by the search
  // that asks).
  static absl::StatusOr<std::shared_ptr<Segment>> Open(FileSystem* fs, const std::string& path,
                                                       uint32_t dim, Metric metric,
                                                       ThreadPool* background = nullptr);

  absl::StatusOr<Lookup> Find(uint64_t id, uint64_t* sequence,
                              std::vector<float>* vector) const override;
  absl::Status Search(const float* query, const SearchOptions& options,
                      const AnswerFilter& admit,
                      TopK* top, SegmentSearchStats* stats) const override;
  absl::Status VerifyAll() const override;
  // Filtered searches (segment.h): the walk navigates among the selected
  // nodes (segment_search.cc); the scan reads only the selected nodes.
  bool walks_filtered() const override { return true; }
  bool HasLabelGraphs(uint64_t members) const override {
    return members * kLabelGraphMaxShare <= header_.vector_count;
  }
  absl::Status ScanNodes(const float* query, const SearchOptions& options, const BitSet& nodes,
                         const AnswerFilter& admit, TopK* top,
                         SegmentSearchStats* stats) const override;
  absl::Status ScanNodeList(const float* query, const SearchOptions& options,
                            std::span<const uint32_t> nodes, const AnswerFilter& admit, TopK* top,
                            SegmentSearchStats* stats) const override;

  // Nodes a search offers besides the medoid before it walks: 0 unless the
  // graph is one walks from the medoid do not cover (ChooseEntryPoints).
  size_t entry_point_count() const { return entry_points_.size(); }

  // The graph of the nodes that have `label` (exactly `members`, a BitSet
  // over the nodes) that a filtered walk for that label alone follows
  // (graph/subset_graph.h; segment_label_graph.cc): built from this
  // segment's graph once a search asks for it, then kept while the segment
  // lives. With a background pool (Open) the build is queued there and the
  // searches walk without it until it is done (a first search does not
  // wait 0.2-0.4 s a segment); without one, the first search that asks
  // builds it. Null, and the walk gathers its
  // matches step by step as before, for a label more than a quarter of the
  // nodes have, once kMaxLabelGraphs graphs were built, once the
  // graphs built hold as many members as the segment has nodes (their RAM,
  // 4 * (n + 65 * members) bytes at R 64, is then at most about the
  // graph's own), or when a block fails its checks (the walk then reports
  // it).
  static constexpr size_t kMaxLabelGraphs = 64;
  // Labels that more than 1 / kLabelGraphMaxShare of the nodes have get no
  // graph: their walks find most neighbours matching in one hop, and their
  // graph would take longest to build (0.6-1.6 s for 25K of 50K nodes,
  // against 0.18-0.35 s for 5K; docs/performance.md, "Filtered search").
  static constexpr uint64_t kLabelGraphMaxShare = 4;
  // *pending (when given) says whether a null answer is a graph still being
  // built.
  const graph::SubsetGraph* LabelGraph(uint32_t label, const BitSet& members,
                                       bool* pending = nullptr) const;
  // Label graphs built so far, and their bytes (for tests and stats).
  size_t label_graph_count() const;

 private:
  SegmentReader(std::string path, std::unique_ptr<ReadOnlyMappedFile> file,
                const Header& header, const Footer& footer, std::unique_ptr<codes::Sq8> sq8);

  // Verifies each block before its first node.
  absl::Status ForEachNodeRecordIn(
      uint64_t begin, uint64_t end,
      const std::function<void(uint32_t node, const char* record)>& fn) const override;
  // A view of the mapping.
  absl::Status ReadBytes(uint64_t offset, size_t n, std::string* scratch,
                         std::string_view* out) const override;

  // Checks that the id table is sorted, and that every node appears in it
  // exactly once and the tombstones number tombstone_count.
  absl::Status CheckIdTable() const;

  uint32_t BlockOf(uint32_t node) const {
    if (header_.layout.nodes_per_block == 1) return node;
    // node / nodes_per_block by multiplication (Lemire's fastdiv): exact for
    // 32-bit operands, and a few cycles instead of a division per distance.
    return static_cast<uint32_t>((static_cast<unsigned __int128>(div_magic_) * node) >> 64);
  }
  const char* Block(uint64_t block) const { return nodes_ + block * block_bytes_; }
  const char* NodeRecord(uint32_t node) const {
    const uint32_t block = BlockOf(node);
    return Block(block) +
           size_t{node - block * header_.layout.nodes_per_block} * header_.layout.node_bytes;
  }
  const float* NodeVector(const char* record) const {
    return reinterpret_cast<const float*>(record);
  }
  // OK when `block` passed its checks before; otherwise checks it now.
  absl::Status EnsureVerified(uint32_t block) const {
    const uint64_t word = verified_[block >> 6].load(std::memory_order_relaxed);
    if ((word >> (block & 63)) & 1) return absl::OkStatus();
    return VerifyBlock(block);
  }
  // Checksum, and that each node's degree is <= R and its neighbours < n
  // (so a search can follow them without bounds checks). Sets the block's bit.
  absl::Status VerifyBlock(uint32_t block) const;

  // Node's SQ8 code. REQUIRES: sq8_ set.
  const uint8_t* Code(uint32_t node) const { return codes_ + size_t{node} * header_.code_bytes; }

  // ---- segment_search.cc ----
  // Probes the graph with walks from the medoid for some of its own nodes
  // (from their vectors, on the codes, at a short list); when too many are
  // not found, sets the entry points: every search then also offers them,
  // so it starts in the query's part of the graph even when the medoid's
  // walk would not get there (tight clusters far apart, whose lists the
  // prune fills with their own members). Without codes, or on a block that
  // fails its checks, leaves none (a search will report the block).
  void ChooseEntryPoints();
  // Groups the entry points (entry_group_begin_, entry_group_codes_).
  void GroupEntryPoints();
  // Calls scan(begin, end) for the ranges of entry_points_ in the groups
  // whose centres are closest to `query` (kEntryGroupsScanned of them; all
  // in one call when there are no more); counts the centres' distances.
  struct WalkCounts;
  template <class Scan>
  void ForClosestEntryGroups(const codes::Sq8Query& query, WalkCounts* counts,
                             const Scan& scan) const;
  struct CodeNavigator;
  template <Metric kMetric>
  struct VectorNavigator;
  struct WalkCounts {
    uint64_t hops = 0, computed = 0, sectors = 0;
    void AddTo(SegmentSearchStats* stats) const {
      if (stats == nullptr) return;
      stats->hops += hops;
      stats->distance_computations += computed;
      stats->sectors_touched += sectors;
    }
  };
  // The beam search from the medoid, leaving the list in s->list; distances
  // as `navigate` computes them.
  // kFiltered: the list holds nodes of `selected` only (a filtered
  // search's AnswerFilter::selected(); GatherSelected). A template
  // argument, so that the unfiltered walk is compiled as if filters did not
  // exist.
  // A filtered walk also starts from the selected nodes among `near` and
  // their neighbours.
  // With `subset` (the selected nodes' own graph, LabelGraph) a step
  // follows its lists instead of GatherSelected.
  template <class Navigator, bool kFiltered = false>
  absl::Status Walk(const Navigator& navigate, const SearchOptions& options, SearchScratch* s,
                    SegmentSearchStats* stats, WalkCounts* counts,
                    const BitSet* selected = nullptr,
                    std::span<const uint32_t> near = {},
                    const graph::SubsetGraph* subset = nullptr) const;
  // Walk, filtered when `selected` is not null.
  template <class Navigator>
  absl::Status WalkMaybeFiltered(const Navigator& navigate, const SearchOptions& options,
                                 SearchScratch* s, SegmentSearchStats* stats,
                                 WalkCounts* counts, const BitSet* selected,
                                 const graph::SubsetGraph* subset) const {
    return selected == nullptr ? Walk<Navigator, false>(navigate, options, s, stats, counts)
                               : Walk<Navigator, true>(navigate, options, s, stats, counts,
                                                       selected, {}, subset);
  }
  // The label graph a filtered search may walk (LabelGraph of
  // admit.selected_label()), or null.
  const graph::SubsetGraph* SubsetFor(const AnswerFilter& admit, bool* pending) const;
  // The background build of label `label` (at `index` in the slots, `count`
  // members when queued): its members from the segment's records, the
  // graph, then PublishLabelGraph.
  void BuildLabelGraphInBackground(uint32_t label, size_t index, size_t count) const;
  // Keeps `built` (of `count` members; null: refused) as label `index`'s
  // graph unless another is kept already or there is no room; returns
  // the graph kept (null: refused). `was_pending`: a background build's,
  // which no longer counts as pending.
  const graph::SubsetGraph* PublishLabelGraph(size_t index, size_t count,
                                              std::unique_ptr<const graph::SubsetGraph> built,
                                              bool was_pending) const;
  // Builds LabelGraph's graph of `members` (`count` of them); null when a
  // block fails its checks.
  std::unique_ptr<const graph::SubsetGraph> BuildLabelGraph(const BitSet& members,
                                                            size_t count) const;
  // A filtered walk on codes in a graph with entry points (clusters the
  // medoid's walks miss): first an unfiltered walk at a short list finds
  // the query's part of the graph, then the filtered walk starts from the
  // matches there (ChooseEntryPoints' entry points are too few to hold
  // matches in every cluster).
  absl::Status WalkFilteredFromNear(const CodeNavigator& navigate, const SearchOptions& options,
                                    SearchScratch* s, SegmentSearchStats* stats,
                                    WalkCounts* counts, const BitSet& selected,
                                    const graph::SubsetGraph* subset) const;
  // A filtered walk's step from u (AnswerFilter::selected() = `selected`):
  // appends to todo[*m...] u's unseen neighbours that are selected, then,
  // while fewer than R were found, the unseen selected neighbours of its
  // unselected ones (ACORN-1's two hops), marking each seen.
  absl::Status GatherSelected(uint32_t u, const BitSet& selected, SearchScratch* s,
                              SegmentSearchStats* stats, WalkCounts* counts, uint32_t* todo,
                              size_t* m) const;
  // ScanNodes and ScanNodeList over a cursor of the nodes (BitNodes,
  // ListNodes).
  struct BitNodes;
  struct ListNodes;
  template <class Nodes>
  absl::Status ScanNodesOf(const float* query, const SearchOptions& options, const Nodes& nodes,
                           const AnswerFilter& admit, TopK* top,
                           SegmentSearchStats* stats) const;
  // ScanNodes by the vectors of every node in `nodes`.
  template <class Nodes>
  absl::Status ScanNodeVectors(const float* query, const Nodes& nodes, const AnswerFilter& admit,
                               TopK* top, SegmentSearchStats* stats) const;
  // Checks node's block (once) and counts its sectors for the stats.
  absl::Status ReadBlock(uint32_t node, SearchScratch* s, SegmentSearchStats* stats,
                         uint64_t* sectors) const;
  // Offers the first k entries of `ranked` (closest first) that `admit`
  // admits to top.
  void Offer(std::span<const graph::CandidateList::Entry> ranked, uint32_t k,
             const AnswerFilter& admit, TopK* top) const;
  // Navigates on the SQ8 codes, then reranks the list with the full vectors.
  absl::Status SearchCoded(const float* query, const SearchOptions& options,
                           const AnswerFilter& admit, TopK* top,
                           SegmentSearchStats* stats) const;
  // Navigates on the full vectors: the list's distances are the answer's.
  template <Metric kMetric>
  absl::Status SearchImpl(const float* query, const SearchOptions& options,
                          const AnswerFilter& admit, TopK* top,
                          SegmentSearchStats* stats) const;

  const std::unique_ptr<ReadOnlyMappedFile> file_;
  const char* const nodes_;     // first node block
  const size_t block_bytes_;
  const uint64_t div_magic_;    // 2^64 / nodes_per_block, rounded up
  const std::unique_ptr<std::atomic<uint64_t>[]> verified_;  // bit per node block
  const std::unique_ptr<codes::Sq8> sq8_;  // null without codes
  const uint8_t* const codes_;      // node 0's code; null without codes
  // Entry points (segment_search.cc, ChooseEntryPoints): empty, or nodes
  // spread evenly over the node order (a locality order, so over the data),
  // with their codes side by side. Set by Open, immutable after.
  std::vector<uint32_t> entry_points_;
  std::vector<uint8_t> entry_point_codes_;
  // The entry points in groups of near ones (k-means on their decoded
  // codes): group g is entries [entry_group_begin_[g], [g + 1]), its
  // centre's code at entry_group_codes_ + g * code_bytes. Empty: one group.
  std::vector<uint32_t> entry_group_begin_;
  std::vector<uint8_t> entry_group_codes_;
  // LabelGraph's graphs, built on first use. Read without a lock: a
  // search asks every segment it walks for one label, from every thread.
  struct LabelGraphs {
    // By the label's index among the segment's distinct labels
    // (RecordRegions::LabelIndex): null until asked for, then the graph or
    // Refused(). Allocated on first use (null before).
    std::atomic<std::atomic<const graph::SubsetGraph*>*> slots{nullptr};
    mutable Mutex mu;  // util/mutex.h: TSan sees it
    std::unique_ptr<std::atomic<const graph::SubsetGraph*>[]> slots_owner ABSL_GUARDED_BY(mu);
    std::vector<std::unique_ptr<const graph::SubsetGraph>> built ABSL_GUARDED_BY(mu);
    size_t members ABSL_GUARDED_BY(mu) = 0;   // in the graphs built
    // Queued on the background pool, not yet published: they count toward
    // the bounds, so no more are queued than could be kept.
    size_t pending ABSL_GUARDED_BY(mu) = 0;
    size_t pending_members ABSL_GUARDED_BY(mu) = 0;
    // Allocates the slots on first use.
    std::atomic<const graph::SubsetGraph*>* Slots(size_t labels) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  };
  // The slot values of a refused label and of one being built.
  static const graph::SubsetGraph* Refused();
  static const graph::SubsetGraph* Building();
  ThreadPool* background_ = nullptr;  // Open's; null: builds in the search
  const std::unique_ptr<LabelGraphs> label_graphs_ = std::make_unique<LabelGraphs>();
};

}  // namespace shoal::segment

#endif  // SHOAL_SRC_SEGMENT_SEGMENT_READER_H_
