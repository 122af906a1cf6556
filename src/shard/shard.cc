// Copyright 2026 The shoal Authors.

#include "shard/shard.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "util/coding.h"
#include "util/status_macros.h"
#include "wal/wal_reader.h"

namespace shoal {
namespace {

// A shard's part of a batch larger than this is split into several records
// (the record length field is 32 bits; smaller records also bound how much a
// torn write can drop).
constexpr size_t kMaxRecordPayload = size_t{256} << 20;

}  // namespace

Shard::Shard(FileSystem* fs, std::string dir, const ShardOptions& options)
    : fs_(fs), dir_(std::move(dir)), options_(options) {
  memtable_ = std::make_unique<MemTable>(options.dim, options.arena_block_bytes,
                                         options.preallocate, options.memtable_bytes,
                                         options.prefaulter);
}

Shard::~Shard() { (void)Close(); }

absl::StatusOr<std::unique_ptr<Shard>> Shard::Open(FileSystem* fs,
                                                   const std::string& dir,
                                                   const ShardOptions& options) {
  SHOAL_RETURN_IF_ERROR(fs->CreateDir(dir));
  std::unique_ptr<Shard> shard(new Shard(fs, dir, options));
  SHOAL_RETURN_IF_ERROR(shard->Recover());
  return shard;
}

absl::Status Shard::ApplyRecord(const wal::RecordView& r) {
  const size_t row_bytes = size_t{options_.dim} * sizeof(float);
  if (r.type == wal::RecordType::kPut) {
    memtable_->Reserve(r.count);
    std::vector<float> row(options_.dim);  // the log's floats may be unaligned
    for (uint32_t i = 0; i < r.count; ++i) {
      std::memcpy(row.data(), r.vectors + i * row_bytes, row_bytes);
      memtable_->Put(DecodeFixed64(r.ids + size_t{i} * 8), row.data());
    }
  } else {
    for (uint32_t i = 0; i < r.count; ++i) {
      memtable_->Delete(DecodeFixed64(r.ids + size_t{i} * 8));
    }
  }
  recovery_.records += 1;
  recovery_.ops += r.count;
  next_sequence_ = r.sequence + r.count;
  return absl::OkStatus();
}

absl::Status Shard::ReplayLog(const std::vector<uint64_t>& numbers, Damage* damage,
                              uint64_t* resume_number, size_t* resume_offset) {
  bool sequence_known = false;
  std::optional<Damage> torn;  // an earlier file whose tail was torn
  for (size_t i = 0; i < numbers.size(); ++i) {
    const std::string path = JoinPath(dir_, wal::WalFileName(numbers[i]));
    SHOAL_ASSIGN_OR_RETURN(std::string contents, fs_->ReadFile(path));
    std::optional<Damage> gap;
    absl::StatusOr<wal::ReadResult> read =
        wal::ReadWalFile(contents, path, options_.index, numbers[i], options_.dim,
                         [&](const wal::RecordView& r) -> absl::Status {
                           if (torn.has_value()) {
                             // An earlier file lost its tail, yet this one
                             // holds records: a hole in the log.
                             *damage = *torn;
                             return absl::CancelledError();
                           }
                           if (sequence_known && r.sequence != next_sequence_) {
                             gap = Damage{i, r.offset,
                                          absl::StrCat("write-ahead log ", path,
                                                       ": record at offset ", r.offset,
                                                       " has sequence ", r.sequence,
                                                       ", expected ", next_sequence_)};
                             return absl::CancelledError();
                           }
                           sequence_known = true;
                           return ApplyRecord(r);
                         });
    if (gap.has_value()) {
      *damage = *gap;
      return absl::OkStatus();
    }
    if (!damage->message.empty()) return absl::OkStatus();
    SHOAL_RETURN_IF_ERROR(read.status());  // damaged file header, unknown version
    const wal::ReadResult& result = *read;
    if (result.corrupted) {
      *damage = Damage{i, result.corrupt_offset,
                       absl::StrCat("write-ahead log ", path, " is damaged at offset ",
                                    result.corrupt_offset,
                                    ": a record there fails its checks, yet valid "
                                    "records follow it")};
      return absl::OkStatus();
    }
    if (result.torn_tail && !torn.has_value()) {
      torn = Damage{i, result.valid_end,
                    absl::StrCat("write-ahead log ", path, " is damaged at offset ",
                                 result.valid_end, ", yet later log files hold records")};
    }
    if (result.valid_end < contents.size()) {
      // Drop the torn tail (or the reserved zeros), so that new records never
      // sit before stale bytes.
      SHOAL_RETURN_IF_ERROR(fs_->Truncate(path, result.valid_end));
      recovery_.torn_tail_dropped |= result.torn_tail;
    }
    *resume_number = numbers[i];
    *resume_offset = result.valid_end;
  }
  return absl::OkStatus();
}

absl::Status Shard::Recover() {
  MutexLock lock(&mu_);
  SHOAL_ASSIGN_OR_RETURN(std::vector<std::string> names, fs_->ListDir(dir_));
  std::vector<uint64_t> numbers;
  for (const std::string& name : names) {
    uint64_t number;
    if (wal::ParseWalFileName(name, &number)) numbers.push_back(number);
  }
  std::sort(numbers.begin(), numbers.end());

  uint64_t resume_number = 1;
  size_t resume_offset = 0;  // 0: create the file
  Damage damage;
  SHOAL_RETURN_IF_ERROR(ReplayLog(numbers, &damage, &resume_number, &resume_offset));
  if (!damage.message.empty()) {
    if (!options_.salvage_corrupt_wal) {
      return absl::DataLossError(absl::StrCat(
          damage.message,
          " (Options::salvage_corrupt_wal keeps the records before the damage)"));
    }
    // Salvage: cut the log at the damage, set later files aside, and replay
    // the clean prefix from scratch.
    const std::string path = JoinPath(dir_, wal::WalFileName(numbers[damage.file]));
    SHOAL_RETURN_IF_ERROR(fs_->Truncate(path, damage.offset));
    for (size_t j = damage.file + 1; j < numbers.size(); ++j) {
      const std::string later = JoinPath(dir_, wal::WalFileName(numbers[j]));
      SHOAL_RETURN_IF_ERROR(fs_->Rename(later, later + ".dropped"));
    }
    SHOAL_RETURN_IF_ERROR(fs_->SyncDir(dir_));
    numbers.resize(damage.file + 1);
    memtable_ = std::make_unique<MemTable>(options_.dim, options_.arena_block_bytes,
                                           options_.preallocate, options_.memtable_bytes,
                                           options_.prefaulter);
    recovery_ = RecoveryStats{};
    recovery_.salvaged = true;
    next_sequence_ = 1;
    Damage again;
    SHOAL_RETURN_IF_ERROR(ReplayLog(numbers, &again, &resume_number, &resume_offset));
    if (!again.message.empty()) return absl::DataLossError(again.message);
  }

  wal::WalWriterOptions wal_options;
  wal_options.shard = options_.index;
  wal_options.file_bytes = options_.wal_file_bytes;
  wal_options.populate = options_.preallocate;
  wal_options.prefaulter = options_.prefaulter;
  SHOAL_ASSIGN_OR_RETURN(wal_, wal::WalWriter::Open(fs_, dir_, wal_options,
                                                    resume_number, resume_offset));
  if (recovery_.torn_tail_dropped || recovery_.salvaged) {
    // Make the truncation durable before new records land past it.
    SHOAL_RETURN_IF_ERROR(wal_->SyncFile());
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> Shard::AppendPut(std::span<const uint64_t> ids,
                                          std::span<const float* const> rows) {
  const size_t dim = options_.dim;
  const size_t row_bytes = dim * sizeof(float);
  const size_t per_record = std::max<size_t>(1, kMaxRecordPayload / (8 + row_bytes));
  uint64_t lsn = 0;
  for (size_t first = 0; first < ids.size(); first += per_record) {
    const size_t n = std::min(per_record, ids.size() - first);
    SHOAL_ASSIGN_OR_RETURN(char* payload, wal_->BeginRecord(wal::PutPayloadSize(n, dim)));
    std::memcpy(payload, ids.data() + first, n * sizeof(uint64_t));
    char* out = payload + n * sizeof(uint64_t);
    for (size_t i = 0; i < n; ++i) std::memcpy(out + i * row_bytes, rows[first + i], row_bytes);
    lsn = wal_->FinishRecord(wal::RecordType::kPut, next_sequence_, static_cast<uint32_t>(n),
                             options_.dim);
    next_sequence_ += n;
    if (n > 1) memtable_->Reserve(n);
    for (size_t i = 0; i < n; ++i) memtable_->Put(ids[first + i], rows[first + i]);
  }
  return lsn;
}

// Counts a kAlways write call for the log's group commit (WalWriter::WriterEnter).
class Shard::SyncingWriter {
 public:
  explicit SyncingWriter(Shard* shard)
      : wal_(shard->options_.fsync == FsyncPolicy::kAlways ? shard->wal_.get() : nullptr) {
    if (wal_ != nullptr) wal_->WriterEnter();
  }
  ~SyncingWriter() {
    if (wal_ != nullptr) wal_->WriterExit();
  }

 private:
  wal::WalWriter* const wal_;
};

absl::Status Shard::AfterAppend(uint64_t lsn) {
  if (options_.fsync == FsyncPolicy::kAlways) return wal_->SyncTo(lsn);
  return absl::OkStatus();
}

absl::Status Shard::Put(std::span<const uint64_t> ids, std::span<const float* const> rows) {
  SyncingWriter syncing(this);
  uint64_t lsn;
  {
    MutexLock lock(&mu_);
    if (closed_) return absl::FailedPreconditionError("database is closed");
    SHOAL_ASSIGN_OR_RETURN(lsn, AppendPut(ids, rows));
  }
  return AfterAppend(lsn);
}

absl::Status Shard::Delete(std::span<const uint64_t> ids) {
  SyncingWriter syncing(this);
  uint64_t lsn;
  {
    MutexLock lock(&mu_);
    if (closed_) return absl::FailedPreconditionError("database is closed");
    SHOAL_ASSIGN_OR_RETURN(char* payload, wal_->BeginRecord(ids.size() * sizeof(uint64_t)));
    std::memcpy(payload, ids.data(), ids.size() * sizeof(uint64_t));
    lsn = wal_->FinishRecord(wal::RecordType::kDelete, next_sequence_,
                             static_cast<uint32_t>(ids.size()), 0);
    next_sequence_ += ids.size();
    for (uint64_t id : ids) memtable_->Delete(id);
  }
  return AfterAppend(lsn);
}

absl::Status Shard::Get(uint64_t id, std::vector<float>* out) const {
  ReaderMutexLock lock(&mu_);
  const float* v = nullptr;
  if (memtable_->Get(id, &v) != MemTable::Lookup::kFound) {
    return absl::NotFoundError(absl::StrCat("id ", id, " not found"));
  }
  out->assign(v, v + options_.dim);
  return absl::OkStatus();
}

void Shard::Search(const float* query, TopK* top) const {
  ReaderMutexLock lock(&mu_);
  memtable_->Search(options_.metric, query, top);
}

size_t Shard::live_count() const {
  ReaderMutexLock lock(&mu_);
  return memtable_->live_count();
}

absl::Status Shard::SyncWal() { return wal_->SyncTo(wal_->end_lsn()); }

absl::Status Shard::Close() {
  MutexLock lock(&mu_);
  if (closed_) return absl::OkStatus();
  closed_ = true;
  if (wal_ == nullptr) return absl::OkStatus();
  return wal_->Close(/*sync=*/true);
}

}  // namespace shoal
