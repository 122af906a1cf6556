// Copyright 2026 The shoal Authors.

#include "segment/record_regions.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "segment/segment_format.h"
#include "util/coding.h"
#include "util/hash.h"

namespace shoal::segment {
namespace {

constexpr size_t kRegionEntrySize = 24;
constexpr size_t kAttributeCountAt = kRegionCount * kRegionEntrySize;  // 120
constexpr size_t kLabelOffsetBytesAt = kAttributeCountAt + 4;         // 124
constexpr size_t kDistinctLabelsAt = kAttributeCountAt + 8;           // 128
constexpr size_t kTotalLabelsAt = kAttributeCountAt + 16;             // 136
constexpr size_t kReservedAt = kAttributeCountAt + 24;                // 144
constexpr size_t kDirectoryChecksumAt = kAttributeCountAt + 32;       // 152
static_assert(kDirectoryChecksumAt + 8 == kRecordsDirectorySize);

constexpr const char* kRegionNames[kRegionCount] = {"labels", "attributes", "postings",
                                                    "summaries", "payloads"};

// Bytes of the masks (padded) before the attribute values.
uint64_t MaskBytes(uint64_t nodes) { return AlignRegion(4 * nodes); }

}  // namespace

uint64_t PlaceRegions(uint64_t start, RecordsDirectory* d) {
  uint64_t at = AlignRegion(start);
  for (Region& r : d->regions) {
    r.offset = at;
    at = AlignRegion(at + r.length);
  }
  return at;
}

std::string EncodeRecordsDirectory(const RecordsDirectory& d) {
  std::string out(kRecordsDirectorySize, '\0');
  char* p = out.data();
  for (size_t i = 0; i < kRegionCount; ++i) {
    EncodeFixed64(p + kRegionEntrySize * i, d.regions[i].offset);
    EncodeFixed64(p + kRegionEntrySize * i + 8, d.regions[i].length);
    EncodeFixed64(p + kRegionEntrySize * i + 16, d.regions[i].checksum);
  }
  EncodeFixed32(p + kAttributeCountAt, d.attribute_count);
  EncodeFixed32(p + kLabelOffsetBytesAt, d.label_offset_bytes);
  EncodeFixed64(p + kDistinctLabelsAt, d.distinct_labels);
  EncodeFixed64(p + kTotalLabelsAt, d.total_labels);
  EncodeFixed64(p + kDirectoryChecksumAt, Checksum64(p, kDirectoryChecksumAt));
  return out;
}

absl::Status DecodeRecordsDirectory(std::string_view bytes, uint64_t offset, uint64_t nodes,
                                    uint64_t start, uint64_t end, const std::string& path,
                                    RecordsDirectory* d) {
  const auto bad = [&](const std::string& what) {
    return Corruption(path, absl::StrCat("records directory (offset ", offset, "): ", what));
  };
  if (bytes.size() != kRecordsDirectorySize) return bad("truncated");
  const char* p = bytes.data();
  if (Checksum64(p, kDirectoryChecksumAt) != DecodeFixed64(p + kDirectoryChecksumAt)) {
    return bad("checksum mismatch");
  }
  if (DecodeFixed64(p + kReservedAt) != 0) return bad("reserved bytes not zero");
  for (size_t i = 0; i < kRegionCount; ++i) {
    d->regions[i] = {DecodeFixed64(p + kRegionEntrySize * i),
                     DecodeFixed64(p + kRegionEntrySize * i + 8),
                     DecodeFixed64(p + kRegionEntrySize * i + 16)};
  }
  d->attribute_count = DecodeFixed32(p + kAttributeCountAt);
  d->label_offset_bytes = DecodeFixed32(p + kLabelOffsetBytesAt);
  d->distinct_labels = DecodeFixed64(p + kDistinctLabelsAt);
  d->total_labels = DecodeFixed64(p + kTotalLabelsAt);
  // Bound every count before it is multiplied (nodes < 2^31).
  if (start > end) return bad("regions start after the id table");
  if (d->attribute_count > kMaxAttributes) return bad("attribute count over the limit");
  if (d->total_labels > nodes * kMaxLabels) return bad("more labels than nodes may have");
  if (d->distinct_labels > d->total_labels) return bad("more distinct labels than labels");
  if ((d->total_labels == 0) != (d->distinct_labels == 0)) return bad("label counts disagree");
  const uint32_t w = d->total_labels == 0 ? 0 : d->total_labels <= UINT32_MAX ? 4 : 8;
  if (d->label_offset_bytes != w) return bad("label offset width does not match the count");
  const uint64_t a = d->attribute_count;
  const uint64_t want[kRegionCount] = {
      w == 0 ? 0 : w * (nodes + 1) + 4 * d->total_labels,
      a == 0 ? 0 : MaskBytes(nodes) + 8 * a * nodes,
      w == 0 ? 0 : kPostingEntrySize * d->distinct_labels + 4 * d->total_labels,
      kSummarySize * a,
      0,
  };
  for (size_t i = 0; i < kRegionCount; ++i) {
    const Region& r = d->regions[i];
    if (r.length > end - start) return bad(absl::StrCat(kRegionNames[i], " region too long"));
    if (i == kPayloadsRegion) {
      if (r.length != 0 && (nodes == 0 || r.length < kPayloadEntrySize * nodes)) {
        return bad("payloads region shorter than its index");
      }
    } else if (r.length != want[i]) {
      return bad(absl::StrCat(kRegionNames[i], " region length does not match its counts"));
    }
    if (r.length == 0 && r.checksum != 0) {
      return bad(absl::StrCat("absent ", kRegionNames[i], " region has a checksum"));
    }
  }
  RecordsDirectory placed = *d;
  if (PlaceRegions(start, &placed) != end) return bad("regions do not end at the id table");
  for (size_t i = 0; i < kRegionCount; ++i) {
    if (placed.regions[i].offset != d->regions[i].offset) {
      return bad(absl::StrCat(kRegionNames[i], " region offset out of place"));
    }
  }
  return absl::OkStatus();
}

size_t AttributeSummary::Bucket(int64_t min, int64_t max, int64_t value) {
  const unsigned __int128 range =
      static_cast<unsigned __int128>(static_cast<uint64_t>(max) - static_cast<uint64_t>(min)) +
      1;
  const unsigned __int128 at = static_cast<uint64_t>(value) - static_cast<uint64_t>(min);
  return static_cast<size_t>(at * kHistogramBuckets / range);
}

uint32_t PayloadChecksum(std::string_view payload) {
  return static_cast<uint32_t>(Checksum64(payload.data(), payload.size()));
}

// ---- RecordRegions ----

absl::Status RecordRegions::Load(const RecordsDirectory& d, uint64_t nodes,
                                 const std::array<std::string_view, kRegionCount>& views,
                                 const std::string& path, RecordRegions* out) {
  RecordRegions r;
  r.dir_ = d;
  r.nodes_ = nodes;
  r.views_ = views;
  for (size_t i = 0; i < kRegionCount; ++i) {
    const uint64_t want = i == kPayloadsRegion && d.regions[i].length != 0
                              ? kPayloadEntrySize * nodes
                              : d.regions[i].length;
    if (views[i].size() != want ||
        reinterpret_cast<uintptr_t>(views[i].data()) % kRegionAlignment != 0) {
      return Corruption(path, absl::StrCat(kRegionNames[i], " region (offset ",
                                           d.regions[i].offset, ") not held whole"));
    }
    if (want != 0 && Checksum64(views[i].data(), views[i].size()) != d.regions[i].checksum) {
      return Corruption(path, absl::StrCat(kRegionNames[i], " region checksum mismatch (offset ",
                                           d.regions[i].offset, ")"));
    }
  }
  absl::Status s = r.CheckLabels(path);
  if (s.ok()) s = r.CheckAttributes(path);
  if (s.ok()) s = r.CheckPostings(path);
  if (s.ok()) s = r.CheckSummaries(path);
  if (s.ok()) s = r.CheckPayloadIndex(path);
  if (!s.ok()) return s;
  r.orders_ = std::make_shared<ValueOrders>(d.attribute_count);
  r.label_sets_ = std::make_shared<LabelSets>(d.distinct_labels);
  *out = r;
  return absl::OkStatus();
}

const BitSet* RecordRegions::LabelBits(uint32_t label) const {
  const size_t i = LabelIndex(label);
  if (i == dir_.distinct_labels) return nullptr;
  const std::span<const uint32_t> nodes = posting_list(i);
  if (nodes.empty() || nodes.size() < nodes_ / kLabelBitsShare) return nullptr;
  std::atomic<const BitSet*>& slot = label_sets_->by_index[i];
  if (const BitSet* set = slot.load(std::memory_order_acquire); set != nullptr) return set;
  MutexLock lock(&label_sets_->mu);
  if (const BitSet* set = slot.load(std::memory_order_relaxed); set != nullptr) return set;
  auto bits = std::make_unique<BitSet>();
  bits->Reset(nodes_);
  for (const uint32_t node : nodes) bits->Set(node);  // CheckPostings: node < n
  slot.store(bits.get(), std::memory_order_release);
  label_sets_->built.push_back(std::move(bits));
  return label_sets_->built.back().get();
}

std::span<const uint32_t> RecordRegions::NodesByValue(uint32_t a) const {
  ValueOrders& orders = *orders_;
  std::call_once(orders.once[a], [&] {
    const std::span<const int64_t> column = attribute_column(a);
    std::vector<uint32_t>& nodes = orders.nodes[a];
    for (uint32_t node = 0; node < nodes_; ++node) {
      if (has_attribute(node, a)) nodes.push_back(node);
    }
    std::sort(nodes.begin(), nodes.end(), [&](uint32_t x, uint32_t y) {
      return column[x] < column[y] || (column[x] == column[y] && x < y);
    });
  });
  return orders.nodes[a];
}

uint64_t RecordRegions::LabelOffset(uint64_t i) const {
  const char* p = views_[kLabelsRegion].data();
  return dir_.label_offset_bytes == 4 ? DecodeFixed32(p + 4 * i) : DecodeFixed64(p + 8 * i);
}

std::span<const uint32_t> RecordRegions::labels(uint32_t node) const {
  if (!has_labels()) return {};
  const uint64_t lo = LabelOffset(node), hi = LabelOffset(uint64_t{node} + 1);
  const char* base = views_[kLabelsRegion].data() + dir_.label_offset_bytes * (nodes_ + 1);
  return {reinterpret_cast<const uint32_t*>(base) + lo, static_cast<size_t>(hi - lo)};
}

uint32_t RecordRegions::attribute_mask(uint32_t node) const {
  if (dir_.attribute_count == 0) return 0;
  return reinterpret_cast<const uint32_t*>(views_[kAttributesRegion].data())[node];
}

std::span<const int64_t> RecordRegions::attribute_column(uint32_t a) const {
  const char* base = views_[kAttributesRegion].data() + MaskBytes(nodes_) + 8 * a * nodes_;
  return {reinterpret_cast<const int64_t*>(base), static_cast<size_t>(nodes_)};
}

uint32_t RecordRegions::posting_label(size_t i) const {
  return DecodeFixed32(views_[kPostingsRegion].data() + kPostingEntrySize * i);
}

std::span<const uint32_t> RecordRegions::posting_list(size_t i) const {
  const char* entry = views_[kPostingsRegion].data() + kPostingEntrySize * i;
  const uint32_t count = DecodeFixed32(entry + 4);
  const uint64_t offset = DecodeFixed64(entry + 8);
  return {reinterpret_cast<const uint32_t*>(views_[kPostingsRegion].data() + offset), count};
}

size_t RecordRegions::LabelIndex(uint32_t label) const {
  size_t lo = 0, hi = dir_.distinct_labels;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (posting_label(mid) < label) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == dir_.distinct_labels || posting_label(lo) != label) return dir_.distinct_labels;
  return lo;
}

std::span<const uint32_t> RecordRegions::postings(uint32_t label) const {
  const size_t i = LabelIndex(label);
  if (i == dir_.distinct_labels) return {};
  return posting_list(i);
}

AttributeSummary RecordRegions::summary(uint32_t a) const {
  AttributeSummary s;
  if (a >= dir_.attribute_count) return s;
  const char* p = views_[kSummariesRegion].data() + kSummarySize * a;
  s.min = static_cast<int64_t>(DecodeFixed64(p));
  s.max = static_cast<int64_t>(DecodeFixed64(p + 8));
  s.count = DecodeFixed64(p + 16);
  for (size_t b = 0; b < kHistogramBuckets; ++b) s.buckets[b] = DecodeFixed64(p + 24 + 8 * b);
  return s;
}

PayloadEntry RecordRegions::payload(uint32_t node) const {
  const char* e = views_[kPayloadsRegion].data() + kPayloadEntrySize * node;
  return {dir_.regions[kPayloadsRegion].offset + DecodeFixed64(e), DecodeFixed32(e + 8),
          DecodeFixed32(e + 12)};
}

void RecordRegions::AppendExtras(uint32_t node, uint32_t parts, std::string_view payload,
                                 std::string* out) const {
  AttributeValue values[kMaxAttributes];
  size_t count = 0;
  if ((parts & kAttributesPart) != 0) {
    for (uint32_t mask = attribute_mask(node); mask != 0; mask &= mask - 1) {
      const uint32_t a = static_cast<uint32_t>(__builtin_ctz(mask));
      values[count++] = {a, attribute(node, a)};
    }
  }
  const record::Extras e{(parts & kLabelsPart) != 0 ? labels(node) : std::span<const uint32_t>(),
                         std::span<const AttributeValue>(values, count), payload};
  if (!e.empty()) record::AppendEncoded(e, out);
}

// ---- Checks at load ----

absl::Status RecordRegions::CheckLabels(const std::string& path) const {
  if (!has_labels()) return absl::OkStatus();
  const auto bad = [&](uint64_t node, const std::string& what) {
    return Corruption(path, absl::StrCat("labels region (offset ",
                                         dir_.regions[kLabelsRegion].offset, "): node ", node,
                                         " ", what));
  };
  if (LabelOffset(0) != 0) return bad(0, "does not start at 0");
  for (uint64_t i = 0; i < nodes_; ++i) {
    const uint64_t lo = LabelOffset(i), hi = LabelOffset(i + 1);
    if (hi < lo || hi - lo > kMaxLabels || hi > dir_.total_labels) {
      return bad(i, "has an out-of-range label count");
    }
    const std::span<const uint32_t> l = labels(static_cast<uint32_t>(i));
    for (size_t k = 1; k < l.size(); ++k) {
      if (l[k - 1] >= l[k]) return bad(i, "has labels not ascending and distinct");
    }
  }
  if (LabelOffset(nodes_) != dir_.total_labels) return bad(nodes_, "ends short of the labels");
  return absl::OkStatus();
}

absl::Status RecordRegions::CheckAttributes(const std::string& path) const {
  const uint32_t a_count = dir_.attribute_count;
  if (a_count == 0) return absl::OkStatus();
  const auto bad = [&](uint64_t node, const std::string& what) {
    return Corruption(path, absl::StrCat("attributes region (offset ",
                                         dir_.regions[kAttributesRegion].offset, "): node ",
                                         node, " ", what));
  };
  uint32_t present = 0;
  for (uint64_t i = 0; i < nodes_; ++i) {
    const uint32_t mask = attribute_mask(static_cast<uint32_t>(i));
    if (a_count < 32 && (mask >> a_count) != 0) return bad(i, "names an attribute >= A");
    present |= mask;
    for (uint32_t a = 0; a < a_count; ++a) {
      if (((mask >> a) & 1) == 0 && attribute(static_cast<uint32_t>(i), a) != 0) {
        return bad(i, "has a value for an absent attribute");
      }
    }
  }
  if (((present >> (a_count - 1)) & 1) == 0) {
    return bad(nodes_, "(none) has the last attribute: A is not 1 + the largest index");
  }
  return absl::OkStatus();
}

absl::Status RecordRegions::CheckPostings(const std::string& path) const {
  if (!has_labels()) return absl::OkStatus();
  const std::string_view v = views_[kPostingsRegion];
  const auto bad = [&](uint64_t i, const std::string& what) {
    return Corruption(path, absl::StrCat("postings region (offset ",
                                         dir_.regions[kPostingsRegion].offset, "): entry ", i,
                                         " ", what));
  };
  uint64_t expected = kPostingEntrySize * dir_.distinct_labels;
  for (uint64_t i = 0; i < dir_.distinct_labels; ++i) {
    const char* entry = v.data() + kPostingEntrySize * i;
    const uint32_t count = DecodeFixed32(entry + 4);
    if (i > 0 && posting_label(i - 1) >= posting_label(i)) {
      return bad(i, "label not ascending");
    }
    if (count == 0 || count > nodes_ || DecodeFixed64(entry + 8) != expected ||
        4 * uint64_t{count} > v.size() - expected) {
      return bad(i, "list out of place");
    }
    expected += 4 * uint64_t{count};
    const std::span<const uint32_t> list = posting_list(i);
    for (size_t k = 0; k < list.size(); ++k) {
      if (list[k] >= nodes_ || (k > 0 && list[k - 1] >= list[k])) {
        return bad(i, "list not ascending node numbers");
      }
    }
  }
  if (expected != v.size()) return bad(dir_.distinct_labels, "(end): lists end short");
  return absl::OkStatus();
}

absl::Status RecordRegions::CheckSummaries(const std::string& path) const {
  for (uint32_t a = 0; a < dir_.attribute_count; ++a) {
    const AttributeSummary s = summary(a);
    uint64_t sum = 0;
    for (uint64_t b : s.buckets) sum += std::min<uint64_t>(b, nodes_ + 1);
    const bool ok = s.count == 0 ? s.min == 0 && s.max == 0 && sum == 0
                                 : s.count <= nodes_ && s.min <= s.max && sum == s.count;
    if (!ok) {
      return Corruption(path, absl::StrCat("summaries region (offset ",
                                           dir_.regions[kSummariesRegion].offset,
                                           "): attribute ", a, " inconsistent"));
    }
  }
  return absl::OkStatus();
}

absl::Status RecordRegions::CheckPayloadIndex(const std::string& path) const {
  if (!has_payloads()) return absl::OkStatus();
  const Region& region = dir_.regions[kPayloadsRegion];
  uint64_t expected = kPayloadEntrySize * nodes_;
  for (uint64_t i = 0; i < nodes_; ++i) {
    const char* e = views_[kPayloadsRegion].data() + kPayloadEntrySize * i;
    const uint32_t length = DecodeFixed32(e + 8);
    if (DecodeFixed64(e) != expected || length > kMaxPayloadBytes ||
        length > region.length - expected) {
      return Corruption(path, absl::StrCat("payloads region (offset ", region.offset,
                                           "): node ", i, "'s payload out of place"));
    }
    expected += length;
  }
  if (expected != region.length) {
    return Corruption(path, absl::StrCat("payloads region (offset ", region.offset,
                                         "): payloads end short of the region"));
  }
  return absl::OkStatus();
}

// ---- VerifyAll ----

absl::Status RecordRegions::CheckAgreement(const std::string& path) const {
  // Both hold total_labels pairs (Load checked the counts), the postings'
  // distinct: they agree when every posting is a label of its node.
  for (uint64_t i = 0; i < dir_.distinct_labels; ++i) {
    const uint32_t label = posting_label(i);
    for (uint32_t node : posting_list(i)) {
      const std::span<const uint32_t> l = labels(node);
      if (!std::binary_search(l.begin(), l.end(), label)) {
        return Corruption(path, absl::StrCat("postings region (offset ",
                                             dir_.regions[kPostingsRegion].offset, "): label ",
                                             label, " lists node ", node,
                                             ", whose labels do not have it"));
      }
    }
  }
  for (uint32_t a = 0; a < dir_.attribute_count; ++a) {
    AttributeSummary want;
    const std::span<const int64_t> column = attribute_column(a);
    bool first = true;
    for (uint64_t i = 0; i < nodes_; ++i) {
      if (!has_attribute(static_cast<uint32_t>(i), a)) continue;
      want.min = first ? column[i] : std::min(want.min, column[i]);
      want.max = first ? column[i] : std::max(want.max, column[i]);
      first = false;
      ++want.count;
    }
    for (uint64_t i = 0; i < nodes_; ++i) {
      if (has_attribute(static_cast<uint32_t>(i), a)) {
        ++want.buckets[AttributeSummary::Bucket(want.min, want.max, column[i])];
      }
    }
    const AttributeSummary got = summary(a);
    if (got.min != want.min || got.max != want.max || got.count != want.count ||
        got.buckets != want.buckets) {
      return Corruption(path, absl::StrCat("summaries region (offset ",
                                           dir_.regions[kSummariesRegion].offset,
                                           "): attribute ", a,
                                           "'s summary does not match its values"));
    }
  }
  return absl::OkStatus();
}

}  // namespace shoal::segment
