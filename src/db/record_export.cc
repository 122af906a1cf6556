// Copyright 2026 The shoal Authors.

#include "db/record_export.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "record/record_format.h"
#include "util/hash.h"

namespace shoal {
namespace {

using Row = Shard::ExportView::Row;

class ExportIterator final : public RecordIterator {
 public:
  ExportIterator(std::vector<Shard::ExportView> views, uint32_t dim, const ExportOptions& options)
      : views_(std::move(views)),
        dim_(dim),
        parts_(options.parts),
        progress_(options.progress),
        // About 1 MiB of vectors a batch: a disk-resident segment's scan
        // reads that much per pread, and the batch stays in cache.
        batch_rows_(std::max<size_t>(64, (size_t{1} << 20) / (size_t{dim} * sizeof(float)))) {
    for (const Shard::ExportView& v : views_) {
      total_ += v.rows.size() + v.tombstones.size();
      for (const SourceSnapshot::Source& s : v.older.sources()) {
        total_ += s.mem != nullptr ? s.mem->live_count() + s.mem->tombstone_count()
                                   : s.segment->vector_count() + s.segment->tombstone_count();
      }
    }
    Advance();
  }

  bool Valid() const override { return valid_; }
  const RecordData& record() const override { return record_; }
  void Next() override { Advance(); }
  absl::Status status() const override { return status_; }

 private:
  // Moves to the next record, reading the next batch when this one is done.
  void Advance() {
    while (batch_pos_ == batch_.size()) {
      if (!NextBatch()) {
        valid_ = false;
        if (status_.ok() && progress_) progress_(total_, total_);
        return;
      }
    }
    valid_ = Fill(batch_[batch_pos_++]);
  }

  // Fills batch_ with the next admitted rows; false at the end or on an
  // error (status_).
  bool NextBatch() {
    batch_.clear();
    batch_pos_ = 0;
    while (batch_.empty()) {
      if (!in_source_ && !StartNextSource()) return false;
      status_ = segment_ != nullptr ? ReadSegmentBatch() : ReadMemTableBatch();
      if (!status_.ok()) return false;
      if (progress_) progress_(done_, total_);
    }
    return true;
  }

  // Opens the next source of this shard, or the first of the next shard.
  bool StartNextSource() {
    while (shard_ < views_.size()) {
      const Shard::ExportView& v = views_[shard_];
      const size_t count = 1 + v.older.sources().size();
      if (next_source_ < count) {
        OpenSource(v, next_source_++, count);
        return true;
      }
      ++shard_;
      next_source_ = 0;
      seen_.clear();
    }
    return false;
  }

  // Source k of view v (0: the active memtable's rows; k: older source
  // k - 1). Its tombstones hide the ids in older sources.
  void OpenSource(const Shard::ExportView& v, size_t k, size_t count) {
    last_ = k + 1 == count;
    in_source_ = true;
    segment_ = nullptr;
    mem_pos_ = 0;
    if (k == 0) {
      mem_rows_ = &v.rows;
      for (uint64_t id : v.tombstones) Hide(id);
      done_ += v.tombstones.size();
      return;
    }
    const SourceSnapshot::Source& s = v.older.sources()[k - 1];
    if (s.mem != nullptr) {
      frozen_rows_.clear();
      frozen_rows_.reserve(s.mem->live_count());
      s.mem->ForEachRecord(
          [&](uint64_t id, const float* row, std::string_view extras) {
            frozen_rows_.push_back({id, row, extras});
          },
          [&](uint64_t id) { Hide(id); });
      mem_rows_ = &frozen_rows_;
      done_ += s.mem->tombstone_count();
      return;
    }
    segment_ = s.segment.get();
    shared_ = s.shared;
    node_ = 0;
    const uint32_t shard = static_cast<uint32_t>(shard_);
    const uint32_t shards = static_cast<uint32_t>(views_.size());
    segment_->ForEachTombstone([&](uint64_t id, uint64_t) {
      if (!shared_ || ShardOf(id, shards) == shard) Hide(id);
    });
    done_ += segment_->tombstone_count();
  }

  // A tombstone of the current source: older sources' copies are dead.
  void Hide(uint64_t id) {
    if (!last_) seen_.insert(id);
  }
  // Whether the current source's entry for `id` is its newest version (no
  // newer source named it); notes it for the older sources.
  bool Admit(uint64_t id) {
    if (!seen_.empty() && seen_.contains(id)) return false;
    if (!last_) seen_.insert(id);
    return true;
  }

  absl::Status ReadMemTableBatch() {
    const std::vector<Row>& rows = *mem_rows_;
    const size_t end = std::min(rows.size(), mem_pos_ + batch_rows_);
    for (size_t i = mem_pos_; i < end; ++i) {
      if (Admit(rows[i].id)) batch_.push_back(rows[i]);
    }
    done_ += end - mem_pos_;
    mem_pos_ = end;
    in_source_ = mem_pos_ < rows.size();
    return absl::OkStatus();
  }

  // The next batch_rows_ nodes of segment_: the admitted ones' vectors and
  // extras are copied into the batch's storage (the scan's views end with
  // it).
  absl::Status ReadSegmentBatch() {
    const uint64_t count = segment_->vector_count();
    const uint64_t end = std::min<uint64_t>(count, node_ + batch_rows_);
    const bool want_vector = (parts_ & kVectorPart) != 0;
    if (want_vector) batch_vectors_.resize(batch_rows_ * size_t{dim_});
    batch_extras_.clear();
    extras_at_.clear();
    const uint32_t shard = static_cast<uint32_t>(shard_);
    const uint32_t shards = static_cast<uint32_t>(views_.size());
    absl::Status s = segment_->ForEachRecordIn(
        node_, end, parts_,
        [&](uint64_t id, uint64_t, const float* vector, std::string_view extras) {
          if (shared_ && ShardOf(id, shards) != shard) return;
          if (!Admit(id)) return;
          const float* at = nullptr;
          if (want_vector) {
            float* to = batch_vectors_.data() + batch_.size() * dim_;
            std::memcpy(to, vector, size_t{dim_} * sizeof(float));
            at = to;
          }
          extras_at_.emplace_back(batch_extras_.size(), extras.size());
          batch_extras_.append(extras);
          batch_.push_back({id, at, {}});
        });
    if (!s.ok()) return s;
    for (size_t i = 0; i < batch_.size(); ++i) {
      batch_[i].extras = std::string_view(batch_extras_).substr(extras_at_[i].first,
                                                                extras_at_[i].second);
    }
    done_ += end - node_;
    node_ = end;
    in_source_ = node_ < count;
    return absl::OkStatus();
  }

  // record_ from `row`; false (status_ set) when its extras do not parse.
  bool Fill(const Row& row) {
    record_.id = row.id;
    if ((parts_ & kVectorPart) != 0) {
      record_.vector.assign(row.vector, row.vector + dim_);
    } else {
      record_.vector.clear();
    }
    if ((parts_ & ~uint32_t{kVectorPart}) == 0) return true;
    record_.labels.clear();
    record_.attributes.clear();
    record_.payload.clear();
    if (row.extras.empty()) return true;
    record::ExtrasView extras;
    size_t consumed = 0;
    absl::Status s = record::Parse(row.extras, &extras, &consumed);
    if (s.ok() && consumed != row.extras.size()) {
      s = absl::InvalidArgumentError("bytes follow the record's extras");
    }
    if (!s.ok()) {
      // A segment's bytes are damaged; a memtable's were checked when
      // written, so a failure there is a bug (as GetRecords says).
      const std::string what = absl::StrCat("the record of id ", row.id, ": ", s.message());
      status_ = segment_ != nullptr
                    ? absl::DataLossError(absl::StrCat("segment ", segment_->path(), ": ", what))
                    : absl::InternalError(absl::StrCat("in a memtable, ", what));
      return false;
    }
    extras.CopyTo(parts_, &record_);
    return true;
  }

  const std::vector<Shard::ExportView> views_;
  const uint32_t dim_;
  const uint32_t parts_;
  const ProgressFn progress_;
  const size_t batch_rows_;
  uint64_t total_ = 0;  // entries of every source
  uint64_t done_ = 0;   // entries examined

  // Where the iteration is.
  size_t shard_ = 0;
  size_t next_source_ = 0;  // of shard_: 0 the active rows, k older source k - 1
  bool in_source_ = false;  // a source is open and not read to its end
  bool last_ = false;       // the open source is the shard's oldest
  const Segment* segment_ = nullptr;  // the open source, when a segment
  bool shared_ = false;               // ... a shared one
  uint64_t node_ = 0;                 // its next node
  const std::vector<Row>* mem_rows_ = nullptr;  // the open source, when a memtable
  size_t mem_pos_ = 0;
  std::vector<Row> frozen_rows_;  // a frozen memtable's rows, noted when opened
  // Ids of shard_ that its sources newer than the open one named.
  absl::flat_hash_set<uint64_t> seen_;

  // The batch being served.
  std::vector<Row> batch_;
  size_t batch_pos_ = 0;
  std::vector<float> batch_vectors_;
  std::string batch_extras_;
  std::vector<std::pair<size_t, size_t>> extras_at_;  // (offset, length) in batch_extras_

  RecordData record_;
  bool valid_ = false;
  absl::Status status_;
};

}  // namespace

std::unique_ptr<RecordIterator> NewExportIterator(std::vector<Shard::ExportView> views,
                                                  uint32_t dim, const ExportOptions& options) {
  return std::make_unique<ExportIterator>(std::move(views), dim, options);
}

}  // namespace shoal
