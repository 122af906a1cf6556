// Copyright 2026 The shoal Authors.
//
// Follows one shard's log files while another process appends to them (a
// reader process, DB::CatchUp): hands every record that is whole and valid
// to a callback, in order, and remembers where it stopped, so that the next
// Poll goes on from there. It never writes.
//
// Where it stops: at the first bytes of the newest file that are not a
// whole, valid record (zeros, or a record the writer is still storing:
// its checksum is stored last). That is "not written yet", not damage; the
// next Poll reads from the same offset again. In a file that is no longer
// the newest the writer has finished (a log moves to its next file under
// the shard's lock, after its last record), so once a later file exists the
// rest of the earlier one is read once more and then left for the next.
//
// Files the writer removes (a flush deletes the log files it replaced):
// the open descriptor of the current file keeps reading it; a later file
// that is gone before it is opened is NotFoundError, and the caller starts
// again from the manifest.
//
// Not thread-safe: one caller at a time.

#ifndef SHOAL_SRC_WAL_LOG_TAIL_H_
#define SHOAL_SRC_WAL_LOG_TAIL_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "shoal/file_system.h"
#include "wal/wal_reader.h"

namespace shoal::wal {

class LogTail {
 public:
  // The log files of shard `shard` in `dir`, whose puts have `dim` floats.
  LogTail(FileSystem* fs, std::string dir, uint32_t shard, uint32_t dim);

  // Reads the records written since the last Poll (from the oldest file on
  // the first), calling `on_record(record, file_number)` for each put,
  // delete and barrier, in log order. Returns once the newest file has no
  // whole record left. An error from on_record stops the poll and is
  // returned (the record is read again by the next Poll). NotFoundError when
  // a file listed is gone before it is opened; DataLossError for a damaged
  // file header; errors of the file system.
  [[nodiscard]] absl::Status Poll(
      const std::function<absl::Status(const RecordView&, uint64_t file_number)>& on_record);

  uint64_t file_number() const { return number_; }  // 0: no file opened yet
  size_t offset() const { return offset_; }

 private:
  // Reads whole records of the current file from offset_ on; stops at the
  // first bytes that are not one.
  absl::Status ReadCurrent(
      const std::function<absl::Status(const RecordView&, uint64_t)>& on_record);
  // The smallest log file number above `after` in dir_, or 0.
  absl::StatusOr<uint64_t> NextFile(uint64_t after) const;
  // Opens file `number` and checks its header. *ready is false when the
  // header is not written yet (then nothing changes).
  absl::Status OpenFile(uint64_t number, bool* ready);

  FileSystem* const fs_;
  const std::string dir_;
  const uint32_t shard_;
  const uint32_t dim_;
  std::unique_ptr<RandomAccessFile> file_;  // the current file (kept open: it may be removed)
  uint64_t number_ = 0;
  size_t offset_ = 0;      // where the next record of the current file starts
  uint32_t version_ = 0;   // of the current file
};

}  // namespace shoal::wal

#endif  // SHOAL_SRC_WAL_LOG_TAIL_H_
