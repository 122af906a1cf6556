// Copyright 2026 The shoal Authors.
//
// Shard compaction: Compact() merges every segment it may (manual), and a
// background compaction merges what the policy picks (the fold, then tiers:
// SourceSet::PickCompaction, Options::compaction) after flushes. Both
// merge through MergeSegments and publish through PublishSegments.

#include <algorithm>
#include <chrono>
#include <new>

#include "shard/record_rows.h"
#include "shard/shard.h"
#include "util/hash.h"
#include "util/status_macros.h"

namespace shoal {

bool MergeReusesGraph(const Segment& largest, const GraphOptions& graph) {
  // Extending runs one insertion pass over the other inputs' vectors only
  // (contents.seed); a rebuild runs one over all, for a graph measured
  // no better (docs/performance-history.md, "Merges that extend the largest graph",
  // and the part after it). A graph
  // built more cheaply (a quick flush, a smaller build list) is rebuilt
  // instead, so that the shard's large graph is always of full quality.
  return largest.vector_count() > 0 && largest.build_list_size() >= graph.build_list_size;
}

uint64_t Shard::CompactionLimitLocked() const {
  // Only segments older than every source that is not one yet (a bulk part
  // in flight; frozen memtables, which SourceSet adds itself): the merged
  // segment's range spans its inputs, so it must not reach past data that
  // ranks above some of them.
  uint64_t limit = active_min_sequence_;
  if (!pending_bulk_.empty()) limit = std::min(limit, *pending_bulk_.begin());
  return limit;
}

absl::Status Shard::Compact() {
  // Before taking compact_mu_: a flush may fold (FlushOldest) and take it.
  SHOAL_RETURN_IF_ERROR(Flush());
  MutexLock compacting(&compact_mu_);
  std::vector<SegmentSource> inputs;
  {
    ReaderMutexLock lock(&mu_);
    // Closed meanwhile: Close waits for compact_mu_ so that no merge writes
    // a file after it.
    if (closing_) return ClosedError();
    inputs = sources_.CompactionInputs(CompactionLimitLocked());
  }
  uint64_t tombstones = 0;
  for (const SegmentSource& s : inputs) tombstones += s.meta.tombstones;
  if (inputs.empty() || (inputs.size() == 1 && tombstones == 0)) return absl::OkStatus();
  // The inputs start at the oldest segment: nothing older remains for their
  // tombstones to hide.
  return MergeSegments(inputs, /*keep_tombstones=*/false);
}

std::vector<SegmentSource> Shard::PickCompactionLocked() const {
  const bool quiescent = active_->empty() && sources_.frozen().empty() && pending_bulk_.empty();
  return sources_.PickCompaction(CompactionLimitLocked(), options_.db.compaction, quiescent);
}

bool Shard::CollectionFolds() const {
  return options_.collection_folds && options_.collection_folds();
}

void Shard::ScheduleCompaction() {
  MutexLock lock(&mu_);
  MaybeScheduleCompactionLocked();
}

bool Shard::Quiescent() const {
  ReaderMutexLock lock(&mu_);
  return active_->empty() && sources_.frozen().empty() && pending_bulk_.empty();
}

bool Shard::NamesSegment(uint64_t number) const {
  ReaderMutexLock lock(&mu_);
  for (const SegmentSource& s : sources_.segments()) {
    if (s.meta.number == number) return true;
  }
  return false;
}

void Shard::MaybeScheduleCompactionLocked() {
  if (options_.compactor == nullptr || !options_.db.compaction.automatic ||
      compaction_scheduled_ || closing_ || CollectionFolds()) {
    return;
  }
  if (!dead_check_due_ && PickCompactionLocked().empty()) return;
  compaction_scheduled_ = true;
  RunInBackground(options_.compactor, &Shard::RunBackgroundCompaction);
}

absl::Status Shard::RunBackgroundCompaction() {
  MutexLock compacting(&compact_mu_);
  std::vector<SegmentSource> inputs;
  std::vector<SegmentSource> segments;  // for the consolidation check
  bool keep_tombstones = true;
  {
    MutexLock lock(&mu_);
    compaction_scheduled_ = false;
    if (closing_) {
      flushed_.SignalAll();
      return absl::OkStatus();
    }
    inputs = PickCompactionLocked();
    if (inputs.empty()) {
      if (!dead_check_due_) {
        flushed_.SignalAll();
        return absl::OkStatus();
      }
      dead_check_due_ = false;
      segments = sources_.segments();
    } else {
      keep_tombstones = !sources_.IsOldestSegment(inputs.front().meta.number);
    }
    compaction_running_ = true;
  }
  absl::Status s;
  try {
    if (!inputs.empty()) {
      s = MergeSegments(inputs, keep_tombstones);
    } else {
      s = ConsolidateDeadVectors(segments);
    }
  } catch (const std::bad_alloc&) {
    s = absl::ResourceExhaustedError("out of memory while merging segments");
  }
  MutexLock lock(&mu_);
  compaction_running_ = false;
  compaction_status_ = s;
  // A failed merge changed nothing; the next flush tries again. A merge
  // that succeeded may have made the next run due (tiers cascade).
  if (s.ok()) MaybeScheduleCompactionLocked();
  flushed_.SignalAll();
  return s;
}

absl::Status Shard::ConsolidateDeadVectors(const std::vector<SegmentSource>& segments) {
  // Segments are only added (flushes, bulk loads) or merged under
  // compact_mu_, which this holds: the ids newer than the chosen segment
  // can only grow meanwhile, and each still hides what it hid.
  std::optional<Consolidation> pick =
      PickConsolidation(segments, options_.db.compaction.consolidate_dead_fraction);
  if (!pick) return absl::OkStatus();
  const SegmentSource& input = segments[pick->index];
  bool oldest;
  {
    MutexLock lock(&mu_);
    // Another segment may be due too: look again after this one.
    dead_check_due_ = true;
    oldest = sources_.IsOldestSegment(input.meta.number);
  }
  return MergeSegments({input}, /*keep_tombstones=*/!oldest, &pick->newer_ids);
}

absl::Status Shard::MergeSegments(const std::vector<SegmentSource>& inputs,
                                  bool keep_tombstones,
                                  const absl::flat_hash_set<uint64_t>* newer_ids,
                                  const FrozenSource* memtable) {
  timing::Scope timing("merge",
                       "collection,shard,inputs,vectors,seeded,tombstones,collect_us,seed_us,"
                       "medoid_us,insert_us,write_us,publish_us,total_us,"
                       "distance_computations");
  // The largest input's graph is extended rather than rebuilt when it was
  // fully built (MergeReusesGraph) and the merge drops none of its nodes
  // (below).
  size_t largest = 0;
  uint64_t total = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    total += inputs[i].meta.vectors;
    if (inputs[i].meta.vectors > inputs[largest].meta.vectors) largest = i;
  }
  // A shared segment's graph holds other shards' entries too: it is read
  // for this shard's entries only, and never extended.
  const bool reuse = !inputs[largest].meta.shared &&
                     MergeReusesGraph(*inputs[largest].segment, options_.collection.graph);
  const uint32_t shard_count = options_.collection.shard_count;
  auto mine = [&](const SegmentSource& s, uint64_t id) {
    return !s.meta.shared || ShardOf(id, shard_count) == options_.index;
  };
  GraphSeed seed;
  // Newest first: the first input that names an id decides it. A tombstone
  // hides the id in the inputs older than its own, and stays in the output
  // only when segments older than every input remain for it to hide.
  // Ids that newer segments hold are decided already (a consolidation).
  absl::flat_hash_set<uint64_t> seen =
      newer_ids != nullptr ? *newer_ids : absl::flat_hash_set<uint64_t>{};
  std::vector<uint64_t> ids, sequences, tombstone_ids, tombstone_sequences;
  std::vector<float> rows;
  bool any_records = memtable != nullptr && memtable->mem->has_extras();
  for (const SegmentSource& in : inputs) any_records |= in.segment->has_records();
  RecordRows records(any_records);
  auto add = [&](uint64_t id, uint64_t sequence, const float* v,
                 std::string_view extras = {}) {
    if (!seen.insert(id).second) return false;
    records.Set(ids.size(), extras);
    ids.push_back(id);
    sequences.push_back(sequence);
    rows.insert(rows.end(), v, v + dim());
    return true;
  };
  // An input's tombstones hide its id from the older inputs only: they join
  // `seen` once the input is read (hidden_here).
  std::vector<uint64_t> hidden_here;
  auto tombstone = [&](uint64_t id, uint64_t sequence) {
    hidden_here.push_back(id);
    if (keep_tombstones && !seen.contains(id)) {
      tombstone_ids.push_back(id);
      tombstone_sequences.push_back(sequence);
    }
  };
  if (memtable != nullptr) total += memtable->mem->live_count();
  rows.reserve(total * dim());
  if (memtable != nullptr) {
    // The newest input: its entries take the memtable's newest sequence, as
    // a flush gives them (FlushOldest).
    const uint64_t sequence = memtable->max_sequence;
    memtable->mem->ForEachRecord(
        [&](uint64_t id, const float* v, std::string_view extras) {
          (void)add(id, sequence, v, extras);
        },
        [&](uint64_t id) { tombstone(id, sequence); });
    seen.insert(hidden_here.begin(), hidden_here.end());
  }
  for (size_t i = inputs.size(); i-- > 0;) {
    const Segment& input = *inputs[i].segment;
    hidden_here.clear();
    input.ForEachTombstone([&](uint64_t id, uint64_t sequence) {
      if (mine(inputs[i], id)) tombstone(id, sequence);
    });
    if (reuse && i == largest) {
      seed.segment = &input;
      seed.row_of_node.assign(input.vector_count(), GraphSeed::kDroppedNode);
      SHOAL_RETURN_IF_ERROR(input.ForEachNode(
          [&](uint32_t node, uint64_t id, uint64_t sequence, const float* v,
              std::span<const uint32_t>) {
            const uint32_t row = static_cast<uint32_t>(ids.size());
            if (add(id, sequence, v)) seed.row_of_node[node] = row;
          }));
      // The parts of the nodes kept, in a second pass (node order).
      if (input.has_records()) {
        uint32_t node = 0;
        SHOAL_RETURN_IF_ERROR(input.ForEachRecord(
            [&](uint64_t, uint64_t, const float*, std::string_view extras) {
              const uint32_t row = seed.row_of_node[node++];
              if (row != GraphSeed::kDroppedNode) records.Set(row, extras);
            }));
      }
    } else {
      SHOAL_RETURN_IF_ERROR(input.ForEachRecord(
          [&](uint64_t id, uint64_t sequence, const float* v, std::string_view extras) {
            if (mine(inputs[i], id)) (void)add(id, sequence, v, extras);
          }));
    }
    seen.insert(hidden_here.begin(), hidden_here.end());
  }
  const int64_t collect_us = timing.Lap();
  SegmentMeta meta;
  meta.number = options_.manifest->NewFileNumber();
  meta.min_sequence = inputs.front().meta.min_sequence;
  meta.max_sequence = inputs.front().meta.max_sequence;
  for (const SegmentSource& s : inputs) {
    meta.min_sequence = std::min(meta.min_sequence, s.meta.min_sequence);
    meta.max_sequence = std::max(meta.max_sequence, s.meta.max_sequence);
  }
  if (memtable != nullptr) {
    meta.min_sequence = std::min(meta.min_sequence, memtable->min_sequence);
    meta.max_sequence = std::max(meta.max_sequence, memtable->max_sequence);
  }
  meta.vectors = ids.size();
  meta.tombstones = tombstone_ids.size();
  const std::vector<std::string_view> extras = records.Views(ids.size());
  SegmentContents contents =
      Contents(ids, sequences, rows.data(), tombstone_ids, tombstone_sequences, extras);
  // Only a graph that loses no node is extended: repairing the lists of
  // dropped (deleted, overwritten) nodes' neighbours, merge after merge,
  // lost recall@10 (0.974 -> 0.897 in 20 rounds of 5% deletes and inserts,
  // against 0.97-0.99 for fresh builds; docs/performance-history.md), so such a
  // merge builds afresh.
  if (reuse && std::find(seed.row_of_node.begin(), seed.row_of_node.end(),
                         GraphSeed::kDroppedNode) == seed.row_of_node.end()) {
    contents.seed = &seed;
  }
  SegmentBuildStats build;
  SHOAL_ASSIGN_OR_RETURN(
      std::shared_ptr<Segment> segment,
      WriteSegment(meta.number, contents, &build));
  (void)timing.Lap();  // the build, split in its stats below
  ShardEdit edit;
  edit.shard = options_.index;
  edit.add.push_back(meta);
  for (const SegmentSource& s : inputs) edit.remove.push_back(s.meta.number);
  if (memtable != nullptr) edit.flushed_sequence = memtable->max_sequence;
  const std::string path = SegmentPath(meta.number);
  SHOAL_RETURN_IF_ERROR(PublishSegments(fs_, options_.manifest, options_.collection_name,
                                        options_.collection_incarnation, {&edit, 1},
                                        {&path, 1}));
  {
    MutexLock lock(&mu_);
    sources_.ReplaceSegments(edit.remove, {std::move(segment), meta});
    if (memtable != nullptr) FlushedLocked(*memtable);
  }
  if (memtable != nullptr) RemoveLogFilesUpTo(memtable->last_wal_number);
  // Readers holding the old segments keep their mappings; the files go now
  // (a shared one once no shard names it).
  for (const SegmentSource& s : inputs) ReleaseSegmentFile(s.meta);
  auto us = [](double seconds) { return static_cast<int64_t>(seconds * 1e6); };
  timing.Line(options_.collection_name, options_.index, inputs.size(), ids.size(),
              build.seeded_nodes, tombstone_ids.size(), collect_us, us(build.seed_seconds),
              us(build.medoid_seconds), us(build.insert_seconds),
              us(build.write_seconds), timing.Lap(), timing.Total(),
              build.distance_computations);
  return absl::OkStatus();
}

absl::Status Shard::WaitForBackgroundWork() {
  MutexLock lock(&mu_);
  while (true) {
    const bool busy = pending_tasks_.load() > 0 || flush_running_ || compaction_scheduled_ ||
                      compaction_running_;
    if (!busy && !sources_.frozen().empty() && !flush_status_.ok()) return flush_status_;
    // Without a flusher only Flush() moves frozen memtables: nothing to wait for.
    if (!busy && (sources_.frozen().empty() || options_.flusher == nullptr)) {
      return compaction_status_;
    }
    if (closed_) return ClosedError();
    // pending_tasks_ drops outside the lock: poll as Close does.
    flushed_.WaitFor(&mu_, std::chrono::milliseconds(1));
  }
}

}  // namespace shoal
