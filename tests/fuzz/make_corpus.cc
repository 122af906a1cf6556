// Copyright 2026 The shoal Authors.
//
// Writes the seed corpus of the fuzz targets (fuzz_targets.h) with the real
// writers: log files and manifests of a database built through the public
// API, segments built by BuildSegment, data set files of every format from
// the data set writer, plus damaged copies (cut, flipped, zeroed) and a few
// hand-made records (a safe-to-ignore type, a barrier). Run from the source
// tree:
//   build/make_fuzz_corpus tests/fuzz/corpus
// The files are committed; rerun when a format changes.

#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "dataset/dataset_writer.h"
#include "dataset/npy_format.h"
#include "version/manifest.h"
#include "distance/distance.h"
#include "segment/segment.h"
#include "record/record_format.h"
#include "segment/record_regions.h"
#include "segment/segment_format.h"
#include "shoal/db.h"
#include "testutil/temp_dir.h"
#include "util/coding.h"
#include "util/file_system.h"
#include "util/hash.h"
#include "util/thread_pool.h"
#include "record/record_format.h"
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

// A file header `header` (32 bytes) with its version set to `version`.
std::string WithVersion(std::string header, uint32_t version) {
  shoal::EncodeFixed32(header.data() + 8, version);
  shoal::EncodeFixed32(header.data() + 28, static_cast<uint32_t>(shoal::Checksum64(header.data(), 28)));
  return header;
}

// A kPutRecords payload of ids first.. with `extras` (encoded, as given).
std::string PutRecordsPayload(uint64_t first, uint32_t dim, const std::vector<std::string>& extras) {
  std::string p;
  for (size_t i = 0; i < extras.size(); ++i) {
    char id[8];
    shoal::EncodeFixed64(id, first + i);
    p.append(id, 8);
  }
  const std::vector<float> v = shoal::test::RandomVectors(extras.size(), dim, first);
  p.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  for (const std::string& e : extras) p += e;
  return p;
}

std::string Extras(std::vector<uint32_t> labels, std::vector<shoal::AttributeValue> attributes,
                   std::string_view payload) {
  std::string out;
  shoal::record::AppendEncoded({labels, attributes, payload}, &out);
  return out;
}

// Seeds with kPutRecords records (labels, attributes, payloads), crafted:
// a shard log's (`log_header`) and a commit log's (`commit_header`).
void PutRecordsSeeds(const std::string& dir, const std::string& log_header,
                     const std::string& commit_header, uint32_t dim) {
  const std::string rich = Extras({1, 7, 300}, {{0, -5}, {4, int64_t{1} << 50}}, "payload bytes");
  const std::string records =
      Record(5, 1, 3, dim, PutRecordsPayload(10, dim, {rich, Extras({}, {}, ""), Extras({2}, {}, "")})) +
      Record(1, 4, 1, dim, PutRecordsPayload(20, dim, {""})) +
      Record(2, 5, 1, 0, std::string(8, '\1'));
  const std::string v2 = WithVersion(log_header, 2);
  WriteSeed(dir, "put_records", Wal(0, dim, v2 + records + std::string(64, '\0')));
  // The same in a version-1 file: an unknown type there.
  WriteSeed(dir, "put_records_in_version1", Wal(0, dim, WithVersion(log_header, 1) + records));
  // Labels out of order, checksum fixed: DataLoss.
  std::string unsorted = Extras({3, 4}, {}, "");
  shoal::EncodeFixed32(unsorted.data() + 12, 1);
  WriteSeed(dir, "put_records_bad_labels_fix",
            Wal(1, dim, v2 + Record(5, 1, 1, dim, PutRecordsPayload(1, dim, {unsorted}))));
  // A payload longer than the bytes left.
  std::string cut = Extras({}, {{1, 2}}, std::string(40, 'c'));
  cut.resize(cut.size() - 30);
  WriteSeed(dir, "put_records_cut_payload_fix",
            Wal(1, dim, v2 + Record(5, 1, 2, dim, PutRecordsPayload(1, dim, {rich, cut}))));
  // A commit log's shard record holding a kPutRecords (flag 2: the header's shard).
  std::string shard_record(8, '\0');
  shoal::EncodeFixed32(shard_record.data(), 1);
  shard_record += Record(5, 1, 2, dim, PutRecordsPayload(30, dim, {rich, Extras({9}, {}, "x")}));
  WriteSeed(dir, "commit_log_put_records",
            Wal(2, dim, WithVersion(commit_header, 2) + Record(4, 0, 1, 0, shard_record)));
}

// A segment of n random vectors (ids 100 + 3i, sequences 1 + i) and the
// given tombstones, built with one thread so that reruns give the same bytes.
// With `records`, most rows carry labels, attributes and a payload (format
// version 3's record regions).
std::string Segment(const std::string& dir, uint32_t dim, shoal::Metric metric,
                    uint32_t max_degree, size_t n, std::vector<uint64_t> tombstones,
                    bool records = false) {
  std::vector<float> vectors = shoal::test::RandomVectors(n, dim, dim * 1000 + n);
  if (metric == shoal::Metric::kCosine) {
    for (size_t i = 0; i < n; ++i) (void)shoal::NormalizeInPlace(vectors.data() + i * dim, dim);
  }
  std::vector<uint64_t> ids, sequences, tombstone_sequences;
  for (size_t i = 0; i < n; ++i) {
    ids.push_back(100 + 3 * i);
    sequences.push_back(1 + i);
  }
  for (size_t i = 0; i < tombstones.size(); ++i) tombstone_sequences.push_back(n + 1 + i);
  shoal::SegmentContents c;
  c.dim = dim;
  c.metric = metric;
  c.ids = ids;
  c.sequences = sequences;
  c.vectors = vectors.data();
  c.tombstone_ids = tombstones;
  c.tombstone_sequences = tombstone_sequences;
  std::vector<std::string> extras(records ? n : 0);
  std::vector<std::string_view> extras_views;
  for (size_t i = 0; i < extras.size(); ++i) {
    if (i % 3 == 0) continue;  // a record without parts among the others
    const std::vector<uint32_t> labels = {static_cast<uint32_t>(i % 4), 9};
    std::vector<shoal::AttributeValue> attributes = {{0, static_cast<int64_t>(i) * 5 - 7}};
    if (i % 2 == 1) attributes.push_back({1, -static_cast<int64_t>(i)});
    const std::string payload = "payload " + std::to_string(i);
    shoal::record::AppendEncoded({labels, attributes, payload}, &extras[i]);
  }
  extras_views.assign(extras.begin(), extras.end());
  c.extras = extras_views;
  shoal::SegmentBuildOptions options;
  options.graph.max_degree = max_degree;
  options.graph.build_list_size = 16;
  shoal::ThreadPool one(1);
  const std::string path = dir + "/seg.vamana";
  const absl::Status s = shoal::BuildSegment(shoal::FileSystem::Default(), &one, path, c, options);
  if (!s.ok()) {
    std::fprintf(stderr, "BuildSegment: %s\n", s.ToString().c_str());
    std::exit(1);
  }
  return ReadAll(path);
}

// Flags byte (fuzz_targets.h: bit 0 fixes checksums, bit 1 expects another
// dim), search byte, file.
std::string Seg(uint8_t flags, uint8_t search, const std::string& file) {
  return std::string{static_cast<char>(flags), static_cast<char>(search)} + file;
}

void WriteSegmentSeeds(const std::string& tmp, const std::string& out) {
  const std::string dir = out + "/segment_reader";
  const std::string l2 = Segment(tmp, 4, shoal::Metric::kL2, 8, 40, {});
  WriteSeed(dir, "l2_dim4", Seg(0, 0x13, l2));
  WriteSeed(dir, "l2_dim4_fix", Seg(1, 0xf4, l2));
  WriteSeed(dir, "l2_dim4_wrong_dim", Seg(2, 0, l2));
  WriteSeed(dir, "ip_dim40_tombstones_fix",
            Seg(1, 0x69, Segment(tmp, 40, shoal::Metric::kInnerProduct, 16, 60, {1, 101, 1000})));
  // node_bytes > 4088: each node takes two sectors.
  WriteSeed(dir, "cosine_dim1100_two_sectors_fix",
            Seg(1, 0x22, Segment(tmp, 1100, shoal::Metric::kCosine, 4, 3, {7})));
  WriteSeed(dir, "tombstones_only_fix", Seg(1, 0, Segment(tmp, 4, shoal::Metric::kL2, 8, 0,
                                                          {5, 6, 9})));
  WriteSeed(dir, "truncated", Seg(0, 0, l2.substr(0, l2.size() - 100)));
  std::string flipped = l2;
  flipped[shoal::segment::kHeaderSize + 2] ^= 0x40;  // node 0's vector
  WriteSeed(dir, "flipped_node_block", Seg(0, 0x13, flipped));
  // Checksums right, but the id table gives node records' ids another
  // sequence: only VerifyAll and Find notice.
  std::string disagree = l2;
  const char* footer = l2.data() + l2.size() - shoal::segment::kFooterSize;
  disagree[shoal::DecodeFixed64(footer + 16) + 8] ^= 1;  // the first entry's sequence
  WriteSeed(dir, "id_table_disagrees_with_record_fix", Seg(1, 0x13, disagree));
  // Version 3 with record regions: whole, read from disk, and with a payload
  // byte (only that payload's reads and VerifyAll notice) or a labels byte
  // (Open notices) flipped.
  const std::string rec = Segment(tmp, 4, shoal::Metric::kL2, 8, 30, {2, 5}, true);
  WriteSeed(dir, "v3_records_l2_dim4_fix", Seg(1, 0x13, rec));
  WriteSeed(dir, "disk_v3_records_l2_dim4_fix", Seg(5, 0x15, rec));
  const char* directory = rec.data() + rec.size() - shoal::segment::kFooterSize -
                          shoal::segment::kRecordsDirectorySize;
  std::string flipped_payload = rec;
  flipped_payload[shoal::DecodeFixed64(directory + 24 * shoal::segment::kPayloadsRegion) +
                  shoal::segment::kPayloadEntrySize * 30 + 3] ^= 1;
  WriteSeed(dir, "v3_records_flipped_payload", Seg(0, 0x13, flipped_payload));
  WriteSeed(dir, "disk_v3_records_flipped_payload", Seg(4, 0x13, flipped_payload));
  std::string flipped_labels = rec;
  flipped_labels[shoal::DecodeFixed64(directory) + 130] ^= 1;
  WriteSeed(dir, "v3_records_flipped_labels", Seg(0, 0x13, flipped_labels));
  WriteSeed(dir, "v3_records_flipped_labels_fix", Seg(1, 0x13, flipped_labels));
  std::string newer = l2;
  newer[8] = 4;  // format version 4 (with the checksum fixed: FailedPrecondition)
  WriteSeed(dir, "version4_fix", Seg(1, 0, newer));
}

// max_rows byte (< 0x80: that many rows), then the file.
std::string Data(uint8_t max_rows, const std::string& file) {
  return std::string(1, static_cast<char>(max_rows)) + file;
}

// Valid small files of every format (3 rows), an '<f8' and an '<i8' .npy,
// and truncated ones.
int WriteDatasetSeeds(const std::string& out) {
  const std::string dir = out + "/dataset_reader";
  shoal::Matrix floats{3, 4, {}};
  for (int i = 0; i < 12; ++i) floats.data.push_back(0.5f * i - 1.0f);
  shoal::Matrix bytes{3, 4, {}};
  for (int i = 0; i < 12; ++i) bytes.data.push_back(static_cast<float>(20 * i));
  shoal::IntMatrix ints{3, 5, {}};
  for (int i = 0; i < 15; ++i) ints.data.push_back(i * 7 - 3);
  using F = shoal::DatasetFormat;
  const struct {
    const char* name;
    absl::StatusOr<std::string> file;
  } files[] = {
      {"fvecs", shoal::EncodeVectors(floats, F::kFvecs, "f")},
      {"bvecs", shoal::EncodeVectors(bytes, F::kBvecs, "b")},
      {"ivecs", shoal::EncodeNeighbors(ints, F::kIvecs, "i")},
      {"fbin", shoal::EncodeVectors(floats, F::kFbin, "f")},
      {"u8bin", shoal::EncodeVectors(bytes, F::kU8bin, "b")},
      {"ibin", shoal::EncodeNeighbors(ints, F::kIbin, "i")},
      {"npy_f4", shoal::EncodeVectors(floats, F::kNpy, "f")},
      {"npy_i4", shoal::EncodeNeighbors(ints, F::kNpy, "i")},
  };
  for (const auto& f : files) {
    if (!f.file.ok()) return 1;
    WriteSeed(dir, f.name, Data(0x80, *f.file));
  }
  WriteSeed(dir, "fvecs_max_rows2", Data(2, *files[0].file));
  WriteSeed(dir, "fvecs_truncated", Data(0x80, files[0].file->substr(0, 30)));
  const std::string& npy = *files[6].file;
  WriteSeed(dir, "npy_f4_truncated", Data(0x80, npy.substr(0, npy.size() - 5)));
  // '<f8' and '<i8', which the writer does not produce; a u1 one.
  std::string f8 = shoal::dataset_internal::EncodeNpyHeader("<f8", 2, 3);
  std::string i8 = shoal::dataset_internal::EncodeNpyHeader("<i8", 2, 3);
  std::string u1 = shoal::dataset_internal::EncodeNpyHeader("|u1", 2, 3);
  for (int i = 0; i < 6; ++i) {
    shoal::PutFixed64(&f8, std::bit_cast<uint64_t>(1.5 * i - 2));
    shoal::PutFixed64(&i8, static_cast<uint64_t>(int64_t{i} * 1000 - 1));
    u1.push_back(static_cast<char>(40 * i));
  }
  WriteSeed(dir, "npy_f8", Data(0x80, f8));
  WriteSeed(dir, "npy_i8", Data(0x80, i8));
  WriteSeed(dir, "npy_u1", Data(0x80, u1));
  return 0;
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

  // A commit log (kAlways), read while the database is open: Close deletes it.
  std::string commit;
  {
    const std::string kalways_path = tmp.Sub("kalways");
    shoal::Options o = shoal::test::DefaultOptions(kDim, shoal::Metric::kL2, 2);
    o.fsync = shoal::FsyncPolicy::kAlways;
    o.wal_file_bytes = 4096;
    auto db = shoal::DB::Open(o, kalways_path);
    if (!db.ok()) return 1;
    for (uint64_t id = 0; id < 5; ++id) {
      if (!(*db)->Put(id, RandomVector(kDim, id)).ok()) return 1;
    }
    if (!(*db)->Delete(1).ok()) return 1;
    commit = ReadAll(kalways_path + "/default/commit/wal-000001.log");
    if (!(*db)->Close().ok()) return 1;
  }
  if (commit.size() < 200) {
    std::fprintf(stderr, "unexpected commit log\n");
    return 1;
  }
  // Flag 2: the shard (0xFFFFFFFF) comes from the file's header.
  WriteSeed(wal_dir, "commit_log", Wal(2, kDim, commit));
  std::string inner_flipped = commit;
  inner_flipped[32 + 32 + 8 + 32 + 2] ^= 0x10;  // inside the first shard record's payload
  WriteSeed(wal_dir, "commit_log_inner_flipped_fix", Wal(3, kDim, inner_flipped));

  PutRecordsSeeds(wal_dir, log0.substr(0, 32), commit.substr(0, 32), kDim);

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
  // Records written through the API (kAlways): a shard log and the commit
  // log holding kPutRecords records of every mix of parts (the crafted
  // seeds above have a few; these are the writer's own bytes). Then, after
  // a flush, a version 5 MANIFEST: collections that declare attributes
  // (two, one, none), with segments of records listed.
  {
    const std::string attr_path = tmp.Sub("attributes");
    shoal::Options o = shoal::test::DefaultOptions(kDim, shoal::Metric::kL2, 2);
    o.default_collection.attributes = {"created_at", "price_cents"};
    o.fsync = shoal::FsyncPolicy::kAlways;
    o.wal_file_bytes = 4096;
    auto db = shoal::DB::Open(o, attr_path);
    if (!db.ok()) return 1;
    shoal::CollectionOptions co;
    co.dim = 8;
    co.shard_count = 1;
    co.attributes = {"tenant"};
    if (!(*db)->CreateCollection("other", co).ok()) return 1;
    co.attributes.clear();
    if (!(*db)->CreateCollection("plain", co).ok()) return 1;
    const std::vector<float> v = RandomVector(kDim, 1);
    const std::vector<uint32_t> labels = {4, 9};
    const std::vector<uint32_t> one_label = {70000};
    const std::vector<shoal::AttributeValue> attributes = {{0, 1700000000}, {1, -250}};
    const std::vector<shoal::AttributeValue> second = {{1, INT64_MIN}};
    const std::string payload(37, '\xab');
    for (uint64_t id = 0; id < 4; ++id) {
      if (!(*db)->Put(shoal::Record{id, v, labels, attributes, "doc"}).ok()) return 1;
    }
    const std::vector<shoal::Record> batch = {
        {10, v, {}, {}, {}},                   // no parts
        {11, v, one_label, {}, {}},            // a label
        {12, v, {}, second, {}},               // an attribute
        {13, v, {}, {}, payload},              // a payload
        {14, v, labels, attributes, payload},  // every part
        {15, v, {}, {}, {}}};
    if (!(*db)->PutBatch(batch).ok()) return 1;
    if (!(*db)->Delete(11).ok()) return 1;
    const std::string commit_records = ReadAll(attr_path + "/default/commit/wal-000001.log");
    if (!(*db)->Close().ok()) return 1;
    const std::string log_records = ReadAll(attr_path + "/default/shard-0/wal-000001.log");
    if (log_records.size() < 200 || commit_records.size() < 200 ||
        shoal::DecodeFixed32(log_records.data() + 8) < 2) {
      std::fprintf(stderr, "unexpected logs of records in %s\n", attr_path.c_str());
      return 1;
    }
    WriteSeed(wal_dir, "records_shard0", Wal(0, kDim, log_records));
    WriteSeed(wal_dir, "records_shard0_fix", Wal(1, kDim, log_records));
    WriteSeed(wal_dir, "commit_log_records_fix", Wal(3, kDim, commit_records));
    db = shoal::DB::Open(o, attr_path);
    if (!db.ok()) return 1;
    if (!(*db)->Flush().ok()) return 1;
    if (!(*db)->Close().ok()) return 1;
    const std::string v5 = ReadAll(attr_path + "/MANIFEST");
    if (v5.size() < 12 || shoal::DecodeFixed32(v5.data() + 8) != 5) {
      std::fprintf(stderr, "unexpected MANIFEST version in %s\n", attr_path.c_str());
      return 1;
    }
    WriteSeed(man_dir, "version5_attributes", std::string("\0", 1) + v5);
    WriteSeed(man_dir, "version5_attributes_fix", "\1" + v5);
    // An attribute name's length over kMaxAttributeNameLength, under a
    // fixed checksum: DataLoss.
    std::string longer = v5;
    const size_t name = longer.find("created_at");
    if (name == std::string::npos || name < 4) return 1;
    shoal::EncodeFixed32(longer.data() + name - 4, 200);
    WriteSeed(man_dir, "version5_attribute_name_too_long_fix", "\1" + longer);
  }
  WriteSegmentSeeds(tmp.path(), out);
  if (WriteDatasetSeeds(out) != 0) return 1;
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
