// Copyright 2026 The shoal Authors.

#include "version/source_set.h"

#include <algorithm>

#include "util/status_macros.h"

namespace shoal {

absl::StatusOr<SourceSnapshot::Lookup> SourceSnapshot::Find(uint64_t id, size_t end,
                                                            std::vector<float>* vector) const {
  return FindIn(id, end, vector, nullptr, false, nullptr);
}

absl::StatusOr<SourceSnapshot::Lookup> SourceSnapshot::FindRecord(
    uint64_t id, std::vector<float>* vector, std::string* extras, uint32_t parts,
    const Segment** segment) const {
  return FindIn(id, sources_.size(), vector, extras, parts, segment);
}

absl::StatusOr<SourceSnapshot::Lookup> SourceSnapshot::FindIn(uint64_t id, size_t end,
                                                              std::vector<float>* vector,
                                                              std::string* extras,
                                                              uint32_t parts,
                                                              const Segment** segment) const {
  if (extras != nullptr) extras->clear();
  if (segment != nullptr) *segment = nullptr;
  for (size_t i = 0; i < std::min(end, sources_.size()); ++i) {
    const Source& source = sources_[i];
    if (source.mem != nullptr) {
      const float* v = nullptr;
      std::string_view bytes;
      switch (source.mem->Get(id, &v, extras != nullptr ? &bytes : nullptr)) {
        case MemTable::Lookup::kFound:
          if (vector != nullptr) vector->assign(v, v + source.mem->dim());
          if (extras != nullptr) extras->assign(bytes);
          return Lookup::kLive;
        case MemTable::Lookup::kDeleted:
          return Lookup::kDeleted;
        case MemTable::Lookup::kAbsent:
          break;
      }
    } else {
      uint64_t sequence;
      SHOAL_ASSIGN_OR_RETURN(
          Segment::Lookup found,
          extras != nullptr
              ? source.segment->FindRecord(id, &sequence, vector, extras, parts)
              : source.segment->Find(id, &sequence, vector));
      if (found == Segment::Lookup::kLive) {
        if (segment != nullptr) *segment = source.segment.get();
        return Lookup::kLive;
      }
      if (found == Segment::Lookup::kDeleted) return Lookup::kDeleted;
    }
  }
  return Lookup::kAbsent;
}

std::optional<Consolidation> PickConsolidation(std::span<const SegmentSource> segments,
                                               double fraction) {
  // Newest to oldest, with the ids seen so far: a segment's vector is dead
  // when a newer segment names its id. The oldest segment (usually the
  // largest) is only looked up, never inserted.
  absl::flat_hash_set<uint64_t> newer;
  std::optional<Consolidation> best;
  double best_share = 0;
  for (size_t i = segments.size(); i-- > 0;) {
    const Segment& segment = *segments[i].segment;
    uint64_t dead = 0;
    segment.ForEachEntry([&](uint64_t id, uint64_t, bool live) {
      if (live && newer.contains(id)) ++dead;
    });
    const uint64_t vectors = segment.vector_count();
    const double share = vectors == 0 ? 0.0 : static_cast<double>(dead) / vectors;
    if (dead > 0 && share >= fraction && share > best_share) {
      best_share = share;
      best = Consolidation{i, dead, {}};
    }
    if (i > 0) {
      segment.ForEachEntry([&](uint64_t id, uint64_t, bool) { newer.insert(id); });
    }
  }
  if (!best) return best;
  for (size_t i = best->index + 1; i < segments.size(); ++i) {
    segments[i].segment->ForEachEntry(
        [&](uint64_t id, uint64_t, bool) { best->newer_ids.insert(id); });
  }
  return best;
}

void SourceSet::AddSegment(SegmentSource segment) {
  auto at = std::upper_bound(segments_.begin(), segments_.end(), segment.meta.max_sequence,
                             [](uint64_t sequence, const SegmentSource& s) {
                               return sequence < s.meta.max_sequence;
                             });
  segments_.insert(at, std::move(segment));
}

void SourceSet::ReplaceSegments(std::span<const uint64_t> replaced, SegmentSource merged) {
  std::erase_if(segments_, [&](const SegmentSource& s) {
    return std::find(replaced.begin(), replaced.end(), s.meta.number) != replaced.end();
  });
  AddSegment(std::move(merged));
}

uint64_t SourceSet::MaxSegmentSequence() const {
  // Kept sorted by max_sequence (AddSegment).
  return segments_.empty() ? 0 : segments_.back().meta.max_sequence;
}

std::vector<SegmentSource> SourceSet::CompactionInputs(uint64_t limit) const {
  for (const FrozenSource& f : frozen_) limit = std::min(limit, f.min_sequence);
  std::vector<SegmentSource> inputs;
  for (const SegmentSource& s : segments_) {
    if (s.meta.max_sequence >= limit) break;
    inputs.push_back(s);
  }
  return inputs;
}

std::vector<SegmentSource> SourceSet::OwnCompactionInputs(uint64_t limit) const {
  std::vector<SegmentSource> inputs = CompactionInputs(limit);
  auto last_shared = std::find_if(inputs.rbegin(), inputs.rend(),
                                  [](const SegmentSource& s) { return s.meta.shared; });
  inputs.erase(inputs.begin(), last_shared.base());
  return inputs;
}

std::vector<SegmentSource> SourceSet::SizeTieredInputs(uint64_t limit,
                                                       const CompactionOptions& options) const {
  std::vector<SegmentSource> candidates = OwnCompactionInputs(limit);
  auto size = [](const SegmentSource& s) {
    return static_cast<double>(std::max<uint64_t>(1, s.meta.vectors + s.meta.tombstones));
  };
  // The newest run that is due: a run starts at some segment and takes in
  // older ones while they fit (a small newest segment, the tail of a flush,
  // must not block the tier behind it).
  for (size_t end = candidates.size(); end >= options.min_merge_width; --end) {
    size_t begin = end - 1;
    double run = size(candidates[begin]);
    while (begin > 0 && size(candidates[begin - 1]) <= (1 + options.size_ratio) * run) {
      --begin;
      run += size(candidates[begin]);
    }
    if (end - begin >= options.min_merge_width) {
      return std::vector<SegmentSource>(candidates.begin() + static_cast<ptrdiff_t>(begin),
                                        candidates.begin() + static_cast<ptrdiff_t>(end));
    }
  }
  return {};
}

std::vector<SegmentSource> SourceSet::FoldInputs(uint64_t limit, double ratio,
                                                 uint64_t pending) const {
  std::vector<SegmentSource> candidates = OwnCompactionInputs(limit);
  auto size = [](const SegmentSource& s) { return s.meta.vectors + s.meta.tombstones; };
  size_t largest = 0;
  for (size_t i = 1; i < candidates.size(); ++i) {
    if (size(candidates[i]) > size(candidates[largest])) largest = i;
  }
  if (candidates.empty() || (largest + 1 >= candidates.size() && pending == 0)) return {};
  uint64_t newer = pending;
  for (size_t i = largest + 1; i < candidates.size(); ++i) newer += size(candidates[i]);
  if (static_cast<double>(newer) < ratio * static_cast<double>(size(candidates[largest]))) {
    return {};
  }
  return std::vector<SegmentSource>(candidates.begin() + static_cast<ptrdiff_t>(largest),
                                    candidates.end());
}

std::vector<SegmentSource> SourceSet::PickCompaction(uint64_t limit,
                                                     const CompactionOptions& options,
                                                     bool quiescent) const {
  // The fold first: it extends the large graph, and the tier it would
  // otherwise merge first is part of it anyway.
  std::vector<SegmentSource> fold =
      FoldInputs(limit, quiescent ? options.quiescent_fold_ratio : options.fold_ratio);
  if (!fold.empty()) return fold;
  return SizeTieredInputs(limit, options);
}

SourceSnapshot SourceSet::Snapshot() const {
  SourceSnapshot snapshot;
  snapshot.sources_.reserve(frozen_.size() + segments_.size());
  for (const FrozenSource& f : frozen_) {
    snapshot.sources_.push_back({f.mem, nullptr, f.max_sequence, false});
  }
  for (const SegmentSource& s : segments_) {
    snapshot.sources_.push_back({nullptr, s.segment, s.meta.max_sequence, s.meta.shared});
  }
  // Stable: a bulk segment and a memtable never share a max_sequence, but
  // the order of equal ranks stays as added.
  std::stable_sort(snapshot.sources_.begin(), snapshot.sources_.end(),
                   [](const SourceSnapshot::Source& a, const SourceSnapshot::Source& b) {
                     return a.max_sequence > b.max_sequence;
                   });
  return snapshot;
}

}  // namespace shoal
