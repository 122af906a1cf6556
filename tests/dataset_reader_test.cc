// Copyright 2026 The shoal Authors.
//
// The data set readers and writers (src/dataset/): hand-written bytes of
// every format read as the format says (so the reader is not checked only
// against our own writer), round trips, conversions, max_rows, and every
// kind of damage -- each returning InvalidArgument or DataLoss with the file
// name and the byte offset in the message.

#include <bit>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "dataset/dataset_format.h"
#include "dataset/dataset_reader.h"
#include "dataset/dataset_writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testutil/temp_dir.h"
#include "util/coding.h"
#include "util/file_system.h"

namespace shoal {
namespace {

using ::absl::StatusCode;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr DatasetFormat kVectorFormats[] = {DatasetFormat::kFvecs, DatasetFormat::kBvecs,
                                            DatasetFormat::kFbin, DatasetFormat::kU8bin,
                                            DatasetFormat::kNpy};
constexpr DatasetFormat kNeighborFormats[] = {DatasetFormat::kIvecs, DatasetFormat::kIbin,
                                              DatasetFormat::kNpy};
constexpr DatasetFormat kTexmexFormats[] = {DatasetFormat::kFvecs, DatasetFormat::kIvecs,
                                            DatasetFormat::kBvecs};
constexpr DatasetFormat kBinFormats[] = {DatasetFormat::kFbin, DatasetFormat::kIbin,
                                         DatasetFormat::kU8bin};

std::string Name(DatasetFormat f) { return std::string(FormatName(f)); }
std::string Msg(const absl::Status& s) { return std::string(s.message()); }

// Bytes from hex digits; spaces are for the reader's eye.
std::string Hex(std::string_view hex) {
  std::string out;
  int nibble = -1;
  for (char c : hex) {
    if (c == ' ') continue;
    const int v = c <= '9' ? c - '0' : c - 'a' + 10;
    if (nibble < 0) {
      nibble = v;
    } else {
      out.push_back(static_cast<char>(nibble * 16 + v));
      nibble = -1;
    }
  }
  return out;
}

std::string I32(int32_t v) {
  std::string s;
  PutFixed32(&s, static_cast<uint32_t>(v));
  return s;
}

// A version 1.0 preamble for `dict` padded as NumPy pads it (64-byte data
// alignment, final '\n').
std::string NpyV1(const std::string& dict) {
  std::string header = dict;
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  return out + header;
}

// rows x cols vectors whose values fit every format, .bvecs included.
Matrix SmallVectors(uint64_t rows, uint32_t cols) {
  Matrix m{rows, cols, {}};
  for (uint64_t i = 0; i < rows * cols; ++i) m.data.push_back(static_cast<float>(i * 37 % 256));
  return m;
}

IntMatrix SmallNeighbors(uint64_t rows, uint32_t cols) {
  IntMatrix m{rows, cols, {}};
  for (uint64_t i = 0; i < rows * cols; ++i) m.data.push_back(static_cast<int32_t>(i * 1001) - 3);
  return m;
}

std::string EncodeOrDie(const Matrix& m, DatasetFormat f) {
  absl::StatusOr<std::string> s = EncodeVectors(m, f, "test");
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : std::string();
}

std::string EncodeOrDie(const IntMatrix& m, DatasetFormat f) {
  absl::StatusOr<std::string> s = EncodeNeighbors(m, f, "test");
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : std::string();
}

// Success when `s` has `code` and its message names `name` and "at byte <at>".
::testing::AssertionResult IsErrorAt(const absl::Status& s, StatusCode code,
                                     const std::string& name, uint64_t at) {
  const std::string where = "at byte " + std::to_string(at);
  if (s.code() == code && Msg(s).find(name) != std::string::npos &&
      Msg(s).find(where) != std::string::npos) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << s << "\n  want " << absl::StatusCodeToString(code)
                                       << " naming '" << name << "' and '" << where << "'";
}

// ---- Formats by extension ----

TEST(DatasetFormatTest, DetectFormatReadsTheExtensionCaseInsensitively) {
  EXPECT_EQ(DetectFormat("sift/sift_base.fvecs"), DatasetFormat::kFvecs);
  EXPECT_EQ(DetectFormat("gt.ivecs"), DatasetFormat::kIvecs);
  EXPECT_EQ(DetectFormat("/d/bigann_base.BVECS"), DatasetFormat::kBvecs);
  EXPECT_EQ(DetectFormat("base.1B.fbin"), DatasetFormat::kFbin);
  EXPECT_EQ(DetectFormat("gt.ibin"), DatasetFormat::kIbin);
  EXPECT_EQ(DetectFormat("base.u8bin"), DatasetFormat::kU8bin);
  EXPECT_EQ(DetectFormat("emb.Npy"), DatasetFormat::kNpy);
}

TEST(DatasetFormatTest, DetectFormatIsUnknownWithoutAKnownExtension) {
  EXPECT_EQ(DetectFormat("base.fvecs.bak"), DatasetFormat::kUnknown);
  EXPECT_EQ(DetectFormat("fvecs"), DatasetFormat::kUnknown);
  EXPECT_EQ(DetectFormat("data.fvecs/base"), DatasetFormat::kUnknown);
  EXPECT_EQ(DetectFormat("base.txt"), DatasetFormat::kUnknown);
  EXPECT_EQ(DetectFormat(""), DatasetFormat::kUnknown);
}

// ---- Hand-written bytes ----

TEST(DatasetReaderTest, FvecsHandWrittenBytesRead) {
  // Two 2-d vectors (1, 2) and (3, 4): the example of dataset_format.h.
  const std::string bytes = Hex("02000000 0000803f 00000040  02000000 00004040 00008040");
  ASSERT_OK_AND_ASSIGN(Matrix m, ParseVectors(bytes, DatasetFormat::kFvecs, "x"));
  EXPECT_EQ(m, (Matrix{2, 2, {1, 2, 3, 4}}));
}

TEST(DatasetReaderTest, IvecsHandWrittenBytesRead) {
  const std::string bytes = Hex("03000000 01000000 02000000 ffffffff");
  ASSERT_OK_AND_ASSIGN(IntMatrix m, ParseNeighbors(bytes, DatasetFormat::kIvecs, "x"));
  EXPECT_EQ(m, (IntMatrix{1, 3, {1, 2, -1}}));
}

TEST(DatasetReaderTest, BvecsBytesAreConvertedToFloat) {
  const std::string bytes = Hex("04000000 00017fff  04000000 02030405");
  ASSERT_OK_AND_ASSIGN(Matrix m, ParseVectors(bytes, DatasetFormat::kBvecs, "x"));
  EXPECT_EQ(m, (Matrix{2, 4, {0, 1, 127, 255, 2, 3, 4, 5}}));
}

TEST(DatasetReaderTest, FbinHandWrittenBytesRead) {
  const std::string bytes = Hex("02000000 01000000  0000803f 000000c0");
  ASSERT_OK_AND_ASSIGN(Matrix m, ParseVectors(bytes, DatasetFormat::kFbin, "x"));
  EXPECT_EQ(m, (Matrix{2, 1, {1, -2}}));
}

TEST(DatasetReaderTest, IbinHandWrittenBytesRead) {
  const std::string bytes = Hex("01000000 02000000  07000000 09000000");
  ASSERT_OK_AND_ASSIGN(IntMatrix m, ParseNeighbors(bytes, DatasetFormat::kIbin, "x"));
  EXPECT_EQ(m, (IntMatrix{1, 2, {7, 9}}));
}

TEST(DatasetReaderTest, U8binBytesAreConvertedToFloat) {
  const std::string bytes = Hex("02000000 03000000  00 80 ff 01 02 03");
  ASSERT_OK_AND_ASSIGN(Matrix m, ParseVectors(bytes, DatasetFormat::kU8bin, "x"));
  EXPECT_EQ(m, (Matrix{2, 3, {0, 128, 255, 1, 2, 3}}));
}

// What NumPy 1.x/2.x np.save writes for np.array([[1,2,3],[4,5,6]], '<f4'):
// header_len 0x76 puts the data at byte 128.
const std::string kNumpyF4 =
    std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" + std::string(58, ' ') +
    "\n" + Hex("0000803f 00000040 00004040 00008040 0000a040 0000c040");

TEST(DatasetReaderTest, NpyAsNumpyWritesItReads) {
  ASSERT_EQ(kNumpyF4.size(), 128u + 24u);
  ASSERT_OK_AND_ASSIGN(Matrix m, ParseVectors(kNumpyF4, DatasetFormat::kNpy, "x"));
  EXPECT_EQ(m, (Matrix{2, 3, {1, 2, 3, 4, 5, 6}}));
}

TEST(DatasetReaderTest, WrittenNpyIsByteForByteWhatNumpyWrites) {
  EXPECT_EQ(EncodeOrDie(Matrix{2, 3, {1, 2, 3, 4, 5, 6}}, DatasetFormat::kNpy), kNumpyF4);
}

TEST(DatasetReaderTest, NpyVersions2And3HaveAFourByteHeaderLength) {
  const std::string dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (1, 2), }\n";
  for (char major : {'\x02', '\x03'}) {
    std::string bytes("\x93NUMPY", 6);
    bytes.push_back(major);
    bytes.push_back(0);
    bytes += I32(static_cast<int32_t>(dict.size())) + dict + I32(5) + I32(-6);
    ASSERT_OK_AND_ASSIGN(IntMatrix m, ParseNeighbors(bytes, DatasetFormat::kNpy, "x"));
    EXPECT_EQ(m, (IntMatrix{1, 2, {5, -6}}));
  }
}

TEST(DatasetReaderTest, NpyHeaderMayOrderKeysFreelyAndUseDoubleQuotesAndLongs) {
  const std::string bytes =
      NpyV1("{\"shape\": (1L, 2L), \"fortran_order\": False, \"descr\": \"|u1\"}") + "\x07\x08";
  ASSERT_OK_AND_ASSIGN(Matrix m, ParseVectors(bytes, DatasetFormat::kNpy, "x"));
  EXPECT_EQ(m, (Matrix{1, 2, {7, 8}}));
}

TEST(DatasetReaderTest, NpyF8IsConvertedToF4AndOverflowBecomesInfinity) {
  std::string bytes = NpyV1("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }");
  for (double d : {0.1, -2.5, 1e300, -1e300}) PutFixed64(&bytes, std::bit_cast<uint64_t>(d));
  ASSERT_OK_AND_ASSIGN(Matrix m, ParseVectors(bytes, DatasetFormat::kNpy, "x"));
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(m, (Matrix{2, 2, {0.1f, -2.5f, inf, -inf}}));
}

TEST(DatasetReaderTest, NpyI8NeighborsNarrowToInt32) {
  std::string bytes = NpyV1("{'descr': '<i8', 'fortran_order': False, 'shape': (1, 3), }");
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{INT32_MAX}}) {
    PutFixed64(&bytes, static_cast<uint64_t>(v));
  }
  ASSERT_OK_AND_ASSIGN(IntMatrix m, ParseNeighbors(bytes, DatasetFormat::kNpy, "x"));
  EXPECT_EQ(m, (IntMatrix{1, 3, {0, -1, INT32_MAX}}));
}

TEST(DatasetReaderTest, NpyI8IdBeyondInt32IsInvalidNamingTheOffset) {
  std::string bytes = NpyV1("{'descr': '<i8', 'fortran_order': False, 'shape': (1, 2), }");
  const uint64_t data = bytes.size();
  PutFixed64(&bytes, 1);
  PutFixed64(&bytes, uint64_t{1} << 40);
  EXPECT_TRUE(IsErrorAt(ParseNeighbors(bytes, DatasetFormat::kNpy, "gt.npy").status(),
                        StatusCode::kInvalidArgument, "gt.npy", data + 8));
}

TEST(DatasetReaderTest, NonFiniteFloatsAreReadAsTheyAre) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::string bytes = EncodeOrDie(Matrix{1, 3, {inf, -inf, nan}}, DatasetFormat::kFvecs);
  ASSERT_OK_AND_ASSIGN(Matrix m, ParseVectors(bytes, DatasetFormat::kFvecs, "x"));
  EXPECT_EQ(m.data[0], inf);
  EXPECT_EQ(m.data[1], -inf);
  EXPECT_TRUE(std::isnan(m.data[2]));
}

TEST(DatasetReaderTest, EmptyTexmexFileHoldsNoVectors) {
  for (DatasetFormat f : {DatasetFormat::kFvecs, DatasetFormat::kBvecs}) {
    ASSERT_OK_AND_ASSIGN(Matrix m, ParseVectors("", f, "x"));
    EXPECT_EQ(m, Matrix{});
  }
  ASSERT_OK_AND_ASSIGN(IntMatrix n, ParseNeighbors("", DatasetFormat::kIvecs, "x"));
  EXPECT_EQ(n, IntMatrix{});
}

TEST(DatasetReaderTest, BinWithZeroRowsHoldsNoVectorsButKnowsTheDim) {
  ASSERT_OK_AND_ASSIGN(Matrix m, ParseVectors(I32(0) + I32(16), DatasetFormat::kFbin, "x"));
  EXPECT_EQ(m, (Matrix{0, 16, {}}));
}

// ---- Round trips through files ----

TEST(DatasetReaderTest, VectorsRoundTripThroughEveryFormat) {
  test::TempDir dir;
  const Matrix m = SmallVectors(7, 5);
  for (DatasetFormat f : kVectorFormats) {
    SCOPED_TRACE(Name(f));
    const std::string path = dir.Sub("v." + Name(f));
    ASSERT_OK(WriteVectors(FileSystem::Default(), path, m));
    ASSERT_OK_AND_ASSIGN(Matrix back, ReadVectors(FileSystem::Default(), path));
    EXPECT_EQ(back, m);
  }
}

TEST(DatasetReaderTest, ArbitraryFloatsRoundTripThroughFloatFormats) {
  test::TempDir dir;
  const Matrix m{3, 2, {0.1f, -1e-30f, 3.4e38f, -0.0f, 1.5f, 123456.789f}};
  for (DatasetFormat f : {DatasetFormat::kFvecs, DatasetFormat::kFbin, DatasetFormat::kNpy}) {
    SCOPED_TRACE(Name(f));
    const std::string path = dir.Sub("v." + Name(f));
    ASSERT_OK(WriteVectors(FileSystem::Default(), path, m));
    ASSERT_OK_AND_ASSIGN(Matrix back, ReadVectors(FileSystem::Default(), path));
    EXPECT_EQ(back, m);
  }
}

TEST(DatasetReaderTest, NeighborsRoundTripThroughEveryFormat) {
  test::TempDir dir;
  const IntMatrix m = SmallNeighbors(4, 10);
  for (DatasetFormat f : kNeighborFormats) {
    SCOPED_TRACE(Name(f));
    const std::string path = dir.Sub("gt." + Name(f));
    ASSERT_OK(WriteNeighbors(FileSystem::Default(), path, m));
    ASSERT_OK_AND_ASSIGN(IntMatrix back, ReadNeighbors(FileSystem::Default(), path));
    EXPECT_EQ(back, m);
  }
}

TEST(DatasetReaderTest, WrittenNpyDataStartsAtAMultipleOf64) {
  const std::string bytes = EncodeOrDie(SmallNeighbors(3, 1000), DatasetFormat::kNpy);
  const size_t data = bytes.size() - 3 * 1000 * 4;
  EXPECT_EQ(data % 64, 0u);
  EXPECT_EQ(bytes[data - 1], '\n');
}

// ---- max_rows ----

TEST(DatasetReaderTest, MaxRowsReadsTheFirstRowsOfEveryFormat) {
  const Matrix m = SmallVectors(6, 3);
  for (DatasetFormat f : kVectorFormats) {
    SCOPED_TRACE(Name(f));
    ASSERT_OK_AND_ASSIGN(Matrix head, ParseVectors(EncodeOrDie(m, f), f, "x", 4));
    EXPECT_EQ(head, (Matrix{4, 3, std::vector<float>(m.data.begin(), m.data.begin() + 12)}));
    ASSERT_OK_AND_ASSIGN(Matrix all, ParseVectors(EncodeOrDie(m, f), f, "x", 100));
    EXPECT_EQ(all, m);
  }
  const IntMatrix n = SmallNeighbors(6, 3);
  for (DatasetFormat f : kNeighborFormats) {
    SCOPED_TRACE(Name(f));
    ASSERT_OK_AND_ASSIGN(IntMatrix head, ParseNeighbors(EncodeOrDie(n, f), f, "x", 1));
    EXPECT_EQ(head, (IntMatrix{1, 3, {n.data[0], n.data[1], n.data[2]}}));
  }
}

TEST(DatasetReaderTest, MaxRowsZeroReadsNoRowsButKnowsTheDim) {
  for (DatasetFormat f : kVectorFormats) {
    SCOPED_TRACE(Name(f));
    ASSERT_OK_AND_ASSIGN(Matrix m, ParseVectors(EncodeOrDie(SmallVectors(2, 9), f), f, "x", 0));
    EXPECT_EQ(m, (Matrix{0, 9, {}}));
  }
}

TEST(DatasetReaderTest, FvecsMaxRowsStillNoticesACutShortTail) {
  std::string bytes = EncodeOrDie(SmallVectors(5, 4), DatasetFormat::kFvecs);
  bytes.resize(bytes.size() - 3);
  EXPECT_TRUE(IsErrorAt(ParseVectors(bytes, DatasetFormat::kFvecs, "x.fvecs", 2).status(),
                        StatusCode::kDataLoss, "x.fvecs", 4 * 20));
}

TEST(DatasetReaderTest, BinMaxRowsStillNoticesACutShortFile) {
  std::string bytes = EncodeOrDie(SmallVectors(5, 4), DatasetFormat::kFbin);
  bytes.pop_back();
  EXPECT_STATUS_CODE(ParseVectors(bytes, DatasetFormat::kFbin, "x", 1), StatusCode::kDataLoss);
}

// ---- Truncation: cut at every byte ----

TEST(DatasetReaderTest, TexmexCutAtARecordBoundaryIsAShorterFileAndElsewhereDataLoss) {
  // Texmex files have no header: a cut between records leaves a valid file.
  for (DatasetFormat f : kTexmexFormats) {
    SCOPED_TRACE(Name(f));
    const bool ints = f == DatasetFormat::kIvecs;
    const std::string bytes =
        ints ? EncodeOrDie(SmallNeighbors(3, 5), f) : EncodeOrDie(SmallVectors(3, 5), f);
    const size_t record = bytes.size() / 3;
    for (size_t cut = 0; cut < bytes.size(); ++cut) {
      SCOPED_TRACE(cut);
      const std::string_view prefix = std::string_view(bytes).substr(0, cut);
      const absl::Status s = ints ? ParseNeighbors(prefix, f, "cut.x").status()
                                  : ParseVectors(prefix, f, "cut.x").status();
      if (cut % record == 0) {
        EXPECT_OK(s);
      } else {
        EXPECT_TRUE(IsErrorAt(s, StatusCode::kDataLoss, "cut.x", cut / record * record));
      }
    }
  }
}

TEST(DatasetReaderTest, BinAndNpyCutAtAnyByteIsDataLoss) {
  for (DatasetFormat f : {DatasetFormat::kFbin, DatasetFormat::kU8bin, DatasetFormat::kIbin,
                          DatasetFormat::kNpy}) {
    for (bool ints : {false, true}) {
      if ((f == DatasetFormat::kIbin) != ints && f != DatasetFormat::kNpy) continue;
      SCOPED_TRACE(Name(f) + (ints ? " ints" : " floats"));
      const std::string bytes =
          ints ? EncodeOrDie(SmallNeighbors(3, 5), f) : EncodeOrDie(SmallVectors(3, 5), f);
      for (size_t cut = 0; cut < bytes.size(); ++cut) {
        SCOPED_TRACE(cut);
        const std::string_view prefix = std::string_view(bytes).substr(0, cut);
        const absl::Status s = ints ? ParseNeighbors(prefix, f, "cut.x").status()
                                    : ParseVectors(prefix, f, "cut.x").status();
        EXPECT_STATUS_CODE(s, StatusCode::kDataLoss);
        EXPECT_THAT(Msg(s), AllOf(HasSubstr("cut.x"), HasSubstr("at byte ")));
      }
    }
  }
}

TEST(DatasetReaderTest, FvecsCutInsideARecordIsDataLossNamingTheOffset) {
  std::string bytes = EncodeOrDie(SmallVectors(3, 4), DatasetFormat::kFvecs);
  bytes.resize(20 + 20 + 7);  // records are 4 + 16 bytes; record 2 keeps 7
  const absl::Status s = ParseVectors(bytes, DatasetFormat::kFvecs, "base.fvecs").status();
  EXPECT_TRUE(IsErrorAt(s, StatusCode::kDataLoss, "base.fvecs", 40));
  EXPECT_THAT(Msg(s), HasSubstr("record 2 is cut short: 7 of 20 bytes"));
}

TEST(DatasetReaderTest, FvecsCutInsideADimIsDataLossNamingTheOffset) {
  std::string bytes = EncodeOrDie(SmallVectors(2, 4), DatasetFormat::kFvecs);
  bytes.resize(20 + 2);
  const absl::Status s = ParseVectors(bytes, DatasetFormat::kFvecs, "base.fvecs").status();
  EXPECT_TRUE(IsErrorAt(s, StatusCode::kDataLoss, "base.fvecs", 20));
  EXPECT_THAT(Msg(s), HasSubstr("dim of record 1 is cut short"));
}

// ---- Dims ----

TEST(DatasetReaderTest, TexmexInconsistentDimsAreInvalidNamingTheRecord) {
  for (DatasetFormat f : kTexmexFormats) {
    SCOPED_TRACE(Name(f));
    const size_t element = f == DatasetFormat::kBvecs ? 1 : 4;
    // Record 0 of dim 2, record 1 of dim 3 (then padding so sizes could fit).
    const std::string bytes = I32(2) + std::string(2 * element, '\0') + I32(3) +
                              std::string(3 * element, '\0');
    const absl::Status s = f == DatasetFormat::kIvecs
                               ? ParseNeighbors(bytes, f, "mixed").status()
                               : ParseVectors(bytes, f, "mixed").status();
    EXPECT_TRUE(IsErrorAt(s, StatusCode::kInvalidArgument, "mixed", 4 + 2 * element));
    EXPECT_THAT(Msg(s), HasSubstr("record 1 has dim 3 but record 0 has dim 2"));
  }
}

TEST(DatasetReaderTest, TexmexZeroNegativeAndHugeDimsAreInvalid) {
  for (DatasetFormat f : kTexmexFormats) {
    for (int32_t dim : {0, -1, -128, static_cast<int32_t>(kMaxDatasetDim + 1), INT32_MAX}) {
      SCOPED_TRACE(Name(f) + " dim " + std::to_string(dim));
      const std::string bytes = I32(dim) + std::string(64, '\0');
      const absl::Status s = f == DatasetFormat::kIvecs
                                 ? ParseNeighbors(bytes, f, "bad.x").status()
                                 : ParseVectors(bytes, f, "bad.x").status();
      EXPECT_TRUE(IsErrorAt(s, StatusCode::kInvalidArgument, "bad.x", 0));
      EXPECT_THAT(Msg(s), HasSubstr("the dim of record 0 is " + std::to_string(dim) + ", not in [1, "));
    }
  }
}

TEST(DatasetReaderTest, TexmexBadDimInALaterRecordIsInvalidNamingIt) {
  const std::string bytes = I32(1) + I32(0) + I32(0) + I32(0);
  const absl::Status s = ParseVectors(bytes, DatasetFormat::kFvecs, "x").status();
  EXPECT_TRUE(IsErrorAt(s, StatusCode::kInvalidArgument, "x", 8));
  EXPECT_THAT(Msg(s), HasSubstr("the dim of record 1 is 0, not in"));
}

TEST(DatasetReaderTest, BinZeroAndHugeDimsAreInvalid) {
  for (DatasetFormat f : kBinFormats) {
    for (uint32_t dim : {0u, kMaxDatasetDim + 1, 0xffffffffu}) {
      SCOPED_TRACE(Name(f) + " dim " + std::to_string(dim));
      const std::string bytes = I32(1) + I32(static_cast<int32_t>(dim)) + std::string(64, '\0');
      const absl::Status s = f == DatasetFormat::kIbin
                                 ? ParseNeighbors(bytes, f, "bad.bin").status()
                                 : ParseVectors(bytes, f, "bad.bin").status();
      EXPECT_TRUE(IsErrorAt(s, StatusCode::kInvalidArgument, "bad.bin", 4));
    }
  }
}

TEST(DatasetReaderTest, NpyZeroAndHugeColsAreInvalid) {
  for (const char* shape : {"(3, 0)", "(3, 1048577)"}) {
    SCOPED_TRACE(shape);
    const std::string bytes = NpyV1(std::string("{'descr': '<f4', 'fortran_order': False, "
                                                "'shape': ") + shape + ", }");
    EXPECT_STATUS_CODE(ParseVectors(bytes, DatasetFormat::kNpy, "x"),
                       StatusCode::kInvalidArgument);
  }
}

// ---- Hostile sizes ----

TEST(DatasetReaderTest, BinAbsurdRowCountIsDataLossBeforeAllocating) {
  // 2^32 - 1 rows of 2^20 floats would be 16 PiB; the file has 8 + 16 bytes.
  const std::string bytes = I32(-1) + I32(1 << 20) + std::string(16, '\0');
  const absl::Status s = ParseVectors(bytes, DatasetFormat::kFbin, "huge.fbin").status();
  EXPECT_TRUE(IsErrorAt(s, StatusCode::kDataLoss, "huge.fbin", 8));
  EXPECT_THAT(Msg(s), HasSubstr("the header promises 4294967295 rows of 1048576 float32"));
}

TEST(DatasetReaderTest, BinTrailingBytesAreInvalid) {
  std::string bytes = EncodeOrDie(SmallVectors(2, 3), DatasetFormat::kFbin) + "xyz";
  EXPECT_TRUE(IsErrorAt(ParseVectors(bytes, DatasetFormat::kFbin, "x").status(),
                        StatusCode::kInvalidArgument, "x", 8 + 24));
}

TEST(DatasetReaderTest, NpyAbsurdShapeIsDataLossBeforeAllocating) {
  const std::string bytes =
      NpyV1("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000, 128), }");
  EXPECT_STATUS_CODE(ParseVectors(bytes, DatasetFormat::kNpy, "x"), StatusCode::kDataLoss);
}

TEST(DatasetReaderTest, NpyShapeWhoseByteCountOverflowsIsInvalid) {
  const std::string bytes = NpyV1(
      "{'descr': '<f8', 'fortran_order': False, 'shape': (18446744073709551615, 4), }");
  const absl::Status s = ParseVectors(bytes, DatasetFormat::kNpy, "x").status();
  EXPECT_STATUS_CODE(s, StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(s), HasSubstr("overflow"));
}

TEST(DatasetReaderTest, NpyShapeValueBeyond64BitsIsInvalid) {
  const std::string bytes = NpyV1(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 4), }");
  EXPECT_STATUS_CODE(ParseVectors(bytes, DatasetFormat::kNpy, "x"), StatusCode::kInvalidArgument);
}

TEST(DatasetReaderTest, NpyTrailingBytesAreInvalid) {
  EXPECT_STATUS_CODE(ParseVectors(kNumpyF4 + "!", DatasetFormat::kNpy, "x"),
                     StatusCode::kInvalidArgument);
}

// ---- npy headers ----

TEST(DatasetReaderTest, NpyFortranOrderIsRejectedWithAClearMessage) {
  const std::string bytes =
      NpyV1("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 1), }") + I32(0);
  const absl::Status s = ParseVectors(bytes, DatasetFormat::kNpy, "f.npy").status();
  EXPECT_STATUS_CODE(s, StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(s), AllOf(HasSubstr("f.npy"), HasSubstr("fortran_order is True")));
}

TEST(DatasetReaderTest, NpyBigEndianIsRejectedWithAClearMessage) {
  const std::string bytes =
      NpyV1("{'descr': '>f4', 'fortran_order': False, 'shape': (1, 1), }") + I32(0);
  const absl::Status s = ParseVectors(bytes, DatasetFormat::kNpy, "be.npy").status();
  // The descr value starts at byte 10 + strlen("{'descr': ").
  EXPECT_TRUE(IsErrorAt(s, StatusCode::kInvalidArgument, "be.npy", 20));
  EXPECT_THAT(Msg(s), HasSubstr("big-endian dtype '>f4' is not supported"));
}

TEST(DatasetReaderTest, NpyUnsupportedDtypesAreInvalidNamingThem) {
  for (const char* descr : {"<f2", "<u4", "|b1", "<c8", "", "float32"}) {
    SCOPED_TRACE(descr);
    const std::string bytes = NpyV1(std::string("{'descr': '") + descr +
                                    "', 'fortran_order': False, 'shape': (1, 1), }") + I32(0);
    const absl::Status s = ParseVectors(bytes, DatasetFormat::kNpy, "x").status();
    EXPECT_STATUS_CODE(s, StatusCode::kInvalidArgument);
    EXPECT_THAT(Msg(s), HasSubstr(std::string("unsupported dtype '") + descr + "'"));
  }
}

TEST(DatasetReaderTest, NpyIntegersAreNotVectorsAndFloatsAreNotNeighbors) {
  const std::string ints = EncodeOrDie(SmallNeighbors(1, 2), DatasetFormat::kNpy);
  const std::string floats = EncodeOrDie(SmallVectors(1, 2), DatasetFormat::kNpy);
  const absl::Status a = ParseVectors(ints, DatasetFormat::kNpy, "x").status();
  EXPECT_STATUS_CODE(a, StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(a), HasSubstr("ReadNeighbors"));
  EXPECT_STATUS_CODE(ParseNeighbors(floats, DatasetFormat::kNpy, "x"),
                     StatusCode::kInvalidArgument);
}

TEST(DatasetReaderTest, NpyShapesThatAreNot2DAreInvalid) {
  for (const char* shape : {"()", "(4,)", "(1, 2, 2)"}) {
    SCOPED_TRACE(shape);
    const std::string bytes = NpyV1(std::string("{'descr': '<f4', 'fortran_order': False, "
                                                "'shape': ") + shape + ", }") + I32(0) + I32(0) +
                              I32(0) + I32(0);
    const absl::Status s = ParseVectors(bytes, DatasetFormat::kNpy, "x").status();
    EXPECT_STATUS_CODE(s, StatusCode::kInvalidArgument);
    EXPECT_THAT(Msg(s), HasSubstr("a data set is 2-d"));
  }
}

TEST(DatasetReaderTest, NpyBadMagicIsInvalid) {
  std::string bytes = kNumpyF4;
  bytes[1] = 'M';
  const absl::Status s = ParseVectors(bytes, DatasetFormat::kNpy, "x").status();
  EXPECT_TRUE(IsErrorAt(s, StatusCode::kInvalidArgument, "x", 0));
  EXPECT_THAT(Msg(s), HasSubstr("not an npy file"));
}

TEST(DatasetReaderTest, NpyUnknownVersionIsInvalid) {
  for (std::string version : {std::string("\x04\x00", 2), std::string("\x01\x01", 2),
                              std::string("\x00\x00", 2)}) {
    std::string bytes = kNumpyF4;
    bytes.replace(6, 2, version);
    EXPECT_TRUE(IsErrorAt(ParseVectors(bytes, DatasetFormat::kNpy, "x").status(),
                          StatusCode::kInvalidArgument, "x", 6));
  }
}

TEST(DatasetReaderTest, NpyMalformedHeadersAreInvalid) {
  const char* headers[] = {
      "",
      "[]",
      "{'descr': '<f4', 'fortran_order': False}",                             // no shape
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), 'x': 1}",    // extra key
      "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1, 1)}",
      "{'descr': '<f4' 'fortran_order': False, 'shape': (1, 1)}",             // no comma
      "{'descr' '<f4', 'fortran_order': False, 'shape': (1, 1)}",             // no colon
      "{'descr': '<f4, 'fortran_order': False, 'shape': (1, 1)}",             // quotes
      "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1, 1)}",   // structured
      "{'descr': '<f4', 'fortran_order': 0, 'shape': (1, 1)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': [1, 1]}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1, -1)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1,, )}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1)",             // no '}'
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1)} junk",
      "{'descr': '<\\x66\\x34', 'fortran_order': False, 'shape': (1, 1)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1)}}",
  };
  for (const char* header : headers) {
    SCOPED_TRACE(header);
    const std::string bytes = NpyV1(header) + I32(0);
    const absl::Status s = ParseVectors(bytes, DatasetFormat::kNpy, "hdr.npy").status();
    EXPECT_STATUS_CODE(s, StatusCode::kInvalidArgument);
    EXPECT_THAT(Msg(s), AllOf(HasSubstr("hdr.npy"), HasSubstr("at byte ")));
  }
}

TEST(DatasetReaderTest, NpyHeaderCutShortIsDataLoss) {
  std::string bytes = kNumpyF4;
  bytes[8] = '\x7f';  // a header length of 0x107f bytes: more than the file holds
  bytes[9] = '\x10';
  EXPECT_TRUE(IsErrorAt(ParseVectors(bytes, DatasetFormat::kNpy, "x").status(),
                        StatusCode::kDataLoss, "x", 10));
}

// ---- Files: names, extensions, kinds ----

TEST(DatasetReaderTest, UnknownExtensionIsInvalidNamingTheFile) {
  test::TempDir dir;
  const std::string path = dir.Sub("vectors.txt");
  ASSERT_OK(WriteFileAtomic(FileSystem::Default(), path, "whatever"));
  const absl::Status s = ReadVectors(FileSystem::Default(), path).status();
  EXPECT_STATUS_CODE(s, StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(s), AllOf(HasSubstr(path), HasSubstr("cannot tell the format from the "
                                                       "extension"), HasSubstr(".fvecs")));
  EXPECT_STATUS_CODE(ReadNeighbors(FileSystem::Default(), path), StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(WriteVectors(FileSystem::Default(), path, SmallVectors(1, 1)),
                     StatusCode::kInvalidArgument);
}

TEST(DatasetReaderTest, ErrorsSayTheFormatCameFromTheExtension) {
  test::TempDir dir;
  const std::string path = dir.Sub("base.fvecs");
  ASSERT_OK(WriteFileAtomic(FileSystem::Default(), path, I32(0)));
  const absl::Status s = ReadVectors(FileSystem::Default(), path).status();
  EXPECT_TRUE(IsErrorAt(s, StatusCode::kInvalidArgument, path, 0));
  EXPECT_THAT(Msg(s), HasSubstr("read as .fvecs (by its extension)"));
}

TEST(DatasetReaderTest, NeighborFilesAreNotVectorsAndViceVersa) {
  test::TempDir dir;
  const std::string gt = dir.Sub("gt.ivecs");
  ASSERT_OK(WriteNeighbors(FileSystem::Default(), gt, SmallNeighbors(2, 2)));
  const absl::Status s = ReadVectors(FileSystem::Default(), gt).status();
  EXPECT_STATUS_CODE(s, StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(s), AllOf(HasSubstr(gt), HasSubstr("holds neighbour ids, not vectors")));
  const std::string base = dir.Sub("base.fbin");
  ASSERT_OK(WriteVectors(FileSystem::Default(), base, SmallVectors(2, 2)));
  EXPECT_STATUS_CODE(ReadNeighbors(FileSystem::Default(), base), StatusCode::kInvalidArgument);
}

TEST(DatasetReaderTest, MissingFileIsNotFound) {
  test::TempDir dir;
  EXPECT_STATUS_CODE(ReadVectors(FileSystem::Default(), dir.Sub("none.fvecs")),
                     StatusCode::kNotFound);
}

// ---- Writers ----

TEST(DatasetWriterTest, ByteFormatsRefuseValuesThatAreNotBytes) {
  for (DatasetFormat f : {DatasetFormat::kBvecs, DatasetFormat::kU8bin}) {
    for (float v : {-1.0f, 256.0f, 0.5f, std::numeric_limits<float>::quiet_NaN()}) {
      const absl::Status s = EncodeVectors(Matrix{1, 2, {3, v}}, f, "b").status();
      EXPECT_STATUS_CODE(s, StatusCode::kInvalidArgument);
      EXPECT_THAT(Msg(s), HasSubstr("row 0, column 1"));
    }
  }
}

TEST(DatasetWriterTest, ShapesThatDoNotMatchTheDataAreInvalid) {
  EXPECT_STATUS_CODE(EncodeVectors(Matrix{2, 3, {1, 2, 3}}, DatasetFormat::kFvecs, "x"),
                     StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(EncodeVectors(Matrix{0, 0, {}}, DatasetFormat::kFbin, "x"),
                     StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(EncodeNeighbors(IntMatrix{1, 2, {1}}, DatasetFormat::kIvecs, "x"),
                     StatusCode::kInvalidArgument);
}

TEST(DatasetWriterTest, EachKindIsWrittenOnlyInItsFormats) {
  EXPECT_STATUS_CODE(EncodeVectors(SmallVectors(1, 1), DatasetFormat::kIvecs, "x"),
                     StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(EncodeVectors(SmallVectors(1, 1), DatasetFormat::kIbin, "x"),
                     StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(EncodeNeighbors(SmallNeighbors(1, 1), DatasetFormat::kFvecs, "x"),
                     StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(EncodeNeighbors(SmallNeighbors(1, 1), DatasetFormat::kUnknown, "x"),
                     StatusCode::kInvalidArgument);
}

TEST(DatasetWriterTest, WriteReplacesAnExistingFileWhole) {
  test::TempDir dir;
  const std::string path = dir.Sub("gt.ivecs");
  ASSERT_OK(WriteNeighbors(FileSystem::Default(), path, SmallNeighbors(50, 10)));
  ASSERT_OK(WriteNeighbors(FileSystem::Default(), path, SmallNeighbors(2, 3)));
  ASSERT_OK_AND_ASSIGN(IntMatrix back, ReadNeighbors(FileSystem::Default(), path));
  EXPECT_EQ(back, SmallNeighbors(2, 3));
  EXPECT_FALSE(FileSystem::Default()->Exists(path + ".tmp"));
}

}  // namespace
}  // namespace shoal
