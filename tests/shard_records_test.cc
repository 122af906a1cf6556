// Copyright 2026 The shoal Authors.
//
// Records (a vector and its labels, attributes and payload) at the shard
// level: written in one log record with the vector, read back part by part
// from the active and frozen memtables, replayed from the log, and a log
// written before records existed (file version 1) still replays.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "record/record_format.h"
#include "shard/shard.h"
#include "testutil/temp_dir.h"
#include "util/coding.h"
#include "util/file_system.h"
#include "util/hash.h"
#include "version/filename.h"
#include "wal/wal_format.h"

namespace shoal {
namespace {

constexpr uint32_t kDim = 4;

// Publishes nothing: these tests never flush.
class NoManifest : public ManifestEditor {
 public:
  uint64_t NewFileNumber() override { return ++number_; }
  absl::Status Apply(const std::string&, uint64_t, std::span<const ShardEdit>) override {
    return absl::UnimplementedError("no manifest in this test");
  }

 private:
  uint64_t number_ = 100;
};

// A record to put, with storage for its parts.
struct TestRecord {
  uint64_t id;
  std::vector<float> vector;
  std::vector<uint32_t> labels;
  std::vector<AttributeValue> attributes;
  std::string payload;

  record::Extras extras() const { return {labels, attributes, payload}; }
  RecordData data() const { return {id, vector, labels, attributes, payload}; }
};

TestRecord MakeRecord(uint64_t id, size_t payload_bytes = 50) {
  TestRecord r{id, test::RandomVector(kDim, id), {}, {}, {}};
  if (id % 3 != 0) {  // every third record has no parts
    r.labels = {static_cast<uint32_t>(id), static_cast<uint32_t>(id + 1000)};
    r.attributes = {{0, static_cast<int64_t>(id) * -7}, {3, 1700000000}};
    r.payload = std::string(payload_bytes, static_cast<char>('a' + id % 26));
  }
  return r;
}

class ShardRecordsTest : public ::testing::Test {
 protected:
  ShardOptions MakeOptions(uint32_t index = 0) {
    ShardOptions o;
    o.db = test::DefaultOptions(kDim, Metric::kL2, 1);
    o.db.memtable_bytes = memtable_bytes_;
    o.collection = o.db.default_collection;
    o.collection_name = "default";
    o.index = index;
    o.manifest = &manifest_;
    return o;
  }
  std::string ShardDir(uint32_t index = 0) {
    return JoinPath(dir_.path(), "shard-" + std::to_string(index));
  }
  std::unique_ptr<Shard> OpenShard(uint32_t index = 0) {
    std::filesystem::create_directories(ShardDir(index));
    auto shard = Shard::Open(FileSystem::Default(), ShardDir(index), MakeOptions(index));
    EXPECT_TRUE(shard.ok()) << shard.status();
    return shard.ok() ? std::move(shard).value() : nullptr;
  }

  static absl::Status Put(Shard* shard, const std::vector<TestRecord>& records) {
    std::vector<uint64_t> ids;
    std::vector<const float*> rows;
    std::vector<record::Extras> extras;
    for (const TestRecord& r : records) {
      ids.push_back(r.id);
      rows.push_back(r.vector.data());
      extras.push_back(r.extras());
    }
    return shard->Put(ids, rows, extras);
  }

  static void ExpectHolds(const Shard& shard, const std::vector<TestRecord>& records) {
    for (const TestRecord& r : records) {
      RecordData got;
      ASSERT_OK(shard.GetRecord(r.id, kAllParts, &got)) << r.id;
      EXPECT_EQ(got, r.data()) << r.id;
    }
  }

  test::TempDir dir_;
  NoManifest manifest_;
  size_t memtable_bytes_ = 64 << 20;
};

TEST_F(ShardRecordsTest, PutRecordsAreReadBackPartByPart) {
  auto shard = OpenShard();
  ASSERT_NE(shard, nullptr);
  std::vector<TestRecord> records;
  for (uint64_t id = 1; id <= 40; ++id) records.push_back(MakeRecord(id));
  ASSERT_OK(Put(shard.get(), records));
  ExpectHolds(*shard, records);

  RecordData payload_only;
  ASSERT_OK(shard->GetRecord(2, kPayloadPart, &payload_only));
  EXPECT_EQ(payload_only, (RecordData{2, {}, {}, {}, records[1].payload}));
  RecordData vector_only;
  ASSERT_OK(shard->GetRecord(2, kVectorPart, &vector_only));
  EXPECT_EQ(vector_only, (RecordData{2, records[1].vector, {}, {}, {}}));

  // A later put of an id replaces the whole record; a delete removes it.
  const std::vector<uint64_t> ids = {4};
  const std::vector<const float*> rows = {records[0].vector.data()};
  ASSERT_OK(shard->Put(ids, rows));
  RecordData replaced;
  ASSERT_OK(shard->GetRecord(4, kAllParts, &replaced));
  EXPECT_EQ(replaced, (RecordData{4, records[0].vector, {}, {}, {}}));
  ASSERT_OK(shard->Delete(ids));
  RecordData deleted;
  EXPECT_STATUS_CODE(shard->GetRecord(4, kAllParts, &deleted), absl::StatusCode::kNotFound);
  EXPECT_STATUS_CODE(shard->GetRecord(999, kAllParts, &deleted), absl::StatusCode::kNotFound);
  ASSERT_OK(shard->Close());
}

TEST_F(ShardRecordsTest, RecordsReplayFromTheLogWhole) {
  std::vector<TestRecord> records;
  {
    auto shard = OpenShard();
    ASSERT_NE(shard, nullptr);
    // Single puts (copied into the memtable) and a batch (read in place).
    for (uint64_t id = 1; id <= 5; ++id) ASSERT_OK(Put(shard.get(), {MakeRecord(id)}));
    std::vector<TestRecord> batch;
    for (uint64_t id = 6; id <= 60; ++id) batch.push_back(MakeRecord(id, 1000));
    ASSERT_OK(Put(shard.get(), batch));
    for (uint64_t id = 1; id <= 60; ++id) records.push_back(MakeRecord(id, id <= 5 ? 50 : 1000));
    ExpectHolds(*shard, records);
    ASSERT_OK(shard->Close());
  }
  // The log holds kPutRecords records.
  auto contents = FileSystem::Default()->ReadFile(JoinPath(ShardDir(), WalFileName(1)));
  ASSERT_OK(contents.status());
  EXPECT_EQ(static_cast<uint8_t>((*contents)[wal::kFileHeaderSize + 12]),
            static_cast<uint8_t>(wal::RecordType::kPutRecords));
  auto shard = OpenShard();
  ASSERT_NE(shard, nullptr);
  EXPECT_EQ(shard->recovery_stats().ops, 60u);
  ExpectHolds(*shard, records);
  ASSERT_OK(shard->Close());
}

TEST_F(ShardRecordsTest, RecordsAreReadFromFrozenMemtables) {
  // Without a flusher frozen memtables stay: the large payloads fill a
  // memtable after a few records (memtable_bytes counts them).
  memtable_bytes_ = 64 << 10;
  auto shard = OpenShard();
  ASSERT_NE(shard, nullptr);
  std::vector<TestRecord> records;
  for (uint64_t id = 1; id <= 12; ++id) {
    records.push_back(MakeRecord(id, 40 << 10));
    ASSERT_OK(Put(shard.get(), {records.back()}));
  }
  EXPECT_GE(shard->Report().frozen_memtables, 2u);
  ExpectHolds(*shard, records);
  RecordData labels_only;
  ASSERT_OK(shard->GetRecord(1, kLabelsPart, &labels_only));
  EXPECT_EQ(labels_only, (RecordData{1, {}, records[0].labels, {}, {}}));
  ASSERT_OK(shard->Close());
}

TEST_F(ShardRecordsTest, PutAcrossWritesEachShardsRecordsAtomically) {
  auto a = OpenShard(0), b = OpenShard(1);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  std::vector<TestRecord> ra, rb;
  for (uint64_t id = 1; id <= 30; ++id) (id % 2 ? ra : rb).push_back(MakeRecord(id, 300));
  std::vector<uint64_t> ida, idb;
  std::vector<const float*> rowa, rowb;
  std::vector<record::Extras> exa, exb;
  for (const TestRecord& r : ra) ida.push_back(r.id), rowa.push_back(r.vector.data()),
                                 exa.push_back(r.extras());
  for (const TestRecord& r : rb) idb.push_back(r.id), rowb.push_back(r.vector.data()),
                                 exb.push_back(r.extras());
  const Shard::BatchPart parts[] = {{a.get(), ida, rowa, exa}, {b.get(), idb, rowb, {}}};
  ASSERT_OK(Shard::PutAcross(parts, nullptr));
  ExpectHolds(*a, ra);
  for (TestRecord& r : rb) r.labels.clear(), r.attributes.clear(), r.payload.clear();
  ExpectHolds(*b, rb);  // the part without extras: plain vectors
  ASSERT_OK(a->Close());
  ASSERT_OK(b->Close());
  a = OpenShard(0);
  ASSERT_NE(a, nullptr);
  ExpectHolds(*a, ra);
  ASSERT_OK(a->Close());
}

TEST_F(ShardRecordsTest, ExtrasNotOnePerIdAreInvalid) {
  auto shard = OpenShard();
  ASSERT_NE(shard, nullptr);
  const TestRecord r = MakeRecord(1);
  const std::vector<uint64_t> ids = {1, 2};
  const std::vector<const float*> rows = {r.vector.data(), r.vector.data()};
  const std::vector<record::Extras> extras = {r.extras()};
  EXPECT_STATUS_CODE(shard->Put(ids, rows, extras), absl::StatusCode::kInvalidArgument);
  RecordData got;
  EXPECT_STATUS_CODE(shard->GetRecord(1, kAllParts, &got), absl::StatusCode::kNotFound);
  ASSERT_OK(shard->Close());
}

// A shard log written before records existed (header version 1) replays;
// records written after it go to a new file, so that no version-1 file
// ever holds a kPutRecords.
TEST_F(ShardRecordsTest, Version1LogStillReplaysAndNewRecordsGoToANewFile) {
  std::vector<TestRecord> plain;
  {
    auto shard = OpenShard();
    ASSERT_NE(shard, nullptr);
    for (uint64_t id = 3; id <= 30; id += 3) {
      plain.push_back(MakeRecord(id));  // no parts: a multiple of 3
      ASSERT_OK(Put(shard.get(), {plain.back()}));
    }
    ASSERT_OK(shard->Close());
  }
  const std::string first = JoinPath(ShardDir(), WalFileName(1));
  auto contents = FileSystem::Default()->ReadFile(first);
  ASSERT_OK(contents.status());
  // Every record is a plain kPut: make the file what an older build wrote.
  ASSERT_EQ(static_cast<uint8_t>((*contents)[wal::kFileHeaderSize + 12]),
            static_cast<uint8_t>(wal::RecordType::kPut));
  EncodeFixed32(contents->data() + 8, 1);
  EncodeFixed32(contents->data() + 28, static_cast<uint32_t>(Checksum64(contents->data(), 28)));
  ASSERT_OK(WriteFileAtomic(FileSystem::Default(), first, *contents));

  std::vector<TestRecord> all = plain;
  {
    auto shard = OpenShard();
    ASSERT_NE(shard, nullptr);
    EXPECT_EQ(shard->recovery_stats().ops, plain.size());
    ExpectHolds(*shard, plain);
    all.push_back(MakeRecord(31));
    ASSERT_OK(Put(shard.get(), {all.back()}));
    ASSERT_OK(shard->Close());
  }
  EXPECT_TRUE(std::filesystem::exists(JoinPath(ShardDir(), WalFileName(2))));
  auto again = FileSystem::Default()->ReadFile(first);
  ASSERT_OK(again.status());
  EXPECT_EQ(DecodeFixed32(again->data() + 8), 1u);
  auto shard = OpenShard();
  ASSERT_NE(shard, nullptr);
  ExpectHolds(*shard, all);
  ASSERT_OK(shard->Close());
}

}  // namespace
}  // namespace shoal
