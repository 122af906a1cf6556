// Copyright 2026 The shoal Authors.
//
// A shard's sources besides its active memtable, ranked by sequence number
// (the role of LevelDB's Version: which immutable pieces hold the shard's
// data now, and which of them is newer).
//
// Every write of a shard takes the next sequence number; each source holds
// a range of them and the ranges never overlap, so for any id the source
// with the highest range that holds it (as a vector or a tombstone) has its
// newest version. Sources:
//   - frozen memtables: full, immutable, waiting to become segments, in the
//     order they were frozen (oldest first);
//   - segments: immutable Vamana graph files, kept sorted by max_sequence
//     (oldest first).
// The active memtable, which takes writes, is newer than all of them and
// stays with the shard.
//
// Not thread-safe: the shard guards its SourceSet with its mutex. A
// SourceSnapshot is immutable and safe to use without it.

#ifndef SHOAL_SRC_VERSION_SOURCE_SET_H_
#define SHOAL_SRC_VERSION_SOURCE_SET_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "memtable/memtable.h"
#include "segment/segment.h"
#include "shoal/options.h"
#include "version/manifest.h"

namespace shoal {

// A frozen memtable: its records are in log files numbered <= last_wal_number.
struct FrozenSource {
  std::shared_ptr<const MemTable> mem;
  uint64_t min_sequence = 0;
  uint64_t max_sequence = 0;
  uint64_t last_wal_number = 0;
};

struct SegmentSource {
  std::shared_ptr<Segment> segment;
  SegmentMeta meta;
};

// What a reader looks at besides the active memtable: every source, newest
// first, held alive for as long as the snapshot lives.
class SourceSnapshot {
 public:
  struct Source {
    std::shared_ptr<const MemTable> mem;  // a frozen memtable, or
    std::shared_ptr<Segment> segment;     // a segment
    uint64_t max_sequence = 0;
    bool shared = false;                  // a shared segment (SegmentMeta::shared)
  };
  enum class Lookup { kAbsent, kLive, kDeleted };

  const std::vector<Source>& sources() const { return sources_; }
  bool empty() const { return sources_.empty(); }

  // The newest version of `id` among the `end` newest sources: kLive (and
  // its vector copied into *vector, unless null) from the first that holds
  // a vector, kDeleted when the first that names it holds a tombstone.
  // DataLossError from a damaged segment; an error reading one.
  [[nodiscard]] absl::StatusOr<Lookup> Find(uint64_t id, size_t end,
                                            std::vector<float>* vector) const;
  [[nodiscard]] absl::StatusOr<Lookup> Find(uint64_t id, std::vector<float>* vector) const {
    return Find(id, sources_.size(), vector);
  }
  // As Find over every source, and for kLive also sets *extras (may be null)
  // to the record's other parts, encoded (record/record_format.h; empty:
  // none; a segment's with only the parts `parts` names: RecordParts), and
  // *segment (may be null) to the segment they were read from (null: a
  // frozen memtable), so that a caller can name it when they fail to parse.
  [[nodiscard]] absl::StatusOr<Lookup> FindRecord(uint64_t id, std::vector<float>* vector,
                                                  std::string* extras, uint32_t parts,
                                                  const Segment** segment) const;

 private:
  friend class SourceSet;
  // Find and FindRecord: extras null looks up no extras.
  absl::StatusOr<Lookup> FindIn(uint64_t id, size_t end, std::vector<float>* vector,
                                std::string* extras, uint32_t parts,
                                const Segment** segment) const;
  std::vector<Source> sources_;  // newest first
};

// Consolidation (CompactionOptions::consolidate_dead_fraction): the segment
// of `segments` (oldest first, as SourceSet::segments()) with the largest
// share of dead vectors, when that share is at least `fraction`: vectors
// whose ids a newer segment holds (as a vector or a tombstone), so that no
// search can return them. Reads id tables only. nullopt when none is due.
struct Consolidation {
  size_t index = 0;        // into `segments`
  uint64_t dead = 0;       // its dead vectors
  // Every id the segments newer than it hold: what makes its entries dead.
  absl::flat_hash_set<uint64_t> newer_ids;
};
std::optional<Consolidation> PickConsolidation(std::span<const SegmentSource> segments,
                                               double fraction);

class SourceSet {
 public:
  // ---- Frozen memtables ----
  const std::deque<FrozenSource>& frozen() const { return frozen_; }
  // REQUIRES: newer than every frozen memtable.
  void AddFrozen(FrozenSource frozen) { frozen_.push_back(std::move(frozen)); }
  // REQUIRES: !frozen().empty().
  void RemoveOldestFrozen() { frozen_.pop_front(); }
  void ClearFrozen() { frozen_.clear(); }

  // ---- Segments ----
  const std::vector<SegmentSource>& segments() const { return segments_; }
  // Inserts in max_sequence order (after those with an equal one).
  void AddSegment(SegmentSource segment);
  // A compaction's result: removes the segments numbered `replaced` and
  // adds `merged`.
  void ReplaceSegments(std::span<const uint64_t> replaced, SegmentSource merged);
  // The highest max_sequence of any segment; 0 without segments.
  uint64_t MaxSegmentSequence() const;

  // Compaction inputs: the oldest segments, every one that ranks below both
  // `limit` and every frozen memtable (max_sequence < both), oldest first. A
  // merged segment ranks by its newest input, so it must not pass data that
  // ranks above any input: the caller's limit is the oldest sequence of
  // what is not a segment yet (the active memtable, bulk loads in flight).
  std::vector<SegmentSource> CompactionInputs(uint64_t limit) const;
  // The same without the shared segments (SegmentMeta::shared) and those
  // older than them: the background policies below merge a shard's own
  // segments only, and leave a shared graph (several shards' entries, one
  // walk for all) as it is. Compact() and the fold across shards take all.
  std::vector<SegmentSource> OwnCompactionInputs(uint64_t limit) const;
  // The run the size-tiered policy merges next (CompactionOptions), among
  // OwnCompactionInputs(limit): a run starts at a segment and takes in older
  // ones while each one's size (vectors + tombstones, at least 1) is at most
  // (1 + size_ratio) times the run's so far; the newest run of at least
  // min_merge_width segments is merged. Oldest first; empty when none is due.
  std::vector<SegmentSource> SizeTieredInputs(uint64_t limit,
                                              const CompactionOptions& options) const;
  // The fold rule: the largest of OwnCompactionInputs(limit) (the oldest among
  // equals) and every newer one of them, when those newer ones' sizes add up
  // to at least `ratio` times its size. `pending`: the size of data newer
  // than all of them that joins the fold (a memtable being flushed), counted
  // with the newer ones. Oldest first; empty when not due.
  std::vector<SegmentSource> FoldInputs(uint64_t limit, double ratio,
                                        uint64_t pending = 0) const;
  // What a background compaction merges next: the fold if it is due, else
  // the size-tiered run (CompactionOptions; `quiescent`: the shard holds no
  // unflushed writes). Empty when nothing is due.
  std::vector<SegmentSource> PickCompaction(uint64_t limit, const CompactionOptions& options,
                                            bool quiescent) const;
  // Whether `segment` is the oldest segment (nothing older holds data that
  // its tombstones would have to keep hiding).
  bool IsOldestSegment(uint64_t number) const {
    return !segments_.empty() && segments_.front().meta.number == number;
  }

  // Every source, newest first.
  SourceSnapshot Snapshot() const;

 private:
  std::deque<FrozenSource> frozen_;      // oldest first
  std::vector<SegmentSource> segments_;  // by max_sequence, oldest first
};

}  // namespace shoal

#endif  // SHOAL_SRC_VERSION_SOURCE_SET_H_
