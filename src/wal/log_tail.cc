// Copyright 2026 The shoal Authors.

#include "wal/log_tail.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "util/coding.h"
#include "util/file_system.h"
#include "util/status_macros.h"
#include "version/filename.h"

namespace shoal::wal {
namespace {

// Bytes read at a time while following a file (a larger record is read
// whole).
constexpr size_t kChunkBytes = size_t{1} << 20;

}  // namespace

LogTail::LogTail(FileSystem* fs, std::string dir, uint32_t shard, uint32_t dim)
    : fs_(fs), dir_(std::move(dir)), shard_(shard), dim_(dim) {}

absl::StatusOr<uint64_t> LogTail::NextFile(uint64_t after) const {
  SHOAL_ASSIGN_OR_RETURN(std::vector<std::string> names, fs_->ListDir(dir_));
  uint64_t next = 0;
  for (const std::string& name : names) {
    uint64_t number;
    if (ParseWalFileName(name, &number) && number > after && (next == 0 || number < next)) {
      next = number;
    }
  }
  return next;
}

absl::Status LogTail::OpenFile(uint64_t number, bool* ready) {
  *ready = false;
  const std::string path = JoinPath(dir_, WalFileName(number));
  SHOAL_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file,
                         fs_->OpenRandomAccess(path, /*direct=*/false));
  // The header and the first record's header slot.
  // (A file closed with no record is trimmed to its header.)
  if (file->size() < kFileHeaderSize) return absl::OkStatus();  // being created
  std::string header(std::min<uint64_t>(file->size(), kFileHeaderSize + kRecordHeaderSize), '\0');
  absl::Status read = file->Read(0, header.size(), header.data());
  if (absl::IsOutOfRange(read)) return absl::OkStatus();  // trimmed meanwhile
  SHOAL_RETURN_IF_ERROR(read);
  absl::StatusOr<uint32_t> version = CheckFileHeader(header, path, shard_, number);
  if (!version.ok() && std::all_of(header.begin() + kFileHeaderSize, header.end(),
                                   [](char c) { return c == 0; })) {
    // No record yet: the header is being stored (the writer stores it, and
    // syncs it, before the first record).
    return absl::OkStatus();
  }
  SHOAL_RETURN_IF_ERROR(version.status());
  if (*version == 0) return absl::OkStatus();  // header not stored yet
  file_ = std::move(file);
  number_ = number;
  offset_ = kFileHeaderSize;
  version_ = *version;
  *ready = true;
  return absl::OkStatus();
}

absl::Status LogTail::ReadCurrent(
    const std::function<absl::Status(const RecordView&, uint64_t)>& on_record) {
  const std::string path = JoinPath(dir_, WalFileName(number_));
  // Log files are made their full size before records go in, and trimmed
  // (never below their records) when closed: the size now bounds the reads.
  absl::StatusOr<uint64_t> now = fs_->FileSize(path);
  uint64_t size = now.ok() ? *now : file_->size();
  std::string buffer;
  size_t want = kChunkBytes;
  while (offset_ + kRecordHeaderSize <= size) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(want, size - offset_));
    buffer.resize(n);
    absl::Status read = file_->Read(offset_, n, buffer.data());
    if (absl::IsOutOfRange(read)) {
      // Trimmed since (a rotation or a close sets a log file's length to
      // the end of its records), and perhaps removed, so that only the
      // descriptor knows: find the length by reading single bytes.
      uint64_t readable = offset_, unreadable = offset_ + n;
      char byte;
      while (unreadable - readable > 1) {
        const uint64_t mid = readable + (unreadable - readable) / 2;
        if (file_->Read(mid - 1, 1, &byte).ok()) {
          readable = mid;
        } else {
          unreadable = mid;
        }
      }
      size = readable;
      continue;
    }
    SHOAL_RETURN_IF_ERROR(read);
    const std::string_view data(buffer);
    size_t off = 0;
    // Leaves offset_ at the first record not handed out.
    auto stop = [&](absl::Status s) {
      offset_ += off;
      return s;
    };
    while (off + kRecordHeaderSize <= n) {
      const char* h = data.data() + off;
      if (DecodeFixed64(h) == 0) return stop(absl::OkStatus());  // not written yet
      const size_t whole = AlignRecord(kRecordHeaderSize + DecodeFixed32(h + 8));
      if (off + kRecordHeaderSize + DecodeFixed32(h + 8) > n) break;  // read further
      RecordView r;
      absl::StatusOr<bool> valid = ParseShardRecord(data, off, dim_, version_, &r);
      if (!valid.ok()) return stop(valid.status());
      if (!*valid) return stop(absl::OkStatus());  // being stored, or not written yet
      r.offset = offset_ + off;
      if ((static_cast<uint8_t>(r.type) & kSafeToIgnoreBit) == 0) {
        absl::Status s = on_record(r, number_);
        if (!s.ok()) return stop(std::move(s));
      }
      off += whole;  // may pass n: its padding is not read
    }
    if (off == 0) {
      // One record larger than what was read: read it whole, when the file
      // can hold it (else its header is not written whole yet).
      const uint64_t need =
          kRecordHeaderSize + uint64_t{DecodeFixed32(data.data() + 8)};
      if (n < kRecordHeaderSize || offset_ + need > size || need <= n) return absl::OkStatus();
      want = static_cast<size_t>(need);
      continue;
    }
    offset_ += off;
    want = kChunkBytes;
  }
  return absl::OkStatus();
}

absl::Status LogTail::Poll(
    const std::function<absl::Status(const RecordView&, uint64_t)>& on_record) {
  if (file_ == nullptr) {
    SHOAL_ASSIGN_OR_RETURN(const uint64_t first, NextFile(number_));
    if (first == 0) return absl::OkStatus();
    bool ready = false;
    SHOAL_RETURN_IF_ERROR(OpenFile(first, &ready));
    if (!ready) return absl::OkStatus();
  }
  while (true) {
    SHOAL_RETURN_IF_ERROR(ReadCurrent(on_record));
    SHOAL_ASSIGN_OR_RETURN(const uint64_t next, NextFile(number_));
    if (next == 0) return absl::OkStatus();
    // The writer moved on: the current file is finished. Its records stored
    // since the read above are read now, before leaving it.
    SHOAL_RETURN_IF_ERROR(ReadCurrent(on_record));
    bool ready = false;
    SHOAL_RETURN_IF_ERROR(OpenFile(next, &ready));
    if (!ready) return absl::OkStatus();
  }
}

}  // namespace shoal::wal
