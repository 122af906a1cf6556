// Copyright 2026 The shoal Authors.
//
// Reads one write-ahead log file (wal_format.h) and hands every valid record
// to a callback, in order. Decides where the log ends:
//  - zeros, or a record that fails its checks with no valid record after it:
//    the end (a torn tail when any byte past it is non-zero);
//  - a record that fails its checks with a valid record after it: corruption
//    in the middle, reported with the file's path and the offset.

#ifndef SHOAL_SRC_WAL_WAL_READER_H_
#define SHOAL_SRC_WAL_WAL_READER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "wal/wal_format.h"

namespace shoal::wal {

// One record, pointing into the file's bytes (valid during the callback).
struct RecordView {
  size_t offset;  // of the record's header in the file
  RecordType type;
  uint64_t sequence;
  uint32_t count;
  uint32_t dim;
  uint32_t payload_length;
  const char* ids;      // count little-endian u64 (may be unaligned)
  const char* vectors;  // kPut, kPutRecords: count * dim little-endian f32; else null
  // kPutRecords: the count extras (record/record_format.h), back to back,
  // each checked by the reader (record::Parse); else empty.
  std::string_view extras;
  uint32_t version;  // of the file the record is in
};

struct ReadResult {
  size_t valid_end = 0;       // offset just past the last valid record
  uint64_t records = 0;       // valid records read
  bool torn_tail = false;     // non-zero bytes past valid_end (dropped)
  // Corruption before the tail: a damaged record with valid records after
  // it. valid_end == corrupt_offset; nothing from there on was handed out.
  bool corrupted = false;
  size_t corrupt_offset = 0;
  uint32_t version = 0;       // the file header's (0: no header)
};

// Reads `contents`, the bytes of the file at `path` (used in messages).
// `shard` and `number` must match the file header, `dim` every kPut record.
// With shard == kCommitLogShard the file is a commit log: its records are
// kShardRecord (decode them with DecodeShardRecord).
// Returns DataLossError for a damaged file header, and for a kPutRecords
// record whose checksum matches but whose extras do not parse (a writer's
// bug or bytes changed with their checksum: no crash tears a record so),
// naming the file and the record's offset; a file shorter than a header,
// or whose header is all zeros, holds no records (torn at creation).
// FailedPreconditionError for a version outside
// kMinFormatVersion..kFormatVersion.
// An error returned by `on_record` stops the read and is returned.
[[nodiscard]] absl::StatusOr<ReadResult> ReadWalFile(
    std::string_view contents, const std::string& path, uint32_t shard,
    uint64_t number, uint32_t dim,
    const std::function<absl::Status(const RecordView&)>& on_record);

// Checks the file header at the start of `data` (at least kFileHeaderSize
// bytes) of the file at `path`: returns its version, or 0 when the header
// is all zeros (created, not yet written). DataLossError for a damaged
// header or one naming another shard or file number; FailedPreconditionError
// for an unsupported version.
[[nodiscard]] absl::StatusOr<uint32_t> CheckFileHeader(std::string_view data,
                                                       const std::string& path, uint32_t shard,
                                                       uint64_t number);

// Whether a shard log record starts at `off` of `data` (bytes of a file of
// format `version`) and is whole and valid there: its header consistent
// with `dim`, its payload inside `data`, its checksum matching, and (for
// kPutRecords) its extras parsing. Sets *out (offset relative to `data`)
// when it is. Sync marks and other safe-to-ignore records are valid too
// (the caller skips them). DataLossError when the checksum matches but the
// extras do not parse (as ReadWalFile).
[[nodiscard]] absl::StatusOr<bool> ParseShardRecord(std::string_view data, size_t off,
                                                    uint32_t dim, uint32_t version,
                                                    RecordView* out);

// The shard record a commit log's kShardRecord `r` holds, checked against the
// collection's `dim`: its shard in *shard, the record in *inner (pointing
// into r's bytes; offset = r's, version = r's). DataLossError when it is not
// a valid put (kPutRecords: with valid extras, in a version-2 commit log),
// delete or barrier record (the commit log's checksum matched: damage or a
// bug).
[[nodiscard]] absl::Status DecodeShardRecord(const RecordView& r, uint32_t dim,
                                             uint32_t* shard, RecordView* inner);

}  // namespace shoal::wal

#endif  // SHOAL_SRC_WAL_WAL_READER_H_
