// Copyright 2026 The shoal Authors.
//
// Write-ahead log format. docs/format.md gives the full description with a
// worked example; this header holds the constants.
//
// A shard's log is a sequence of files <shard dir>/wal-<number>.log, numbered
// upwards. Each file:
//
//   file header (32 bytes):
//     magic     "SHOALWAL"            8 bytes
//     version   u32 = 2               (1: files written before records had
//                                     extras; still read, without kPutRecords)
//     shard     u32                   index of the shard that owns the file
//     number    u64                   the <number> in the file name
//     reserved  u32 = 0
//     checksum  u32                   low 32 bits of xxh3_64(bytes 0..27)
//   records, each starting at an 8-byte-aligned offset:
//     checksum  u64                   xxh3_64 of bytes [8, 32 + payload_length)
//     length    u32                   payload_length
//     type      u8                    RecordType
//     flags     u8  = 0
//     reserved  u16 = 0
//     sequence  u64                   sequence number of the record's first op
//     count     u32                   ops in the record (>= 1)
//     dim       u32                   floats per vector (0 otherwise)
//     payload   kPut: count ids (u64), then count*dim floats (f32)
//               kPutRecords (version 2): as kPut, then count extras
//               (record/record_format.h: each at least its 8-byte header),
//               back to back, ending exactly at the payload's end
//               kDelete: count ids (u64); kBarrier: nothing (count = 1);
//               sync mark (kSyncMarkType): a u64 offset (count = 1)
//               kShardRecord (commit logs): shard u32, 0 u32, a shard record
//     padding   zeros up to the next multiple of 8
//   then zeros to the end of the file (space reserved for later records).
//
// All integers and floats are little-endian. Sequence numbers are per shard,
// one per op, and contiguous across records and files.
//
// A collection's commit log (kAlways; commit_log.h) is the same format in
// <collection dir>/commit/, with shard = kCommitLogShard in the file headers
// and only kShardRecord records (and sync marks).

#ifndef SHOAL_SRC_WAL_WAL_FORMAT_H_
#define SHOAL_SRC_WAL_WAL_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace shoal::wal {

inline constexpr std::string_view kFileMagic = "SHOALWAL";
// The version written. Readers take kMinFormatVersion..kFormatVersion.
inline constexpr uint32_t kFormatVersion = 2;
inline constexpr uint32_t kMinFormatVersion = 1;
inline constexpr size_t kFileHeaderSize = 32;
inline constexpr size_t kRecordHeaderSize = 32;
inline constexpr size_t kRecordAlignment = 8;

enum class RecordType : uint8_t {
  kPut = 1,     // upsert count vectors
  kDelete = 2,  // delete count ids
  // A bulk load took this sequence number (count 1, no payload): records
  // before it are older than the bulk segment, records after it newer.
  kBarrier = 3,
  // Commit logs only (commit_log.h): a copy of one record of a shard's log
  // (count 1, dim 0, sequence 0). Payload: shard u32, reserved u32 = 0, then
  // the shard record whole (header, payload, padding), as in the shard's log.
  kShardRecord = 4,
  // Version 2 files only (in a version-1 file, an unknown type): upsert
  // count records, each a vector and its extras (labels, attributes,
  // payload), in one record so that each is applied whole or not at all.
  kPutRecords = 5,
};
// The `shard` field of a commit log file's header.
inline constexpr uint32_t kCommitLogShard = 0xFFFFFFFF;
inline constexpr size_t kShardRecordPrefix = 8;
// Record types with this bit set may be skipped by a reader that does not know
// them; an unknown type without it is an error. They take no sequence number.
inline constexpr uint8_t kSafeToIgnoreBit = 0x80;

// A sync mark (safe to ignore; count 1, dim 0, sequence 0, payload: u64): every
// byte of this file before that offset was durable when the mark was written.
// A reader that finds damage followed by valid records uses the marks after
// it to tell a sync cut short by a crash (its blocks reach the disk in any
// order: drop them) from damage to durable records (DataLossError).
inline constexpr uint8_t kSyncMarkType = kSafeToIgnoreBit | 0x01;
inline constexpr size_t kSyncMarkPayload = 8;

inline constexpr size_t AlignRecord(size_t n) {
  return (n + kRecordAlignment - 1) & ~(kRecordAlignment - 1);
}

inline constexpr size_t PutPayloadSize(size_t count, size_t dim) {
  return count * sizeof(uint64_t) + count * dim * sizeof(float);
}

// A kPutRecords payload whose extras take `extras_bytes` in all.
inline constexpr size_t PutRecordsPayloadSize(size_t count, size_t dim, size_t extras_bytes) {
  return PutPayloadSize(count, dim) + extras_bytes;
}

}  // namespace shoal::wal

#endif  // SHOAL_SRC_WAL_WAL_FORMAT_H_
