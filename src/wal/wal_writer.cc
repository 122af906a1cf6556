// Copyright 2026 The shoal Authors.

#include "wal/wal_writer.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <chrono>
#include <cstring>
#include <thread>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "util/coding.h"
#include "version/filename.h"
#include "util/hash.h"
#include "util/status_macros.h"

namespace shoal::wal {
namespace {

// BeginRecordWrite writes a payload this many bytes at a time, hashing each
// run through the view right after its write. Hashing a whole 2.5 MB part
// after one write read it back from memory: 1M x 128-d rows in batches of
// 10,000 on /dev/shm took 0.28-0.30 s (cold rows) and 0.24-0.26 s (rows
// from a 5 MB set) that way, 0.25-0.26 s and 0.21-0.22 s in 128 KiB runs
// (docs/performance-history.md, issue 19).
constexpr size_t kWriteRunBytes = size_t{128} << 10;

// Writes a record header's fields (bytes 8 to 31; not its checksum).
void EncodeHeaderFields(char* h, uint8_t type, size_t payload_length, uint64_t sequence,
                        uint32_t count, uint32_t dim) {
  EncodeFixed32(h + 8, static_cast<uint32_t>(payload_length));
  h[12] = static_cast<char>(type);
  h[13] = 0;
  EncodeFixed16(h + 14, 0);
  EncodeFixed64(h + 16, sequence);
  EncodeFixed32(h + 24, count);
  EncodeFixed32(h + 28, dim);
}

// Writes the header of the record at `h`, whose `payload_length` bytes of
// payload are stored after it, and zeros its padding. Returns the record's
// size, padding included.
size_t SealRecord(char* h, uint8_t type, size_t payload_length, uint64_t sequence,
                  uint32_t count, uint32_t dim) {
  const size_t total = kRecordHeaderSize + payload_length;
  EncodeHeaderFields(h, type, payload_length, sequence, count, dim);
  const size_t padded = AlignRecord(total);
  std::memset(h + total, 0, padded - total);
  // The checksum goes in last: until it matches, a reader sees a torn record.
  EncodeFixed64(h, Checksum64(h + 8, total - 8));
  return padded;
}

}  // namespace

WalWriter::WalWriter(FileSystem* fs, std::string dir, const WalWriterOptions& options)
    : fs_(fs), dir_(std::move(dir)), options_(options), direct_(options.direct_io),
      group_(options.group != nullptr ? options.group : &own_group_) {}

WalWriter::~WalWriter() {
  if (file_ != nullptr) (void)Close(/*sync=*/false);
}

absl::StatusOr<std::unique_ptr<WalWriter>> WalWriter::Open(
    FileSystem* fs, std::string dir, const WalWriterOptions& options,
    uint64_t number, size_t resume_offset) {
  std::unique_ptr<WalWriter> writer(new WalWriter(fs, std::move(dir), options));
  SHOAL_RETURN_IF_ERROR(writer->OpenFile(number, resume_offset, 0));
  return writer;
}

absl::StatusOr<std::unique_ptr<MappedFile>> WalWriter::MapFile(
    uint64_t number, size_t resume_offset, size_t min_capacity) {
  const std::string path = JoinPath(dir_, WalFileName(number));
  size_t capacity = std::max({options_.file_bytes, min_capacity, resume_offset,
                              kFileHeaderSize + kRecordHeaderSize + kMarkBytes});
  capacity = AlignRecord(capacity);
  std::unique_ptr<MappedFile> file;
  if (direct_) {
    absl::StatusOr<std::unique_ptr<MappedFile>> direct =
        fs_->OpenDirect(path, capacity, resume_offset);
    if (absl::IsUnimplemented(direct.status())) {
      direct_ = false;  // not on this file system: mapped from now on
    } else {
      SHOAL_RETURN_IF_ERROR(direct.status());
      file = std::move(direct).value();
    }
  }
  if (file == nullptr) {
    SHOAL_ASSIGN_OR_RETURN(file, fs_->OpenMapped(path, capacity, options_.populate));
  }
  if (resume_offset > 0) {
    // The records kept may be in the page cache only (a process that died
    // under kNever): durable first, so that the sync mark the next record
    // brings tells the truth. (OpenDirect did it already.)
    if (!direct_) SHOAL_RETURN_IF_ERROR(file->Sync());
  } else {
    SHOAL_RETURN_IF_ERROR(file->Reserve(kFileHeaderSize));
    char* h = file->data();
    std::memcpy(h, kFileMagic.data(), kFileMagic.size());
    EncodeFixed32(h + 8, kFormatVersion);
    EncodeFixed32(h + 12, options_.shard);
    EncodeFixed64(h + 16, number);
    EncodeFixed32(h + 24, 0);
    EncodeFixed32(h + 28, static_cast<uint32_t>(Checksum64(h, 28)));
    if (options_.sync_dir_on_create) {
      // The header must be durable before the directory entry that makes the
      // file visible, or a crash could leave a named file with no header.
      SHOAL_RETURN_IF_ERROR(file->SyncPrefix(kFileHeaderSize));
      SHOAL_RETURN_IF_ERROR(fs_->SyncDir(dir_));
    }
  }
  return file;
}

absl::Status WalWriter::OpenFile(uint64_t number, size_t resume_offset,
                                 size_t min_capacity) {
  SHOAL_ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> file,
                         MapFile(number, resume_offset, min_capacity));
  std::shared_ptr<const char> view = options_.keep_view ? file->KeepReadable() : nullptr;
  {
    MutexLock lock(&file_mu_);
    file_ = std::move(file);
    view_ = std::move(view);
    number_ = number;
    offset_ = resume_offset == 0 ? kFileHeaderSize : resume_offset;
    reserved_ = offset_;
    file_end_.store(offset_, std::memory_order_release);
    file_durable_.store(offset_, std::memory_order_release);
  }
  marked_ = kFileHeaderSize;
  prefaulted_ = offset_;
  PrefaultAhead();
  return absl::OkStatus();
}

void WalWriter::PrefaultAhead() {
  // Keep about kAhead bytes ahead of the writer faulted in, asking for
  // kChunk at a time.
  constexpr size_t kChunk = size_t{2} << 20, kAhead = size_t{4} << 20;
  if (options_.prefaulter == nullptr) return;
  while (prefaulted_ < file_->capacity() && prefaulted_ < offset_ + kAhead) {
    const size_t begin = prefaulted_;
    const size_t length = std::min(kChunk, file_->capacity() - begin);
    options_.prefaulter->Schedule([file = file_, begin, length, dirty = options_.dirty_ahead] {
      if (dirty) {
        file->PopulateDirty(begin, length);
      } else {
        file->Populate(begin, length);
      }
    });
    prefaulted_ = begin + length;
  }
}

absl::Status WalWriter::RotateFor(size_t need) {
  SHOAL_RETURN_IF_ERROR(append_status_);
  // The old file is synced before any record goes into the new one, so that
  // after a machine crash a later file never holds records while an earlier
  // one lost some. The new file is ready before the old one goes, so a
  // concurrent SyncTo always finds a file.
  absl::StatusOr<std::unique_ptr<MappedFile>> next =
      MapFile(number_ + 1, 0, kFileHeaderSize + need);
  std::shared_ptr<const char> next_view =
      next.ok() && options_.keep_view ? (*next)->KeepReadable() : nullptr;
  if (!next.ok()) {
    // Nothing changed: the current file stays, and a later record may try
    // again (a full disk may have room by then). The new file holds no
    // record; without it recovery has less to skip.
    (void)fs_->RemoveFile(JoinPath(dir_, WalFileName(number_ + 1)));
    return next.status();
  }
  absl::Status s;
  {
    MutexLock lock(&file_mu_);
    s = file_->SyncPrefix(offset_);
    if (s.ok()) {
      // End the old file with a sync mark, itself synced: damage to its
      // records found later is then DataLossError even when no later file
      // holds records to show the hole.
      file_durable_.store(offset_, std::memory_order_release);
      if (AppendSyncMarkIfDue(0)) s = file_->SyncPrefix(offset_);
    }
    if (s.ok()) {
      s = file_->CloseAndTruncate(offset_);
      // Closed all the same: no sync or close may reach it again.
      if (!s.ok()) file_.reset();
    }
    // A failed sync is sticky for SyncTo too: a retried fdatasync may report
    // success after the kernel dropped the pages that failed to reach the
    // disk, and records of the old file still await their sync.
    if (!s.ok()) file_status_ = s;
    if (s.ok()) {
      file_ = std::move(next).value();
      view_ = std::move(next_view);
      number_ += 1;
      offset_ = kFileHeaderSize;
      reserved_ = offset_;
      file_end_.store(offset_, std::memory_order_release);
      file_durable_.store(offset_, std::memory_order_release);  // the header was synced
    }
  }
  if (!s.ok()) {
    append_status_ = s;  // the log's order can no longer be promised
    return s;
  }
  prefaulted_ = offset_;
  marked_ = kFileHeaderSize;
  PrefaultAhead();
  return absl::OkStatus();
}

bool WalWriter::AppendSyncMarkIfDue(size_t then) {
  const size_t durable = file_durable_.load(std::memory_order_acquire);
  if (durable <= marked_ || offset_ + kMarkBytes + then > file_->capacity()) return false;
  // A mark is not worth failing a write for (a full disk with room for the
  // record alone): then the record goes without it.
  if (!ReserveTo(offset_ + kMarkBytes + then).ok()) return false;
  char* h = file_->data() + offset_;
  EncodeFixed64(h + kRecordHeaderSize, durable);
  static_assert(kRecordHeaderSize + kSyncMarkPayload == kMarkBytes);
  SealRecord(h, kSyncMarkType, kSyncMarkPayload, 0, 1, 0);
  offset_ += kMarkBytes;
  marked_ = durable;
  file_end_.store(offset_, std::memory_order_release);
  end_lsn_.fetch_add(kMarkBytes, std::memory_order_acq_rel);
  return true;
}

absl::StatusOr<uint64_t> WalWriter::Rotate() {
  const uint64_t old = number_;
  SHOAL_RETURN_IF_ERROR(RotateFor(0));
  return old;
}

absl::Status WalWriter::ReserveTo(size_t end) {
  if (end <= reserved_) return absl::OkStatus();
  SHOAL_RETURN_IF_ERROR(file_->Reserve(end));
  reserved_ = end;
  return absl::OkStatus();
}

absl::Status WalWriter::AppendStatus() {
  if (sync_failed_.load(std::memory_order_relaxed)) {
    MutexLock lock(&sync_mu_);
    return sync_status_;
  }
  return append_status_;
}

absl::Status WalWriter::ReserveRoom(size_t record_bytes, size_t records) {
  SHOAL_RETURN_IF_ERROR(AppendStatus());
  // A sync mark may go before each record, and one after the last.
  const size_t need = record_bytes + records * kMarkBytes;
  if (offset_ + need + kMarkBytes > file_->capacity()) {
    SHOAL_RETURN_IF_ERROR(RotateFor(need + kMarkBytes));
  }
  return ReserveTo(offset_ + need + kMarkBytes);
}

absl::StatusOr<char*> WalWriter::BeginRecord(size_t payload_length) {
  staged_ = false;
  SHOAL_RETURN_IF_ERROR(AppendStatus());
  const size_t need = AlignRecord(kRecordHeaderSize + payload_length);
  // Room for a mark before the record when one is due, and after it.
  const size_t due = file_durable_.load(std::memory_order_acquire) > marked_ ? kMarkBytes : 0;
  if (offset_ + due + need + kMarkBytes > file_->capacity()) {
    SHOAL_RETURN_IF_ERROR(RotateFor(need + kMarkBytes));
  }
  // A full file system fails here, before any byte is stored.
  if (!AppendSyncMarkIfDue(need)) {
    SHOAL_RETURN_IF_ERROR(ReserveTo(offset_ + need));  // else reserved with the mark
  }
  pending_payload_ = payload_length;
  return file_->data() + offset_ + kRecordHeaderSize;
}

absl::Status WalWriter::BeginRecordWrite(RecordType type, uint64_t sequence, uint32_t count,
                                         uint32_t dim,
                                         std::span<const std::string_view> payload) {
  size_t length = 0;
  for (std::string_view piece : payload) length += piece.size();
  SHOAL_RETURN_IF_ERROR(BeginRecord(length).status());  // clears staged_
  static constexpr char kZeros[kRecordAlignment] = {};
  const size_t padding = AlignRecord(kRecordHeaderSize + length) - kRecordHeaderSize - length;
  absl::InlinedVector<std::string_view, 8> pieces(payload.begin(), payload.end());
  if (padding > 0) pieces.push_back(std::string_view(kZeros, padding));
  // The header is stored by FinishRecord; its checksum is computed here,
  // over the payload as the file holds it (not the caller's rows, which a
  // careless caller could change meanwhile), read through the view where
  // there is one (the memtable reads it there next). The payload is written
  // kWriteRunBytes at a time and each run hashed right after its write,
  // while the file's pages are still in the cache.
  char* h = staged_header_;
  EncodeHeaderFields(h, static_cast<uint8_t>(type), length, sequence, count, dim);
  Checksum64Builder sum;
  sum.Update(h + 8, kRecordHeaderSize - 8);
  const char* stored =
      (view_ != nullptr ? view_.get() : file_->data()) + offset_ + kRecordHeaderSize;
  absl::InlinedVector<std::string_view, 8> run;
  size_t written = 0, run_bytes = 0;
  auto write_run = [&]() -> absl::Status {
    SHOAL_RETURN_IF_ERROR(file_->Write(offset_ + kRecordHeaderSize + written, run));
    // The padding's zeros are not part of the checksum.
    sum.Update(stored + written, std::min(written + run_bytes, length) - std::min(written, length));
    written += run_bytes;
    run.clear();
    run_bytes = 0;
    return absl::OkStatus();
  };
  for (std::string_view piece : pieces) {
    while (!piece.empty()) {
      const size_t take = std::min(piece.size(), kWriteRunBytes - run_bytes);
      run.push_back(piece.substr(0, take));
      run_bytes += take;
      piece.remove_prefix(take);
      if (run_bytes == kWriteRunBytes) SHOAL_RETURN_IF_ERROR(write_run());
    }
  }
  if (run_bytes > 0) SHOAL_RETURN_IF_ERROR(write_run());
  EncodeFixed64(h, sum.Digest());
  staged_ = true;
  return absl::OkStatus();
}

uint64_t WalWriter::FinishRecord(RecordType type, uint64_t sequence,
                                 uint32_t count, uint32_t dim) {
  char* h = file_->data() + offset_;
  size_t padded;
  const bool staged = staged_;
  if (staged) {
    staged_ = false;
    assert(DecodeFixed64(staged_header_ + 16) == sequence && DecodeFixed32(staged_header_ + 24) ==
           count && DecodeFixed32(staged_header_ + 28) == dim &&
           staged_header_[12] == static_cast<char>(type));
    // The fields, then the checksum: until it is stored the record is torn.
    std::memcpy(h + 8, staged_header_ + 8, kRecordHeaderSize - 8);
    std::memcpy(h, staged_header_, 8);
    padded = AlignRecord(kRecordHeaderSize + pending_payload_);
  } else {
    padded = SealRecord(h, static_cast<uint8_t>(type), pending_payload_, sequence, count, dim);
  }
  last_record_ = std::string_view(h, padded);
  offset_ += padded;
  file_end_.store(offset_, std::memory_order_release);
  if (staged && !direct_) {
    // Written through the file: faulting in ahead of it would only zero
    // pages the next such write fills anyway. (A direct-I/O file's
    // Populate writes its zeros ahead, which its writes still need.)
    prefaulted_ = std::max(prefaulted_, offset_);
  } else if (offset_ + (size_t{2} << 20) > prefaulted_) {
    PrefaultAhead();
  }
  const uint64_t end = end_lsn_.fetch_add(padded, std::memory_order_acq_rel) + padded;
  records_.fetch_add(1, std::memory_order_acq_rel);
  group_->unreleased.fetch_add(1, std::memory_order_acq_rel);
  return end;
}

absl::Status WalWriter::SyncCurrentFile() {
  MutexLock lock(&file_mu_);
  SHOAL_RETURN_IF_ERROR(file_status_);
  if (file_ == nullptr) return absl::FailedPreconditionError("log is closed");
  // Every record finished so far in this file (a rotation replaces file_
  // only under file_mu_, after syncing the old one).
  const size_t end = file_end_.load(std::memory_order_acquire);
  SHOAL_RETURN_IF_ERROR(file_->SyncPrefix(end));
  if (end > file_durable_.load(std::memory_order_relaxed)) {
    file_durable_.store(end, std::memory_order_release);
  }
  return absl::OkStatus();
}

absl::Status WalWriter::SyncTo(uint64_t lsn) {
  for (;;) {
    // Covered by a sync that ended: no lock (woken callers would queue on it).
    if (durable_lsn_.load(std::memory_order_acquire) >= lsn) return absl::OkStatus();
    absl::Status result;
    bool synced = false;  // this caller ran a sync: wake the others once unlocked
    bool spin = false;    // yield until the running sync ends, then look again
    uint64_t running = 0;
    std::chrono::steady_clock::time_point until;
    {
      MutexLock lock(&sync_mu_);
      if (sync_running_ && last_sync_duration_ <= kMaxSpunSync && synced_lsn_ < lsn &&
          sync_status_.ok()) {
        // A short sync runs: yield-spin for about its time instead of
        // sleeping, since a sleeper costs a wake-up (a context switch, tens
        // of microseconds across CPUs on a VM) per waiter per sync. Until
        // that sync ends, whatever it covers: a caller it does not cover
        // runs the next one.
        spin = true;
        running = syncs_ended_.load(std::memory_order_relaxed);
        until = std::chrono::steady_clock::now() + 2 * last_sync_duration_ +
                std::chrono::microseconds(50);
      } else {
        result = SyncToLocked(lsn, &synced);
      }
    }
    if (!spin) {
      // Woken waiters then do not block on sync_mu_ at once.
      if (synced) sync_done_.SignalAll();
      return result;
    }
    while (syncs_ended_.load(std::memory_order_acquire) == running &&
           durable_lsn_.load(std::memory_order_acquire) < lsn &&
           std::chrono::steady_clock::now() < until) {
      std::this_thread::yield();
    }
  }
}

absl::Status WalWriter::SyncToLocked(uint64_t lsn, bool* synced) {
  if (gathering_) arrived_.Signal();  // the syncer may be waiting for this caller
  absl::Status result;
  while (synced_lsn_ < lsn) {
    if (!sync_status_.ok()) {
      // No sync will run again: release the records finished after the
      // failed one started, or the group's gathers would count them forever.
      ReleaseRecords(records_.load(std::memory_order_acquire));
      result = sync_status_;
      break;
    }
    if (sync_running_) {
      sync_done_.Wait(&sync_mu_);
      continue;
    }
    // Become the syncer for everyone waiting. First gather: writers that are
    // on their way (woken by the last sync, or between their append and this
    // call) would otherwise miss this sync and pay for the next one alone.
    // Wait until every writer inside a write call has a record no completed
    // sync covers (here, or in another log of the group: then that log's
    // syncer starts about now too, and the writers of both come back
    // together), or for at most half the last sync's time. (Counting callers
    // inside SyncTo instead ends the gather at once: the callers the last
    // sync covered are still inside, on their way out.)
    sync_running_ = true;
    const auto start = std::chrono::steady_clock::now();
    const auto deadline = start + std::min(last_sync_duration_ / 2, kMaxGather);
    const auto gathered = [&] {
      return group_->unreleased.load(std::memory_order_acquire) >=
             group_->writers.load(std::memory_order_acquire);
    };
    if (last_sync_duration_ <= kMaxSpunSync) {
      // A short wait: yield, since a sleeping syncer costs a wake-up per
      // arriving writer (tens of microseconds across CPUs on a VM).
      sync_mu_.Unlock();
      while (!gathered() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::yield();
      }
      sync_mu_.Lock();
    } else {
      gathering_ = true;
      while (!gathered()) {
        const auto now = std::chrono::steady_clock::now();
        if (now >= deadline) break;
        arrived_.WaitFor(&sync_mu_, deadline - now);
      }
      gathering_ = false;
    }
    // Records counted here are at or before end_lsn() read next.
    const uint64_t records = records_.load(std::memory_order_acquire);
    const uint64_t target = end_lsn();
    sync_mu_.Unlock();
    const auto sync_start = std::chrono::steady_clock::now();
    absl::Status s = SyncCurrentFile();
    const auto sync_end = std::chrono::steady_clock::now();
    sync_mu_.Lock();
    last_sync_duration_ = sync_end - sync_start;
    sync_running_ = false;
    ReleaseRecords(records);  // with their sync's outcome
    if (s.ok()) {
      synced_lsn_ = std::max(synced_lsn_, target);
      durable_lsn_.store(synced_lsn_, std::memory_order_release);
    } else {
      // After a failed fdatasync the page cache may have dropped the dirty
      // pages: nothing later can be promised durable. Stay failed.
      sync_status_ = s;
      sync_failed_.store(true, std::memory_order_relaxed);
    }
    syncs_ended_.fetch_add(1, std::memory_order_release);
    *synced = true;
  }
  return result;
}

void WalWriter::ReleaseRecords(uint64_t records) {
  if (records <= synced_records_) return;
  group_->unreleased.fetch_sub(static_cast<int64_t>(records - synced_records_),
                               std::memory_order_acq_rel);
  synced_records_ = records;
}

absl::Status WalWriter::Close(bool sync) {
  absl::Status s;
  if (sync) s = SyncTo(end_lsn());
  if (sync && s.ok() && file_ != nullptr) {
    // A last sync mark, itself synced: damage to these records found later
    // is then DataLossError, not taken for a sync a crash cut short.
    if (AppendSyncMarkIfDue(0)) s = SyncTo(end_lsn());
  }
  MutexLock lock(&file_mu_);
  if (file_ != nullptr) {
    absl::Status c = file_->CloseAndTruncate(offset_);
    if (s.ok()) s = c;
    file_.reset();
  }
  return s;
}

}  // namespace shoal::wal
