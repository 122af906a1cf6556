// Copyright 2026 The shoal Authors.
//
// Immutable on-disk Vamana graph segments (DiskANN's graph: R, L, alpha).
//
// A segment holds, for one shard, a set of entries, each (id, sequence) and
// either a vector (a node of the graph) or a tombstone (the id was deleted at
// that sequence). The engine resolves versions across sources by sequence:
// for an id, the entry with the highest sequence in any source wins.
//
// The file format is in docs/format.md ("Segment"). Files are written to a
// temporary name, fsynced, renamed, and the directory fsynced.
//
// Thread-safety: a Segment is immutable; any number of threads may call its
// const methods at once.

#ifndef SHOAL_SRC_SEGMENT_SEGMENT_H_
#define SHOAL_SRC_SEGMENT_SEGMENT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/build_stats.h"
#include "segment/answer_filter.h"
#include "segment/segment_format.h"
#include "shoal/options.h"
#include "util/file_system.h"
#include "util/thread_pool.h"
#include "util/top_k.h"

namespace shoal {

class MemoryBudget;  // util/memory_budget.h
class Segment;
namespace segment {
class RecordRegions;  // segment/record_regions.h
}  // namespace segment

// A graph to start a build from (a merge's largest input), so that only the
// other rows are inserted: node b of `segment` is contents row
// row_of_node[b], or kDroppedNode when its entry is not in the contents (it
// was deleted or overwritten). A node that pointed at dropped nodes keeps
// its other edges and fills the freed places from the dropped nodes' kept
// neighbours (FreshDiskANN's consolidation candidates), closest first, each
// unless an edge already kept occludes it. Repaired again and again, such a
// graph loses recall (docs/performance-history.md, "Churn"); the shard extends only
// seeds that drop nothing. The rows a seed names must hold that node's
// vector.
struct GraphSeed {
  static constexpr uint32_t kDroppedNode = 0xFFFFFFFFu;
  const Segment* segment = nullptr;
  std::vector<uint32_t> row_of_node;  // one per node of `segment`
};

// What goes into a segment. Vectors are row-major, ids.size() * dim floats,
// already normalized for kCosine. ids are unique across vectors and
// tombstones (the caller keeps only the newest entry of each id).
struct SegmentContents {
  uint32_t dim = 0;
  Metric metric = Metric::kL2;
  std::span<const uint64_t> ids;         // one per vector
  std::span<const uint64_t> sequences;   // one per vector
  const float* vectors = nullptr;
  std::span<const uint64_t> tombstone_ids;
  std::span<const uint64_t> tombstone_sequences;
  // Optional: the graph to extend instead of building from scratch.
  const GraphSeed* seed = nullptr;
  // Optional: per vector (in the order of `ids`), its record's other parts
  // encoded (record/record_format.h; empty: none). An empty span: no vector
  // has any (the segment then has no record regions).
  std::span<const std::string_view> extras;
};

struct SegmentBuildOptions {
  GraphOptions graph;
  // The code stored per node for searches to navigate on.
  VectorCode code = VectorCode::kSq8;
  uint64_t seed = 0x5eed;  // with one thread, the same input gives the same file
  // For tests: false skips the step that makes every node reachable from the
  // medoid (VamanaBuilder::Connect), leaving the graphs builds made before
  // it (issue 41), to test what reads and heals them.
  bool connect = true;
  // For tests: the file format version written, 3 (the current) or 2 (no
  // record regions: InvalidArgument when a vector has extras), to test that
  // files written before records still open.
  uint32_t format_version = 3;
  // Written into the header for DB::IngestSegments to check (the public
  // SegmentWriter sets it; a database's own segments leave it absent).
  segment::SegmentOrigin origin;
};

// Where the time of a build went (for SHOAL_DEBUG_TIMING and the bench):
// the graph's part, and the file's.
struct SegmentBuildStats : graph::GraphBuildStats {
  double write_seconds = 0;   // encode + write + fsync + rename
};

// Builds the graph over `contents` (on `pool`'s threads) and writes the
// segment file at `path` atomically. 0 vectors (tombstones only) is valid.
[[nodiscard]] absl::Status BuildSegment(FileSystem* fs, ThreadPool* pool,
                                        const std::string& path,
                                        const SegmentContents& contents,
                                        const SegmentBuildOptions& options,
                                        SegmentBuildStats* stats = nullptr);

// What one Search did; Search adds to the fields (callers sum over
// segments). Mapped segments leave the I/O fields at 0.
struct SegmentSearchStats {
  uint64_t hops = 0;                   // nodes expanded
  uint64_t distance_computations = 0;  // on codes and on full vectors
  uint64_t sectors_touched = 0;        // distinct sectors whose bytes were used
  // Disk-resident segments (SegmentStorage::kDisk):
  uint64_t reads = 0;                  // node blocks read from the file
  uint64_t cache_hits = 0;             // expanded nodes found in the node cache
  uint64_t io_wait_ns = 0;             // time spent waiting for those reads
  uint64_t compute_ns = 0;             // the rest of the search's time
  // Filtered searches (SearchStats has the same fields).
  uint64_t filter_matches = 0;
  uint64_t filter_skipped = 0;
  uint64_t filter_scanned = 0;
  uint64_t filter_walked = 0;
  uint64_t filter_short_walks = 0;
  uint64_t filter_label_graph_walks = 0;
  uint64_t filter_label_graph_pending = 0;  // walks without it: still being built
};

// How Segment::Open reads a segment (the DB's Options, docs/architecture.md
// "Disk-resident segments").
struct SegmentOpenOptions {
  SegmentStorage storage = SegmentStorage::kMapped;
  // kDisk: bytes of node records pinned in RAM: where walks start (the
  // medoid, the entry points or the groups' nodes) and around them.
  size_t node_cache_bytes = 0;
  // kDisk: what the codes and the cache reserve from (null: no limit).
  // Shared: a segment's reservations keep it alive until they are released.
  std::shared_ptr<MemoryBudget> budget;
  // kDisk: threads that encode 4-bit codes when the budget is short (null:
  // the opening thread alone). Not owned; only used during Open.
  ThreadPool* pool = nullptr;
  // kMapped: where label graphs (SegmentReader::LabelGraph) are built, in
  // the background, while the searches that asked walk without them (null:
  // the first search that asks builds one itself). Not owned; must outlive
  // the segment's use (its tasks hold the segment only weakly, and skip
  // a segment nobody holds any more).
  ThreadPool* background = nullptr;
};

class Segment : public std::enable_shared_from_this<Segment> {
 public:
  // Opens the file as `options.storage` says and checks its header, footer
  // and id table (magic, version, checksums, and that dim/metric match):
  // kMapped maps it whole; kDisk reads the id table and codes into RAM and
  // node blocks on demand (disk/disk_segment_reader.h). DataLossError
  // naming the file when damaged or truncated; FailedPrecondition for a
  // newer version. Under kDisk a file without codes (version 1, or written
  // with VectorCode::kNone), or one on a FileSystem without
  // OpenRandomAccess, is mapped as under kMapped, said once on stderr.
  [[nodiscard]] static absl::StatusOr<std::shared_ptr<Segment>> Open(
      FileSystem* fs, const std::string& path, uint32_t dim, Metric metric,
      const SegmentOpenOptions& options = {});
  virtual ~Segment() = default;

  virtual uint64_t vector_count() const = 0;
  virtual uint64_t tombstone_count() const = 0;
  virtual const std::string& path() const = 0;

  enum class Lookup { kAbsent, kLive, kDeleted };
  // Finds `id`. kLive copies its vector into *vector (dim floats; may be
  // null) and sets *sequence; kDeleted sets *sequence (either may be null).
  // DataLossError when the block holding it fails its checksum, or when the
  // node record does not hold the id and sequence the id table gives it.
  // A disk-resident segment reads the node's block only when `vector` is
  // not null (the id table, checked at Open, answers the rest).
  [[nodiscard]] virtual absl::StatusOr<Lookup> Find(uint64_t id, uint64_t* sequence,
                                                    std::vector<float>* vector) const = 0;
  // As Find, and for kLive also sets *extras (may be null) to the record's
  // other parts that `parts` (RecordParts) names, encoded
  // (record/record_format.h; empty when it has none of them): a part not
  // asked for is not read. Reading extras reads no node block: a
  // disk-resident segment reads the payload's bytes alone.
  // DataLossError when a record region fails its checks.
  [[nodiscard]] virtual absl::StatusOr<Lookup> FindRecord(uint64_t id, uint64_t* sequence,
                                                          std::vector<float>* vector,
                                                          std::string* extras,
                                                          uint32_t parts) const {
    if (extras != nullptr) extras->clear();
    return Find(id, sequence, vector);
  }
  // Whether any node of the segment has labels, attributes or a payload.
  virtual bool has_records() const { return false; }
  // Bytes of the record regions, for stats: labels (with their postings),
  // attributes (with their summaries) and payloads (with their offsets).
  struct RecordBytes {
    uint64_t labels = 0;
    uint64_t attributes = 0;
    uint64_t payloads = 0;
  };
  virtual RecordBytes record_bytes() const { return {}; }
  // The record regions held in RAM (or mapped) since Open: each node's
  // labels and attributes, the posting lists and the attribute summaries
  // (segment/record_regions.h), for filtered searches to plan and test on.
  // Never null for a segment that Open returned; empty without records.
  // Valid while the segment lives.
  virtual const segment::RecordRegions* record_regions() const { return nullptr; }

  // Beam search from the medoid with list size L = options.list_size and
  // options.beam_width nodes expanded per step; offers up to options.k
  // results to `top` with exact distances. The list keeps max(L, k) nodes
  // (a mapped walk on codes max(L, k + max(2, k/4)), for its rerank); a mapped
  // segment's walk ends once its first L are expanded (L below k: shorter
  // walks), a disk-resident one's once all max(L, k) are. Entries
  // that `admit` does not admit (segment/answer_filter.h) are traversed
  // but not offered.
  // A list or k at least as long as the segment (max(L, k) >=
  // vector_count()) scans every vector instead of walking
  // (segment/segment_scan.h): the answers are then exact.
  // DataLossError when a sector it reads fails its checksum (each sector is
  // verified the first time it is read).
  [[nodiscard]] virtual absl::Status Search(
      const float* query, const SearchOptions& options,
      const segment::AnswerFilter& admit, TopK* top,
      SegmentSearchStats* stats = nullptr) const = 0;

  // Whether Search honours AnswerFilter::selected() inside its walk (a
  // mapped segment); otherwise its walk traverses every node and the filter
  // decides only what is offered (a disk-resident segment, whose walk would
  // read a block for each node it reaches past).
  virtual bool walks_filtered() const { return false; }
  // Whether a walk for one label alone that `members` nodes have may
  // follow a graph of that label's nodes (SegmentReader::LabelGraph; the
  // planner then walks sooner): the segment's policy, not a promise (the
  // graph may still be refused for room).
  virtual bool HasLabelGraphs(uint64_t /*members*/) const { return false; }
  // A filtered search's scan of the nodes in `nodes` (its matches, a
  // BitSet over [0, vector_count())): offers to `top` (which keeps its k
  // closest) those that `admit` admits, with exact distances. A mapped
  // segment with codes ranks the nodes by their codes and reranks the
  // closest max(L, k + a few) by their vectors (L = options.list_size), as
  // its walks do: exact whenever the codes rank the true k among those,
  // exact always when L >= the nodes in `nodes`; without codes, and on
  // disk, every node in `nodes` by its vector (on disk, every block read).
  // DataLossError as Search.
  [[nodiscard]] virtual absl::Status ScanNodes(const float* query, const SearchOptions& options,
                                               const BitSet& nodes,
                                               const segment::AnswerFilter& admit, TopK* top,
                                               SegmentSearchStats* stats) const = 0;
  // ScanNodes of the nodes in `nodes` (ascending, each < vector_count()):
  // a short posting list scanned without a BitSet over every node. The
  // default makes that BitSet and calls ScanNodes.
  [[nodiscard]] virtual absl::Status ScanNodeList(const float* query,
                                                  const SearchOptions& options,
                                                  std::span<const uint32_t> nodes,
                                                  const segment::AnswerFilter& admit, TopK* top,
                                                  SegmentSearchStats* stats) const;

  // Calls fn for every live entry (id, sequence, vector), in node order.
  [[nodiscard]] virtual absl::Status ForEachVector(
      const std::function<void(uint64_t id, uint64_t sequence, const float* vector)>& fn)
      const = 0;
  // As ForEachVector, with each record's other parts, encoded
  // (record/record_format.h; empty when it has none; valid during the call).
  [[nodiscard]] virtual absl::Status ForEachRecord(
      const std::function<void(uint64_t id, uint64_t sequence, const float* vector,
                               std::string_view extras)>& fn) const {
    return ForEachVector([&](uint64_t id, uint64_t sequence, const float* vector) {
      fn(id, sequence, vector, std::string_view());
    });
  }
  // As ForEachRecord over nodes [begin, end) only (end clamped to
  // vector_count()), reading only the parts `parts` (RecordParts) names of
  // the extras (a payload not asked for is not read). What an export
  // (DB::Export) pulls a batch at a time: a scan that can stop and resume.
  [[nodiscard]] virtual absl::Status ForEachRecordIn(
      uint64_t begin, uint64_t end, uint32_t parts,
      const std::function<void(uint64_t id, uint64_t sequence, const float* vector,
                               std::string_view extras)>& fn) const = 0;
  // The build list size the graph was built with (the header's record):
  // a merge extends only graphs built as well as it would build.
  virtual uint32_t build_list_size() const = 0;
  // The graph's entry node; GraphSeed::kDroppedNode without vectors.
  virtual uint32_t medoid() const = 0;
  // Calls fn for every node, in node order: its entry, its vector and its
  // out-neighbours (node numbers < vector_count()). DataLossError as
  // ForEachVector.
  [[nodiscard]] virtual absl::Status ForEachNode(
      const std::function<void(uint32_t node, uint64_t id, uint64_t sequence,
                               const float* vector, std::span<const uint32_t> neighbors)>& fn)
      const = 0;
  // Calls fn for every entry of the id table (id, sequence, whether it is a
  // vector or a tombstone), by ascending id. Reads no node block.
  virtual void ForEachEntry(
      const std::function<void(uint64_t id, uint64_t sequence, bool live)>& fn) const = 0;
  // Calls fn for every tombstone (id, sequence).
  virtual void ForEachTombstone(
      const std::function<void(uint64_t id, uint64_t sequence)>& fn) const = 0;

  // Verifies every checksum in the file, every node's neighbour list, and
  // that each node record holds the id and sequence of its id table entry.
  // DataLossError naming the first damaged place (offset).
  [[nodiscard]] virtual absl::Status VerifyAll() const = 0;
};

}  // namespace shoal

#endif  // SHOAL_SRC_SEGMENT_SEGMENT_H_
