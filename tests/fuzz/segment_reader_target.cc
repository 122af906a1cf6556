// Copyright 2026 The shoal Authors.
//
// FuzzSegmentReader (fuzz_targets.h): a segment file served from memory
// (OneFileSystem), opened and then read every way the engine reads one.

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_targets.h"
#include "fuzz/one_file_system.h"
#include "segment/segment.h"
#include "record/record_format.h"
#include "segment/record_regions.h"
#include "segment/segment_format.h"
#include "util/coding.h"
#include "util/hash.h"
#include "util/memory_budget.h"
#include "util/top_k.h"

namespace shoal::fuzz {
namespace {

using segment::kChecksumSize;
using segment::kFooterSize;
using segment::kHeaderSize;

constexpr char kPath[] = "fuzz/seg-000001.vamana";
// Lookups checked per kind (live, deleted, absent), to bound the time per input.
constexpr size_t kMaxLookups = 64;

// Recomputes every checksum the format has (docs/format.md, "Segment"):
// the header's; each node block's, for the blocks the header's dim, R and
// block_count place inside the file; the id table's, where the footer puts
// it; the codes' (when the header names a code kind), between the node
// blocks and the id table; and the footer's.
void FixSegmentChecksums(char* d, size_t size) {
  if (size < kHeaderSize + kFooterSize) return;
  EncodeFixed64(d + kHeaderSize - kChecksumSize, Checksum64(d, kHeaderSize - kChecksumSize));
  const uint32_t dim = DecodeFixed32(d + 16);
  const uint32_t degree = DecodeFixed32(d + 20);
  const size_t end = size - kFooterSize;  // node blocks and id table lie before it
  if (dim >= 1 && dim <= segment::kMaxDim && degree >= 1 && degree <= segment::kMaxDegree) {
    const size_t block = segment::NodeLayout::For(dim, degree).block_bytes();
    const uint64_t blocks = std::min<uint64_t>(DecodeFixed64(d + 56), (end - kHeaderSize) / block);
    for (uint64_t b = 0; b < blocks; ++b) {
      char* p = d + kHeaderSize + b * block;
      EncodeFixed64(p + block - kChecksumSize, Checksum64(p, block - kChecksumSize));
    }
  }
  char* footer = d + end;
  const uint64_t table = DecodeFixed64(footer + 16);
  const uint64_t table_bytes = DecodeFixed64(footer + 24);
  if (table <= end && table_bytes <= end - table) {
    EncodeFixed64(footer + 32, Checksum64(d + table, table_bytes));
  }
  // Version 2: the codes lie between the node blocks and the id table;
  // version 3: the record regions too, then the codes end where the header
  // says (8 * dim + n * code_bytes after the blocks).
  const bool v3 = DecodeFixed32(d + 8) >= 3;
  const uint64_t nodes = DecodeFixed64(footer + 0);
  const uint64_t nodes_bytes = DecodeFixed64(footer + 8);
  uint64_t codes_end = table;
  if (v3) {
    const uint64_t n = DecodeFixed64(d + 24);
    const uint64_t code_bytes = DecodeFixed32(d + 76);
    codes_end = n <= end && code_bytes <= 1 << 16 ? nodes + nodes_bytes + 8 * uint64_t{dim} +
                                                        n * code_bytes
                                                  : end + 1;
  }
  if (DecodeFixed32(d + 72) != 0 && nodes <= end && nodes_bytes <= end - nodes &&
      codes_end <= end && codes_end >= nodes + nodes_bytes && nodes + nodes_bytes <= end) {
    EncodeFixed64(footer + 40,
                  Checksum64(d + nodes + nodes_bytes, codes_end - nodes - nodes_bytes));
  }
  // Version 3: each record region's checksum (the payloads': of their
  // index, n entries), then the records directory's.
  if (v3 && end >= segment::kRecordsDirectorySize) {
    char* dir = d + end - segment::kRecordsDirectorySize;
    const uint64_t n = DecodeFixed64(d + 24);
    for (size_t r = 0; r < segment::kRegionCount; ++r) {
      const uint64_t offset = DecodeFixed64(dir + 24 * r);
      uint64_t length = DecodeFixed64(dir + 24 * r + 8);
      if (r == segment::kPayloadsRegion && length != 0 && n <= end) {
        length = std::min<uint64_t>(length, segment::kPayloadEntrySize * n);
      }
      if (length != 0 && offset <= end && length <= end - offset) {
        EncodeFixed64(dir + 24 * r + 16, Checksum64(d + offset, length));
      }
    }
    EncodeFixed64(dir + 152, Checksum64(dir, 152));
  }
  EncodeFixed64(footer + 48, Checksum64(footer, 48));
}

struct Entry {
  uint64_t id;
  uint64_t sequence;
  const float* vector;  // null for a tombstone
};

// Reads every float so that ASan sees an out-of-bounds vector pointer (the
// volatile store keeps the compiler from dropping the loads).
volatile float touch_sink;
void Touch(const float* v, uint32_t dim) {
  float sum = 0;
  for (uint32_t i = 0; i < dim; ++i) sum += v[i];
  touch_sink = sum;
}

// Asks Find about each entry the listing gave and about ids it does not
// hold. Aborts when a promise that holds for any file that opened breaks;
// returns whether every answer agreed with the listing, which is promised
// only for a file that passes VerifyAll. (`seg` and the listing's segment
// map the same buffer; Find copies, so vectors compare by value.)
bool FindAgrees(const Segment& seg, uint32_t dim, const std::vector<Entry>& live,
                const std::vector<Entry>& tombstones) {
  bool agrees = true;
  std::set<uint64_t> held;
  for (const Entry& e : live) held.insert(e.id);
  for (const Entry& e : tombstones) held.insert(e.id);
  for (size_t i = 0; i < std::min(live.size(), kMaxLookups); ++i) {
    uint64_t sequence = 0;
    std::vector<float> vector;
    const absl::StatusOr<Segment::Lookup> found = seg.Find(live[i].id, &sequence, &vector);
    FUZZ_CHECK(found.ok() || absl::IsDataLoss(found.status()));
    agrees = agrees && found.ok() && *found == Segment::Lookup::kLive &&
             sequence == live[i].sequence && vector.size() == dim &&
             std::memcmp(vector.data(), live[i].vector, vector.size() * sizeof(float)) == 0;
  }
  // A tombstone is in the id table alone: Find never reads a block for it.
  for (size_t i = 0; i < std::min(tombstones.size(), kMaxLookups); ++i) {
    uint64_t sequence = 0;
    const absl::StatusOr<Segment::Lookup> found = seg.Find(tombstones[i].id, &sequence, nullptr);
    FUZZ_CHECK(found.ok() && *found == Segment::Lookup::kDeleted);
    FUZZ_CHECK(sequence == tombstones[i].sequence);
  }
  // Ids next to held ones, and the extremes, that the listing does not have.
  std::vector<uint64_t> absent = {0, 1, UINT64_MAX};
  for (size_t i = 0; i < std::min(live.size(), kMaxLookups); ++i) absent.push_back(live[i].id + 1);
  for (uint64_t id : absent) {
    if (held.count(id) != 0) continue;
    const absl::StatusOr<Segment::Lookup> found = seg.Find(id, nullptr, nullptr);
    FUZZ_CHECK(found.ok() || absl::IsDataLoss(found.status()));
    agrees = agrees && found.ok() && *found == Segment::Lookup::kAbsent;
  }
  return agrees;
}

// Reads the record regions every way (accessors over every node, label
// and attribute; FindRecord with and without payloads; ForEachRecord).
// Aborts when a promise for any opened file breaks (extras that do not
// parse, a posting naming a node out of range, an error other than
// DataLoss); returns whether every read succeeded and agreed with the
// accessors, promised only for a file that passes VerifyAll.
bool CheckRecords(const Segment& seg, const std::vector<Entry>& live) {
  const segment::RecordRegions* r = seg.record_regions();
  FUZZ_CHECK(r != nullptr);
  FUZZ_CHECK(r->empty() != seg.has_records());
  const uint64_t n = seg.vector_count();
  uint64_t sum = 0;
  for (uint32_t node = 0; node < n; ++node) {
    for (uint32_t label : r->labels(node)) sum += label;
    for (uint32_t a = 0; a < r->attribute_count(); ++a) sum += r->attribute(node, a);
    sum += r->attribute_mask(node);
  }
  for (size_t i = 0; i < r->distinct_label_count(); ++i) {
    for (uint32_t node : r->posting_list(i)) FUZZ_CHECK(node < n);
    FUZZ_CHECK(r->postings(r->posting_label(i)).size() == r->posting_list(i).size());
  }
  for (uint32_t a = 0; a <= r->attribute_count(); ++a) sum += r->summary(a).count;
  touch_sink = static_cast<float>(sum);
  bool agrees = true;
  for (size_t i = 0; i < std::min(live.size(), kMaxLookups); ++i) {
    for (const bool with_payload : {false, true}) {
      std::string extras;
      const absl::StatusOr<Segment::Lookup> found =
          seg.FindRecord(live[i].id, nullptr, nullptr, &extras,
                         with_payload ? kAllParts : (kLabelsPart | kAttributesPart));
      FUZZ_CHECK(found.ok() || absl::IsDataLoss(found.status()));
      agrees = agrees && found.ok();
      if (!found.ok()) continue;
      record::ExtrasView view;
      size_t consumed = 0;
      FUZZ_CHECK(record::Parse(extras, &view, &consumed).ok() && consumed == extras.size());
    }
  }
  const absl::Status each = seg.ForEachRecord(
      [&](uint64_t, uint64_t, const float*, std::string_view extras) {
        record::ExtrasView view;
        size_t consumed = 0;
        FUZZ_CHECK(record::Parse(extras, &view, &consumed).ok() && consumed == extras.size());
      });
  FUZZ_CHECK(each.ok() || absl::IsDataLoss(each));
  return agrees && each.ok();
}

// Beam searches for each query, with and without a visibility filter.
// `params`: bits 0-3 k - 1, bits 4-5 beam_width - 1, bits 6-7 list_size / 16.
void CheckSearch(const Segment& seg, const std::vector<std::vector<float>>& queries,
                 uint8_t params, const std::vector<Entry>& live, bool complete) {
  SearchOptions options;
  options.k = 1 + (params & 15);
  options.beam_width = 1 + ((params >> 4) & 3);
  options.list_size = (params >> 6) * 16;  // may be < k (or 0: the segment walk takes 1)
  std::set<uint64_t> ids;
  for (const Entry& e : live) ids.insert(e.id);
  for (const std::vector<float>& q : queries) {
    for (const bool filtered : {false, true}) {
      TopK top(options.k);
      SegmentSearchStats stats;
      std::function<bool(uint64_t, uint64_t)> visible;
      if (filtered) visible = [](uint64_t id, uint64_t) { return id % 2 == 0; };
      const absl::Status s =
          seg.Search(q.data(), options, visible, &top, filtered ? &stats : nullptr);
      FUZZ_CHECK(s.ok() || absl::IsDataLoss(s));
      if (complete) FUZZ_CHECK(s.ok());
      if (!s.ok()) continue;
      const std::vector<Neighbor> got = top.Take();
      FUZZ_CHECK(got.size() <= std::min<uint64_t>(options.k, seg.vector_count()));
      for (const Neighbor& n : got) {
        if (complete) FUZZ_CHECK(ids.count(n.id) == 1);
        if (filtered) FUZZ_CHECK(n.id % 2 == 0);
      }
    }
  }
}

// Everything an opened segment answers. `listed` lists the entries (and so
// checks every node block); `fresh`, a second Open of the same file with no
// block checked yet, takes the searches, lookups and VerifyAll, so that they
// meet unchecked blocks as the engine's do. `dim` is the segment's.
void CheckOpened(const Segment& listed, const Segment& fresh, uint32_t dim, uint8_t params) {
  std::vector<Entry> live, tombstones;
  const absl::Status each =
      listed.ForEachVector([&](uint64_t id, uint64_t sequence, const float* vector) {
        FUZZ_CHECK(vector != nullptr);
        Touch(vector, dim);
        live.push_back({id, sequence, vector});
      });
  FUZZ_CHECK(each.ok() || absl::IsDataLoss(each));
  if (each.ok()) FUZZ_CHECK(live.size() == listed.vector_count());
  listed.ForEachTombstone([&](uint64_t id, uint64_t sequence) {
    tombstones.push_back({id, sequence, nullptr});
  });
  FUZZ_CHECK(tombstones.size() == listed.tombstone_count());
  // Every node block passed its checks: no read of the file can fail.
  const bool complete = each.ok();
  // The graph as a merge reads it, from the copy with no block checked yet:
  // the same entries in the same order, every neighbour a node.
  size_t nodes = 0;
  const absl::Status graph = fresh.ForEachNode(
      [&](uint32_t node, uint64_t id, uint64_t sequence, const float* vector,
          std::span<const uint32_t> neighbors) {
        FUZZ_CHECK(node == nodes);
        if (complete) FUZZ_CHECK(live[node].id == id && live[node].sequence == sequence);
        Touch(vector, dim);
        for (uint32_t v : neighbors) FUZZ_CHECK(v < fresh.vector_count());
        ++nodes;
      });
  FUZZ_CHECK(graph.ok() || absl::IsDataLoss(graph));
  FUZZ_CHECK(graph.ok() == complete);
  if (graph.ok()) FUZZ_CHECK(nodes == fresh.vector_count());

  std::vector<std::vector<float>> queries;
  queries.emplace_back(dim);
  for (uint32_t i = 0; i < dim; ++i) queries[0][i] = static_cast<float>(int(i % 7) - 3);
  if (!live.empty()) {
    queries.emplace_back(live.front().vector, live.front().vector + dim);
    queries.emplace_back(live.back().vector, live.back().vector + dim);
  }
  CheckSearch(fresh, queries, params, live, complete);
  const bool agrees = FindAgrees(fresh, dim, live, tombstones);

  const bool records_agree = CheckRecords(fresh, live);

  const absl::Status verified = fresh.VerifyAll();
  FUZZ_CHECK(verified.ok() || absl::IsDataLoss(verified));
  if (verified.ok()) FUZZ_CHECK(complete && agrees && records_agree);
}

}  // namespace

int FuzzSegmentReader(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const uint8_t flags = data[0];
  const uint8_t params = data[1];
  // A buffer of exactly the file's size: a read past its end is a heap
  // overflow.
  const size_t file_size = size - 2;
  const std::unique_ptr<char[]> file(new char[file_size]);
  std::memcpy(file.get(), data + 2, file_size);
  if (flags & 1) FixSegmentChecksums(file.get(), file_size);
  // The dim and metric the header names, as the engine (which knows them
  // from the manifest) would expect; with flag bit 1, a different dim.
  uint32_t dim = 1;
  Metric metric = Metric::kL2;
  if (file_size >= 20) {
    dim = DecodeFixed32(file.get() + 16);
    const uint8_t m = static_cast<uint8_t>(file[12]);
    if (m <= static_cast<uint8_t>(Metric::kCosine)) metric = static_cast<Metric>(m);
  }
  const bool mismatch = (flags & 2) != 0;
  if (mismatch) ++dim;
  OneFileSystem fs(kPath, std::string_view(file.get(), file_size));
  absl::StatusOr<std::shared_ptr<Segment>> listed = Segment::Open(&fs, kPath, dim, metric);
  if (!listed.ok()) {
    const absl::Status& s = listed.status();
    FUZZ_CHECK(absl::IsDataLoss(s) || absl::IsFailedPrecondition(s) ||
               (mismatch && absl::IsInvalidArgument(s)));
    FUZZ_CHECK(s.message().find(kPath) != std::string_view::npos);
    return 0;
  }
  FUZZ_CHECK(!mismatch);
  // With flag bit 2 the searches, lookups and checks go to a disk-resident
  // reader (blocks read on demand, a node cache from params' low bits). It
  // accepts every file the mapped reader accepts, except that filling its
  // cache reads (and checks) the blocks where walks start at open: a damaged
  // one there is DataLoss at open, and then the file does not verify.
  // With flag bit 3 too, and dim <= 128, a memory budget of one byte: the
  // reader derives 4-bit codes from the file's SQ8 codes (a second pass
  // over them) and has no cache. (Fitting the levels and each query's
  // tables cost ~256 operations a dimension: at 1,100-d, under the
  // fuzzer's instrumentation, they took most of its time.)
  SegmentOpenOptions how;
  if (flags & 4) {
    how.storage = SegmentStorage::kDisk;
    how.node_cache_bytes = static_cast<size_t>(params & 3) * 4096;
    if ((flags & 8) && dim <= 128) how.budget = MemoryBudget::Create(1);
  }
  absl::StatusOr<std::shared_ptr<Segment>> fresh = Segment::Open(&fs, kPath, dim, metric, how);
  if (!fresh.ok()) {
    FUZZ_CHECK(how.node_cache_bytes > 0 && how.budget == nullptr &&
               absl::IsDataLoss(fresh.status()));
    FUZZ_CHECK(fresh.status().message().find(kPath) != std::string_view::npos);
    FUZZ_CHECK(!(*listed)->VerifyAll().ok());
    return 0;
  }
  CheckOpened(**listed, **fresh, dim, params);
  return 0;
}

}  // namespace shoal::fuzz
