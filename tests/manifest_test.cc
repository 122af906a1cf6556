// Copyright 2026 The shoal Authors.
//
// MANIFEST versions (version/manifest.h): the collection's vector code
// round-trips in version 3; a version 2 manifest, written before codes
// existed, opens its collections with VectorCode::kNone; an unknown code is
// damage.

#include "version/manifest.h"

#include <string>

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
