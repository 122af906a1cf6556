// Copyright 2026 The shoal Authors.
//
// Segments with record regions (format version 3, segment/record_regions.h):
// every part round trips through both readers (mapped and disk-resident),
// records keep their node through locality and seeded orders, damage in
// each region or in one payload is DataLossError naming the file and the
// offset, and version-2 files still open (with no parts).

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "record/record_format.h"
#include "segment/record_regions.h"
#include "segment/segment.h"
#include "segment/segment_format.h"
#include "testutil/temp_dir.h"
#include "util/coding.h"
#include "util/file_system.h"
#include "util/hash.h"
#include "util/thread_pool.h"

namespace shoal {
namespace {

using segment::RecordRegions;
using segment::RecordsDirectory;

constexpr uint32_t kDim = 16;

// A record's parts as the test wrote them.
struct Parts {
  std::vector<uint32_t> labels;
  std::vector<AttributeValue> attributes;
  std::string payload;

  std::string Encoded(bool with_payload) const {
    const record::Extras e{labels, attributes, with_payload ? payload : std::string_view()};
    std::string out;
    if (!e.empty()) record::AppendEncoded(e, &out);
    return out;
  }
};

// Owns what a SegmentContents points at.
struct Input {
  std::vector<uint64_t> ids, sequences;
  std::vector<float> vectors;
  std::vector<uint64_t> tombstone_ids, tombstone_sequences;
  std::vector<std::string> extras;
  std::vector<std::string_view> extras_views;
  std::map<uint64_t, Parts> parts;  // by id

  void Add(uint64_t id, uint64_t sequence, const float* vector, const Parts& p) {
    ids.push_back(id);
    sequences.push_back(sequence);
    vectors.insert(vectors.end(), vector, vector + kDim);
    extras.push_back(p.Encoded(true));
    parts[id] = p;
  }
  SegmentContents contents() {
    extras_views.assign(extras.begin(), extras.end());
    SegmentContents c;
    c.dim = kDim;
    c.ids = ids;
    c.sequences = sequences;
    c.vectors = vectors.data();
    c.tombstone_ids = tombstone_ids;
    c.tombstone_sequences = tombstone_sequences;
    c.extras = extras_views;
    return c;
  }
};

// Row i's parts: none, labels only, attributes and a payload, or all of them.
Parts PartsOf(size_t i) {
  Parts p;
  if (i % 4 == 1 || i % 4 == 3) {
    std::set<uint32_t> l = {static_cast<uint32_t>(i % 5), 7, static_cast<uint32_t>(1000 + i % 3)};
    p.labels.assign(l.begin(), l.end());
  }
  if (i % 4 >= 2) {
    p.attributes.push_back({0, static_cast<int64_t>(i) * 1000 - 50000});
    if (i % 8 == 3) p.attributes.push_back({1, -static_cast<int64_t>(i)});
    p.attributes.push_back({2, static_cast<int64_t>(i % 10)});
    p.payload = std::string(1 + i % 37, static_cast<char>('a' + i % 26)) + absl::StrCat(i);
  }
  return p;
}

Input MakeInput(size_t n, uint64_t seed, uint64_t first_id = 100) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> gauss;
  Input in;
  std::vector<float> v(kDim);
  for (size_t i = 0; i < n; ++i) {
    for (float& x : v) x = gauss(rng);
    in.Add(first_id + 3 * i, 10 + i, v.data(), PartsOf(i));
  }
  in.tombstone_ids = {1, 2};
  in.tombstone_sequences = {5, 6};
  return in;
}

class SegmentRecordsTest : public ::testing::TestWithParam<SegmentStorage> {
 protected:
  FileSystem* fs() { return FileSystem::Default(); }
  std::string Path(const std::string& name = "seg.vamana") { return dir_.Sub(name); }

  absl::StatusOr<std::shared_ptr<Segment>> Open(const std::string& name = "seg.vamana") {
    SegmentOpenOptions options;
    options.storage = GetParam();
    return Segment::Open(fs(), Path(name), kDim, Metric::kL2, options);
  }
  std::shared_ptr<Segment> BuildAndOpen(Input& in, const std::string& name = "seg.vamana",
                                        SegmentBuildOptions options = {}) {
    options.graph.max_degree = 16;
    options.graph.build_list_size = 32;
    const absl::Status built = BuildSegment(fs(), &pool_, Path(name), in.contents(), options);
    EXPECT_TRUE(built.ok()) << built;
    auto segment = Open(name);
    EXPECT_TRUE(segment.ok()) << segment.status();
    return segment.ok() ? *segment : nullptr;
  }

  // Every id's parts as FindRecord and ForEachRecord give them.
  void ExpectRecords(const Segment& segment, const Input& in) {
    for (size_t i = 0; i < in.ids.size(); ++i) {
      const Parts& p = in.parts.at(in.ids[i]);
      uint64_t sequence = 0;
      std::string extras;
      ASSERT_OK_AND_ASSIGN(Segment::Lookup found,
                           segment.FindRecord(in.ids[i], &sequence, nullptr, &extras, kAllParts));
      EXPECT_EQ(found, Segment::Lookup::kLive);
      EXPECT_EQ(sequence, in.sequences[i]);
      EXPECT_EQ(extras, p.Encoded(true)) << "id " << in.ids[i];
      std::vector<float> vector;
      ASSERT_OK(segment
                    .FindRecord(in.ids[i], nullptr, &vector, &extras,
                                kLabelsPart | kAttributesPart)
                    .status());
      EXPECT_EQ(extras, p.Encoded(false)) << "id " << in.ids[i];
      EXPECT_TRUE(std::equal(vector.begin(), vector.end(), in.vectors.begin() + i * kDim));
      // Only the parts asked for.
      ASSERT_OK(segment.FindRecord(in.ids[i], nullptr, nullptr, &extras, kPayloadPart).status());
      EXPECT_EQ(extras, (Parts{{}, {}, p.payload}.Encoded(true))) << "id " << in.ids[i];
      ASSERT_OK(segment.FindRecord(in.ids[i], nullptr, nullptr, &extras, kLabelsPart).status());
      EXPECT_EQ(extras, (Parts{p.labels, {}, {}}.Encoded(true))) << "id " << in.ids[i];
    }
    std::string extras = "x";
    ASSERT_OK_AND_ASSIGN(Segment::Lookup found,
                         segment.FindRecord(in.tombstone_ids[0], nullptr, nullptr, &extras,
                                            kAllParts));
    EXPECT_EQ(found, Segment::Lookup::kDeleted);
    EXPECT_EQ(extras, "");
    size_t seen = 0;
    ASSERT_OK(segment.ForEachRecord(
        [&](uint64_t id, uint64_t, const float*, std::string_view e) {
          ++seen;
          EXPECT_EQ(std::string(e), in.parts.at(id).Encoded(true)) << "id " << id;
        }));
    EXPECT_EQ(seen, in.ids.size());
  }

  // The records directory of the file at Path().
  RecordsDirectory ReadDirectory() {
    const std::string file = *fs()->ReadFile(Path());
    const char* footer = file.data() + file.size() - segment::kFooterSize;
    const uint64_t at = DecodeFixed64(footer + 16) + DecodeFixed64(footer + 24);
    RecordsDirectory d;  // the regions' offset, length and checksum
    for (size_t i = 0; i < segment::kRegionCount; ++i) {
      d.regions[i] = {DecodeFixed64(file.data() + at + 24 * i),
                      DecodeFixed64(file.data() + at + 24 * i + 8),
                      DecodeFixed64(file.data() + at + 24 * i + 16)};
    }
    return d;
  }
  void FlipByte(size_t offset) {
    std::string data = *fs()->ReadFile(Path());
    ASSERT_LT(offset, data.size());
    data[offset] ^= 0x10;
    ASSERT_OK(WriteFileAtomic(fs(), Path(), data));
  }
  // Rewrites region `r` with `edit` applied and every checksum fixed.
  void EditRegion(size_t r, const std::function<void(char* region)>& edit) {
    std::string data = *fs()->ReadFile(Path());
    const size_t at = data.size() - segment::kFooterSize - segment::kRecordsDirectorySize;
    char* dir = data.data() + at;
    const uint64_t offset = DecodeFixed64(dir + 24 * r), length = DecodeFixed64(dir + 24 * r + 8);
    edit(data.data() + offset);
    EncodeFixed64(dir + 24 * r + 16, Checksum64(data.data() + offset, length));
    EncodeFixed64(dir + 152, Checksum64(dir, 152));
    ASSERT_OK(WriteFileAtomic(fs(), Path(), data));
  }

  test::TempDir dir_;
  ThreadPool pool_{2};
};

TEST_P(SegmentRecordsTest, EveryPartRoundTrips) {
  Input in = MakeInput(300, 1);
  std::shared_ptr<Segment> segment = BuildAndOpen(in);
  ASSERT_NE(segment, nullptr);
  EXPECT_TRUE(segment->has_records());
  const Segment::RecordBytes bytes = segment->record_bytes();
  EXPECT_GT(bytes.labels, 0u);
  EXPECT_GT(bytes.attributes, 0u);
  EXPECT_GT(bytes.payloads, 0u);
  ExpectRecords(*segment, in);
  EXPECT_OK(segment->VerifyAll());
}

TEST_P(SegmentRecordsTest, AccessorsAnswerByNode) {
  Input in = MakeInput(300, 2);
  std::shared_ptr<Segment> segment = BuildAndOpen(in);
  ASSERT_NE(segment, nullptr);
  const RecordRegions* r = segment->record_regions();
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->attribute_count(), 3u);
  std::vector<uint64_t> id_of_node;
  ASSERT_OK(segment->ForEachVector(
      [&](uint64_t id, uint64_t, const float*) { id_of_node.push_back(id); }));
  std::map<uint32_t, std::vector<uint32_t>> postings;
  for (uint32_t node = 0; node < id_of_node.size(); ++node) {
    const Parts& p = in.parts.at(id_of_node[node]);
    const std::span<const uint32_t> labels = r->labels(node);
    EXPECT_EQ(std::vector<uint32_t>(labels.begin(), labels.end()), p.labels);
    for (uint32_t l : p.labels) postings[l].push_back(node);
    uint32_t mask = 0;
    for (const AttributeValue& a : p.attributes) {
      mask |= 1u << a.attribute;
      EXPECT_TRUE(r->has_attribute(node, a.attribute));
      EXPECT_EQ(r->attribute(node, a.attribute), a.value);
    }
    EXPECT_EQ(r->attribute_mask(node), mask);
  }
  EXPECT_EQ(r->distinct_label_count(), postings.size());
  for (const auto& [label, nodes] : postings) {
    const std::span<const uint32_t> got = r->postings(label);
    EXPECT_EQ(std::vector<uint32_t>(got.begin(), got.end()), nodes) << "label " << label;
  }
  EXPECT_TRUE(r->postings(999).empty());
  for (uint32_t a = 0; a < 3; ++a) {
    segment::AttributeSummary want;
    std::vector<int64_t> values;
    for (const auto& [id, p] : in.parts) {
      for (const AttributeValue& v : p.attributes) {
        if (v.attribute == a) values.push_back(v.value);
      }
    }
    const segment::AttributeSummary got = r->summary(a);
    ASSERT_FALSE(values.empty());
    EXPECT_EQ(got.count, values.size());
    EXPECT_EQ(got.min, *std::min_element(values.begin(), values.end()));
    EXPECT_EQ(got.max, *std::max_element(values.begin(), values.end()));
    uint64_t sum = 0;
    for (uint64_t b : got.buckets) sum += b;
    EXPECT_EQ(sum, values.size());
    EXPECT_GT(got.buckets[0], 0u);
    EXPECT_GT(got.buckets[segment::AttributeSummary::Bucket(got.min, got.max, got.max)], 0u);
  }
  EXPECT_EQ(r->summary(3).count, 0u);
}

TEST_P(SegmentRecordsTest, ASegmentWithoutRecordsHasNoParts) {
  for (const bool empty_extras : {false, true}) {
    SCOPED_TRACE(empty_extras);
    Input in = MakeInput(50, 3);
    for (auto& [id, p] : in.parts) p = Parts();
    for (std::string& e : in.extras) e.clear();
    SegmentContents c = in.contents();
    if (!empty_extras) c.extras = {};
    SegmentBuildOptions options;
    ASSERT_OK(BuildSegment(fs(), &pool_, Path(), c, options));
    ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment, Open());
    EXPECT_FALSE(segment->has_records());
    EXPECT_EQ(segment->record_bytes().labels + segment->record_bytes().attributes +
                  segment->record_bytes().payloads,
              0u);
    ExpectRecords(*segment, in);
    EXPECT_OK(segment->VerifyAll());
  }
}

TEST_P(SegmentRecordsTest, OnlyPayloadsOrOnlyLabels) {
  for (int which = 0; which < 2; ++which) {
    Input in = MakeInput(40, 4);
    for (size_t i = 0; i < in.ids.size(); ++i) {
      Parts& p = in.parts[in.ids[i]];
      if (which == 0) p.labels.clear(), p.attributes.clear();
      if (which == 1) p.payload.clear(), p.attributes.clear();
      in.extras[i] = p.Encoded(true);
    }
    std::shared_ptr<Segment> segment = BuildAndOpen(in);
    ASSERT_NE(segment, nullptr);
    ExpectRecords(*segment, in);
    EXPECT_OK(segment->VerifyAll());
  }
}

TEST_P(SegmentRecordsTest, ASeededBuildKeepsEachRecordWithItsNode) {
  Input base_in = MakeInput(200, 5);
  std::shared_ptr<Segment> base = BuildAndOpen(base_in, "base.vamana");
  ASSERT_NE(base, nullptr);
  // A merge: the base's records as ForEachRecord gives them, every fifth
  // dropped, in reverse node order (so rows and nodes differ), then new ones.
  struct Row {
    uint64_t id, sequence;
    std::vector<float> vector;
    std::string extras;
  };
  std::vector<Row> kept;
  std::vector<bool> keep;
  ASSERT_OK(base->ForEachRecord([&](uint64_t id, uint64_t seq, const float* v, std::string_view e) {
    keep.push_back(keep.size() % 5 != 0);
    if (keep.back()) kept.push_back({id, seq, std::vector<float>(v, v + kDim), std::string(e)});
  }));
  Input merged;
  GraphSeed seed;
  seed.segment = base.get();
  seed.row_of_node.assign(keep.size(), GraphSeed::kDroppedNode);
  std::reverse(kept.begin(), kept.end());
  for (size_t i = 0; i < kept.size(); ++i) {
    merged.ids.push_back(kept[i].id);
    merged.sequences.push_back(kept[i].sequence);
    merged.vectors.insert(merged.vectors.end(), kept[i].vector.begin(), kept[i].vector.end());
    merged.extras.push_back(kept[i].extras);
    merged.parts[kept[i].id] = base_in.parts.at(kept[i].id);
  }
  for (size_t node = 0, row = kept.size(); node < keep.size(); ++node) {
    if (keep[node]) seed.row_of_node[node] = static_cast<uint32_t>(--row);
  }
  Input fresh = MakeInput(60, 6, /*first_id=*/100000);
  for (size_t i = 0; i < fresh.ids.size(); ++i) {
    merged.Add(fresh.ids[i], fresh.sequences[i], &fresh.vectors[i * kDim],
               fresh.parts.at(fresh.ids[i]));
  }
  merged.tombstone_ids = {1};
  merged.tombstone_sequences = {9};
  SegmentContents c = merged.contents();
  c.seed = &seed;
  SegmentBuildOptions options;
  options.graph.max_degree = 16;
  options.graph.build_list_size = 32;
  ASSERT_OK(BuildSegment(fs(), &pool_, Path(), c, options));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment, Open());
  ExpectRecords(*segment, merged);
  EXPECT_OK(segment->VerifyAll());
}

TEST_P(SegmentRecordsTest, DamageInEachRegionIsDataLossAtOpenNamingItsOffset) {
  Input in = MakeInput(120, 7);
  ASSERT_NE(BuildAndOpen(in), nullptr);
  const std::string pristine = *fs()->ReadFile(Path());
  const RecordsDirectory d = ReadDirectory();
  for (size_t r = 0; r < segment::kRegionCount; ++r) {
    SCOPED_TRACE(r);
    const segment::Region& region = d.regions[r];
    ASSERT_GT(region.length, 0u);
    // The payloads' index is checked at open (their bytes are not).
    const uint64_t at = region.offset + (r == segment::kPayloadsRegion ? 100 : region.length / 2);
    ASSERT_OK(WriteFileAtomic(fs(), Path(), pristine));
    FlipByte(at);
    absl::StatusOr<std::shared_ptr<Segment>> opened = Open();
    EXPECT_STATUS_CODE(opened, absl::StatusCode::kDataLoss);
    EXPECT_NE(opened.status().message().find(Path()), std::string::npos) << opened.status();
    EXPECT_NE(opened.status().message().find(absl::StrCat("offset ", region.offset)),
              std::string::npos)
        << opened.status();
  }
  // The directory itself.
  ASSERT_OK(WriteFileAtomic(fs(), Path(), pristine));
  FlipByte(pristine.size() - segment::kFooterSize - segment::kRecordsDirectorySize + 30);
  EXPECT_STATUS_CODE(Open(), absl::StatusCode::kDataLoss);
}

TEST_P(SegmentRecordsTest, DamageInOnePayloadIsDataLossForThatPayloadOnly) {
  Input in = MakeInput(120, 8);
  std::shared_ptr<Segment> segment = BuildAndOpen(in);
  ASSERT_NE(segment, nullptr);
  const RecordRegions* r = segment->record_regions();
  // The node of id 100 + 3 * 2 (row 2 has a payload).
  const uint64_t id = in.ids[2];
  uint32_t node = 0;
  {
    uint32_t i = 0;
    ASSERT_OK(segment->ForEachVector([&](uint64_t got, uint64_t, const float*) {
      if (got == id) node = i;
      ++i;
    }));
  }
  const segment::PayloadEntry e = r->payload(node);
  ASSERT_GT(e.length, 0u);
  segment.reset();
  FlipByte(e.offset + e.length - 1);
  ASSERT_OK_AND_ASSIGN(segment, Open());
  std::string extras;
  absl::StatusOr<Segment::Lookup> found =
      segment->FindRecord(id, nullptr, nullptr, &extras, kAllParts);
  EXPECT_STATUS_CODE(found, absl::StatusCode::kDataLoss);
  EXPECT_NE(found.status().message().find(Path()), std::string::npos) << found.status();
  EXPECT_NE(found.status().message().find(absl::StrCat("offset ", e.offset)), std::string::npos)
      << found.status();
  // Without the payload, and for other records, reads go on.
  EXPECT_OK(
      segment->FindRecord(id, nullptr, nullptr, &extras, kLabelsPart | kAttributesPart).status());
  EXPECT_EQ(extras, in.parts.at(id).Encoded(false));
  EXPECT_OK(segment->FindRecord(in.ids[3], nullptr, nullptr, &extras, kAllParts).status());
  EXPECT_STATUS_CODE(segment->VerifyAll(), absl::StatusCode::kDataLoss);
  EXPECT_STATUS_CODE(segment->ForEachRecord([](uint64_t, uint64_t, const float*,
                                               std::string_view) {}),
                     absl::StatusCode::kDataLoss);
}

TEST_P(SegmentRecordsTest, VerifyAllFindsRegionsThatDisagree) {
  Input in = MakeInput(120, 9);
  ASSERT_NE(BuildAndOpen(in), nullptr);
  const std::string pristine = *fs()->ReadFile(Path());
  // A posting list under another label (1003, which no node has: still
  // ascending after 1002), checksums fixed: it opens, VerifyAll fails.
  EditRegion(segment::kPostingsRegion, [](char* postings) {
    size_t i = 0;
    while (DecodeFixed32(postings + 16 * i) != 1002) ++i;
    EncodeFixed32(postings + 16 * i, 1003);
  });
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment, Open());
  EXPECT_STATUS_CODE(segment->VerifyAll(), absl::StatusCode::kDataLoss);
  // A summary's count moved from one bucket to another.
  ASSERT_OK(WriteFileAtomic(fs(), Path(), pristine));
  EditRegion(segment::kSummariesRegion, [](char* summaries) {
    EncodeFixed64(summaries + 24, DecodeFixed64(summaries + 24) - 1);
    EncodeFixed64(summaries + 32, DecodeFixed64(summaries + 32) + 1);
  });
  ASSERT_OK_AND_ASSIGN(segment, Open());
  EXPECT_STATUS_CODE(segment->VerifyAll(), absl::StatusCode::kDataLoss);
}

TEST_P(SegmentRecordsTest, AVersion2FileOpensAndReadsWithNoParts) {
  Input in = MakeInput(80, 10);
  SegmentBuildOptions options;
  options.format_version = 2;
  // Version 2 cannot hold the parts.
  EXPECT_STATUS_CODE(BuildSegment(fs(), &pool_, Path(), in.contents(), options),
                     absl::StatusCode::kInvalidArgument);
  for (auto& [id, p] : in.parts) p = Parts();
  for (std::string& e : in.extras) e.clear();
  ASSERT_OK(BuildSegment(fs(), &pool_, Path(), in.contents(), options));
  const std::string file = *fs()->ReadFile(Path());
  EXPECT_EQ(DecodeFixed32(file.data() + 8), 2u);
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment, Open());
  EXPECT_FALSE(segment->has_records());
  ASSERT_NE(segment->record_regions(), nullptr);
  EXPECT_TRUE(segment->record_regions()->empty());
  ExpectRecords(*segment, in);
  EXPECT_OK(segment->VerifyAll());
}

TEST_P(SegmentRecordsTest, MalformedExtrasAreInvalidArgument) {
  Input in = MakeInput(20, 11);
  in.extras[3] = "abc";
  EXPECT_STATUS_CODE(BuildSegment(fs(), &pool_, Path(), in.contents(), {}),
                     absl::StatusCode::kInvalidArgument);
  in = MakeInput(20, 11);
  in.extras[5] += "trailing";
  EXPECT_STATUS_CODE(BuildSegment(fs(), &pool_, Path(), in.contents(), {}),
                     absl::StatusCode::kInvalidArgument);
  in = MakeInput(20, 11);
  SegmentContents c = in.contents();
  c.extras = c.extras.subspan(1);
  EXPECT_STATUS_CODE(BuildSegment(fs(), &pool_, Path(), c, {}),
                     absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs()->Exists(Path()));
}

INSTANTIATE_TEST_SUITE_P(Storage, SegmentRecordsTest,
                         ::testing::Values(SegmentStorage::kMapped, SegmentStorage::kDisk),
                         [](const auto& info) {
                           return info.param == SegmentStorage::kMapped ? std::string("Mapped")
                                                                        : std::string("Disk");
                         });

}  // namespace
}  // namespace shoal
