// Copyright 2026 The shoal Authors.

#include "memtable/memtable.h"

#include <algorithm>

#include "distance/distance.h"
#include "filter/compiled_filter.h"

namespace shoal {

MemTable::MemTable(uint32_t dim, size_t block_bytes, bool preallocate,
                   size_t reserve_bytes, BackgroundWorker* prefaulter)
    : dim_(dim), arena_(dim, block_bytes, prefaulter) {
  if (preallocate) {
    const size_t rows = reserve_bytes / (size_t{dim} * sizeof(float));
    arena_.Preallocate(rows);
    slot_rows_.reserve(rows);
    slot_ids_.reserve(rows);
    slot_live_.reserve(rows);
    index_.reserve(rows);
  }
}

void MemTable::Reserve(size_t n) { index_.reserve(index_.size() + n); }

void MemTable::Put(uint64_t id, const float* vector, std::string_view extras) {
  AddSlot(id, arena_.row(arena_.Append(vector)),
          extras.empty() ? std::string_view() : extras_arena_.Copy(extras));
}

void MemTable::PutInPlace(uint64_t id, const float* vector, std::string_view extras) {
  AddSlot(id, vector, extras);
}

void MemTable::KeepAlive(std::shared_ptr<const void> owner) {
  if (owners_.empty() || owners_.back() != owner) owners_.push_back(std::move(owner));
}

void MemTable::AddSlot(uint64_t id, const float* row, std::string_view extras) {
  const uint32_t slot = static_cast<uint32_t>(slot_rows_.size());
  if (!extras.empty() || !slot_extras_.empty()) {
    // The first slot with extras creates the array for all the slots.
    slot_extras_.resize(slot);
    slot_extras_.push_back(extras);
    extras_bytes_ += extras.size();
  }
  slot_rows_.push_back(row);
  slot_ids_.push_back(id);
  slot_live_.push_back(1);
  auto [it, inserted] = index_.try_emplace(id, slot);
  if (!inserted) {
    if (it->second == kTombstone) {
      --tombstone_count_;
    } else {
      slot_live_[it->second] = 0;
      --live_count_;
    }
    it->second = slot;
  }
  ++live_count_;
}

void MemTable::Delete(uint64_t id) {
  auto [it, inserted] = index_.try_emplace(id, kTombstone);
  if (!inserted) {
    if (it->second == kTombstone) return;
    slot_live_[it->second] = 0;
    --live_count_;
    it->second = kTombstone;
  }
  ++tombstone_count_;
}

MemTable::Lookup MemTable::Get(uint64_t id, const float** vector,
                               std::string_view* extras) const {
  if (extras != nullptr) *extras = {};
  auto it = index_.find(id);
  if (it == index_.end()) return Lookup::kAbsent;
  if (it->second == kTombstone) return Lookup::kDeleted;
  *vector = slot_rows_[it->second];
  if (extras != nullptr && !slot_extras_.empty()) *extras = slot_extras_[it->second];
  return Lookup::kFound;
}

void MemTable::Search(Metric metric, const float* query, TopK* top,
                      const std::function<bool(uint64_t)>* visible) const {
  const size_t rows = slot_rows_.size();
  // Distances for a run of slots whose rows follow each other in memory (an
  // arena block's, a log record's), at most kChunk at a time: the scratch
  // stays in L1.
  constexpr size_t kChunk = 256;
  float dist[kChunk];
  size_t n = 0;
  for (size_t first = 0; first < rows; first += n) {
    const float* run = slot_rows_[first];
    const size_t most = std::min(kChunk, rows - first);
    n = 1;
    while (n < most && slot_rows_[first + n] == run + n * dim_) ++n;
    DistanceBatch(metric, query, run, n, dim_, dist);
    for (size_t i = 0; i < n; ++i) {
      if (slot_live_[first + i] && dist[i] <= top->threshold() &&
          (visible == nullptr || (*visible)(slot_ids_[first + i]))) {
        top->Push(slot_ids_[first + i], dist[i]);
      }
    }
  }
}

void MemTable::SearchFiltered(Metric metric, const float* query,
                              const filter::CompiledFilter& filter, TopK* top,
                              const std::function<bool(uint64_t)>* visible) const {
  if (slot_extras_.empty() && !filter.has_ids()) {
    // Every slot is a bare record: all match or none does.
    if (filter.MatchesBare(0)) Search(metric, query, top, visible);
    return;
  }
  for (size_t slot = 0; slot < slot_rows_.size(); ++slot) {
    if (!slot_live_[slot]) continue;
    const uint64_t id = slot_ids_[slot];
    const std::string_view extras =
        slot_extras_.empty() ? std::string_view() : slot_extras_[slot];
    if (!filter.MatchesExtras(extras, id)) continue;
    const float d = Distance(metric, query, slot_rows_[slot], dim_);
    if (d <= top->threshold() && (visible == nullptr || (*visible)(id))) top->Push(id, d);
  }
}

size_t MemTable::ApproximateMemoryUsage() const {
  return arena_.MemoryUsage() + slot_rows_.capacity() * sizeof(const float*) +
         slot_ids_.capacity() * sizeof(uint64_t) +
         slot_live_.capacity() + index_.capacity() * (sizeof(uint64_t) + sizeof(uint32_t) + 1) +
         slot_extras_.capacity() * sizeof(std::string_view) + extras_arena_.MemoryUsage();
}

}  // namespace shoal
