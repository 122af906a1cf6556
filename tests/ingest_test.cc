// Copyright 2026 The shoal Authors.
//
// SegmentWriter + DB::IngestSegments (issue 47): files built outside the
// database answer like a bulk load of the same rows; ingested records are
// newer than everything before and older than everything after; a damaged
// or mismatched file is refused with a clear status and nothing changed;
// a one-graph file is shared by every shard; and a process killed anywhere
// in an ingest leaves all of it or none of it.

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "segment/segment.h"
#include "shoal/db.h"
#include "shoal/file_system.h"
#include "shoal/filter.h"
#include "shoal/segment_writer.h"
#include "testutil/temp_dir.h"
#include "util/coding.h"
#include "util/hash.h"
#include "version/filename.h"

namespace shoal {
namespace {

namespace stdfs = std::filesystem;
using test::TempDir;

constexpr uint32_t kDim = 16;

Options Opts(uint32_t shards = 2) {
  Options o = test::DefaultOptions(kDim, Metric::kL2, shards);
  o.worker_threads = 2;
  return o;
}

SegmentWriterOptions WriterOpts(const CollectionOptions& c) {
  SegmentWriterOptions w;
  w.collection = c;
  w.threads = 2;
  return w;
}

// Vectors Vec(id + salt) for ids [from, to).
std::vector<uint64_t> Ids(uint64_t from, uint64_t to) {
  std::vector<uint64_t> ids;
  for (uint64_t id = from; id < to; ++id) ids.push_back(id);
  return ids;
}
std::vector<float> Rows(std::span<const uint64_t> ids, uint64_t salt) {
  std::vector<float> rows;
  for (uint64_t id : ids) {
    const std::vector<float> v = test::RandomVector(kDim, id + salt);
    rows.insert(rows.end(), v.begin(), v.end());
  }
  return rows;
}

// Writes ids [from, to) with salt into `dir` for `c`; returns the files.
absl::StatusOr<std::vector<std::string>> Write(const std::string& dir,
                                               const CollectionOptions& c, uint64_t from,
                                               uint64_t to, uint64_t salt,
                                               bool one_graph = false,
                                               const std::string& prefix = "segment") {
  SegmentWriterOptions w = WriterOpts(c);
  w.one_graph = one_graph;
  w.file_prefix = prefix;
  absl::StatusOr<std::unique_ptr<SegmentWriter>> writer = SegmentWriter::Create(dir, w);
  if (!writer.ok()) return writer.status();
  const std::vector<uint64_t> ids = Ids(from, to);
  const std::vector<float> rows = Rows(ids, salt);
  absl::Status s = (*writer)->Add(ids, rows);
  if (!s.ok()) return s;
  return (*writer)->Finish();
}

// Every file under `dir` with its bytes: what "nothing changed" compares.
std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : stdfs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    const std::string name = e.path().string();
    if (name.ends_with("LOCK")) continue;
    if (name.find("/wal-") != std::string::npos) {
      out[name] = "(log)";  // mapped, reserved ahead: its size is no change
      continue;
    }
    std::ifstream in(name, std::ios::binary);
    out[name] = std::string(std::istreambuf_iterator<char>(in), {});
  }
  return out;
}

void FlipByte(const std::string& path, uint64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c;
  f.read(&c, 1);
  c ^= 0x5a;
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
}

double Recall(DB& db, const test::VectorMap& model, int queries) {
  int hits = 0, total = 0;
  SearchOptions so;
  so.k = 10;
  so.list_size = 40;
  for (int q = 0; q < queries; ++q) {
    const std::vector<float> query = test::RandomVector(kDim, 1000000 + q);
    const std::vector<Neighbor> truth = test::BruteForceTopK(model, query, Metric::kL2, 10);
    absl::StatusOr<std::vector<Neighbor>> got = db.Search(query, so);
    if (!got.ok()) return -1;
    std::set<uint64_t> want;
    for (const Neighbor& n : truth) want.insert(n.id);
    for (const Neighbor& n : *got) hits += want.count(n.id);
    total += static_cast<int>(truth.size());
  }
  return static_cast<double>(hits) / total;
}

class IngestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = DB::Open(Opts(), dir_.path());
    ASSERT_OK(db);
    db_ = std::move(db).value();
    auto c = db_->GetCollectionOptions(kDefaultCollection);
    ASSERT_OK(c);
    collection_ = *c;
  }

  // Asserts that ingesting `files` fails with `code` and a message holding
  // `says`, and that the database's files and answers are as before.
  void ExpectRefused(const std::vector<std::string>& files, absl::StatusCode code,
                     const std::string& says) {
    const std::map<std::string, std::string> before = Snapshot(dir_.path());
    const absl::Status s = db_->IngestSegments(kDefaultCollection, files);
    EXPECT_EQ(s.code(), code) << s;
    EXPECT_NE(s.message().find(says), std::string::npos) << s;
    EXPECT_EQ(Snapshot(dir_.path()), before);
    EXPECT_STATUS_CODE(db_->Get(5000), absl::StatusCode::kNotFound);
    // Still usable.
    ASSERT_OK(db_->Put(1, test::RandomVector(kDim, 1)));
  }

  TempDir dir_;
  TempDir out_;
  std::unique_ptr<DB> db_;
  CollectionOptions collection_;
};

TEST_F(IngestTest, IngestedSegmentsAnswerLikeABulkLoadOfTheSameRows) {
  constexpr uint64_t kCount = 3000;
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> files,
                       Write(out_.path(), collection_, 0, kCount, 0));
  EXPECT_EQ(files.size(), 2u);  // one a shard
  ASSERT_OK(db_->IngestSegments(kDefaultCollection, files));

  TempDir bulk_dir;
  ASSERT_OK_AND_ASSIGN(auto bulk, DB::Open(Opts(), bulk_dir.path()));
  const std::vector<uint64_t> ids = Ids(0, kCount);
  ASSERT_OK(bulk->BulkLoad(ids, Rows(ids, 0)));

  test::VectorMap model;
  for (uint64_t id : ids) model[id] = test::RandomVector(kDim, id);
  EXPECT_TRUE(test::HoldsExactly(*db_, kDefaultCollection, Metric::kL2, model));
  const double ingested = Recall(*db_, model, 100);
  const double loaded = Recall(*bulk, model, 100);
  EXPECT_GE(ingested, loaded - 0.02) << "bulk load " << loaded;
  EXPECT_GE(ingested, 0.9);

  // The same after a reopen and a compaction.
  ASSERT_OK(db_->Close());
  db_.reset();
  ASSERT_OK_AND_ASSIGN(db_, DB::Open(Opts(), dir_.path()));
  EXPECT_TRUE(test::HoldsExactly(*db_, kDefaultCollection, Metric::kL2, model));
  ASSERT_OK(db_->Compact());
  EXPECT_TRUE(test::HoldsExactly(*db_, kDefaultCollection, Metric::kL2, model));
}

TEST_F(IngestTest, IngestedRecordsAreNewerThanEarlierPutsAndDeletes) {
  test::VectorMap model;
  for (uint64_t id = 0; id < 100; ++id) {
    ASSERT_OK(db_->Put(id, test::RandomVector(kDim, id + 7)));
    model[id] = test::RandomVector(kDim, id + 7);
  }
  ASSERT_OK(db_->Flush());  // some in a segment,
  for (uint64_t id = 100; id < 150; ++id) ASSERT_OK(db_->Delete(id));  // some in the memtable
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> files,
                       Write(out_.path(), collection_, 50, 200, 0));
  ASSERT_OK(db_->IngestSegments(kDefaultCollection, files));
  for (uint64_t id = 50; id < 200; ++id) model[id] = test::RandomVector(kDim, id);
  EXPECT_TRUE(test::HoldsExactly(*db_, kDefaultCollection, Metric::kL2, model));

  // Later writes win over the ingested records.
  ASSERT_OK(db_->Put(60, test::RandomVector(kDim, 99)));
  model[60] = test::RandomVector(kDim, 99);
  ASSERT_OK(db_->Delete(70));
  model.erase(70);
  const std::vector<uint64_t> absent = {70};
  EXPECT_TRUE(test::HoldsExactly(*db_, kDefaultCollection, Metric::kL2, model, absent));
  // Also once flushed, merged and reopened.
  ASSERT_OK(db_->Flush());
  ASSERT_OK(db_->Close());
  db_.reset();
  ASSERT_OK_AND_ASSIGN(db_, DB::Open(Opts(), dir_.path()));
  EXPECT_TRUE(test::HoldsExactly(*db_, kDefaultCollection, Metric::kL2, model, absent));
  ASSERT_OK(db_->Compact());
  EXPECT_TRUE(test::HoldsExactly(*db_, kDefaultCollection, Metric::kL2, model, absent));
}

TEST_F(IngestTest, ALaterFileWinsOverAnEarlierOneAndTheLastRowOfAnIdWithinOne) {
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> first,
                       Write(out_.path(), collection_, 0, 100, 1, false, "a"));
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> second,
                       Write(out_.path(), collection_, 50, 150, 2, false, "b"));
  // Within one writer: the last row of id 7 wins.
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(out_.path() + "/c", WriterOpts(collection_)));
  const std::vector<uint64_t> sevens = {7, 7};
  std::vector<float> rows = test::RandomVector(kDim, 70);
  const std::vector<float> last = test::RandomVector(kDim, 71);
  rows.insert(rows.end(), last.begin(), last.end());
  ASSERT_OK(writer->Add(sevens, rows));
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> third, writer->Finish());

  std::vector<std::string> files = first;
  files.insert(files.end(), second.begin(), second.end());
  files.insert(files.end(), third.begin(), third.end());
  ASSERT_OK(db_->IngestSegments(kDefaultCollection, files));
  test::VectorMap model;
  for (uint64_t id = 0; id < 50; ++id) model[id] = test::RandomVector(kDim, id + 1);
  for (uint64_t id = 50; id < 150; ++id) model[id] = test::RandomVector(kDim, id + 2);
  model[7] = last;
  EXPECT_TRUE(test::HoldsExactly(*db_, kDefaultCollection, Metric::kL2, model));
}

TEST(IngestRecordsTest, LabelsAttributesAndPayloadsComeThrough) {
  TempDir dir, out;
  Options o = Opts();
  o.default_collection.attributes = {"ts", "price"};
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
  ASSERT_OK_AND_ASSIGN(CollectionOptions c, db->GetCollectionOptions(kDefaultCollection));
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(out.path(), WriterOpts(c)));
  std::vector<std::vector<float>> vectors;
  std::vector<std::vector<uint32_t>> labels;
  std::vector<std::vector<AttributeValue>> attributes;
  std::vector<std::string> payloads;
  for (uint64_t id = 0; id < 400; ++id) {
    vectors.push_back(test::RandomVector(kDim, id));
    labels.push_back({static_cast<uint32_t>(id % 4)});
    attributes.push_back({{0, static_cast<int64_t>(id)}});
    payloads.push_back(id % 3 == 0 ? "" : "doc-" + std::to_string(id));
  }
  std::vector<Record> records(400);
  for (uint64_t id = 0; id < 400; ++id) {
    records[id] = Record{id, vectors[id], labels[id], attributes[id], payloads[id]};
  }
  // Before the records, plain vectors (no parts) for other ids.
  const std::vector<uint64_t> plain = Ids(1000, 1010);
  ASSERT_OK(writer->Add(plain, Rows(plain, 0)));
  ASSERT_OK(writer->Add(records));
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> files, writer->Finish());
  ASSERT_OK(db->IngestSegments(kDefaultCollection, files));
  for (uint64_t id = 0; id < 400; ++id) {
    ASSERT_OK_AND_ASSIGN(RecordData r, db->GetRecord(id));
    EXPECT_EQ(r.vector, vectors[id]);
    EXPECT_EQ(r.labels, labels[id]);
    EXPECT_EQ(r.attributes, attributes[id]);
    EXPECT_EQ(r.payload, payloads[id]);
  }
  ASSERT_OK_AND_ASSIGN(RecordData p, db->GetRecord(1003));
  EXPECT_TRUE(p.labels.empty() && p.attributes.empty() && p.payload.empty());
  // A filtered search sees the labels.
  Filter f = Filter::AnyLabel({2});
  SearchOptions so;
  so.k = 20;
  so.filter = &f;
  ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got, db->Search(test::RandomVector(kDim, 5), so));
  EXPECT_EQ(got.size(), 20u);
  for (const Neighbor& n : got) EXPECT_EQ(n.id % 4, 2u) << n.id;

  // A record naming an attribute the collection lacks is refused by Add.
  ASSERT_OK_AND_ASSIGN(auto other, SegmentWriter::Create(out.path() + "/x", WriterOpts(c)));
  const std::vector<AttributeValue> bad = {{5, 1}};
  const Record r{1, vectors[0], {}, bad, {}};
  EXPECT_STATUS_CODE(other->Add(std::span<const Record>(&r, 1)),
                     absl::StatusCode::kInvalidArgument);
}

TEST(IngestRecordsTest, TheFirstRowOfEachShardKeepsItsParts) {
  // The writer once took "no row of this shard has parts yet" for "the
  // shard keeps none", and dropped the parts of a shard's first row.
  TempDir dir, out;
  Options o = Opts();
  o.default_collection.attributes = {"ts"};
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
  ASSERT_OK_AND_ASSIGN(CollectionOptions c, db->GetCollectionOptions(kDefaultCollection));
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(out.path(), WriterOpts(c)));
  constexpr uint64_t kRows = 20;
  std::vector<std::vector<float>> vectors;
  std::vector<std::vector<uint32_t>> labels;
  std::vector<std::vector<AttributeValue>> attributes;
  std::vector<std::string> payloads;
  for (uint64_t id = 0; id < kRows; ++id) {
    vectors.push_back(test::RandomVector(kDim, id));
    labels.push_back({static_cast<uint32_t>(id)});
    attributes.push_back({{0, static_cast<int64_t>(id)}});
    payloads.push_back("p" + std::to_string(id));
  }
  std::vector<Record> records(kRows);
  for (uint64_t id = 0; id < kRows; ++id) {
    records[id] = Record{id, vectors[id], labels[id], attributes[id], payloads[id]};
  }
  ASSERT_OK(writer->Add(records));
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> files, writer->Finish());
  ASSERT_OK(db->IngestSegments(kDefaultCollection, files));
  for (uint64_t id = 0; id < kRows; ++id) {
    ASSERT_OK_AND_ASSIGN(RecordData r, db->GetRecord(id));
    EXPECT_EQ(r.labels, labels[id]) << id;
    EXPECT_EQ(r.attributes, attributes[id]) << id;
    EXPECT_EQ(r.payload, payloads[id]) << id;
  }
}

TEST(IngestOneGraphTest, OneGraphFileIsSharedByEveryShard) {
  TempDir dir, out;
  const Options o = Opts(3);
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
  ASSERT_OK_AND_ASSIGN(CollectionOptions c, db->GetCollectionOptions(kDefaultCollection));
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> files,
                       Write(out.path(), c, 0, 2000, 0, /*one_graph=*/true));
  ASSERT_EQ(files.size(), 1u);
  ASSERT_OK(db->Put(5, test::RandomVector(kDim, 555)));  // older: replaced
  ASSERT_OK(db->IngestSegments(kDefaultCollection, files));
  test::VectorMap model;
  for (uint64_t id = 0; id < 2000; ++id) model[id] = test::RandomVector(kDim, id);
  EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
  // One file in the collection's directory, no shard's own.
  size_t shared = 0;
  for (const auto& e : stdfs::directory_iterator(JoinPath(dir.path(), kDefaultCollection))) {
    uint64_t number;
    shared += ParseSegmentFileName(e.path().filename().string(), &number);
  }
  EXPECT_EQ(shared, 1u);
  EXPECT_GE(Recall(*db, model, 50), 0.9);
  ASSERT_OK(db->Close());
  db.reset();
  ASSERT_OK_AND_ASSIGN(db, DB::Open(o, dir.path()));
  EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
  ASSERT_OK(db->Compact());
  EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
}

TEST(IngestDiskTest, ADiskResidentCollectionReadsIngestedSegmentsFromTheFile) {
  TempDir dir(TempDir::Storage::kDisk), out(TempDir::Storage::kDisk);
  Options o = Opts();
  o.segment_storage = SegmentStorage::kDisk;
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
  ASSERT_OK_AND_ASSIGN(CollectionOptions c, db->GetCollectionOptions(kDefaultCollection));
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> files, Write(out.path(), c, 0, 1500, 0));
  ASSERT_OK(db->IngestSegments(kDefaultCollection, files));
  test::VectorMap model;
  for (uint64_t id = 0; id < 1500; ++id) model[id] = test::RandomVector(kDim, id);
  EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
  SearchStats stats;
  SearchOptions so;
  so.stats = &stats;
  ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got, db->Search(model[42], so));
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got[0].id, 42u);
  EXPECT_GT(stats.reads + stats.cache_hits, 0u);  // walked from the file's blocks
}

TEST_F(IngestTest, LinkCopyAndMoveEachLeaveTheGivenFileAsTheySay) {
  // No background merge: one could rewrite a linked segment (and remove
  // the database's name of it) before its link count is looked at.
  ASSERT_OK(db_->Close());
  Options o = Opts();
  o.compaction.automatic = false;
  ASSERT_OK_AND_ASSIGN(db_, DB::Open(o, dir_.path()));
  const auto ino = [](const std::string& p) {
    struct stat st;
    EXPECT_EQ(stat(p.c_str(), &st), 0) << p;
    return std::pair<ino_t, nlink_t>(st.st_ino, st.st_nlink);
  };
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> linked,
                       Write(out_.path(), collection_, 0, 100, 0, false, "l"));
  ASSERT_OK(db_->IngestSegments(kDefaultCollection, linked));
  for (const std::string& f : linked) EXPECT_EQ(ino(f).second, 2u) << f;

  ASSERT_OK_AND_ASSIGN(std::vector<std::string> copied,
                       Write(out_.path(), collection_, 100, 200, 0, false, "c"));
  IngestOptions copy;
  copy.method = IngestMethod::kCopy;
  ASSERT_OK(db_->IngestSegments(kDefaultCollection, copied, copy));
  for (const std::string& f : copied) EXPECT_EQ(ino(f).second, 1u) << f;

  ASSERT_OK_AND_ASSIGN(std::vector<std::string> moved,
                       Write(out_.path(), collection_, 200, 300, 0, false, "m"));
  IngestOptions move;
  move.method = IngestMethod::kMove;
  ASSERT_OK(db_->IngestSegments(kDefaultCollection, moved, move));
  for (const std::string& f : moved) EXPECT_FALSE(stdfs::exists(f)) << f;

  test::VectorMap model;
  for (uint64_t id = 0; id < 300; ++id) model[id] = test::RandomVector(kDim, id);
  EXPECT_TRUE(test::HoldsExactly(*db_, kDefaultCollection, Metric::kL2, model));
  // Linked files removed by the user afterwards change nothing.
  for (const std::string& f : linked) stdfs::remove(f);
  ASSERT_OK(db_->Close());
  db_.reset();
  ASSERT_OK_AND_ASSIGN(db_, DB::Open(Opts(), dir_.path()));
  EXPECT_TRUE(test::HoldsExactly(*db_, kDefaultCollection, Metric::kL2, model));
}

TEST_F(IngestTest, NoFilesIsOkAndChangesNothing) {
  const std::map<std::string, std::string> before = Snapshot(dir_.path());
  ASSERT_OK(db_->IngestSegments(kDefaultCollection, std::vector<std::string>()));
  EXPECT_EQ(Snapshot(dir_.path()), before);
  EXPECT_STATUS_CODE(db_->IngestSegments("nope", std::vector<std::string>()),
                     absl::StatusCode::kNotFound);
}

// ---- Refusals: each with a clear status and nothing changed ----

TEST_F(IngestTest, AFileForAnotherDimIsRefused) {
  CollectionOptions c = collection_;
  c.dim = 8;
  SegmentWriterOptions w = WriterOpts(c);
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(out_.path(), w));
  const std::vector<uint64_t> ids = {5000};
  ASSERT_OK(writer->Add(ids, test::RandomVector(8, 1)));
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> files, writer->Finish());
  ExpectRefused(files, absl::StatusCode::kInvalidArgument, "dim 8, the collection's 16");
}

TEST_F(IngestTest, AFileForAnotherMetricIsRefused) {
  CollectionOptions c = collection_;
  c.metric = Metric::kCosine;
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> files, Write(out_.path(), c, 5000, 5010, 0));
  ExpectRefused(files, absl::StatusCode::kInvalidArgument, "metric cosine, the collection's L2");
}

TEST_F(IngestTest, AFileWithAnotherCodeIsRefused) {
  CollectionOptions c = collection_;
  c.code = VectorCode::kNone;
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> files, Write(out_.path(), c, 5000, 5010, 0));
  ExpectRefused(files, absl::StatusCode::kInvalidArgument, "vector code");
}

TEST_F(IngestTest, AFileForAnotherShardCountIsRefused) {
  CollectionOptions c = collection_;
  c.shard_count = 3;
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> files, Write(out_.path(), c, 5000, 5010, 0));
  ExpectRefused(files, absl::StatusCode::kInvalidArgument, "shard count 3, the collection's 2");
}

TEST_F(IngestTest, AFileForOtherAttributesIsRefused) {
  CollectionOptions c = collection_;
  c.attributes = {"ts"};
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> files, Write(out_.path(), c, 5000, 5010, 0));
  ExpectRefused(files, absl::StatusCode::kInvalidArgument, "attributes");
}

TEST_F(IngestTest, AnIdInTheWrongShardIsRefused) {
  // A writer routes correctly; a file claiming shard 0 for a shard-1 id is
  // made with the builder underneath.
  std::vector<uint64_t> ids;
  for (uint64_t id = 5000; ids.size() < 2; ++id) ids.push_back(id);
  const std::vector<uint64_t> sequences(ids.size(), 0);
  const std::vector<float> rows = Rows(ids, 0);
  SegmentContents contents;
  contents.dim = kDim;
  contents.ids = ids;
  contents.sequences = sequences;
  contents.vectors = rows.data();
  SegmentBuildOptions build;
  build.graph = collection_.graph;
  build.origin.shard_count = 2;
  build.origin.shard = 1 - ShardOf(ids[0], 2);  // wrong for ids[0]
  const std::string path = out_.Sub("wrong.vamana");
  ASSERT_OK(BuildSegment(FileSystem::Default(), nullptr, path, contents, build));
  ExpectRefused({path}, absl::StatusCode::kInvalidArgument,
                "id " + std::to_string(ids[0]) + " belongs in shard");
}

TEST_F(IngestTest, AFlippedByteInANodeBlockIsDataLossNamingFileAndOffset) {
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> files,
                       Write(out_.path(), collection_, 5000, 5300, 0));
  FlipByte(files[0], 4096 + 100);  // first node block
  ExpectRefused(files, absl::StatusCode::kDataLoss, files[0]);
  const absl::Status s = db_->IngestSegments(kDefaultCollection, files);
  EXPECT_NE(s.message().find("offset 4096"), std::string::npos) << s;
}

TEST_F(IngestTest, AFlippedByteInTheIdTableIsDataLossEvenWithoutVerify) {
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> files,
                       Write(out_.path(), collection_, 5000, 5300, 0));
  FlipByte(files[0], stdfs::file_size(files[0]) - 64 - 160 - 24 * 3);  // in the id table
  IngestOptions fast;
  fast.verify_checksums = false;
  const std::map<std::string, std::string> before = Snapshot(dir_.path());
  const absl::Status s = db_->IngestSegments(kDefaultCollection, files, fast);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find(files[0]), std::string::npos) << s;
  EXPECT_EQ(Snapshot(dir_.path()), before);
}

TEST_F(IngestTest, ATruncatedFileIsDataLoss) {
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> files,
                       Write(out_.path(), collection_, 5000, 5300, 0));
  stdfs::resize_file(files[1], stdfs::file_size(files[1]) - 100);
  ExpectRefused(files, absl::StatusCode::kDataLoss, files[1]);
  stdfs::resize_file(files[1], 1000);  // shorter than a header
  ExpectRefused(files, absl::StatusCode::kDataLoss, "truncated");
}

TEST_F(IngestTest, AnUnknownFormatVersionIsFailedPrecondition) {
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> files,
                       Write(out_.path(), collection_, 5000, 5300, 0));
  // Version 9 with a matching header checksum: a file from the future.
  std::string header(4096, '\0');
  {
    std::ifstream in(files[0], std::ios::binary);
    in.read(header.data(), 4096);
  }
  EncodeFixed32(header.data() + 8, 9);
  EncodeFixed64(header.data() + 4088, Checksum64(header.data(), 4088));
  {
    std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
    f.write(header.data(), 4096);
  }
  ExpectRefused(files, absl::StatusCode::kFailedPrecondition, "format version 9");
}

TEST_F(IngestTest, ADatabasesOwnSegmentIsRefused) {
  TempDir other;
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(Opts(), other.path()));
  const std::vector<uint64_t> ids = Ids(5000, 5100);
  ASSERT_OK(db->BulkLoad(ids, Rows(ids, 0)));
  ASSERT_OK(db->Close());
  const std::vector<std::string> files = test::SegmentFiles(other.path());
  ASSERT_FALSE(files.empty());
  ExpectRefused(files, absl::StatusCode::kInvalidArgument, "not written by a SegmentWriter");
}

TEST_F(IngestTest, OneBadFileKeepsTheGoodOnesOut) {
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> good,
                       Write(out_.path(), collection_, 5000, 5300, 0, false, "good"));
  CollectionOptions c = collection_;
  c.dim = 8;
  SegmentWriterOptions w = WriterOpts(c);
  w.file_prefix = "bad";
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(out_.path(), w));
  const std::vector<uint64_t> ids = {1};
  ASSERT_OK(writer->Add(ids, test::RandomVector(8, 1)));
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> bad, writer->Finish());
  std::vector<std::string> files = good;
  files.insert(files.end(), bad.begin(), bad.end());
  ExpectRefused(files, absl::StatusCode::kInvalidArgument, "dim 8");
  ExpectRefused({good[0], out_.Sub("missing.vamana")}, absl::StatusCode::kNotFound,
                "missing.vamana");
}

TEST(SegmentWriterTest, BadOptionsAndBadRowsAreRefused) {
  TempDir out;
  SegmentWriterOptions w;
  w.collection.dim = kDim;
  w.collection.shard_count = 0;  // must be the stored one
  EXPECT_STATUS_CODE(SegmentWriter::Create(out.path(), w), absl::StatusCode::kInvalidArgument);
  w.collection.shard_count = 2;
  w.file_prefix = "a/b";
  EXPECT_STATUS_CODE(SegmentWriter::Create(out.path(), w), absl::StatusCode::kInvalidArgument);
  w.file_prefix = "p";
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(out.path(), w));
  const std::vector<uint64_t> ids = {1, 2};
  std::vector<float> rows = Rows(ids, 0);
  EXPECT_STATUS_CODE(writer->Add(ids, std::span<const float>(rows).first(kDim)),
                     absl::StatusCode::kInvalidArgument);
  rows[kDim + 3] = std::nanf("");
  EXPECT_STATUS_CODE(writer->Add(ids, rows), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(writer->rows(), 0u);
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> none, writer->Finish());
  EXPECT_TRUE(none.empty());
  EXPECT_STATUS_CODE(writer->Add(ids, Rows(ids, 0)), absl::StatusCode::kFailedPrecondition);
  // A second writer of the same files is refused.
  ASSERT_OK_AND_ASSIGN(auto first, SegmentWriter::Create(out.path(), w));
  ASSERT_OK(first->Add(ids, Rows(ids, 0)));
  ASSERT_OK(first->Finish());
  EXPECT_STATUS_CODE(SegmentWriter::Create(out.path(), w), absl::StatusCode::kAlreadyExists);
}

TEST(IngestConcurrencyTest, WritesSearchesAndMergesGoOnDuringIngests) {
  TempDir dir, out;
  Options o = Opts();
  o.memtable_bytes = 64 << 10;  // flushes (and merges) while the ingests run
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
  ASSERT_OK_AND_ASSIGN(CollectionOptions c, db->GetCollectionOptions(kDefaultCollection));
  constexpr int kFiles = 6;
  std::vector<std::vector<std::string>> files;
  for (int f = 0; f < kFiles; ++f) {
    ASSERT_OK_AND_ASSIGN(std::vector<std::string> written,
                         Write(out.path(), c, 10000 + f * 500, 10500 + f * 500, 0,
                               /*one_graph=*/f % 2 == 1, "f" + std::to_string(f)));
    files.push_back(written);
  }
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> put{0};
  std::thread writer([&] {
    for (uint64_t id = 0; !stop.load(); ++id) {
      ASSERT_OK(db->Put(id, test::RandomVector(kDim, id)));
      put.store(id + 1);
    }
  });
  std::thread searcher([&] {
    while (!stop.load()) {
      ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got,
                           db->Search(test::RandomVector(kDim, put.load())));
      EXPECT_TRUE(test::IsSortedTopK(got, 10));
    }
  });
  for (int f = 0; f < kFiles; ++f) EXPECT_OK(db->IngestSegments(kDefaultCollection, files[f]));
  stop.store(true);
  writer.join();
  searcher.join();
  ASSERT_OK(db->WaitForCompact());
  for (uint64_t id = 10000; id < 10000 + kFiles * 500; ++id) {
    ASSERT_OK_AND_ASSIGN(std::vector<float> v, db->Get(id));
    EXPECT_EQ(v, test::RandomVector(kDim, id)) << id;
  }
  for (uint64_t id = 0; id < put.load(); ++id) ASSERT_OK(db->Get(id)) << id;
}

// ---- Crash: kill -9 anywhere in an ingest leaves all of it or none ----

TEST(IngestCrashTest, KillDuringIngestLeavesAllOrNothing) {
  constexpr uint64_t kBase = 100, kFrom = 10000, kTo = 16000;
  TempDir out;
  const Options o = Opts();
  CollectionOptions c;
  {
    TempDir probe;
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, probe.path()));
    ASSERT_OK_AND_ASSIGN(c, db->GetCollectionOptions(kDefaultCollection));
  }
  // Two files of one shard each and a one-graph file: three parts a shard.
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> files,
                       Write(out.path(), c, kFrom, kTo - 2000, 0, false, "a"));
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> shared,
                       Write(out.path(), c, kTo - 2000, kTo, 0, true, "b"));
  files.insert(files.end(), shared.begin(), shared.end());
  IngestOptions copy;  // a copy makes the ingest long enough to hit
  copy.method = IngestMethod::kCopy;

  // How long one ingest takes here, to spread the kills over it.
  int64_t ingest_us;
  {
    TempDir probe;
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, probe.path()));
    const auto start = std::chrono::steady_clock::now();
    ASSERT_OK(db->IngestSegments(kDefaultCollection, files, copy));
    ingest_us = std::chrono::duration_cast<std::chrono::microseconds>(
                    std::chrono::steady_clock::now() - start)
                    .count();
  }
  std::mt19937_64 rng(47);
  int all = 0, none = 0;
  for (int cycle = 0; cycle < 40; ++cycle) {
    TempDir dir;
    {
      ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
      for (uint64_t id = 0; id < kBase; ++id) ASSERT_OK(db->Put(id, test::RandomVector(kDim, id)));
      ASSERT_OK(db->Close());
    }
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      auto db = DB::Open(o, dir.path());
      if (!db.ok()) _exit(3);
      const char opened = 'o';
      if (write(fds[1], &opened, 1) != 1) _exit(4);
      const auto start = std::chrono::steady_clock::now();
      if (!(*db)->IngestSegments(kDefaultCollection, files, copy).ok()) _exit(5);
      // Done, and how long the ingest took in this child.
      const int64_t took = std::chrono::duration_cast<std::chrono::microseconds>(
                               std::chrono::steady_clock::now() - start)
                               .count();
      if (write(fds[1], &took, sizeof(took)) != sizeof(took)) _exit(6);
      pause();
      _exit(0);
    }
    close(fds[1]);
    char c0;
    ASSERT_EQ(read(fds[0], &c0, 1), 1);  // opened
    // Anywhere from before the ingest starts to a while after it ends.
    usleep(static_cast<useconds_t>(rng() % (ingest_us * 3 / 2 + 1)));
    kill(pid, SIGKILL);
    int64_t took = 0;
    const bool done = read(fds[0], &took, sizeof(took)) == sizeof(took);
    // The children's time, not the probe's: a finished child's, else a
    // little longer than thought (a child under load takes longer).
    ingest_us = done ? took : ingest_us * 9 / 8;
    close(fds[0]);
    int wstatus;
    waitpid(pid, &wstatus, 0);
    ASSERT_TRUE(WIFSIGNALED(wstatus)) << "child exited with " << WEXITSTATUS(wstatus);

    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
    size_t present = 0;
    for (uint64_t id = kFrom; id < kTo; ++id) present += db->Get(id).ok();
    ASSERT_TRUE(present == 0 || present == kTo - kFrom) << "cycle " << cycle << ": " << present;
    if (done) {
      ASSERT_EQ(present, kTo - kFrom) << "cycle " << cycle;
    }
    (present == 0 ? none : all) += 1;
    for (uint64_t id = 0; id < kBase; ++id) ASSERT_OK(db->Get(id)) << id;
    // Files the killed ingest placed and no manifest names are gone: at
    // most a flushed memtable a shard (and a merge's output in flight),
    // plus the ingested files when they are in.
    const size_t segments = test::SegmentFiles(dir.path()).size();
    EXPECT_LE(segments, (present == 0 ? 3u : 3u + files.size() + 1)) << "cycle " << cycle;
    // The database goes on: a write, and the same ingest again.
    ASSERT_OK(db->Put(kBase, test::RandomVector(kDim, kBase)));
    ASSERT_OK(db->IngestSegments(kDefaultCollection, files, copy));
    for (uint64_t id = kFrom; id < kTo; id += 97) ASSERT_OK(db->Get(id)) << id;
    ASSERT_OK(db->Close());
  }
  std::printf("kill -9 during ingest (%lld us): %d cycles found all, %d none\n",
              static_cast<long long>(ingest_us), all, none);
  // The kills fell on both sides of the manifest write.
  EXPECT_GT(all, 0);
  EXPECT_GT(none, 0);
}

}  // namespace
}  // namespace shoal
