// Copyright 2026 The shoal Authors.
//
// The checks every segment reader makes on the parts of a segment file
// (segment_format.h), whatever holds the bytes: a mapping (SegmentReader) or
// buffers read from disk (DiskSegmentReader). Each returns DataLossError
// "segment <path>: ..." naming the damaged place, as Corruption does.

#ifndef SHOAL_SRC_SEGMENT_SEGMENT_CHECKS_H_
#define SHOAL_SRC_SEGMENT_SEGMENT_CHECKS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "segment/segment_format.h"
#include "codes/sq8.h"
#include "util/coding.h"

namespace shoal::segment {

// Fields of id table entry i (`table` points at entry 0).
inline uint64_t EntryId(const char* table, uint64_t i) {
  return DecodeFixed64(table + i * kIdEntrySize);
}
inline uint64_t EntrySequence(const char* table, uint64_t i) {
  return DecodeFixed64(table + i * kIdEntrySize + 8);
}
inline uint32_t EntryNode(const char* table, uint64_t i) {
  return DecodeFixed32(table + i * kIdEntrySize + 16);
}

// Index of `id`'s entry in a sorted id table of `entries` entries, or
// `entries` when absent.
uint64_t FindEntry(const char* table, uint64_t entries, uint64_t id);

// Checks the footer's offsets against the header and the file's size.
absl::Status CheckLayout(const Header& h, const Footer& f, uint64_t size,
                         const std::string& path);

// Checks that the dim and metric are the ones the caller expects
// (InvalidArgumentError otherwise).
absl::Status CheckShape(const Header& h, uint32_t dim, Metric metric, const std::string& path);

// Checks the codes area (h.CodeAreaBytes() bytes at `area`, file offset
// `offset`): checksum, ranges finite, steps >= 0. Returns its quantizer.
absl::StatusOr<std::unique_ptr<codes::Sq8>> ReadCodes(const char* area, uint64_t offset,
                                               const Header& h, const Footer& f,
                                               const std::string& path);

// The ranges at the start of a codes area (8 * h.dim bytes at `area`, file
// offset `offset`), checked (finite, steps >= 0); the checksum is the
// caller's to check.
absl::StatusOr<std::unique_ptr<codes::Sq8>> ParseCodeRanges(const char* area, uint64_t offset,
                                                     const Header& h, const std::string& path);

// Checks that the id table (its checksum already verified) is sorted, that
// every node appears in it exactly once and the tombstones number
// h.tombstone_count.
absl::Status CheckIdTable(const char* table, const Header& h, const std::string& path);

// Checks node block `block` (layout.block_bytes() bytes at `bytes`):
// checksum, and that each node's degree is <= R and its neighbours <
// vector_count (so a search follows them without bounds checks).
absl::Status CheckNodeBlock(const char* bytes, uint32_t block, const Header& h,
                            const Footer& f, const std::string& path);

// Checks that a node record holds the id and sequence its id table entry
// gives it (checksums alone do not say so).
absl::Status CheckRecordMatches(const char* record, uint32_t node, uint64_t id,
                                uint64_t sequence, const Header& h, const std::string& path);

}  // namespace shoal::segment

#endif  // SHOAL_SRC_SEGMENT_SEGMENT_CHECKS_H_
