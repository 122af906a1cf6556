// Copyright 2026 The shoal Authors.
//
// libFuzzer entry point for the data set readers (src/dataset/): the same
// bytes go through ParseVectors and ParseNeighbors -- what ReadVectors and
// ReadNeighbors run on a mapped file -- in every format.
//
// Input: a byte selecting max_rows (< 0x80: that many rows; else no limit),
// then the file.
// Checks: no out-of-bounds read or overflow (ASan/UBSan); a failure is
// InvalidArgument or DataLoss and its message starts with the file name; a
// success has data.size() == rows * cols, rows <= max_rows, cols in
// [1, kMaxDatasetDim] unless empty, is what an unlimited read gives in its
// first rows, and re-encodes (where the format can be written) to bytes that
// parse to the same values, bit for bit.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "dataset/dataset_format.h"
#include "dataset/dataset_reader.h"
#include "dataset/dataset_writer.h"

namespace {

using shoal::DatasetFormat;

#define DATASET_FUZZ_CHECK(cond)                                                  \
  do {                                                                            \
    if (!(cond)) {                                                                \
      std::fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__, \
                   #cond);                                                        \
      std::abort();                                                               \
    }                                                                             \
  } while (0)

constexpr char kName[] = "fuzz.input";

constexpr DatasetFormat kFormats[] = {
    DatasetFormat::kFvecs, DatasetFormat::kIvecs, DatasetFormat::kBvecs, DatasetFormat::kFbin,
    DatasetFormat::kIbin,  DatasetFormat::kU8bin, DatasetFormat::kNpy,   DatasetFormat::kUnknown};

void CheckFailure(const absl::Status& s) {
  DATASET_FUZZ_CHECK(s.code() == absl::StatusCode::kInvalidArgument ||
                     s.code() == absl::StatusCode::kDataLoss);
  DATASET_FUZZ_CHECK(s.message().substr(0, sizeof(kName) - 1) == kName);
}

template <typename M>
void CheckShape(const M& m, uint64_t max_rows) {
  DATASET_FUZZ_CHECK(m.rows <= max_rows);
  DATASET_FUZZ_CHECK(m.data.size() == m.rows * m.cols);
  DATASET_FUZZ_CHECK(m.cols <= shoal::kMaxDatasetDim);
  DATASET_FUZZ_CHECK(m.rows == 0 || m.cols >= 1);
}

// `a` is the first rows of `b`, bit for bit (NaNs included).
template <typename M>
bool IsPrefix(const M& a, const M& b) {
  if (a.cols != b.cols || a.rows > b.rows) return false;
  return a.data.empty() ||
         std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(a.data[0])) == 0;
}

template <typename M>
bool SameBits(const M& a, const M& b) {
  return a.rows == b.rows && IsPrefix(a, b);
}

template <typename M, typename Parse, typename Encode>
void Check(std::string_view file, DatasetFormat format, uint64_t max_rows, Parse parse,
           Encode encode) {
  absl::StatusOr<M> limited = parse(file, format, kName, max_rows);
  absl::StatusOr<M> all = parse(file, format, kName, UINT64_MAX);
  if (!limited.ok()) CheckFailure(limited.status());
  if (!all.ok()) {
    CheckFailure(all.status());
    return;
  }
  CheckShape(*all, UINT64_MAX);
  // Reading fewer rows walks less, so it may miss what an unlimited read
  // finds; never the other way round.
  DATASET_FUZZ_CHECK(limited.ok());
  CheckShape(*limited, max_rows);
  DATASET_FUZZ_CHECK(IsPrefix(*limited, *all));
  if (all->cols == 0) return;  // an empty texmex file: nothing to write
  // Whatever a format yields, it can write back: bytes from .bvecs/.u8bin,
  // float32 (converted from float64) and int32 to .npy.
  absl::StatusOr<std::string> bytes = encode(*all, format, kName);
  DATASET_FUZZ_CHECK(bytes.ok());
  absl::StatusOr<M> again = parse(*bytes, format, kName, UINT64_MAX);
  DATASET_FUZZ_CHECK(again.ok());
  DATASET_FUZZ_CHECK(SameBits(*again, *all));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint64_t max_rows = data[0] < 0x80 ? data[0] : UINT64_MAX;
  const std::string_view file(reinterpret_cast<const char*>(data) + 1, size - 1);
  for (DatasetFormat format : kFormats) {
    Check<shoal::Matrix>(
        file, format, max_rows,
        [](std::string_view b, DatasetFormat f, const std::string& n, uint64_t r) {
          return shoal::ParseVectors(b, f, n, r);
        },
        [](const shoal::Matrix& m, DatasetFormat f, const std::string& n) {
          return shoal::EncodeVectors(m, f, n);
        });
    Check<shoal::IntMatrix>(
        file, format, max_rows,
        [](std::string_view b, DatasetFormat f, const std::string& n, uint64_t r) {
          return shoal::ParseNeighbors(b, f, n, r);
        },
        [](const shoal::IntMatrix& m, DatasetFormat f, const std::string& n) {
          return shoal::EncodeNeighbors(m, f, n);
        });
  }
  return 0;
}
