// Copyright 2026 The shoal Authors.
//
// FuzzDatasetReaders (fuzz_targets.h): the same bytes through ParseVectors
// and ParseNeighbors -- what ReadVectors and ReadNeighbors run on a mapped
// file -- in every format, limited and unlimited, and back through the
// writer.

#include <cstring>
#include <string>
#include <string_view>

#include "dataset/dataset_format.h"
#include "dataset/dataset_reader.h"
#include "dataset/dataset_writer.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_targets.h"

namespace shoal::fuzz {
namespace {

const std::string kName = "fuzz.input";

constexpr DatasetFormat kFormats[] = {
    DatasetFormat::kFvecs, DatasetFormat::kIvecs, DatasetFormat::kBvecs, DatasetFormat::kFbin,
    DatasetFormat::kIbin,  DatasetFormat::kU8bin, DatasetFormat::kNpy,   DatasetFormat::kUnknown};

// The reader and writer for M (Matrix: vectors; IntMatrix: neighbour ids).
template <typename M>
absl::StatusOr<M> Parse(std::string_view bytes, DatasetFormat format, uint64_t max_rows);
template <>
absl::StatusOr<Matrix> Parse<Matrix>(std::string_view bytes, DatasetFormat format,
                                     uint64_t max_rows) {
  return ParseVectors(bytes, format, kName, max_rows);
}
template <>
absl::StatusOr<IntMatrix> Parse<IntMatrix>(std::string_view bytes, DatasetFormat format,
                                           uint64_t max_rows) {
  return ParseNeighbors(bytes, format, kName, max_rows);
}
absl::StatusOr<std::string> Encode(const Matrix& m, DatasetFormat format) {
  return EncodeVectors(m, format, kName);
}
absl::StatusOr<std::string> Encode(const IntMatrix& m, DatasetFormat format) {
  return EncodeNeighbors(m, format, kName);
}

void CheckFailure(const absl::Status& s) {
  FUZZ_CHECK(absl::IsInvalidArgument(s) || absl::IsDataLoss(s));
  FUZZ_CHECK(s.message().substr(0, kName.size()) == kName);
}

template <typename M>
void CheckShape(const M& m, uint64_t max_rows) {
  FUZZ_CHECK(m.rows <= max_rows);
  FUZZ_CHECK(m.data.size() == m.rows * m.cols);
  FUZZ_CHECK(m.cols <= kMaxDatasetDim);
  FUZZ_CHECK(m.rows == 0 || m.cols >= 1);
}

// `a` is the first rows of `b`, bit for bit (NaNs included).
template <typename M>
bool IsPrefix(const M& a, const M& b) {
  if (a.cols != b.cols || a.rows > b.rows) return false;
  return a.data.empty() ||
         std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(a.data[0])) == 0;
}

template <typename M>
void Check(std::string_view file, DatasetFormat format, uint64_t max_rows) {
  const absl::StatusOr<M> limited = Parse<M>(file, format, max_rows);
  const absl::StatusOr<M> all = Parse<M>(file, format, UINT64_MAX);
  if (!limited.ok()) CheckFailure(limited.status());
  if (!all.ok()) {
    CheckFailure(all.status());
    return;
  }
  CheckShape(*all, UINT64_MAX);
  // Reading fewer rows walks less, so it may miss what an unlimited read
  // finds; never the other way round.
  FUZZ_CHECK(limited.ok());
  CheckShape(*limited, max_rows);
  FUZZ_CHECK(IsPrefix(*limited, *all));
  if (all->cols == 0) return;  // an empty texmex file: nothing to write
  // Whatever a format yields, it can write back: bytes to .bvecs/.u8bin,
  // float32 (converted from float64 or bytes) and int32 to .npy.
  const absl::StatusOr<std::string> bytes = Encode(*all, format);
  FUZZ_CHECK(bytes.ok());
  const absl::StatusOr<M> again = Parse<M>(*bytes, format, UINT64_MAX);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->rows == all->rows && IsPrefix(*again, *all));
}

}  // namespace

int FuzzDatasetReaders(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint64_t max_rows = data[0] < 0x80 ? data[0] : UINT64_MAX;
  const std::string_view file(reinterpret_cast<const char*>(data) + 1, size - 1);
  for (DatasetFormat format : kFormats) {
    Check<Matrix>(file, format, max_rows);
    Check<IntMatrix>(file, format, max_rows);
  }
  return 0;
}

}  // namespace shoal::fuzz
