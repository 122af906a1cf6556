// Copyright 2026 The shoal Authors.

#include "segment/segment_file.h"

#include <utility>
#include <vector>

#include "segment/segment_checks.h"
#include "util/coding.h"

namespace shoal::segment {

SegmentFile::SegmentFile(std::string path, const Header& header, const Footer& footer,
                         const char* id_table)
    : path_(std::move(path)),
      header_(header),
      footer_(footer),
      entry_count_(header.vector_count + header.tombstone_count),
      id_table_(id_table) {}

SegmentFile::SegmentFile(std::string path, const Header& header, const Footer& footer,
                         std::string id_table)
    : path_(std::move(path)),
      header_(header),
      footer_(footer),
      entry_count_(header.vector_count + header.tombstone_count),
      owned_id_table_(std::move(id_table)),
      id_table_(owned_id_table_.data()) {}

absl::Status SegmentFile::ForEachNode(
    const std::function<void(uint32_t node, uint64_t id, uint64_t sequence, const float* vector,
                             std::span<const uint32_t> neighbors)>& fn) const {
  const NodeLayout& layout = header_.layout;
  std::vector<uint32_t> neighbors;
  return ForEachRecord([&](uint32_t node, const char* record) {
    // Checked: degree <= R and every neighbour < vector_count.
    const NodeRecordFields r = DecodeNodeRecord(layout, record, &neighbors);
    fn(node, r.id, r.sequence, r.vector, neighbors);
  });
}

absl::Status SegmentFile::ForEachVector(
    const std::function<void(uint64_t id, uint64_t sequence, const float* vector)>& fn) const {
  const NodeLayout& layout = header_.layout;
  return ForEachRecord([&](uint32_t, const char* record) {
    // A record starts with its vector.
    fn(DecodeFixed64(record + layout.id_offset()),
       DecodeFixed64(record + layout.sequence_offset()),
       reinterpret_cast<const float*>(record));
  });
}

void SegmentFile::ForEachEntry(
    const std::function<void(uint64_t id, uint64_t sequence, bool live)>& fn) const {
  for (uint64_t i = 0; i < entry_count_; ++i) {
    fn(EntryId(id_table_, i), EntrySequence(id_table_, i), EntryNode(id_table_, i) != kNoNode);
  }
}

void SegmentFile::ForEachTombstone(
    const std::function<void(uint64_t id, uint64_t sequence)>& fn) const {
  for (uint64_t i = 0; i < entry_count_; ++i) {
    if (EntryNode(id_table_, i) == kNoNode) fn(EntryId(id_table_, i), EntrySequence(id_table_, i));
  }
}

}  // namespace shoal::segment
