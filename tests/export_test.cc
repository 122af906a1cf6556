// Copyright 2026 The shoal Authors.
//
// DB::Export (shoal/record_iterator.h): every live record of a collection at
// one point in time, each id once, the newest version, no deleted id;
// compared record by record with a model, over memtables, frozen memtables,
// segments (memory-mapped and disk-resident, a graph a shard or one for all
// shards), deletes, overwrites and records with parts; unaffected by writes,
// deletes, flushes and merges that run while it iterates; and its errors.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "shoal/db.h"
#include "shoal/options.h"
#include "shoal/record.h"
#include "shoal/record_iterator.h"
#include "testutil/temp_dir.h"

namespace shoal::test {
namespace {

using ::absl::StatusCode;

constexpr uint32_t kDim = 8;
constexpr char kName[] = "docs";

// A record the test owns, with parts varied by id and version.
struct Owned {
  uint64_t id = 0;
  std::vector<float> vector;
  std::vector<uint32_t> labels;  // canonical: ascending, distinct
  std::vector<AttributeValue> attributes;  // by ascending index
  std::string payload;

  Record view() const { return Record{id, vector, labels, attributes, payload}; }
};

Owned MakeRecord(uint64_t id, uint64_t version = 0) {
  std::mt19937_64 rng(id * 7919 + version);
  Owned r;
  r.id = id;
  r.vector.resize(kDim);
  for (float& x : r.vector) x = std::uniform_real_distribution<float>(-1, 1)(rng);
  switch ((id + version) % 3) {
    case 0:  // a vector alone
      break;
    case 1:  // a payload alone (opaque bytes: a zero byte is kept)
      r.payload = "doc " + std::to_string(id) + " v" + std::to_string(version);
      r.payload[0] = '\0';
      break;
    default:  // everything
      r.labels = {static_cast<uint32_t>(id % 3), static_cast<uint32_t>(id % 7 + 100)};
      r.attributes = {{0, static_cast<int64_t>(1700000000 + id + version)},
                      {1, -static_cast<int64_t>(id)}};
      r.payload = std::string(20 + id % 200, static_cast<char>('a' + id % 26));
      break;
  }
  return r;
}

using Model = absl::flat_hash_map<uint64_t, Owned>;

// (segment storage, one graph for the collection's shards while small).
class ExportTest : public ::testing::TestWithParam<std::tuple<SegmentStorage, bool>> {
 protected:
  void SetUp() override { Open(); }

  Options DbOptions() const {
    Options o = DefaultOptions(0);
    o.segment_storage = std::get<0>(GetParam());
    o.compaction.automatic = false;  // merges run when the test says
    if (!std::get<1>(GetParam())) o.compaction.one_graph_max_vectors = 0;
    return o;
  }
  void Open() {
    db_.reset();
    ASSERT_OK_AND_ASSIGN(db_, DB::Open(DbOptions(), dir_.path()));
    if (db_->ListCollections().empty()) {
      CollectionOptions co;
      co.dim = kDim;
      co.shard_count = 3;
      co.attributes = {"timestamp", "price_cents"};
      ASSERT_OK(db_->CreateCollection(kName, co));
    }
  }
  void PutBatch(uint64_t first, uint64_t count, uint64_t version = 0) {
    std::vector<Owned> owned;
    for (uint64_t id = first; id < first + count; ++id) owned.push_back(MakeRecord(id, version));
    std::vector<Record> views;
    for (const Owned& r : owned) views.push_back(r.view());
    ASSERT_OK(db_->PutBatch(kName, views));
    for (Owned& r : owned) model_[r.id] = std::move(r);
  }
  void Delete(uint64_t id) {
    ASSERT_OK(db_->Delete(kName, id));
    model_.erase(id);
  }
  // Memtable + frozen-free segments of several ages + deletes + overwrites:
  // ids 1..600 in three flushed batches (the second overwrites some of the
  // first), deletes in a segment and in the memtable, and a memtable of
  // new and overwritten records.
  void BuildLayeredState() {
    PutBatch(1, 300);
    ASSERT_OK(db_->Flush());
    PutBatch(200, 200, 1);  // overwrites 200..299, adds 300..399
    for (uint64_t id = 10; id < 60; id += 7) Delete(id);
    ASSERT_OK(db_->Flush());
    PutBatch(400, 200);
    ASSERT_OK(db_->Flush());
    PutBatch(250, 20, 2);  // overwrites in the memtable
    PutBatch(600, 50);     // new in the memtable
    for (uint64_t id = 400; id < 420; id += 3) Delete(id);  // tombstones in the memtable
  }

  // Every record the iterator yields, by id; fails on a repeated id.
  static Model Drain(RecordIterator* it) {
    Model got;
    for (; it->Valid(); it->Next()) {
      const RecordData& r = it->record();
      Owned o{r.id, r.vector, r.labels, r.attributes, r.payload};
      EXPECT_TRUE(got.emplace(r.id, std::move(o)).second) << "id " << r.id << " twice";
    }
    EXPECT_OK(it->status());
    return got;
  }
  // `got` holds exactly the model's records, with the parts `parts` names.
  static void ExpectEqual(const Model& model, const Model& got, uint32_t parts) {
    EXPECT_EQ(got.size(), model.size());
    for (const auto& [id, want] : model) {
      auto it = got.find(id);
      if (it == got.end()) {
        ADD_FAILURE() << "id " << id << " missing";
        continue;
      }
      const Owned& g = it->second;
      EXPECT_EQ(g.vector, (parts & kVectorPart) ? want.vector : std::vector<float>()) << id;
      EXPECT_EQ(g.labels, (parts & kLabelsPart) ? want.labels : std::vector<uint32_t>()) << id;
      EXPECT_EQ(g.attributes, (parts & kAttributesPart) ? want.attributes
                                                         : std::vector<AttributeValue>())
          << id;
      EXPECT_EQ(g.payload, (parts & kPayloadPart) ? want.payload : std::string()) << id;
    }
  }
  void ExpectExportEqualsModel(uint32_t parts = kAllParts) {
    ExportOptions options;
    options.parts = parts;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<RecordIterator> it, db_->Export(kName, options));
    ExpectEqual(model_, Drain(it.get()), parts);
  }

  TempDir dir_;
  std::unique_ptr<DB> db_;
  Model model_;
};

TEST_P(ExportTest, EmptyCollectionExportsNothing) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RecordIterator> it, db_->Export(kName));
  EXPECT_FALSE(it->Valid());
  EXPECT_OK(it->status());
}

TEST_P(ExportTest, MemtableRecordsExportWhole) {
  PutBatch(1, 100);
  Delete(5);
  ExpectExportEqualsModel();
}

TEST_P(ExportTest, LayeredSegmentsDeletesAndOverwritesExportTheNewestVersion) {
  BuildLayeredState();
  ExpectExportEqualsModel();
}

TEST_P(ExportTest, CompactedCollectionExportsTheSame) {
  BuildLayeredState();
  ASSERT_OK(db_->Compact());
  ExpectExportEqualsModel();
  Open();  // and after a reopen (the memtable replayed from the log)
  ExpectExportEqualsModel();
}

TEST_P(ExportTest, OnlyThePartsAskedForAreRead) {
  BuildLayeredState();
  ExpectExportEqualsModel(kVectorPart);
  ExpectExportEqualsModel(kPayloadPart);
  ExpectExportEqualsModel(kLabelsPart | kAttributesPart);
  ExpectExportEqualsModel(0);  // ids alone
}

TEST_P(ExportTest, BatchesLargerThanOneReadExportWhole) {
  // More nodes than one batch of the iterator reads from a segment.
  PutBatch(1, 40000);
  ASSERT_OK(db_->Flush());
  PutBatch(30000, 20000, 1);
  ASSERT_OK(db_->Flush());
  ExpectExportEqualsModel(kVectorPart);
  ASSERT_OK(db_->Compact());
  ExpectExportEqualsModel();
}

TEST_P(ExportTest, ProgressEndsAtItsTotal) {
  BuildLayeredState();
  uint64_t calls = 0, last_done = 0, last_total = 0;
  ExportOptions options;
  options.progress = [&](uint64_t done, uint64_t total) {
    EXPECT_GE(done, last_done);
    EXPECT_LE(done, total);
    ++calls;
    last_done = done;
    last_total = total;
  };
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RecordIterator> it, db_->Export(kName, options));
  ExpectEqual(model_, Drain(it.get()), kAllParts);
  EXPECT_GT(calls, 1u);
  EXPECT_EQ(last_done, last_total);
  EXPECT_GE(last_total, model_.size());
}

// The export is of the moment it started: a flush, a compaction that merges
// away (and deletes the files of) the segments it reads, overwrites,
// deletes and a drop change nothing it yields.
TEST_P(ExportTest, LaterWritesFlushesMergesAndDropsDoNotChangeAnExport) {
  BuildLayeredState();
  const Model at_start = model_;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RecordIterator> it, db_->Export(kName));
  PutBatch(1, 650, 9);
  for (uint64_t id = 100; id < 200; ++id) Delete(id);
  ASSERT_OK(db_->Flush());
  ASSERT_OK(db_->Compact());
  PutBatch(5000, 10);
  ExpectEqual(at_start, Drain(it.get()), kAllParts);
  ExpectExportEqualsModel();  // a new export sees the new state

  ASSERT_OK_AND_ASSIGN(it, db_->Export(kName));
  ASSERT_OK(db_->DropCollection(kName));
  ExpectEqual(model_, Drain(it.get()), kAllParts);
}

// Writers, deleters, flushes and merges run on other threads while the
// export iterates (slowly, so that they overlap): it yields exactly the
// state at its start. Small memtables make the writes freeze and flush the
// memtable whose rows the export read where they are.
TEST_P(ExportTest, ConcurrentWritesFlushesAndMergesDoNotChangeAnExport) {
  db_.reset();
  Options o = DbOptions();
  o.memtable_bytes = 64 << 10;
  o.compaction.automatic = true;
  ASSERT_OK_AND_ASSIGN(db_, DB::Open(o, dir_.path()));
  BuildLayeredState();
  for (int round = 0; round < 3; ++round) {
    const Model at_start = model_;  // no writes run now
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<RecordIterator> it, db_->Export(kName));
    std::atomic<bool> stop{false};
    std::atomic<int> puts{0}, merges{0};
    std::vector<std::thread> threads;
    threads.emplace_back([&] {
      for (uint64_t v = 10; !stop.load(); ++v) {
        std::vector<Owned> owned;
        for (uint64_t id = (v * 37) % 700; id < (v * 37) % 700 + 64; ++id) {
          owned.push_back(MakeRecord(id + 1, v));
        }
        std::vector<Record> views;
        for (const Owned& r : owned) views.push_back(r.view());
        EXPECT_OK(db_->PutBatch(kName, views));
        ++puts;
      }
    });
    threads.emplace_back([&] {
      for (uint64_t id = 1; !stop.load(); id = id % 700 + 13) EXPECT_OK(db_->Delete(kName, id));
    });
    threads.emplace_back([&] {
      while (!stop.load()) {
        EXPECT_OK(db_->Flush());
        EXPECT_OK(db_->Compact());
        ++merges;
      }
    });
    Model got;
    for (size_t n = 0; it->Valid(); it->Next(), ++n) {
      const RecordData& r = it->record();
      EXPECT_TRUE(got.emplace(r.id, Owned{r.id, r.vector, r.labels, r.attributes, r.payload})
                      .second)
          << "id " << r.id << " twice";
      if (n == at_start.size() / 2) {
        // Halfway: wait until writes, a flush and a merge have run meanwhile.
        while (puts.load() < 4 || merges.load() < 1) std::this_thread::yield();
      }
      if (n % 16 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    EXPECT_OK(it->status());
    stop.store(true);
    for (std::thread& t : threads) t.join();
    ExpectEqual(at_start, got, kAllParts);
    // The model again, from the database as the writers left it.
    model_.clear();
    ASSERT_OK_AND_ASSIGN(it, db_->Export(kName));
    for (; it->Valid(); it->Next()) {
      const RecordData& r = it->record();
      model_[r.id] = Owned{r.id, r.vector, r.labels, r.attributes, r.payload};
      ASSERT_OK_AND_ASSIGN(RecordData single, db_->GetRecord(kName, r.id));
      EXPECT_EQ(single, r);
    }
    ASSERT_OK(it->status());
  }
}

TEST_P(ExportTest, UnknownCollectionIsNotFound) {
  EXPECT_STATUS_CODE(db_->Export("nope"), StatusCode::kNotFound);
}

TEST_P(ExportTest, BadPartsAreInvalidArgument) {
  ExportOptions options;
  options.parts = 16;
  EXPECT_STATUS_CODE(db_->Export(kName, options), StatusCode::kInvalidArgument);
}

TEST_P(ExportTest, ClosedDatabaseIsFailedPrecondition) {
  ASSERT_OK(db_->Close());
  EXPECT_STATUS_CODE(db_->Export(kName), StatusCode::kFailedPrecondition);
}

INSTANTIATE_TEST_SUITE_P(
    StorageAndGraphs, ExportTest,
    ::testing::Combine(::testing::Values(SegmentStorage::kMapped, SegmentStorage::kDisk),
                       ::testing::Bool()),
    [](const ::testing::TestParamInfo<std::tuple<SegmentStorage, bool>>& info) {
      return std::string(std::get<0>(info.param) == SegmentStorage::kMapped ? "Mapped"
                                                                            : "Disk") +
             (std::get<1>(info.param) ? "OneGraph" : "GraphPerShard");
    });

}  // namespace
}  // namespace shoal::test
