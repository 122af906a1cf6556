// Copyright 2026 The shoal Authors.
//
// BuildRecordRegions (record_regions.h): the writer's side of the record
// regions.

#include <algorithm>
#include <utility>
#include <vector>

#include "segment/record_regions.h"
#include "util/coding.h"
#include "util/hash.h"

namespace shoal::segment {
namespace {

void BuildLabels(std::span<const record::ExtrasView> nodes, RecordRegionsBuild* b) {
  RecordsDirectory& d = b->directory;
  const uint64_t n = nodes.size();
  std::string& out = b->bytes[kLabelsRegion];
  const uint32_t w = d.label_offset_bytes;
  out.assign(w * (n + 1) + 4 * d.total_labels, '\0');
  uint64_t at = 0;
  char* labels = out.data() + w * (n + 1);
  for (uint64_t i = 0; i <= n; ++i) {
    if (w == 4) {
      EncodeFixed32(out.data() + 4 * i, static_cast<uint32_t>(at));
    } else {
      EncodeFixed64(out.data() + 8 * i, at);
    }
    if (i == n) break;
    for (size_t k = 0; k < nodes[i].label_count(); ++k) {
      EncodeFixed32(labels + 4 * at++, nodes[i].label(k));
    }
  }
}

// The postings: (label, node) pairs sorted by label, nodes ascending.
void BuildPostings(std::span<const record::ExtrasView> nodes, RecordRegionsBuild* b) {
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  pairs.reserve(b->directory.total_labels);
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (size_t k = 0; k < nodes[i].label_count(); ++k) {
      pairs.emplace_back(nodes[i].label(k), static_cast<uint32_t>(i));
    }
  }
  std::sort(pairs.begin(), pairs.end());
  std::vector<std::pair<uint32_t, uint32_t>> dictionary;  // label, count
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (i == 0 || pairs[i].first != pairs[i - 1].first) dictionary.emplace_back(pairs[i].first, 0);
    ++dictionary.back().second;
  }
  b->directory.distinct_labels = dictionary.size();
  std::string& out = b->bytes[kPostingsRegion];
  out.assign(kPostingEntrySize * dictionary.size() + 4 * pairs.size(), '\0');
  uint64_t offset = kPostingEntrySize * dictionary.size();
  for (size_t i = 0; i < dictionary.size(); ++i) {
    char* e = out.data() + kPostingEntrySize * i;
    EncodeFixed32(e, dictionary[i].first);
    EncodeFixed32(e + 4, dictionary[i].second);
    EncodeFixed64(e + 8, offset);
    offset += 4 * uint64_t{dictionary[i].second};
  }
  char* lists = out.data() + kPostingEntrySize * dictionary.size();
  for (size_t i = 0; i < pairs.size(); ++i) EncodeFixed32(lists + 4 * i, pairs[i].second);
}

void BuildAttributes(std::span<const record::ExtrasView> nodes, RecordRegionsBuild* b) {
  const uint64_t n = nodes.size();
  const uint32_t a_count = b->directory.attribute_count;
  std::string& out = b->bytes[kAttributesRegion];
  const uint64_t mask_bytes = AlignRegion(4 * n);
  out.assign(mask_bytes + 8 * a_count * n, '\0');
  std::vector<AttributeSummary> summaries(a_count);
  for (uint64_t i = 0; i < n; ++i) {
    uint32_t mask = 0;
    for (size_t k = 0; k < nodes[i].attribute_count(); ++k) {
      const AttributeValue v = nodes[i].attribute(k);
      mask |= uint32_t{1} << v.attribute;
      EncodeFixed64(out.data() + mask_bytes + 8 * (v.attribute * n + i),
                    static_cast<uint64_t>(v.value));
      AttributeSummary& s = summaries[v.attribute];
      s.min = s.count == 0 ? v.value : std::min(s.min, v.value);
      s.max = s.count == 0 ? v.value : std::max(s.max, v.value);
      ++s.count;
    }
    EncodeFixed32(out.data() + 4 * i, mask);
  }
  for (uint64_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < nodes[i].attribute_count(); ++k) {
      const AttributeValue v = nodes[i].attribute(k);
      AttributeSummary& s = summaries[v.attribute];
      ++s.buckets[AttributeSummary::Bucket(s.min, s.max, v.value)];
    }
  }
  std::string& sums = b->bytes[kSummariesRegion];
  sums.assign(kSummarySize * a_count, '\0');
  for (uint32_t a = 0; a < a_count; ++a) {
    char* p = sums.data() + kSummarySize * a;
    EncodeFixed64(p, static_cast<uint64_t>(summaries[a].min));
    EncodeFixed64(p + 8, static_cast<uint64_t>(summaries[a].max));
    EncodeFixed64(p + 16, summaries[a].count);
    for (size_t k = 0; k < kHistogramBuckets; ++k) {
      EncodeFixed64(p + 24 + 8 * k, summaries[a].buckets[k]);
    }
  }
}

void BuildPayloads(std::span<const record::ExtrasView> nodes, RecordRegionsBuild* b) {
  const uint64_t n = nodes.size();
  std::string& index = b->bytes[kPayloadsRegion];
  index.assign(kPayloadEntrySize * n, '\0');
  b->payloads.resize(n);
  uint64_t offset = kPayloadEntrySize * n;
  for (uint64_t i = 0; i < n; ++i) {
    const std::string_view p = nodes[i].payload();
    char* e = index.data() + kPayloadEntrySize * i;
    EncodeFixed64(e, offset);
    EncodeFixed32(e + 8, static_cast<uint32_t>(p.size()));
    EncodeFixed32(e + 12, PayloadChecksum(p));
    b->payloads[i] = p;
    offset += p.size();
  }
  b->directory.regions[kPayloadsRegion].length = offset;
}

}  // namespace

RecordRegionsBuild BuildRecordRegions(std::span<const record::ExtrasView> nodes) {
  RecordRegionsBuild b;
  RecordsDirectory& d = b.directory;
  bool payloads = false;
  for (const record::ExtrasView& e : nodes) {
    d.total_labels += e.label_count();
    if (e.attribute_count() > 0) {
      d.attribute_count = std::max(d.attribute_count,
                                   e.attribute(e.attribute_count() - 1).attribute + 1);
    }
    payloads = payloads || !e.payload().empty();
  }
  if (d.total_labels > 0) {
    d.label_offset_bytes = d.total_labels <= UINT32_MAX ? 4 : 8;
    BuildLabels(nodes, &b);
    BuildPostings(nodes, &b);
  }
  if (d.attribute_count > 0) BuildAttributes(nodes, &b);
  if (payloads) BuildPayloads(nodes, &b);
  for (size_t i = 0; i < kRegionCount; ++i) {
    const std::string& bytes = b.bytes[i];
    if (i != kPayloadsRegion) d.regions[i].length = bytes.size();
    if (!bytes.empty()) d.regions[i].checksum = Checksum64(bytes.data(), bytes.size());
  }
  return b;
}

}  // namespace shoal::segment
