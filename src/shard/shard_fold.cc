// Copyright 2026 The shoal Authors.
//
// One graph for several shards: a bulk load of a small collection written
// as one shared segment (BuildSharedBulk), and the fold across shards that
// merges every shard's segments into one shared segment (FoldAcross).
// docs/architecture.md, "One graph while small", says why.

#include <algorithm>
#include <optional>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_set.h"
#include "shard/record_rows.h"
#include "shard/shard.h"
#include "util/hash.h"
#include "util/status_macros.h"
#include "version/filename.h"

namespace shoal {

absl::Status Shard::BuildSharedBulk(std::span<Shard* const> shards, std::span<BulkPart> parts,
                                    std::span<const size_t> counts,
                                    std::span<const uint64_t> ids, const float* vectors,
                                    const std::string& dir, SegmentBuildStats* stats,
                                    std::span<const std::string_view> extras) {
  std::vector<uint64_t> sequences;
  sequences.reserve(ids.size());
  for (size_t j = 0; j < parts.size(); ++j) {
    sequences.insert(sequences.end(), counts[j], parts[j].sequence);
  }
  const uint64_t number = parts.front().number;
  const std::string path = JoinPath(dir, SegmentFileName(number));
  SHOAL_ASSIGN_OR_RETURN(
      std::shared_ptr<Segment> segment,
      shards.front()->WriteSegmentAt(path, shards.front()->Contents(ids, sequences, vectors, {}, {}, extras),
                                     stats));
  for (size_t j = 0; j < parts.size(); ++j) {
    parts[j].segment = segment;
    parts[j].path = path;
    parts[j].meta = SegmentMeta{number, parts[j].sequence, parts[j].sequence, counts[j], 0,
                                /*shared=*/true};
  }
  return absl::OkStatus();
}

absl::Status Shard::FoldAcross(std::span<Shard* const> shards, const std::string& dir,
                               double ratio, Shard* flushing, bool* flushed) {
  if (flushed != nullptr) *flushed = false;
  timing::Scope timing("fold_across",
                       "collection,shards,inputs,vectors,seeded,collect_us,insert_us,"
                       "write_us,publish_us,total_us");
  // A flush does not wait for merges: when one holds a shard's lock, the
  // flushing shard's memtable becomes a segment of its own (FlushOldest).
  size_t locked = 0;
  for (; locked < shards.size(); ++locked) {
    if (flushing == nullptr) {
      shards[locked]->compact_mu_.Lock();
    } else if (!shards[locked]->compact_mu_.TryLock()) {
      break;
    }
  }
  absl::Cleanup unlock = [&] {
    for (size_t s = locked; s-- > 0;) shards[s]->compact_mu_.Unlock();
  };
  if (locked < shards.size()) return absl::OkStatus();
  const uint32_t shard_count = static_cast<uint32_t>(shards.size());
  std::vector<std::vector<SegmentSource>> inputs(shard_count);
  absl::flat_hash_set<const Segment*> distinct;
  bool any_own = false;  // an input that is not shared
  const SegmentSource* largest = nullptr;
  // The flushing shard's oldest frozen memtable, merged in as its newest
  // input and flushed by the fold (as FlushOldest folds one into a shard's
  // own segments). Not while a bulk part is in flight there: its sequence
  // is below the memtable's, so the merged segment would rank above it.
  std::optional<FrozenSource> memtable;
  uint32_t memtable_shard = 0;
  for (uint32_t s = 0; s < shard_count; ++s) {
    ReaderMutexLock lock(&shards[s]->mu_);
    if (shards[s]->closing_) return absl::OkStatus();
    inputs[s] = shards[s]->sources_.CompactionInputs(shards[s]->CompactionLimitLocked());
    if (shards[s] == flushing && !shards[s]->sources_.frozen().empty() &&
        shards[s]->pending_bulk_.empty()) {
      memtable = shards[s]->sources_.frozen().front();
      memtable_shard = s;
    }
    for (const SegmentSource& in : inputs[s]) {
      distinct.insert(in.segment.get());
      any_own = any_own || !in.meta.shared;
      if (largest == nullptr || in.segment->vector_count() > largest->segment->vector_count()) {
        largest = &in;
      }
    }
  }
  // Nothing to gain: one shared segment already (shared segments hold no
  // tombstones), or no segment at all.
  if (!memtable && (distinct.empty() || (distinct.size() == 1 && !any_own))) {
    return absl::OkStatus();
  }
  // The fold rule (SourceSet::FoldInputs), over the collection: due once
  // the data newer than the largest input adds up to `ratio` of it. Each
  // fold rewrites the whole graph's file, so flushes in between stay
  // segments of their own (and their flush builds a quick graph).
  if (largest != nullptr) {
    uint64_t total = 0;
    for (uint32_t s = 0; s < shard_count; ++s) {
      for (const SegmentSource& in : inputs[s]) total += in.meta.vectors + in.meta.tombstones;
    }
    if (memtable) total += memtable->mem->live_count() + memtable->mem->tombstone_count();
    const uint64_t base = largest->segment->vector_count();
    const uint64_t newer = total > base ? total - base : 0;
    if (static_cast<double>(newer) < ratio * static_cast<double>(base)) return absl::OkStatus();
  }
  Shard& first = *shards.front();
  const bool reuse = largest != nullptr &&
                     MergeReusesGraph(*largest->segment, first.options_.collection.graph);
  const Segment* base = reuse ? largest->segment.get() : nullptr;
  GraphSeed seed;
  if (reuse) {
    seed.segment = base;
    seed.row_of_node.assign(base->vector_count(), GraphSeed::kDroppedNode);
  }
  const size_t dim = first.dim();
  std::vector<uint64_t> ids, sequences;
  std::vector<float> rows;
  std::vector<SegmentMeta> metas(shard_count);
  bool any_records = memtable && memtable->mem->has_extras();
  for (const auto& shard_inputs : inputs) {
    for (const SegmentSource& in : shard_inputs) any_records |= in.segment->has_records();
  }
  RecordRows records(any_records);
  // Shard by shard, newest input first: the first input that names an id
  // decides it (ids are disjoint across shards). A tombstone hides its id in
  // the inputs older than its own; none is kept, since each shard's inputs
  // start at its oldest segment.
  for (uint32_t s = 0; s < shard_count; ++s) {
    const bool with_memtable = memtable && memtable_shard == s;
    if (inputs[s].empty() && !with_memtable) continue;
    absl::flat_hash_set<uint64_t> seen;
    std::vector<uint64_t> hidden_here;
    const size_t begin = ids.size();
    auto mine = [&](const SegmentSource& in, uint64_t id) {
      return !in.meta.shared || ShardOf(id, shard_count) == s;
    };
    auto add = [&](uint64_t id, uint64_t sequence, const float* v,
                   std::string_view extras = {}) {
      if (!seen.insert(id).second) return false;
      records.Set(ids.size(), extras);
      ids.push_back(id);
      sequences.push_back(sequence);
      rows.insert(rows.end(), v, v + dim);
      return true;
    };
    if (with_memtable) {
      // Its entries take the memtable's newest sequence, as a flush gives
      // them.
      const uint64_t sequence = memtable->max_sequence;
      memtable->mem->ForEachRecord(
          [&](uint64_t id, const float* v, std::string_view extras) {
            (void)add(id, sequence, v, extras);
          },
          [&](uint64_t id) { hidden_here.push_back(id); });
      seen.insert(hidden_here.begin(), hidden_here.end());
    }
    for (size_t i = inputs[s].size(); i-- > 0;) {
      const SegmentSource& in = inputs[s][i];
      hidden_here.clear();
      in.segment->ForEachTombstone([&](uint64_t id, uint64_t) {
        if (mine(in, id)) hidden_here.push_back(id);
      });
      if (reuse && in.segment.get() == base) {
        SHOAL_RETURN_IF_ERROR(in.segment->ForEachNode(
            [&](uint32_t node, uint64_t id, uint64_t sequence, const float* v,
                std::span<const uint32_t>) {
              if (!mine(in, id)) return;
              const uint32_t row = static_cast<uint32_t>(ids.size());
              if (add(id, sequence, v)) seed.row_of_node[node] = row;
            }));
      } else {
        SHOAL_RETURN_IF_ERROR(in.segment->ForEachRecord(
            [&](uint64_t id, uint64_t sequence, const float* v, std::string_view extras) {
              if (mine(in, id)) (void)add(id, sequence, v, extras);
            }));
      }
      seen.insert(hidden_here.begin(), hidden_here.end());
    }
    SegmentMeta& meta = metas[s];
    meta.min_sequence = with_memtable ? memtable->min_sequence : ~uint64_t{0};
    meta.max_sequence = with_memtable ? memtable->max_sequence : 0;
    for (const SegmentSource& in : inputs[s]) {
      meta.min_sequence = std::min(meta.min_sequence, in.meta.min_sequence);
      meta.max_sequence = std::max(meta.max_sequence, in.meta.max_sequence);
    }
    meta.vectors = ids.size() - begin;
    meta.shared = true;
  }
  const int64_t collect_us = timing.Lap();
  const uint64_t number = first.options_.manifest->NewFileNumber();
  for (SegmentMeta& meta : metas) meta.number = number;
  // The parts of the extended graph's nodes kept, in a second pass (node
  // order), once every shard's rows are numbered.
  if (reuse && base != nullptr && base->has_records()) {
    uint32_t node = 0;
    SHOAL_RETURN_IF_ERROR(
        base->ForEachRecord([&](uint64_t, uint64_t, const float*, std::string_view extras) {
          const uint32_t row = seed.row_of_node[node++];
          if (row != GraphSeed::kDroppedNode) records.Set(row, extras);
        }));
  }
  const std::vector<std::string_view> extras = records.Views(ids.size());
  SegmentContents contents = first.Contents(ids, sequences, rows.data(), {}, {}, extras);
  // Only a graph that loses no node is extended (MergeSegments says why).
  if (reuse && std::find(seed.row_of_node.begin(), seed.row_of_node.end(),
                         GraphSeed::kDroppedNode) == seed.row_of_node.end()) {
    contents.seed = &seed;
  }
  const std::string path = JoinPath(dir, SegmentFileName(number));
  SegmentBuildStats build;
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Segment> segment,
                         first.WriteSegmentAt(path, contents, &build));
  (void)timing.Lap();
  std::vector<ShardEdit> edits;
  for (uint32_t s = 0; s < shard_count; ++s) {
    const bool with_memtable = memtable && memtable_shard == s;
    if (inputs[s].empty() && !with_memtable) continue;
    ShardEdit edit;
    edit.shard = s;
    edit.add.push_back(metas[s]);
    for (const SegmentSource& in : inputs[s]) edit.remove.push_back(in.meta.number);
    if (with_memtable) edit.flushed_sequence = memtable->max_sequence;
    edits.push_back(std::move(edit));
  }
  SHOAL_RETURN_IF_ERROR(PublishSegments(first.fs_, first.options_.manifest,
                                        first.options_.collection_name,
                                        first.options_.collection_incarnation, edits,
                                        {&path, 1}));
  for (const ShardEdit& edit : edits) {
    Shard& shard = *shards[edit.shard];
    MutexLock lock(&shard.mu_);
    shard.sources_.ReplaceSegments(edit.remove, {segment, metas[edit.shard]});
    if (memtable && memtable_shard == edit.shard) shard.FlushedLocked(*memtable);
  }
  if (memtable) {
    shards[memtable_shard]->RemoveLogFilesUpTo(memtable->last_wal_number);
    if (flushed != nullptr) *flushed = true;
  }
  // Readers holding the old segments keep them; the files go now (a shared
  // one once no shard names it, which is now unless a shard could not take
  // it in).
  for (uint32_t s = 0; s < shard_count; ++s) {
    for (const SegmentSource& in : inputs[s]) shards[s]->ReleaseSegmentFile(in.meta);
  }
  auto us = [](double seconds) { return static_cast<int64_t>(seconds * 1e6); };
  timing.Line(first.options_.collection_name, shard_count, distinct.size(), ids.size(),
              build.seeded_nodes, collect_us, us(build.insert_seconds),
              us(build.write_seconds), timing.Lap(), timing.Total());
  return absl::OkStatus();
}

}  // namespace shoal
