// Copyright 2026 The shoal Authors.
//
// Pq::Serialize / Pq::Deserialize: the codebook's byte layout (codes/pq.h).
// Deserialize reads bytes from files: every field is checked before it is
// used, and the size is checked against dim before anything is allocated.

#include <bit>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "codes/pq.h"
#include "util/coding.h"
#include "util/hash.h"

namespace shoal::codes {
namespace {

constexpr std::string_view kPqMagic("SHOALPQ\0", 8);
constexpr uint32_t kPqVersion = 1;
constexpr size_t kPqHeaderSize = 24;  // magic, version, dim, m, centroids
constexpr size_t kChecksumBytes = 8;

uint64_t SerializedSize(uint32_t dim, uint32_t m) {
  return kPqHeaderSize + 4 * (uint64_t{m} + 1) + 4 * uint64_t{dim} +
         4 * uint64_t{dim} * Pq::kCentroids + kChecksumBytes;
}

absl::Status Corrupt(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("PQ codebook: ", what));
}

}  // namespace

std::string Pq::Serialize() const {
  std::string out(kPqMagic);
  PutFixed32(&out, kPqVersion);
  PutFixed32(&out, dim_);
  PutFixed32(&out, subspaces());
  PutFixed32(&out, kCentroids);
  for (uint32_t offset : offsets_) PutFixed32(&out, offset);
  for (float x : mean_) PutFixed32(&out, std::bit_cast<uint32_t>(x));
  for (float x : centroids_) PutFixed32(&out, std::bit_cast<uint32_t>(x));
  PutFixed64(&out, Checksum64(out.data(), out.size()));
  return out;
}

absl::StatusOr<Pq> Pq::Deserialize(std::string_view in, uint32_t dim) {
  if (in.size() < kPqHeaderSize + kChecksumBytes) {
    return Corrupt(absl::StrCat(in.size(), " bytes, shorter than a header"));
  }
  Decoder d(in);
  if (d.Bytes(kPqMagic.size()) != kPqMagic) return Corrupt("bad magic");
  const uint32_t version = d.U32();
  if (version != kPqVersion) return Corrupt(absl::StrCat("unknown version ", version));
  const uint32_t stored_dim = d.U32(), m = d.U32(), centroids = d.U32();
  if (stored_dim != dim) {
    return Corrupt(absl::StrCat("dim ", stored_dim, ", expected ", dim));
  }
  if (m == 0 || m > dim) return Corrupt(absl::StrCat(m, " subspaces for dim ", dim));
  if (centroids != kCentroids) return Corrupt(absl::StrCat(centroids, " centroids, not 256"));
  if (in.size() != SerializedSize(dim, m)) {
    return Corrupt(absl::StrCat(in.size(), " bytes, expected ", SerializedSize(dim, m)));
  }
  const size_t body = in.size() - kChecksumBytes;
  if (Checksum64(in.data(), body) != DecodeFixed64(in.data() + body)) {
    return Corrupt("checksum mismatch");
  }
  std::vector<uint32_t> offsets(m + 1);
  for (uint32_t& offset : offsets) offset = d.U32();
  for (uint32_t s = 0; s < m; ++s) {
    if (offsets[s] >= offsets[s + 1]) return Corrupt("chunk offsets not increasing");
  }
  if (offsets[0] != 0 || offsets[m] != dim) return Corrupt("chunk offsets do not span dim");
  std::vector<float> mean(dim);
  for (float& x : mean) x = d.F32();
  std::vector<float> table(size_t{dim} * kCentroids);
  for (float& x : table) x = d.F32();
  if (!d.ok()) return Corrupt("truncated");  // unreachable: the size was checked
  for (const std::vector<float>* v : {&mean, &table}) {
    for (float x : *v) {
      if (!std::isfinite(x)) return Corrupt("a mean or centroid value is not finite");
    }
  }
  return Pq(dim, std::move(offsets), std::move(mean), std::move(table));
}

}  // namespace shoal::codes
