// Copyright 2026 The shoal Authors.
//
// Shard writes: log records, back-pressure, puts, deletes, freezing.

#include "shard/shard.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace shoal {

absl::StatusOr<uint64_t> Shard::AppendRecord(wal::RecordType type, uint32_t count,
                                             uint32_t dim, size_t payload_length,
                                             absl::FunctionRef<void(char*)> fill) {
  // A rotation of this log (and its sync) and the copy of the payload
  // happen here, outside the commit log's mutex, which every writer of the
  // collection takes.
  SHOAL_ASSIGN_OR_RETURN(char* payload, wal_->BeginRecord(payload_length));
  fill(payload);
  return FinishAppend(type, count, dim, payload_length);
}

absl::StatusOr<uint64_t> Shard::FinishAppend(wal::RecordType type, uint32_t count, uint32_t dim,
                                             size_t payload_length) {
  if (options_.commit_log == nullptr) {
    return wal_->FinishRecord(type, next_sequence_, count, dim);
  }
  // A record begun but not finished takes no room: when the commit log
  // fails, the next record starts at the same offset.
  uint64_t lsn = 0;
  return options_.commit_log->Append(
      options_.index, wal::AlignRecord(wal::kRecordHeaderSize + payload_length), [&] {
        lsn = wal_->FinishRecord(type, next_sequence_, count, dim);
        return wal_->last_record();
      });
}

bool Shard::NoneHasParts(std::span<const record::Extras> extras) {
  return std::all_of(extras.begin(), extras.end(),
                     [](const record::Extras& e) { return e.empty(); });
}

size_t Shard::RecordsPerRecord(std::span<const record::Extras> extras, size_t dim,
                               size_t* extras_bytes) {
  size_t n = 0, bytes = 0;
  while (n < extras.size()) {
    const size_t more = record::EncodedSize(extras[n]);
    if (n > 0 && wal::PutRecordsPayloadSize(n + 1, dim, bytes + more) > kMaxRecordPayload) break;
    bytes += more;
    ++n;
  }
  *extras_bytes = bytes;
  return n;
}

size_t Shard::PutsPayloadSize(size_t count, size_t dim, std::span<const record::Extras> extras) {
  if (extras.empty()) return wal::PutPayloadSize(count, dim);
  size_t bytes = 0;
  for (const record::Extras& e : extras) bytes += record::EncodedSize(e);
  return wal::PutRecordsPayloadSize(count, dim, bytes);
}

absl::StatusOr<uint64_t> Shard::AppendPut(std::span<const uint64_t> ids,
                                          std::span<const float* const> rows,
                                          std::span<const record::Extras> extras,
                                          timing::Scope* timing, int64_t* wal_us,
                                          int64_t* memtable_us) {
  const size_t per_record = RowsPerRecord(dim());
  uint64_t lsn = 0;
  for (size_t first = 0, n = 0; first < ids.size(); first += n) {
    std::span<const record::Extras> some_extras;
    if (extras.empty()) {
      n = std::min(per_record, ids.size() - first);
    } else {
      size_t extras_bytes;
      n = RecordsPerRecord(extras.subspan(first), dim(), &extras_bytes);
      some_extras = extras.subspan(first, n);
    }
    const std::span<const uint64_t> some_ids = ids.subspan(first, n);
    const std::span<const float* const> some_rows = rows.subspan(first, n);
    SHOAL_RETURN_IF_ERROR(BeginPuts(some_ids, some_rows, some_extras, /*write_through=*/false));
    SHOAL_ASSIGN_OR_RETURN(lsn, FinishAppend(PutsType(some_extras), static_cast<uint32_t>(n),
                                             dim(), PutsPayloadSize(n, dim(), some_extras)));
    *wal_us += timing->Lap();
    ApplyPutsLocked(some_ids, some_rows, some_extras, LoggedRowsLocked(n));
    *memtable_us += timing->Lap();
  }
  return lsn;
}

absl::Status Shard::BeginPuts(std::span<const uint64_t> ids,
                              std::span<const float* const> rows,
                              std::span<const record::Extras> extras, bool write_through) {
  const size_t row_bytes = size_t{dim()} * sizeof(float);
  const size_t length = PutsPayloadSize(ids.size(), dim(), extras);
  if (!write_through || length < kWriteThroughBytes || wal_->direct()) {
    SHOAL_ASSIGN_OR_RETURN(char* payload, wal_->BeginRecord(length));
    EncodePuts(ids, rows, extras, payload);
    return absl::OkStatus();
  }
  // The ids, then the rows: one piece for each run of rows that follow each
  // other in the caller's memory; then the records' extras, encoded here
  // first (a copy of a few bytes a row: the write through the file spares
  // the zero-fill of fresh mapped pages, which costs more).
  std::string encoded;
  if (!extras.empty()) {
    encoded.resize(length - wal::PutPayloadSize(ids.size(), dim()));
    char* out = encoded.data();
    for (const record::Extras& e : extras) out = record::Encode(e, out);
  }
  std::vector<std::string_view> pieces;
  pieces.reserve(2 + rows.size());
  pieces.emplace_back(reinterpret_cast<const char*>(ids.data()), ids.size() * sizeof(uint64_t));
  for (size_t i = 0; i < rows.size();) {
    size_t run = 1;
    while (i + run < rows.size() && rows[i + run] == rows[i] + run * dim()) ++run;
    pieces.emplace_back(reinterpret_cast<const char*>(rows[i]), run * row_bytes);
    i += run;
  }
  if (!encoded.empty()) pieces.emplace_back(encoded);
  return wal_->BeginRecordWrite(PutsType(extras), next_sequence_,
                                static_cast<uint32_t>(ids.size()), dim(), pieces);
}

void Shard::EncodePuts(std::span<const uint64_t> ids, std::span<const float* const> rows,
                       std::span<const record::Extras> extras, char* payload) const {
  const size_t row_bytes = size_t{dim()} * sizeof(float);
  std::memcpy(payload, ids.data(), ids.size() * sizeof(uint64_t));
  char* out = payload + ids.size() * sizeof(uint64_t);
  for (size_t i = 0; i < ids.size(); ++i) std::memcpy(out + i * row_bytes, rows[i], row_bytes);
  out += ids.size() * row_bytes;
  for (const record::Extras& e : extras) out = record::Encode(e, out);
}

const float* Shard::LoggedRowsLocked(size_t count) {
  // A record of a few rows is copied: a memtable scan hands runs of rows
  // that follow each other in memory to the batch distance kernel, and
  // single puts' rows in the log do not follow each other (a header
  // between every two).
  if (wal_->view() == nullptr || count < kMinRowsInPlace) return nullptr;
  active_->KeepAlive(wal_->view());
  return reinterpret_cast<const float*>(wal_->last_record_in_view() + wal::kRecordHeaderSize +
                                        count * sizeof(uint64_t));
}

void Shard::ApplyPutsLocked(std::span<const uint64_t> ids, std::span<const float* const> rows,
                            std::span<const record::Extras> extras, const float* logged) {
  next_sequence_ += ids.size();
  if (ids.size() > 1) active_->Reserve(ids.size());
  if (!extras.empty()) {
    ApplyRecordsLocked(ids, rows, extras, logged);
  } else if (logged != nullptr) {
    for (size_t i = 0; i < ids.size(); ++i) active_->PutInPlace(ids[i], logged + i * dim());
  } else {
    for (size_t i = 0; i < ids.size(); ++i) active_->Put(ids[i], rows[i]);
  }
}

void Shard::ApplyRecordsLocked(std::span<const uint64_t> ids,
                               std::span<const float* const> rows,
                               std::span<const record::Extras> extras, const float* logged) {
  // The extras as the record holds them (encoded, after the rows): in the
  // file's view with the rows when those are read there, else in the record
  // just finished, which the memtable copies.
  const size_t n = ids.size();
  const char* encoded =
      logged != nullptr
          ? reinterpret_cast<const char*>(logged + n * dim())
          : wal_->last_record().data() + wal::kRecordHeaderSize + wal::PutPayloadSize(n, dim());
  for (size_t i = 0; i < n; ++i) {
    const size_t size = record::EncodedSize(extras[i]);
    // A record without parts keeps nothing (its 8 zero bytes stay in the log).
    const std::string_view bytes =
        extras[i].empty() ? std::string_view() : std::string_view(encoded, size);
    encoded += size;
    if (logged != nullptr) {
      active_->PutInPlace(ids[i], logged + i * dim(), bytes);
    } else {
      active_->Put(ids[i], rows[i], bytes);
    }
  }
}

absl::Status Shard::AfterAppend(uint64_t lsn, std::optional<SyncingWriter>* syncing) {
  if (options_.db.fsync != FsyncPolicy::kAlways) return absl::OkStatus();
  if (options_.commit_log == nullptr) return wal_->SyncTo(lsn);
  SHOAL_RETURN_IF_ERROR(options_.commit_log->SyncTo(lsn));
  // No longer a writer the commit log's gathers wait for, while this one
  // may sync every shard log.
  syncing->reset();
  // This write is durable whatever the checkpoint does: a failure leaves the
  // commit log's files for the next one, and a failed sync of a shard's log
  // fails that shard's later writes (WalWriter::BeginRecord).
  (void)options_.commit_log->MaybeCheckpoint();
  return absl::OkStatus();
}

absl::Status Shard::Put(std::span<const uint64_t> ids, std::span<const float* const> rows,
                        std::span<const record::Extras> extras, int64_t route_us) {
  if (!extras.empty() && extras.size() != ids.size()) {
    return absl::InvalidArgumentError(absl::StrCat("put of ", ids.size(), " ids with ",
                                                   extras.size(), " records' extras"));
  }
  if (NoneHasParts(extras)) extras = {};  // plain kPut records: as cheap as vectors
  timing::Scope timing("put",
                       "collection,shard,vectors,route_us,wal_us,memtable_us,sync_us,total_us");
  std::optional<SyncingWriter> syncing;
  int64_t wal_us = 0, memtable_us = 0;
  uint64_t lsn;
  {
    MutexLock lock(&mu_);
    SHOAL_RETURN_IF_ERROR(AdmitLocked(/*may_wait=*/true));
    // Counted for the group commit only from here: a writer held back above
    // for a flush (a graph build) would make every gather wait it out.
    syncing.emplace(this);
    timing.Lap();  // from here: the log and the memtable
    SHOAL_ASSIGN_OR_RETURN(lsn, AppendPut(ids, rows, extras, &timing, &wal_us, &memtable_us));
    MaybeFreezeLocked();
  }
  absl::Status s = AfterAppend(lsn, &syncing);
  timing.Line(options_.collection_name, options_.index, ids.size(), route_us, wal_us,
              memtable_us, timing.Lap(), timing.Total() + route_us);
  return s;
}

absl::Status Shard::AdmitLocked(bool may_wait, bool* must_wait) {
  while (true) {
    if (closed_) return ClosedError();
    if (sources_.frozen().size() < kMaxFrozen) {
      if (!MergesBehindLocked()) return absl::OkStatus();
      if (!may_wait) {
        *must_wait = true;
        return absl::OkStatus();
      }
      flushed_.Wait(&mu_);
      continue;
    }
    // Without a flusher only Flush() builds segments: nothing to wait for.
    if (options_.flusher == nullptr) return flush_status_;
    if (!flush_status_.ok() && !flush_running_ && !flush_retry_scheduled_) {
      // The last flush failed (a full disk, an I/O error).
      if (std::chrono::steady_clock::now() < flush_retry_at_) return flush_status_;
      flush_retry_scheduled_ = true;
      ScheduleFlush();
    }
    if (!may_wait) {
      *must_wait = true;
      return absl::OkStatus();
    }
    flushed_.Wait(&mu_);
  }
}

absl::Status Shard::Delete(std::span<const uint64_t> ids) {
  std::optional<SyncingWriter> syncing(this);
  uint64_t lsn;
  {
    MutexLock lock(&mu_);
    if (closed_) return ClosedError();
    SHOAL_ASSIGN_OR_RETURN(
        lsn, AppendRecord(wal::RecordType::kDelete, static_cast<uint32_t>(ids.size()), 0,
                          ids.size() * sizeof(uint64_t), [&](char* payload) {
                            std::memcpy(payload, ids.data(), ids.size() * sizeof(uint64_t));
                          }));
    next_sequence_ += ids.size();
    for (uint64_t id : ids) active_->Delete(id);
    MaybeFreezeLocked();
  }
  return AfterAppend(lsn, &syncing);
}

void Shard::MaybeFreezeLocked() {
  if (active_->DataBytes() < options_.db.memtable_bytes) return;
  // A failure leaves the memtable active (and growing); the next write tries
  // again, and Flush() reports it.
  absl::Status s = FreezeLocked();
  if (!s.ok() && flush_status_.ok()) flush_status_ = s;
}

absl::Status Shard::FreezeLocked() {
  if (active_->empty()) return absl::OkStatus();
  timing::Scope timing("freeze", "collection,shard,frozen_memtables,total_us");
  SHOAL_ASSIGN_OR_RETURN(uint64_t last_file, wal_->Rotate());
  PushActiveLocked(next_sequence_ - 1, last_file);
  active_min_sequence_ = next_sequence_;
  ScheduleFlush();
  timing.Line(options_.collection_name, options_.index, sources_.frozen().size(),
              timing.Total());
  return absl::OkStatus();
}

void Shard::PushActiveLocked(uint64_t max_sequence, uint64_t last_wal_number) {
  sources_.AddFrozen({std::shared_ptr<const MemTable>(std::move(active_)), active_min_sequence_,
                      max_sequence, last_wal_number});
  active_ = NewMemTable();
}

}  // namespace shoal
