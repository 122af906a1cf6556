// Copyright 2026 The shoal Authors.
//
// Segment file format, version 3 (versions 1 and 2 are read too: version 1
// has no codes, neither has record regions). docs/format.md ("Segment
// (version 3)") gives every byte; this header holds the constants and the
// codecs of the fixed-size parts.
//
//   header sector   4096 bytes: fields, zeros, xxh3-64 of bytes [0, 4088)
//   node blocks     block_count blocks of sectors_per_block * 4096 bytes;
//                   each holds nodes_per_block node records, zeros, and ends
//                   with the xxh3-64 of the block's other bytes
//   codes           (version 2, code kind SQ8) lo f32[dim], scale f32[dim],
//                   then one code of code_bytes per node (codes/sq8.h);
//                   its xxh3-64 is in the footer
//   record regions  (version 3) labels, attributes, postings, summaries,
//                   payloads, each at a multiple of 8, each absent when no
//                   node has that part (record_regions.h)
//   id table        (vector_count + tombstone_count) entries of 24 bytes,
//                   sorted by id: id u64, sequence u64, node u32 (kNoNode for
//                   a tombstone), reserved u32 = 0
//   records dir.    (version 3) 160 bytes: each region's offset, length
//                   and xxh3-64, their counts, its own xxh3-64
//   footer          64 bytes: offsets and lengths, xxh3-64 of the id table,
//                   xxh3-64 of the codes (0 without), xxh3-64 of the
//                   footer's first 48 bytes, magic
//
// A node record (node_bytes, a multiple of 32): vector f32[dim], id u64,
// sequence u64, degree u32, neighbours u32[R] (first `degree` used, rest 0),
// zeros. Node i is record i % nodes_per_block of block i / nodes_per_block.

#ifndef SHOAL_SRC_SEGMENT_SEGMENT_FORMAT_H_
#define SHOAL_SRC_SEGMENT_SEGMENT_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "shoal/options.h"

namespace shoal::segment {

inline constexpr std::string_view kMagic = "SHOALSEG";
inline constexpr uint32_t kFormatVersion = 3;
// The first version with record regions and the records directory.
inline constexpr uint32_t kFirstRecordsVersion = 3;
inline constexpr size_t kSectorSize = 4096;
inline constexpr size_t kHeaderSize = kSectorSize;
inline constexpr size_t kChecksumSize = 8;  // xxh3-64, at the end of each block
inline constexpr size_t kFooterSize = 64;
inline constexpr size_t kIdEntrySize = 24;
inline constexpr uint32_t kNoNode = 0xFFFFFFFFu;  // tombstone / no medoid
inline constexpr size_t kNodeRecordAlignment = 32;

// Limits a version-1 reader accepts (the writer enforces them too). Node
// indices keep their top bit free for the search's "expanded" mark.
inline constexpr uint32_t kMaxDim = 4096;
inline constexpr uint32_t kMaxDegree = 4096;
inline constexpr uint64_t kMaxVectors = (uint64_t{1} << 31) - 1;

// Where node records sit. A pure function of (dim, R).
struct NodeLayout {
  uint32_t dim = 0;
  uint32_t max_degree = 0;         // R
  uint32_t node_bytes = 0;         // one record, padded to kNodeRecordAlignment
  uint32_t nodes_per_block = 0;    // >= 1
  uint32_t sectors_per_block = 0;  // >= 1; > 1 only when nodes_per_block == 1

  // REQUIRES: 1 <= dim <= kMaxDim, 1 <= max_degree <= kMaxDegree.
  static NodeLayout For(uint32_t dim, uint32_t max_degree);

  size_t block_bytes() const { return size_t{sectors_per_block} * kSectorSize; }
  uint64_t BlockCount(uint64_t nodes) const {
    return (nodes + nodes_per_block - 1) / nodes_per_block;
  }
  // Offsets inside a record.
  size_t id_offset() const { return size_t{dim} * 4; }
  size_t sequence_offset() const { return id_offset() + 8; }
  size_t degree_offset() const { return id_offset() + 16; }
  size_t neighbors_offset() const { return id_offset() + 20; }
};

// A segment written outside a database: the collection's shard count,
// which of its shards the file holds (kAllShards: one graph holding
// entries of every shard), and a fingerprint of the collection's attribute
// names (AttributesFingerprint). shard_count 0: no origin recorded.
struct SegmentOrigin {
  static constexpr uint32_t kAllShards = 0xFFFFFFFFu;
  uint32_t shard_count = 0;
  uint32_t shard = 0;
  uint32_t attribute_count = 0;
  uint64_t attributes_fingerprint = 0;

  bool present() const { return shard_count != 0; }
};

// xxh3-64 over the names, each as u32 length + bytes; 0 for no names.
uint64_t AttributesFingerprint(const std::vector<std::string>& names);

struct Header {
  // What EncodeHeader writes (the writer's test knob writes 2) and what
  // DecodeHeader read.
  uint32_t version = kFormatVersion;
  Metric metric = Metric::kL2;
  uint32_t dim = 0;
  uint32_t max_degree = 0;  // R
  uint64_t vector_count = 0;
  uint64_t tombstone_count = 0;
  uint32_t medoid = kNoNode;  // entry node; kNoNode when vector_count == 0
  NodeLayout layout;
  uint64_t block_count = 0;
  // Informational (how the graph was built); readers ignore them.
  uint32_t build_list_size = 0;
  float alpha = 0;
  // Version 2: the code stored per node (kNone in version 1 files).
  VectorCode code = VectorCode::kNone;
  uint32_t code_bytes = 0;  // one code; 0 with kNone
  // Where the segment belongs (bytes 80..103, zeros in every file written
  // before 2026-12-05 and in every file a database writes for itself):
  // set by the public SegmentWriter (shoal/segment_writer.h) so that
  // DB::IngestSegments can check a file against the collection it goes to.
  SegmentOrigin origin;

  // Bytes of the codes area (ranges and codes; 0 with kNone).
  uint64_t CodeAreaBytes() const {
    return code == VectorCode::kNone ? 0 : 8 * uint64_t{dim} + vector_count * code_bytes;
  }
  bool has_records_directory() const { return version >= kFirstRecordsVersion; }
};

struct Footer {
  uint64_t nodes_offset = 0;
  uint64_t nodes_bytes = 0;
  uint64_t id_table_offset = 0;
  uint64_t id_table_bytes = 0;
  uint64_t id_table_checksum = 0;
  uint64_t code_checksum = 0;  // xxh3-64 of the codes area; 0 without one
};

// The header sector (kHeaderSize bytes, checksum included).
std::string EncodeHeader(const Header& header);
// Parses and checks the header sector: magic, checksum, version, and that
// every field is in range and consistent (layout == NodeLayout::For(dim, R),
// block_count, medoid). DataLossError / FailedPreconditionError (newer
// version), messages prefixed with `path`.
absl::Status DecodeHeader(std::string_view sector, const std::string& path, Header* header);

// A node record's id, sequence and vector, and its neighbours into
// *neighbors (which the caller reuses). REQUIRES: the record's block passed
// its checks (degree <= R), as both readers ensure before a record is read.
struct NodeRecordFields {
  uint64_t id = 0;
  uint64_t sequence = 0;
  const float* vector = nullptr;  // into the record
};
NodeRecordFields DecodeNodeRecord(const NodeLayout& layout, const char* record,
                                  std::vector<uint32_t>* neighbors);

// The footer (kFooterSize bytes).
std::string EncodeFooter(const Footer& footer);
// Magic and checksum only; the caller checks offsets against the file.
absl::Status DecodeFooter(std::string_view bytes, const std::string& path, Footer* footer);

// "segment <path>: <what>", a DataLossError.
absl::Status Corruption(const std::string& path, std::string_view what);

}  // namespace shoal::segment

#endif  // SHOAL_SRC_SEGMENT_SEGMENT_FORMAT_H_
