// Copyright 2026 The shoal Authors.
//
// The record regions of a version-3 segment (docs/format.md, "Segment
// (version 3)"): each node's labels, attributes and payload, split by part,
// and what filtered searches plan with (posting lists of labels, summaries
// of attributes). They lie between the codes and the id table, each
// starting at a multiple of 8 (kRegionAlignment), in this order; each is
// absent (length 0) when no node has that part:
//
//   labels      offsets W[n + 1] (W = 4 or 8 bytes: 4 when the segment holds
//               < 2^32 labels), then u32 labels in node order; node i's are
//               [offsets[i], offsets[i + 1]), ascending, distinct
//   attributes  masks u32[n] (bit a: node has attribute a), zeros to a
//               multiple of 8, then values i64[A][n] by attribute (a
//               column per attribute: the planner scans one at a time);
//               A = 1 + the largest attribute index present; absent = 0
//   postings    per distinct label, ascending: {label u32, count u32,
//               offset u64 (in the region)} (16 bytes), then the lists,
//               each its nodes ascending (u32)
//   summaries   per attribute a < A: min i64, max i64, count u64 (nodes
//               that have it), buckets u64[16] (152 bytes): bucket b counts
//               the values v with (v - min) * 16 / (max - min + 1) == b
//   payloads    per node {offset u64 (in the region), length u32, checksum
//               u32 = low 32 bits of xxh3-64 of the bytes} (16 bytes), then
//               the payloads in node order, back to back
//
// The records directory (kRecordsDirectorySize bytes, between the id table
// and the footer) holds each region's offset, length and xxh3-64 (for the
// payloads, of their index only: each payload is checked on its own when
// read), the counts the lengths follow from, and its own xxh3-64.

#ifndef SHOAL_SRC_SEGMENT_RECORD_REGIONS_H_
#define SHOAL_SRC_SEGMENT_RECORD_REGIONS_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "record/record_format.h"
#include "util/bit_set.h"
#include "util/mutex.h"

namespace shoal::segment {

inline constexpr size_t kRecordsDirectorySize = 160;
inline constexpr uint64_t kRegionAlignment = 8;
inline constexpr size_t kHistogramBuckets = 16;
inline constexpr size_t kPostingEntrySize = 16;
inline constexpr size_t kSummarySize = 24 + 8 * kHistogramBuckets;
inline constexpr size_t kPayloadEntrySize = 16;

enum RegionKind : size_t {
  kLabelsRegion = 0,
  kAttributesRegion = 1,
  kPostingsRegion = 2,
  kSummariesRegion = 3,
  kPayloadsRegion = 4,
  kRegionCount = 5,
};

inline uint64_t AlignRegion(uint64_t offset) {
  return (offset + kRegionAlignment - 1) & ~(kRegionAlignment - 1);
}

struct Region {
  uint64_t offset = 0;    // in the file
  uint64_t length = 0;    // 0: absent
  uint64_t checksum = 0;  // xxh3-64 (payloads: of the index); 0 when absent
  friend bool operator==(const Region&, const Region&) = default;
};

struct RecordsDirectory {
  std::array<Region, kRegionCount> regions;
  uint32_t attribute_count = 0;     // A; 0 without attributes
  uint32_t label_offset_bytes = 0;  // W: 4 or 8; 0 without labels
  uint64_t distinct_labels = 0;     // postings dictionary entries
  uint64_t total_labels = 0;        // labels of all nodes
  friend bool operator==(const RecordsDirectory&, const RecordsDirectory&) = default;
  bool empty() const {
    for (const Region& r : regions) {
      if (r.length != 0) return false;
    }
    return true;
  }
};

// Sets the regions' offsets: the first at AlignRegion(start), each next at
// AlignRegion(end of the one before). Returns where the id table starts
// (AlignRegion(end of the last)).
uint64_t PlaceRegions(uint64_t start, RecordsDirectory* d);

std::string EncodeRecordsDirectory(const RecordsDirectory& d);
// Parses and checks the directory at file offset `offset`: checksum,
// reserved bytes, regions placed as PlaceRegions(`start`) places them and
// ending where the id table starts (`end`), and each length the one the
// counts give for `nodes` nodes. DataLossError naming `path` and offset.
absl::Status DecodeRecordsDirectory(std::string_view bytes, uint64_t offset, uint64_t nodes,
                                    uint64_t start, uint64_t end, const std::string& path,
                                    RecordsDirectory* d);

// What a summary says of an attribute's values over a segment's nodes.
struct AttributeSummary {
  int64_t min = 0;  // 0 when count == 0
  int64_t max = 0;
  uint64_t count = 0;  // nodes that have the attribute
  std::array<uint64_t, kHistogramBuckets> buckets{};

  // The bucket of `value`. REQUIRES: min <= value <= max.
  static size_t Bucket(int64_t min, int64_t max, int64_t value);
};

// Where a node's payload is and what it must hash to.
struct PayloadEntry {
  uint64_t offset = 0;  // in the file
  uint32_t length = 0;
  uint32_t checksum = 0;
};
// Low 32 bits of xxh3-64 of `payload`.
uint32_t PayloadChecksum(std::string_view payload);

// A segment's record regions as a reader holds them: views of the labels,
// attributes, postings and summaries regions and of the payload index
// (checked when loaded; payload bytes are read by the reader on demand).
// Node numbers are the segment's (node i of the graph).
//
// Thread-safe: immutable once loaded (NodesByValue and LabelBits build
// what they return once, under std::call_once and a mutex).
class RecordRegions {
 public:
  RecordRegions() = default;  // a segment without records (versions 1, 2)

  // Checks `views` (for each region its bytes; for the payloads, the first
  // n * kPayloadEntrySize, the index) against the directory: checksums and
  // structure (offsets in range, labels ascending, posting lists ascending
  // and naming nodes, masks naming attributes < A, payloads back to back).
  // Each view must start at a multiple of 8 in memory and outlive *out.
  // DataLossError naming `path` and the region's offset.
  static absl::Status Load(const RecordsDirectory& d, uint64_t nodes,
                           const std::array<std::string_view, kRegionCount>& views,
                           const std::string& path, RecordRegions* out);

  const RecordsDirectory& directory() const { return dir_; }
  bool empty() const { return dir_.empty(); }

  // ---- labels ----
  bool has_labels() const { return dir_.total_labels > 0; }
  // Node's labels, ascending (empty without).
  std::span<const uint32_t> labels(uint32_t node) const;

  // ---- attributes ----
  // A: attributes this segment has values for (indices 0..A-1).
  uint32_t attribute_count() const { return dir_.attribute_count; }
  // Bit a set: node has attribute a. 0 without attributes.
  uint32_t attribute_mask(uint32_t node) const;
  bool has_attribute(uint32_t node, uint32_t a) const {
    return a < dir_.attribute_count && ((attribute_mask(node) >> a) & 1) != 0;
  }
  // Node's value of a (0 when absent). REQUIRES: a < attribute_count().
  int64_t attribute(uint32_t node, uint32_t a) const { return attribute_column(a)[node]; }
  // Every node's value of a, in node order. REQUIRES: a < attribute_count().
  std::span<const int64_t> attribute_column(uint32_t a) const;
  // The nodes that have attribute a, by ascending (value, node): for a
  // filtered search's range to select its matches by two binary searches.
  // Built in RAM the first time it is asked for (4 bytes a node; a sort),
  // then kept while the regions live. REQUIRES: a < attribute_count().
  std::span<const uint32_t> NodesByValue(uint32_t a) const;

  // ---- postings ----
  size_t distinct_label_count() const { return dir_.distinct_labels; }
  // The i-th distinct label (ascending) and its nodes (ascending).
  uint32_t posting_label(size_t i) const;
  std::span<const uint32_t> posting_list(size_t i) const;
  // The nodes that have `label`, ascending; empty when none has.
  std::span<const uint32_t> postings(uint32_t label) const;
  // The index of `label` among the distinct labels (posting_label(i) ==
  // label), or distinct_label_count() when no node has it.
  size_t LabelIndex(uint32_t label) const;
  // The nodes that have `label` as a BitSet over [0, n), for labels that at
  // least n / kLabelBitsShare nodes have (null for the others: their
  // posting lists are the cheaper form). Built in RAM the first time it is
  // asked for, then kept while the regions live: no larger than the
  // label's posting list.
  static constexpr uint64_t kLabelBitsShare = 32;
  const BitSet* LabelBits(uint32_t label) const;

  // ---- summaries ----
  // The summary of attribute a; all zero when a >= attribute_count().
  AttributeSummary summary(uint32_t a) const;

  // ---- payloads ----
  bool has_payloads() const { return dir_.regions[kPayloadsRegion].length != 0; }
  // REQUIRES: has_payloads(), node < n.
  PayloadEntry payload(uint32_t node) const;

  // Appends node's labels and attributes (those `parts`, RecordParts, names:
  // the others are not read) and `payload`, record::Encode'd, to *out;
  // appends nothing when that leaves no part.
  void AppendExtras(uint32_t node, uint32_t parts, std::string_view payload,
                    std::string* out) const;

  // VerifyAll's cross-checks: the labels and the postings hold the same
  // (node, label) pairs, and each summary is the one the attribute values
  // give. DataLossError naming `path` and the region's offset.
  absl::Status CheckAgreement(const std::string& path) const;

 private:
  absl::Status CheckLabels(const std::string& path) const;
  absl::Status CheckAttributes(const std::string& path) const;
  absl::Status CheckPostings(const std::string& path) const;
  absl::Status CheckSummaries(const std::string& path) const;
  absl::Status CheckPayloadIndex(const std::string& path) const;
  uint64_t LabelOffset(uint64_t i) const;

  // NodesByValue's orders, one an attribute, each built once; shared by
  // copies (the regions they order are the same).
  struct ValueOrders {
    explicit ValueOrders(size_t attributes) : once(attributes), nodes(attributes) {}
    std::vector<std::once_flag> once;
    std::vector<std::vector<uint32_t>> nodes;
  };

  RecordsDirectory dir_;
  uint64_t nodes_ = 0;
  std::array<std::string_view, kRegionCount> views_;
  std::shared_ptr<ValueOrders> orders_;  // set by Load
  // LabelBits' sets, built on first use. Read without a lock: a search
  // asks for one every segment it filters, from every search thread.
  struct LabelSets {
    explicit LabelSets(size_t labels)
        : by_index(std::make_unique<std::atomic<const BitSet*>[]>(labels)) {}
    // [i]: the set of the i-th distinct label, or null until built.
    const std::unique_ptr<std::atomic<const BitSet*>[]> by_index;
    Mutex mu;  // util/mutex.h: TSan sees it (Debian's absl::Mutex it does not)
    std::vector<std::unique_ptr<const BitSet>> built ABSL_GUARDED_BY(mu);
  };
  std::shared_ptr<LabelSets> label_sets_;  // set by Load
};

// The regions a writer writes, built from each node's parsed extras in
// node order: every region but the payload bytes in memory (the directory
// holds their lengths and checksums; offsets are PlaceRegions'). The
// payloads region's bytes are `payload_index` then payloads[0..n) in order.
struct RecordRegionsBuild {
  RecordsDirectory directory;
  std::array<std::string, kRegionCount> bytes;  // [kPayloadsRegion]: the index
  std::vector<std::string_view> payloads;       // per node; empty without payloads
};
RecordRegionsBuild BuildRecordRegions(std::span<const record::ExtrasView> nodes);

}  // namespace shoal::segment

#endif  // SHOAL_SRC_SEGMENT_RECORD_REGIONS_H_
