// Copyright 2026 The shoal Authors.
//
// What both segment readers share: a segment file's header, footer and id
// table (checked at open, held as they are), the calls the id table and
// header answer, and the scans of every node built on a reader's own way
// of reading records in node order (ForEachRecord): the memory-mapped
// reader (segment_reader.h) verifies each block in place, the
// disk-resident one (disk/disk_segment_reader.h) reads runs of blocks.

#ifndef SHOAL_SRC_SEGMENT_SEGMENT_FILE_H_
#define SHOAL_SRC_SEGMENT_SEGMENT_FILE_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "segment/segment.h"
#include "segment/segment_format.h"

namespace shoal::segment {

class SegmentFile : public Segment {
 public:
  uint64_t vector_count() const override { return header_.vector_count; }
  uint64_t tombstone_count() const override { return header_.tombstone_count; }
  const std::string& path() const override { return path_; }
  uint32_t medoid() const override { return header_.medoid; }
  uint32_t build_list_size() const override { return header_.build_list_size; }
  absl::Status ForEachNode(
      const std::function<void(uint32_t node, uint64_t id, uint64_t sequence,
                               const float* vector, std::span<const uint32_t> neighbors)>& fn)
      const override;
  absl::Status ForEachVector(
      const std::function<void(uint64_t id, uint64_t sequence, const float* vector)>& fn)
      const override;
  void ForEachEntry(
      const std::function<void(uint64_t id, uint64_t sequence, bool live)>& fn) const override;
  void ForEachTombstone(
      const std::function<void(uint64_t id, uint64_t sequence)>& fn) const override;

 protected:
  // `id_table`: the id table's bytes (checked), in a mapping that outlives
  // this object.
  SegmentFile(std::string path, const Header& header, const Footer& footer,
              const char* id_table);
  // The id table's bytes (checked), read into memory: kept here.
  SegmentFile(std::string path, const Header& header, const Footer& footer,
              std::string id_table);

  // Calls fn(node, its record) for every node in order, each record's block
  // checked (segment_checks.h) before its first node. DataLossError for a
  // block that fails its checks; a read's error as the reader reports it.
  virtual absl::Status ForEachRecord(
      const std::function<void(uint32_t node, const char* record)>& fn) const = 0;

  const std::string path_;
  const Header header_;
  const Footer footer_;
  const uint64_t entry_count_;  // id table entries
  const std::string owned_id_table_;  // empty when the table is mapped
  const char* const id_table_;  // first id table entry
};

}  // namespace shoal::segment

#endif  // SHOAL_SRC_SEGMENT_SEGMENT_FILE_H_
