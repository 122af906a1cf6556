// Copyright 2026 The shoal Authors.

#include "segment/segment_file.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distance/distance.h"
#include "segment/segment_checks.h"
#include "util/coding.h"
#include "util/status_macros.h"

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
  return ForEachNodeRecord([&](uint32_t node, const char* record) {
    // Checked: degree <= R and every neighbour < vector_count.
    const NodeRecordFields r = DecodeNodeRecord(layout, record, &neighbors);
    fn(node, r.id, r.sequence, r.vector, neighbors);
  });
}

absl::Status SegmentFile::ForEachVector(
    const std::function<void(uint64_t id, uint64_t sequence, const float* vector)>& fn) const {
  const NodeLayout& layout = header_.layout;
  return ForEachNodeRecord([&](uint32_t, const char* record) {
    // A record starts with its vector.
    fn(DecodeFixed64(record + layout.id_offset()),
       DecodeFixed64(record + layout.sequence_offset()),
       reinterpret_cast<const float*>(record));
  });
}

absl::Status SegmentFile::ScanNodes(const float* query, const SearchOptions& options,
                                    const BitSet& nodes, const AnswerFilter& admit, TopK* top,
                                    SegmentSearchStats* stats) const {
  const NodeLayout& layout = header_.layout;
  uint64_t computed = 0;
  const absl::Status status = ForEachNodeRecord([&](uint32_t node, const char* record) {
    if (!nodes.Test(node)) return;
    const uint64_t id = DecodeFixed64(record + layout.id_offset());
    if (!admit.Admits(id, DecodeFixed64(record + layout.sequence_offset()), node)) return;
    ++computed;
    top->Push(id, Distance(header_.metric, query, reinterpret_cast<const float*>(record),
                           header_.dim));
  });
  if (stats != nullptr) stats->distance_computations += computed;
  return status;
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

// ---- Records ----

namespace {
// ForEachRecord and VerifyRecords read payloads in runs of about this many
// bytes (a disk reader's pread each).
constexpr uint64_t kPayloadRunBytes = uint64_t{1} << 20;
}  // namespace

// Reads the payloads of nodes in ascending order (as they lie in the file)
// in runs, checking each.
class SegmentFile::PayloadReader {
 public:
  explicit PayloadReader(const SegmentFile& file) : file_(file) {}

  // Sets *out to node's payload (valid until the next call).
  absl::Status Next(uint32_t node, std::string_view* out) {
    const RecordRegions& r = file_.records_;
    const PayloadEntry e = r.payload(node);
    if (e.length == 0) {
      *out = std::string_view();
      return file_.CheckPayload(node, e, *out);
    }
    if (e.offset < run_offset_ || e.offset + e.length > run_offset_ + run_.size()) {
      const Region& region = r.directory().regions[kPayloadsRegion];
      const uint64_t end = region.offset + region.length;
      const uint64_t n = std::max<uint64_t>(e.length, std::min(kPayloadRunBytes, end - e.offset));
      SHOAL_RETURN_IF_ERROR(file_.ReadBytes(e.offset, n, &scratch_, &run_));
      run_offset_ = e.offset;
    }
    *out = run_.substr(e.offset - run_offset_, e.length);
    return file_.CheckPayload(node, e, *out);
  }

 private:
  const SegmentFile& file_;
  std::string scratch_;
  std::string_view run_;
  uint64_t run_offset_ = 0;
};

absl::Status SegmentFile::CheckPayload(uint32_t node, const PayloadEntry& e,
                                       std::string_view payload) const {
  if (PayloadChecksum(payload) == e.checksum) return absl::OkStatus();
  return Corruption(path_, absl::StrCat("payload of node ", node, " checksum mismatch (offset ",
                                        e.offset, ")"));
}

absl::Status SegmentFile::LoadRegions(
    RecordRegions* out, std::array<std::vector<uint64_t>, kRegionCount>* storage) const {
  const uint64_t at = footer_.id_table_offset + footer_.id_table_bytes;
  std::string scratch;
  std::string_view bytes;
  SHOAL_RETURN_IF_ERROR(ReadBytes(at, kRecordsDirectorySize, &scratch, &bytes));
  RecordsDirectory d;
  SHOAL_RETURN_IF_ERROR(DecodeRecordsDirectory(
      bytes, at, header_.vector_count,
      footer_.nodes_offset + footer_.nodes_bytes + header_.CodeAreaBytes(),
      footer_.id_table_offset, path_, &d));
  std::array<std::string_view, kRegionCount> views;
  for (size_t i = 0; i < kRegionCount; ++i) {
    const Region& region = d.regions[i];
    // Of the payloads, only their index is held.
    const uint64_t n = i == kPayloadsRegion && region.length != 0
                           ? kPayloadEntrySize * header_.vector_count
                           : region.length;
    if (n == 0) continue;
    SHOAL_RETURN_IF_ERROR(ReadBytes(region.offset, n, &scratch, &views[i]));
    if (views[i].data() == scratch.data() ||
        reinterpret_cast<uintptr_t>(views[i].data()) % kRegionAlignment != 0) {
      std::vector<uint64_t>& copy = (*storage)[i];
      copy.resize((n + 7) / 8);
      std::memcpy(copy.data(), views[i].data(), n);
      views[i] = std::string_view(reinterpret_cast<const char*>(copy.data()), n);
    }
  }
  return RecordRegions::Load(d, header_.vector_count, views, path_, out);
}

absl::Status SegmentFile::LoadRecords() {
  if (!header_.has_records_directory()) return absl::OkStatus();
  return LoadRegions(&records_, &record_storage_);
}

size_t SegmentFile::record_bytes_held() const {
  size_t bytes = 0;
  for (const std::vector<uint64_t>& v : record_storage_) bytes += v.size() * 8;
  return bytes;
}

absl::Status SegmentFile::VerifyRecords() const {
  if (!header_.has_records_directory()) return absl::OkStatus();
  RecordRegions fresh;
  std::array<std::vector<uint64_t>, kRegionCount> storage;
  SHOAL_RETURN_IF_ERROR(LoadRegions(&fresh, &storage));
  if (!(fresh.directory() == records_.directory())) {
    return Corruption(path_, "records directory changed since the segment was opened");
  }
  SHOAL_RETURN_IF_ERROR(fresh.CheckAgreement(path_));
  if (!records_.has_payloads()) return absl::OkStatus();
  PayloadReader payloads(*this);
  std::string_view payload;
  for (uint64_t node = 0; node < header_.vector_count; ++node) {
    SHOAL_RETURN_IF_ERROR(payloads.Next(static_cast<uint32_t>(node), &payload));
  }
  return absl::OkStatus();
}

Segment::RecordBytes SegmentFile::record_bytes() const {
  const auto& r = records_.directory().regions;
  return {r[kLabelsRegion].length + r[kPostingsRegion].length,
          r[kAttributesRegion].length + r[kSummariesRegion].length, r[kPayloadsRegion].length};
}

absl::StatusOr<Segment::Lookup> SegmentFile::FindRecord(uint64_t id, uint64_t* sequence,
                                                        std::vector<float>* vector,
                                                        std::string* extras,
                                                        uint32_t parts) const {
  if (extras != nullptr) extras->clear();
  SHOAL_ASSIGN_OR_RETURN(const Lookup lookup, Find(id, sequence, vector));
  if (lookup != Lookup::kLive || extras == nullptr || records_.empty()) return lookup;
  const uint32_t node = EntryNode(id_table_, FindEntry(id_table_, entry_count_, id));
  std::string scratch;
  std::string_view payload;
  if ((parts & kPayloadPart) != 0 && records_.has_payloads()) {
    const PayloadEntry e = records_.payload(node);
    SHOAL_RETURN_IF_ERROR(ReadBytes(e.offset, e.length, &scratch, &payload));
    SHOAL_RETURN_IF_ERROR(CheckPayload(node, e, payload));
  }
  records_.AppendExtras(node, parts, payload, extras);
  return lookup;
}

absl::Status SegmentFile::ForEachRecord(
    const std::function<void(uint64_t id, uint64_t sequence, const float* vector,
                             std::string_view extras)>& fn) const {
  return ForEachRecordIn(0, header_.vector_count, kAllParts, fn);
}

absl::Status SegmentFile::ForEachRecordIn(
    uint64_t begin, uint64_t end, uint32_t parts,
    const std::function<void(uint64_t id, uint64_t sequence, const float* vector,
                             std::string_view extras)>& fn) const {
  const NodeLayout& layout = header_.layout;
  end = std::min<uint64_t>(end, header_.vector_count);
  if (begin >= end) return absl::OkStatus();
  PayloadReader payloads(*this);
  const bool read_payloads = records_.has_payloads() && (parts & kPayloadPart) != 0;
  const bool any_extras = !records_.empty() && (parts & ~uint32_t{kVectorPart}) != 0;
  std::string extras;
  absl::Status failed;
  SHOAL_RETURN_IF_ERROR(ForEachNodeRecordIn(begin, end, [&](uint32_t node, const char* record) {
    if (!failed.ok()) return;
    std::string_view payload;
    if (read_payloads) {
      failed = payloads.Next(node, &payload);
      if (!failed.ok()) return;
    }
    extras.clear();
    if (any_extras) records_.AppendExtras(node, parts, payload, &extras);
    fn(DecodeFixed64(record + layout.id_offset()), DecodeFixed64(record + layout.sequence_offset()),
       reinterpret_cast<const float*>(record), extras);
  }));
  return failed;
}

}  // namespace shoal::segment
