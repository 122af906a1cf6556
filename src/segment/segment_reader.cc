// Copyright 2026 The shoal Authors.

#include "segment/segment_reader.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "util/coding.h"
#include "util/hash.h"
#include "util/status_macros.h"

namespace shoal {

absl::StatusOr<std::shared_ptr<Segment>> Segment::Open(FileSystem* fs, const std::string& path,
                                                       uint32_t dim, Metric metric) {
  return segment::SegmentReader::Open(fs, path, dim, metric);
}

namespace segment {
namespace {

// Reads of id table entry i.
uint64_t EntryId(const char* table, uint64_t i) { return DecodeFixed64(table + i * kIdEntrySize); }
uint64_t EntrySequence(const char* table, uint64_t i) {
  return DecodeFixed64(table + i * kIdEntrySize + 8);
}
uint32_t EntryNode(const char* table, uint64_t i) {
  return DecodeFixed32(table + i * kIdEntrySize + 16);
}

// Checks the footer's offsets against the header and the file size. Every
// quantity is bounded by `size` before it is multiplied or added, so nothing
// overflows whatever the bytes say.
absl::Status CheckLayout(const Header& h, const Footer& f, uint64_t size,
                         const std::string& path) {
  const uint64_t nodes_bytes = h.block_count * h.layout.block_bytes();  // < 2^31 * 2^17
  if (f.nodes_offset != kHeaderSize || f.nodes_bytes != nodes_bytes) {
    return Corruption(path, "footer node area does not match the header");
  }
  if (h.tombstone_count > size) return Corruption(path, "tombstone count exceeds the file");
  const uint64_t entries = h.vector_count + h.tombstone_count;
  if (h.vector_count > size || h.CodeAreaBytes() > size) {
    return Corruption(path, "codes exceed the file");
  }
  if (f.id_table_offset != f.nodes_offset + f.nodes_bytes + h.CodeAreaBytes() ||
      f.id_table_bytes != entries * kIdEntrySize) {
    return Corruption(path, "footer id table does not match the header");
  }
  if (f.id_table_offset > size || f.id_table_bytes > size ||
      f.id_table_offset + f.id_table_bytes + kFooterSize != size) {
    return Corruption(path, absl::StrCat("file size ", size,
                                         " does not match its layout (truncated?)"));
  }
  return absl::OkStatus();
}

// Checks the codes area (checksum; ranges finite, steps >= 0) and returns
// its quantizer.
absl::StatusOr<std::unique_ptr<Sq8>> ReadCodes(const char* data, const Header& h,
                                               const Footer& f, const std::string& path) {
  const uint64_t offset = f.nodes_offset + f.nodes_bytes;
  const char* area = data + offset;
  if (Checksum64(area, h.CodeAreaBytes()) != f.code_checksum) {
    return Corruption(path, absl::StrCat("codes checksum mismatch (offset ", offset, ")"));
  }
  std::vector<float> lo(h.dim), scale(h.dim);
  std::memcpy(lo.data(), area, 4 * size_t{h.dim});
  std::memcpy(scale.data(), area + 4 * size_t{h.dim}, 4 * size_t{h.dim});
  for (uint32_t j = 0; j < h.dim; ++j) {
    if (!std::isfinite(lo[j]) || !std::isfinite(scale[j]) || scale[j] < 0) {
      return Corruption(path, absl::StrCat("code range of dimension ", j, " is invalid (offset ",
                                           offset, ")"));
    }
  }
  return std::make_unique<Sq8>(std::move(lo), std::move(scale));
}

}  // namespace

SegmentReader::SegmentReader(std::string path, std::unique_ptr<ReadOnlyMappedFile> file,
                             const Header& header, const Footer& footer,
                             std::unique_ptr<Sq8> sq8)
    : path_(std::move(path)),
      file_(std::move(file)),
      header_(header),
      footer_(footer),
      nodes_(file_->data() + footer.nodes_offset),
      id_table_(file_->data() + footer.id_table_offset),
      entry_count_(header.vector_count + header.tombstone_count),
      block_bytes_(header.layout.block_bytes()),
      div_magic_(header.layout.nodes_per_block > 1
                     ? ~uint64_t{0} / header.layout.nodes_per_block + 1
                     : 0),
      verified_(std::make_unique<std::atomic<uint64_t>[]>((header.block_count + 63) / 64)),
      sq8_(std::move(sq8)),
      codes_(sq8_ == nullptr ? nullptr
                             : reinterpret_cast<const uint8_t*>(
                                   file_->data() + footer.nodes_offset + footer.nodes_bytes +
                                   8 * size_t{header.dim})) {}

absl::StatusOr<std::shared_ptr<Segment>> SegmentReader::Open(FileSystem* fs,
                                                             const std::string& path,
                                                             uint32_t dim, Metric metric) {
  SHOAL_ASSIGN_OR_RETURN(std::unique_ptr<ReadOnlyMappedFile> file, fs->OpenReadOnlyMapped(path));
  const uint64_t size = file->size();
  if (size < kHeaderSize + kFooterSize) {
    return Corruption(path, absl::StrCat("truncated: ", size, " bytes"));
  }
  const char* data = file->data();
  Header header;
  SHOAL_RETURN_IF_ERROR(DecodeHeader(std::string_view(data, kHeaderSize), path, &header));
  Footer footer;
  SHOAL_RETURN_IF_ERROR(DecodeFooter(std::string_view(data + size - kFooterSize, kFooterSize),
                                     path, &footer));
  if (header.dim != dim || header.metric != metric) {
    return absl::InvalidArgumentError(absl::StrCat(
        "segment ", path, ": holds dim ", header.dim, " metric ",
        static_cast<int>(header.metric), ", expected dim ", dim, " metric ",
        static_cast<int>(metric)));
  }
  SHOAL_RETURN_IF_ERROR(CheckLayout(header, footer, size, path));
  if (Checksum64(data + footer.id_table_offset, footer.id_table_bytes) !=
      footer.id_table_checksum) {
    return Corruption(path, absl::StrCat("id table checksum mismatch (offset ",
                                         footer.id_table_offset, ")"));
  }
  std::unique_ptr<Sq8> sq8;
  if (header.code == VectorCode::kSq8) {
    SHOAL_ASSIGN_OR_RETURN(sq8, ReadCodes(data, header, footer, path));
  } else if (footer.code_checksum != 0) {
    return Corruption(path, "footer has a codes checksum but the header no codes");
  }
  std::shared_ptr<SegmentReader> segment(
      new SegmentReader(path, std::move(file), header, footer, std::move(sq8)));
  SHOAL_RETURN_IF_ERROR(segment->CheckIdTable());
  return segment;
}

absl::Status SegmentReader::CheckIdTable() const {
  std::vector<bool> seen(header_.vector_count, false);
  uint64_t tombstones = 0;
  for (uint64_t i = 0; i < entry_count_; ++i) {
    if (i > 0 && EntryId(id_table_, i) <= EntryId(id_table_, i - 1)) {
      return Corruption(path_, absl::StrCat("id table not sorted at entry ", i));
    }
    const uint32_t node = EntryNode(id_table_, i);
    if (node == kNoNode) {
      ++tombstones;
    } else if (node >= header_.vector_count || seen[node]) {
      return Corruption(path_, absl::StrCat("id table entry ", i, " has a bad node"));
    } else {
      seen[node] = true;
    }
  }
  // Sorted, in range and distinct: the live entries are exactly the nodes.
  if (tombstones != header_.tombstone_count) {
    return Corruption(path_, "id table tombstones do not match the header");
  }
  return absl::OkStatus();
}

absl::Status SegmentReader::VerifyBlock(uint32_t block) const {
  const NodeLayout& layout = header_.layout;
  const char* b = Block(block);
  const uint64_t offset = footer_.nodes_offset + uint64_t{block} * block_bytes_;
  const size_t body = block_bytes_ - kChecksumSize;
  if (Checksum64(b, body) != DecodeFixed64(b + body)) {
    return Corruption(path_, absl::StrCat("node block ", block, " (offset ", offset,
                                          ") checksum mismatch"));
  }
  for (uint32_t slot = 0; slot < layout.nodes_per_block; ++slot) {
    const uint64_t node = uint64_t{block} * layout.nodes_per_block + slot;
    if (node >= header_.vector_count) break;
    const char* record = b + size_t{slot} * layout.node_bytes;
    const uint32_t degree = DecodeFixed32(record + layout.degree_offset());
    bool ok = degree <= layout.max_degree;
    for (uint32_t k = 0; ok && k < degree; ++k) {
      ok = DecodeFixed32(record + layout.neighbors_offset() + 4 * k) < header_.vector_count;
    }
    if (!ok) {
      return Corruption(path_, absl::StrCat("node ", node, " (offset ", offset,
                                            ") has a bad neighbour list"));
    }
  }
  verified_[block >> 6].fetch_or(uint64_t{1} << (block & 63), std::memory_order_relaxed);
  return absl::OkStatus();
}

absl::StatusOr<Segment::Lookup> SegmentReader::Find(uint64_t id, uint64_t* sequence,
                                                    const float** vector) const {
  uint64_t lo = 0, hi = entry_count_;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (EntryId(id_table_, mid) < id) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == entry_count_ || EntryId(id_table_, lo) != id) return Lookup::kAbsent;
  const uint32_t node = EntryNode(id_table_, lo);
  if (node != kNoNode) {
    SHOAL_RETURN_IF_ERROR(EnsureVerified(BlockOf(node)));
    const char* record = NodeRecord(node);
    if (DecodeFixed64(record + header_.layout.id_offset()) != id ||
        DecodeFixed64(record + header_.layout.sequence_offset()) !=
            EntrySequence(id_table_, lo)) {
      return Corruption(path_, absl::StrCat("node ", node, " does not hold id ", id,
                                            " and its sequence as the id table says"));
    }
    if (vector != nullptr) *vector = NodeVector(record);
  }
  if (sequence != nullptr) *sequence = EntrySequence(id_table_, lo);
  return node == kNoNode ? Lookup::kDeleted : Lookup::kLive;
}

absl::Status SegmentReader::ForEachRecord(
    const std::function<void(uint32_t node, const char* record)>& fn) const {
  for (uint64_t node = 0; node < header_.vector_count; ++node) {
    const uint32_t n = static_cast<uint32_t>(node);
    if (node % header_.layout.nodes_per_block == 0) {
      SHOAL_RETURN_IF_ERROR(EnsureVerified(BlockOf(n)));
    }
    fn(n, NodeRecord(n));
  }
  return absl::OkStatus();
}

absl::Status SegmentReader::ForEachNode(
    const std::function<void(uint32_t node, uint64_t id, uint64_t sequence, const float* vector,
                             std::span<const uint32_t> neighbors)>& fn) const {
  const NodeLayout& layout = header_.layout;
  std::vector<uint32_t> neighbors;
  return ForEachRecord([&](uint32_t node, const char* record) {
    // Verified: degree <= R and every neighbour < vector_count.
    neighbors.resize(DecodeFixed32(record + layout.degree_offset()));
    for (size_t k = 0; k < neighbors.size(); ++k) {
      neighbors[k] = DecodeFixed32(record + layout.neighbors_offset() + 4 * k);
    }
    fn(node, DecodeFixed64(record + layout.id_offset()),
       DecodeFixed64(record + layout.sequence_offset()), NodeVector(record), neighbors);
  });
}

absl::Status SegmentReader::ForEachVector(
    const std::function<void(uint64_t id, uint64_t sequence, const float* vector)>& fn) const {
  const NodeLayout& layout = header_.layout;
  return ForEachRecord([&](uint32_t, const char* record) {
    fn(DecodeFixed64(record + layout.id_offset()),
       DecodeFixed64(record + layout.sequence_offset()), NodeVector(record));
  });
}

void SegmentReader::ForEachEntry(
    const std::function<void(uint64_t id, uint64_t sequence, bool live)>& fn) const {
  for (uint64_t i = 0; i < entry_count_; ++i) {
    fn(EntryId(id_table_, i), EntrySequence(id_table_, i), EntryNode(id_table_, i) != kNoNode);
  }
}

void SegmentReader::ForEachTombstone(
    const std::function<void(uint64_t id, uint64_t sequence)>& fn) const {
  for (uint64_t i = 0; i < entry_count_; ++i) {
    if (EntryNode(id_table_, i) == kNoNode) fn(EntryId(id_table_, i), EntrySequence(id_table_, i));
  }
}

absl::Status SegmentReader::VerifyAll() const {
  // Re-reads everything: the bytes under the mapping may have changed since
  // Open (the file is shared with the page cache).
  const char* data = file_->data();
  const uint64_t size = file_->size();
  Header header;
  SHOAL_RETURN_IF_ERROR(DecodeHeader(std::string_view(data, kHeaderSize), path_, &header));
  Footer footer;
  SHOAL_RETURN_IF_ERROR(DecodeFooter(std::string_view(data + size - kFooterSize, kFooterSize),
                                     path_, &footer));
  if (std::memcmp(&footer, &footer_, sizeof(Footer)) != 0 ||
      header.vector_count != header_.vector_count ||
      header.tombstone_count != header_.tombstone_count || header.medoid != header_.medoid) {
    return Corruption(path_, "header or footer changed since the segment was opened");
  }
  if (Checksum64(id_table_, footer_.id_table_bytes) != footer_.id_table_checksum) {
    return Corruption(path_, absl::StrCat("id table checksum mismatch (offset ",
                                          footer_.id_table_offset, ")"));
  }
  if (header_.code != VectorCode::kNone) {
    SHOAL_RETURN_IF_ERROR(ReadCodes(data, header_, footer_, path_).status());
  }
  SHOAL_RETURN_IF_ERROR(CheckIdTable());
  for (uint64_t block = 0; block < header_.block_count; ++block) {
    SHOAL_RETURN_IF_ERROR(VerifyBlock(static_cast<uint32_t>(block)));
  }
  // Searches and ForEachVector take ids and sequences from the node records,
  // Find from the id table: they must agree (checksums alone do not say so).
  const NodeLayout& layout = header_.layout;
  for (uint64_t i = 0; i < entry_count_; ++i) {
    const uint32_t node = EntryNode(id_table_, i);
    if (node == kNoNode) continue;
    const char* record = NodeRecord(node);
    if (DecodeFixed64(record + layout.id_offset()) != EntryId(id_table_, i) ||
        DecodeFixed64(record + layout.sequence_offset()) != EntrySequence(id_table_, i)) {
      return Corruption(path_, absl::StrCat("node ", node, " does not hold the id and sequence "
                                            "of id table entry ", i, " (offset ",
                                            footer_.id_table_offset + i * kIdEntrySize, ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace segment
}  // namespace shoal
