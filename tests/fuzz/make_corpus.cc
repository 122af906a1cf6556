// Copyright 2026 The shoal Authors.
//
// Writes the seed corpus of the fuzz targets (fuzz_targets.h) with the real
// writers: log files and manifests of a database built through the public
// API, plus damaged copies (cut, flipped, zeroed) and a few hand-made records
// (a safe-to-ignore type, a barrier). Run from the source tree:
//   build/make_fuzz_corpus tests/fuzz/corpus
// The files are committed; rerun when a format changes.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "db/manifest.h"
#include "shoal/db.h"
#include "testutil/temp_dir.h"
#include "util/coding.h"
#include "util/hash.h"
#include "wal/wal_format.h"

namespace {

namespace stdfs = std::filesystem;
using shoal::test::RandomVector;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void WriteSeed(const std::string& dir, const std::string& name, const std::string& bytes) {
  stdfs::create_directories(dir);
  std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
}

std::string Wal(uint8_t flags, uint8_t dim, const std::string& file) {
  return std::string{static_cast<char>(flags), static_cast<char>(dim)} + file;
}

// A record with a correct checksum (type, count, dim, payload as given).
std::string Record(uint8_t type, uint64_t sequence, uint32_t count, uint32_t dim,
                   const std::string& payload) {
  std::string r(shoal::wal::kRecordHeaderSize, '\0');
  shoal::EncodeFixed32(r.data() + 8, static_cast<uint32_t>(payload.size()));
  r[12] = static_cast<char>(type);
  shoal::EncodeFixed64(r.data() + 16, sequence);
  shoal::EncodeFixed32(r.data() + 24, count);
  shoal::EncodeFixed32(r.data() + 28, dim);
  r += payload;
  shoal::EncodeFixed64(r.data(), shoal::Checksum64(r.data() + 8, r.size() - 8));
  r.resize(shoal::wal::AlignRecord(r.size()), '\0');
  return r;
}

int Run(const std::string& out) {
  shoal::test::TempDir tmp;
  const std::string path = tmp.Sub("db");
  constexpr uint32_t kDim = 4;
  {
    shoal::Options o = shoal::test::DefaultOptions(kDim, shoal::Metric::kL2, 2);
    o.wal_file_bytes = 4096;
    auto db = shoal::DB::Open(o, path);
    if (!db.ok()) return 1;
    shoal::CollectionOptions co;
    co.dim = 8;
    co.shard_count = 1;
    if (!(*db)->CreateCollection("other", co).ok()) return 1;
    for (uint64_t id = 0; id < 12; ++id) {
      if (!(*db)->Put(id, RandomVector(kDim, id)).ok()) return 1;
    }
    if (!(*db)->Delete(3).ok()) return 1;
    std::vector<uint64_t> ids = {20, 21, 22, 20};
    std::vector<float> rows = shoal::test::RandomVectors(ids.size(), kDim, 9);
    if (!(*db)->PutBatch(ids, rows).ok()) return 1;
    if (!(*db)->Put("other", 5, RandomVector(8, 5)).ok()) return 1;
    if (!(*db)->Close().ok()) return 1;
  }
  // The logs now, before a flush moves their records into segments.
  const std::string log0 = ReadAll(path + "/default/shard-0/wal-000001.log");
  const std::string log1 = ReadAll(path + "/default/shard-1/wal-000001.log");
  const std::string other = ReadAll(path + "/other/shard-0/wal-000001.log");
  if (log0.size() < 100 || log1.size() < 100 || other.size() < 64) {
    std::fprintf(stderr, "unexpected log files in %s\n", path.c_str());
    return 1;
  }
  {
    shoal::Options o = shoal::test::DefaultOptions(kDim, shoal::Metric::kL2, 2);
    auto db = shoal::DB::Open(o, path);
    if (!db.ok()) return 1;
    // A flush, where segments exist, puts segments into the manifest.
    (void)(*db)->Flush();
    if (!(*db)->Put(30, RandomVector(kDim, 30)).ok()) return 1;
    if (!(*db)->Close().ok()) return 1;
  }
  const std::string wal_dir = out + "/wal_reader";
  WriteSeed(wal_dir, "valid_shard0", Wal(0, kDim, log0));
  WriteSeed(wal_dir, "valid_shard0_fix", Wal(1, kDim, log0));
  WriteSeed(wal_dir, "valid_shard1_header_ids", Wal(2, kDim, log1));
  WriteSeed(wal_dir, "valid_dim8", Wal(0, 8, other));
  WriteSeed(wal_dir, "torn_tail", Wal(0, kDim, log0.substr(0, log0.size() - 5)));
  std::string flipped = log0;
  if (flipped.size() > 80) flipped[72] ^= 0x20;
  WriteSeed(wal_dir, "flipped_middle", Wal(0, kDim, flipped));
  std::string zero_header = log0;
  std::fill(zero_header.begin(), zero_header.begin() + 32, '\0');
  WriteSeed(wal_dir, "zeroed_header", Wal(0, kDim, zero_header));
  WriteSeed(wal_dir, "header_only", Wal(0, kDim, log0.substr(0, 32)));
  WriteSeed(wal_dir, "short", Wal(0, kDim, log0.substr(0, 17)));
  WriteSeed(wal_dir, "wrong_shard", Wal(0, kDim, log1));
  std::string crafted = log0.substr(0, 32);
  crafted += Record(0x81, 1, 1, 0, std::string(24, 'x'));  // safe to ignore
  crafted += Record(3, 1, 1, 0, "");                        // barrier
  crafted += Record(2, 2, 2, 0, std::string(16, '\1'));     // delete of two ids
  crafted += std::string(64, '\0');
  WriteSeed(wal_dir, "ignorable_barrier_delete", Wal(3, kDim, crafted));

  const std::string man_dir = out + "/manifest";
  const std::string manifest = ReadAll(path + "/MANIFEST");
  WriteSeed(man_dir, "valid", std::string("\0", 1) + manifest);
  WriteSeed(man_dir, "valid_fix", "\1" + manifest);
  std::string mflip = manifest;
  mflip[mflip.size() / 2] ^= 1;
  WriteSeed(man_dir, "flipped", std::string("\0", 1) + mflip);
  WriteSeed(man_dir, "flipped_fix", "\1" + mflip);
  WriteSeed(man_dir, "cut", std::string("\0", 1) + manifest.substr(0, manifest.size() - 9));
  // Version 1: no next_file_number, no shards.
  std::string v1 = "SHOALMAN";
  shoal::PutFixed32(&v1, 1);
  shoal::PutFixed32(&v1, 1);
  shoal::PutFixed32(&v1, 7);
  v1 += "default";
  shoal::PutFixed32(&v1, kDim);
  v1.push_back(0);
  shoal::PutFixed32(&v1, 2);
  shoal::PutFixed32(&v1, 64);
  shoal::PutFixed32(&v1, 100);
  shoal::PutFixed32(&v1, 0x3f99999a);  // 1.2f
  shoal::PutFixed64(&v1, shoal::Checksum64(v1.data(), v1.size()));
  WriteSeed(man_dir, "version1", std::string("\0", 1) + v1);
  shoal::Manifest empty;
  WriteSeed(man_dir, "empty_db", std::string("\0", 1) + shoal::EncodeManifest(empty));
  std::printf("corpus written to %s\n", out.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <corpus dir>\n", argv[0]);
    return 2;
  }
  return Run(argv[1]);
}
