// Copyright 2026 The shoal Authors.

#include "wal/wal_reader.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "record/record_format.h"
#include "util/coding.h"
#include "util/hash.h"
#include "util/status_macros.h"

namespace shoal::wal {
namespace {

enum class Parse { kValid, kBad };

// Checks the record at `off`: header fields consistent with the collection,
// inside the file, checksum matching. A commit log holds shard records (and
// marks) only, a shard's log never holds one. kPutRecords exists from
// `version` 2 on; its extras are checked by CheckExtras, after this.
Parse ParseRecordAt(std::string_view data, size_t off, uint32_t dim, bool commit_log,
                    uint32_t version, RecordView* out) {
  if (off + kRecordHeaderSize > data.size()) return Parse::kBad;
  const char* h = data.data() + off;
  const uint64_t checksum = DecodeFixed64(h);
  if (checksum == 0) return Parse::kBad;  // zeros: never written
  const uint32_t length = DecodeFixed32(h + 8);
  const uint8_t type = static_cast<uint8_t>(h[12]);
  const uint32_t count = DecodeFixed32(h + 24);
  const uint32_t rec_dim = DecodeFixed32(h + 28);
  if (h[13] != 0 || DecodeFixed16(h + 14) != 0) return Parse::kBad;
  if (length > data.size() - off - kRecordHeaderSize) return Parse::kBad;
  if (commit_log != (type == static_cast<uint8_t>(RecordType::kShardRecord)) &&
      type != kSyncMarkType) {
    return Parse::kBad;
  }
  switch (type) {
    case static_cast<uint8_t>(RecordType::kShardRecord):
      if (count != 1 || rec_dim != 0 || length < kShardRecordPrefix + kRecordHeaderSize) {
        return Parse::kBad;
      }
      break;
    case static_cast<uint8_t>(RecordType::kPut):
      if (count == 0 || rec_dim != dim || length != PutPayloadSize(count, dim)) {
        return Parse::kBad;
      }
      break;
    case static_cast<uint8_t>(RecordType::kPutRecords):
      // Each op's extras take at least their header.
      if (version < 2 || count == 0 || rec_dim != dim ||
          length < PutRecordsPayloadSize(count, dim, uint64_t{count} * record::kHeaderSize)) {
        return Parse::kBad;
      }
      break;
    case static_cast<uint8_t>(RecordType::kDelete):
      if (count == 0 || rec_dim != 0 || length != uint64_t{count} * 8) return Parse::kBad;
      break;
    case static_cast<uint8_t>(RecordType::kBarrier):
      if (count != 1 || rec_dim != 0 || length != 0) return Parse::kBad;
      break;
    case kSyncMarkType:
      if (count != 1 || rec_dim != 0 || length != kSyncMarkPayload) return Parse::kBad;
      break;
    default:
      if ((type & kSafeToIgnoreBit) == 0) return Parse::kBad;
  }
  if (Checksum64(h + 8, kRecordHeaderSize - 8 + length) != checksum) return Parse::kBad;
  out->offset = off;
  out->type = static_cast<RecordType>(type);
  out->sequence = DecodeFixed64(h + 16);
  out->count = count;
  out->payload_length = length;
  out->dim = rec_dim;
  out->ids = h + kRecordHeaderSize;
  const bool put = out->type == RecordType::kPut || out->type == RecordType::kPutRecords;
  out->vectors = put ? out->ids + uint64_t{count} * 8 : nullptr;
  out->extras = {};
  if (out->type == RecordType::kPutRecords) {
    const size_t vectors = PutPayloadSize(count, rec_dim);
    out->extras = std::string_view(out->ids + vectors, length - vectors);
  }
  out->version = version;
  return Parse::kValid;
}

// A kPutRecords record's extras: r.count of them, each valid, ending
// exactly at the payload's end. InvalidArgumentError saying what is wrong.
absl::Status CheckExtras(const RecordView& r) {
  std::string_view rest = r.extras;
  for (uint32_t i = 0; i < r.count; ++i) {
    record::ExtrasView view;
    size_t consumed = 0;
    // An empty rest would parse as "no parts": each op has its header.
    if (rest.size() < record::kHeaderSize) {
      return absl::InvalidArgumentError(absl::StrCat("the extras of op ", i, " are cut short"));
    }
    absl::Status s = record::Parse(rest, &view, &consumed);
    if (!s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("the extras of op ", i, ": ", s.message()));
    }
    rest.remove_prefix(consumed);
  }
  if (!rest.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(rest.size(), " bytes follow the extras of the last op"));
  }
  return absl::OkStatus();
}

// What lies after offset `from`: whether a valid record starts anywhere in
// (from, end), and the largest offset the sync marks among them prove durable
// (0 when none).
struct After {
  bool valid_record = false;
  uint64_t proven_durable = 0;
};
After ScanAfter(std::string_view data, size_t from, uint32_t dim, bool commit_log,
                uint32_t version) {
  After after;
  RecordView r;
  size_t off = from + kRecordAlignment;
  while (off + kRecordHeaderSize <= data.size()) {
    // Zeros are skipped fast; a valid record whole (its payload holds no
    // record of its own).
    if (DecodeFixed64(data.data() + off) != 0 &&
        ParseRecordAt(data, off, dim, commit_log, version, &r) == Parse::kValid) {
      after.valid_record = true;
      // A mark claims only bytes before itself (the writer's invariant), so
      // an image of one in a torn record's payload proves no more than a
      // real mark in its place would.
      if (static_cast<uint8_t>(r.type) == kSyncMarkType && DecodeFixed64(r.ids) <= off) {
        after.proven_durable = std::max(after.proven_durable, DecodeFixed64(r.ids));
      }
      off += AlignRecord(kRecordHeaderSize + r.payload_length);
    } else {
      off += kRecordAlignment;
    }
  }
  return after;
}

bool AllZero(std::string_view bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == 0; });
}

}  // namespace

absl::StatusOr<ReadResult> ReadWalFile(
    std::string_view data, const std::string& path, uint32_t shard,
    uint64_t number, uint32_t dim,
    const std::function<absl::Status(const RecordView&)>& on_record) {
  ReadResult result;
  const bool commit_log = shard == kCommitLogShard;
  if (data.size() < kFileHeaderSize || AllZero(data.substr(0, kFileHeaderSize))) {
    // Created, but the header never reached the disk: no records can follow
    // (the writer syncs a new file's header before its first record). Valid
    // records after a zeroed header are damage, not a crash.
    if (data.size() >= kFileHeaderSize &&
        ScanAfter(data, kFileHeaderSize - kRecordAlignment, dim, commit_log, kFormatVersion)
            .valid_record) {
      return absl::DataLossError(absl::StrCat(
          "write-ahead log ", path, ": file header zeroed at offset 0, yet records follow"));
    }
    result.torn_tail = !AllZero(data);
    return result;
  }
  const char* h = data.data();
  if (std::memcmp(h, kFileMagic.data(), kFileMagic.size()) != 0 ||
      DecodeFixed32(h + 28) != static_cast<uint32_t>(Checksum64(h, 28))) {
    // A process killed while it stored a new file's header leaves part of
    // it in a file of zeros (the writer stores the header before anything
    // else goes into the file): as a header that never reached the disk.
    // Anything else after a damaged header is damage.
    if (AllZero(data.substr(kFileHeaderSize))) {
      result.torn_tail = true;
      return result;
    }
    return absl::DataLossError(
        absl::StrCat("write-ahead log ", path, ": damaged file header at offset 0"));
  }
  const uint32_t version = DecodeFixed32(h + 8);
  if (version < kMinFormatVersion || version > kFormatVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "write-ahead log ", path, ": unsupported format version ", version,
        " (this build reads ", kMinFormatVersion, " to ", kFormatVersion, ")"));
  }
  result.version = version;
  if (DecodeFixed32(h + 12) != shard || DecodeFixed64(h + 16) != number) {
    return absl::DataLossError(absl::StrCat(
        "write-ahead log ", path, ": header names shard ", DecodeFixed32(h + 12),
        " file ", DecodeFixed64(h + 16), ", expected shard ", shard, " file ", number));
  }

  size_t off = kFileHeaderSize;
  while (off + kRecordHeaderSize <= data.size()) {
    RecordView record;
    if (ParseRecordAt(data, off, dim, commit_log, version, &record) != Parse::kValid) break;
    if (record.type == RecordType::kPutRecords) {
      absl::Status s = CheckExtras(record);
      if (!s.ok()) {
        return absl::DataLossError(absl::StrCat("write-ahead log ", path,
                                                ": damaged record at offset ", off, ": ",
                                                s.message()));
      }
    }
    if ((static_cast<uint8_t>(record.type) & kSafeToIgnoreBit) == 0) {
      SHOAL_RETURN_IF_ERROR(on_record(record));
    }
    ++result.records;
    off += AlignRecord(kRecordHeaderSize + record.payload_length);
  }
  result.valid_end = std::min(off, data.size());
  // Valid records after an invalid one: damage to durable bytes when a sync
  // mark after it proves them durable; else what a crash leaves of a sync
  // cut short (the blocks of one write, the pages of one fdatasync, reach
  // the disk in any order), none of it acknowledged: a torn tail.
  if (ScanAfter(data, result.valid_end, dim, commit_log, version).proven_durable >
      result.valid_end) {
    result.corrupted = true;
    result.corrupt_offset = result.valid_end;
    return result;
  }
  result.torn_tail = !AllZero(data.substr(result.valid_end));
  return result;
}

absl::Status DecodeShardRecord(const RecordView& r, uint32_t dim, uint32_t* shard,
                               RecordView* inner) {
  if (r.type != RecordType::kShardRecord) {
    return absl::InvalidArgumentError("not a shard record");
  }
  const std::string_view bytes(r.ids + kShardRecordPrefix,
                               r.payload_length - kShardRecordPrefix);
  *shard = DecodeFixed32(r.ids);
  if (DecodeFixed32(r.ids + 4) != 0 ||
      ParseRecordAt(bytes, 0, dim, /*commit_log=*/false, r.version, inner) != Parse::kValid ||
      AlignRecord(kRecordHeaderSize + inner->payload_length) != bytes.size() ||
      (inner->type != RecordType::kPut && inner->type != RecordType::kPutRecords &&
       inner->type != RecordType::kDelete && inner->type != RecordType::kBarrier)) {
    return absl::DataLossError(
        absl::StrCat("commit log record at offset ", r.offset,
                     " holds no valid put, delete or barrier record of this collection"));
  }
  if (inner->type == RecordType::kPutRecords) {
    absl::Status s = CheckExtras(*inner);
    if (!s.ok()) {
      return absl::DataLossError(absl::StrCat("commit log record at offset ", r.offset,
                                              ": damaged put record: ", s.message()));
    }
  }
  inner->offset = r.offset;
  return absl::OkStatus();
}

}  // namespace shoal::wal
