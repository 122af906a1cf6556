// Copyright 2026 The shoal Authors.
//
// kPutRecords in the write-ahead log (wal_format.h): records carrying
// labels, attributes and a payload read back whole; extras that do not
// parse are DataLoss naming the file and offset; version-1 files (written
// before records had extras) still read, and know no kPutRecords.

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "record/record_format.h"
#include "testutil/temp_dir.h"
#include "util/coding.h"
#include "util/file_system.h"
#include "util/hash.h"
#include "version/filename.h"
#include "wal/wal_reader.h"
#include "wal/wal_writer.h"

namespace shoal::wal {
namespace {

constexpr uint32_t kDim = 4;

// One op of a kPutRecords record as read back.
struct ReadOp {
  uint64_t id;
  std::vector<float> vector;
  RecordData parts;
};

class WalRecordsTest : public ::testing::Test {
 protected:
  FileSystem* fs() { return FileSystem::Default(); }
  std::string FilePath(uint64_t number = 1) {
    return JoinPath(dir_.path(), WalFileName(number));
  }

  std::unique_ptr<WalWriter> NewWriter() {
    WalWriterOptions options;
    options.file_bytes = 1 << 16;
    auto writer = WalWriter::Open(fs(), dir_.path(), options, 1, 0);
    EXPECT_TRUE(writer.ok()) << writer.status();
    return std::move(writer).value();
  }

  // Appends a kPutRecords record of ids first_id.. with `extras` (one each,
  // already encoded, appended as given: a test may damage them). Returns the
  // record's offset in the file.
  size_t AppendRecords(WalWriter* w, uint64_t first_id, const std::vector<std::string>& extras,
                       RecordType type = RecordType::kPutRecords) {
    const uint32_t n = static_cast<uint32_t>(extras.size());
    size_t extras_bytes = 0;
    for (const std::string& e : extras) extras_bytes += e.size();
    const size_t length = PutRecordsPayloadSize(n, kDim, extras_bytes);
    const size_t offset = next_offset_;
    next_offset_ += AlignRecord(kRecordHeaderSize + length);
    auto payload = w->BeginRecord(length);
    EXPECT_TRUE(payload.ok()) << payload.status();
    for (uint32_t i = 0; i < n; ++i) EncodeFixed64(*payload + i * 8, first_id + i);
    float* v = reinterpret_cast<float*>(*payload + n * 8);
    for (uint32_t i = 0; i < n * kDim; ++i) v[i] = static_cast<float>(first_id * 10 + i);
    char* out = *payload + PutPayloadSize(n, kDim);
    for (const std::string& e : extras) {
      std::memcpy(out, e.data(), e.size());
      out += e.size();
    }
    w->FinishRecord(type, next_sequence_, n, kDim);
    next_sequence_ += n;
    return offset;
  }

  absl::StatusOr<ReadResult> Read(const std::string& contents, std::vector<ReadOp>* ops) {
    return ReadWalFile(contents, FilePath(), 0, 1, kDim, [&](const RecordView& r) {
      std::string_view rest = r.extras;
      for (uint32_t i = 0; i < r.count; ++i) {
        ReadOp op;
        op.id = DecodeFixed64(r.ids + i * 8);
        op.vector.resize(kDim);
        std::memcpy(op.vector.data(), r.vectors + size_t{i} * kDim * 4, kDim * 4);
        if (r.type == RecordType::kPutRecords) {
          record::ExtrasView view;
          size_t used = 0;
          EXPECT_TRUE(record::Parse(rest, &view, &used).ok());
          view.CopyTo(kAllParts, &op.parts);
          rest.remove_prefix(used);
        }
        ops->push_back(std::move(op));
      }
      return absl::OkStatus();
    });
  }

  std::string Contents() {
    auto contents = fs()->ReadFile(FilePath());
    EXPECT_TRUE(contents.ok()) << contents.status();
    return contents.value_or("");
  }

  // Rewrites the file header's version (and its checksum), as a file
  // written by an older build has it.
  void SetVersion(std::string* contents, uint32_t version) {
    EncodeFixed32(contents->data() + 8, version);
    EncodeFixed32(contents->data() + 28, static_cast<uint32_t>(Checksum64(contents->data(), 28)));
  }

  test::TempDir dir_;
  uint64_t next_sequence_ = 1;
  // Where AppendRecords' next record goes in file 1 (no sync marks come
  // between records: the tests do not sync before Close).
  size_t next_offset_ = kFileHeaderSize;
};

std::string Encoded(std::vector<uint32_t> labels, std::vector<AttributeValue> attributes,
                    std::string_view payload) {
  std::string out;
  record::AppendEncoded({labels, attributes, payload}, &out);
  return out;
}

TEST_F(WalRecordsTest, PutRecordsReadBackWithLabelsAttributesAndPayload) {
  auto w = NewWriter();
  const std::string payload(300, 'p');
  AppendRecords(w.get(), 7,
                {Encoded({1, 5, 90}, {{0, -3}, {2, int64_t{1} << 40}}, payload),
                 Encoded({}, {}, ""), Encoded({}, {}, "x")});
  ASSERT_TRUE(w->Close(true).ok());
  std::string contents = Contents();
  EXPECT_EQ(DecodeFixed32(contents.data() + 8), kFormatVersion);

  std::vector<ReadOp> ops;
  auto result = Read(contents, &ops);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->version, 2u);
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].id, 7u);
  EXPECT_EQ(ops[0].vector[3], 73);
  EXPECT_EQ(ops[0].parts.labels, (std::vector<uint32_t>{1, 5, 90}));
  EXPECT_EQ(ops[0].parts.attributes,
            (std::vector<AttributeValue>{{0, -3}, {2, int64_t{1} << 40}}));
  EXPECT_EQ(ops[0].parts.payload, payload);
  EXPECT_EQ(ops[1].id, 8u);
  EXPECT_EQ(ops[1].parts, RecordData{});
  EXPECT_EQ(ops[2].parts.payload, "x");
  EXPECT_EQ(ops[2].vector[0], 70 + 2 * kDim);
  EXPECT_FALSE(result->corrupted);
  EXPECT_FALSE(result->torn_tail);
}

// A record whose checksum matches but whose extras do not parse: no crash
// tears a record so, and nothing may be applied from it.
void ExpectDataLossAt(const absl::StatusOr<ReadResult>& result, const std::string& path,
                      size_t offset) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDataLoss) << result.status();
  EXPECT_TRUE(absl::StrContains(result.status().message(), path)) << result.status();
  EXPECT_TRUE(absl::StrContains(result.status().message(), absl::StrCat("offset ", offset)))
      << result.status();
}

TEST_F(WalRecordsTest, ExtrasBreakingTheirRulesAreDataLossNamingFileAndOffset) {
  auto w = NewWriter();
  AppendRecords(w.get(), 1, {Encoded({3}, {}, "")});
  std::string unsorted = Encoded({3, 4}, {}, "");
  EncodeFixed32(unsorted.data() + 8, 9);  // labels 9, 4: not ascending
  const size_t offset = AppendRecords(w.get(), 2, {unsorted});
  ASSERT_TRUE(w->Close(true).ok());
  std::vector<ReadOp> ops;
  ExpectDataLossAt(Read(Contents(), &ops), FilePath(), offset);
}

TEST_F(WalRecordsTest, ExtrasCutShortAreDataLossNamingFileAndOffset) {
  auto w = NewWriter();
  // The second op's header claims a 100-byte payload the record lacks.
  std::string cut = Encoded({}, {}, std::string(100, 'c'));
  cut.resize(record::kHeaderSize + 10);
  const size_t offset = AppendRecords(w.get(), 1, {Encoded({1}, {}, "a"), cut});
  ASSERT_TRUE(w->Close(true).ok());
  std::vector<ReadOp> ops;
  ExpectDataLossAt(Read(Contents(), &ops), FilePath(), offset);
  EXPECT_TRUE(ops.empty());
}

TEST_F(WalRecordsTest, BytesAfterTheLastExtrasAreDataLoss) {
  auto w = NewWriter();
  const size_t offset = AppendRecords(w.get(), 1, {Encoded({1}, {}, "") + "junk"});
  ASSERT_TRUE(w->Close(true).ok());
  std::vector<ReadOp> ops;
  ExpectDataLossAt(Read(Contents(), &ops), FilePath(), offset);
}

TEST_F(WalRecordsTest, PayloadTooShortForTheHeadersIsNotAPutRecords) {
  // Two ops but 8 bytes of extras: fails the record's own checks (as a torn
  // record would), so the log ends before it.
  auto w = NewWriter();
  AppendRecords(w.get(), 1, {Encoded({}, {}, "")});
  const size_t offset = AppendRecords(w.get(), 5, {Encoded({}, {}, ""), ""});
  std::string contents = Contents();
  std::vector<ReadOp> ops;
  auto result = Read(contents, &ops);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(ops.size(), 1u);
  EXPECT_EQ(result->valid_end, offset);
}

TEST_F(WalRecordsTest, Version1FileStillReads) {
  auto w = NewWriter();
  auto payload = w->BeginRecord(PutPayloadSize(2, kDim));
  ASSERT_TRUE(payload.ok());
  std::memset(*payload, 0, PutPayloadSize(2, kDim));
  EncodeFixed64(*payload, 11);
  EncodeFixed64(*payload + 8, 12);
  w->FinishRecord(RecordType::kPut, 1, 2, kDim);
  ASSERT_TRUE(w->Close(true).ok());
  std::string contents = Contents();
  SetVersion(&contents, 1);
  std::vector<ReadOp> ops;
  auto result = Read(contents, &ops);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->version, 1u);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[1].id, 12u);
}

TEST_F(WalRecordsTest, PutRecordsInAVersion1FileIsAnUnknownType) {
  auto w = NewWriter();
  const size_t offset = AppendRecords(w.get(), 1, {Encoded({1}, {}, "")});
  AppendRecords(w.get(), 2, {""}, RecordType::kPut);  // a plain put after it
  ASSERT_TRUE(w->Close(true).ok());  // its sync mark proves them durable
  std::string contents = Contents();
  SetVersion(&contents, 1);
  std::vector<ReadOp> ops;
  auto result = Read(contents, &ops);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->corrupted);
  EXPECT_EQ(result->corrupt_offset, offset);
  EXPECT_TRUE(ops.empty());
}

TEST_F(WalRecordsTest, VersionsOutsideTheRangeAreRefused) {
  auto w = NewWriter();
  ASSERT_TRUE(w->Close(true).ok());
  for (uint32_t version : {0u, kFormatVersion + 1}) {
    std::string contents = Contents();
    SetVersion(&contents, version);
    std::vector<ReadOp> ops;
    auto result = Read(contents, &ops);
    EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << version;
  }
}

TEST_F(WalRecordsTest, ShardRecordHoldingAPutRecordsDecodesWithItsExtras) {
  auto w = NewWriter();
  AppendRecords(w.get(), 3, {Encoded({2}, {{1, 9}}, "doc")});
  const std::string inner(w->last_record());
  // A commit log record: shard u32, 0 u32, the shard's record whole.
  std::string payload(kShardRecordPrefix, '\0');
  EncodeFixed32(payload.data(), 4);
  payload += inner;
  RecordView outer{};
  outer.offset = 96;
  outer.type = RecordType::kShardRecord;
  outer.count = 1;
  outer.payload_length = static_cast<uint32_t>(payload.size());
  outer.ids = payload.data();
  outer.version = kFormatVersion;
  uint32_t shard = 0;
  RecordView decoded{};
  ASSERT_TRUE(DecodeShardRecord(outer, kDim, &shard, &decoded).ok());
  EXPECT_EQ(shard, 4u);
  EXPECT_EQ(decoded.type, RecordType::kPutRecords);
  record::ExtrasView view;
  ASSERT_TRUE(record::Parse(decoded.extras, &view).ok());
  EXPECT_EQ(view.payload(), "doc");

  // In a version-1 commit log there is no such record.
  outer.version = 1;
  EXPECT_EQ(DecodeShardRecord(outer, kDim, &shard, &decoded).code(),
            absl::StatusCode::kDataLoss);
  // Damaged extras under a matching checksum are DataLoss naming the offset.
  outer.version = kFormatVersion;
  w = nullptr;
  auto w2 = WalWriter::Open(fs(), dir_.path(), {}, 2, 0);
  ASSERT_TRUE(w2.ok());
  std::string bad = Encoded({2, 3}, {}, "");
  EncodeFixed32(bad.data() + 12, 1);  // labels 2, 1
  AppendRecords(w2->get(), 3, {bad});
  payload.resize(kShardRecordPrefix);
  payload += std::string((*w2)->last_record());
  outer.payload_length = static_cast<uint32_t>(payload.size());
  outer.ids = payload.data();
  absl::Status s = DecodeShardRecord(outer, kDim, &shard, &decoded);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "offset 96")) << s;
}

}  // namespace
}  // namespace shoal::wal
