// Copyright 2026 The shoal Authors.
//
// The Segment implementation for SegmentStorage::kDisk (DiskANN's search
// from SSD): only what navigation needs is in RAM, the full vectors and
// neighbour lists stay in the file.
//
// In RAM, read and checked at Open: the header, the footer, the id table
// (its checksum and order), the record regions but the payloads' bytes
// (segment_file.h; reserved from the budget even over it: filters need
// them), the codes (the area's checksum; SQ8 as stored,
// or 4-bit residual codes fitted to them when a memory budget has no room
// for SQ8, residual_sq4.h) and the node cache (node_cache.h). Version 1
// files and files written without codes are not opened (navigating on full
// vectors would read a block per distance): Segment::Open maps them instead.
//
// Node blocks are read on demand into 4096-aligned buffers, one with Read
// (pread) or several in flight at once with a ReadQueue (io_uring on POSIX),
// O_DIRECT where the file system allows it (RandomAccessFile), and each
// block's checksum and neighbour list are checked on every read: nothing is
// trusted once it has left RAM. A damaged block is DataLossError "segment
// <path>: node block B (offset N) ..." for the query that read it; a failed
// read is that read's error, with the file and offset, for that query only.
//
// Search: a walk on the codes in which every expanded node's exact
// distance, from the full vector just read, joins a rerank set whose k
// closest visible entries are the answer. Two walks (SearchOptions::
// disk_search): beam search (disk_segment_search.cc), whose hops read the
// blocks of beam_width nodes (those not in the cache) together and expand
// them when all have arrived; and pipelined search
// (disk_segment_pipelined_search.cc), which keeps beam_width reads in flight
// through a ReadQueue and expands each node as its block arrives. Both
// expand a record with ExpandRecord, and the other records of each block
// read with ExpandBlockMates (blocks hold graph neighbours, block_layout.h).
//
// Thread-safe: immutable after Open; per-thread scratch (buffers, candidate
// list, visited set) is pooled in thread_locals.

#ifndef SHOAL_SRC_DISK_DISK_SEGMENT_READER_H_
#define SHOAL_SRC_DISK_DISK_SEGMENT_READER_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "disk/node_cache.h"
#include "segment/segment.h"
#include "segment/segment_file.h"
#include "segment/segment_format.h"
#include "codes/residual_sq4.h"
#include "codes/sq8.h"
#include "util/memory_budget.h"

namespace shoal::disk {

struct DiskSearchScratch;  // disk_segment_search.cc

class DiskSegmentReader final : public segment::SegmentFile {
 public:
  // As Segment::Open with SegmentStorage::kDisk, except that a file with
  // vectors but no codes gives null (and OK).
  // Codes: SQ8 as stored when options.budget (null: no limit) has room for
  // them, else 4-bit residual codes fitted to them (residual_sq4.h; about
  // 5 s a million 128-d vectors on one thread, encoded on options.pool),
  // reserved even over
  // the budget; then a node cache of what the budget has left, at most
  // options.node_cache_bytes. The reservations last as long as the reader.
  static absl::StatusOr<std::shared_ptr<Segment>> Open(FileSystem* fs, const std::string& path,
                                                       uint32_t dim, Metric metric,
                                                       const SegmentOpenOptions& options);

  absl::StatusOr<Lookup> Find(uint64_t id, uint64_t* sequence,
                              std::vector<float>* vector) const override;
  absl::Status Search(const float* query, const SearchOptions& options,
                      const segment::AnswerFilter& admit,
                      TopK* top, SegmentSearchStats* stats) const override;
  absl::Status VerifyAll() const override;
  // A filtered search's scan (segment.h): the nodes ranked by their codes
  // (in RAM), the closest max(L, k + a few) read and reranked by their
  // vectors, one block each; every block only when hidden entries leave the
  // answer short.
  absl::Status ScanNodes(const float* query, const SearchOptions& options, const BitSet& nodes,
                         const segment::AnswerFilter& admit, TopK* top,
                         SegmentSearchStats* stats) const override;

  // Nodes pinned in the node cache.
  size_t cached_nodes() const { return cache_.node_count(); }
  // Whether a read failed while the node cache was filled at open (the
  // cache then holds the records read before it), and how many segments
  // of the process were opened so (Options::node_cache_bytes).
  bool cache_fill_failed() const { return cache_fill_failed_; }
  static uint64_t CacheFillErrors();
  size_t entry_point_count() const { return entry_points_.size(); }
  // Bytes of one code held in RAM: SQ8's, or the residual 4-bit code's when
  // the budget was short.
  size_t code_bytes() const { return code_bytes_; }
  bool four_bit_codes() const { return residual_ != nullptr; }
  // Whether aligned reads bypass the page cache (O_DIRECT).
  bool direct_io() const { return file_->direct(); }

 private:
  // Time and count of reads, for SegmentSearchStats.
  struct IoCounts {
    uint64_t reads = 0;
    uint64_t wait_ns = 0;
  };

  DiskSegmentReader(std::string path, std::unique_ptr<RandomAccessFile> file,
                    const segment::Header& header, const segment::Footer& footer,
                    std::string id_table);

  // Reads the codes area (checksum, ranges) into RAM as SQ8 or SQ4 codes,
  // as `budget` allows; see Open.
  absl::Status LoadCodes(MemoryBudget* budget, ThreadPool* pool);

  // Reads [offset, offset + n) into dst. The file ending early is
  // DataLossError; any error names the file and the offset.
  absl::Status ReadAt(uint64_t offset, size_t n, char* dst, IoCounts* io) const;
  // Reads node blocks blocks[i] into dst + i * block_bytes and checks each
  // (segment_checks.h). REQUIRES: dst aligned to 4096. Beam search's reads:
  // several blocks are submitted together (a ReadQueue), then waited for.
  absl::Status ReadBlocks(std::span<const uint32_t> blocks, char* dst, IoCounts* io) const;
  // The status of a read of [offset, offset + n) that returned `s`, as
  // ReadAt gives it (DataLossError when the file ends early; the file and
  // offset named).
  absl::Status ReadResult(uint64_t offset, size_t n, absl::Status s) const;
  // CheckNodeBlock (segment_checks.h) of block `block` read into `bytes`.
  absl::Status CheckBlock(const char* bytes, uint32_t block) const;
  // Open: a read failed while the cache (of up to `cache_bytes`) was
  // filled. Counts it (CacheFillErrors), says it once on stderr.
  void NoteCacheFillError(const absl::Status& error, size_t cache_bytes);
  // Reads blocks [first, first + count) with one pread and checks each.
  absl::Status ReadBlockRun(uint64_t first, uint64_t count, char* dst) const;
  // Reads blocks in runs of about kScanBytes.
  absl::Status ForEachNodeRecordIn(
      uint64_t begin, uint64_t end,
      const std::function<void(uint32_t node, const char* record)>& fn) const override;
  // One pread into *scratch.
  absl::Status ReadBytes(uint64_t offset, size_t n, std::string* scratch,
                         std::string_view* out) const override;
  // Reads the block of `node`, checks it, and copies node's record to out
  // (node_bytes).
  absl::Status ReadRecord(uint32_t node, char* out) const;

  uint32_t BlockOf(uint32_t node) const { return node / header_.layout.nodes_per_block; }
  size_t OffsetInBlock(uint32_t node) const {
    return size_t{node % header_.layout.nodes_per_block} * header_.layout.node_bytes;
  }
  uint64_t BlockOffset(uint64_t block) const {
    return footer_.nodes_offset + block * header_.layout.block_bytes();
  }
  const uint8_t* Code(uint32_t node) const { return codes_.data() + size_t{node} * code_bytes_; }

  // SearchOptions::beam_width 0 means this; larger widths are capped.
  static constexpr uint32_t kDefaultBeamWidth = 8;
  static constexpr uint32_t kMaxBeamWidth = 64;

  // ---- disk_segment_search.cc ----
  // Empties s's list (L from options), visited and expanded sets and
  // rerank set, and lists the medoid.
  void StartWalk(const SearchOptions& options, DiskSearchScratch* s,
                 SegmentSearchStats* stats) const;
  // Expands `node`, whose checked record (cache or a block just read and
  // checked) is at `record`: its exact distance joins s->rerank, its
  // neighbours not seen yet join s->list by code distance. Both walks'
  // only way to expand.
  void ExpandRecord(const float* query, uint32_t node, const char* record,
                    DiskSearchScratch* s, SegmentSearchStats* stats) const;
  // Points s->records[i] at the record of s->beam[i]: from the cache, or
  // from a block read now into s's buffer.
  absl::Status FetchBeam(DiskSearchScratch* s, SegmentSearchStats* stats, IoCounts* io) const;
  // Sets s's code query (SQ8 or 4-bit, as the codes held) to `query`.
  void ResetQuery(const float* query, DiskSearchScratch* s) const;
  // The query's distance (as s was reset for) to node's code, or to `code`.
  float CodeDistance(const DiskSearchScratch& s, uint32_t node) const {
    return CodeDistanceAt(s, Code(node));
  }
  float CodeDistanceAt(const DiskSearchScratch& s, const uint8_t* code) const;
  // After LoadCodes: the entry points (graph/entry_points.h), when the
  // codes are SQ8 and the budget has room for their codes. Unlike a mapped
  // segment's (which only a graph the medoid does not cover gets), a
  // disk-resident segment always has them: a walk that starts near the
  // query reads fewer blocks, and a read costs more than the scan. With
  // 4-bit codes the groups' nodes (group_nodes_) serve instead.
  void ChooseEntryPoints(MemoryBudget* budget);
  // The other records of block `block`, just read and checked (`bytes`),
  // that the walk has not taken: each is expanded (ExpandRecord) when it is
  // listed or its code distance would list it, else joins the rerank set.
  void ExpandBlockMates(uint32_t block, const char* bytes, const float* query,
                        DiskSearchScratch* s, SegmentSearchStats* stats) const;
  // The beam search, leaving every expanded node, with its exact distance,
  // in s->rerank.
  absl::Status Walk(const float* query, const SearchOptions& options, DiskSearchScratch* s,
                    SegmentSearchStats* stats, IoCounts* io) const;

  // ---- disk_segment_pipelined_search.cc ----
  // The pipelined search: as Walk, leaving its result in s->rerank.
  absl::Status WalkPipelined(const float* query, const SearchOptions& options,
                             DiskSearchScratch* s, SegmentSearchStats* stats,
                             IoCounts* io) const;

  const std::unique_ptr<RandomAccessFile> file_;
  // Set in Open (LoadCodes), then immutable; null / empty without vectors.
  std::unique_ptr<codes::Sq8> sq8_;     // the stored ranges
  std::unique_ptr<codes::ResidualSq4> residual_;  // null: codes_ holds the SQ8 codes
  std::vector<uint8_t> codes_;   // code_bytes_ per node
  size_t code_bytes_ = 0;
  // With 4-bit codes, each group's node nearest its centre (kNoGroupNode:
  // the group has none), the walk's entry points. Set in Open, then
  // immutable.
  static constexpr uint32_t kNoGroupNode = 0xFFFFFFFFu;
  std::vector<uint32_t> group_nodes_;
  // Entry points with SQ8 codes (ChooseEntryPoints): nodes spread evenly
  // over the node order, their codes side by side. Set in Open, then
  // immutable.
  std::vector<uint32_t> entry_points_;
  std::vector<uint8_t> entry_point_codes_;
  NodeCache cache_;              // built in Open, then immutable
  bool cache_fill_failed_ = false;  // set in Open
  MemoryBudget::Reservation reservation_;  // codes, entry points and cache
};

}  // namespace shoal::disk

#endif  // SHOAL_SRC_DISK_DISK_SEGMENT_READER_H_
