// Copyright 2026 The shoal Authors.
//
// MANIFEST bytes (little-endian):
//   magic "SHOALMAN" | version u32 = 1 | collection count u32
//   per collection: name length u32 | name | dim u32 | metric u8 |
//                   shard_count u32 | max_degree u32 | build_list_size u32 | alpha f32
//   checksum u64 = xxh3_64 of every byte before it

#include "db/manifest.h"

#include <bit>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "db/validate.h"
#include "util/coding.h"
#include "util/hash.h"
#include "util/string_view.h"

namespace shoal {
namespace {

constexpr std::string_view kMagic = "SHOALMAN";
constexpr uint32_t kVersion = 1;

}  // namespace

std::string EncodeManifest(const Manifest& manifest) {
  std::string out(kMagic);
  PutFixed32(&out, kVersion);
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
  if (version != kVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "manifest ", path, " has format version ", version, "; this build reads ", kVersion));
  }
  Manifest manifest;
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
    if (!in.ok()) break;
    if (!ValidateCollectionName(c.name).ok() ||
        !ValidateCollectionOptions(c.options).ok() || c.options.shard_count == 0) {
      return damaged(absl::StrCat("collection entry ", i, " is invalid"));
    }
    manifest.collections.push_back(std::move(c));
  }
  if (!in.ok() || in.remaining() != 0) return damaged("entries do not fit its length");
  return manifest;
}

}  // namespace shoal
