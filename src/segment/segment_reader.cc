// Copyright 2026 The shoal Authors.

#include "segment/segment_reader.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "segment/segment_checks.h"
#include "util/coding.h"
#include "util/hash.h"
#include "util/status_macros.h"

namespace shoal {

namespace segment {

SegmentReader::SegmentReader(std::string path, std::unique_ptr<ReadOnlyMappedFile> file,
                             const Header& header, const Footer& footer,
                             std::unique_ptr<codes::Sq8> sq8)
    : SegmentFile(std::move(path), header, footer, file->data() + footer.id_table_offset),
      file_(std::move(file)),
      nodes_(file_->data() + footer.nodes_offset),
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
                                                             uint32_t dim, Metric metric,
                                                             ThreadPool* background) {
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
  SHOAL_RETURN_IF_ERROR(CheckShape(header, dim, metric, path));
  SHOAL_RETURN_IF_ERROR(CheckLayout(header, footer, size, path));
  if (Checksum64(data + footer.id_table_offset, footer.id_table_bytes) !=
      footer.id_table_checksum) {
    return Corruption(path, absl::StrCat("id table checksum mismatch (offset ",
                                         footer.id_table_offset, ")"));
  }
  std::unique_ptr<codes::Sq8> sq8;
  if (header.code == VectorCode::kSq8) {
    const uint64_t offset = footer.nodes_offset + footer.nodes_bytes;
    SHOAL_ASSIGN_OR_RETURN(sq8, ReadCodes(data + offset, offset, header, footer, path));
  }
  std::shared_ptr<SegmentReader> segment(
      new SegmentReader(path, std::move(file), header, footer, std::move(sq8)));
  segment->background_ = background;
  SHOAL_RETURN_IF_ERROR(segment->CheckIdTable());
  SHOAL_RETURN_IF_ERROR(segment->LoadRecords());
  segment->ChooseEntryPoints();
  return segment;
}

absl::Status SegmentReader::CheckIdTable() const {
  return segment::CheckIdTable(id_table_, header_, path_);
}

absl::Status SegmentReader::VerifyBlock(uint32_t block) const {
  SHOAL_RETURN_IF_ERROR(CheckNodeBlock(Block(block), block, header_, footer_, path_));
  verified_[block >> 6].fetch_or(uint64_t{1} << (block & 63), std::memory_order_relaxed);
  return absl::OkStatus();
}

absl::StatusOr<Segment::Lookup> SegmentReader::Find(uint64_t id, uint64_t* sequence,
                                                    std::vector<float>* vector) const {
  const uint64_t i = FindEntry(id_table_, entry_count_, id);
  if (i == entry_count_) return Lookup::kAbsent;
  const uint32_t node = EntryNode(id_table_, i);
  if (node != kNoNode) {
    SHOAL_RETURN_IF_ERROR(EnsureVerified(BlockOf(node)));
    const char* record = NodeRecord(node);
    SHOAL_RETURN_IF_ERROR(
        CheckRecordMatches(record, node, id, EntrySequence(id_table_, i), header_, path_));
    if (vector != nullptr) vector->assign(NodeVector(record), NodeVector(record) + header_.dim);
  }
  if (sequence != nullptr) *sequence = EntrySequence(id_table_, i);
  return node == kNoNode ? Lookup::kDeleted : Lookup::kLive;
}

absl::Status SegmentReader::ForEachNodeRecordIn(
    uint64_t begin, uint64_t end,
    const std::function<void(uint32_t node, const char* record)>& fn) const {
  for (uint64_t node = begin; node < end; ++node) {
    const uint32_t n = static_cast<uint32_t>(node);
    if (node == begin || node % header_.layout.nodes_per_block == 0) {
      SHOAL_RETURN_IF_ERROR(EnsureVerified(BlockOf(n)));
    }
    fn(n, NodeRecord(n));
  }
  return absl::OkStatus();
}

absl::Status SegmentReader::ReadBytes(uint64_t offset, size_t n, std::string*,
                                      std::string_view* out) const {
  if (offset > file_->size() || n > file_->size() - offset) {
    return Corruption(path_, absl::StrCat("file ends before offset ", offset + n));
  }
  *out = std::string_view(file_->data() + offset, n);
  return absl::OkStatus();
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
    const uint64_t offset = footer_.nodes_offset + footer_.nodes_bytes;
    SHOAL_RETURN_IF_ERROR(ReadCodes(data + offset, offset, header_, footer_, path_).status());
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
  return VerifyRecords();
}

}  // namespace segment
}  // namespace shoal
