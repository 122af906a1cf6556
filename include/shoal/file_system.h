// Copyright 2026 The shoal Authors.
//
// The file-system seam (as LevelDB's Env): every open, read, write, sync,
// rename, unlink and mmap of a database goes through a FileSystem.
// Options::file_system lets a program substitute its own: one that counts or
// throttles I/O, injects faults, or keeps files somewhere else (shoal's own
// tests use one that fails chosen calls and drops unsynced data, as a power
// loss would). FileSystem::Default() is POSIX.
//
// All calls return absl::Status; an errno becomes the matching status code
// with the path and the failing call in the message. Implementations must be
// thread-safe: a database calls them from many threads at once.

#ifndef SHOAL_INCLUDE_SHOAL_FILE_SYSTEM_H_
#define SHOAL_INCLUDE_SHOAL_FILE_SYSTEM_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace shoal {

// A file mapped into memory for writing, of a fixed capacity. Bytes stored
// through data() are in the OS page cache at once (they survive the process
// being killed); Sync makes them durable. Not thread-safe except Sync and
// SyncPrefix, which may run concurrently with stores to other bytes.
// (FileSystem::OpenDirect returns files that differ: see there.)
class MappedFile {
 public:
  virtual ~MappedFile() = default;
  virtual char* data() = 0;
  virtual size_t capacity() const = 0;
  // Makes every byte stored so far durable (fdatasync).
  virtual absl::Status Sync() = 0;
  // Makes bytes [0, end) durable (end <= capacity); may make more durable.
  // The default syncs everything.
  virtual absl::Status SyncPrefix(size_t end) { return Sync(); }
  // Allocates the file's storage for bytes [0, end) (end <= capacity, else
  // OutOfRangeError), so that stores there cannot fail for lack of room: a
  // store through the mapping into a hole of a full file system (disk or
  // tmpfs) kills the process with SIGBUS. (Where fallocate promises that:
  // ext4, xfs, tmpfs; not copy-on-write file systems such as btrfs or ZFS,
  // and not file systems without fallocate, where this returns OK.) Returns
  // ResourceExhaustedError when the file system is full (then nothing below
  // `end` that was not reserved before may be stored). May reserve more than
  // asked. Cheap once reserved: callers reserve before every store. The
  // default does nothing, for files whose stores cannot fail for lack of
  // room.
  virtual absl::Status Reserve(size_t end) { return absl::OkStatus(); }
  // Faults in [offset, offset + length) for writing, so later stores there
  // take no page fault (and reserves their storage, as Reserve). Best
  // effort; safe to call from another thread, also concurrently with stores,
  // Reserve and CloseAndTruncate (then it does nothing).
  virtual void Populate(size_t offset, size_t length) {}
  // As Populate, but on a file on a disk too, where Populate leaves the
  // pages clean (every fdatasync would write back pages dirtied ahead) and
  // the first store to each page faults. For files synced rarely.
  virtual void PopulateDirty(size_t offset, size_t length) { Populate(offset, length); }
  // Stores `pieces`, one after the other, at `offset`: afterwards the bytes
  // read at data() + offset are theirs, as if stored through data(). Where
  // the file can, they are written through the file instead (pwritev): a
  // write that fills a page whole takes no zero-fill, which the first store
  // through a mapping into a page costs (on tmpfs, and on a disk for a page
  // not yet in the page cache). REQUIRES: [offset, offset + their total)
  // reserved (Reserve) and not stored to concurrently. An error (an I/O
  // error; a write cut short) may leave any part of the range stored. The
  // default copies through data().
  virtual absl::Status Write(size_t offset, std::span<const std::string_view> pieces);
  // A read-only view of the file's first capacity() bytes that stays valid
  // as long as the pointer is held, after CloseAndTruncate and after the
  // file is removed: bytes stored before the close, below its truncation
  // length, can be read there (later stores show too). Null when the file
  // cannot keep one, or when reading it could wait on a device (a file on a
  // disk, whose clean pages the kernel may drop): then callers keep their
  // own copy of what they need. The default: null.
  virtual std::shared_ptr<const char> KeepReadable() { return nullptr; }
  // Unmaps and sets the file's length to `length` (<= capacity), then closes,
  // also when it returns an error. Afterwards Sync, SyncPrefix, Reserve
  // beyond what was reserved and CloseAndTruncate return
  // FailedPreconditionError, Populate does nothing and data() is null.
  virtual absl::Status CloseAndTruncate(size_t length) = 0;
};

// A whole file mapped read-only. Immutable files (segments) are read this
// way. Thread-safe.
class ReadOnlyMappedFile {
 public:
  virtual ~ReadOnlyMappedFile() = default;
  virtual const char* data() const = 0;
  virtual size_t size() const = 0;
};

// Reads of one RandomAccessFile kept in flight together (io_uring), so that
// a search can work on the blocks that have arrived while others are still
// being read. Made by RandomAccessFile::NewReadQueue; used by one thread at
// a time; must be destroyed before its file.
//
// A read's buffer belongs to the queue from Submit until Wait returns the
// read's completion (the kernel may write into it until then). The
// destructor waits for every read still in flight, so that once the queue
// is gone every buffer is free again: a caller that stops early (an error)
// just destroys the queue.
class ReadQueue {
 public:
  struct Completion {
    uint64_t tag;        // as given to Submit
    absl::Status status;  // as RandomAccessFile::Read would return it
  };

  virtual ~ReadQueue() = default;
  // Reads in flight at most (>= 1).
  virtual size_t depth() const = 0;
  // Reads submitted whose completion Wait has not returned yet.
  virtual size_t in_flight() const = 0;
  // Starts reading [offset, offset + n) into `scratch` (n bytes), as
  // RandomAccessFile::Read would (same bytes, same alignment rules, same
  // errors); `tag` names the read in its completion. An error is reported
  // in the completion, never here. REQUIRES: in_flight() < depth().
  virtual void Submit(uint64_t offset, size_t n, char* scratch, uint64_t tag) = 0;
  // Blocks until at least one read in flight has completed, then appends
  // every completed read (at least one) to *out, in no particular order.
  // REQUIRES: in_flight() > 0.
  virtual void Wait(std::vector<Completion>* out) = 0;
};

// An existing file read at chosen offsets (pread). Disk-resident segments
// read their node blocks this way. Thread-safe: any number of threads may
// Read at once.
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  // Reads bytes [offset, offset + n) into `scratch` (n bytes). OK only when
  // all n were read; OutOfRangeError when the file ends before offset + n;
  // an errno status otherwise. With direct(), a read whose offset, n and
  // scratch are all multiples of 4096 bypasses the page cache; any other
  // read goes through it (same bytes either way).
  [[nodiscard]] virtual absl::Status Read(uint64_t offset, size_t n, char* scratch) const = 0;
  // The file's size when it was opened.
  virtual uint64_t size() const = 0;
  // Whether aligned reads use direct I/O (O_DIRECT).
  virtual bool direct() const = 0;
  // A queue of up to `depth` (>= 1) reads of this file in flight at once.
  // The default reads each one synchronously with Read, in Submit (so any
  // file, such as a test's wrapper that injects faults, has one, with the
  // same results); the POSIX file system's uses an io_uring ring of the
  // calling thread where the kernel allows it (else the default, said once
  // on stderr). Its depth() may be smaller than asked. Cheap: rings are
  // kept per thread, not made per queue.
  virtual std::unique_ptr<ReadQueue> NewReadQueue(size_t depth) const;
};

// A file written front to back.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual absl::Status Append(std::string_view data) = 0;
  virtual absl::Status Sync() = 0;
  virtual absl::Status Close() = 0;
};

// Held while a directory is locked; the destructor unlocks.
class FileLock {
 public:
  virtual ~FileLock() = default;
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // The process-wide POSIX file system. Never null; never deleted.
  static FileSystem* Default();

  // Opens (creating when absent) `path` and maps `capacity` bytes of it for
  // writing; a shorter file is extended with zeros. With `populate`, pages
  // are faulted in up front so stores take no page faults.
  virtual absl::StatusOr<std::unique_ptr<MappedFile>> OpenMapped(
      const std::string& path, size_t capacity, bool populate) = 0;
  // Opens (creating when absent) `path` as a log file of `capacity` bytes
  // written with direct I/O, keeping its first `resume_offset` bytes and
  // making them durable before it returns. Unlike OpenMapped's files, bytes
  // stored through data() reach the file only in SyncPrefix (durably) or
  // CloseAndTruncate, and are lost if the process dies first; Sync makes
  // only what SyncPrefix wrote durable. Meant for logs synced after every
  // write (util/direct_log_file.h). UnimplementedError when this file system
  // cannot (callers then use OpenMapped); the default.
  virtual absl::StatusOr<std::unique_ptr<MappedFile>> OpenDirect(const std::string& path,
                                                                 size_t capacity,
                                                                 size_t resume_offset) {
    return absl::UnimplementedError("no direct-I/O log files on this file system");
  }
  // Maps all of an existing file read-only. An empty file maps to size 0.
  virtual absl::StatusOr<std::unique_ptr<ReadOnlyMappedFile>> OpenReadOnlyMapped(
      const std::string& path) = 0;
  // Opens an existing file for reads at chosen offsets. With `direct`,
  // aligned reads bypass the page cache where the file system allows it;
  // where it refuses (O_DIRECT gives EINVAL, e.g. tmpfs before Linux 6.6)
  // the file is read through the page cache instead, with the same bytes,
  // and direct() is false. UnimplementedError when this file system cannot
  // (the default).
  virtual absl::StatusOr<std::unique_ptr<RandomAccessFile>> OpenRandomAccess(
      const std::string& path, bool direct) {
    return absl::UnimplementedError("no random-access files on this file system");
  }
  // Creates (truncating) a file for sequential writing.
  virtual absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& path) = 0;
  // The whole content of a file.
  virtual absl::StatusOr<std::string> ReadFile(const std::string& path) = 0;

  virtual absl::Status Rename(const std::string& from, const std::string& to) = 0;
  // Makes `to` a second name of the existing file `from` (a hard link);
  // `to` must not exist. Checkpoints and ingests link immutable files this
  // way instead of copying them. Either name then reads the same bytes; creating
  // the link is made durable by SyncDir of `to`'s directory, the file's
  // bytes by SyncFile. UnimplementedError when this file system cannot
  // link (the default), and the errno's status when linking fails (e.g.
  // EXDEV: `from` is on another file system): callers then copy.
  virtual absl::Status LinkFile(const std::string& from, const std::string& to) {
    return absl::UnimplementedError("no hard links on this file system");
  }
  // fdatasyncs an existing file's bytes: one another process wrote and may
  // never have synced, such as a segment file linked in by
  // DB::IngestSegments. UnimplementedError when this file system cannot (the
  // default: ingest then copies the file instead of linking it).
  virtual absl::Status SyncFile(const std::string& path) {
    return absl::UnimplementedError("no SyncFile on this file system");
  }
  virtual absl::Status RemoveFile(const std::string& path) = 0;
  // Writes the first `length` bytes of `from` (an existing file at least
  // that long, whose first `length` bytes nobody changes meanwhile: a
  // segment, or a log's records below its end) into a new file `to`, and
  // makes them durable, as a NewWritableFile appended, synced and closed
  // would. Calls `copied` (may be empty) with the bytes of each run as it
  // goes. OutOfRangeError when `from` is shorter. On an error `to` may hold
  // part of the bytes. The default reads runs of 4 MiB with OpenRandomAccess
  // and appends them to a NewWritableFile. The POSIX file system writes with
  // direct I/O from a mapping of `from` where the destination allows it, so
  // that no CPU copies the bytes and the destination's page cache is not
  // filled (checkpoints take little CPU from the writers beside them), else
  // with sendfile.
  virtual absl::Status CopyFile(const std::string& from, const std::string& to,
                                uint64_t length,
                                const std::function<void(uint64_t bytes)>& copied);
  // Removes a directory and everything below it. OK when it does not exist.
  virtual absl::Status RemoveDirRecursive(const std::string& path) = 0;
  // Creates a directory (and missing parents). OK when it exists.
  virtual absl::Status CreateDir(const std::string& path) = 0;
  // fsyncs a directory, making creations, renames and removals in it durable.
  virtual absl::Status SyncDir(const std::string& path) = 0;
  virtual absl::Status Truncate(const std::string& path, uint64_t length) = 0;
  // Names in a directory (no "." or ".."), unsorted. NotFound when absent.
  virtual absl::StatusOr<std::vector<std::string>> ListDir(
      const std::string& path) = 0;
  virtual bool Exists(const std::string& path) = 0;
  virtual absl::StatusOr<uint64_t> FileSize(const std::string& path) = 0;
  // Takes an exclusive advisory lock (flock) on `path`, creating it. Fails
  // with FailedPrecondition when another process or another lock object in
  // this process holds it.
  virtual absl::StatusOr<std::unique_ptr<FileLock>> LockFile(
      const std::string& path) = 0;
};

}  // namespace shoal

#endif  // SHOAL_INCLUDE_SHOAL_FILE_SYSTEM_H_
