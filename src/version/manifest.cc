// Copyright 2026 The shoal Authors.
//
// MANIFEST bytes (little-endian), version 5:
//   magic "SHOALMAN" | version u32 = 5 | next_file_number u64 | collection count u32
//   per collection: name length u32 | name | dim u32 | metric u8 |
//                   shard_count u32 | max_degree u32 | build_list_size u32 | alpha f32 |
//                   code u8 | attribute count u32 |
//                   per attribute: name length u32 | name
//     per shard (shard_count times): flushed_sequence u64 | segment count u32
//       per segment: number u64 | min_sequence u64 | max_sequence u64 |
//                    vectors u64 | tombstones u64 | flags u8 (bit 0: shared;
//                    the others 0)
//   checksum u64 = xxh3_64 of every byte before it
// Version 4 is version 5 without the attributes (its collections have none).
// Version 3 is version 4 without the segments' flags (no segment is shared).
// Version 2 is version 3 without the code (its collections open with
// VectorCode::kNone); version 1 is version 2 without next_file_number and
// without the shards.

#include "version/manifest.h"

#include <bit>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "version/validate_collection.h"
#include "util/coding.h"
#include "util/hash.h"
#include "shoal/record.h"
#include "util/string_view.h"

namespace shoal {
namespace {

constexpr std::string_view kMagic = "SHOALMAN";
constexpr uint32_t kVersion = 5;
constexpr uint8_t kSharedFlag = 1;

}  // namespace

std::string EncodeManifest(const Manifest& manifest) {
  std::string out(kMagic);
  PutFixed32(&out, kVersion);
  PutFixed64(&out, manifest.next_file_number);
  PutFixed32(&out, static_cast<uint32_t>(manifest.collections.size()));
  for (const CollectionMeta& c : manifest.collections) {
    PutFixed32(&out, static_cast<uint32_t>(c.name.size()));
    out.append(c.name);
    PutFixed32(&out, c.options.dim);
    out.push_back(static_cast<char>(c.options.metric));
    PutFixed32(&out, c.options.shard_count);
    PutFixed32(&out, c.options.graph.max_degree);
    PutFixed32(&out, c.options.graph.build_list_size);
    PutFixed32(&out, std::bit_cast<uint32_t>(c.options.graph.alpha));
    out.push_back(static_cast<char>(c.options.code));
    PutFixed32(&out, static_cast<uint32_t>(c.options.attributes.size()));
    for (const std::string& a : c.options.attributes) {
      PutFixed32(&out, static_cast<uint32_t>(a.size()));
      out.append(a);
    }
    for (uint32_t i = 0; i < c.options.shard_count; ++i) {
      static const ShardMeta kEmpty;
      const ShardMeta& shard = i < c.shards.size() ? c.shards[i] : kEmpty;
      PutFixed64(&out, shard.flushed_sequence);
      PutFixed32(&out, static_cast<uint32_t>(shard.segments.size()));
      for (const SegmentMeta& seg : shard.segments) {
        PutFixed64(&out, seg.number);
        PutFixed64(&out, seg.min_sequence);
        PutFixed64(&out, seg.max_sequence);
        PutFixed64(&out, seg.vectors);
        PutFixed64(&out, seg.tombstones);
        out.push_back(static_cast<char>(seg.shared ? kSharedFlag : 0));
      }
    }
  }
  PutFixed64(&out, Checksum64(out.data(), out.size()));
  return out;
}

absl::StatusOr<Manifest> DecodeManifest(std::string_view bytes, const std::string& path) {
  auto damaged = [&](std::string_view why) {
    return absl::DataLossError(absl::StrCat("manifest ", path, " is damaged: ", AsAbsl(why)));
  };
  if (bytes.size() < kMagic.size() + 16 || bytes.substr(0, kMagic.size()) != kMagic) {
    return damaged("bad magic or too short");
  }
  const size_t body = bytes.size() - 8;
  if (DecodeFixed64(bytes.data() + body) != Checksum64(bytes.data(), body)) {
    return damaged("checksum mismatch");
  }
  Decoder in(bytes.substr(kMagic.size(), body - kMagic.size()));
  const uint32_t version = in.U32();
  if (version < 1 || version > kVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "manifest ", path, " has format version ", version, "; this build reads ", kVersion));
  }
  Manifest manifest;
  if (version >= 2) manifest.next_file_number = in.U64();
  const uint32_t count = in.U32();
  for (uint32_t i = 0; i < count && in.ok(); ++i) {
    CollectionMeta c;
    const uint32_t name_length = in.U32();
    c.name = std::string(in.Bytes(name_length));
    c.options.dim = in.U32();
    c.options.metric = static_cast<Metric>(in.U8());
    c.options.shard_count = in.U32();
    c.options.graph.max_degree = in.U32();
    c.options.graph.build_list_size = in.U32();
    c.options.graph.alpha = in.F32();
    c.options.code = version >= 3 ? static_cast<VectorCode>(in.U8()) : VectorCode::kNone;
    if (version >= 5) {
      const uint32_t attributes = in.U32();
      if (attributes > kMaxAttributes) {
        return damaged(absl::StrCat("collection entry ", i, " declares ", attributes,
                                    " attributes"));
      }
      for (uint32_t a = 0; a < attributes && in.ok(); ++a) {
        const uint32_t length = in.U32();
        if (length > kMaxAttributeNameLength) break;
        c.options.attributes.emplace_back(in.Bytes(length));
      }
      if (c.options.attributes.size() != attributes) {
        return damaged(absl::StrCat("collection entry ", i, " has an invalid attribute"));
      }
    }
    if (!in.ok()) break;
    // Written before build_list_size had a limit (2026-11-25): opens with
    // the limit in effect (a list never holds more than a segment anyway).
    if (c.options.graph.build_list_size > kMaxBuildListSize) {
      c.options.graph.build_list_size = kMaxBuildListSize;
    }
    if (!ValidateCollectionName(c.name).ok() ||
        !ValidateCollectionOptions(c.options).ok() || c.options.shard_count == 0) {
      return damaged(absl::StrCat("collection entry ", i, " is invalid"));
    }
    c.shards.resize(c.options.shard_count);
    for (ShardMeta& shard : c.shards) {
      if (version < 2) break;
      shard.flushed_sequence = in.U64();
      const uint32_t segments = in.U32();
      if (!in.ok() || segments > in.remaining() / 40) break;
      for (uint32_t j = 0; j < segments; ++j) {
        SegmentMeta seg;
        seg.number = in.U64();
        seg.min_sequence = in.U64();
        seg.max_sequence = in.U64();
        seg.vectors = in.U64();
        seg.tombstones = in.U64();
        const uint8_t flags = version >= 4 ? in.U8() : 0;
        seg.shared = (flags & kSharedFlag) != 0;
        if (seg.number >= manifest.next_file_number || seg.min_sequence > seg.max_sequence ||
            (flags & ~kSharedFlag) != 0) {
          return damaged(absl::StrCat("collection entry ", i, " has an invalid segment"));
        }
        shard.segments.push_back(seg);
      }
    }
    manifest.collections.push_back(std::move(c));
  }
  if (!in.ok() || in.remaining() != 0) return damaged("entries do not fit its length");
  return manifest;
}

std::string EncodeCollectionEntry(const CollectionMeta& collection) {
  Manifest m;
  m.next_file_number = 0;
  m.collections.push_back(collection);
  return EncodeManifest(m);
}

}  // namespace shoal
