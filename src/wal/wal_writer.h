// Copyright 2026 The shoal Authors.
//
// Appends records to one shard's write-ahead log (wal_format.h). Log files are
// memory-mapped and reserved ahead, so an append is a memcpy into the page
// cache: no system call, and durable against the process being killed the
// moment it is stored. Sync() makes appended records durable against a
// machine crash; concurrent callers share one fdatasync (group commit).
//
// Thread-safety: BeginRecord/FinishRecord/Close need external serialization
// (the shard's mutex). SyncTo/end_lsn may be called from any thread, also
// while another thread appends.

#ifndef SHOAL_SRC_WAL_WAL_WRITER_H_
#define SHOAL_SRC_WAL_WAL_WRITER_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "util/mutex.h"
#include "util/background_worker.h"
#include "util/file_system.h"
#include "wal/wal_format.h"

namespace shoal::wal {

// What the syncers of several logs (the kAlways shards of one collection)
// know of each other's writers, for gathering: a writer's next record may go
// to any shard. Only a heuristic reads it; durability never depends on it.
struct GroupCommitCounters {
  std::atomic<int64_t> writers{0};     // inside a write call that will sync
  std::atomic<int64_t> unreleased{0};  // records finished, no completed sync covering them
};

struct WalWriterOptions {
  uint32_t shard = 0;
  size_t file_bytes = 64 << 20;  // capacity of a new file
  bool populate = false;         // fault the mapping in up front
  bool sync_dir_on_create = true;  // make a new file's directory entry durable
  // Write files with direct I/O (FileSystem::OpenDirect) where the file
  // system can, else mapped. Only for logs synced before each write is
  // acknowledged: appended bytes are in memory until SyncTo.
  bool direct_io = false;
  // When set, log space is faulted in on this thread ahead of the writer.
  BackgroundWorker* prefaulter = nullptr;
  // Fault it in dirty also on a disk (MappedFile::PopulateDirty), for a log
  // synced rarely: a sync then writes back a few MiB of zeros ahead.
  bool dirty_ahead = false;
  // Shared with the other logs whose writers come and go together; must
  // outlive the writer. Null: this log's own.
  GroupCommitCounters* group = nullptr;
  // Keep a read-only view of each file (view()), where the file system
  // offers one, for readers of its records (a shard's memtable).
  bool keep_view = false;
};


class WalWriter {
 public:
  // Continues file `number` in `dir` at byte `resume_offset` (the end of its
  // last valid record), or, when resume_offset == 0, creates it.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<WalWriter>> Open(
      FileSystem* fs, std::string dir, const WalWriterOptions& options,
      uint64_t number, size_t resume_offset);
  ~WalWriter();

  // Reserves room for a record with `payload_length` bytes of payload and
  // returns where the payload goes. A record begun and never finished takes
  // no room: the next one begins at the same offset. Starts a new file when the current one is
  // too small (syncing the old one first, so that files reach disk in order).
  // A full file system is ResourceExhaustedError, and any failure to start
  // the new file leaves the log as it was: a later call may succeed. A
  // failure to sync or close the old file, or a failed SyncTo, is sticky:
  // this and every later call return it.
  [[nodiscard]] absl::StatusOr<char*> BeginRecord(size_t payload_length);
  // As BeginRecord, followed by storing `payload` (its pieces one after the
  // other), but written through the file (MappedFile::Write) rather than
  // stored through the mapping: for large records, whose pages a write fills
  // whole without the zero-fill a first store through a mapping costs. The
  // header's fields are given now, and the checksum is computed over the
  // bytes as the file then holds them (not the caller's, which a careless
  // caller might change meanwhile); FinishRecord must be called with the
  // same fields. On an error (the write's, or BeginRecord's) the log is as
  // it was: the next record starts at the same offset.
  [[nodiscard]] absl::Status BeginRecordWrite(RecordType type, uint64_t sequence, uint32_t count,
                                              uint32_t dim,
                                              std::span<const std::string_view> payload);
  // Makes room for the next `records` records, `record_bytes` in all (each
  // AlignRecord(kRecordHeaderSize + payload)): starts a new file when the
  // current one is too small and reserves their storage, so that their
  // BeginRecord calls cannot fail for room (only for a sticky failure). A
  // full file system is ResourceExhaustedError, and nothing is stored.
  [[nodiscard]] absl::Status ReserveRoom(size_t record_bytes, size_t records);
  // Closes the current file (synced) and continues in the next one. Returns
  // the number of the file closed: every record appended so far is in files
  // up to it.
  [[nodiscard]] absl::StatusOr<uint64_t> Rotate();

  // Writes the header of the record begun last and publishes it (for a
  // record begun with BeginRecordWrite: the header computed then, whose
  // fields must be these). Returns the log position just past it:
  // SyncTo(that) makes it durable.
  uint64_t FinishRecord(RecordType type, uint64_t sequence, uint32_t count,
                        uint32_t dim);

  // The bytes of the record finished last (header, payload and padding), as
  // in the file. Valid until the next BeginRecord, Rotate or Close.
  std::string_view last_record() const { return last_record_; }

  // A read-only view of the current file (MappedFile::KeepReadable), or
  // null when the file keeps none (direct I/O; a file on a disk). Holding
  // it keeps the records finished in this file readable at their offsets,
  // also after the file is closed or removed.
  const std::shared_ptr<const char>& view() const { return view_; }
  // The record finished last, as last_record(), but read through view():
  // valid while view() is held. REQUIRES: view() is not null.
  const char* last_record_in_view() const {
    return view_.get() + (last_record_.data() - file_->data());
  }

  // Position just past the last finished record (bytes ever appended).
  uint64_t end_lsn() const { return end_lsn_.load(std::memory_order_acquire); }
  uint64_t current_file_number() const { return number_; }
  // Where the next record starts in the current file: the end of the last
  // finished one (a record boundary). REQUIRES: the caller's serialization.
  size_t current_offset() const { return offset_; }
  // Whether files are written with direct I/O (FileSystem::OpenDirect):
  // then records are in memory until synced, and BeginRecordWrite copies
  // like BeginRecord.
  bool direct() const { return direct_; }

  // Returns once every record up to `lsn` is on stable storage. Callers that
  // arrive while a sync runs are covered together by the next one. A failed
  // sync is sticky: this and every later append return its error.
  [[nodiscard]] absl::Status SyncTo(uint64_t lsn);

  // fdatasync of the current file now, whatever was synced before (e.g. to
  // make a truncation durable).
  [[nodiscard]] absl::Status SyncFile() { return SyncCurrentFile(); }

  // Brackets a write call that will wait in SyncTo, so that a syncer can wait
  // for writers that appended but have not reached SyncTo yet (group commit).
  void WriterEnter() { group_->writers.fetch_add(1, std::memory_order_acq_rel); }
  void WriterExit() { group_->writers.fetch_sub(1, std::memory_order_acq_rel); }

  // Syncs (when `sync`), trims the current file to its records and closes it.
  [[nodiscard]] absl::Status Close(bool sync);

 private:
  WalWriter(FileSystem* fs, std::string dir, const WalWriterOptions& options);
  // Maps file `number`, writing its header when resume_offset == 0.
  absl::StatusOr<std::unique_ptr<MappedFile>> MapFile(uint64_t number,
                                                      size_t resume_offset,
                                                      size_t min_capacity);
  absl::Status OpenFile(uint64_t number, size_t resume_offset, size_t min_capacity);
  absl::Status SyncCurrentFile();
  // Starts the next file, big enough for a record of `need` bytes.
  absl::Status RotateFor(size_t need);
  // The sticky failure every append returns, or OK.
  absl::Status AppendStatus();
  // file_->Reserve(end), unless this file is reserved that far already.
  absl::Status ReserveTo(size_t end);
  // Appends a sync mark (wal_format.h) when a sync made more of the current
  // file durable than the last mark says and the file has room for the mark
  // and `then` bytes after it (reserved with it). Returns whether it did.
  bool AppendSyncMarkIfDue(size_t then);
  // SyncTo under sync_mu_, for a caller that does not spin: waits on
  // sync_done_ or runs the sync; sets *synced when this caller ran one.
  absl::Status SyncToLocked(uint64_t lsn, bool* synced) ABSL_EXCLUSIVE_LOCKS_REQUIRED(sync_mu_);
  // Counts the records before `records` as no longer awaiting a sync (for
  // the group's gathers).
  void ReleaseRecords(uint64_t records) ABSL_EXCLUSIVE_LOCKS_REQUIRED(sync_mu_);
  // Asks the prefaulter to fault in log space ahead of offset_.
  void PrefaultAhead();

  FileSystem* const fs_;
  const std::string dir_;
  const WalWriterOptions options_;

  // Guarded by the caller's serialization (see class comment).
  uint64_t number_ = 0;
  size_t offset_ = 0;          // next record starts here, in the current file
  size_t reserved_ = 0;        // the current file's storage is reserved up to here
  size_t pending_payload_ = 0; // payload length of the record being built
  bool staged_ = false;        // the record being built came from BeginRecordWrite
  char staged_header_[kRecordHeaderSize];  // its header, checksum included
  bool direct_ = false;        // files are opened with OpenDirect (after the first try)
  size_t prefaulted_ = 0;      // faulting-in requested up to here (current file)
  size_t marked_ = 0;          // the last sync mark's offset claim (current file)
  std::string_view last_record_;  // see last_record()
  std::shared_ptr<const char> view_;  // see view()
  // A sync mark's bytes. Every record leaves room for one after it, so that
  // a rotation and a clean close can end the file with a mark.
  static constexpr size_t kMarkBytes = AlignRecord(kRecordHeaderSize + kSyncMarkPayload);
  absl::Status append_status_;

  std::atomic<uint64_t> end_lsn_{0};
  std::atomic<bool> sync_failed_{false};  // set once a sync failed

  // Held while syncing or replacing the current file.
  Mutex file_mu_;
  // Written under file_mu_ + caller's lock. Shared with prefault tasks.
  std::shared_ptr<MappedFile> file_;
  // End of the last finished record in file_ (offset_, for syncers).
  std::atomic<size_t> file_end_{0};
  // How much of file_ a completed sync made durable (set under file_mu_).
  std::atomic<size_t> file_durable_{0};
  // Set when a rotation failed to sync or close the old file; every later
  // sync returns it.
  absl::Status file_status_ ABSL_GUARDED_BY(file_mu_);

  // Group commit.
  Mutex sync_mu_;
  uint64_t synced_lsn_ ABSL_GUARDED_BY(sync_mu_) = 0;
  bool sync_running_ ABSL_GUARDED_BY(sync_mu_) = false;
  absl::Status sync_status_ ABSL_GUARDED_BY(sync_mu_);
  // Records finished so far, and how many of them the last sync covered.
  // The syncer gathers until every writer (of the group: the collection's
  // kAlways shards) has a record no completed sync covers.
  GroupCommitCounters own_group_;
  GroupCommitCounters* const group_;
  std::atomic<uint64_t> records_{0};
  uint64_t synced_records_ ABSL_GUARDED_BY(sync_mu_) = 0;
  // synced_lsn_, readable without the lock.
  std::atomic<uint64_t> durable_lsn_{0};
  std::chrono::steady_clock::duration last_sync_duration_ ABSL_GUARDED_BY(sync_mu_){};
  static constexpr std::chrono::steady_clock::duration kMaxGather = std::chrono::milliseconds(2);
  // After a long sync (> kMaxSpunSync) the syncer sleeps on arrived_ while it
  // gathers and callers waiting for a sync sleep on sync_done_. Two
  // variables, so that an arriving caller wakes the syncer alone, not every
  // waiter.
  bool gathering_ ABSL_GUARDED_BY(sync_mu_) = false;
  // Syncs ended so far (ok or not): callers spin on it without the lock.
  std::atomic<uint64_t> syncs_ended_{0};
  // When the last sync took at most this long, the syncer gathers and the
  // callers wait for a running sync by yielding, not sleeping: a wake-up
  // costs tens of microseconds when it crosses CPUs on a VM. (2 shards, 8
  // kAlways writers, fdatasync ~0.11 ms, five alternating runs: 20.0-24.0K
  // puts/s sleeping, 22.5-26.2K yielding.)
  static constexpr std::chrono::steady_clock::duration kMaxSpunSync =
      std::chrono::milliseconds(1);
  CondVar arrived_;
  CondVar sync_done_;
};

}  // namespace shoal::wal

#endif  // SHOAL_SRC_WAL_WAL_WRITER_H_
