// Copyright 2026 The shoal Authors.
//
// The `shoal` command-line tool, run as a user would: every subcommand on a
// small database, and `verify` on a database with a flipped byte.

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "dataset/dataset_reader.h"
#include "dataset/dataset_writer.h"
#include "dataset/npy_format.h"
#include "util/coding.h"
#include "gtest/gtest.h"
#include "shoal/db.h"
#include "testutil/temp_dir.h"
#include "util/file_system.h"

#ifndef SHOAL_TOOL_PATH
#error "SHOAL_TOOL_PATH must name the built shoal binary"
#endif

namespace shoal {
namespace {

struct ToolRun {
  int exit_code;
  std::string output;  // stdout and stderr
};

ToolRun Shoal(const std::string& args) {
  const std::string command = std::string(SHOAL_TOOL_PATH) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ToolRun run{-1, ""};
  if (pipe == nullptr) return run;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) run.output.append(buf, n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

class ShoalToolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.Sub("db");
    base_ = dir_.Sub("base.fvecs");
    queries_ = dir_.Sub("queries.fbin");
    Matrix base{500, 8, test::RandomVectors(500, 8, 1)};
    ASSERT_OK(WriteVectors(FileSystem::Default(), base_, base));
    Matrix queries{3, 8, std::vector<float>(base.data.begin(), base.data.begin() + 24)};
    ASSERT_OK(WriteVectors(FileSystem::Default(), queries_, queries));
  }
  test::TempDir dir_;
  std::string db_, base_, queries_;
};

TEST_F(ShoalToolTest, CreateLoadSearchStatsVerifyDumpWal) {
  ToolRun r = Shoal("create " + db_ + " --dim 8 --metric l2 --shards 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = Shoal("load " + db_ + " " + base_ + " --batch 100");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("loaded 500 vectors"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("vectors/s"), std::string::npos) << r.output;

  // The queries are base rows 0, 1, 2: each finds itself first, at distance 0.
  r = Shoal("search " + db_ + " --query " + queries_ + " -k 3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("0: 0:0 "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1: 1:0 "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("2: 2:0 "), std::string::npos) << r.output;

  r = Shoal("load " + db_ + " " + base_ + " --bulk --first_id 1000");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = Shoal("stats " + db_);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("collection 'default': dim 8, metric l2, 2 shard(s)"),
            std::string::npos)
      << r.output;

  r = Shoal("verify " + db_);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(": OK"), std::string::npos) << r.output;

  // The bulk load flushed what the log held: write more, then dump the log.
  r = Shoal("load " + db_ + " " + base_ + " --first_id 5000");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::string wal;
  for (const auto& e : std::filesystem::directory_iterator(db_ + "/default/shard-0")) {
    if (e.path().extension() == ".log") wal = e.path().string();
  }
  ASSERT_FALSE(wal.empty());
  r = Shoal("dump-wal " + wal);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(" put "), std::string::npos) << r.output;
}

TEST_F(ShoalToolTest, WriteSegmentsThenIngestThemAllOrNothing) {
  ASSERT_EQ(Shoal("create " + db_ + " --dim 8 --shards 2").exit_code, 0);
  const std::string out = dir_.Sub("segments");
  ToolRun r = Shoal("write-segments " + out + " " + base_ + " --like " + db_ + " --first_id 100");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("wrote 500 vectors into 2 files"), std::string::npos) << r.output;
  const std::string files = out + "/segment-shard-0.vamana " + out + "/segment-shard-1.vamana";
  // A missing file among them: refused, nothing ingested.
  r = Shoal("ingest " + db_ + " " + files + " " + out + "/missing.vamana");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("missing.vamana"), std::string::npos) << r.output;
  r = Shoal("ingest " + db_ + " " + files + " --method copy");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ingested 2 files"), std::string::npos) << r.output;
  // Base row 1 is id 101 now.
  r = Shoal("search " + db_ + " --query " + queries_ + " -k 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("1: 101:0"), std::string::npos) << r.output;
  EXPECT_EQ(Shoal("verify " + db_).exit_code, 0);
  EXPECT_EQ(Shoal("ingest " + db_ + " " + files + " --method teleport").exit_code, 2);
}

// The ids file beside an export (docs/format.md, "Export files").
std::vector<uint64_t> ReadExportIds(const std::string& path, bool npy) {
  absl::StatusOr<std::string> bytes = FileSystem::Default()->ReadFile(path);
  EXPECT_OK(bytes);
  if (!bytes.ok()) return {};
  uint64_t offset = 8, rows = 0;
  if (npy) {
    absl::StatusOr<dataset_internal::NpyHeader> h =
        dataset_internal::ParseNpyHeader(*bytes, path);
    EXPECT_OK(h);
    if (!h.ok()) return {};
    EXPECT_EQ(h->descr, "<u8");
    EXPECT_EQ(h->shape.size(), 2u);
    EXPECT_EQ(h->shape[1], 1u);
    offset = h->data_offset;
    rows = h->shape[0];
  } else {
    rows = DecodeFixed32(bytes->data());
    EXPECT_EQ(DecodeFixed32(bytes->data() + 4), 1u);
  }
  EXPECT_EQ(bytes->size(), offset + rows * 8);
  std::vector<uint64_t> ids(rows);
  for (uint64_t i = 0; i < rows; ++i) ids[i] = DecodeFixed64(bytes->data() + offset + i * 8);
  return ids;
}

TEST_F(ShoalToolTest, ExportWritesVectorsAndIdsThatReadBack) {
  ASSERT_EQ(Shoal("create " + db_ + " --dim 8 --shards 2").exit_code, 0);
  ASSERT_EQ(Shoal("load " + db_ + " " + base_ + " --batch 100").exit_code, 0);  // ids 0..499
  ASSERT_EQ(Shoal("load " + db_ + " " + base_ + " --bulk --first_id 1000").exit_code, 0);
  absl::StatusOr<Matrix> base = ReadVectors(FileSystem::Default(), base_);
  ASSERT_OK(base);
  for (const char* ext : {".npy", ".fbin"}) {
    const std::string to = dir_.Sub(std::string("out") + ext);
    const bool npy = std::string(ext) == ".npy";
    ToolRun r = Shoal("export " + db_ + " --to " + to);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("exported 1000 records"), std::string::npos) << r.output;
    // Entries: of every source, a shared segment's once per shard (1500).
    EXPECT_NE(r.output.find(" entries (100%)"), std::string::npos) << r.output;
    absl::StatusOr<Matrix> got = ReadVectors(FileSystem::Default(), to);
    ASSERT_OK(got);
    const std::vector<uint64_t> ids = ReadExportIds(to + (npy ? ".ids.npy" : ".ids.u64bin"), npy);
    ASSERT_EQ(got->rows, 1000u);
    ASSERT_EQ(got->cols, 8u);
    ASSERT_EQ(ids.size(), 1000u);
    std::vector<bool> seen(2000, false);
    for (uint64_t j = 0; j < ids.size(); ++j) {
      const uint64_t id = ids[j];
      ASSERT_TRUE(id < 500 || (id >= 1000 && id < 1500)) << id;
      EXPECT_FALSE(seen[id]) << id;
      seen[id] = true;
      const auto want = base->row(id % 1000);
      const auto row = got->row(j);
      EXPECT_TRUE(std::equal(want.begin(), want.end(), row.begin())) << id;
    }
    EXPECT_FALSE(std::filesystem::exists(to + ".tmp"));
  }
  // Bad input: a clear error, nothing written.
  ToolRun r = Shoal("export " + db_ + " --to " + dir_.Sub("out.txt"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(".npy or .fbin"), std::string::npos) << r.output;
  r = Shoal("export " + db_ + " --collection nope --to " + dir_.Sub("nope.npy"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("NOT_FOUND"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("nope.npy")));
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("nope.npy.tmp")));
  EXPECT_EQ(Shoal("export " + db_).exit_code, 2);  // no --to
}

TEST_F(ShoalToolTest, CheckpointMakesACopyThatExportsTheSame) {
  ASSERT_EQ(Shoal("create " + db_ + " --dim 8 --shards 2").exit_code, 0);
  ASSERT_EQ(Shoal("load " + db_ + " " + base_ + " --batch 100").exit_code, 0);  // ids 0..499
  ASSERT_EQ(Shoal("load " + db_ + " " + base_ + " --bulk --first_id 1000").exit_code, 0);
  const std::string copy = dir_.Sub("copy");
  ToolRun r = Shoal("checkpoint " + db_ + " " + copy);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("(100%)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("checkpoint of "), std::string::npos) << r.output;
  for (const std::string& from : {db_, copy}) {
    r = Shoal("export " + from + " --to " + from + ".npy");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("exported 1000 records"), std::string::npos) << r.output;
  }
  absl::StatusOr<Matrix> a = ReadVectors(FileSystem::Default(), db_ + ".npy");
  absl::StatusOr<Matrix> b = ReadVectors(FileSystem::Default(), copy + ".npy");
  ASSERT_OK(a);
  ASSERT_OK(b);
  // The same records; not in the same order (export's order follows the
  // sources: the copy replays its logs into memtables of its own).
  auto sorted_rows = [](const Matrix& m) {
    std::vector<std::vector<float>> rows;
    for (uint64_t i = 0; i < m.rows; ++i) rows.emplace_back(m.row(i).begin(), m.row(i).end());
    std::sort(rows.begin(), rows.end());
    return rows;
  };
  EXPECT_EQ(a->rows, 1000u);
  EXPECT_EQ(sorted_rows(*a), sorted_rows(*b));
  EXPECT_EQ(Shoal("verify " + copy).exit_code, 0);
  // The copy exists now: a second checkpoint there is refused.
  r = Shoal("checkpoint " + db_ + " " + copy);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("ALREADY_EXISTS"), std::string::npos) << r.output;
  EXPECT_EQ(Shoal("checkpoint " + db_).exit_code, 2);
}

TEST_F(ShoalToolTest, LoadsLabelsFromASideFileAndShowsThem) {
  ToolRun r = Shoal("create " + db_ + " --dim 8 --shards 2 --attributes ts,price_cents");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Line i: vector i's labels; every tenth line empty (no labels).
  const std::string labels = dir_.Sub("labels.txt");
  {
    std::ofstream out(labels);
    for (int i = 0; i < 500; ++i) {
      if (i % 10 != 0) out << i % 3 << ", " << 100 + i % 7 << " " << i % 3;
      out << "\n";
    }
  }
  r = Shoal("load " + db_ + " " + base_ + " --batch 100 --labels " + labels);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::string wal;
  for (const auto& e : std::filesystem::directory_iterator(db_ + "/default/shard-0")) {
    if (e.path().extension() == ".log") wal = e.path().string();
  }
  r = Shoal("dump-wal " + wal);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("labels ["), std::string::npos) << r.output;
  r = Shoal("load " + db_ + " " + base_ + " --bulk --first_id 1000 --labels " + labels);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = Shoal("stats " + db_);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("attributes: ts,price_cents"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("label bytes 0,"), std::string::npos) << r.output;
  r = Shoal("verify " + db_);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  {
    // The records read back with their labels (canonical: sorted, once).
    Options o;
    o.create_if_missing = false;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<DB> db, DB::Open(o, db_));
    ASSERT_OK_AND_ASSIGN(RecordData rec, db->GetRecord(1004));
    EXPECT_EQ(rec.labels, (std::vector<uint32_t>{1, 104}));
    ASSERT_OK_AND_ASSIGN(rec, db->GetRecord(10));
    EXPECT_TRUE(rec.labels.empty());
  }
  // A labels file that does not fit: a clear error, nothing loaded.
  const std::string bad = dir_.Sub("bad.txt");
  {
    std::ofstream out(bad);
    out << "1 2\nthree\n";
  }
  r = Shoal("load " + db_ + " " + base_ + " --first_id 9000 --labels " + bad);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("line 2"), std::string::npos) << r.output;
  const std::string short_file = dir_.Sub("short.txt");
  {
    std::ofstream out(short_file);
    out << "1\n2\n";
  }
  r = Shoal("load " + db_ + " " + base_ + " --first_id 9000 --labels " + short_file);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("2 lines for 500 vectors"), std::string::npos) << r.output;
}

TEST_F(ShoalToolTest, VerifyReportsAFlippedByteAndExitsThree) {
  ASSERT_EQ(Shoal("create " + db_ + " --dim 8 --shards 1").exit_code, 0);
  // Three separate loads: three records, so damage in the first is not a tail.
  for (int i = 0; i < 3; ++i) {
    ToolRun r = Shoal("load " + db_ + " " + base_ + " --first_id " + std::to_string(i * 1000));
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  const std::string wal = db_ + "/default/shard-0/wal-000001.log";
  {
    std::fstream f(wal, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(32 + 32 + 100);  // inside the first record's payload
    f.put('\x7f');
  }
  ToolRun r = Shoal("verify " + db_);
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("DAMAGED"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("wal-000001.log"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("offset 32"), std::string::npos) << r.output;
  r = Shoal("dump-wal " + wal);
  EXPECT_EQ(r.exit_code, 3) << r.output;
}

TEST_F(ShoalToolTest, VerifyReportsADamagedSegment) {
  ASSERT_EQ(Shoal("create " + db_ + " --dim 8 --shards 1").exit_code, 0);
  ASSERT_EQ(Shoal("load " + db_ + " " + base_ + " --bulk").exit_code, 0);
  std::string segment;
  for (const auto& e : std::filesystem::directory_iterator(db_ + "/default/shard-0")) {
    if (e.path().extension() == ".vamana") segment = e.path().string();
  }
  ASSERT_FALSE(segment.empty());
  {
    std::fstream f(segment, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(5000);  // inside a node sector
    f.put('\x55');
  }
  ToolRun r = Shoal("verify " + db_);
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find(".vamana"), std::string::npos) << r.output;
}

TEST_F(ShoalToolTest, BadUsageAndBadInputGiveClearErrors) {
  EXPECT_EQ(Shoal("").exit_code, 2);
  EXPECT_EQ(Shoal("frobnicate").exit_code, 2);
  EXPECT_EQ(Shoal("--help").exit_code, 0);
  ToolRun r = Shoal("create " + db_ + " --dim 0");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("dim"), std::string::npos) << r.output;
  r = Shoal("stats " + dir_.Sub("missing"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  ASSERT_EQ(Shoal("create " + db_ + " --dim 4").exit_code, 0);
  r = Shoal("load " + db_ + " " + base_);  // 8-d file into a 4-d collection
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("has dim 8"), std::string::npos) << r.output;
  r = Shoal("load " + db_ + " " + dir_.Sub("nothing.fvecs"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  r = Shoal("dump-wal " + dir_.Sub("not-a-wal.txt"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

}  // namespace
}  // namespace shoal
