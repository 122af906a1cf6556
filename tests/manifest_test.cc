// Copyright 2026 The shoal Authors.
//
// MANIFEST versions (version/manifest.h): the collection's vector code
// and the segments' shared flag round-trip in version 4; a version 3
// manifest (no flags) opens with no segment shared; a version 2 manifest,
// written before codes existed, opens its collections with
// VectorCode::kNone; an unknown code or flag is damage; the collections'
// attribute names round-trip in version 5, a version 4 manifest opens its
// collections with none, and a damaged attribute list is damage.

#include "version/manifest.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "util/coding.h"
#include "util/hash.h"

namespace shoal {
namespace {

CollectionMeta Collection(const std::string& name, VectorCode code) {
  CollectionMeta c;
  c.name = name;
  c.options.dim = 8;
  c.options.metric = Metric::kCosine;
  c.options.shard_count = 2;
  c.options.code = code;
  c.shards.resize(2);
  c.shards[1].flushed_sequence = 41;
  c.shards[1].segments.push_back(SegmentMeta{3, 1, 41, 40, 1});
  return c;
}

TEST(ManifestTest, TheCollectionsCodeRoundTrips) {
  Manifest m;
  m.next_file_number = 9;
  m.collections.push_back(Collection("a", VectorCode::kSq8));
  m.collections.push_back(Collection("b", VectorCode::kNone));
  absl::StatusOr<Manifest> back = DecodeManifest(EncodeManifest(m), "MANIFEST");
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->collections.size(), 2u);
  EXPECT_EQ(back->collections[0].options.code, VectorCode::kSq8);
  EXPECT_EQ(back->collections[1].options.code, VectorCode::kNone);
  EXPECT_EQ(back->collections[1].shards[1].segments[0].vectors, 40u);
}

TEST(ManifestTest, TheSharedFlagRoundTrips) {
  Manifest m;
  m.next_file_number = 9;
  m.collections.push_back(Collection("a", VectorCode::kSq8));
  m.collections[0].shards[0].segments.push_back(SegmentMeta{5, 2, 7, 6, 0, true});
  m.collections[0].shards[1].segments.insert(m.collections[0].shards[1].segments.begin(),
                                             SegmentMeta{5, 1, 1, 1, 0, true});
  absl::StatusOr<Manifest> back = DecodeManifest(EncodeManifest(m), "MANIFEST");
  ASSERT_TRUE(back.ok()) << back.status();
  const CollectionMeta& c = back->collections[0];
  ASSERT_EQ(c.shards[0].segments.size(), 1u);
  EXPECT_TRUE(c.shards[0].segments[0].shared);
  EXPECT_EQ(c.shards[0].segments[0].max_sequence, 7u);
  ASSERT_EQ(c.shards[1].segments.size(), 2u);
  EXPECT_TRUE(c.shards[1].segments[0].shared);
  EXPECT_FALSE(c.shards[1].segments[1].shared);
}

TEST(ManifestTest, AVersion3ManifestHasNoSharedSegments) {
  // Version 3 byte for byte: version 4 without the segment flags.
  std::string v3 = "SHOALMAN";
  PutFixed32(&v3, 3);
  PutFixed64(&v3, 9);  // next file number
  PutFixed32(&v3, 1);
  PutFixed32(&v3, 1);
  v3 += "a";
  PutFixed32(&v3, 8);
  v3.push_back(0);  // L2
  PutFixed32(&v3, 1);
  PutFixed32(&v3, 64);
  PutFixed32(&v3, 100);
  PutFixed32(&v3, 0x3f99999a);  // 1.2f
  v3.push_back(static_cast<char>(VectorCode::kSq8));
  PutFixed64(&v3, 17);          // shard 0: flushed sequence
  PutFixed32(&v3, 2);           // two segments
  for (uint64_t field : {3, 1, 10, 9, 1}) PutFixed64(&v3, field);
  for (uint64_t field : {4, 11, 17, 7, 0}) PutFixed64(&v3, field);
  PutFixed64(&v3, Checksum64(v3.data(), v3.size()));
  absl::StatusOr<Manifest> m = DecodeManifest(v3, "MANIFEST");
  ASSERT_TRUE(m.ok()) << m.status();
  const ShardMeta& shard = m->collections[0].shards[0];
  ASSERT_EQ(shard.segments.size(), 2u);
  EXPECT_FALSE(shard.segments[0].shared);
  EXPECT_FALSE(shard.segments[1].shared);
  EXPECT_EQ(shard.segments[1].number, 4u);
  EXPECT_EQ(m->collections[0].options.code, VectorCode::kSq8);
}

TEST(ManifestTest, TheAttributeNamesRoundTrip) {
  Manifest m;
  m.next_file_number = 9;
  m.collections.push_back(Collection("a", VectorCode::kSq8));
  m.collections[0].options.attributes = {"timestamp", "price_cents"};
  m.collections.push_back(Collection("b", VectorCode::kSq8));
  absl::StatusOr<Manifest> back = DecodeManifest(EncodeManifest(m), "MANIFEST");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->collections[0].options.attributes, m.collections[0].options.attributes);
  EXPECT_TRUE(back->collections[1].options.attributes.empty());
}

// Version 4 byte for byte (the version 3 bytes above with the flags).
std::string Version4Manifest() {
  std::string v4 = "SHOALMAN";
  PutFixed32(&v4, 4);
  PutFixed64(&v4, 9);  // next file number
  PutFixed32(&v4, 1);
  PutFixed32(&v4, 1);
  v4 += "a";
  PutFixed32(&v4, 8);
  v4.push_back(0);  // L2
  PutFixed32(&v4, 1);
  PutFixed32(&v4, 64);
  PutFixed32(&v4, 100);
  PutFixed32(&v4, 0x3f99999a);  // 1.2f
  v4.push_back(static_cast<char>(VectorCode::kSq8));
  PutFixed64(&v4, 17);  // shard 0: flushed sequence
  PutFixed32(&v4, 1);   // one segment
  for (uint64_t field : {3, 1, 10, 9, 1}) PutFixed64(&v4, field);
  v4.push_back(0);  // flags
  PutFixed64(&v4, Checksum64(v4.data(), v4.size()));
  return v4;
}

TEST(ManifestTest, AVersion4ManifestOpensItsCollectionsWithoutAttributes) {
  absl::StatusOr<Manifest> m = DecodeManifest(Version4Manifest(), "MANIFEST");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_TRUE(m->collections[0].options.attributes.empty());
  EXPECT_EQ(m->collections[0].shards[0].segments.size(), 1u);
  // Rewritten, it is version 5 and reads back the same.
  absl::StatusOr<Manifest> again = DecodeManifest(EncodeManifest(*m), "MANIFEST");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->collections[0].shards[0].segments[0].number, 3u);
}

TEST(ManifestTest, BadAttributeNamesAreDataLoss) {
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"a b"}, {"ts", "ts"}, {std::string(65, 'x')}, {""}}) {
    Manifest m;
    m.next_file_number = 9;
    m.collections.push_back(Collection("a", VectorCode::kSq8));
    m.collections[0].options.attributes = bad;
    absl::StatusOr<Manifest> back = DecodeManifest(EncodeManifest(m), "MANIFEST");
    EXPECT_EQ(back.status().code(), absl::StatusCode::kDataLoss) << bad.size();
  }
}

TEST(ManifestTest, AnUnknownSegmentFlagIsDataLoss) {
  Manifest m;
  m.next_file_number = 9;
  m.collections.push_back(Collection("a", VectorCode::kSq8));
  std::string bytes = EncodeManifest(m);
  // The one segment's flags byte is the last before the checksum.
  const size_t at = bytes.size() - 8 - 1;
  ASSERT_EQ(bytes[at], 0);
  bytes[at] = 2;
  EncodeFixed64(bytes.data() + bytes.size() - 8, Checksum64(bytes.data(), bytes.size() - 8));
  EXPECT_EQ(DecodeManifest(bytes, "MANIFEST").status().code(), absl::StatusCode::kDataLoss);
}

TEST(ManifestTest, AVersion2ManifestOpensItsCollectionsWithoutCodes) {
  // Version 2 byte for byte: version 3 without the code byte.
  std::string v2 = "SHOALMAN";
  PutFixed32(&v2, 2);
  PutFixed64(&v2, 9);  // next file number
  PutFixed32(&v2, 1);
  PutFixed32(&v2, 1);
  v2 += "a";
  PutFixed32(&v2, 8);
  v2.push_back(2);  // cosine
  PutFixed32(&v2, 1);
  PutFixed32(&v2, 64);
  PutFixed32(&v2, 100);
  PutFixed32(&v2, 0x3f99999a);  // 1.2f
  PutFixed64(&v2, 17);          // shard 0: flushed sequence
  PutFixed32(&v2, 1);           // one segment
  for (uint64_t field : {3, 1, 17, 16, 1}) PutFixed64(&v2, field);
  PutFixed64(&v2, Checksum64(v2.data(), v2.size()));
  absl::StatusOr<Manifest> m = DecodeManifest(v2, "MANIFEST");
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->collections.size(), 1u);
  EXPECT_EQ(m->collections[0].options.code, VectorCode::kNone);
  EXPECT_EQ(m->collections[0].options.metric, Metric::kCosine);
  EXPECT_EQ(m->collections[0].shards[0].segments[0].max_sequence, 17u);
}

TEST(ManifestTest, AnUnknownCodeIsDataLoss) {
  Manifest m;
  m.next_file_number = 9;
  m.collections.push_back(Collection("a", VectorCode::kSq8));
  std::string bytes = EncodeManifest(m);
  // The code byte follows alpha: magic 8, version 4, next 8, count 4, name
  // 4 + 1, dim 4, metric 1, shards 4, R 4, L 4, alpha 4.
  const size_t at = 8 + 4 + 8 + 4 + 4 + 1 + 4 + 1 + 4 + 4 + 4 + 4;
  ASSERT_EQ(bytes[at], static_cast<char>(VectorCode::kSq8));
  bytes[at] = 7;
  EncodeFixed64(bytes.data() + bytes.size() - 8, Checksum64(bytes.data(), bytes.size() - 8));
  EXPECT_EQ(DecodeManifest(bytes, "MANIFEST").status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace shoal
