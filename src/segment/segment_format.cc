// Copyright 2026 The shoal Authors.

#include "segment/segment_format.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "codes/sq8.h"
#include "util/coding.h"
#include "util/hash.h"
#include "util/string_view.h"

namespace shoal::segment {
namespace {

// Byte offsets of the header fields (docs/format.md has the table).
constexpr size_t kVersionAt = 8;
constexpr size_t kMetricAt = 12;
constexpr size_t kDimAt = 16;
constexpr size_t kDegreeAt = 20;
constexpr size_t kVectorCountAt = 24;
constexpr size_t kTombstoneCountAt = 32;
constexpr size_t kMedoidAt = 40;
constexpr size_t kNodeBytesAt = 44;
constexpr size_t kNodesPerBlockAt = 48;
constexpr size_t kSectorsPerBlockAt = 52;
constexpr size_t kBlockCountAt = 56;
constexpr size_t kListSizeAt = 64;
constexpr size_t kAlphaAt = 68;
constexpr size_t kCodeKindAt = 72;   // version 2
constexpr size_t kCodeBytesAt = 76;  // version 2
// The origin (SegmentOrigin; zeros when absent).
constexpr size_t kShardCountAt = 80;
constexpr size_t kShardAt = 84;
constexpr size_t kAttributeCountAt = 88;
constexpr size_t kAttributesFingerprintAt = 96;
constexpr size_t kHeaderChecksumAt = kHeaderSize - kChecksumSize;

// Footer fields.
constexpr size_t kFooterChecksumAt = 48;
constexpr size_t kFooterMagicAt = 56;

}  // namespace

NodeLayout NodeLayout::For(uint32_t dim, uint32_t max_degree) {
  NodeLayout l;
  l.dim = dim;
  l.max_degree = max_degree;
  const size_t record = size_t{dim} * 4 + 8 + 8 + 4 + size_t{max_degree} * 4;
  const size_t padded =
      (record + kNodeRecordAlignment - 1) / kNodeRecordAlignment * kNodeRecordAlignment;
  l.node_bytes = static_cast<uint32_t>(padded);
  // A record never straddles a sector boundary when it fits in one: small
  // records are packed into single-sector blocks, large ones get whole
  // sectors of their own. Either way a block is read (and checked) whole.
  if (padded + kChecksumSize <= kSectorSize) {
    l.nodes_per_block = static_cast<uint32_t>((kSectorSize - kChecksumSize) / padded);
    l.sectors_per_block = 1;
  } else {
    l.nodes_per_block = 1;
    l.sectors_per_block =
        static_cast<uint32_t>((padded + kChecksumSize + kSectorSize - 1) / kSectorSize);
  }
  return l;
}

absl::Status Corruption(const std::string& path, std::string_view what) {
  return absl::DataLossError(absl::StrCat("segment ", path, ": ", AsAbsl(what)));
}

std::string EncodeHeader(const Header& h) {
  std::string out(kHeaderSize, '\0');
  char* p = out.data();
  std::memcpy(p, kMagic.data(), kMagic.size());
  EncodeFixed32(p + kVersionAt, h.version);
  p[kMetricAt] = static_cast<char>(h.metric);
  EncodeFixed32(p + kDimAt, h.dim);
  EncodeFixed32(p + kDegreeAt, h.max_degree);
  EncodeFixed64(p + kVectorCountAt, h.vector_count);
  EncodeFixed64(p + kTombstoneCountAt, h.tombstone_count);
  EncodeFixed32(p + kMedoidAt, h.medoid);
  EncodeFixed32(p + kNodeBytesAt, h.layout.node_bytes);
  EncodeFixed32(p + kNodesPerBlockAt, h.layout.nodes_per_block);
  EncodeFixed32(p + kSectorsPerBlockAt, h.layout.sectors_per_block);
  EncodeFixed64(p + kBlockCountAt, h.block_count);
  EncodeFixed32(p + kListSizeAt, h.build_list_size);
  std::memcpy(p + kAlphaAt, &h.alpha, 4);
  EncodeFixed32(p + kCodeKindAt, static_cast<uint32_t>(h.code));
  EncodeFixed32(p + kCodeBytesAt, h.code_bytes);
  if (h.origin.present()) {
    EncodeFixed32(p + kShardCountAt, h.origin.shard_count);
    EncodeFixed32(p + kShardAt, h.origin.shard);
    EncodeFixed32(p + kAttributeCountAt, h.origin.attribute_count);
    EncodeFixed64(p + kAttributesFingerprintAt, h.origin.attributes_fingerprint);
  }
  EncodeFixed64(p + kHeaderChecksumAt, Checksum64(p, kHeaderChecksumAt));
  return out;
}

absl::Status DecodeHeader(std::string_view sector, const std::string& path, Header* h) {
  if (sector.size() < kHeaderSize) return Corruption(path, "truncated header");
  const char* p = sector.data();
  if (std::memcmp(p, kMagic.data(), kMagic.size()) != 0) {
    return Corruption(path, "bad magic (not a segment file)");
  }
  // The checksum is checked before the version: a flipped version byte is
  // damage, not a file from the future. Later versions keep magic, version
  // and this checksum where they are.
  if (Checksum64(p, kHeaderChecksumAt) != DecodeFixed64(p + kHeaderChecksumAt)) {
    return Corruption(path, "header checksum mismatch");
  }
  const uint32_t version = DecodeFixed32(p + kVersionAt);
  if (version == 0) return Corruption(path, "header version 0");
  if (version > kFormatVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "segment ", path, ": format version ", version, " is newer than this reader (",
        kFormatVersion, ")"));
  }
  h->version = version;
  const uint8_t metric = static_cast<uint8_t>(p[kMetricAt]);
  h->dim = DecodeFixed32(p + kDimAt);
  h->max_degree = DecodeFixed32(p + kDegreeAt);
  h->vector_count = DecodeFixed64(p + kVectorCountAt);
  h->tombstone_count = DecodeFixed64(p + kTombstoneCountAt);
  h->medoid = DecodeFixed32(p + kMedoidAt);
  h->block_count = DecodeFixed64(p + kBlockCountAt);
  h->build_list_size = DecodeFixed32(p + kListSizeAt);
  std::memcpy(&h->alpha, p + kAlphaAt, 4);
  if (metric > static_cast<uint8_t>(Metric::kCosine)) return Corruption(path, "unknown metric");
  h->metric = static_cast<Metric>(metric);
  if (h->dim < 1 || h->dim > kMaxDim) return Corruption(path, "dim out of range");
  if (h->max_degree < 1 || h->max_degree > kMaxDegree) {
    return Corruption(path, "max degree out of range");
  }
  if (h->vector_count > kMaxVectors) return Corruption(path, "vector count out of range");
  h->layout = NodeLayout::For(h->dim, h->max_degree);
  if (DecodeFixed32(p + kNodeBytesAt) != h->layout.node_bytes ||
      DecodeFixed32(p + kNodesPerBlockAt) != h->layout.nodes_per_block ||
      DecodeFixed32(p + kSectorsPerBlockAt) != h->layout.sectors_per_block) {
    return Corruption(path, "node layout does not match dim and max degree");
  }
  if (h->block_count != h->layout.BlockCount(h->vector_count)) {
    return Corruption(path, "block count does not match vector count");
  }
  const bool medoid_ok = h->vector_count == 0 ? h->medoid == kNoNode
                                              : h->medoid < h->vector_count;
  if (!medoid_ok) return Corruption(path, "medoid out of range");
  // Version 1 wrote zeros here: no codes.
  const uint32_t code = DecodeFixed32(p + kCodeKindAt);
  h->code_bytes = DecodeFixed32(p + kCodeBytesAt);
  if (code > static_cast<uint32_t>(VectorCode::kSq8)) return Corruption(path, "unknown code kind");
  h->code = static_cast<VectorCode>(code);
  const size_t want = h->code == VectorCode::kSq8 ? codes::Sq8::CodeBytes(h->dim) : 0;
  if (h->code_bytes != want) return Corruption(path, "code size does not match its kind and dim");
  h->origin.shard_count = DecodeFixed32(p + kShardCountAt);
  h->origin.shard = DecodeFixed32(p + kShardAt);
  h->origin.attribute_count = DecodeFixed32(p + kAttributeCountAt);
  h->origin.attributes_fingerprint = DecodeFixed64(p + kAttributesFingerprintAt);
  if (h->origin.present() && h->origin.shard != SegmentOrigin::kAllShards &&
      h->origin.shard >= h->origin.shard_count) {
    return Corruption(path, "shard not below the shard count");
  }
  return absl::OkStatus();
}

uint64_t AttributesFingerprint(const std::vector<std::string>& names) {
  if (names.empty()) return 0;
  std::string bytes;
  for (const std::string& name : names) {
    PutFixed32(&bytes, static_cast<uint32_t>(name.size()));
    bytes += name;
  }
  return Checksum64(bytes.data(), bytes.size());
}

NodeRecordFields DecodeNodeRecord(const NodeLayout& layout, const char* record,
                                  std::vector<uint32_t>* neighbors) {
  neighbors->resize(DecodeFixed32(record + layout.degree_offset()));
  for (size_t k = 0; k < neighbors->size(); ++k) {
    (*neighbors)[k] = DecodeFixed32(record + layout.neighbors_offset() + 4 * k);
  }
  return {DecodeFixed64(record + layout.id_offset()),
          DecodeFixed64(record + layout.sequence_offset()),
          reinterpret_cast<const float*>(record)};
}

std::string EncodeFooter(const Footer& f) {
  std::string out(kFooterSize, '\0');
  char* p = out.data();
  EncodeFixed64(p + 0, f.nodes_offset);
  EncodeFixed64(p + 8, f.nodes_bytes);
  EncodeFixed64(p + 16, f.id_table_offset);
  EncodeFixed64(p + 24, f.id_table_bytes);
  EncodeFixed64(p + 32, f.id_table_checksum);
  EncodeFixed64(p + 40, f.code_checksum);
  EncodeFixed64(p + kFooterChecksumAt, Checksum64(p, kFooterChecksumAt));
  std::memcpy(p + kFooterMagicAt, kMagic.data(), kMagic.size());
  return out;
}

absl::Status DecodeFooter(std::string_view bytes, const std::string& path, Footer* f) {
  if (bytes.size() != kFooterSize) return Corruption(path, "truncated footer");
  const char* p = bytes.data();
  if (std::memcmp(p + kFooterMagicAt, kMagic.data(), kMagic.size()) != 0) {
    return Corruption(path, "bad footer magic (truncated or not a segment file)");
  }
  if (Checksum64(p, kFooterChecksumAt) != DecodeFixed64(p + kFooterChecksumAt)) {
    return Corruption(path, "footer checksum mismatch");
  }
  f->nodes_offset = DecodeFixed64(p + 0);
  f->nodes_bytes = DecodeFixed64(p + 8);
  f->id_table_offset = DecodeFixed64(p + 16);
  f->id_table_bytes = DecodeFixed64(p + 24);
  f->id_table_checksum = DecodeFixed64(p + 32);
  f->code_checksum = DecodeFixed64(p + 40);  // version 1: reserved, 0
  return absl::OkStatus();
}

}  // namespace shoal::segment
