// Copyright 2026 The shoal Authors.

#include "segment/segment_checks.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "segment/record_regions.h"
#include "util/hash.h"

namespace shoal::segment {

uint64_t FindEntry(const char* table, uint64_t entries, uint64_t id) {
  uint64_t lo = 0, hi = entries;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (EntryId(table, mid) < id) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo < entries && EntryId(table, lo) == id ? lo : entries;
}

// Every quantity is bounded by `size` before it is multiplied or added, so
// nothing overflows whatever the bytes say.
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
  // Version 3: the record regions lie between the codes and the id table
  // (the records directory places them exactly), the directory after it.
  const uint64_t codes_end = f.nodes_offset + f.nodes_bytes + h.CodeAreaBytes();
  const bool placed = h.has_records_directory() ? f.id_table_offset >= codes_end
                                                : f.id_table_offset == codes_end;
  if (!placed || f.id_table_bytes != entries * kIdEntrySize) {
    return Corruption(path, "footer id table does not match the header");
  }
  const uint64_t tail = h.has_records_directory() ? kRecordsDirectorySize + kFooterSize
                                                  : kFooterSize;
  if (f.id_table_offset > size || f.id_table_bytes > size ||
      f.id_table_offset + f.id_table_bytes + tail != size) {
    return Corruption(path, absl::StrCat("file size ", size,
                                         " does not match its layout (truncated?)"));
  }
  if (h.code == VectorCode::kNone && f.code_checksum != 0) {
    return Corruption(path, "footer has a codes checksum but the header no codes");
  }
  return absl::OkStatus();
}

absl::Status CheckShape(const Header& h, uint32_t dim, Metric metric, const std::string& path) {
  if (h.dim == dim && h.metric == metric) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "segment ", path, ": holds dim ", h.dim, " metric ", static_cast<int>(h.metric),
      ", expected dim ", dim, " metric ", static_cast<int>(metric)));
}

absl::StatusOr<std::unique_ptr<codes::Sq8>> ReadCodes(const char* area, uint64_t offset,
                                               const Header& h, const Footer& f,
                                               const std::string& path) {
  if (Checksum64(area, h.CodeAreaBytes()) != f.code_checksum) {
    return Corruption(path, absl::StrCat("codes checksum mismatch (offset ", offset, ")"));
  }
  return ParseCodeRanges(area, offset, h, path);
}

absl::StatusOr<std::unique_ptr<codes::Sq8>> ParseCodeRanges(const char* area, uint64_t offset,
                                                     const Header& h, const std::string& path) {
  std::vector<float> lo(h.dim), scale(h.dim);
  std::memcpy(lo.data(), area, 4 * size_t{h.dim});
  std::memcpy(scale.data(), area + 4 * size_t{h.dim}, 4 * size_t{h.dim});
  for (uint32_t j = 0; j < h.dim; ++j) {
    if (!std::isfinite(lo[j]) || !std::isfinite(scale[j]) || scale[j] < 0) {
      return Corruption(path, absl::StrCat("code range of dimension ", j, " is invalid (offset ",
                                           offset, ")"));
    }
  }
  return std::make_unique<codes::Sq8>(std::move(lo), std::move(scale));
}

absl::Status CheckIdTable(const char* table, const Header& h, const std::string& path) {
  const uint64_t entries = h.vector_count + h.tombstone_count;
  std::vector<bool> seen(h.vector_count, false);
  uint64_t tombstones = 0;
  for (uint64_t i = 0; i < entries; ++i) {
    if (i > 0 && EntryId(table, i) <= EntryId(table, i - 1)) {
      return Corruption(path, absl::StrCat("id table not sorted at entry ", i));
    }
    const uint32_t node = EntryNode(table, i);
    if (node == kNoNode) {
      ++tombstones;
    } else if (node >= h.vector_count || seen[node]) {
      return Corruption(path, absl::StrCat("id table entry ", i, " has a bad node"));
    } else {
      seen[node] = true;
    }
  }
  // Sorted, in range and distinct: the live entries are exactly the nodes.
  if (tombstones != h.tombstone_count) {
    return Corruption(path, "id table tombstones do not match the header");
  }
  return absl::OkStatus();
}

absl::Status CheckNodeBlock(const char* bytes, uint32_t block, const Header& h,
                            const Footer& f, const std::string& path) {
  const NodeLayout& layout = h.layout;
  const size_t block_bytes = layout.block_bytes();
  const uint64_t offset = f.nodes_offset + uint64_t{block} * block_bytes;
  const size_t body = block_bytes - kChecksumSize;
  if (Checksum64(bytes, body) != DecodeFixed64(bytes + body)) {
    return Corruption(path, absl::StrCat("node block ", block, " (offset ", offset,
                                         ") checksum mismatch"));
  }
  for (uint32_t slot = 0; slot < layout.nodes_per_block; ++slot) {
    const uint64_t node = uint64_t{block} * layout.nodes_per_block + slot;
    if (node >= h.vector_count) break;
    const char* record = bytes + size_t{slot} * layout.node_bytes;
    const uint32_t degree = DecodeFixed32(record + layout.degree_offset());
    bool ok = degree <= layout.max_degree;
    for (uint32_t k = 0; ok && k < degree; ++k) {
      ok = DecodeFixed32(record + layout.neighbors_offset() + 4 * k) < h.vector_count;
    }
    if (!ok) {
      return Corruption(path, absl::StrCat("node ", node, " (offset ", offset,
                                           ") has a bad neighbour list"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckRecordMatches(const char* record, uint32_t node, uint64_t id,
                                uint64_t sequence, const Header& h, const std::string& path) {
  if (DecodeFixed64(record + h.layout.id_offset()) == id &&
      DecodeFixed64(record + h.layout.sequence_offset()) == sequence) {
    return absl::OkStatus();
  }
  return Corruption(path, absl::StrCat("node ", node, " does not hold id ", id,
                                       " and its sequence as the id table says"));
}

}  // namespace shoal::segment
