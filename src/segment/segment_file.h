// Copyright 2026 The shoal Authors.
//
// What both segment readers share: a segment file's header, footer and id
// table (checked at open, held as they are), its record regions
// (record_regions.h: the small ones checked at open and held, the payloads
// read on demand), the calls these answer, and the scans of every node
// built on a reader's own way of reading node records in node order
// (ForEachNodeRecord) and bytes of the file (ReadBytes): the memory-mapped
// reader (segment_reader.h) verifies each block in place and hands out
// views of the mapping, the disk-resident one (disk/disk_segment_reader.h)
// reads runs of blocks, and reads bytes with pread.

#ifndef SHOAL_SRC_SEGMENT_SEGMENT_FILE_H_
#define SHOAL_SRC_SEGMENT_SEGMENT_FILE_H_

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "segment/record_regions.h"
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
  // Over ForEachNodeRecord: reads every block, offers the nodes in `nodes`.
  absl::Status ScanNodes(const float* query, const SearchOptions& options, const BitSet& nodes,
                         const AnswerFilter& admit, TopK* top,
                         SegmentSearchStats* stats) const override;

  // Records (segment.h). FindRecord reads the node's payload alone (one
  // read on disk) and checks its checksum; ForEachRecord reads the payloads
  // in runs, in node order, checking each.
  absl::StatusOr<Lookup> FindRecord(uint64_t id, uint64_t* sequence, std::vector<float>* vector,
                                    std::string* extras, uint32_t parts) const override;
  bool has_records() const override { return !records_.empty(); }
  RecordBytes record_bytes() const override;
  const RecordRegions* record_regions() const override { return &records_; }
  absl::Status ForEachRecord(
      const std::function<void(uint64_t id, uint64_t sequence, const float* vector,
                               std::string_view extras)>& fn) const override;
  absl::Status ForEachRecordIn(
      uint64_t begin, uint64_t end, uint32_t parts,
      const std::function<void(uint64_t id, uint64_t sequence, const float* vector,
                               std::string_view extras)>& fn) const override;

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
  absl::Status ForEachNodeRecord(
      const std::function<void(uint32_t node, const char* record)>& fn) const {
    return ForEachNodeRecordIn(0, header_.vector_count, fn);
  }
  // The same for nodes [begin, end) (REQUIRES: begin <= end <=
  // vector_count()): the blocks holding them are read and checked.
  virtual absl::Status ForEachNodeRecordIn(
      uint64_t begin, uint64_t end,
      const std::function<void(uint32_t node, const char* record)>& fn) const = 0;

  // Sets *out to the file's bytes [offset, offset + n): a view of the
  // mapping, or of *scratch read into. A read's error names the file and
  // offset (the file ending early is DataLossError).
  virtual absl::Status ReadBytes(uint64_t offset, size_t n, std::string* scratch,
                                 std::string_view* out) const = 0;

  // Open: reads and checks the records directory and the regions held
  // (version 3; nothing before), into records_. After the id table's checks.
  absl::Status LoadRecords();
  // VerifyAll: reads the directory and regions again from the file and
  // checks them as Open does, that they did not change since Open, that
  // they agree with each other, and every payload.
  absl::Status VerifyRecords() const;
  // Bytes LoadRecords holds in RAM (a disk reader reserves them).
  size_t record_bytes_held() const;
  // DataLossError naming node and offset unless `payload` hashes to e's.
  absl::Status CheckPayload(uint32_t node, const PayloadEntry& e,
                            std::string_view payload) const;

  const std::string path_;
  const Header header_;
  const Footer footer_;
  const uint64_t entry_count_;  // id table entries
  const std::string owned_id_table_;  // empty when the table is mapped
  const char* const id_table_;  // first id table entry

 private:
  // Reads and checks the directory and regions into *out; region bytes not
  // handed out as aligned views of a mapping are copied into *storage.
  absl::Status LoadRegions(RecordRegions* out,
                           std::array<std::vector<uint64_t>, kRegionCount>* storage) const;
  // Payloads in node order, read in runs (PayloadReader, segment_file.cc).
  class PayloadReader;

  RecordRegions records_;  // set by LoadRecords, then immutable
  std::array<std::vector<uint64_t>, kRegionCount> record_storage_;
};

}  // namespace shoal::segment

#endif  // SHOAL_SRC_SEGMENT_SEGMENT_FILE_H_
