// Copyright 2026 The shoal Authors.
//
// A FileSystem for tests that sits on top of a real one (POSIX by default)
// and can
//   - fail the Nth operation of a kind (or every one from the Nth on) with an
//     I/O error, and tear a write (an Append that stores only a prefix of its
//     bytes, then fails);
//   - simulate a machine crash: PowerOff() freezes what is durable (every later
//     operation fails, nothing more becomes durable), DropUnsyncedData() then
//     rewrites every file to its last synced state and undoes every directory
//     operation (creation, rename, removal) that no SyncDir of its directory
//     followed. After that the file system works normally again and a test
//     reopens the database on it.
//
// How durability is tracked. A file the engine opens for writing, maps, or
// truncates is "tracked" from that moment: its durable image is its content
// at that moment (or empty, for a file this call creates). Every Sync of a
// handle of the file (WritableFile::Sync, MappedFile::Sync) copies the file's
// whole current content to the durable image, as fdatasync would; stores
// through a mapping are plain memory writes this class never sees, which is
// why Sync reads the file back (read(2) sees the shared mapping's page cache).
// Files never opened for writing since the last power loss are durable as
// they are. Directory operations are logged per directory; SyncDir(d) makes
// the entries of d durable.
//
// Simplifications (documented, on purpose):
//   - Unsynced bytes are dropped whole by default. With
//     DropOptions::keep_random_prefix, a random prefix of each file's unsynced
//     change is kept instead (the kernel may have written some pages back);
//     with DropOptions::keep_random_blocks, a random subset of its 4 KiB
//     blocks, in no order (a kernel writes dirty pages back in any order, and
//     a disk may persist the blocks of one write in any order).
//   - Directory operations are all-or-nothing per directory fsync: every
//     unsynced one is undone (real file systems may persist some).
//   - A failed Sync leaves the durable image as it was (the data may still be
//     lost, which is the pessimistic reading of a failed fsync).
//   - Sync copies whole files: keep the files of tests small (e.g. small
//     Options::wal_file_bytes).
//
// Thread-safe. Operations keep their real effect on the base file system, so
// readers (and a reopened database) see what a process would see before a
// crash.

#ifndef SHOAL_TESTS_TESTUTIL_FAULT_INJECTION_FS_H_
#define SHOAL_TESTS_TESTUTIL_FAULT_INJECTION_FS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "shoal/db.h"
#include "util/file_system.h"
#include "util/mutex.h"

namespace shoal::test {

// The kinds of operation faults can target. Every FileSystem call and every
// handle call is exactly one operation of one kind (Exists is none).
enum class FsOp : uint8_t {
  kOpen = 0,   // NewWritableFile
  kWrite,      // WritableFile::Append
  kClose,      // WritableFile::Close
  kSync,       // WritableFile::Sync, MappedFile::Sync and SyncPrefix, SyncDir, SyncFile
  kRename,     // Rename, LinkFile (both add a directory entry)
  kRead,       // ReadFile, FileSize, ListDir
  kMmap,       // OpenMapped, OpenDirect, OpenReadOnlyMapped, OpenRandomAccess
  kRemove,     // RemoveFile, RemoveDirRecursive
  kTruncate,   // Truncate, MappedFile::CloseAndTruncate
  kLock,       // LockFile
  kMkdir,      // CreateDir
  kReserve,    // MappedFile::Reserve (fail it with kResourceExhausted: a full disk)
  kPread,      // RandomAccessFile::Read (disk-resident segments' node blocks)
  kAny,        // only in fault specs: every operation counts
};
inline constexpr size_t kFsOpKinds = static_cast<size_t>(FsOp::kAny);
const char* FsOpName(FsOp op);

class FaultInjectionFileSystem final : public FileSystem {
 public:
  // `base` is not owned and must outlive this object.
  explicit FaultInjectionFileSystem(FileSystem* base = FileSystem::Default());
  ~FaultInjectionFileSystem() override;

  // ---- Injected errors ----

  // The `n`th (1-based) operation of kind `op` from now on fails with `code`
  // and has no effect; with `persistent`, so does every one after it (a disk
  // that stays broken). Several specs may be active at once.
  void FailNth(FsOp op, uint64_t n, bool persistent = false,
               absl::StatusCode code = absl::StatusCode::kInternal);
  // The `n`th Append from now on stores only its first `keep_bytes` bytes
  // (all of them when it is shorter), then fails with InternalError.
  void TearNthWrite(uint64_t n, size_t keep_bytes);
  // The power goes off just before the `n`th operation of kind `op` from
  // now on (PowerOff): it fails, as does every later one, and nothing more
  // becomes durable. Then DropUnsyncedData gives the state after the crash.
  void PowerOffAtNth(FsOp op, uint64_t n);
  // Every random-access read (kPread, RandomAccessFile::Read or a queued
  // read) for which `fail(path, offset, n)` returns true fails with
  // InternalError and reads nothing: e.g. a random 2% of the node-block
  // reads. Called on the reading threads, outside this object's lock: it
  // must be thread-safe. Replaces an earlier one; null: none.
  using ReadFaultFn = std::function<bool(const std::string& path, uint64_t offset, size_t n)>;
  void FailReadsWhere(ReadFaultFn fail);
  // Removes every FailNth / TearNthWrite / PowerOffAtNth spec and the
  // FailReadsWhere predicate (counters keep counting; the power stays as it
  // is).
  void ClearFaults();

  // Errors returned because of FailNth / TearNthWrite / power being off.
  uint64_t faults_injected() const { return faults_injected_.load(); }
  // Files OpenDirect opened with direct I/O (not refused as Unimplemented).
  uint64_t direct_files_opened() const { return direct_files_opened_.load(); }
  // Operations of `op` attempted so far (kAny: all kinds), failed or not.
  uint64_t op_count(FsOp op) const;

  // ---- Power loss ----

  // The machine stops: nothing is durable beyond this point. Every later
  // operation fails with UnavailableError and changes nothing on disk, except
  // that handles can still be destroyed (CloseAndTruncate unmaps without
  // truncating). Stores through mappings still land in the real files; that
  // does not matter, DropUnsyncedData overwrites every tracked file.
  void PowerOff();
  bool powered_off() const { return powered_off_.load(); }

  struct DropOptions {
    // Keep a random prefix (in file-offset order) of each file's unsynced
    // change instead of dropping all of it.
    bool keep_random_prefix = false;
    // Keep each 4 KiB block of each file's unsynced change, or not, at
    // random (and the file's new length or its durable one). Overrides
    // keep_random_prefix.
    bool keep_random_blocks = false;
    uint64_t seed = 0;
  };
  // Makes the real files look like what survives a power cut now (or at the
  // last PowerOff): tracked files get their durable images back, unsynced
  // directory operations are undone newest first. Then powers on, and every
  // file on disk counts as durable. REQUIRES: no handle open for writing from
  // this object (destroy the DB first); FailedPrecondition otherwise.
  absl::Status DropUnsyncedData(const DropOptions& options);
  absl::Status DropUnsyncedData() { return DropUnsyncedData(DropOptions{}); }

  // Files whose content differs from their durable image, and directory
  // operations not yet made durable (for tests of this class; the file
  // count reads every tracked file).
  size_t UnsyncedFileCount();
  size_t UnsyncedDirOpCount() const;
  // Handles open for writing (mapped, writable, locks).
  int open_handles() const { return open_handles_.load(); }

  // ---- FileSystem ----
  absl::StatusOr<std::unique_ptr<MappedFile>> OpenMapped(
      const std::string& path, size_t capacity, bool populate) override;
  absl::StatusOr<std::unique_ptr<MappedFile>> OpenDirect(const std::string& path,
                                                         size_t capacity,
                                                         size_t resume_offset) override;
  absl::StatusOr<std::unique_ptr<ReadOnlyMappedFile>> OpenReadOnlyMapped(
      const std::string& path) override;
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> OpenRandomAccess(const std::string& path,
                                                                     bool direct) override;
  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& path) override;
  absl::StatusOr<std::string> ReadFile(const std::string& path) override;
  absl::Status Rename(const std::string& from, const std::string& to) override;
  absl::Status RemoveFile(const std::string& path) override;
  // A link is a directory entry: until its directory is synced, a power cut
  // takes it away (DropUnsyncedData removes it); the file it names keeps
  // its content, which must be durable already (links are made of
  // immutable, synced files).
  absl::Status LinkFile(const std::string& from, const std::string& to) override;
  // A kSync: a tracked file's current content becomes durable (an untracked
  // one, written outside this file system, counts as durable already).
  absl::Status SyncFile(const std::string& path) override;
  absl::Status RemoveDirRecursive(const std::string& path) override;
  absl::Status CreateDir(const std::string& path) override;
  absl::Status SyncDir(const std::string& path) override;
  absl::Status Truncate(const std::string& path, uint64_t length) override;
  absl::StatusOr<std::vector<std::string>> ListDir(const std::string& path) override;
  bool Exists(const std::string& path) override;
  absl::StatusOr<uint64_t> FileSize(const std::string& path) override;
  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(const std::string& path) override;

 private:
  class FaultMappedFile;
  class FaultWritableFile;
  class FaultRandomAccessFile;
  class FaultFileLock;

  // A tracked file. Handles share it, so a rename moves it with them.
  struct Node {
    std::string path;          // empty once removed
    std::string durable;       // content after a power cut
    uint64_t sync_tickets = 0; // orders concurrent syncs of this file
    uint64_t committed_ticket = 0;
  };
  // What a removed or overwritten path held (its durable content), to put
  // back when the removal is undone.
  struct Saved {
    std::vector<std::string> dirs;                 // relative, parents first
    std::map<std::string, std::string> files;      // relative path -> content
  };
  struct DirOp {
    enum Kind { kCreateFile, kCreateDir, kRename, kRemove } kind;
    std::vector<std::string> dirs;  // directories whose SyncDir it waits for
    std::string path;               // created / removed / renamed-to path
    std::string from;               // kRename: the old path
    bool had_saved = false;         // kRename over an existing file, kRemove
    Saved saved;
  };

  // Counts one operation of `op` and decides whether it fails. OK to go on.
  absl::Status Check(FsOp op, const std::string& path, size_t* tear_keep = nullptr);
  // Check for a kPread of [offset, offset + n), then FailReadsWhere.
  absl::Status CheckRead(const std::string& path, uint64_t offset, size_t n);
  // The node of `path`, starting to track it (durable = current content, or
  // empty when the file does not exist). REQUIRES: mu_ held.
  std::shared_ptr<Node> TrackLocked(const std::string& path, bool* created)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // OpenMapped and OpenDirect: `open` opens the normalized path on base_;
  // the file is tracked and its handle wrapped (`direct`: a FileSystem::
  // OpenDirect file, whose bytes reach the file only when synced).
  absl::StatusOr<std::unique_ptr<MappedFile>> OpenTracked(
      const std::string& path, bool direct,
      const std::function<absl::StatusOr<std::unique_ptr<MappedFile>>(const std::string&)>&
          open);
  // Durable content of what is at `path` now (file or tree). REQUIRES: mu_.
  Saved SaveLocked(const std::string& path) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ForgetUnderLocked(const std::string& path) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MoveUnderLocked(const std::string& from, const std::string& to)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Restore(const std::string& path, const Saved& saved);
  absl::Status WriteWhole(const std::string& path, const std::string& content);
  // Sync of a tracked file: its current content becomes durable.
  absl::Status SyncNode(const std::shared_ptr<Node>& node);

  FileSystem* const base_;
  std::atomic<bool> powered_off_{false};
  std::atomic<uint64_t> faults_injected_{0};
  std::atomic<uint64_t> direct_files_opened_{0};
  std::atomic<int> open_handles_{0};

  struct Spec {
    FsOp op;
    uint64_t n;
    uint64_t seen = 0;
    bool persistent;
    absl::StatusCode code;
    bool tear = false;
    size_t keep = 0;
    bool power_off = false;
  };
  mutable Mutex mu_;
  std::vector<Spec> specs_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const ReadFaultFn> read_fault_ ABSL_GUARDED_BY(mu_);
  std::array<uint64_t, kFsOpKinds> counts_ ABSL_GUARDED_BY(mu_){};
  std::map<std::string, std::shared_ptr<Node>> nodes_ ABSL_GUARDED_BY(mu_);
  std::vector<DirOp> dir_ops_ ABSL_GUARDED_BY(mu_);  // oldest first
};

// DB::Open with every file operation going through `fs` (Options::file_system).
inline absl::StatusOr<std::unique_ptr<DB>> OpenOnFileSystem(Options options,
                                                           const std::string& path,
                                                           FileSystem* fs) {
  options.file_system = fs;
  return DB::Open(options, path);
}

}  // namespace shoal::test

#endif  // SHOAL_TESTS_TESTUTIL_FAULT_INJECTION_FS_H_
