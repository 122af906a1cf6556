// Copyright 2026 The shoal Authors.
//
// A shard's in-memory table: vectors (copied into arena blocks, or read in
// place where the caller keeps them, such as a log file's read-only view),
// an id -> slot index, and tombstones for deleted ids. The newest write of
// an id wins; the slot of an overwritten or deleted vector is marked dead
// and skipped by searches. A record's other parts (its "extras", encoded as
// record/record_format.h says) are kept per slot beside the vector; a
// memtable none of whose puts had any keeps no array for them.
// Search is exact (a scan with the SIMD kernels).
//
// Thread-safety: none inside. The shard serializes writers and lets readers
// (Get, Search) run together under a shared lock.

#ifndef SHOAL_SRC_MEMTABLE_MEMTABLE_H_
#define SHOAL_SRC_MEMTABLE_MEMTABLE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "memtable/arena.h"
#include "shoal/options.h"
#include "util/top_k.h"

namespace shoal {

namespace filter {
class CompiledFilter;  // filter/compiled_filter.h
}  // namespace filter

class MemTable {
 public:
  // REQUIRES: dim >= 1. With preallocate, arena blocks for `reserve_bytes`
  // of vectors are allocated and touched now.
  MemTable(uint32_t dim, size_t block_bytes, bool preallocate, size_t reserve_bytes,
           BackgroundWorker* prefaulter = nullptr);

  MemTable(const MemTable&) = delete;
  MemTable& operator=(const MemTable&) = delete;

  // Inserts or replaces `id` with the dim floats at `vector` (copied) and
  // the record's other parts, encoded (record/record_format.h; empty: none;
  // copied).
  void Put(uint64_t id, const float* vector, std::string_view extras = {});
  // As Put, but the floats and extras are read where they are, not copied:
  // they must stay unchanged and readable while the memtable lives
  // (KeepAlive).
  void PutInPlace(uint64_t id, const float* vector, std::string_view extras = {});
  // Holds `owner` (what keeps PutInPlace's rows readable) while the
  // memtable lives.
  void KeepAlive(std::shared_ptr<const void> owner);
  // Records that `id` is deleted (also when it is absent here: the tombstone
  // hides older copies elsewhere).
  void Delete(uint64_t id);
  // Makes room in the index for `n` more ids.
  void Reserve(size_t n);

  uint32_t dim() const { return dim_; }

  enum class Lookup { kAbsent, kFound, kDeleted };
  // kFound sets *vector to the stored floats (valid until the next write).
  // *extras (may be null) is set to the record's encoded other parts (empty:
  // none), valid as *vector.
  Lookup Get(uint64_t id, const float** vector, std::string_view* extras = nullptr) const;

  // Offers every live vector to `top` with its distance to `query`.
  // Ids for which visible(id) is false are skipped (nullptr: all visible);
  // visible is only asked about vectors close enough to enter `top`.
  void Search(Metric metric, const float* query, TopK* top,
              const std::function<bool(uint64_t)>* visible = nullptr) const;

  // As Search, offering only the live vectors whose records match `filter`
  // (each slot's extras tested before its distance is computed). A
  // memtable without extras tests the filter once, on a bare record, unless
  // the filter asks about ids.
  void SearchFiltered(Metric metric, const float* query, const filter::CompiledFilter& filter,
                      TopK* top, const std::function<bool(uint64_t)>* visible = nullptr) const;

  // Calls fn(id, vector) for every live id, fn(id) for every tombstone.
  template <typename LiveFn, typename TombstoneFn>
  void ForEach(LiveFn&& live, TombstoneFn&& tombstone) const {
    for (const auto& [id, slot] : index_) {
      if (slot == kTombstone) {
        tombstone(id);
      } else {
        live(id, slot_rows_[slot]);
      }
    }
  }
  // As ForEach, with each live id's extras (std::string_view, encoded;
  // empty: none): live(id, vector, extras), tombstone(id). What a flush
  // writes records from. The vector and extras pointers stay valid, and
  // their bytes unchanged, while the memtable lives, also across later
  // writes: a row or extras once stored never moves or changes (arena
  // blocks stay put, an overwrite takes a new slot). An export reads them
  // after the shard's lock is released (Shard::ExportView).
  template <typename LiveFn, typename TombstoneFn>
  void ForEachRecord(LiveFn&& live, TombstoneFn&& tombstone) const {
    if (slot_extras_.empty()) {
      ForEach([&](uint64_t id, const float* row) { live(id, row, std::string_view()); },
              tombstone);
      return;
    }
    for (const auto& [id, slot] : index_) {
      if (slot == kTombstone) {
        tombstone(id);
      } else {
        live(id, slot_rows_[slot], slot_extras_[slot]);
      }
    }
  }
  // Whether any put (live or not) had extras.
  bool has_extras() const { return !slot_extras_.empty(); }

  bool empty() const { return index_.empty(); }
  size_t live_count() const { return live_count_; }
  size_t tombstone_count() const { return tombstone_count_; }
  // Bytes of data written: rows and extras (including dead ones) and index
  // entries. What memtable_bytes is compared with (preallocated space does
  // not count), so that large payloads make a memtable full too.
  size_t DataBytes() const {
    return slot_rows_.size() * size_t{dim_} * sizeof(float) + index_.size() * 16 +
           extras_bytes_;
  }
  // Bytes held: arena blocks (rows and extras), slot arrays and the index
  // (not the rows and extras read in place: their owner holds them).
  size_t ApproximateMemoryUsage() const;

 private:
  static constexpr uint32_t kTombstone = UINT32_MAX;

  // Adds a slot for `id` whose floats are at `row` and extras at `extras`
  // (where they stay).
  void AddSlot(uint64_t id, const float* row, std::string_view extras);

  const uint32_t dim_;
  Arena arena_;
  std::vector<std::shared_ptr<const void>> owners_;  // see KeepAlive
  std::vector<const float*> slot_rows_;  // slot -> its floats
  std::vector<uint64_t> slot_ids_;  // slot -> id
  std::vector<uint8_t> slot_live_;  // slot -> 1 when it holds the newest copy
  // slot -> its extras (empty: none). Empty until the first put with
  // extras, then as long as slot_rows_: puts without any cost nothing.
  std::vector<std::string_view> slot_extras_;
  ByteArena extras_arena_;   // Put's copies of extras
  size_t extras_bytes_ = 0;  // sum of the slots' extras sizes
  absl::flat_hash_map<uint64_t, uint32_t> index_;  // id -> slot or kTombstone
  size_t live_count_ = 0;
  size_t tombstone_count_ = 0;
};

}  // namespace shoal

#endif  // SHOAL_SRC_MEMTABLE_MEMTABLE_H_
